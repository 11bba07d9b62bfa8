"""When is a live case done? Watched, not slept on.

The session's informers see every change in the case's namespaces; :class:`Activity` notes the
time of the last one per namespace and wakes waiters. A case is steady when

1. nothing is being deleted (a deletionTimestamp is a change still under way),
2. every Pod a scheduler will place has been placed and started (phase past Pending) - kwok
   has done its part; a Pod bound by another scheduler (Volcano, or the local control plane's
   volcano-binder) has to start too, but an unbound Pod for a scheduler the cluster may not run
   (``schedulerName: volcano``) does not hold the case up (the case decides, see ``case.py``),
3. every Job's ``status.active`` counts its unfinished Pods and, unless it is finished or
   suspended, there are as many of them as it wants - kube-controller-manager's Job controller
   has caught up (with ``ready=True`` also its 1 s-batched ``status.ready``), and
4. every workload has what its operator makes of it (:data:`CHILDREN`, one rule per kind): a
   TrainJob its JobSet, a JobSet the Jobs of its replicatedJobs (those without ``dependsOn``), a
   PyTorchJob and an MPIJob their status, pods, Services, ... with counts that agree with their
   pods - unless the parent is older than ``CHILD_GRACE`` seconds and its operator has written no
   status: an operator that has not acted by then is taken not to (a build or creation it refused,
   an object it finds invalid or leaves to another manager, which the case then judges); under
   load an operator can take longer than the quiet window to react; no object's controller is gone (the garbage collector is still to delete it), and
4a. every StatefulSet has been seen by kube-controller-manager (``observedGeneration``), counts
   its own pods in ``status.replicas`` / ``readyReplicas``, has a pod for every ordinal its
   controller gets to (OrderedReady: up to the first pod not Running and Ready; Parallel: in
   slow-start batches, up to the batch in which a pod of that name it does not own - a held pod of
   an earlier set - blocks an ordinal), no finished pod
   it has not deleted yet among the replicas it gets to, no undeleted pod beyond the range that
   processCondemned gets to (once no replica stops the sync before them) and, rolling out, every pod from the partition up at the update revision;
   every LeaderWorkerSet has its leader StatefulSet (unless older than ``CHILD_GRACE``), counts
   the StatefulSet's replicas and its ready and updated groups, has
   ``Available`` exactly when all its groups are ready and updated, a worker StatefulSet for
   every leader pod that needs one (size > 1, not being deleted, Ready under ``LeaderReady``, none
   refused: a Warning ``FailedCreate`` names it), a revision of its current template, no step of a
   rolling update left (:func:`_rolling_step_left`: ``rollingUpdatePartition`` would move the
   partition; with surge groups, the groups above it ready and updated), no foreground deletion
   still under way (the garbage collector requeues a waiting owner with back-off) and, under
   ``RecreateGroupOnPodRestart``, no restarted or deleting pod whose leader is not deleted yet, and
5. no event arrived in those namespaces for ``quiet`` seconds - the window in which an operator
   reacts to the last change (our reference operator takes milliseconds).

Conditions 1-4 are checked when events arrive (at most every ``CHECK_INTERVAL``, and only up to the
first thing still changing: the whole list is made only for a report), 5 by waiting on the event
condition with a timeout. A wait's check (:class:`FirstReason`) first looks for a pod that is not
steady on its own account (:func:`own_reason`: still to start, or being deleted and not stopped), and
keeps answering with it for as long as that very pod is unchanged in the cache; only when there is
none are all the rules asked. Once nothing is left but the quiet window, events that arrive meanwhile
move its end instead of each costing a check: only the state at its end counts.
"""

from __future__ import annotations

import datetime as dt
import itertools
import re
import threading
import time

from reconciler import builtin, meta
from reconciler.faults import HOLD_FINALIZER
from reconciler.mpijob import defaults as mpijob_defaults, keys as mpijob_keys, \
    resources as mpijob_resources, validation as mpijob_validation
from reconciler.pytorchjob import controller as pytorchjob_controller, defaults as pytorchjob_defaults, \
    keys as pytorchjob_keys

_TERMINAL = ("Succeeded", "Failed")
VOLCANO_JOB = "batch.volcano.sh/v1alpha1"
_DEFAULT_SCHEDULERS = (None, "", "default-scheduler")
#: Shortest time between two steadiness checks while something is still changing (seconds).
CHECK_INTERVAL = 0.05
#: Seconds an operator gets to create a parent's children before their absence counts as its answer.
CHILD_GRACE = 5.0
IN_USE_FINALIZER = "trainer.kubeflow.org/resource-in-use"


class Activity:
    """Last event time per namespace, fed by informer handlers."""

    def __init__(self):
        self.cond = threading.Condition()
        self.last: dict[str, float] = {}
        #: Events seen so far (any namespace).
        self.events = 0
        #: The newest resourceVersion seen per (group, kind), for asking an operator whether it has
        #: caught up with everything seen here (:meth:`wait` ``settled``).
        self.rv_by_kind: dict[tuple[str, str], int] = {}
        #: Called with every event too (a scenario step's ``never`` watch), on the informer's thread.
        self.listeners: list = []

    def handler(self, event_type: str, obj: dict) -> None:
        namespace = (obj.get("metadata") or {}).get("namespace", "")
        for listener in list(self.listeners):
            listener(event_type, obj)
        rv = (obj.get("metadata") or {}).get("resourceVersion", "")
        with self.cond:
            self.last[namespace] = time.monotonic()
            self.events += 1
            if rv.isdigit():
                gk = (meta.group_of(obj.get("apiVersion", "")), obj.get("kind", ""))
                self.rv_by_kind[gk] = max(self.rv_by_kind.get(gk, 0), int(rv))
            self.cond.notify_all()

    def seen_versions(self) -> dict[tuple[str, str], int]:
        with self.cond:
            return dict(self.rv_by_kind)

    def wait(self, namespaces: list[str], ready, quiet: float, timeout: float, since: float,
             settled=None, explain=None) -> list[str]:
        """Block until ``ready()`` returns no reasons and the namespaces were quiet for ``quiet``
        seconds, and then ``settled()`` (if given: e.g. the operator has caught up) returns none
        either; returns the reasons that remained when ``timeout`` ran out ([] = steady) - all of
        them from ``explain()`` if given (``ready()`` may stop at the first)."""
        deadline = time.monotonic() + timeout
        while True:
            reasons = self._wait(namespaces, ready, quiet, max(0.0, deadline - time.monotonic()), since)
            if reasons and explain is not None:
                reasons = explain() or reasons
            if reasons or settled is None:
                return reasons
            behind = settled()  # outside the lock: it may ask another process
            if not behind:
                return []
            if time.monotonic() >= deadline:
                return behind
            time.sleep(0.02)

    def _quiet_for(self, namespaces: list[str], since: float) -> float:
        """Seconds since the last event in ``namespaces`` (or since ``since``); call with the lock held."""
        return time.monotonic() - max([since] + [self.last.get(ns, since) for ns in namespaces])

    def _wait(self, namespaces: list[str], ready, quiet: float, timeout: float, since: float) -> list[str]:
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                quiet_for = self._quiet_for(namespaces, since)
                now = time.monotonic()
                reasons = ready()
                checked = time.monotonic()
                if not reasons and quiet_for >= quiet:
                    return []
                if checked >= deadline:
                    return reasons or [f"still changing (last event {quiet_for:.2f}s ago)"]
                if reasons:
                    # ready() looks at every object of the case, so with thousands of pods changing
                    # at once, checking after each event would cost O(events x objects): check at
                    # most once per four times what a check costs, and at most 20 times a second -
                    # in a 1,024-pod restart, checks every 10 ms took a fifth of the harness's time
                    # (the interpreter the reference operator shares) for nothing: what a case waits
                    # for takes seconds, and being told 50 ms late changes no outcome...
                    seen = self.events
                    self._sleep_until(min(deadline, checked + max(CHECK_INTERVAL, 4 * (checked - now))))
                    if self.events == seen:
                        # ...then wake on the next event - or within half a second, since some
                        # reasons (a child's grace period) end with time rather than with an event.
                        self.cond.wait(max(0.001, min(0.5, deadline - time.monotonic())))
                else:
                    # Nothing left but the quiet window, and only the state at its end counts: an event
                    # meanwhile moves the end (a settling 1,000-pod case gets dozens, each a whole check).
                    while (left := min(quiet - self._quiet_for(namespaces, since), deadline - time.monotonic())) > 0:
                        self._sleep_until(time.monotonic() + left)

    def _sleep_until(self, moment: float) -> None:
        """Sleep until ``moment`` with the condition released: events keep being recorded, and do not
        wake this thread (each would only find the moment not come yet - hundreds of thread switches
        a second while a thousand pods change). Called with the condition held."""
        if (left := moment - time.monotonic()) > 0:
            self.cond.release()
            try:
                time.sleep(left)
            finally:
                self.cond.acquire()


