"""Volcano Job controller: Job → pods (through the plugins), status, and lifecycle policies.

Upstream's controller is event-driven: informer handlers turn pod and Job changes into requests
(``PodFailed`` when a pod turns Failed, ``PodEvicted`` when a pod it did not delete disappears,
``TaskCompleted`` when the last pod of a task succeeds, ``OutOfSync`` for the rest), and each request
runs one action of the state machine (:mod:`reconciler.volcano.state`) chosen by the lifecycle
policies (:mod:`reconciler.volcano.policies`).

The render world is level-triggered (controllers are called until nothing changes), so this
controller remembers, per Job, what it saw last time (the Job's spec and phase, each pod's
resourceVersion and phase) and derives the same events from the difference. Driving a restart is
therefore: set a pod's ``status.phase`` to ``Failed`` (exit code in
``status.containerStatuses[0].state.terminated.exitCode``) or delete the pod, then ``settle()``.

Requests whose policy gives a real action run one by one, in pod-name order; the plain syncs they
and every other change ask for are coalesced into one sync at the end - unless an action moved the
Job's phase: then the next reconcile handles that action's own pod events before its sync, as
upstream's queue does. Upstream counts one
``status.version`` bump per request in terminal phases, so after a Job has finished its version is
not comparable with upstream's; before that it is.

Not modelled: PodGroups and the scheduler (a PodGroup is taken to be enqueued at once, except right
after a kill, when upstream deletes and recreates it: pods are then recreated only from Pending),
volumes/PVCs, ``dependsOn``, delayed actions (see policies).

Commands (bus.volcano.sh/v1alpha1, job_controller.go / processNextCommand, v1.10.0-v1.12): the controller
handles only a Command's creation, and only one whose ``target`` has apiVersion batch.volcano.sh/v1alpha1 and
kind Job. It deletes the Command (so it runs at most once), records a Normal ``CommandIssued`` Event on the
target Job when that Job exists, and queues a ``CommandIssued`` request carrying the Command's action for
the Job named by ``target.name`` in the Command's namespace; applyPolicies returns that action as it is.
"""

from __future__ import annotations

import copy
import logging
from dataclasses import dataclass, field

from .. import meta
from ..cluster import NotFound
from ..errors import Rejection
from . import keys, plugins, state
from .plugins import PluginError
from .pods import create_job_pod, pod_name
from .policies import Request, apply_policies
from .state import SOFT, Target

log = logging.getLogger(__name__)

_COUNTERS = ("pending", "running", "succeeded", "failed", "terminating", "unknown")


@dataclass(frozen=True)
class PodView:
    """What the controller remembers of a pod between two reconciles."""

    uid: str
    name: str
    rv: str
    phase: str
    task: str
    version: int | None
    restarts: int
    exit_code: int
    deleting: bool = False


@dataclass
class Seen:
    spec: dict
    phase: str
    pods: dict[str, PodView] = field(default_factory=dict)


def pod_phase(pod: dict) -> str:
    # The apiserver stores a new pod with phase Pending; the fake kubelet fills in the rest.
    return (pod.get("status") or {}).get("phase") or "Pending"


def _view(pod: dict) -> PodView:
    md, status = pod["metadata"], pod.get("status") or {}
    annotations = md.get("annotations") or {}
    try:
        version = int(annotations[keys.JOB_VERSION])
    except (KeyError, ValueError):
        version = None  # upstream ignores events of such pods
    statuses = list(status.get("initContainerStatuses") or []) + list(status.get("containerStatuses") or [])
    first = (status.get("containerStatuses") or [{}])[0]
    terminated = (first.get("state") or {}).get("terminated") or {}
    return PodView(uid=md["uid"], name=md["name"], rv=md.get("resourceVersion", ""), phase=pod_phase(pod),
                   task=annotations.get(keys.TASK_SPEC, ""), version=version,
                   restarts=sum(s.get("restartCount", 0) for s in statuses), exit_code=terminated.get("exitCode", 0),
                   deleting=bool(md.get("deletionTimestamp")))


