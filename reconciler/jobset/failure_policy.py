"""JobSet ``spec.failurePolicy``: which rule applies to which failed Job, and what the action does.

Facts: shared/reference/volcano-jobset-restart.md §2.2 (``executeFailurePolicy``) and upstream's
``failure_policy_test.go`` vectors quoted there.

* No failurePolicy: the JobSet fails at once, reason ``FailedJobs``.
* Rules are tried in order; a rule applies to a failed Job when its reason is listed (or the list is
  empty), one of its message patterns matches the Job's failure message (Go ``regexp.MatchString``:
  a match anywhere; an invalid pattern is skipped), and its replicatedJob is targeted (or no target
  is given; a Job without the replicatedjob-name label never matches). Per rule, the Job whose
  ``Failed`` condition is oldest is chosen; the first rule with a match wins. No match: the action
  is ``RestartJobSet`` for the oldest failure.
* ``RestartJobSet`` fails the JobSet (``ReachedMaxRestarts``) when ``restartsCountTowardsMax >=
  maxRestarts``, else bumps ``restarts`` and ``restartsCountTowardsMax``;
  ``RestartJobSetAndIgnoreMaxRestarts`` bumps ``restarts`` only; ``FailJobSet`` fails it. Bumping
  ``restarts`` deletes nothing here: the next reconcile finds every Job's ``restart-attempt`` label
  below it and recreates the group.
"""

from __future__ import annotations

import re

from . import conditions as c

REPLICATED_JOB_NAME = "jobset.sigs.k8s.io/replicatedjob-name"
DEFAULT_ACTION = "RestartJobSet"
# Constructs Python's re accepts but RE2 (Go regexp) rejects: a pattern using them is invalid
# upstream and therefore skipped, never matched.
_NOT_RE2 = re.compile(r"\(\?<?[=!]|\(\?>|\(\?P=|(?<!\\)\\[1-9]|(?<!\\)\\C")


def execute(jobset: dict, status: dict, failed_jobs: list[dict], now: str, restarting_condition: bool) -> str | None:
    """Apply the failure policy to ``status``; returns an error message when upstream would."""
    policy = jobset["spec"].get("failurePolicy")
    if policy is None:
        first = first_failed(failed_jobs)
        _fail(status, *c.FAILED_JOBS, first, now)
        return None
    rule, job = find_rule_and_job(policy.get("rules") or [], failed_jobs)
    action = rule["action"] if rule else DEFAULT_ACTION
    if rule is None:
        job = first_failed(failed_jobs)
    if action == "FailJobSet":
        _fail(status, *c.FAIL_JOBSET_ACTION, job, now)
    elif action in c.RESTART_MESSAGES:
        counts = action == "RestartJobSet"
        if counts and status.get("restartsCountTowardsMax", 0) >= policy.get("maxRestarts", 0):
            _fail(status, *c.REACHED_MAX_RESTARTS, job, now)
            return None
        status["restarts"] = status.get("restarts", 0) + 1
        if counts:
            status["restartsCountTowardsMax"] = status.get("restartsCountTowardsMax", 0) + 1
        if restarting_condition:
            reason = c.RESTARTING_RULE_FORMAT.format(rule["name"]) if rule else c.RESTARTING_DEFAULT_POLICY
            c.set_condition(status, c.RESTARTING, True, reason,
                            c.with_first_failed_job(c.RESTART_MESSAGES[action], _name(job)), now)
    else:
        # RestartJob / RestartJobAndIgnoreMaxRestarts need the alpha RestartJob gate, off by default.
        return f"{action} failure policy action cannot be used when the feature gate RestartJob is disabled"
    return None


def _fail(status: dict, reason: str, message: str, job: dict, now: str) -> None:
    c.set_condition(status, c.FAILED, True, reason, c.with_first_failed_job(message, _name(job)), now)
    c.set_condition(status, c.RESTARTING, False, *c.RESTARTING_JOBSET_FAILED, now)
    status["terminalState"] = c.FAILED


def _name(job: dict | None) -> str:
    return job["metadata"]["name"] if job else ""


def failure_condition(job: dict) -> dict | None:
    for cond in (job.get("status") or {}).get("conditions", []):
        if cond.get("type") == "Failed" and cond.get("status") == "True":
            return cond
    return None


def first_failed(jobs: list[dict]) -> dict | None:
    """The Job whose ``Failed`` condition is oldest (ties: the first listed)."""
    best, best_time = None, None
    for job in jobs:
        cond = failure_condition(job)
        if cond is not None and (best is None or cond.get("lastTransitionTime", "") < best_time):
            best, best_time = job, cond.get("lastTransitionTime", "")
    return best


def find_rule_and_job(rules: list[dict], failed_jobs: list[dict]) -> tuple[dict | None, dict | None]:
    for rule in rules:
        matched = first_failed([j for j in failed_jobs if rule_applies(rule, j)])
        if matched is not None:
            return rule, matched
    return None, None


def rule_applies(rule: dict, job: dict) -> bool:
    cond = failure_condition(job)
    if cond is None:
        return False
    reasons = rule.get("onJobFailureReasons") or []
    if reasons and cond.get("reason") not in reasons:
        return False
    patterns = rule.get("onJobFailureMessagePatterns") or []
    if patterns and not any(_matches(p, cond.get("message", "")) for p in patterns):
        return False
    parent = ((job.get("metadata") or {}).get("labels") or {}).get(REPLICATED_JOB_NAME)
    if not parent:
        return False
    targets = rule.get("targetReplicatedJobs") or []
    return not targets or parent in targets


def _matches(pattern: str, message: str) -> bool:
    if _NOT_RE2.search(pattern):
        return False
    try:
        return re.search(pattern, message) is not None
    except re.error:
        return False