def own_reason(obj: dict) -> str | None:
    """The reason ``obj`` gives on its own account, whatever else the case holds: a Pod being deleted
    that has not stopped (:func:`_held` never holds one), or one still to start (:func:`_unstarted`).
    :func:`reasons_not_steady` gives the same reason for ``obj`` among any objects."""
    if obj.get("kind") != "Pod" or obj.get("apiVersion") != "v1":
        return None
    if (obj.get("metadata") or {}).get("deletionTimestamp") and (obj.get("status") or {}).get("phase") not in _TERMINAL:
        return f"{meta.describe(obj)} is being deleted"
    return _unstarted(obj)


def _unstarted(pod: dict) -> str | None:
    """A Pod bound (by any scheduler), or to be bound by kube-scheduler, that has not started yet."""
    phase = (pod.get("status") or {}).get("phase")
    spec = pod.get("spec") or {}
    if (spec.get("nodeName") or spec.get("schedulerName") in _DEFAULT_SCHEDULERS) and phase in (None, "Pending"):
        return f"{meta.describe(pod)} is {phase or 'new'}"
    return None


class FirstReason:
    """A wait's ``ready()`` over a cache: the first reason the objects of ``namespaces`` are not steady.

    It remembers a few pods (``WITNESSES``) that gave an :func:`own_reason`; while the cache holds one
    of those very objects (the same dict: a change replaces it) its reason stands without a look at
    the rest. Otherwise it looks for such pods again (cheap), and only when there is none asks
    ``check(objects)``, i.e. every rule. Either way the answer is one of the reasons the objects give:
    what changes is the cost - in a 1,024-pod restart most checks find a pod still starting or
    stopping, and a check over all ~3,000 objects cost 5 ms, the whole list up to 50 ms."""

    WITNESSES = 16

    def __init__(self, cache, namespaces: list[str], check):
        self.cache, self.namespaces, self.check = cache, namespaces, check
        self._witnesses: list[tuple] = []

    def __call__(self) -> list[str]:
        for key, obj, reason in self._witnesses:
            if self.cache.get(key) is obj:
                return [reason]
        objects = self.cache.in_namespaces(self.namespaces)
        self._witnesses = list(itertools.islice(((meta.key(o), o, r) for o in objects if (r := own_reason(o))),
                                                self.WITNESSES))
        if self._witnesses:
            return [self._witnesses[0][2]]
        return self.check(objects)


def reasons_not_steady(objects: list[dict], status_too: bool = False, first: bool = False) -> list[str]:
    """What in ``objects`` (one case's namespaces) is still expected to change; with ``first``, only
    the first such thing (or nothing): a wait that checks again and again only needs to know
    whether anything is left, and most checks during a change find it among the first objects.

    A scenario's ``holdTermination`` keeps a pod being deleted for good (finalizer
    ``training-conformance.dev/hold``): once stopped it is steady, and so are owners whose
    foreground deletion waits for a dependent that is still there (see :func:`_held`).
    """
    reasons = _reasons_not_steady(objects, status_too)
    return list(itertools.islice(reasons, 1)) if first else list(reasons)


def _reasons_not_steady(objects: list[dict], status_too: bool):
    """:func:`reasons_not_steady`, one at a time, cheap checks first."""
    pods_by_owner: dict[str, list[dict]] = {}
    waiting_on: dict | None = None

    def blocked(uid) -> bool:
        # Owners with a dependent that blocks their deletion, none of them left undeleted yet -
        # asked only of the few deleted objects whose finalizers make it matter, so a restart's
        # thousand deleted pods need no pass for it. A blocking dependent the garbage collector has
        # not deleted yet means the owner is still changing, not waiting (a Job in foreground
        # deletion, its pods still running; a JobSet deleted in Foreground whose Jobs the collector
        # has not reached yet - seen live under load). ControllerRevisions are not waited for: a
        # StatefulSet controller writes them again while the set waits for a held pod.
        nonlocal waiting_on
        if waiting_on is None:
            waiting_on = {}
            for o in objects:
                pending = (o.get("kind") != "ControllerRevision"
                           and not (o.get("metadata") or {}).get("deletionTimestamp"))
                for r in (o.get("metadata") or {}).get("ownerReferences") or []:
                    if r.get("blockOwnerDeletion"):
                        waiting_on[r.get("uid")] = waiting_on.get(r.get("uid"), True) and not pending
        return waiting_on.get(uid, False)

    for obj in objects:
        md = obj.get("metadata") or {}
        if md.get("deletionTimestamp") and not _held(obj, lambda: blocked(md.get("uid"))) \
                and not _runtime_in_use(obj, objects):
            yield f"{meta.describe(obj)} is being deleted"
        if obj.get("kind") == "Pod" and obj.get("apiVersion") == "v1":
            for ref in md.get("ownerReferences", []):
                pods_by_owner.setdefault(ref.get("uid", ""), []).append(obj)
            unstarted = _unstarted(obj)
            if unstarted:
                yield unstarted
    jobs = [o for o in objects if o.get("kind") == "Job" and o.get("apiVersion") == "batch/v1"]
    for jobset in objects:
        if jobset.get("kind") == "JobSet" and jobset.get("apiVersion", "").startswith("jobset.x-k8s.io/"):
            reason = _jobset_behind(jobset, jobs)
            if reason:
                yield f"{meta.describe(jobset)}: {reason}"
    refused = {(o.get("involvedObject") or {}).get("uid", "") for o in objects if _pods_refused(o)}
    for job in objects:
        if job.get("kind") == "Job" and job.get("apiVersion") == VOLCANO_JOB:
            reason = _volcano_job_behind(job, pods_by_owner.get(job["metadata"].get("uid", ""), []),
                                         job["metadata"].get("uid", "") in refused)
            if reason:
                yield f"{meta.describe(job)}: {reason}"
        if job.get("kind") == "Job" and job.get("apiVersion") == "batch/v1":
            reason = _job_behind(job, pods_by_owner.get(job["metadata"].get("uid", ""), []), status_too,
                                 job["metadata"].get("uid", "") in refused)
            if reason:
                yield f"{meta.describe(job)}: {reason}"
    yield from _children_missing(objects)
    yield from _orphans(objects)
    yield from _statefulsets_behind(objects)
    yield from _leaderworkersets_behind(objects)


