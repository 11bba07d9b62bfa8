"""The PyTorchJob controller: ``Reconcile`` → ``ReconcileJobs`` → ``ReconcilePods`` /
``ReconcileServices`` → ``UpdateJobStatus`` (pkg/controller.v1/pytorch/pytorchjob_controller.go,
pkg/controller.v1/common/{job,pod,service}.go, pkg/core/*; shared/reference/kubeflow-v1-mpi-operator.md
A.2, A.3), v1.8.1 and v1.9.2 alike but for ``managedBy`` (v1.9, #2203).

One reconcile, in upstream's order, on the job defaulted in memory (:mod:`.defaults`) with the
``Created`` condition of the create-event predicate:

* skipped when being deleted or (v1.9) managed by another controller (``managedBy`` set and not
  ``kubeflow.org/training-operator``);
* **finished** (Succeeded or Failed True): clean up per ``cleanPodPolicy`` (``None`` nothing,
  ``Running`` Running/Pending pods, anything else everything), then ``ttlSecondsAfterFinished``;
  a Succeeded job moves its ``active`` counts to ``succeeded``;
* **suspended**: delete every pod and Service, ``active`` 0, ``Running=False`` (if it was True) and
  ``Suspended=True``, reason ``PyTorchJobSuspended``; on resume ``Suspended=False``
  (``PyTorchJobResumed``) and a new ``startTime``;
* ``backoffLimit`` (set only): (a) a new failed pod, not every replica active and
  ``NumRequeues+1 > backoffLimit`` - the controller-runtime work queue is a ``FakeWorkQueue`` whose
  ``NumRequeues`` is 0, so only ``backoffLimit: 0``; (b) the restartCounts of containers and init
  containers of *Running* pods of OnFailure/Always/ExitCode replicas reach it (``> 0`` for 0).
  Then, or past ``activeDeadlineSeconds`` since ``startTime``: every pod and Service is deleted
  whatever ``cleanPodPolicy`` (the job is not finished yet) and ``Failed`` is set;
* otherwise per replica type: pods and per-pod headless Services ``<job>-<type>-<index>``;
  a pod in phase Failed is deleted (and later recreated under its name) for OnFailure, Always, or
  ExitCode with the ``pytorch`` container's exit code >= 128 (no terminated state: 0xbeef, retryable)
  - ``Restarting``; ExitCode below 128 sets ``Failed``; Never leaves it to UpdateJobStatus;
* UpdateJobStatus: ``startTime``, per-type ``selector``, Running/Succeeded from the Master (or, with
  no Master, the Workers), and for a type with failed pods and fewer succeeded+running than
  replicas ``Restarting`` (policy not Never) or ``Failed`` (Never).

Replica types are visited in key order (Master, Worker) where upstream iterates a Go map: the settled
state does not depend on it, transient conditions may (a Worker restart with a running Master can
store ``Restarting`` for one reconcile or not at all).

Warning Events upstream records become reconcile errors here (that is how render shows them):
``SetPodTemplateRestartPolicy``, the two ``PyTorchJobRestarting`` messages, ExitCode's
``PyTorchJobFailed``, ``FailedCreatePod`` / ``FailedCreateService`` (``Error creating: <err>``) and
RecordAbnormalPods' ``Error pod <pod> container <c> exitCode: <n> terminated message: <m>``. Normal
Events (``SuccessfulCreatePod``, ``ExitedWithCode``, ``PyTorchJobSucceeded``, the Never/backoff/deadline
``PyTorchJobFailed`` …) and errors upstream only logs are not observable as such and not recorded.

Time: ``activeDeadlineSeconds`` and ``ttlSecondsAfterFinished`` compare the logical clock
(``cluster.now()``, one second per settle round) with ``startTime`` / ``completionTime``. Upstream has
no timer for the deadline (``WorkQueue.AddAfter`` is the fake queue's no-op): it is checked on the next
event only; TTL requeues with ``RequeueAfter``. Only values that do not depend on elapsed time are
meaningful in cases (0: at the next reconcile; hours: never within a case).

Not modelled: the HPA of an elasticPolicy with ``metrics``, gang scheduling (PodGroups,
``schedulingPolicy``), expectations (render's cache is always in sync), RecordAbnormalPods' branch for
pods without container statuses (pods here always have them), and the endless create/delete of a
v1.8 ``replicas: 0`` phantom pod next to a Master (see ``PyTorchJobController.phantoms``).
"""

