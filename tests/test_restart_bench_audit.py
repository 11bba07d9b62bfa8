"""bench/live_restart_bench.py --audit: the phase and per-client summary read from an audit log."""

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _bench():
    spec = importlib.util.spec_from_file_location("live_restart_bench", ROOT / "bench" / "live_restart_bench.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _event(at: str, agent: str, verb: str, resource: str, subresource: str = "") -> str:
    ref = {"resource": resource, **({"subresource": subresource} if subresource else {})}
    return json.dumps({"stageTimestamp": at, "userAgent": agent, "verb": verb, "objectRef": ref})


KCM = "kube-controller-manager/v1.35.8 (linux/amd64) kubernetes/abc/"


def test_phases_and_clients_come_from_the_log_within_the_step(tmp_path, capsys):
    log = tmp_path / "audit.log"
    log.write_text("\n".join([
        _event("2026-11-27T00:00:00.5Z", KCM + "job-controller", "create", "pods"),  # before the step
        _event("2026-11-27T00:00:02Z", "training-conformance-operator/jobset-v0.12", "delete", "jobs"),
        _event("2026-11-27T00:00:03Z", KCM + "generic-garbage-collector", "delete", "pods"),
        _event("2026-11-27T00:00:05Z", KCM + "generic-garbage-collector", "delete", "pods"),
        _event("2026-11-27T00:00:06Z", "kwok/v0.8.0", "patch", "pods", "status"),
        _event("2026-11-27T00:00:06Z", "kube-scheduler/v1.35.8", "watch", "pods"),  # watches are not counted
        _event("2026-11-27T00:00:09Z", KCM + "job-controller", "create", "pods"),  # after the step
    ]) + "\n")
    bench = _bench()
    start = 1795737601.0  # 2026-11-27T00:00:01Z
    bench.audit_report(log, start, start + 6)
    out = capsys.readouterr().out
    assert "Jobs deleted (Foreground)" in out and "  1.0 ..   1.0  (1 requests)" in out
    assert "garbage collector deletes pods" in out and "  2.0 ..   4.0  (2 requests)" in out
    assert "new pods created" not in out
    assert "requests: 4 " in out
    assert "kcm/generic-garbage-collector delete pods" not in out  # fewer than 10: not listed