def _orphans(objects: list[dict]) -> list[str]:
    """Objects whose controller - a custom resource - is gone: kube-controller-manager's garbage
    collector is still to delete them (a PyTorchJob deleted by its TTL takes its pods and Services
    with it). Children of a built-in owner are the Job controller's and JobSet's business (JobSet
    deletes a restarted attempt's Jobs and judges their pods as it finds them)."""
    uids = {(o.get("metadata") or {}).get("uid") for o in objects}
    reasons = []
    for obj in objects:
        md = obj.get("metadata") or {}
        owner = next((r for r in md.get("ownerReferences") or [] if r.get("controller")), None)
        if owner is None or (owner.get("apiVersion"), owner.get("kind")) in builtin.BUILTIN:
            continue
        if owner.get("uid") not in uids and not md.get("deletionTimestamp"):
            reasons.append(f"{meta.describe(obj)}: its {owner.get('kind')} {owner.get('name')} is gone, "
                           f"garbage collection pending")
    return reasons


def runtimes_not_marked_in_use(trainjobs: list[dict], runtime_of) -> list[str]:
    """Trainer v2.0/v2.1 put the finalizer ``trainer.kubeflow.org/resource-in-use`` on a runtime a
    TrainJob refers to - v2.1.0 about a second after the TrainJob's event, after a suspended
    TrainJob has already gone quiet. A young TrainJob (see ``CHILD_GRACE``) whose runtime lacks it
    is not steady yet; ``runtime_of(trainjob)`` returns the runtime it names, or None."""
    reasons = []
    for trainjob in trainjobs:
        if trainjob["metadata"].get("deletionTimestamp") or not _young(trainjob):
            continue
        runtime = runtime_of(trainjob)
        if runtime is not None and IN_USE_FINALIZER not in (runtime["metadata"].get("finalizers") or []):
            reasons.append(f"{meta.describe(trainjob)}: runtime {runtime['metadata']['name']} not yet marked in use")
    return reasons


def cluster_runtimes_not_released(runtimes: list[dict], trainjobs: list[dict]) -> list[str]:
    """Trainer v2.0/v2.1 take the finalizer ``trainer.kubeflow.org/resource-in-use`` off a runtime
    being deleted once no TrainJob refers to it - v2.1.0 a second after the TrainJob's delete event
    (NotifyTrainJobUpdate: AddAfter 1 s), which may come after the case's namespaces went quiet (the
    last step of a Foreground delete). A TrainingRuntime waits in the namespace rules (being deleted,
    not in use); a ClusterTrainingRuntime is no namespace's object, so its wait is here: one of
    ``runtimes`` (the case's, as cached) being deleted with the finalizer while none of ``trainjobs``
    refers to it is not steady yet."""
    reasons = []
    for runtime in runtimes:
        md = runtime["metadata"]
        if not md.get("deletionTimestamp") or IN_USE_FINALIZER not in (md.get("finalizers") or []):
            continue
        if not any(((tj.get("spec") or {}).get("runtimeRef") or {}).get("kind") == "ClusterTrainingRuntime"
                   and tj["spec"]["runtimeRef"].get("name") == md.get("name") for tj in trainjobs):
            reasons.append(f"ClusterTrainingRuntime {md.get('name')}: being deleted, in use by no TrainJob, "
                           "still has the in-use finalizer")
    return reasons


def _young(obj: dict) -> bool:
    return _recent((obj.get("metadata") or {}).get("creationTimestamp"))


def _recent(stamp: str | None, after: float = 0.0) -> bool:
    """Whether ``stamp`` (+ ``after`` seconds) is less than ``CHILD_GRACE`` ago (no stamp: yes).
    Timestamps have whole seconds: this counts from the end of that second."""
    return stamp is None or _since(stamp) - after < CHILD_GRACE + 1


def _since(stamp: str) -> float:
    """Seconds from ``stamp`` (RFC 3339, whole seconds) to now."""
    moment = dt.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.timezone.utc)
    return (dt.datetime.now(dt.timezone.utc) - moment).total_seconds()


class _Index:
    """The objects of a case, by (kind, namespace, name); pods by controller UID; Warning Events by
    the UID of their object."""

    def __init__(self, objects: list[dict]):
        self.names = {(o.get("kind"), (o.get("metadata") or {}).get("namespace"), (o.get("metadata") or {}).get("name")): o
                      for o in objects}
        self.pods_of: dict[str, list[dict]] = {}
        self.warnings_of: dict[str, list[dict]] = {}
        for obj in objects:
            if obj.get("kind") == "Pod" and obj.get("apiVersion") == "v1":
                for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
                    if ref.get("controller"):
                        self.pods_of.setdefault(ref.get("uid", ""), []).append(obj)
            elif obj.get("kind") == "Event" and obj.get("type") == "Warning":
                self.warnings_of.setdefault((obj.get("involvedObject") or {}).get("uid", ""), []).append(obj)

    def get(self, kind: str, namespace: str | None, name: str) -> dict | None:
        return self.names.get((kind, namespace, name))


def _children_missing(objects: list[dict]) -> list[str]:
    """What each workload's operator has still to make of it (:data:`CHILDREN`)."""
    index = _Index(objects)
    reasons = []
    for obj in objects:
        rule = CHILDREN.get((obj.get("apiVersion"), obj.get("kind")))
        if rule is None or (obj.get("metadata") or {}).get("deletionTimestamp"):
            continue
        reasons += [f"{meta.describe(obj)}: {reason}" for reason in rule(obj, index)]
    return reasons


def _trainjob_children(trainjob: dict, index: _Index) -> list[str]:
    """A suspended TrainJob still gets its (suspended) JobSet."""
    md = trainjob["metadata"]
    if not _young(trainjob) or index.get("JobSet", md.get("namespace"), md.get("name")) is not None:
        return []
    return ["no JobSet yet"]


def _jobset_children(jobset: dict, index: _Index) -> list[str]:
    """A suspended JobSet's Jobs are not waited for here."""
    md, spec = jobset["metadata"], jobset.get("spec") or {}
    if not _young(jobset) or spec.get("suspend") or (jobset.get("status") or {}).get("terminalState"):
        return []
    reasons = []
    for rj in spec.get("replicatedJobs") or []:
        if rj.get("dependsOn"):
            continue
        for i in range(rj.get("replicas", 1)):
            job = f"{md.get('name')}-{rj.get('name')}-{i}"
            if index.get("Job", md.get("namespace"), job) is None:
                reasons.append(f"Job {job} not created yet")
    return reasons


def _true(status: dict, condition: str) -> bool:
    return any(c.get("type") == condition and c.get("status") == "True" for c in status.get("conditions") or [])


def _phase(pod: dict) -> str:
    return (pod.get("status") or {}).get("phase") or "Pending"


def _running(pods: list[dict]) -> int:
    return sum(1 for p in pods if _phase(p) == "Running" and not p["metadata"].get("deletionTimestamp"))


def _replica_counts(pods: list[dict]) -> dict[str, int]:
    """The training-operator's UpdateJobReplicaStatuses over ``pods``: Running → active (failed
    while being deleted: "Count deleted Pods as failures"), Succeeded, Failed; Pending not at all."""
    counts = {"active": 0, "succeeded": 0, "failed": 0}
    for pod in pods:
        phase = _phase(pod)
        if phase == "Running":
            counts["failed" if pod["metadata"].get("deletionTimestamp") else "active"] += 1
        elif phase in ("Succeeded", "Failed"):
            counts[phase.lower()] += 1
    return counts


def _last_restart(pods: list[dict]) -> str | None:
    """When the last container of ``pods`` restarted in place (its previous run's finishedAt)."""
    stamps = [((cs.get("lastState") or {}).get("terminated") or {}).get("finishedAt")
              for p in pods for cs in ((p.get("status") or {}).get("containerStatuses") or [])
              + ((p.get("status") or {}).get("initContainerStatuses") or [])]
    return max((s for s in stamps if s), default=None)


