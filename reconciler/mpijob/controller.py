"""The MPI Operator v0.6.0's MPIJob controller (``syncHandler``, pkg/controller/mpi_job_controller.go).

One sync, in upstream's order (shared/reference/kubeflow-v1-mpi-operator.md B.2-B.4):

1. default a copy (:mod:`.defaults`); an MPIJob managed by another controller (``runPolicy.managedBy``
   other than ``kubeflow.org/mpi-operator`` - checked *before* validation, so no value is ever reported)
   or being deleted is left alone;
2. validate (:mod:`.validation`): on errors a Warning Event ``ValidationError``, nothing created, no
   condition, no requeue;
3. ``Created`` on the first sync; once finished (Succeeded/Failed) *with* a completionTime: delete the
   workers under cleanPodPolicy All/Running (Running keeps pods neither Running nor Pending), reset the
   Worker status, and stop;
4. unless the launcher Job has finished: Service, ConfigMap, Secret (each created, or updated when its
   selector / data / set of keys differs), the worker pods (not while suspended; missing ones created
   under their names - a Failed worker is never replaced - and those with an index >= replicas
   deleted), then the launcher Job: at once (``AtStartup``) or once every worker pod is Ready (any other
   launcherCreationPolicy);
5. the launcher Job's ``suspend`` follows the MPIJob's; a suspended MPIJob's workers are deleted;
6. status: launcher counts and Succeeded/Failed from the launcher Job's conditions (a launcher *pod*
   failure alone never fails the MPIJob), worker counts, ``MPIJobEvicted`` for workers with
   ``status.reason: Evicted``, Running once a launcher pod and every worker pod run, Suspended/Resumed.

An object that exists under an operator-made name but is not controlled by the MPIJob stops the sync
with a Warning Event ``ErrResourceExists`` (the Kind it names is empty: listers' objects carry no
TypeMeta). A refused worker/launcher creation gives the Warning Event ``MPIJobFailed`` ``worker pod
created failed: <err>`` / ``launcher pod created failed: <err>``. Upstream then returns the error and
retries; here the sync stops and the next change runs it again. These Warning Events are what this
module reports as reconcile errors; Warning Events that restate a condition (the launcher's failure,
``MPIJobEvicted``) and Normal ones are not.

Pod templates Go could not decode (a container that is not an object, env that is not a list, ...)
never reach the sync: upstream's CRD describes them as core/v1 PodTemplateSpec in full, so the
apiserver refuses such an MPIJob (422). Not modelled: gang scheduling (PodGroups), ttlSecondsAfterFinished and
activeDeadlineSeconds (passed to the Job as given; the Job stand-in does not act on them).
"""

from __future__ import annotations

from .. import meta
from ..cluster import AlreadyExists
from ..errors import Rejection
from . import defaults, keys, resources, status as conditions, validation
from .validation import replica_spec


class _Stop(Exception):
    """The sync returns an error here (upstream requeues it)."""