class JobController:
    watches = ((keys.GROUP, "Job"), (keys.BUS_GROUP, keys.COMMAND))
    #: Built-in kinds it reads (and creates) besides what it watches: see ``Controller.reads``.
    reads = (("", "Pod"), ("", "Service"), ("", "ConfigMap"), ("networking.k8s.io", "NetworkPolicy"))

    def __init__(self) -> None:
        self._seen: dict[str, Seen] = {}
        #: Requests of handled Commands, per (namespace, job name), in arrival order.
        self._commands: dict[tuple[str, str], list[Request]] = {}

    @staticmethod
    def _job_command(obj: dict) -> bool:
        """The Command informer's filter: a target that is a batch.volcano.sh/v1alpha1 Job."""
        target = obj.get("target") or {}
        return target.get("apiVersion") == keys.API_VERSION and target.get("kind") == "Job"

    def related(self, obj: dict) -> list[tuple[str, str, str, str]]:
        """A Command wakes the Job it targets (its request is queued on that Job's worker)."""
        if obj.get("kind") != keys.COMMAND or not self._job_command(obj):
            return []
        return [(keys.GROUP, "Job", obj["metadata"].get("namespace", ""), obj["target"]["name"])]

    def reconcile(self, cluster, obj: dict) -> None:
        if obj.get("kind") == keys.COMMAND:
            self._command(cluster, obj)
        else:
            self._job(cluster, obj)

    def _command(self, cluster, cmd: dict) -> None:
        """processNextCommand: delete the Command, then queue its action as a CommandIssued request."""
        if not self._job_command(cmd):
            return
        namespace, name = cmd["metadata"].get("namespace", ""), cmd["target"]["name"]
        try:
            cluster.delete(cmd)
        except NotFound:
            return  # already gone: upstream drops it
        job = cluster.find(keys.GROUP, "Job", namespace, name)
        if job is None:
            return  # recordJobEvent finds no Job, and the worker drops a request for a Job not in its cache
        cluster.record_event(job, "Normal", keys.COMMAND_ISSUED,
                             f"Start to execute command {cmd.get('action', '')}, and clean it up to make sure "
                             "executed not more than once.")
        self._commands.setdefault((namespace, name), []).append(
            Request(keys.COMMAND_ISSUED, action=cmd.get("action", "")))

    def _job(self, cluster, job: dict) -> None:
        pods = {p["metadata"]["uid"]: _view(p) for p in self._pods(cluster, job)}
        phase = _phase(job)
        previous = self._seen.get(job["metadata"]["uid"])
        self._seen[job["metadata"]["uid"]] = Seen(copy.deepcopy(job["spec"]), phase, dict(pods))
        if previous is None:
            requests = [Request(keys.OUT_OF_SYNC)]  # addJob
        else:
            requests = self._pod_requests(job, previous.pods, pods)
            if job["spec"] != previous.spec or phase != previous.phase:
                requests.append(Request(keys.OUT_OF_SYNC))  # updateJob only reacts to spec or phase
        requests += self._commands.pop((job["metadata"].get("namespace", ""), job["metadata"]["name"]), [])
        if not requests:
            return
        worker = JobWorker(cluster, self, job["metadata"])
        for req in requests:
            current = worker.job()
            if current is None:
                return
            action = apply_policies(current, req)
            if action != keys.SYNC_JOB:
                target = Target(req.task, req.pod if action == keys.RESTART_POD else "") if req.task else None
                state.execute(worker, current, action, target)
        current = worker.job()
        # After an action that moved the phase (a kill), upstream's queue holds the pod events of that kill before
        # the OutOfSync of the Job's status update (killJob/killPods deletes first, then writes the status), so
        # those are handled first - in the new phase: the next reconcile does so (pod requests, then OutOfSync).
        if current is not None and _phase(current) == phase:
            state.execute(worker, current, keys.SYNC_JOB)

    @staticmethod
    def _pods(cluster, job: dict) -> list[dict]:
        uid = job["metadata"]["uid"]
        return [p for p in cluster.list("", "Pod", job["metadata"].get("namespace"), owner=job)
                if any(r.get("uid") == uid and r.get("controller") for r in p["metadata"].get("ownerReferences", []))]

    # ------------------------------------------------------------------ events from differences
    def _pod_requests(self, job: dict, before: dict[str, PodView], now: dict[str, PodView]) -> list[Request]:
        """addPod / updatePod / deletePod, in pod-name order, against a cache updated one pod at a time."""
        cache = dict(before)
        changes = sorted(set(before) | set(now), key=lambda uid: (now.get(uid) or before[uid]).name)
        requests = []
        for uid in changes:
            old, new = before.get(uid), now.get(uid)
            if new is None:
                del cache[uid]
                # deletePod (job_controller_handler.go, v1.10.0-v1.12.2) sends PodEvicted for every deleted pod,
                # the controller's own kills included; applyPolicies turns it into SyncJob only when the pod's
                # job version is older than the job's.
                requests.append(_request(keys.POD_EVICTED, old))
                continue
            if old is not None and old.rv == new.rv:
                continue
            cache[uid] = new
            if new.version is None:
                continue
            if old is None:
                requests.append(_request(keys.POD_PENDING, new))
                continue
            if new.deleting:
                # updatePod hands a pod that is being deleted to deletePod (job_controller_handler.go, v1.10.0-v1.12):
                # PodEvicted, whatever its phase now says, and no exit code.
                event = keys.POD_EVICTED
            else:
                event = self._update_event(job, old, new, cache)
            requests.append(_request(event, new))
        return [r for r in requests if r is not None]

    @staticmethod
    def _update_event(job: dict, old: PodView, new: PodView, cache: dict[str, PodView]) -> str:
        event = keys.OUT_OF_SYNC
        if new.phase == "Failed":
            if old.phase != "Failed":
                event = keys.POD_FAILED
        elif new.phase == "Succeeded":
            if old.phase != "Succeeded" and _task_completed(job, new.task, cache):
                event = keys.TASK_COMPLETED
        elif new.phase in ("Running", "Pending"):
            if _task_failed(job, new.task, cache):
                event = keys.TASK_FAILED
            if old.phase != new.phase:
                event = keys.POD_RUNNING if new.phase == "Running" else keys.POD_PENDING
        return event