def _left_after_cleanup(pods: list[dict], policy: str | None) -> list[str]:
    """Pods a finished job's cleanPodPolicy still has to delete (All: every pod, Running: the
    Running and Pending ones; the training-operator's and the MPI Operator's rule alike)."""
    doomed = [p for p in pods if not p["metadata"].get("deletionTimestamp")
              and (policy == "All" or (policy == "Running" and _phase(p) in ("Running", "Pending")))]
    return [f"cleanPodPolicy {policy}: pod {p['metadata']['name']} not deleted yet" for p in doomed]


def _pytorchjob_children(job: dict, index: _Index) -> list[str]:
    """kubeflow/training-operator v1 (pytorchjob_controller.go, common/{job,pod,service}.go): once its
    controller has seen a PyTorchJob it carries ``Created``; unless finished or suspended it has a
    pod and a headless Service ``<job>-<type>-<i>`` for every index below each type's ``replicas``
    (defaulted: 1), and ``replicaStatuses[<type>]`` counts that type's pods as its last reconcile
    did (UpdateJobReplicaStatuses: active, succeeded, failed - a pod that just failed or finished
    has not been seen yet while they disagree); once the restartCounts reach ``backoffLimit``
    (PastBackoffLimit, an in-place restart changes no count) or ``activeDeadlineSeconds`` has passed,
    the job is to fail - waited for ``CHILD_GRACE`` from that moment; a suspended job shows
    ``Suspended``; a finished one has no pod its cleanPodPolicy removes (default None), and a
    Succeeded one no ``active`` count left (the next reconcile adds them to ``succeeded``). A job managed
    elsewhere (v1.9 managedBy) is never touched; one the controller cannot handle (an upstream
    panic) gets no status at all."""
    status, md = job.get("status") or {}, job["metadata"]
    try:
        defaulted = pytorchjob_defaults.defaulted(job)
    except (pytorchjob_defaults.UpstreamPanic, AttributeError, TypeError):
        return ["no status yet"] if _young(job) and not status else []
    run_policy = defaulted["spec"]["runPolicy"]
    if run_policy.get("managedBy") not in (None, pytorchjob_keys.KUBEFLOW_JOBS_CONTROLLER):
        return []
    if not _true(status, pytorchjob_keys.CREATED):
        return ["no Created condition yet"] if _young(job) else []
    pods = index.pods_of.get(md.get("uid", ""), [])
    if _true(status, pytorchjob_keys.SUCCEEDED) or _true(status, pytorchjob_keys.FAILED):
        reasons = _left_after_cleanup(pods, run_policy.get("cleanPodPolicy"))
        if _true(status, pytorchjob_keys.SUCCEEDED):
            # ReconcileJobs on a Succeeded job: "If any replicas are still active, set their status to 'succeeded'".
            reasons += [f"replicaStatuses.{rtype}.active not moved to succeeded yet"
                        for rtype, rs in sorted((status.get("replicaStatuses") or {}).items())
                        if isinstance(rs, dict) and rs.get("active")]
        return reasons
    if run_policy.get("suspend") is True:
        return [] if _true(status, pytorchjob_keys.SUSPENDED) else ["not Suspended yet"]
    reasons = []
    replicas = defaulted["spec"].get("pytorchReplicaSpecs")
    for replica_type, replica in sorted(replicas.items()) if isinstance(replicas, dict) else []:
        if not isinstance(replica, dict):
            continue
        label = replica_type.lower()
        for i in range(replica.get("replicas") or 0):
            name = f"{md.get('name')}-{label}-{i}"
            for kind in ("Pod", "Service"):
                if index.get(kind, md.get("namespace"), name) is None:
                    reasons.append(f"{kind} {name} not created yet")
        mine = [p for p in pods if (p["metadata"].get("labels") or {}).get(pytorchjob_keys.REPLICA_TYPE_LABEL) == label]
        written = (status.get("replicaStatuses") or {}).get(replica_type) or {}
        for counter, count in _replica_counts(mine).items():
            if written.get(counter, 0) != count:
                reasons.append(f"replicaStatuses.{replica_type}.{counter} {written.get(counter, 0)} but {count} pod(s)")
    if run_policy.get("backoffLimit") is not None and pytorchjob_controller.past_backoff_limit(defaulted, pods) \
            and _recent(_last_restart(pods)):
        reasons.append(f"backoffLimit {run_policy['backoffLimit']} reached, not Failed yet")
    deadline = run_policy.get("activeDeadlineSeconds")
    start = status.get("startTime")
    if isinstance(deadline, int) and start and _since(start) >= deadline and _recent(start, after=deadline):
        reasons.append(f"activeDeadlineSeconds {deadline} passed, not Failed yet")
    return reasons