from __future__ import annotations

import datetime as dt

from .. import meta
from ..cluster import AlreadyExists
from ..errors import Rejection
from . import env, keys
from .defaults import UpstreamPanic, containers, defaulted
from .status import as_stored, condition_true, count_pod, is_finished, pod_phase, selector, set_condition

#: The Go magic exit code used when the ``pytorch`` container has no terminated state.
NO_EXIT_CODE = 0xBEEF
RESTART_POLICY_WARNING = "Restart policy in pod template will be overwritten by restart policy in replica spec"


class CreateFailed(Exception):
    """A pod or Service create the apiserver refused: ReconcilePods/-Services return the error."""


def is_retryable_exit_code(code: int) -> bool:
    """train_util.IsRetryableExitCode: 1-127 permanent, 128-255 retryable (common_types.go)."""
    return code >= 128


def pod_restart_policy(replica_restart_policy: str) -> str:
    """core.SetRestartPolicy: ExitCode → Never; every other value is copied as is."""
    return keys.NEVER if replica_restart_policy == keys.EXIT_CODE else replica_restart_policy


def is_master_role(replicas: dict, replica_type: str, index: int) -> bool:
    """IsMasterRole: the Master if there is one, else Worker 0."""
    if keys.MASTER in replicas:
        return replica_type == keys.MASTER
    return replica_type == keys.WORKER and index == 0


def exit_code(pod: dict) -> int:
    """The terminated exit code of the container named ``pytorch``, else 0xbeef."""
    code = NO_EXIT_CODE
    for cs in (pod.get("status") or {}).get("containerStatuses") or []:
        terminated = (cs.get("state") or {}).get("terminated")
        if cs.get("name") == keys.DEFAULT_CONTAINER and terminated is not None:
            code = terminated.get("exitCode", 0)
    return code


def past_backoff_limit(job: dict, pods: list[dict]) -> bool:
    """core.PastBackoffLimit (only called with backoffLimit set)."""
    limit = job["spec"]["runPolicy"]["backoffLimit"]
    restarts = 0
    for replica_type, replica in job["spec"]["pytorchReplicaSpecs"].items():
        if replica.get("restartPolicy") not in (keys.ON_FAILURE, keys.ALWAYS, keys.EXIT_CODE):
            continue
        for pod in _of_type(pods, replica_type):
            if pod_phase(pod) != "Running":
                continue
            status = pod.get("status") or {}
            for cs in (status.get("initContainerStatuses") or []) + (status.get("containerStatuses") or []):
                restarts += cs.get("restartCount", 0)
    return restarts > 0 if limit == 0 else restarts >= limit


def _of_type(items: list[dict], replica_type: str) -> list[dict]:
    return [o for o in items if (o["metadata"].get("labels") or {}).get(keys.REPLICA_TYPE_LABEL) == replica_type.lower()]


def _index(obj: dict) -> int | None:
    value = (obj["metadata"].get("labels") or {}).get(keys.REPLICA_INDEX_LABEL)
    return env.go_atoi(value, default=None) if value is not None else None


def slices(items: list[dict], replicas: int) -> list[list[dict]]:
    """GetPodSlices / GetServiceSlices: one slot per index up to max(highest index + 1, replicas).

    With no pods the size is max(1, replicas): a replica type with ``replicas: 0`` still gets a pod
    at index 0 created (and deleted on the next reconcile, as out of range)."""
    indexed = [(i, o) for o in items if (i := _index(o)) is not None and i >= 0]
    size = max(max([i for i, _ in indexed], default=0) + 1, replicas)
    out: list[list[dict]] = [[] for _ in range(size)]
    for i, item in indexed:
        out[i].append(item)
    return out


def _list(value) -> list:
    """A list field of a pod template (preserved as given by this suite's CRD), [] if it is none."""
    return value if isinstance(value, list) else []


def _seconds(stamp: str) -> float:
    return dt.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.timezone.utc).timestamp()


