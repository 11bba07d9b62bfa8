"""Live group restart at scale: the 1,024-pod scenario row on a local control plane.

Starts a LocalControlPlane whose fake Nodes have room for the pods (3 Nodes × 1,100 pods) and
replays ``group-restart/group-1024-pods`` on jobset-v0.12 exactly as ``conformance run --backend
live`` does - the reference operator in its own process, as in every live run. Prints per-step
timings, the time from the fault to the steady restarted group, the CPU seconds of each process
in each step, and the operator's API writes (creates, updates, status updates, deletes; Events
excluded; read from the operator's caught-up endpoint) per step and per pod. Targets (issue 14):
restart < 20 s on a quiet machine, < 60 s under CI's load, <= 2 writes per pod by the operator.
Figures are printed, never asserted. Run: ``python bench/live_restart_bench.py [--kubeconfig K]``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CASE = "group-restart/group-1024-pods"
PROFILE = "jobset-v0.12"
PODS = 1024


def component_cpu(plane, operator) -> dict[str, float]:
    """CPU seconds (user + system) each control-plane process, the operator and this process (the
    harness) have used so far."""
    from conformance.cluster.process import cpu_seconds

    out = plane.cpu_seconds() if plane else {}
    out["harness"] = sum(os.times()[:2])
    out["reference operator"] = cpu_seconds(operator.proc.pid) or 0.0
    return out


def operator_writes(operator) -> int:
    """The operator's API writes so far, as its caught-up endpoint reports them."""
    request = urllib.request.Request(operator.ready["caughtUpUrl"], data=b'{"seen": []}',
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.load(answer)["writes"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kubeconfig", help="an existing cluster (needs room for 1,024 pods)")
    args = parser.parse_args()

    from conformance.cases import load_all
    from conformance.cluster import LocalControlPlane
    from conformance.cluster.local import FakeNode

    plane = None
    kubeconfig = args.kubeconfig
    started = time.monotonic()
    if kubeconfig is None:
        plane = LocalControlPlane(nodes=tuple(FakeNode(f"kwok-node-{i}", pods="1100") for i in range(3))).up()
        kubeconfig = str(plane.kubeconfig)
        print(f"local control plane up: {time.monotonic() - started:.1f} s")
    os.environ["TC_LIVE_KUBECONFIG"] = kubeconfig
    os.environ.pop("TC_LIVE_OPERATOR", None)  # the reference operator, as a live run starts it
    os.environ.setdefault("TC_LIVE_TIMEOUT", "120")
    from conformance.backends import live
    from conformance.execute import run_case
    from conformance.live import session

    case = next(c for c in load_all(ROOT / "cases") if getattr(c, "full_id", "") == CASE)
    try:
        counts: list[int] = []
        original_inject = live.ScenarioRun._step

        def step_counting(self, step, outcome):
            operator = self.session.operator  # the session started it for this profile
            before, cpu_before = operator_writes(operator), component_cpu(plane, operator)
            t0 = time.monotonic()
            original_inject(self, step, outcome)
            counts.append(operator_writes(operator) - before)
            print(f"  step {step.number} ({step.name}): {time.monotonic() - t0:6.1f} s to steady, "
                  f"operator writes {counts[-1]} ({counts[-1] / PODS:.3f} per pod)")
            used = {k: v - cpu_before.get(k, 0.0) for k, v in component_cpu(plane, operator).items()}
            print("    CPU s: " + ", ".join(f"{k} {v:.1f}" for k, v in sorted(used.items(), key=lambda kv: -kv[1])))

        live.ScenarioRun._step = step_counting
        t0 = time.monotonic()
        result = run_case(case, PROFILE, live.for_test(CASE))
        total = time.monotonic() - t0
        golden = ROOT / "snapshots" / PROFILE / "group-restart" / "group-1024-pods.yaml"
        same = golden.read_text() == result.golden
        print(f"{CASE} [{PROFILE}] live: {total:.1f} s in all, failures: {result.failures or 'none'}, "
              f"golden {'identical' if same else 'DIFFERS'}")
        if not same:
            Path("/tmp/group-1024-pods.live.yaml").write_text(result.golden)
            print("  live golden text written to /tmp/group-1024-pods.live.yaml")
        timings = live.TIMINGS[-1][1]
        for name, seconds in timings.items():
            print(f"  {name:<24} {seconds:7.2f} s")
        print(f"operator writes in all: {sum(counts)} ({sum(counts) / PODS:.3f} per pod); "
              f"target <= 2 per pod, restart < 20 s quiet (< 60 s under load)")
    finally:
        session.close()
        if plane is not None:
            plane.down()
    return 0


if __name__ == "__main__":
    sys.exit(main())