def _mpijob_children(job: dict, index: _Index) -> list[str]:
    """kubeflow/mpi-operator v0.6.0 (syncHandler, updateMPIJobStatus): an MPIJob it syncs has the
    Service ``<job>``, the ConfigMap ``<job>-config`` and the Secret ``<job>-ssh``; unless suspended
    or finished also the worker pods ``<job>-worker-<i>`` below Worker ``replicas`` (defaulted: 0)
    and the launcher Job ``<job>-launcher`` - at once under ``launcherCreationPolicy: AtStartup``,
    otherwise once every worker pod is Ready; ``replicaStatuses.Worker`` counts the workers by phase
    (active Running, succeeded, failed), ``Launcher.active`` the launcher Job's Running pods while
    the Job runs; until the launcher Job finishes, the Service selector and the Secret's two key names
    are its own (it puts back what a user changed), and once it finishes the MPIJob is Succeeded or
    Failed. Finished (with a completionTime), its cleanPodPolicy All/Running leaves no such
    worker. An MPIJob managed elsewhere gets nothing; one its validation (ValidateMPIJob) refuses gets
    nothing either but a Warning Event (ValidationError), as does one whose children's names are taken
    by objects it does not control (the launcher Job, Service, ConfigMap, Secret or a worker pod:
    ErrResourceExists, and the sync stops there): those are steady once a Warning Event about them
    exists. A valid one is waited for however long its operator takes (v0.6.0's client, Events
    included, is throttled to 5 requests per second, ``--kube-api-qps``)."""
    status, md = job.get("status") or {}, job["metadata"]
    defaulted = mpijob_defaults.set_defaults(meta.clone(job))
    spec = defaulted["spec"]
    if spec["runPolicy"].get("managedBy") not in (None, mpijob_keys.KUBEFLOW_CONTROLLER):
        return []
    if md.get("deletionTimestamp"):
        return []  # syncHandler returns at once for an MPIJob being deleted (:588-591)
    warned = bool(index.warnings_of.get(md.get("uid", "")))
    try:
        invalid = bool(mpijob_validation.validate(defaulted))
    except (AttributeError, TypeError, ValueError, KeyError):
        invalid = True
    if invalid:
        return [] if warned else ["invalid: no Warning Event yet"]
    name, namespace = md.get("name"), md.get("namespace")
    launcher = index.get("Job", namespace, f"{name}-launcher")
    if launcher is not None and not _controlled_by(launcher, md.get("uid")):
        # getLauncherJob, the sync's first lookup, stops at a launcher Job it does not control.
        return [] if warned else [f"Job {name}-launcher is not its own: no Warning Event yet"]
    workers = [index.get("Pod", namespace, f"{name}-worker-{i}")
               for i in range(_replicas((spec.get("mpiReplicaSpecs") or {}).get(mpijob_keys.WORKER)))]
    finished = _true(status, mpijob_keys.SUCCEEDED) or _true(status, mpijob_keys.FAILED)
    for job_type, mpijob_type in (("Complete", mpijob_keys.SUCCEEDED), ("Failed", mpijob_keys.FAILED)):
        # updateMPIJobStatus: a launcher Job that completed (failed) makes it Succeeded (Failed), evicted or not.
        if launcher is not None and _true(launcher.get("status") or {}, job_type) and not _true(status, mpijob_type):
            return [f"Job {name}-launcher {job_type}, no {mpijob_type} condition yet"]
    if finished and status.get("completionTime"):
        return _left_after_cleanup([w for w in workers if w is not None], spec["runPolicy"].get("cleanPodPolicy"))
    reasons = []
    for kind, child in (("Service", name), ("ConfigMap", f"{name}-config"), ("Secret", f"{name}-ssh")):
        found = index.get(kind, namespace, child)
        if found is None:
            reasons.append(f"{kind} {child} not created yet")
        elif not _controlled_by(found, md.get("uid")):
            return [] if warned else [f"{kind} {child} is not its own: no Warning Event yet"]
    if reasons:
        return reasons
    if any(w is not None and not _controlled_by(w, md.get("uid")) for w in workers):
        # getOrCreateWorker / deleteWorkerPods stop at a worker name taken by a pod it does not control.
        return [] if warned else ["a worker pod is not its own: no Warning Event yet"]
    if not _true(status, mpijob_keys.CREATED):
        # A refused worker or launcher creation (Warning Event MPIJobFailed) stops every sync before
        # its status is written.
        return [] if warned else ["no Created condition yet"]
    # updateDiscoverHostsInConfigMap: the Running workers (of its namespace, by label) as hosts.
    labels = mpijob_resources.default_labels(defaulted, mpijob_keys.ROLE_WORKER)
    labelled = [p for p in index.names.values() if p.get("kind") == "Pod" and p["metadata"].get("namespace") == namespace
                and all((p["metadata"].get("labels") or {}).get(k) == v for k, v in labels.items())]
    running = [p for p in labelled if _phase(p) == "Running"]
    wanted = mpijob_resources.discover_hosts(defaulted, running)
    listed = (index.get("ConfigMap", namespace, f"{name}-config").get("data") or {}).get(mpijob_keys.DISCOVER_HOSTS)
    if listed != wanted:
        reasons.append(f"ConfigMap {name}-config: discover_hosts.sh does not list the {len(running)} Running worker(s) yet")
    if not (launcher is not None and _finished(launcher)):
        # getOrCreateService / getOrCreateSSHAuthSecret: a sync not done puts back a selector or key names changed.
        if (index.get("Service", namespace, name).get("spec") or {}).get("selector") != \
                mpijob_resources.service_selector(defaulted):
            reasons.append(f"Service {name}: selector not its own yet")
        if sorted(index.get("Secret", namespace, f"{name}-ssh").get("data") or {}) != \
                sorted((mpijob_keys.SSH_PRIVATE_KEY, mpijob_keys.SSH_PUBLIC_KEY)):
            reasons.append(f"Secret {name}-ssh: not exactly its two keys yet")
    suspended = spec["runPolicy"].get("suspend") is True
    if not suspended and not (launcher is not None and _finished(launcher)):
        reasons += [f"Pod {name}-worker-{i} not created yet" for i, w in enumerate(workers) if w is None]
        ready = all(w is not None and meta.condition(w, "Ready") and meta.condition(w, "Ready").get("status") == "True"
                    for w in workers)
        if launcher is None and (spec["launcherCreationPolicy"] == mpijob_keys.AT_STARTUP or ready):
            reasons.append(f"Job {name}-launcher not created yet")
    replica_statuses = status.get("replicaStatuses") or {}
    written = replica_statuses.get(mpijob_keys.WORKER) or {}
    counted = workers
    if len(labelled) > len(workers) and any(mpijob_keys.REPLICA_INDEX_LABEL not in (p["metadata"].get("labels") or {})
                                            for p in labelled):
        counted = []  # getOrCreateWorker meets a labelled pod without replica-index: no workers, no error
    for counter, phase in (("active", "Running"), ("succeeded", "Succeeded"), ("failed", "Failed")):
        count = sum(1 for w in counted if w is not None and _phase(w) == phase)
        if written.get(counter, 0) != count:
            reasons.append(f"replicaStatuses.Worker.{counter} {written.get(counter, 0)} but {count} {phase} worker(s)")
    if launcher is not None and not _finished(launcher):
        active = (replica_statuses.get(mpijob_keys.LAUNCHER) or {}).get("active", 0)
        running = _running(index.pods_of.get(launcher["metadata"].get("uid", ""), []))
        if active != running:
            reasons.append(f"replicaStatuses.Launcher.active {active} but {running} Running launcher pod(s)")
    return reasons


def _controlled_by(obj: dict, uid: str | None) -> bool:
    return any(r.get("controller") and r.get("uid") == uid for r in (obj.get("metadata") or {}).get("ownerReferences") or [])


def _replicas(replica) -> int:
    return (replica.get("replicas") or 0) if isinstance(replica, dict) else 0


#: (apiVersion, kind) -> what its operator still has to make of a parent: reasons, [] when done.
CHILDREN = {
    ("trainer.kubeflow.org/v1alpha1", "TrainJob"): _trainjob_children,
    ("jobset.x-k8s.io/v1alpha2", "JobSet"): _jobset_children,
    ("kubeflow.org/v1", "PyTorchJob"): _pytorchjob_children,
    ("kubeflow.org/v2beta1", "MPIJob"): _mpijob_children,
}


def _pods_refused(event: dict) -> bool:
    """A Warning Event saying the apiserver refused a controller's pod: Volcano's ``FailedCreate``
    ("Error creating pods: [...]"), kube-controller-manager's Job controller's ``FailedCreate``
    ("Error creating: <err>", controller_utils.go RealPodControl) or the reference operator's
    ``ReconcileError`` with the apiserver's ``Pod "<name>" is invalid: ...``. (Other Warnings about a
    Volcano Job come and go while its pods are still being made.)"""
    if event.get("kind") != "Event" or event.get("type") != "Warning":
        return False
    message = event.get("message") or ""
    return message.startswith(("Error creating pods: ", "Error creating: ")) or (
        message.startswith('Pod "') and " is invalid: " in message)


def _volcano_job_behind(job: dict, pods: list[dict], refused: bool = False) -> str | None:
    """A Volcano Job that is Pending or Running (or has no phase yet) has a pod per task replica:
    fewer means its controller has not caught up - unless a Warning Event says its pod creates were
    refused (:func:`_pods_refused`; e.g. a pytorch ``--port`` that failed to parse opens
    containerPort 0), and it stays so; the case judges that. One Restarting with no pod terminating is about to move on. Other
    phases (Aborting, ...) remove pods on purpose; deleting pods are judged by the deletion rule."""
    phase = ((job.get("status") or {}).get("state") or {}).get("phase")
    if phase == "Restarting" and not job["metadata"].get("deletionTimestamp") and \
            not any(p["metadata"].get("deletionTimestamp") for p in pods):
        # Its controller leaves Restarting (Failed at maxRetry, else Pending) on the next request once
        # no killed pod is terminating any more (state/restarting.go); nothing else waits for that.
        return "Restarting, no pod terminating any more"
    if job["metadata"].get("deletionTimestamp") or phase not in (None, "", "Pending", "Running"):
        return None
    wanted = sum(int(t.get("replicas", 0)) for t in (job.get("spec") or {}).get("tasks") or [])
    if len(pods) < wanted and not refused:
        return f"{len(pods)} of {wanted} pod(s) created"
    # Its controller counts pods by phase on every pod change: counters that disagree with the
    # pods mean it has not seen the latest ones yet (a busy operator may take longer than the
    # quiet window).
    status = job.get("status") or {}
    live = [p for p in pods if not p["metadata"].get("deletionTimestamp")]
    for counter, pod_phase in (("pending", "Pending"), ("running", "Running")):
        count = sum(1 for p in live if ((p.get("status") or {}).get("phase") or "Pending") == pod_phase)
        if status.get(counter, 0) != count:
            return f"status.{counter} {status.get(counter, 0)} but {count} {pod_phase} pod(s)"
    return None