class PyTorchJobController:
    watches = ((keys.GROUP, keys.KIND),)
    #: Built-in kinds it reads (and creates) besides what it watches: see ``Controller.reads``.
    reads = (("", "Pod"), ("", "Service"))

    def __init__(self) -> None:
        #: (job UID, replica type) whose phantom pod (``replicas`` < 1, see :func:`slices`) was
        #: deleted once: upstream recreates and deletes it forever, render stops after one round.
        self.phantoms: set[tuple[str, str]] = set()

    def reconcile(self, cluster, stored: dict) -> None:
        if stored["metadata"].get("deletionTimestamp"):
            return
        run_policy = (stored.get("spec") or {}).get("runPolicy") or {}
        if cluster.profile.pytorchjob_managed_by and run_policy.get("managedBy") is not None \
                and run_policy["managedBy"] != keys.KUBEFLOW_JOBS_CONTROLLER:
            return  # ManagedByExternalController (v1.9): "" counts as external too
        try:
            job = defaulted(stored)
            _Reconcile(cluster, stored, job, self.phantoms).run()
        except (UpstreamPanic, env.PortNotFound, CreateFailed):
            return  # upstream returns (or panics) before writing the status; nothing else to see


class _Reconcile:
    """One ReconcileJobs pass over a defaulted job; ``stored`` is what the apiserver holds."""

    def __init__(self, cluster, stored: dict, job: dict, phantoms: set[tuple[str, str]]):
        self.cluster, self.stored, self.job, self.phantoms = cluster, stored, job, phantoms
        self.name = job["metadata"]["name"]
        self.spec = job["spec"]
        self.run_policy = self.spec["runPolicy"]
        self.replicas: dict = self.spec.get("pytorchReplicaSpecs") or {}
        self.status = meta.clone(stored.get("status") or {})
        self.now = cluster.now()
        # onOwnerCreateFunc: the Created condition is set on the cached object when the job is first
        # seen; it is never removed, so setting it again is a no-op.
        set_condition(self.status, keys.CREATED, "True", keys.reason(keys.CREATED),
                      f"PyTorchJob {self.name} is created.", self.now)

    # ------------------------------------------------------------------ helpers
    def warn(self, message: str) -> None:
        self.cluster.record_error(self.stored, message)

    def condition(self, type_: str, value: str, reason_suffix: str, message: str) -> None:
        set_condition(self.status, type_, value, keys.reason(reason_suffix), message, self.now)

    def _owned(self, kind: str) -> list[dict]:
        """GetPodsForJob / GetServicesForJob: the objects of the job's namespace with its labels
        (GenLabels: operator-name, job-name); a pod must also have the job as its controller
        (JobControlledPodList), a Service need not (ConvertServiceList keeps every one listed)."""
        uid = self.stored["metadata"]["uid"]
        wanted = {keys.OPERATOR_NAME_LABEL: keys.CONTROLLER_NAME, keys.JOB_NAME_LABEL: self.name.replace("/", "-")}
        found = [o for o in self.cluster.list("", kind, self.stored["metadata"].get("namespace"))
                 if all((o["metadata"].get("labels") or {}).get(k) == v for k, v in wanted.items())]
        if kind == "Pod":
            found = [o for o in found
                     if any(r.get("uid") == uid and r.get("controller") for r in o["metadata"].get("ownerReferences", []))]
        return found

    def replica_statuses(self) -> dict:
        statuses = self.status.get("replicaStatuses")
        if not isinstance(statuses, dict):
            statuses = self.status["replicaStatuses"] = {}
        return statuses

    def write(self) -> None:
        """UpdateJobStatusInApiServer (status only: the stored spec stays as sent)."""
        current = self.cluster.find(*meta.key(self.stored))
        if current is None:
            return
        new = as_stored(self.status)
        if new == as_stored(current.get("status") or {}):
            return
        updated = meta.clone(current)
        updated["status"] = new
        self.cluster.update(updated)

    # ------------------------------------------------------------------ ReconcileJobs
    def run(self) -> None:
        pods, services = self._owned("Pod"), self._owned("Service")
        if is_finished(self.status):
            self.clean_up(pods)
            if condition_true(self.status, keys.SUCCEEDED):
                for rs in self.replica_statuses().values():
                    rs["succeeded"] = rs.get("succeeded", 0) + rs.get("active", 0)
                    rs["active"] = 0
            self.write()
            return
        if self.run_policy.get("suspend") is True:
            self.clean_up(pods)
            for rs in self.replica_statuses().values():
                rs["active"] = 0
            message = f"PyTorchJob {self.name} is suspended."
            if condition_true(self.status, keys.RUNNING):
                self.condition(keys.RUNNING, "False", keys.SUSPENDED, message)
            if not condition_true(self.status, keys.SUSPENDED):
                self.condition(keys.SUSPENDED, "True", keys.SUSPENDED, message)
            self.write()
            return
        if condition_true(self.status, keys.SUSPENDED):
            self.condition(keys.SUSPENDED, "False", keys.RESUMED, f"PyTorchJob {self.name} is resumed.")
            self.status["startTime"] = self.now
        active = [p for p in pods if pod_phase(p) not in ("Succeeded", "Failed") and not p["metadata"].get("deletionTimestamp")]
        self.record_abnormal(active)
        failure = self.limit_reached(pods, active)
        if failure:
            self.status.setdefault("completionTime", self.now)
            self.delete_pods_and_services(pods)
            self.clean_up_job()
            self.condition(keys.FAILED, "True", keys.FAILED, failure)
            self.write()
            return
        for replica_type in sorted(self.replicas):
            self.reconcile_pods(pods, replica_type)
            self.reconcile_services(services, replica_type)
        self.update_job_status()
        self.write()

    def limit_reached(self, pods: list[dict], active: list[dict]) -> str | None:
        limit = self.run_policy.get("backoffLimit")
        if limit is not None:
            failed = sum(1 for p in pods if pod_phase(p) == "Failed")
            before = sum((rs or {}).get("failed", 0) for rs in (self.status.get("replicaStatuses") or {}).values())
            total = sum(r.get("replicas") or 0 for r in self.replicas.values())
            exceeds = failed > before and len(active) != total and 0 + 1 > limit  # NumRequeues is 0
            if exceeds or past_backoff_limit(self.job, pods):
                return f"Job {self.name} has failed because it has reached the specified backoff limit"
        deadline = self.run_policy.get("activeDeadlineSeconds")
        start = self.status.get("startTime")
        if deadline is not None and start and _seconds(self.now) - _seconds(start) >= deadline:
            return f"Job {self.name} has failed because it was active longer than specified deadline"
        return None

    # ------------------------------------------------------------------ clean-up
    def clean_up(self, pods: list[dict]) -> None:
        """CleanUpResources: DeletePodsAndServices, then CleanupJob (TTL)."""
        self.delete_pods_and_services(pods)
        self.clean_up_job()

    def delete_pods_and_services(self, pods: list[dict]) -> None:
        """cleanPodPolicy applies once finished; before that (backoff, deadline, suspend) all go.
        Services are deleted by the pod's name."""
        if not pods:
            return
        finished, policy = is_finished(self.status), self.run_policy.get("cleanPodPolicy")
        if finished and policy == keys.CLEAN_NONE:
            return
        for pod in pods:
            if finished and policy == keys.CLEAN_RUNNING and pod_phase(pod) not in ("Running", "Pending"):
                continue
            self._delete("Pod", pod["metadata"]["name"])
            self._delete("Service", pod["metadata"]["name"])

    def _delete(self, kind: str, name: str) -> None:
        found = self.cluster.find("", kind, self.stored["metadata"].get("namespace", ""), name)
        if found is not None and not found["metadata"].get("deletionTimestamp"):
            self.cluster.delete(found)

    def clean_up_job(self) -> None:
        """CleanupJob: delete the PyTorchJob ``ttlSecondsAfterFinished`` after ``completionTime``.
        Nothing while suspended (#2243); without completionTime it returns an error (logged)."""
        ttl = self.run_policy.get("ttlSecondsAfterFinished")
        if ttl is None or self.run_policy.get("suspend") is True:
            return
        completion = self.status.get("completionTime")
        if not completion:
            raise UpstreamPanic("job completion time is nil, cannot cleanup")  # an error, not a panic: same effect
        # currentTime.After(completionTime + ttl): Go's now has nanoseconds, the stored completionTime
        # whole seconds, so at the clock's one-second grain that is now >= completion + ttl (TTL 0
        # deletes at the reconcile after completion - upstream requeues at once, RequeueAfter 0).
        if _seconds(self.now) >= _seconds(completion) + ttl:
            current = self.cluster.find(*meta.key(self.stored))
            if current is not None:
                self.cluster.delete(current)

    def record_abnormal(self, active: list[dict]) -> None:
        """core.RecordAbnormalPods: Warning Events for active pods with a container terminated non-zero
        (reason: the terminated reason) or waiting with a message."""
        for pod in active:
            status = pod.get("status") or {}
            statuses = status.get("containerStatuses") or status.get("initContainerStatuses") or []
            for cs in statuses:
                state = cs.get("state") or {}
                terminated, waiting = state.get("terminated"), state.get("waiting")
                if terminated and terminated.get("exitCode", 0) != 0:
                    self.warn(f"Error pod {pod['metadata']['name']} container {cs.get('name')} exitCode: "
                              f"{terminated['exitCode']} terminated message: {terminated.get('message', '')}")
                if waiting and waiting.get("message"):
                    self.warn(f"Error pod {pod['metadata']['name']} container {cs.get('name')} waiting message: "
                              f"{waiting['message']}")

    # ------------------------------------------------------------------ pods
    def reconcile_pods(self, pods: list[dict], replica_type: str) -> None:
        spec = self.replicas[replica_type]
        count = spec.get("replicas") or 0
        statuses = self.replica_statuses()
        statuses[replica_type] = {}  # initializeReplicaStatuses: a fresh, zero ReplicaStatus
        restart_policy = spec.get("restartPolicy")
        for index, found in enumerate(slices(_of_type(pods, replica_type), count)):
            if len(found) > 1:
                continue  # "We have too many pods": logged only
            phantom = (self.stored["metadata"]["uid"], replica_type)
            if not found:
                if index >= count and phantom in self.phantoms:
                    continue  # the livelock: see PyTorchJobController.phantoms
                self.create_pod(replica_type, index, spec)
                continue
            pod = found[0]
            if index >= count:
                self._delete("Pod", pod["metadata"]["name"])
                if count < 1:
                    self.phantoms.add(phantom)
            code = exit_code(pod)
            if pod_phase(pod) == "Failed":
                if restart_policy in (keys.ON_FAILURE, keys.ALWAYS) or \
                        (restart_policy == keys.EXIT_CODE and is_retryable_exit_code(code)):
                    self._delete("Pod", pod["metadata"]["name"])
                    message = f"job {self.name} is restarting because {replica_type} replica(s) failed."
                    self.warn(message)
                    self.condition(keys.RESTARTING, "True", keys.RESTARTING, message)
                elif restart_policy == keys.EXIT_CODE:
                    message = f'job "{self.name}" is failing because "{replica_type}" replica(s) failed.'
                    self.warn(message)
                    self.condition(keys.FAILED, "True", keys.FAILED, message)
            count_pod(statuses[replica_type], pod)

    def create_pod(self, replica_type: str, index: int, spec: dict) -> None:
        """createNewPod: the template with the operator's labels, env and init container."""
        template = meta.clone(spec.get("template") or {})
        md = template.get("metadata") or {}
        pod_spec = template.get("spec") or {}
        labels = dict(md.get("labels") or {})
        labels.update(self.labels(replica_type, index))
        if is_master_role(self.replicas, replica_type, index):
            labels[keys.JOB_ROLE_LABEL] = "master"
        added = env.pod_env(self.job, replica_type, index)
        for container in containers({"template": {"spec": pod_spec}}):
            container["env"] = [*_list(container.get("env")), *meta.clone(added)]
        init = env.init_containers(self.job, replica_type)
        if init:
            pod_spec["initContainers"] = [*_list(pod_spec.get("initContainers")), *init]
        if pod_spec.get("restartPolicy"):
            self.warn(RESTART_POLICY_WARNING)
        pod_spec["restartPolicy"] = pod_restart_policy(spec.get("restartPolicy"))
        name = env.replica_name(self.name, replica_type, index)
        pod_md = {"name": name, "namespace": self.stored["metadata"].get("namespace"), "labels": labels}
        if md.get("annotations"):
            pod_md["annotations"] = dict(md["annotations"])
        if md.get("finalizers"):
            pod_md["finalizers"] = list(md["finalizers"])
        pod_md["ownerReferences"] = [meta.controller_ref(self.stored)]
        self._create({"apiVersion": "v1", "kind": "Pod", "metadata": pod_md, "spec": pod_spec})

    def labels(self, replica_type: str, index: int | str) -> dict:
        return {keys.OPERATOR_NAME_LABEL: keys.CONTROLLER_NAME, keys.JOB_NAME_LABEL: self.name.replace("/", "-"),
                keys.REPLICA_TYPE_LABEL: replica_type.lower(), keys.REPLICA_INDEX_LABEL: str(index)}

    def _create(self, obj: dict) -> None:
        """PodControl / ServiceControl create: a refusal is a Warning FailedCreatePod / FailedCreateService
        "Error creating: <the apiserver's error>", and the reconcile returns the error."""
        try:
            self.cluster.create(obj)
        except Rejection as exc:
            self.warn(f"Error creating: {exc}")
            raise CreateFailed() from None
        except AlreadyExists:
            # The apiserver's StatusError: `<resource> "<name>" already exists`.
            self.warn(f'Error creating: {obj["kind"].lower()}s "{obj["metadata"]["name"]}" already exists')
            raise CreateFailed() from None

    # ------------------------------------------------------------------ services
    def reconcile_services(self, services: list[dict], replica_type: str) -> None:
        spec = self.replicas[replica_type]
        count = spec.get("replicas") or 0
        for index, found in enumerate(slices(_of_type(services, replica_type), count)):
            if len(found) > 1:
                continue
            if not found:
                if index >= count and (self.stored["metadata"]["uid"], replica_type) in self.phantoms:
                    continue
                self.create_service(replica_type, index, spec)
            elif index >= count:
                self._delete("Service", found[0]["metadata"]["name"])

    def create_service(self, replica_type: str, index: int, spec: dict) -> None:
        """CreateNewService: headless, selecting the pod's labels (no job-role); ports = every port of
        the ``pytorch`` container, ``{name, port}`` (a Go map by name: one per name, the last wins)."""
        labels = self.labels(replica_type, index)
        pytorch = next((c for c in containers(spec) if c.get("name") == keys.DEFAULT_CONTAINER), None)
        if pytorch is None:
            raise env.PortNotFound("failed to find the port")
        ports: dict[str, int] = {}
        for port in _list(pytorch.get("ports")):
            if isinstance(port, dict):
                ports[port.get("name", "")] = port.get("containerPort", 0)
        service_spec: dict = {"clusterIP": "None", "selector": dict(labels)}
        if ports:
            service_spec["ports"] = [{"name": n, "port": p} for n, p in ports.items()]
        name = env.replica_name(self.name, replica_type, index)
        self._create({"apiVersion": "v1", "kind": "Service",
                      "metadata": {"name": name, "namespace": self.stored["metadata"].get("namespace"),
                                   "labels": labels, "ownerReferences": [meta.controller_ref(self.stored)]},
                      "spec": service_spec})

    # ------------------------------------------------------------------ UpdateJobStatus
    def update_job_status(self) -> None:
        self.status.setdefault("startTime", self.now)
        has_master = keys.MASTER in self.replicas
        for replica_type in sorted(self.replicas):
            spec = self.replicas[replica_type]
            rs = self.replica_statuses().setdefault(replica_type, {})
            rs["selector"] = selector(self.name, replica_type)
            succeeded, running, failed = rs.get("succeeded", 0), rs.get("active", 0), rs.get("failed", 0)
            replicas = spec.get("replicas") or 0
            expected = replicas - succeeded
            if has_master:
                if replica_type == keys.MASTER:
                    if running > 0:
                        self.condition(keys.RUNNING, "True", keys.RUNNING, f"PyTorchJob {self.name} is running.")
                    if expected == 0:
                        self.status.setdefault("completionTime", self.now)
                        self.condition(keys.SUCCEEDED, "True", keys.SUCCEEDED,
                                       f"PyTorchJob {self.name} is successfully completed.")
                        return
            elif replica_type == keys.WORKER:
                namespaced = f"{self.stored['metadata'].get('namespace')}/{self.name}"
                if expected == 0 or (self.spec.get("elasticPolicy") is not None and succeeded > 0):
                    self.status.setdefault("completionTime", self.now)
                    self.condition(keys.SUCCEEDED, "True", keys.SUCCEEDED, f"PyTorchJob {namespaced} successfully completed.")
                elif running > 0:
                    self.condition(keys.RUNNING, "True", keys.RUNNING, f"PyTorchJob {namespaced} is running.")
            if failed > 0 and replicas > succeeded + running:
                if spec.get("restartPolicy") != keys.NEVER:
                    message = f"PyTorchJob {self.name} is restarting because {failed} {replica_type} replica(s) failed."
                    self.warn(message)
                    self.condition(keys.RESTARTING, "True", keys.RESTARTING, message)
                else:
                    self.status.setdefault("completionTime", self.now)
                    self.condition(keys.FAILED, "True", keys.FAILED,
                                   f"PyTorchJob {self.name} is failed because {failed} {replica_type} replica(s) failed.")
