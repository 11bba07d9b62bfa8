"""The Kubernetes Job controller, as far as training workloads need it: Job → Pods, Job status,
and the decision that turns pod failures into a Job failure.

Indexed Jobs (JobSet's default) get one pod per completion index: generateName
``<job>-<index>-``, the ``batch.kubernetes.io/job-completion-index`` annotation and label,
hostname ``<job>-<index>`` and the ``JOB_COMPLETION_INDEX`` env var in every container.

Failure handling (shared/reference/volcano-jobset-restart.md §2.3, kubernetes
``pkg/controller/job``), in the order upstream applies it:

* a finished pod still holding the ``batch.kubernetes.io/job-tracking`` finalizer is counted once
  (``succeeded``, or ``failed`` unless the pod failure policy says ``Ignore``), then released;
* a Job that has ``SuccessCriteriaMet`` is not failed any more; an existing ``FailureTarget``
  becomes ``Failed`` (same reason and message) once no pod is terminating; otherwise a failed pod matching a ``FailJob`` rule gives ``FailureTarget``, reason
  ``PodFailurePolicy``; otherwise ``failed > backoffLimit`` - or, with ``restartPolicy: OnFailure``,
  the in-place container restarts of running pods reaching ``backoffLimit`` (``> 0`` when it is 0)
  - gives reason ``BackoffLimitExceeded``, "Job has reached the specified backoff limit";
* a failing Job deletes its active pods; a Job whose completions are all reached gets
  ``SuccessCriteriaMet`` then ``Complete`` (reason ``CompletionsReached``) and ``completionTime``
  (the Complete condition's time; a failed Job has none);
* otherwise missing indexes (the lowest first) get a pod; a terminating pod keeps its index only with
  ``podReplacementPolicy: Failed`` (the default when a pod failure policy is set); a Job without
  ``completions`` runs ``parallelism`` pods until one succeeds, and then starts none;
* a Job whose ``spec.managedBy`` names another controller than ``kubernetes.io/job-controller`` is
  not synced at all (``managedByExternalController``; JobManagedBy is GA in v1.35): no pod, no status;
* a Job being deleted is synced all the same (counts, conditions, ``active``/``ready``), creates no
  pod and releases every pod's finalizer.

Not modelled: the exponential back-off delay before a replacement pod, ``activeDeadlineSeconds``,
``backoffLimitPerIndex`` beyond the pods' ``job-index-failure-count`` annotation and an empty
``failedIndexes`` (no failed indexes, so
``FailIndex`` rules are skipped, as upstream does without it; no ignored-failure count).
"""

from __future__ import annotations

import copy

from . import meta
from .errors import Rejection

COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
INDEX_FAILURE_COUNT = "batch.kubernetes.io/job-index-failure-count"
TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
BACKOFF_LIMIT_EXCEEDED = ("BackoffLimitExceeded", "Job has reached the specified backoff limit")
COMPLETIONS_REACHED = ("CompletionsReached", "Reached expected number of succeeded pods")
POD_FAILURE_POLICY = "PodFailurePolicy"
JOB_SUSPENDED = ("JobSuspended", "Job suspended")
JOB_RESUMED = ("JobResumed", "Job resumed")
_TERMINAL = ("Succeeded", "Failed")
JOB_CONTROLLER_NAME = "kubernetes.io/job-controller"


