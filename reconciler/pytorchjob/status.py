"""PyTorchJob status: conditions and replica counts (pkg/util/status.go, pkg/core/status.go,
pytorchjob_controller.go UpdateJobStatus; shared/reference/kubeflow-v1-mpi-operator.md A.3).

``status`` is handled as the JSON the controller writes: ``conditions`` (type, status, reason,
message, lastUpdateTime, lastTransitionTime), ``replicaStatuses`` (``active`` / ``succeeded`` /
``failed`` / ``selector``, zero values left out as Go's ``omitempty`` does), ``startTime``,
``completionTime``.
"""

from __future__ import annotations

from . import keys


def condition_true(status: dict, type_: str) -> bool:
    return any(c.get("type") == type_ and c.get("status") == "True" for c in status.get("conditions") or [])


def is_finished(status: dict) -> bool:
    return condition_true(status, keys.SUCCEEDED) or condition_true(status, keys.FAILED)


def set_condition(status: dict, type_: str, value: str, reason: str, message: str, now: str) -> None:
    """UpdateJobConditions / setCondition.

    * nothing changes once a ``Failed=True`` condition exists (Failed is terminal, its message frozen);
    * nothing changes if the type already has this status *and* reason (the message is not updated);
    * the new condition goes last; ``Restarting`` and ``Running`` remove each other; adding
      ``Failed`` or ``Succeeded`` turns ``Running`` to ``False`` (reason and message kept).
    """
    conditions = status.get("conditions") or []
    if condition_true(status, keys.FAILED):
        return
    current = next((c for c in conditions if c.get("type") == type_), None)
    if current is not None and current.get("status") == value and current.get("reason") == reason:
        return
    new = {"type": type_, "status": value, "reason": reason, "message": message,
           "lastUpdateTime": now, "lastTransitionTime": now}
    if current is not None and current.get("status") == value:
        new["lastTransitionTime"] = current.get("lastTransitionTime", now)
    kept = []
    for cond in conditions:
        other = cond.get("type")
        if other == type_ or {type_, other} == {keys.RESTARTING, keys.RUNNING}:
            continue
        if type_ in (keys.FAILED, keys.SUCCEEDED) and other == keys.RUNNING:
            cond = {**cond, "status": "False"}
        kept.append(cond)
    status["conditions"] = kept + [new]


def pod_phase(pod: dict) -> str:
    return (pod.get("status") or {}).get("phase") or ""


def count_pod(replica_status: dict, pod: dict) -> None:
    """UpdateJobReplicaStatuses: Running → active (failed if being deleted), Succeeded, Failed."""
    phase = pod_phase(pod)
    if phase == "Running":
        key = "failed" if pod["metadata"].get("deletionTimestamp") else "active"
    elif phase == "Succeeded":
        key = "succeeded"
    elif phase == "Failed":
        key = "failed"
    else:
        return
    replica_status[key] = replica_status.get(key, 0) + 1


def selector(job_name: str, replica_type: str) -> str:
    """metav1.FormatLabelSelector of GenLabelSelector: matchLabels in key order."""
    labels = {keys.JOB_NAME_LABEL: job_name.replace("/", "-"), keys.OPERATOR_NAME_LABEL: keys.CONTROLLER_NAME,
              keys.REPLICA_TYPE_LABEL: replica_type.lower()}
    return ",".join(f"{k}={labels[k]}" for k in sorted(labels))


def as_stored(status: dict) -> dict:
    """The status as Go's encoder writes it: zero counts, empty selector and empty maps left out."""
    out = {}
    for key, value in status.items():
        if key == "replicaStatuses":
            value = {rtype: {k: v for k, v in (rs or {}).items() if v not in (0, "", None)}
                     for rtype, rs in (value or {}).items()}
        if value not in ({}, [], None, ""):
            out[key] = value
    return out