def _jobset_behind(jobset: dict, jobs: list[dict]) -> str | None:
    """A running JobSet whose ``replicatedJobsStatus[].ready`` disagrees with its current Jobs:
    JobSet counts a Job ready when ready + succeeded pods reach min(parallelism, completions), among
    the unfinished Jobs of the current restart attempt. A busy operator can take longer than the
    quiet window to write that. A child Job whose ``restart-attempt`` label is no integer stops every
    reconcile of its JobSet (getChildJobs returns strconv.Atoi's error before acting): the status
    stays as it was, rightly."""
    status = jobset.get("status") or {}
    if jobset["metadata"].get("deletionTimestamp") or status.get("terminalState") or "replicatedJobsStatus" not in status:
        return None
    uid, attempt = jobset["metadata"].get("uid"), str(status.get("restarts", 0))
    for job in jobs:
        md = job["metadata"]
        label = (md.get("labels") or {}).get("jobset.sigs.k8s.io/restart-attempt")
        if label is not None and not _go_atoi_ok(label) and any(
                ref.get("uid") == uid for ref in md.get("ownerReferences") or []):
            return None
    for entry in status["replicatedJobsStatus"]:
        ready = 0
        for job in jobs:
            md = job["metadata"]
            labels = md.get("labels") or {}
            if (not any(ref.get("uid") == uid for ref in md.get("ownerReferences") or [])
                    or labels.get("jobset.sigs.k8s.io/replicatedjob-name") != entry.get("name")
                    or labels.get("jobset.sigs.k8s.io/restart-attempt") != attempt
                    or md.get("deletionTimestamp") or _finished(job)):
                continue
            spec, job_status = job.get("spec") or {}, job.get("status") or {}
            pods = min(spec.get("parallelism", 1), spec.get("completions", spec.get("parallelism", 1)))
            ready += job_status.get("ready", 0) + job_status.get("succeeded", 0) >= pods
        if entry.get("ready", 0) != ready:
            return f"replicatedJobsStatus {entry.get('name')} ready {entry.get('ready', 0)} but {ready} ready Job(s)"
    return None


def _go_atoi_ok(text: str) -> bool:
    """Whether Go's strconv.Atoi reads ``text``: an optional sign and decimal digits, within int64."""
    digits = text[1:] if text[:1] in "+-" else text
    return digits.isascii() and digits.isdigit() and -(2 ** 63) <= int(text) < 2 ** 63


def _finished(job: dict) -> bool:
    return any(c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
               for c in (job.get("status") or {}).get("conditions") or [])


def _runtime_in_use(obj: dict, objects: list[dict]) -> bool:
    """A TrainingRuntime being deleted that Trainer v2.0-v2.2 rightly keeps: its only finalizer is
    ``resource-in-use`` and a TrainJob of its namespace still refers to it (a ClusterTrainingRuntime
    is no case namespace's object, so it is never judged here)."""
    md = obj["metadata"]
    if obj.get("kind") != "TrainingRuntime" or (md.get("finalizers") or []) != [IN_USE_FINALIZER]:
        return False
    return any(o.get("kind") == "TrainJob" and (o.get("metadata") or {}).get("namespace") == md.get("namespace")
               and ((o.get("spec") or {}).get("runtimeRef") or {}).get("kind") == "TrainingRuntime"
               and ((o.get("spec") or {}).get("runtimeRef") or {}).get("name") == md.get("name")
               for o in objects)


def _held(obj: dict, has_blocking_dependents) -> bool:
    """Being deleted, and rightly waiting: held by a scenario's finalizer, or in foreground deletion
    while dependents that block it still exist, no Pod among them left undeleted (the garbage
    collector drops ``foregroundDeletion`` once none is left, so without one it is still changing;
    and it deletes a blocking Pod that is not being deleted yet, so with one of those too). A pod
    must also have stopped (kwok's part). What a blocking dependent itself waits for is judged on
    that dependent. ``has_blocking_dependents()`` is asked only when the answer depends on it."""
    finalizers = list(obj["metadata"].get("finalizers") or [])
    if obj.get("kind") == "Pod" and (obj.get("status") or {}).get("phase") not in _TERMINAL:
        return False
    if "foregroundDeletion" in finalizers:
        if not has_blocking_dependents():
            return False
        finalizers.remove("foregroundDeletion")
        return finalizers in ([HOLD_FINALIZER], [])
    return finalizers == [HOLD_FINALIZER] or (not finalizers and has_blocking_dependents())


def _job_behind(job: dict, pods: list[dict], status_too: bool, refused: bool = False) -> str | None:
    """A Job whose counts disagree with its pods, or with fewer pods than manageJob wants: min(parallelism,
    completions - succeeded); without completions parallelism until a pod succeeded, then no new one -
    unless a Warning Event says the apiserver refused its pods (:func:`_pods_refused`), which stays so."""
    spec, status = job.get("spec") or {}, job.get("status") or {}
    if job["metadata"].get("deletionTimestamp"):
        return None  # a Job being deleted creates no pods; "being deleted" itself is judged above
    if spec.get("managedBy", "kubernetes.io/job-controller") != "kubernetes.io/job-controller":
        return None  # kube-controller-manager leaves it to the controller it names (JobManagedBy)
    running = [p for p in pods if (p.get("status") or {}).get("phase") not in _TERMINAL
               and not p["metadata"].get("deletionTimestamp")]
    if status.get("active", 0) != len(running):
        return f"status.active {status.get('active', 0)} but {len(running)} unfinished pod(s)"
    if not _finished(job) and not spec.get("suspend") and not refused:
        parallelism = spec.get("parallelism", 1)
        completions = spec.get("completions")
        if completions is None:  # a work-queue Job: after a success it starts no pod any more
            wanted = 0 if status.get("succeeded", 0) else parallelism
        else:
            wanted = min(parallelism, completions - status.get("succeeded", 0))
        if len(running) < wanted:
            return f"{len(running)} of {wanted} pod(s) created"
    if status_too:
        ready = sum(1 for p in running if any(c.get("type") == "Ready" and c.get("status") == "True"
                                              for c in (p.get("status") or {}).get("conditions") or []))
        if status.get("ready", 0) != ready:
            return f"status.ready {status.get('ready', 0)} but {ready} ready pod(s)"
    return None


# ---------------------------------------------------------------------- StatefulSets and LeaderWorkerSets

STATEFULSET = ("apps/v1", "StatefulSet")
LWS = ("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet")
_LWS_PREFIX = "leaderworkerset.sigs.k8s.io/"
_REVISION_LABEL = "controller-revision-hash"


def _of(obj: dict, kind: tuple[str, str]) -> bool:
    return (obj.get("apiVersion"), obj.get("kind")) == kind


def _pod_ready(pod: dict) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or [])


def _running_and_ready(pod: dict) -> bool:
    return (pod.get("status") or {}).get("phase") == "Running" and _pod_ready(pod)


def _statefulsets_behind(objects: list[dict]) -> list[str]:
    pods: dict[str, dict[str, dict]] = {}  # namespace -> name -> pod: a set's pods are in its namespace
    for o in objects:
        if o.get("kind") == "Pod" and o.get("apiVersion") == "v1":
            pods.setdefault(o["metadata"].get("namespace", ""), {})[o["metadata"].get("name")] = o
    reasons = []
    for sts in objects:
        if _of(sts, STATEFULSET):
            reason = _statefulset_behind(sts, pods.get(sts["metadata"].get("namespace", ""), {}))
            if reason:
                reasons.append(f"{meta.describe(sts)}: {reason}")
    return reasons