class JobController:
    # Pods too: a pod whose Job is gone (deleted in Background) still holds the tracking finalizer,
    # and upstream's orphan-pod handling removes it.
    watches = (("batch", "Job"), ("", "Pod"))

    def reconcile(self, cluster, obj: dict) -> None:
        if obj["kind"] == "Pod":
            self._release_orphan(cluster, obj)
        elif obj["spec"].get("managedBy", JOB_CONTROLLER_NAME) == JOB_CONTROLLER_NAME:
            # managedByExternalController (JobManagedBy, GA in v1.35): a Job whose spec.managedBy names
            # another controller is left to it - no pod, no status.
            self._sync(cluster, obj)

    @staticmethod
    def _release_orphan(cluster, pod: dict) -> None:
        if TRACKING_FINALIZER not in pod["metadata"].get("finalizers", []):
            return
        owner = next((r for r in pod["metadata"].get("ownerReferences", []) if r.get("controller")), None)
        if owner is None or cluster.find_uid(owner.get("uid")) is None:
            _release(cluster, pod)

    def _sync(self, cluster, job: dict) -> None:
        pods = cluster.list("", "Pod", job["metadata"].get("namespace"), owner=job)
        status = copy.deepcopy(job.get("status") or {})
        deleting = job["metadata"].get("deletionTimestamp")
        if deleting:
            # A Job being deleted keeps syncing (counts, conditions, active/ready) but creates no
            # pod, and lets go of every pod so the garbage collector can remove them. It sees its
            # own deletion before the collector deletes its pods, so those are released uncounted.
            _count_finished(job, [p for p in pods if not _deleted_with(p, deleting)], status)
            released = [p for p in pods if TRACKING_FINALIZER in p["metadata"].get("finalizers", [])]
        else:
            released = _count_finished(job, pods, status)
        if _finished(job):
            _write_status(cluster, job, status)
            _release_all(cluster, released)
            return
        active = [p for p in pods if _is_active(p)]
        terminating = [p for p in pods if _is_terminating(p)]
        outcome = _failure(job, pods, status) or _success(job, status, active)
        if outcome is not None:
            interim, final, reason, message = outcome
            for pod in active:
                cluster.delete(pod)
            terminating += active
            conditions = status.setdefault("conditions", [])
            if not meta.find_by(conditions, "type", interim):
                conditions.append(_condition(cluster, interim, reason, message))
            if not terminating:
                conditions.append(_condition(cluster, final, reason, message))
                if final == "Complete":  # only a successful Job gets a completionTime
                    status["completionTime"] = conditions[-1]["lastTransitionTime"]
            active = []
        elif not deleting:
            # syncJob after manageJob: the JobSuspended condition follows spec.suspend.
            if job["spec"].get("suspend"):
                # manageJob: a suspended Job deletes all its active pods (deleteJobPods lets go of each
                # first, so none is counted as failed); they count as terminating until they are gone.
                for pod in active:
                    _release(cluster, pod)
                    cluster.delete(pod)
                terminating += active
                active = []
                _ensure_condition(cluster, status, "Suspended", "True", *JOB_SUSPENDED)
            else:
                _ensure_condition(cluster, status, "Suspended", "False", *JOB_RESUMED)
                active += self._create_pods(cluster, job, pods, status, active, terminating)
        status["ready"] = sum(1 for p in active if _pod_ready(p))
        status["terminating"] = len(terminating)
        _set_count(status, "active", len(active))
        _write_status(cluster, job, status)
        _release_all(cluster, released)

    # ------------------------------------------------------------------ pods
    def _create_pods(self, cluster, job: dict, pods: list[dict], status: dict, active: list[dict],
                     terminating: list[dict]) -> list[dict]:
        spec = job["spec"]
        parallelism = spec.get("parallelism", 1)
        completions = spec.get("completions")
        succeeded = status.get("succeeded", 0)
        if completions is None:
            # manageJob: a work-queue Job runs `parallelism` pods until one has succeeded; from then on it
            # wants no more than are active - the others run to their end and none is replaced.
            want = len(active) if succeeded > 0 else parallelism
        else:
            want = max(0, min(parallelism, completions - succeeded))
        # With podReplacementPolicy Failed a terminating pod still counts, so no replacement yet.
        holding = active + (terminating if spec.get("podReplacementPolicy") == "Failed" else [])
        missing = want - len(holding)
        if missing <= 0:
            return []
        if spec.get("completionMode") == "Indexed":
            done = _parse_indexes(status.get("completedIndexes", ""))
            taken = {_index(p) for p in holding}
            indexes = [i for i in range(completions) if i not in done and i not in taken][:missing]
        else:
            indexes = [None] * missing
        created = []
        for index in indexes:
            try:
                created.append(cluster.create(self._pod(job, index, _index_failures(job, pods, index))))
            except Rejection as refused:
                # RealPodControl.CreatePods: Warning FailedCreate "Error creating: <err>" on the Job;
                # the rest of the batch is skipped (slow start) and the sync retried. The Event is
                # kube-controller-manager's whole report (no operator of this suite's to log an error).
                cluster.record_event(job, "Warning", "FailedCreate", f"Error creating: {refused}")
                break
        return created

    @staticmethod
    def _pod(job: dict, index: int | None, failures: int | None = None) -> dict:
        template = meta.clone(job["spec"].get("template") or {})
        md = template.get("metadata") or {}
        spec = template.get("spec") or {}
        name = job["metadata"]["name"]
        md.update({"namespace": job["metadata"].get("namespace"), "finalizers": [TRACKING_FINALIZER],
                   "ownerReferences": [meta.controller_ref(job)]})
        if index is None:
            md["generateName"] = f"{name}-"
        else:
            md["generateName"] = f"{name}-{index}-"
            md["annotations"] = {**(md.get("annotations") or {}), COMPLETION_INDEX: str(index)}
            if failures is not None:
                md["annotations"][INDEX_FAILURE_COUNT] = str(failures)
            md["labels"] = {**(md.get("labels") or {}), COMPLETION_INDEX: str(index)}
            spec["hostname"] = f"{name}-{index}"
            for container in (spec.get("initContainers") or []) + (spec.get("containers") or []):
                env = container.setdefault("env", [])
                if not meta.find_named(env, "JOB_COMPLETION_INDEX"):
                    env.append({"name": "JOB_COMPLETION_INDEX", "valueFrom": {"fieldRef": {
                        "fieldPath": f"metadata.labels['{COMPLETION_INDEX}']"}}})
        return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec}