def _request(event: str, view: PodView | None) -> Request | None:
    if view is None or view.version is None:
        return None
    return Request(event, task=view.task, pod=view.name, job_version=view.version,
                   exit_code=view.exit_code if event == keys.POD_FAILED else 0)


def _task_spec(job: dict, name: str) -> dict | None:
    return next((t for t in job["spec"].get("tasks") or [] if t.get("name") == name), None)


def _task_completed(job: dict, task_name: str, cache: dict[str, PodView]) -> bool:
    task = _task_spec(job, task_name)
    replicas = (task or {}).get("replicas", 0)
    done = sum(1 for v in cache.values() if v.task == task_name and v.phase == "Succeeded")
    return replicas > 0 and done >= replicas


def _task_failed(job: dict, task_name: str, cache: dict[str, PodView]) -> bool:
    """Container restarts of the task's live pods reached the task's maxRetry (0 → 3, -1 → never)."""
    task = _task_spec(job, task_name)
    if task is None or not task.get("replicas") or task.get("maxRetry") == -1:
        return False
    limit = task.get("maxRetry") or 3
    restarts = sum(v.restarts for v in cache.values() if v.task == task_name and v.phase in ("Running", "Pending"))
    return restarts >= limit


def _phase(job: dict) -> str:
    return ((job.get("status") or {}).get("state") or {}).get("phase", "")


# ---------------------------------------------------------------------- the three primitives

