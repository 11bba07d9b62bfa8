"""Render-backend benchmark: time to render each case (reference reconciler, in memory).

Prints per-case figures (median, p95, max over all case × profile runs) and the whole table.
Target (issue 2): ≤ 25 ms per case on 2 cores. Run: `make bench` (or python bench/render_bench.py).
Timing lives here, never in tests.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from conformance import cases as case_loader  # noqa: E402
from conformance import expectations  # noqa: E402
from conformance.backends import render  # noqa: E402
from conformance.golden import golden_text  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="renders per case and profile (default 5)")
    parser.add_argument("--cases-dir", default=str(ROOT / "cases"))
    args = parser.parse_args()

    # Scenario rows (steps) are timed by bench/restart_bench.py.
    runs = [(c, p) for c in case_loader.load_all(Path(args.cases_dir)) if isinstance(c, case_loader.Case)
            and not c.steps for p in c.profiles()]
    for case, profile in runs:  # warm-up: imports, CRD loading, CEL
        render.run(case.inputs, profile)
        break

    per_case: list[tuple[float, str]] = []
    started = time.perf_counter()
    for case, profile in runs:
        samples = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            outcome = render.run(case.inputs, profile)
            expectations.check(case.expect, outcome)
            golden_text(case.full_id, case.title, profile, outcome)
            samples.append(time.perf_counter() - t0)
        per_case.append((statistics.median(samples), f"{profile}:{case.full_id}"))
    total = time.perf_counter() - started

    times = sorted(t for t, _ in per_case)
    p95 = times[min(len(times) - 1, int(len(times) * 0.95))]
    slowest = max(per_case)
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}")
    print(f"cases: {len({c.full_id for c, _ in runs})} rows, {len(runs)} row×profile runs, {args.repeat} renders each")
    print("per case (render + expectation check + golden text):")
    print(f"  median {statistics.median(times) * 1000:.1f} ms   p95 {p95 * 1000:.1f} ms   max {slowest[0] * 1000:.1f} ms ({slowest[1]})")
    print(f"whole table once: {total / args.repeat:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