def _index_failures(job: dict, pods: list[dict], index: int | None) -> int | None:
    """With ``backoffLimitPerIndex``, a new pod of an index is annotated with the index's failures so
    far (addIndexFailureCountAnnotation): 0 for the first, else the replaced failed pod's count + 1.
    ``None`` without a per-index limit (no annotation)."""
    if index is None or job["spec"].get("backoffLimitPerIndex") is None:
        return None
    counts = [int((p["metadata"].get("annotations") or {}).get(INDEX_FAILURE_COUNT, "0")) + 1
              for p in pods if _index(p) == index and _phase(p) == "Failed"]
    return max(counts, default=0)


# ---------------------------------------------------------------------- counting

def _count_finished(job: dict, pods: list[dict], status: dict) -> list[dict]:
    """Count pods that finished since the last sync; return them (their finalizer goes next)."""
    policy = job["spec"].get("podFailurePolicy")
    indexed = job["spec"].get("completionMode") == "Indexed"
    done = _parse_indexes(status.get("completedIndexes", "")) if indexed else set()
    counted = []
    for pod in pods:
        if TRACKING_FINALIZER not in pod["metadata"].get("finalizers", []):
            continue
        if _phase(pod) == "Succeeded":
            if indexed:
                index = _index(pod)
                if index < job["spec"]["completions"]:  # validation requires completions of an Indexed Job
                    done.add(index)
            else:
                status["succeeded"] = status.get("succeeded", 0) + 1
        elif _is_failed(job, pod):
            if match_pod_failure_policy(policy, pod)[1]:
                status["failed"] = status.get("failed", 0) + 1
        else:
            continue
        counted.append(pod)
    if indexed:
        _set_count(status, "succeeded", len(done))
        if done:
            status["completedIndexes"] = _format_indexes(done)
        if job["spec"].get("backoffLimitPerIndex") is not None:
            # trackJobStatusAndRemoveFinalizers writes failedIndexes whenever a per-index limit is set
            # (calculateFailedIndexes gives an empty set, not nil): "" until an index fails, which is
            # not modelled.
            status.setdefault("failedIndexes", "")
    return counted


