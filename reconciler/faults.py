"""Declarative faults for scenario steps: what happens to which pod, as data a live backend can replay.

A fault names its pods by Job and completion index, never by generated pod name:

* ``job: <name>``, or ``replicatedJob: <name>`` (+ ``jobIndex``, + ``jobset``) via the JobSet
  labels; neither = every Job;
* or the pods of a workload that creates pods itself, by its labels (:data:`POD_SELECTORS`):
  ``volcanoJob: <name>`` (+ ``task``) for a Volcano Job, ``mpiJob: <name>`` for an MPIJob's worker
  pods (its launcher pod is a Job's: ``job: <name>-launcher``), ``pytorchJob: <name>`` (+ ``replicaType``,
  the lowercase label value ``master`` / ``worker``) for a PyTorchJob, ``lws: <name>`` (+ ``group``)
  for a LeaderWorkerSet, ``statefulSet: <name>`` for the pods a StatefulSet controls (its controller
  reference; a plain StatefulSet's pods carry no label naming the set);
* ``pod: <completion index>`` (a workload selector's own index, e.g. ``volcano.sh/task-index``, or a
  LeaderWorkerSet's ``worker-index``, a StatefulSet pod's ordinal ``apps.kubernetes.io/pod-index``)
  or ``pod: all``. The pods of a NonIndexed Job have no completion
  index: there ``pod: n`` is the n-th of the Job's eligible pods in name order (they come from one
  template, so which pod a backend's generated names put n-th does not matter).

Pod-ending faults pick live pods (not finished, not being deleted); ``releaseTermination`` picks
pods that carry the hold finalizer. A fault that selects nothing is an error of the case.

=====================  =====================================================================
``podExit``            container(s) exit with ``exitCode`` (kubelet rules: restartPolicy OnFailure
                       restarts in place, Never ends the pod)
``podSucceed``         every container exits 0
``podEvicted``         Eviction API: condition DisruptionTarget (EvictionByEvictionAPI), graceful delete
``nodeLost``           the pod's node is gone: PodGC marks it Failed with DisruptionTarget
                       (DeletionByPodGC) and force-deletes it
``nodePressureEvicted`` the kubelet's node-pressure eviction: phase Failed, ``status.reason:
                       Evicted`` and the kubelet's message, DisruptionTarget
                       (TerminationByKubelet), containers killed (137); the Pod object stays
``podDeleted``         a plain graceful delete (``kubectl delete pod``), no DisruptionTarget
``holdTermination``    add finalizer ``training-conformance.dev/hold``: deletion waits (a slow node)
``releaseTermination`` remove that finalizer (upstream's integration tests "remove finalizers")
=====================  =====================================================================
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import kubelet

HOLD_FINALIZER = "training-conformance.dev/hold"
JOBSET_PREFIX = "jobset.sigs.k8s.io/"
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
# DisruptionTarget conditions, verbatim from kube-apiserver (eviction) and PodGC.
EVICTION = ("EvictionByEvictionAPI", "Eviction API: evicting")
POD_GC = ("DeletionByPodGC", "PodGC: node no longer exists")
#: The kubelet's eviction manager (pkg/kubelet/eviction): pod status reason, its message
#: (nodeLowMessageFmt + thresholdMetMessageFmt, for memory), and the DisruptionTarget reason.
NODE_PRESSURE = ("Evicted", "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. ",
                 "TerminationByKubelet")


@dataclass(frozen=True)
class PodSelector:
    """How a fault names the pods of one workload kind that creates its pods itself (not via Jobs):
    ``<keyword>: <workload name>`` matched against ``name_label``, each optional fault key in
    ``filters`` against its label, ``pod: <n>`` against ``index_key`` (a label, else an annotation),
    and the labels in ``fixed`` (which pods of the workload a fault may select) as they are."""

    keyword: str
    name_label: str
    index_key: str
    filters: dict[str, str] = field(default_factory=dict)
    fixed: dict[str, str] = field(default_factory=dict)

    def selects(self, pod: dict, fault: dict) -> bool:
        labels = pod["metadata"].get("labels") or {}
        return labels.get(self.name_label) == fault[self.keyword] and all(
            labels.get(label) == str(fault[key]) for key, label in self.filters.items() if key in fault) and all(
            labels.get(label) == value for label, value in self.fixed.items())


#: One entry per workload kind; the case schema lists the same keys for scenario steps.
POD_SELECTORS = (
    PodSelector("volcanoJob", "volcano.sh/job-name", "volcano.sh/task-index", {"task": "volcano.sh/task-spec"}),
    # MPI Operator v0.6.0 worker pods (reconciler/mpijob): index = replica-index.
    PodSelector("mpiJob", "training.kubeflow.org/job-name", "training.kubeflow.org/replica-index",
                fixed={"training.kubeflow.org/operator-name": "mpi-operator", "training.kubeflow.org/job-role": "worker"}),
    PodSelector("pytorchJob", "training.kubeflow.org/job-name", "training.kubeflow.org/replica-index",
                filters={"replicaType": "training.kubeflow.org/replica-type"},
                fixed={"training.kubeflow.org/operator-name": "pytorchjob-controller"}),
    # LeaderWorkerSet: group = the group-index label, pod = the worker-index label (0 = the leader).
    PodSelector("lws", "leaderworkerset.sigs.k8s.io/name", "leaderworkerset.sigs.k8s.io/worker-index",
                filters={"group": "leaderworkerset.sigs.k8s.io/group-index"}),
)


@dataclass(frozen=True)
class OwnerSelector:
    """The pods a workload controls, by the kind and name in their controller reference
    (``<keyword>: <name>``); ``pod: <n>`` against ``index_key``."""

    keyword: str
    kind: str
    index_key: str

    def selects(self, pod: dict, fault: dict) -> bool:
        return any(r.get("controller") and r.get("kind") == self.kind and r.get("name") == fault[self.keyword]
                   for r in pod["metadata"].get("ownerReferences") or [])


# A StatefulSet's pods (kube-controller-manager sets the pod-index label on each, k8s v1.28+).
POD_SELECTORS += (OwnerSelector("statefulSet", "StatefulSet", "apps.kubernetes.io/pod-index"),)


class FaultError(Exception):
    """The fault cannot be applied as written (e.g. it selects no pod)."""


def describe(fault: dict) -> str:
    """``podExit replicatedJob=workers jobIndex=0 pod=1 exitCode=3`` for messages and goldens."""
    params = [f"{k}={v}" for k, v in fault.items() if k not in ("fault", "expect", "never", "name")]
    return " ".join([fault["fault"], *params])


def inject(cluster, fault: dict) -> None:
    kind = fault["fault"]
    handler = _HANDLERS.get(kind)
    if handler is None:
        raise FaultError(f"unknown fault {kind!r}; known: {', '.join(sorted(_HANDLERS))}")
    pods = select_pods(cluster, fault, held=kind == "releaseTermination")
    if not pods:
        raise FaultError(f"fault {describe(fault)} selects no pod")
    for pod in pods:
        handler(cluster, pod, fault)


def select_pods(cluster, fault: dict, held: bool = False) -> list[dict]:
    namespace = fault.get("namespace", "default")
    selector = next((s for s in POD_SELECTORS if s.keyword in fault), None)
    if selector is not None:
        candidates = sorted((p for p in cluster.list("", "Pod", namespace) if selector.selects(p, fault)),
                            key=lambda p: p["metadata"]["name"])
        index_key = selector.index_key
    else:
        jobs = [j for j in cluster.list("batch", "Job", namespace) if _job_selected(j, fault)]
        candidates = [pod for job in jobs for pod in sorted(cluster.list("", "Pod", namespace, owner=job),
                                                             key=lambda p: p["metadata"]["name"])]
        index_key = COMPLETION_INDEX
    wanted = fault.get("pod", "all")
    pods = []
    ordinal: dict[str, int] = {}  # per Job: how many of its eligible pods without an index came before
    for pod in candidates:
        if held:
            eligible = HOLD_FINALIZER in pod["metadata"].get("finalizers", [])
        else:
            eligible = fault["fault"] == "holdTermination" or _live(pod)
        if not eligible:
            continue
        if wanted != "all":
            index = _index(pod, index_key)
            if index is None and selector is None:
                # A NonIndexed Job's pods have no completion index: `pod: n` is the n-th of its eligible
                # pods in name order. They are interchangeable (one template), so which one a backend's
                # generated names make n-th does not change the outcome.
                owner = next((r.get("uid") for r in pod["metadata"].get("ownerReferences", []) if r.get("controller")), "")
                index, ordinal[owner] = str(ordinal.get(owner, 0)), ordinal.get(owner, 0) + 1
            if index != str(wanted):
                continue
        pods.append(pod)
    return pods


def _index(pod: dict, key: str) -> str | None:
    md = pod["metadata"]
    return (md.get("labels") or {}).get(key, (md.get("annotations") or {}).get(key))


def _job_selected(job: dict, fault: dict) -> bool:
    if "job" in fault:
        return job["metadata"]["name"] == fault["job"]
    labels = job["metadata"].get("labels") or {}
    if "jobset" in fault and labels.get(JOBSET_PREFIX + "jobset-name") != fault["jobset"]:
        return False
    if "replicatedJob" in fault and labels.get(JOBSET_PREFIX + "replicatedjob-name") != fault["replicatedJob"]:
        return False
    return "jobIndex" not in fault or labels.get(JOBSET_PREFIX + "job-index") == str(fault["jobIndex"])


def _live(pod: dict) -> bool:
    return (pod.get("status") or {}).get("phase") not in kubelet.TERMINAL and not pod["metadata"].get("deletionTimestamp")


def _pod_exit(cluster, pod: dict, fault: dict) -> None:
    kubelet.container_exit(cluster, pod, fault["exitCode"], fault.get("container"))


def _pod_succeed(cluster, pod: dict, fault: dict) -> None:
    kubelet.container_exit(cluster, pod, 0)


def _disruption(cluster, pod: dict, reason: str, message: str) -> None:
    conditions = pod.setdefault("status", {}).setdefault("conditions", [])
    conditions[:] = [c for c in conditions if c.get("type") != "DisruptionTarget"]
    conditions.append({"type": "DisruptionTarget", "status": "True", "reason": reason, "message": message,
                       "lastTransitionTime": cluster.now()})


def _pod_evicted(cluster, pod: dict, fault: dict) -> None:
    _disruption(cluster, pod, *EVICTION)
    cluster.update(pod)
    cluster.delete(pod)


def _node_lost(cluster, pod: dict, fault: dict) -> None:
    _disruption(cluster, pod, *POD_GC)
    pod["status"]["phase"] = "Failed"
    cluster.update(pod)
    cluster.delete(pod, grace=False)


def _node_pressure_evicted(cluster, pod: dict, fault: dict) -> None:
    reason, message, disruption = NODE_PRESSURE
    _disruption(cluster, pod, disruption, message)
    status = pod["status"]
    status.update({"phase": "Failed", "reason": reason, "message": message})
    for cs in status.get("containerStatuses", []):
        if "terminated" not in (cs.get("state") or {}):
            cs.update({"ready": False, "started": False,
                       "state": {"terminated": {"exitCode": 137, "reason": "Error", "startedAt": cluster.now(),
                                                "finishedAt": cluster.now()}}})
    kubelet.set_not_ready(cluster, pod)
    cluster.update(pod)


def _pod_deleted(cluster, pod: dict, fault: dict) -> None:
    cluster.delete(pod)


def _hold(cluster, pod: dict, fault: dict) -> None:
    finalizers = pod["metadata"].setdefault("finalizers", [])
    if HOLD_FINALIZER not in finalizers:
        finalizers.append(HOLD_FINALIZER)
        cluster.update(pod)


def _release(cluster, pod: dict, fault: dict) -> None:
    pod["metadata"]["finalizers"] = [f for f in pod["metadata"]["finalizers"] if f != HOLD_FINALIZER]
    if not pod["metadata"]["finalizers"]:
        del pod["metadata"]["finalizers"]
    cluster.update(pod)


_HANDLERS = {
    "podExit": _pod_exit, "podSucceed": _pod_succeed, "podEvicted": _pod_evicted, "nodeLost": _node_lost,
    "podDeleted": _pod_deleted, "holdTermination": _hold, "releaseTermination": _release,
    "nodePressureEvicted": _node_pressure_evicted,
}
FAULTS = tuple(_HANDLERS)
