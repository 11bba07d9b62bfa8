"""MPIJob conditions (pkg/controller/mpi_job_controller_status.go, v0.6.0).

``setCondition`` does nothing when a condition of the type exists with the same status *and* reason
(so a message never changes on its own); otherwise the condition is removed and appended last, keeping
its lastTransitionTime when the status is unchanged. ``filterOutCondition``, run while doing so, drops
Restarting when Running is set (and the reverse) and, when Succeeded or Failed is set, flips an existing
Running *and* Failed condition to status False, leaving their reason and message as they were. No code
path sets Restarting (shared/reference/kubeflow-v1-mpi-operator.md B.4).
"""

from __future__ import annotations

from . import keys


def find(status: dict, type_: str) -> dict | None:
    return next((c for c in status.get("conditions") or [] if c.get("type") == type_), None)


def has_true(status: dict, type_: str) -> bool:
    condition = find(status, type_)
    return condition is not None and condition.get("status") == "True"


def is_finished(status: dict) -> bool:
    return has_true(status, keys.SUCCEEDED) or has_true(status, keys.FAILED)


def set_condition(status: dict, type_: str, value: str, reason: str, message: str, now: str) -> bool:
    """updateMPIJobConditions; True when the conditions changed."""
    current = find(status, type_)
    if current is not None and current.get("status") == value and current.get("reason") == reason:
        return False
    condition = {"type": type_, "status": value, "reason": reason, "message": message,
                 "lastUpdateTime": now, "lastTransitionTime": now}
    if current is not None and current.get("status") == value:
        condition["lastTransitionTime"] = current.get("lastTransitionTime", now)
    status["conditions"] = _filter_out(status.get("conditions") or [], type_) + [condition]
    return True


def _filter_out(conditions: list[dict], type_: str) -> list[dict]:
    kept = []
    for c in conditions:
        if {type_, c.get("type")} == {keys.RESTARTING, keys.RUNNING} or c.get("type") == type_:
            continue
        if type_ in (keys.FAILED, keys.SUCCEEDED) and c.get("type") in (keys.RUNNING, keys.FAILED):
            c = {**c, "status": "False"}
        kept.append(c)
    return kept