def _failure(job: dict, pods: list[dict], status: dict) -> tuple[str, str, str, str] | None:
    # syncJob: a Job that met its success criteria is not failed any more; an existing FailureTarget
    # (written by this controller, with its reason and message) becomes Failed; then FailJob rules.
    if meta.condition({"status": status}, "SuccessCriteriaMet"):
        return None
    target = meta.condition({"status": status}, "FailureTarget")
    if target and target.get("status") == "True":
        return "FailureTarget", "Failed", target["reason"], target["message"]
    for pod in pods:
        if _is_failed(job, pod):
            message = match_pod_failure_policy(job["spec"].get("podFailurePolicy"), pod)[0]
            if message is not None:
                return "FailureTarget", "Failed", POD_FAILURE_POLICY, message
    limit = job["spec"]["backoffLimit"]  # always defaulted (SetDefaults_Job)
    if status.get("failed", 0) > limit or _past_backoff_limit_on_failure(job, pods, limit):
        return ("FailureTarget", "Failed", *BACKOFF_LIMIT_EXCEEDED)
    return None


def _success(job: dict, status: dict, active: list[dict]) -> tuple[str, str, str, str] | None:
    completions = job["spec"].get("completions")
    succeeded = status.get("succeeded", 0)
    complete = succeeded > 0 and not active if completions is None else succeeded >= completions and not active
    return ("SuccessCriteriaMet", "Complete", *COMPLETIONS_REACHED) if complete else None


def _past_backoff_limit_on_failure(job: dict, pods: list[dict], limit: int) -> bool:
    """In-place restarts (``restartPolicy: OnFailure``) of running pods count against the limit."""
    if ((job["spec"].get("template") or {}).get("spec") or {}).get("restartPolicy") != "OnFailure":
        return False
    restarts = sum(c["restartCount"]  # a non-pointer int32, always encoded
                   for p in pods if _phase(p) in ("Running", "Pending")
                   for c in p["status"].get("initContainerStatuses", []) + p["status"].get("containerStatuses", []))
    return restarts > 0 if limit == 0 else restarts >= limit


def match_pod_failure_policy(policy: dict | None, pod: dict) -> tuple[str | None, bool, str | None]:
    """(FailJob message or None, counts toward backoffLimit, action or None) for a failed pod.

    Rules are tried in order and the first match wins; a rule with an unknown action (or
    ``FailIndex``, which needs ``backoffLimitPerIndex``) is skipped. Exit codes of containers
    that exited 0 never match. Messages are upstream's, verbatim.
    """
    if not policy:
        return None, True, None
    md = pod["metadata"]
    for index, rule in enumerate(policy.get("rules") or []):
        action = rule.get("action")
        if action not in ("Ignore", "Count", "FailJob"):
            continue
        if rule.get("onExitCodes") is not None:
            container = _matching_container(pod, rule["onExitCodes"])
            if container is None:
                continue
            message = (f"Container {container['name']} for pod {md.get('namespace')}/{md.get('name')} failed with "
                       f"exit code {container['state']['terminated']['exitCode']} matching {action} rule at index {index}")
        elif rule.get("onPodConditions") is not None:
            condition = _matching_condition(pod, rule["onPodConditions"])
            if condition is None:
                continue
            message = (f"Pod {md.get('namespace')}/{md.get('name')} has condition {condition['type']} "
                       f"matching {action} rule at index {index}")
        else:
            continue
        if action == "Ignore":
            return None, False, action
        if action == "Count":
            return None, True, action
        return message, True, action
    return None, True, None


def _matching_container(pod: dict, requirement: dict) -> dict | None:
    status = pod["status"]  # a failed pod: its kubelet has written its container statuses
    for container in status["containerStatuses"] + status.get("initContainerStatuses", []):
        terminated = container["state"].get("terminated")
        if terminated is None or terminated["exitCode"] == 0:
            continue
        if requirement.get("containerName") not in (None, container["name"]):
            continue
        values = requirement.get("values") or []
        operator = requirement.get("operator")
        if (operator == "In" and terminated["exitCode"] in values) or \
                (operator == "NotIn" and terminated["exitCode"] not in values):
            return container
    return None


def _matching_condition(pod: dict, patterns: list[dict]) -> dict | None:
    for condition in pod["status"]["conditions"]:
        for pattern in patterns:
            # pattern.status is defaulted to True (SetDefaults_PodFailurePolicyOnPodConditionsPattern)
            if condition.get("type") == pattern.get("type") and condition.get("status") == pattern["status"]:
                return condition
    return None


# ---------------------------------------------------------------------- helpers

def _phase(pod: dict) -> str:
    return pod["status"]["phase"]  # the pod strategy sets Pending on create