def _statefulset_behind(sts: dict, pods: dict[str, dict]) -> str | None:
    """kube-controller-manager's StatefulSet controller (k8s v1.35 ``pkg/controller/statefulset``) has
    caught up with ``sts``: see the module docstring (4a). A set being deleted only has to be gone."""
    md, spec, status = sts["metadata"], sts.get("spec") or {}, sts.get("status") or {}
    if md.get("deletionTimestamp"):
        return None
    if status.get("observedGeneration", 0) < md.get("generation", 1):
        return f"status.observedGeneration {status.get('observedGeneration', 0)} < generation {md.get('generation', 1)}"
    uid = md.get("uid")
    own = [p for p in pods.values() if any(r.get("uid") == uid and r.get("controller")
                                           for r in p["metadata"].get("ownerReferences") or [])]
    ready = sum(1 for p in own if _running_and_ready(p))
    if status.get("replicas", 0) != len(own):
        return f"status.replicas {status.get('replicas', 0)} but {len(own)} pod(s)"
    if status.get("readyReplicas", 0) != ready:
        return f"status.readyReplicas {status.get('readyReplicas', 0)} but {ready} ready pod(s)"
    start = (spec.get("ordinals") or {}).get("start", 0)
    partition = ((spec.get("updateStrategy") or {}).get("rollingUpdate") or {}).get("partition", 0)
    rolling = (spec.get("updateStrategy") or {}).get("type", "RollingUpdate") == "RollingUpdate"
    ordinals = list(range(start, start + spec.get("replicas", 1)))
    # Which ordinals the controller gets to (processReplica via runForAll): OrderedReady one by one up to
    # the first pod not Running and Ready; Parallel in slow-start batches of 1, 2, 4, ... up to the end of
    # the first batch with a failed create - a pod of that name it does not own (an earlier set's,
    # still being deleted) is an AlreadyExists.
    # The condemned pods (beyond the range) are processed only when the replicas did not end the sync.
    if spec.get("podManagementPolicy") == "Parallel":
        reached, batch_start, size, blocked = [], 0, 1, False
        while batch_start < len(ordinals):
            batch = ordinals[batch_start:batch_start + size]
            reached += batch
            if any(pods.get(f"{md['name']}-{o}") is not None and pods[f"{md['name']}-{o}"] not in own for o in batch):
                blocked = True
                break
            batch_start, size = batch_start + size, min(2 * size, 500)
    else:
        reached, blocked = [], False
        for ordinal in ordinals:
            reached.append(ordinal)
            pod = pods.get(f"{md['name']}-{ordinal}")
            if pod is None or pod not in own or pod["metadata"].get("deletionTimestamp") or not _running_and_ready(pod):
                blocked = True
                break
    # A finished replica the sync reaches is deleted (processReplica); a condemned pod only once the
    # replicas let the sync get to the condemned ones, and with OrderedReady only when processCondemned
    # (highest ordinal first) gets to it: a terminating pod before it, or one not Running and Ready that is
    # not the lowest unhealthy condemned pod (firstUnhealthyPod), makes the controller wait.
    condemned = sorted((p for p in own if _statefulset_ordinal(p["metadata"].get("name", ""), md["name"]) not in ordinals),
                       key=lambda p: _ordinal_or(p["metadata"].get("name", ""), md["name"], -1), reverse=True)
    unhealthy = [p for p in condemned if p["metadata"].get("deletionTimestamp") or not _running_and_ready(p)]
    first_unhealthy = unhealthy[-1] if unhealthy else None
    parallel = spec.get("podManagementPolicy") == "Parallel"
    for pod in [p for p in own if p not in condemned] + ([] if blocked else condemned):
        finished = (pod.get("status") or {}).get("phase") in _TERMINAL
        deleting = pod["metadata"].get("deletionTimestamp")
        if pod in condemned and not parallel and (deleting or (not _running_and_ready(pod) and pod is not first_unhealthy)):
            break
        if pod in condemned and not deleting:
            return f"Pod {pod['metadata']['name']} is beyond the replicas and not deleted yet"
        if finished and not deleting and _statefulset_ordinal(pod["metadata"].get("name", ""), md["name"]) in reached:
            return f"Pod {pod['metadata']['name']} finished and is not deleted yet"
    for ordinal in reached:
        name = f"{md['name']}-{ordinal}"
        pod = pods.get(name)
        if pod is None:
            return f"Pod {name} not created yet"
        if pod not in own:
            continue  # a pod of that name from an earlier set blocks the ordinal until it is gone
        revision = (pod["metadata"].get("labels") or {}).get(_REVISION_LABEL)
        if rolling and ordinal >= start + partition and status.get("updateRevision") and \
                revision != status["updateRevision"] and not pod["metadata"].get("deletionTimestamp") and \
                all(_running_and_ready(p) for p in own):
            return f"Pod {name} at revision {revision}, not yet rolled to {status['updateRevision']}"
    return None


def _ordinal_or(pod_name: str, set_name: str, default: int) -> int:
    found = _statefulset_ordinal(pod_name, set_name)
    return default if found is None else found


def _statefulset_ordinal(pod_name: str, set_name: str) -> int | None:
    """The ordinal in a StatefulSet pod's name ``<set>-<ordinal>`` (getParentNameAndOrdinal)."""
    prefix, _, ordinal = pod_name.rpartition("-")
    return int(ordinal) if prefix == set_name and ordinal.isdigit() else None


def _leaderworkersets_behind(objects: list[dict]) -> list[str]:
    reasons = []
    for lws in objects:
        if _of(lws, LWS):
            reason = _lws_behind(lws, objects)
            if reason:
                reasons.append(f"{meta.describe(lws)}: {reason}")
    return reasons