class MPIJobController:
    # Pods too: a launcher pod belongs to the launcher Job, and upstream's handleObject maps it to the
    # MPIJob that owns that Job (worker pods reach it through their own ownerReference).
    watches = ((keys.GROUP, keys.KIND), ("", "Pod"))
    #: Built-in kinds it reads (and creates) besides what it watches: see ``Controller.reads``.
    reads = (("batch", "Job"), ("", "Service"), ("", "ConfigMap"), ("", "Secret"))

    @staticmethod
    def related(obj: dict) -> list[tuple[str, str, str, str]]:
        labels = (obj.get("metadata") or {}).get("labels") or {}
        if obj.get("kind") != "Pod" or labels.get(keys.OPERATOR_NAME_LABEL) != keys.OPERATOR_NAME \
                or labels.get(keys.JOB_ROLE_LABEL) != keys.ROLE_LAUNCHER or not labels.get(keys.JOB_NAME_LABEL):
            return []
        return [(keys.GROUP, keys.KIND, obj["metadata"].get("namespace", ""), labels[keys.JOB_NAME_LABEL])]

    def reconcile(self, cluster, obj: dict) -> None:
        if obj.get("kind") != keys.KIND or obj.get("apiVersion") != keys.API_VERSION:
            return
        try:
            self._sync(cluster, obj)
        except _Stop:
            pass

    # ------------------------------------------------------------------ syncHandler
    def _sync(self, cluster, stored: dict) -> None:
        job = defaults.set_defaults(meta.clone(stored))
        run_policy = job["spec"]["runPolicy"]
        if run_policy.get("managedBy") not in (None, keys.KUBEFLOW_CONTROLLER):
            return
        if job["metadata"].get("deletionTimestamp"):
            return
        errors = validation.validate(job)
        if errors:
            cluster.record_error(stored, validation.event_message(errors))
            return
        status = meta.clone(stored.get("status") or {})
        now = cluster.now()
        if not status.get("conditions"):
            conditions.set_condition(status, keys.CREATED, "True", keys.REASON_CREATED,
                                     f"MPIJob {_ref(job)} is created.", now)
        if conditions.is_finished(status) and status.get("completionTime"):
            if run_policy["cleanPodPolicy"] in (keys.CLEAN_ALL, keys.CLEAN_RUNNING):
                self._delete_workers(cluster, job, stored)
                status.setdefault("replicaStatuses", {})[keys.WORKER] = {}
                _write_status(cluster, stored, status)
            return
        suspended = resources.suspended(job)
        if not status.get("startTime") and not suspended:
            status["startTime"] = now
        launcher = self._launcher(cluster, job, stored)
        workers: list[dict] = []
        if launcher is None or not _job_finished(launcher):
            self._service(cluster, job, stored)
            self._config_map(cluster, job, stored)
            self._secret(cluster, job, stored)
            if not suspended:
                workers = self._workers(cluster, job, stored)
            if launcher is None and (job["spec"]["launcherCreationPolicy"] == keys.AT_STARTUP
                                     or sum(1 for p in workers if _ready(p)) == len(workers)):
                launcher = self._create_launcher(cluster, job, stored)
        if launcher is not None and suspended != ((launcher.get("spec") or {}).get("suspend") is True):
            launcher = meta.clone(launcher)
            launcher["spec"]["suspend"] = suspended
            launcher = cluster.update(launcher)
        if suspended:
            self._delete_workers(cluster, job, stored)
        self._update_status(cluster, job, stored, status, launcher, workers)

    # ------------------------------------------------------------------ children
    @staticmethod
    def _controlled(cluster, stored: dict, obj: dict) -> dict:
        """``metav1.IsControlledBy`` or the ErrResourceExists Warning Event (and a stopped sync)."""
        if _controlled_by(obj, stored):
            return obj
        # Objects from a lister carry no TypeMeta: upstream's %q of obj.Kind prints "".
        cluster.record_error(stored, keys.RESOURCE_EXISTS_MESSAGE.format(name=obj["metadata"]["name"], kind=""))
        raise _Stop

    def _launcher(self, cluster, job: dict, stored: dict) -> dict | None:
        found = cluster.find("batch", "Job", resources.namespace(job), resources.launcher_name(job))
        return None if found is None else self._controlled(cluster, stored, found)

    def _get_or_create(self, cluster, stored: dict, wanted: dict) -> dict | None:
        """The existing object (controlled by the MPIJob), or ``wanted`` created; None when created."""
        found = cluster.find(*meta.key(wanted))
        if found is None:
            _create(cluster, wanted)
            return None
        return self._controlled(cluster, stored, found)

    def _service(self, cluster, job: dict, stored: dict) -> None:
        wanted = resources.service(job)
        found = self._get_or_create(cluster, stored, wanted)
        if found is not None and (found.get("spec") or {}).get("selector") != wanted["spec"]["selector"]:
            found = meta.clone(found)
            found.setdefault("spec", {})["selector"] = wanted["spec"]["selector"]
            cluster.update(found)

    def _config_map(self, cluster, job: dict, stored: dict) -> None:
        wanted = resources.config_map(job, self._running_workers(cluster, job))
        found = self._get_or_create(cluster, stored, wanted)
        if found is not None and (found.get("data") or {}) != wanted["data"]:
            found = meta.clone(found)
            found["data"] = wanted["data"]
            cluster.update(found)

    def _secret(self, cluster, job: dict, stored: dict) -> None:
        md = {"name": resources.name(job) + keys.SSH_SUFFIX, "namespace": resources.namespace(job)}
        found = cluster.find("", "Secret", md["namespace"], md["name"])
        if found is None:
            _create(cluster, resources.ssh_secret(job))
            return
        self._controlled(cluster, stored, found)
        if sorted(found.get("data") or {}) != sorted((keys.SSH_PRIVATE_KEY, keys.SSH_PUBLIC_KEY)):
            found = meta.clone(found)
            found["data"] = resources.ssh_secret(job)["data"]
            cluster.update(found)

    @staticmethod
    def _labelled_workers(cluster, job: dict) -> list[dict]:
        """workerSelector over the pod lister of the job's namespace (labels only, no owner check)."""
        wanted = resources.default_labels(job, keys.ROLE_WORKER)
        return [p for p in cluster.list("", "Pod", resources.namespace(job))
                if all((p["metadata"].get("labels") or {}).get(k) == v for k, v in wanted.items())]

    def _running_workers(self, cluster, job: dict) -> list[dict]:
        """getRunningWorkerPods: the labelled worker pods in phase Running (for discover_hosts.sh)."""
        return [p for p in self._labelled_workers(cluster, job) if _phase(p) == "Running"]

    def _workers(self, cluster, job: dict, stored: dict) -> list[dict]:
        """getOrCreateWorker: scale down, then each ``<job>-worker-<i>`` found or created."""
        if replica_spec(job["spec"]["mpiReplicaSpecs"], keys.WORKER) is None:
            return []
        replicas = resources.worker_replicas(job)
        labelled = self._labelled_workers(cluster, job)
        if len(labelled) > replicas:
            for pod in labelled:
                index = (pod["metadata"].get("labels") or {}).get(keys.REPLICA_INDEX_LABEL)
                if index is None:
                    return []  # upstream returns (nil, nil) here: no workers this sync, no error
                if index.lstrip("-").isdigit() and int(index) >= replicas:
                    cluster.delete(pod)
        workers = []
        for i in range(replicas):
            pod = cluster.find("", "Pod", resources.namespace(job), resources.worker_name(job, i))
            if pod is None:
                try:
                    pod = cluster.create(resources.worker_pod(job, i))
                except (Rejection, AlreadyExists) as exc:
                    cluster.record_error(stored, f"worker pod created failed: {exc}")
                    raise _Stop from None
            workers.append(self._controlled(cluster, stored, pod))
        return workers

    def _create_launcher(self, cluster, job: dict, stored: dict) -> dict:
        launcher, overridden = resources.launcher_job(job)
        if overridden:
            cluster.record_error(stored, keys.POD_TEMPLATE_RESTART_POLICY_MESSAGE)
        try:
            return cluster.create(launcher)
        except (Rejection, AlreadyExists) as exc:
            cluster.record_error(stored, f"launcher pod created failed: {exc}")
            raise _Stop from None

    def _delete_workers(self, cluster, job: dict, stored: dict) -> None:
        """deleteWorkerPods: ``<job>-worker-<i>`` for i < replicas; under cleanPodPolicy Running a pod
        neither Running nor Pending is kept."""
        keep_finished = job["spec"]["runPolicy"]["cleanPodPolicy"] == keys.CLEAN_RUNNING
        for i in range(resources.worker_replicas(job)):
            pod = cluster.find("", "Pod", resources.namespace(job), resources.worker_name(job, i))
            if pod is None:
                continue
            self._controlled(cluster, stored, pod)
            if keep_finished and _phase(pod) not in ("Running", "Pending"):
                continue
            cluster.delete(pod)

    # ------------------------------------------------------------------ updateMPIJobStatus
    def _update_status(self, cluster, job: dict, stored: dict, status: dict, launcher: dict | None,
                       workers: list[dict]) -> None:
        now = cluster.now()
        suspended = resources.suspended(job)
        if suspended:
            conditions.set_condition(status, keys.SUSPENDED, "True", keys.REASON_SUSPENDED, "MPIJob suspended", now)
        elif conditions.find(status, keys.SUSPENDED) is not None:
            if conditions.set_condition(status, keys.SUSPENDED, "False", keys.REASON_RESUMED, "MPIJob resumed", now):
                status["startTime"] = now
        replica_statuses = status.setdefault("replicaStatuses", {})
        launcher_running = 0
        if launcher is not None:
            pods = [p for p in cluster.list("", "Pod", resources.namespace(job), owner=launcher)
                    if _controlled_by(p, launcher)]
            launcher_running = sum(1 for p in pods if _phase(p) == "Running")
            counts = {"active": 0, "succeeded": 0, "failed": (launcher.get("status") or {}).get("failed", 0)}
            if _job_condition_true(launcher, "Complete"):
                counts["succeeded"] = 1
                if not status.get("completionTime") and (launcher.get("status") or {}).get("completionTime"):
                    status["completionTime"] = launcher["status"]["completionTime"]
                conditions.set_condition(status, keys.SUCCEEDED, "True", keys.REASON_SUCCEEDED,
                                         f"MPIJob {_ref(job)} successfully completed.", now)
            elif _job_condition_true(launcher, "Failed"):
                self._failed(job, status, launcher, pods, now)
            else:
                counts["active"] = launcher_running
            replica_statuses[keys.LAUNCHER] = _replica_status(counts)
        counts = {"active": 0, "succeeded": 0, "failed": 0}
        running = evicted = 0
        for pod in workers:
            phase = _phase(pod)
            if phase == "Failed":
                counts["failed"] += 1
                if (pod.get("status") or {}).get("reason") == "Evicted":
                    evicted += 1
            elif phase == "Succeeded":
                counts["succeeded"] += 1
            elif phase == "Running":
                running += 1
                counts["active"] += 1
        replica_statuses[keys.WORKER] = _replica_status(counts)
        if evicted:
            conditions.set_condition(status, keys.FAILED, "True", keys.REASON_EVICTED,
                                     f"{evicted}/{len(workers)} workers are evicted", now)
        if suspended:
            conditions.set_condition(status, keys.RUNNING, "False", keys.REASON_SUSPENDED,
                                     f"MPIJob {_ref(job)} is suspended.", now)
        elif launcher is not None and launcher_running >= 1 and running == len(workers):
            conditions.set_condition(status, keys.RUNNING, "True", keys.REASON_RUNNING,
                                     f"MPIJob {_ref(job)} is running.", now)
        _write_status(cluster, stored, status)

    @staticmethod
    def _failed(job: dict, status: dict, launcher: dict, pods: list[dict], now: str) -> None:
        """updateMPIJobFailedStatus: the launcher Job's Failed reason and message; for
        BackoffLimitExceeded, ``/<reason>`` and ``: <message>`` of the newest Failed launcher pod."""
        condition = meta.condition(launcher, "Failed") or {}
        reason = condition.get("reason") or keys.REASON_FAILED
        message = condition.get("message") or f"MPIJob {_ref(job)} has failed"
        if reason == "BackoffLimitExceeded":
            last = None
            for pod in pods:
                if _phase(pod) == "Failed" and (last is None or _created(last) < _created(pod)):
                    last = pod
            if last is not None:
                pod_status = last.get("status") or {}
                reason += "/" + pod_status.get("reason", "")
                message = validation.truncate(message + ": " + pod_status.get("message", ""))
        if not status.get("completionTime"):
            status["completionTime"] = now
        conditions.set_condition(status, keys.FAILED, "True", reason, message, now)