class JobWorker:
    """syncJob, killJob and killTarget of one Job (job_controller_actions.go)."""

    def __init__(self, cluster, controller: JobController, md: dict):
        self.cluster, self.controller = cluster, controller
        self.ref = (keys.GROUP, "Job", md.get("namespace", ""), md["name"])

    @property
    def profile(self):
        return self.cluster.profile

    def job(self) -> dict | None:
        found = self.cluster.find(*self.ref)
        return copy.deepcopy(found) if found is not None else None

    def _plugins(self, job: dict) -> list[plugins.Plugin] | None:
        try:
            return plugins.build(job, self.cluster.profile)
        except PluginError as exc:
            self.cluster.record_error(job, str(exc))
            return None

    def _report(self, job: dict, built: list[plugins.Plugin]) -> None:
        # Upstream only logs these (klog.Errorf: "plugin %s flagset parse failed", "job %v doesn't have
        # task %v" - pytorch.go L57/L69 in v1.10.0 and v1.12.4 alike): no Event, nothing a client sees.
        for plugin in built:
            for notice in plugin.notices:
                log.info("%s: %s", meta.describe(job), notice)

    def _pods_by_task(self, job: dict) -> dict[str, dict[str, dict]]:
        by_task: dict[str, dict[str, dict]] = {}
        for pod in JobController._pods(self.cluster, job):
            task = (pod["metadata"].get("annotations") or {}).get(keys.TASK_SPEC, "")
            by_task.setdefault(task, {})[pod["metadata"]["name"]] = pod
        return by_task

    # ------------------------------------------------------------------ sync
    def sync_job(self, update: state.UpdateFn | None) -> None:
        job = self.job()
        built = self._plugins(job)
        if built is None:
            return
        status = job.setdefault("status", {})
        if _phase(job) in ("", keys.PENDING):  # not initiated: initiateJob
            if not _phase(job):
                status["state"] = {"phase": keys.PENDING, "lastTransitionTime": self.cluster.now()}
                status["minAvailable"] = job["spec"].get("minAvailable", 0)
                status["conditions"] = _append_condition(status.get("conditions"), keys.PENDING, self.cluster.now())
                self._write_status(job)
            for plugin in built:
                plugin.on_job_add(job, self.cluster)
        else:
            for plugin in built:
                plugin.on_job_update(job, self.cluster)
        self._report(job, built)
        before = _clean(copy.deepcopy(self.cluster.find(*self.ref).get("status") or {}))
        # The PodGroup is recreated after every kill, so pods only come back from Pending on.
        create = _phase(job) in (keys.PENDING, keys.RUNNING)
        counts = dict.fromkeys(_COUNTERS, 0)
        task_counts: dict[str, dict] = {}
        to_create, to_delete = [], []
        pods = self._pods_by_task(job)
        for task in job["spec"].get("tasks") or []:
            existing = dict(pods.get(task["name"], {}))
            for index in range(task.get("replicas", 0)):
                name = pod_name(job, task["name"], index)
                pod = existing.pop(name, None)
                if pod is None:
                    if create:
                        to_create.append(create_job_pod(job, task, index, self.profile))
                    continue
                if pod["metadata"].get("deletionTimestamp"):
                    # v1.10.0-v1.12.2: updatePod handed the pod to deletePod, which took it out of the job cache,
                    # so syncJob finds its name free and creates it again; AlreadyExists is no error there, and
                    # the empty Pod client-go returns with it is counted in phase "": unknown, under no task
                    # (job_controller_actions.go syncJob; v1.12.3's 7978f8bc8 keeps such pods cached instead).
                    counts["unknown" if create else "terminating"] += 1
                    continue
                _count(pod, counts, task_counts)
            to_delete += [p for p in existing.values() if not p["metadata"].get("deletionTimestamp")]  # beyond replicas
        for pod in to_create:
            try:
                for plugin in built:
                    plugin.on_pod_create(pod, job)
            except PluginError as exc:
                self._report(job, built)
                self.cluster.record_error(job, str(exc))
                return  # upstream returns before creating any pod
        self._report(job, built)
        refused = []
        for pod in to_create:
            try:
                created = self.cluster.create(pod)
            except Rejection as exc:
                refused.append(str(exc))
                continue
            _count(created, counts, task_counts)
        if refused:
            # Upstream creates the pods side by side, keeps going past a refused one, then records one
            # Warning FailedCreate "Error creating pods: [...]" and returns before the status update
            # (syncJob, job_controller_actions.go L331-427 in v1.10.0). Its order is the goroutines';
            # here the refusals are reported one each, by pod name (the harness reads the Event so).
            for message in sorted(refused):
                self.cluster.record_error(job, message)
            return
        for pod in to_delete:
            self._delete(pod)
            counts["terminating"] += 1
        new = {"state": dict(status.get("state") or {}), **counts, "version": status.get("version", 0),
               "minAvailable": job["spec"].get("minAvailable", 0), "taskStatusCount": task_counts,
               "controlledResources": status.get("controlledResources") or {},
               "conditions": list(status.get("conditions") or []), "retryCount": status.get("retryCount", 0)}
        if update is not None:
            update(new)
        if _clean(new) == before:
            return
        new["state"]["lastTransitionTime"] = self.cluster.now()
        new["conditions"] = _append_condition(new["conditions"], new["state"].get("phase"), self.cluster.now())
        job["status"] = new
        self._write_status(job)

    # ------------------------------------------------------------------ kill
    def kill_job(self, retain: frozenset[str], update: state.UpdateFn | None) -> None:
        self._kill(retain, None, update)

    def kill_target(self, target: Target, update: state.UpdateFn | None) -> None:
        self._kill(state.NONE, target, update)

    def _kill(self, retain: frozenset[str], target: Target | None, update: state.UpdateFn | None) -> None:
        job = self.job()
        status = job.setdefault("status", {})
        # v1.10.0-v1.12.2: a pod whose deletionTimestamp the controller has seen left its job cache
        # (updatePod -> deletePod), so killJob neither deletes nor counts it: its "is terminating" branch
        # only sees pods this very request deleted before their update arrived.
        pods = {task: {name: p for name, p in by_name.items() if not p["metadata"].get("deletionTimestamp")}
                for task, by_name in self._pods_by_task(job).items()}
        if target is not None:
            in_task = pods.get(target.task, {})
            if target.pod:
                doomed = [in_task[target.pod]] if target.pod in in_task else []
            else:
                doomed = list(in_task.values())
        else:
            status["version"] = status.get("version", 0) + 1  # bumped only when the whole job is killed
            last_retry = status.get("retryCount", 0) >= job["spec"].get("maxRetry", 0) - 1
            keep = SOFT if last_retry else retain
            doomed = [p for task in pods.values() for p in task.values() if pod_phase(p) not in keep]
        for pod in doomed:
            self._delete(pod)
        # Upstream only counts the pods it failed to delete, so every other counter restarts at 0.
        status.update(dict.fromkeys(_COUNTERS, 0))
        status.update({"terminating": len(doomed), "taskStatusCount": {}})
        if update is not None and update(status):
            status.setdefault("state", {})["lastTransitionTime"] = self.cluster.now()
            status["conditions"] = _append_condition(status.get("conditions"), status["state"].get("phase"),
                                                     self.cluster.now())
        built = self._plugins(job)
        if built is None:
            return
        for plugin in built:
            plugin.on_job_delete(job, self.cluster)
        self._report(job, built)
        self._write_status(job)

    def _delete(self, pod: dict) -> None:
        """Delete the pod (unless its deletion is already under way); deleteJobPod marks nothing first."""
        if pod["metadata"].get("deletionTimestamp"):
            return
        self.cluster.delete(pod)

    def _write_status(self, job: dict) -> None:
        stored = self.cluster.find(*self.ref)
        cleaned = _clean(job.get("status") or {})
        if stored is None or _clean(stored.get("status") or {}) == cleaned:
            return
        stored = copy.deepcopy(stored)
        stored["status"] = cleaned
        self.cluster.update(stored)


