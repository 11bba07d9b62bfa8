"""JobSet group-restart bugs: restarting only what failed, a restart budget that never runs out,
and BlockingRecreate that does not block."""

from __future__ import annotations

import copy
from functools import partial

import reconciler.jobset as jobset_pkg
from reconciler.jobset import failure_policy
from reconciler.jobset.controller import JobSetController

from .variants import Variant, patched


class _RestartOnlyFailed(JobSetController):
    """A failed Job is deleted and recreated alone, at the same restart attempt: the other Jobs
    (and their pods) keep running, so the training group is never restarted as a whole."""

    def _reconcile(self, cluster, jobset, children, status):
        if children.failed and jobset["spec"].get("failurePolicy") is not None and not self._finished(status):
            for job in children.failed:
                cluster.delete(job, propagation="Foreground")
            children.failed = []
        return super()._reconcile(cluster, jobset, children, status)


_real_execute = failure_policy.execute


def _execute_with_counter_reset(jobset, status, failed_jobs, now, restarting_condition):
    """The counter of restarts that count towards maxRestarts is lost on every restart (as when it
    is kept in memory or recomputed from the new Jobs), so maxRestarts is never reached."""
    error = _real_execute(jobset, status, failed_jobs, now, restarting_condition)
    if status.get("terminalState") is None:
        status["restartsCountTowardsMax"] = 0
    return error


class _BlockingRecreateDoesNotBlock(JobSetController):
    """New Jobs are created while the previous attempt's Jobs are still being deleted."""

    def _create_missing_jobs(self, cluster, jobset, children, *rest):
        relaxed = copy.deepcopy(jobset)
        (relaxed["spec"].get("failurePolicy") or {}).pop("restartStrategy", None)
        return super()._create_missing_jobs(cluster, relaxed, children, *rest)


VARIANTS = [
    Variant("jobset-restart-only-failed-job", "jobset",
            bug="a pod failure recreates only the failed Job; the rest of the group keeps running (no group restart)",
            seed="kubeflow/trainer#2000, #2269; JobSet KEP-262 (group restart is the point of failurePolicy)",
            applied=partial(patched, jobset_pkg, "JobSetController", _RestartOnlyFailed)),
    Variant("jobset-restart-counter-reset", "jobset",
            bug="restartsCountTowardsMax is reset on every restart, so maxRestarts never stops a crash loop",
            seed="kubeflow/trainer#2185 (asks for a job max-retry count); JobSet maxRestarts / restartsCountTowardsMax",
            applied=partial(patched, failure_policy, "execute", _execute_with_counter_reset)),
    Variant("jobset-blocking-recreate-creates-early", "jobset",
            bug="with restartStrategy BlockingRecreate, new Jobs are created before the old ones are gone",
            seed="kubernetes-sigs/jobset#686 (BlockingRecreate, v0.7.0)",
            applied=partial(patched, jobset_pkg, "JobSetController", _BlockingRecreateDoesNotBlock)),
]
