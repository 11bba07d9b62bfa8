"""The Volcano Job state machine: what each action does in each phase (pkg/controllers/job/state, v1.11.0-v1.12.0;
v1.10.0 where the profile says so).

Facts (shared/reference/volcano-jobset-restart.md §2.4), checked against upstream's state files:

* Pending / Running: ``RestartJob`` kills every pod (PodRetainPhaseNone) with ``retryCount++`` and
  phase ``Restarting``; ``RestartTask`` / ``RestartPod`` kill only the target, also ``retryCount++``
  → ``Restarting``; ``AbortJob`` / ``CompleteJob`` / ``TerminateJob`` kill with PodRetainPhaseSoft
  (Succeeded and Failed pods stay) → ``Aborting`` / ``Completing`` / ``Terminating``; anything else
  syncs (Pending → Running once ``minAvailable <= running + succeeded + failed``; Running → Completed
  or Failed once every pod finished, back to Pending when too many pods are pending).
* Restarting: a sync turns it ``Failed`` when ``retryCount >= maxRetry``, else ``Pending`` once
  ``total replicas - terminating >= minAvailable``.
* Before volcano#3813 (v1.10, profile switches ``volcano_restart_targets`` / ``volcano_restarting_syncs``):
  ``RestartTask`` has no case in Pending/Running and falls to the sync (``RestartPod`` is refused by the
  webhook), and in Restarting every action - a sync too - kills the whole job again (the same status
  update after the kill), each time bumping ``status.version``.
* Killing the whole job bumps ``status.version``; on the last retry (``retryCount >= maxRetry - 1``
  before the bump) Succeeded and Failed pods are kept. Killing a target does not bump the version.
* Aborting / Completing / Terminating end in Aborted / Completed / Terminated when no pod is alive;
  Completed, Failed, Terminated and Aborted only ever kill what is still alive.

The three primitives (sync, kill job, kill target) live in :class:`~reconciler.volcano.controller.JobWorker`;
this module only decides which one to call with which status update.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from . import keys

NONE: frozenset[str] = frozenset()
SOFT: frozenset[str] = frozenset({"Succeeded", "Failed"})

UpdateFn = Callable[[dict], bool]


@dataclass(frozen=True)
class Target:
    task: str
    pod: str = ""  # empty: the whole task


def _set_phase(phase: str, retry: bool = False) -> UpdateFn:
    def update(status: dict) -> bool:
        if retry:
            status["retryCount"] = status.get("retryCount", 0) + 1
        status.setdefault("state", {})["phase"] = phase
        return True
    return update


def execute(worker, job: dict, action: str, target: Target | None = None) -> None:
    """Run ``action`` on ``job`` in its current phase (state.NewState(job).Execute(action))."""
    phase = (job.get("status") or {}).get("state", {}).get("phase") or keys.PENDING
    if phase in (keys.PENDING, keys.RUNNING):
        _pending_or_running(worker, job, phase, action, target)
    elif phase == keys.RESTARTING:
        update = _restarting_update(job)
        if action == keys.SYNC_JOB and worker.profile.volcano_restarting_syncs:
            worker.sync_job(update)
        elif action in (keys.RESTART_TASK, keys.RESTART_POD) and target and worker.profile.volcano_restart_targets:
            worker.kill_target(target, update)
        else:  # before #3813 (v1.10): every action kills the whole job again
            worker.kill_job(NONE, update)
    elif phase in (keys.ABORTING, keys.ABORTED):
        if action == keys.RESUME_JOB:
            worker.kill_job(SOFT, _set_phase(keys.RESTARTING, retry=True))
        elif phase == keys.ABORTING:
            worker.kill_job(SOFT, _when_nothing_alive(keys.ABORTED))
        else:
            worker.kill_job(SOFT, None)
    elif phase == keys.COMPLETING:
        worker.kill_job(SOFT, _when_nothing_alive(keys.COMPLETED))
    elif phase == keys.TERMINATING:
        worker.kill_job(SOFT, _when_nothing_alive(keys.TERMINATED))
    else:  # Completed, Failed, Terminated
        worker.kill_job(SOFT, None)


def _pending_or_running(worker, job: dict, phase: str, action: str, target: Target | None) -> None:
    if action == keys.RESTART_JOB:
        worker.kill_job(NONE, _set_phase(keys.RESTARTING, retry=True))
    elif action in (keys.RESTART_TASK, keys.RESTART_POD) and target and worker.profile.volcano_restart_targets:
        worker.kill_target(target, _set_phase(keys.RESTARTING, retry=True))
    elif action == keys.ABORT_JOB:
        worker.kill_job(SOFT, _set_phase(keys.ABORTING))
    elif action == keys.COMPLETE_JOB:
        worker.kill_job(SOFT, _set_phase(keys.COMPLETING))
    elif action == keys.TERMINATE_JOB:
        worker.kill_job(SOFT, _set_phase(keys.TERMINATING))
    elif phase == keys.PENDING:
        worker.sync_job(_pending_update(job))
    else:
        worker.sync_job(_running_update(job))


def _pending_update(job: dict) -> UpdateFn:
    def update(status: dict) -> bool:
        if job["spec"].get("minAvailable", 0) <= status.get("running", 0) + status.get("succeeded", 0) \
                + status.get("failed", 0):
            status["state"]["phase"] = keys.RUNNING
            return True
        return False
    return update


def _running_update(job: dict) -> UpdateFn:
    spec = job["spec"]
    tasks = spec.get("tasks") or []
    replicas = sum(t.get("replicas", 0) for t in tasks)
    min_available = spec.get("minAvailable", 0)
    min_success = spec.get("minSuccess")

    def update(status: dict) -> bool:
        if replicas == 0:
            return False  # scaled down to zero: keep the phase
        succeeded, failed = status.get("succeeded", 0), status.get("failed", 0)
        if min_success is not None and succeeded >= min_success:
            status["state"]["phase"] = keys.COMPLETED
            return True
        if succeeded + failed == replicas:
            task_min_total = sum(t["minAvailable"] if t.get("minAvailable") is not None else t.get("replicas", 0)
                                 for t in tasks)
            if min_available >= task_min_total:
                counts = status.get("taskStatusCount") or {}
                for task in tasks:
                    if task.get("minAvailable") is None or task["name"] not in counts:
                        continue
                    if counts[task["name"]].get("phase", {}).get("Succeeded", 0) < task["minAvailable"]:
                        status["state"]["phase"] = keys.FAILED
                        return True
            if min_success is not None and succeeded < min_success:
                status["state"]["phase"] = keys.FAILED
            elif succeeded >= min_available:
                status["state"]["phase"] = keys.COMPLETED
            else:
                status["state"]["phase"] = keys.FAILED
            return True
        if status.get("pending", 0) > replicas - min_available:
            status["state"]["phase"] = keys.PENDING
            return True
        return False
    return update


def _restarting_update(job: dict) -> UpdateFn:
    def update(status: dict) -> bool:
        if status.get("retryCount", 0) >= job["spec"].get("maxRetry", 0):
            status["state"]["phase"] = keys.FAILED
            return True
        total = sum(t.get("replicas", 0) for t in job["spec"].get("tasks") or [])
        if total - status.get("terminating", 0) >= status.get("minAvailable", 0):
            status["state"]["phase"] = keys.PENDING
            return True
        return False
    return update


def _when_nothing_alive(phase: str) -> UpdateFn:
    def update(status: dict) -> bool:
        if status.get("terminating", 0) or status.get("pending", 0) or status.get("running", 0):
            return False
        status["state"]["phase"] = phase
        return True
    return update