def _count(pod: dict, counts: dict, task_counts: dict) -> None:
    """classifyAndAddUpPodBaseOnPhase + calcPodStatus."""
    phase = pod_phase(pod)
    key = phase.lower() if phase.lower() in counts else "unknown"
    counts[key] += 1
    task = (pod["metadata"].get("annotations") or {}).get(keys.TASK_SPEC)
    if task is not None:
        phases = task_counts.setdefault(task, {"phase": {}})["phase"]
        shown = phase if phase in ("Pending", "Running", "Succeeded", "Failed") else "Unknown"
        phases[shown] = phases.get(shown, 0) + 1


def _append_condition(conditions: list | None, phase: str | None, now: str) -> list:
    """Every status write appends a condition of the Job's phase (job_controller_actions.go, plain ``append`` in
    v1.10.0-v1.15; only #5422, v1.16, drops older ones of the same phase). How many writes one phase gets
    depends on how upstream's work queue batches pod events, so a run of one phase is kept as its last entry -
    the form the live harness reads upstream's list in (conformance/live/keyorder.py)."""
    kept = list(conditions or [])
    if kept and kept[-1].get("status") == phase:
        kept.pop()
    return kept + [{"status": phase, "lastTransitionTime": now}]


def _clean(status: dict) -> dict:
    """JobStatus as Go marshals it: zero counters, empty maps and empty strings are omitted."""
    cleaned = {}
    for key, value in status.items():
        if value in (0, "", None, {}, []) and not isinstance(value, bool):
            continue
        if key == "state":
            value = {k: v for k, v in value.items() if v not in ("", None)}
        cleaned[key] = value
    return cleaned