def _lws_behind(lws: dict, objects: list[dict]) -> str | None:
    """LeaderWorkerSet v0.7.0's two reconcilers have caught up with its StatefulSets and leader pods
    (``pkg/controllers``: ``updateStatus``, the pod reconciler's worker StatefulSet). A group is ready
    when its leader is Running and Ready and its worker StatefulSet has every replica at one revision
    (``StatefulsetReady``), updated when both carry the leader StatefulSet's revision key."""
    md, spec, status = lws["metadata"], lws.get("spec") or {}, lws.get("status") or {}
    if md.get("deletionTimestamp"):
        # Deleted in Foreground: the garbage collector still has its dependents to delete (it requeues
        # an owner waiting for them with back-off, so quiet alone does not mean done).
        return "foreground deletion still under way" if "foregroundDeletion" in (md.get("finalizers") or []) else None
    namespace, name = md.get("namespace"), md["name"]
    sets = {o["metadata"]["name"]: o for o in objects if _of(o, STATEFULSET) and o["metadata"].get("namespace") == namespace}
    leader_sts = sets.get(name)
    if leader_sts is None:
        # Not yet - or never (a refusal the case then judges): see CHILD_GRACE.
        return "no leader StatefulSet yet" if _young(lws) else None
    if status.get("replicas", 0) != (leader_sts.get("status") or {}).get("replicas", 0):
        return (f"status.replicas {status.get('replicas', 0)} but its StatefulSet has "
                f"{(leader_sts.get('status') or {}).get('replicas', 0)}")
    template = spec.get("leaderWorkerTemplate") or {}
    size = template.get("size", 1)
    if template.get("restartPolicy") == "RecreateGroupOnPodRestart":
        reason = _group_restart_pending(name, namespace, objects)
        if reason:
            return reason
    key = (leader_sts["metadata"].get("labels") or {}).get(_LWS_PREFIX + "template-revision-hash")
    revision = next((o for o in objects if _of(o, ("apps/v1", "ControllerRevision"))
                     and o["metadata"].get("namespace") == namespace
                     and (o["metadata"].get("labels") or {}).get(_LWS_PREFIX + "name") == name
                     and (o["metadata"].get("labels") or {}).get(_LWS_PREFIX + "template-revision-hash") == key
                     and any(r.get("uid") == md.get("uid") for r in o["metadata"].get("ownerReferences") or [])), None)
    kept = ((revision or {}).get("data") or {}).get("spec") or {}
    if revision is not None and not (_covers(kept.get("leaderWorkerTemplate"), template)
                                     and _covers(kept.get("networkConfig"), spec.get("networkConfig") or {})):
        return f"its template changed and its leader StatefulSet still has revision {key}"
    replicas = spec.get("replicas", 1)
    floor = ((spec.get("rolloutStrategy") or {}).get("rollingUpdateConfiguration") or {}).get("partition", 0)
    ready_groups, updated_groups, all_ready, all_updated = 0, 0, True, True
    group_state: dict[int, tuple[bool, bool]] = {}
    seen_groups = set()
    refused = {o.get("message") for o in objects if o.get("kind") == "Event" and o.get("type") == "Warning"
               and o.get("reason") == "FailedCreate" and (o.get("involvedObject") or {}).get("uid") == md.get("uid")}
    for pod in objects:
        labels = (pod.get("metadata") or {}).get("labels") or {}
        if pod.get("kind") != "Pod" or pod["metadata"].get("namespace") != namespace or \
                labels.get(_LWS_PREFIX + "name") != name or labels.get(_LWS_PREFIX + "worker-index") != "0":
            continue
        workers = sets.get(pod["metadata"]["name"])
        if size > 1 and workers is None:
            # A leader carrying the workers' leader-name annotation gets none (pod_controller.go's guard),
            # nor one whose worker StatefulSet the apiserver refused (the Warning FailedCreate says so).
            if not pod["metadata"].get("deletionTimestamp") and \
                    (spec.get("startupPolicy") != "LeaderReady" or _pod_ready(pod)) and \
                    not (pod["metadata"].get("annotations") or {}).get(_LWS_PREFIX + "leader-name") and \
                    f"Failed to create worker statefulset for leader pod {pod['metadata']['name']}" not in refused:
                return f"no worker StatefulSet for leader pod {pod['metadata']['name']} yet"
            continue
        group = labels.get(_LWS_PREFIX + "group-index", "")
        workers_status = (workers or {}).get("status") or {}
        ready = _running_and_ready(pod) and (size == 1 or (
            workers["spec"].get("replicas", 1) == workers_status.get("replicas", 0)
            and workers_status.get("currentRevision", "") == workers_status.get("updateRevision", "")))
        updated = labels.get(_LWS_PREFIX + "template-revision-hash") == key and (
            size == 1 or (workers["metadata"].get("labels") or {}).get(_LWS_PREFIX + "template-revision-hash") == key)
        ready_groups += ready
        updated_groups += updated
        if group.isdigit():
            group_state[int(group)] = (bool(ready), bool(updated))
        if group.isdigit() and int(group) < replicas:
            seen_groups.add(int(group))
            all_ready = all_ready and ready
            if int(group) >= floor:
                all_updated = all_updated and updated
    if status.get("readyReplicas", 0) != ready_groups:
        return f"status.readyReplicas {status.get('readyReplicas', 0)} but {ready_groups} ready group(s)"
    if status.get("updatedReplicas", 0) != updated_groups:
        return f"status.updatedReplicas {status.get('updatedReplicas', 0)} but {updated_groups} updated group(s)"
    partition = ((leader_sts["spec"].get("updateStrategy") or {}).get("rollingUpdate") or {}).get("partition", 0)
    sts_replicas = leader_sts["spec"].get("replicas", 1)
    config = (spec.get("rolloutStrategy") or {}).get("rollingUpdateConfiguration") or {}
    if (partition > floor or sts_replicas != replicas) and _rolling_step_left(
            group_state, partition, sts_replicas, replicas, floor, config.get("maxUnavailable", 1)):
        # rollingUpdateParameters moves the partition down (and takes surge groups away) as the groups
        # become ready and updated: it has a step left to take.
        return (f"rolling update not finished: leader StatefulSet partition {partition} (floor {floor}), "
                f"replicas {sts_replicas} of {replicas}, the groups above ready and updated")
    available = any(c.get("type") == "Available" and c.get("status") == "True" for c in status.get("conditions") or [])
    wanted = all_ready and all_updated and len(seen_groups) == replicas
    if available != wanted:
        return f"condition Available {available} but {ready_groups} of {replicas} group(s) ready"
    return None


def _rolling_step_left(group_state: dict[int, tuple[bool, bool]], partition: int, sts_replicas: int,
                       replicas: int, floor: int, max_unavailable) -> bool:
    """Whether LWS v0.7.0 would move the leader StatefulSet's partition now. Without surge groups and
    with an integer maxUnavailable, as ``rollingUpdatePartition`` does: ``rollingStep`` groups below the
    ready-and-updated ones at the top, raised by the unready groups under that, lowered again over
    unready or updated groups (a group without leader or worker StatefulSet is neither). Otherwise
    (surge, percentages) the coarser test: every group above the partition ready and updated."""
    if sts_replicas != replicas or not isinstance(max_unavailable, int) or isinstance(max_unavailable, bool):
        return all(group_state.get(i) == (True, True) for i in range(min(partition, sts_replicas), sts_replicas))
    states = [group_state.get(i, (False, False)) for i in range(sts_replicas)]
    continuous = 0
    for state in reversed(states):
        if state != (True, True):
            break
        continuous += 1
    step_partition = max(sts_replicas - continuous - max_unavailable, 0)
    moved = step_partition + sum(1 for i in range(step_partition) if not states[i][0])
    for i in range(min(moved, sts_replicas - 1), step_partition - 1, -1):
        if states[i][0] and not states[i][1]:
            break
        moved = i
    return max(min(moved, partition), floor) < partition


def _group_restart_pending(name: str, namespace: str, objects: list[dict]) -> str | None:
    """RecreateGroupOnPodRestart (LWS v0.7.0 ``handleRestartPolicy``): a pod of the set whose container
    restarted (Running or Pending, a restartCount > 0) or that is being deleted has its leader - itself,
    or the pod ``<parent name>`` of the same template revision - deleted. A leader of that revision that
    is not being deleted means the LWS has not acted yet."""
    pods = {o["metadata"]["name"]: o for o in objects if o.get("kind") == "Pod" and o.get("apiVersion") == "v1"
            and o["metadata"].get("namespace") == namespace
            and (o["metadata"].get("labels") or {}).get(_LWS_PREFIX + "name") == name}
    for pod in pods.values():
        status = pod.get("status") or {}
        restarted = status.get("phase") in ("Running", "Pending") and any(
            (c.get("restartCount") or 0) > 0
            for c in (status.get("initContainerStatuses") or []) + (status.get("containerStatuses") or []))
        if not restarted and not pod["metadata"].get("deletionTimestamp"):
            continue
        labels = pod["metadata"].get("labels") or {}
        if labels.get(_LWS_PREFIX + "worker-index") == "0":
            leader = pod
        else:
            parent = re.fullmatch(r"(.*)-([0-9]+)", pod["metadata"]["name"])
            leader = pods.get(parent.group(1)) if parent else None
            if leader is None or (leader["metadata"].get("labels") or {}).get(_LWS_PREFIX + "template-revision-hash") \
                    != labels.get(_LWS_PREFIX + "template-revision-hash"):
                continue
        if not leader["metadata"].get("deletionTimestamp"):
            why = "restarted" if restarted else "is being deleted"
            return f"Pod {pod['metadata']['name']} {why}, its leader {leader['metadata']['name']} not deleted yet"
    return None


def _covers(kept, wanted) -> bool:
    """``kept`` (a revision's copy) holds every value of ``wanted`` (the LeaderWorkerSet's spec): maps
    may have more keys (Go's zero values, ``$patch``), lists the same length, scalars equal."""
    if isinstance(wanted, dict):
        return isinstance(kept, dict) and all(_covers(kept.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, list):
        return isinstance(kept, list) and len(kept) == len(wanted) and all(map(_covers, kept, wanted))
    return kept == wanted
