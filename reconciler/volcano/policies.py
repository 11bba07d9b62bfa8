"""applyPolicies: which action a lifecycle event triggers (job_controller_util.go, v1.12.0).

Facts (shared/reference/volcano-jobset-restart.md §2.4): a request that carries an action (a Command's,
CommandIssued) gets that action first; otherwise task-level policies of the event's task are
tried first, then job-level ones; a policy matches when the event is in ``events ∪ {event}`` or that
list has ``*``, or when its ``exitCode`` equals the event's exit code; the first match wins. Internal
events (OutOfSync, CommandIssued, PodRunning) and stale requests (a pod of an older job version) give
``SyncJob``, as does no match. A ``PodPending`` policy only applies with a ``timeout``.

``timeout`` delays the action upstream. The render world has no wall clock, so the delay is dropped:
the action runs at once. That only matters for PodPending policies, whose pods leave Pending at once
here (a delayed PodPending action is cancelled upstream when the pod turns Running), so the reference
reconciler never fires a PodPending policy.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import keys


@dataclass(frozen=True)
class Request:
    """One event about a Job, as the controller's work queue carries it."""

    event: str
    task: str = ""
    pod: str = ""
    exit_code: int = 0
    job_version: int = 0
    #: A Command's action (processNextCommand): applyPolicies returns it before looking at anything else.
    action: str = ""


def apply_policies(job: dict, req: Request) -> str:
    if req.action:
        return req.action
    if req.event in keys.INTERNAL_EVENTS or req.event == keys.POD_PENDING:
        return keys.SYNC_JOB
    if req.job_version < (job.get("status") or {}).get("version", 0):
        return keys.SYNC_JOB  # the request comes from a discarded incarnation of the job
    task_policies = []
    if req.task:
        task = next((t for t in job["spec"].get("tasks") or [] if t.get("name") == req.task), None)
        task_policies = (task or {}).get("policies") or []
    for policy in list(task_policies) + list(job["spec"].get("policies") or []):
        events = list(policy.get("events") or []) + ([policy["event"]] if policy.get("event") else [])
        if events and req.event and (req.event in events or keys.ANY_EVENT in events):
            return policy.get("action", "")
        if policy.get("exitCode") is not None and policy["exitCode"] == req.exit_code:
            return policy.get("action", "")
    return keys.SYNC_JOB
