"""Local control plane benchmark: cold build times, warm start, teardown, apiserver restart.

Build times come from ``build-times.log``, which ``hack/build-control-plane.sh`` appends to in the
binaries' directory (``gocache=empty`` marks a build that started from an empty Go build cache,
i.e. truly cold; ``warm`` reused packages compiled before it). Wall time depends on what else
the machine runs; CPU seconds (user + sys of the go tool and compilers) hardly do, and divided by
the core count they estimate the wall time on an idle machine. Start-up is measured here: ``up()``
until the fake Nodes are Ready and the default ServiceAccount exists, with binaries already built
(the warm case). ``--table PROFILE`` (repeatable) then runs those profiles' live tables on one
local control plane, as ``conformance run --backend live`` does, and prints the wall time, the
per-case latency and the pass/fail counts. Targets (issue 4): warm start < 15 s; a live table of
>= 150 rows in < 3 min on 2 cores. Run: ``python bench/live_bench.py [--table trainer-v2.1]``.
Timing lives here, never in tests.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from conformance.cluster import LocalControlPlane, MissingBinaryError, bin_dir  # noqa: E402

WARM_START_TARGET = 15.0


def build_times(log: Path) -> list[dict]:
    """Every entry of build-times.log as a dict (ts, name, version, seconds, bytes, gocache)."""
    entries = []
    for line in log.read_text().splitlines() if log.exists() else []:
        ts, name, version, *fields = line.split()
        entry = {"ts": ts, "name": name, "version": version, "gocache": "?"}
        entry.update(field.split("=", 1) for field in fields)
        entries.append(entry)
    return entries


def print_build_times(directory: Path) -> None:
    entries = build_times(directory / "build-times.log")
    print(f"build times ({directory / 'build-times.log'}):")
    if not entries:
        print("  none recorded (run `make control-plane`)")
        return
    # Latest build of each binary per cache state: the cold figure and the incremental one.
    latest: dict[tuple[str, str], dict] = {}
    for entry in entries:
        latest[(entry["name"], entry["gocache"])] = entry
    for (name, gocache), e in sorted(latest.items()):
        label = {"empty": "cold (empty Go build cache)", "warm": "after other binaries (shared cache)"}.get(
            gocache, "cache state not recorded")
        cpu = f"{int(e['cpu_seconds']):>5} CPU-s" if "cpu_seconds" in e else "    ? CPU-s"
        print(f"  {name:<24} {e['version']:<8} {int(e['seconds']):>5} s wall {cpu}  "
              f"{int(e['bytes']) / 2**20:4.0f} MiB  {label}  [{e['ts']}]")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="warm starts to time (default 3)")
    parser.add_argument("--table", action="append", default=[], metavar="PROFILE",
                        help="also run this profile's live table and time it (repeatable; all: every profile)")
    parser.add_argument("--live-workers", type=int, default=None, help="cases in flight at once (default 4)")
    args = parser.parse_args()

    directory = bin_dir()
    print_build_times(directory)

    starts, teardowns, restarts, steps = [], [], [], []
    for _ in range(args.repeat):
        plane = LocalControlPlane()
        try:
            plane.up()
        except MissingBinaryError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 3
        try:
            started = time.perf_counter()
            plane.restart("kube-apiserver")
            restarts.append(time.perf_counter() - started)
        finally:
            plane.down()
        starts.append(plane.startup_seconds)
        teardowns.append(plane.teardown_seconds)
        steps.append(plane.timings)

    def line(label: str, values: list[float]) -> str:
        return (f"  {label:<26} median {statistics.median(values):6.2f} s   "
                f"min {min(values):6.2f} s   max {max(values):6.2f} s   (n={len(values)})")

    print(f"local control plane ({args.repeat} runs, binaries in {directory}):")
    print(line("warm start (up)", starts)
          + f"   target < {WARM_START_TARGET:.0f} s: {'met' if max(starts) < WARM_START_TARGET else 'MISSED'}")
    print(line("teardown (down)", teardowns))
    print(line("kube-apiserver restart", restarts))
    print("  start-up steps, median seconds since up() began:")
    for step in steps[0]:
        print(f"    {step:<34} {statistics.median(s[step] for s in steps):6.2f}")
    return time_tables(args.table, args.live_workers) if args.table else 0


def time_tables(profiles: list[str], workers: int | None) -> int:
    """The live tables of ``profiles`` through the CLI, in this process (so the per-case timings
    the live backend records can be read)."""
    from conformance import cli
    from conformance.backends import live

    # "all": every profile, as `conformance run --backend live` (and make test) runs the table
    argv = ["run", "--backend", "live"] + [a for p in profiles if p != "all" for a in ("--profile", p)]
    if workers:
        argv += ["--live-workers", str(workers)]
    started = time.perf_counter()
    code = cli.main(argv)
    wall = time.perf_counter() - started
    per_case = [sum(t.values()) for _, t in live.TIMINGS]
    print(f"live table {', '.join(profiles)}: {len(per_case)} cases in {wall:.0f} s wall "
          f"(incl. control plane start and operator), exit code {code}")
    if per_case:
        per_case.sort()
        print(f"  per case (its own steps, cases overlap): median {statistics.median(per_case):.2f} s, "
              f"p95 {per_case[int(0.95 * (len(per_case) - 1))]:.2f} s, max {per_case[-1]:.2f} s")
        steps: dict[str, list[float]] = {}
        for _, timings in live.TIMINGS:
            for step, seconds in timings.items():
                steps.setdefault(step.split(" ", 1)[0], []).append(seconds)  # "settle 2.1" -> settle
        from conformance.live import session
        total_cpu = sum(session.LAST_CPU.values())
        print(f"  CPU seconds: {total_cpu:.0f} in all ({total_cpu / wall:.2f} cores on average): " + ", ".join(
            f"{name} {seconds:.0f}" for name, seconds in sorted(session.LAST_CPU.items(), key=lambda kv: -kv[1])))
        print("  where a case's time goes (step: cases, median, sum of seconds):")
        for step, values in sorted(steps.items(), key=lambda kv: -sum(kv[1])):
            print(f"    {step:<12} {len(values):>5}  {statistics.median(values):6.2f} s  {sum(values):8.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
