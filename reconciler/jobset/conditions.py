"""JobSet status conditions, with upstream's update rules and strings (constants.go, §2.2 of
shared/reference/volcano-jobset-restart.md).

``set_condition`` follows JobSet's ``updateCondition``: a new status replaces the condition and its
time; a new reason/message alone keeps the old ``lastTransitionTime``; a ``False`` condition that
does not exist yet is not added (so ``RestartingJobSet=False`` only appears after a restart);
``StartupPolicyInProgress`` and ``StartupPolicyCompleted`` exclude each other.
"""

from __future__ import annotations

COMPLETED, FAILED, RESTARTING = "Completed", "Failed", "RestartingJobSet"

FAILED_JOBS = ("FailedJobs", "jobset failed due to one or more job failures")
REACHED_MAX_RESTARTS = ("ReachedMaxRestarts", "jobset failed due to reaching max number of restarts")
FAIL_JOBSET_ACTION = ("FailJobSetFailurePolicyAction", "applying FailJobSet failure policy action")
RESTART_MESSAGES = {
    "RestartJobSet": "applying RestartJobSet failure policy action",
    "RestartJobSetAndIgnoreMaxRestarts": "applying RestartJobSetAndIgnoreMaxRestarts failure policy action",
}
ALL_JOBS_COMPLETED = ("AllJobsCompleted", "jobset completed successfully")
RESTARTING_DEFAULT_POLICY = "DefaultFailurePolicy"
RESTARTING_RULE_FORMAT = "FailurePolicy_{}"
RESTARTING_JOBS_READY = ("JobsReady", "all jobs are ready")
RESTARTING_JOBSET_FAILED = ("JobSetFailed", "jobset failed")
# Upstream reuses the completion message for this reason.
RESTARTING_JOBSET_COMPLETED = ("JobSetCompleted", "jobset completed successfully")

STARTUP_IN_PROGRESS, STARTUP_COMPLETED = "StartupPolicyInProgress", "StartupPolicyCompleted"
IN_ORDER_IN_PROGRESS = ("InOrderStartupPolicyInProgress", "in order startup policy is in progress")
IN_ORDER_COMPLETED = ("InOrderStartupPolicyCompleted", "in order startup policy has completed")

_EXCLUSIVE = {frozenset({STARTUP_IN_PROGRESS, STARTUP_COMPLETED})}


def with_first_failed_job(message: str, job_name: str) -> str:
    return f"{message} (first failed job: {job_name})"


def is_true(status: dict, type_: str) -> bool:
    return any(c.get("type") == type_ and c.get("status") == "True" for c in status.get("conditions", []))


def set_condition(status: dict, type_: str, value: bool, reason: str, message: str, now: str) -> bool:
    """Apply one condition to ``status``; True when something changed."""
    new = {"type": type_, "status": "True" if value else "False", "reason": reason, "message": message,
           "lastTransitionTime": now}
    conditions = status.get("conditions", [])
    found = changed = False
    for i, current in enumerate(conditions):
        if current.get("type") == type_:
            found = True
            if current.get("status") != new["status"]:
                conditions[i], changed = new, True
            elif (current.get("reason"), current.get("message")) != (reason, message):
                conditions[i], changed = {**new, "lastTransitionTime": current.get("lastTransitionTime")}, True
        elif frozenset({current.get("type"), type_}) in _EXCLUSIVE and value and current.get("status") == "True":
            current["status"], changed = "False", True
    if not found and value:
        status.setdefault("conditions", conditions).append(new)
        changed = True
    return changed