def _is_active(pod: dict) -> bool:
    return _phase(pod) not in _TERMINAL and not pod["metadata"].get("deletionTimestamp")


def _is_terminating(pod: dict) -> bool:
    return _phase(pod) not in _TERMINAL and bool(pod["metadata"].get("deletionTimestamp"))


def _deleted_with(pod: dict, job_deletion: str) -> bool:
    """Deleted no earlier than its Job: by the garbage collector, as part of the Job's deletion."""
    stamp = pod["metadata"].get("deletionTimestamp")
    return bool(stamp) and stamp >= job_deletion


def _is_failed(job: dict, pod: dict) -> bool:
    """Failed phase; with ``TerminatingOrFailed`` a pod being deleted counts as failed already."""
    if _phase(pod) == "Failed":
        return True
    if job["spec"].get("podReplacementPolicy") == "Failed":
        return False
    return bool(pod["metadata"].get("deletionTimestamp")) and _phase(pod) != "Succeeded"


def _finished(job: dict) -> bool:
    return any((meta.condition(job, t) or {}).get("status") == "True" for t in ("Complete", "Failed"))


def _index(pod: dict) -> int:
    """The completion index of a pod of an Indexed Job: every such pod is this controller's, annotated."""
    return int(pod["metadata"]["annotations"][COMPLETION_INDEX])


def _parse_indexes(text: str) -> set[int]:
    indexes: set[int] = set()
    for part in filter(None, text.split(",")):
        first, _, last = part.partition("-")
        indexes.update(range(int(first), int(last or first) + 1))
    return indexes


def _format_indexes(indexes: set[int]) -> str:
    """``completedIndexes`` (orderedIntervals.String): ascending intervals, comma-separated; a run of
    three or more as ``first-last``, a run of two as ``first,last`` - e.g. ``0-2,4,5``."""
    parts, ordered = [], sorted(indexes)
    start = prev = ordered[0]
    for i in ordered[1:] + [None]:
        if i is not None and i == prev + 1:
            prev = i
            continue
        parts.append(str(start) if start == prev else f"{start}{',' if prev == start + 1 else '-'}{prev}")
        if i is not None:
            start = prev = i
    return ",".join(parts)


def _set_count(status: dict, key: str, value: int) -> None:
    # active/succeeded/failed are omitempty int32 fields upstream.
    if value:
        status[key] = value
    else:
        status.pop(key, None)


def _condition(cluster, type_: str, reason: str, message: str, value: str = "True") -> dict:
    now = cluster.now()
    return {"type": type_, "status": value, "reason": reason, "message": message,
            "lastProbeTime": now, "lastTransitionTime": now}


def _ensure_condition(cluster, status: dict, type_: str, value: str, reason: str, message: str) -> None:
    """ensureJobConditionStatus: a condition of the type is replaced when its status, reason or
    message differs; a missing one is added unless the status is False."""
    conditions = status.get("conditions") or []
    current = meta.find_by(conditions, "type", type_)
    if current is not None:
        if (current.get("status"), current.get("reason"), current.get("message")) != (value, reason, message):
            current.clear()
            current.update(_condition(cluster, type_, reason, message, value))
    elif value != "False":
        status["conditions"] = [*conditions, _condition(cluster, type_, reason, message, value)]


def _write_status(cluster, job: dict, status: dict) -> None:
    if status != (job.get("status") or {}):
        job["status"] = status
        cluster.update(job)


def _release(cluster, pod: dict) -> None:
    finalizers = pod["metadata"].get("finalizers") or []
    if TRACKING_FINALIZER in finalizers and cluster.find(*meta.key(pod)) is not None:
        rest = [f for f in finalizers if f != TRACKING_FINALIZER]
        if rest:
            pod["metadata"]["finalizers"] = rest
        else:
            pod["metadata"].pop("finalizers")
        cluster.update(pod)


def _release_all(cluster, pods: list[dict]) -> None:
    for pod in pods:
        _release(cluster, pod)


def _pod_ready(pod: dict) -> bool:
    cond = meta.condition(pod, "Ready")
    return bool(cond and cond.get("status") == "True")