# ---------------------------------------------------------------------- helpers

def _ref(job: dict) -> str:
    return f"{resources.namespace(job)}/{resources.name(job)}"


def _create(cluster, obj: dict) -> None:
    """A create whose refusal upstream only logs and retries: nothing to observe, the sync stops."""
    try:
        cluster.create(obj)
    except (Rejection, AlreadyExists):
        raise _Stop from None


def _controlled_by(obj: dict, owner: dict) -> bool:
    """metav1.IsControlledBy: a controller ownerReference with the owner's UID."""
    uid = owner["metadata"].get("uid")
    return any(r.get("controller") and r.get("uid") == uid for r in obj["metadata"].get("ownerReferences", []))


def _phase(pod: dict) -> str:
    return (pod.get("status") or {}).get("phase") or "Pending"


def _created(pod: dict) -> str:
    return pod["metadata"].get("creationTimestamp", "")


def _ready(pod: dict) -> bool:
    condition = meta.condition(pod, "Ready")
    return condition is not None and condition.get("status") == "True"


def _job_condition_true(job: dict, type_: str) -> bool:
    condition = meta.condition(job, type_)
    return condition is not None and condition.get("status") == "True"


def _job_finished(job: dict) -> bool:
    return _job_condition_true(job, "Complete") or _job_condition_true(job, "Failed")


def _replica_status(counts: dict) -> dict:
    # ReplicaStatus fields are omitempty int32s.
    return {k: v for k, v in counts.items() if v}


def _write_status(cluster, stored: dict, status: dict) -> None:
    if "replicaStatuses" in status:  # a Go map: written with its keys sorted
        status["replicaStatuses"] = dict(sorted(status["replicaStatuses"].items()))
    if status != (stored.get("status") or {}):
        updated = meta.clone(stored)
        updated["status"] = status
        cluster.update(updated)
