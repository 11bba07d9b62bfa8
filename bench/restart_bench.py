"""Group-restart benchmark: a 1,024-pod JobSet restart in memory, and the whole scenario table.

Prints (1) the time from one pod's failure to the settled group - 16 Jobs × 64 pods all recreated
with restart-attempt "1" - median and max over --repeat runs, with the API writes it took; and
(2) every scenario row (``steps``) of the case tables once per profile: run + expectations +
golden text, per row and in total. Target (issue 3): the 1,024-pod restart < 1 s.
Run: python bench/restart_bench.py. Timing lives here, never in tests.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import reconciler  # noqa: E402
from conformance import cases as case_loader  # noqa: E402
from conformance import expectations  # noqa: E402
from conformance.backends import render  # noqa: E402
from conformance.golden import golden_steps_text  # noqa: E402
from reconciler import faults  # noqa: E402

BIG = ROOT / "cases" / "jobset" / "_bases" / "jobset-1024.yaml"
PROFILE = "jobset-v0.12"
FAULT = {"fault": "podExit", "replicatedJob": "workers", "jobIndex": 7, "pod": 33, "exitCode": 1}
ATTEMPT = "jobset.sigs.k8s.io/restart-attempt"


def big_jobset() -> dict:
    jobset = yaml.safe_load(BIG.read_text())
    jobset["spec"]["failurePolicy"] = {"maxRestarts": 1}
    return jobset


def one_restart() -> tuple[float, float, int]:
    """(apply seconds, restart seconds, API writes of the restart) for a fresh 1,024-pod group."""
    t0 = time.perf_counter()
    cluster = reconciler.render([big_jobset()], PROFILE).cluster
    t1 = time.perf_counter()
    writes = cluster.writes
    faults.inject(cluster, FAULT)
    cluster.settle()
    t2 = time.perf_counter()
    pods = cluster.list("", "Pod")
    restarted = [p for p in pods if p["metadata"]["labels"].get(ATTEMPT) == "1"
                 and p["status"].get("phase") == "Running"]
    if len(pods) != 1024 or len(restarted) != 1024:  # the figure is only meaningful for a full restart
        raise SystemExit(f"restart incomplete: {len(restarted)} of {len(pods)} pods restarted and Running")
    return t1 - t0, t2 - t1, cluster.writes - writes


def scenario_rows(cases_dir: Path) -> list[tuple[case_loader.Case, str]]:
    return [(c, p) for c in case_loader.load_all(cases_dir)
            if isinstance(c, case_loader.Case) and c.steps for p in c.profiles()]


def run_row(case: case_loader.Case, profile: str) -> int:
    outcomes = render.run_steps(case.steps, profile)
    failures = [f for step, out in zip(case.steps, outcomes) for f in expectations.check(step.expect, out)]
    golden_steps_text(case.full_id, case.title, profile, case.steps, outcomes, summary=case.golden == "summary")
    return len(failures)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="1,024-pod restarts to time (default 5)")
    parser.add_argument("--cases-dir", default=str(ROOT / "cases"))
    args = parser.parse_args()

    one_restart()  # warm-up: imports, CRD schemas
    samples = [one_restart() for _ in range(args.repeat)]
    applies, restarts, writes = zip(*samples)

    rows = scenario_rows(Path(args.cases_dir))
    per_row: list[tuple[float, str]] = []
    failed = 0
    started = time.perf_counter()
    for case, profile in rows:
        t0 = time.perf_counter()
        failed += run_row(case, profile) > 0
        per_row.append((time.perf_counter() - t0, f"{profile}:{case.full_id}"))
    total = time.perf_counter() - started

    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}, load average "
          f"{os.getloadavg()[0]:.1f}")
    print(f"1,024-pod group restart ({PROFILE}, 16 Jobs x 64 pods, {args.repeat} runs):")
    print(f"  apply + settle 1,024 pods: median {statistics.median(applies) * 1000:.0f} ms")
    print(f"  restart (one pod fails -> 1,024 pods at restart-attempt 1, Running): median "
          f"{statistics.median(restarts) * 1000:.0f} ms, max {max(restarts) * 1000:.0f} ms, "
          f"{writes[0]} API writes")
    times = sorted(t for t, _ in per_row)
    if times:
        slowest = max(per_row)
        print(f"scenario table: {len({c.full_id for c, _ in rows})} rows, {len(rows)} row x profile runs"
              f"{f', {failed} failing' if failed else ''}")
        print(f"  per run: median {statistics.median(times) * 1000:.0f} ms, "
              f"p95 {times[min(len(times) - 1, int(len(times) * 0.95))] * 1000:.0f} ms, "
              f"max {slowest[0] * 1000:.0f} ms ({slowest[1]})")
        print(f"  whole table once: {total:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
