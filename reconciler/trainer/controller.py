"""TrainJob controller: TrainJob + runtime → JobSet (+ MPI ConfigMap and Secret); JobSet status back.

Once the JobSet exists, nothing is rebuilt (upstream's Build returns nothing for a running,
unsuspended JobSet); only status flows back. With runtime snapshots (v2.3) the first build writes
the runtime into a ConfigMap and every later reconcile of a TrainJob not yet Complete (a Failed
one too: see ``_finished``) reads it from there again, as upstream's ``NewObjects`` does on each
reconcile (see :mod:`.snapshot`): a snapshot that went bad is reported then, one deleted is written
again from the runtime.
Not modelled: that upstream also applies the MPI hostfile ConfigMap again on each reconcile.
"""

from __future__ import annotations

from .. import meta
from ..cluster import AlreadyExists
from ..errors import Rejection
from . import runtimes, snapshot
from .framework import BuildError, run_build
from .info import new_runtime_info

GROUP = "trainer.kubeflow.org"
JOBSET_GROUP = "jobset.x-k8s.io"


def _creation_failed(cluster, trainjob: dict, error: str) -> None:
    """``reconcileObjects`` failed (no runtime or snapshot to build from, a plugin refused to build, or
    the apiserver refused an object the runtime built, e.g. a JobSet the JobSet webhook denies):
    Trainer records a Warning Event ``TrainJobResourcesCreationFailed`` whose message holds the error
    cut to 950 runes (``%.950v``, `` ...`` appended when the error is longer than 950 bytes), and
    returns the error, which is only logged and retried; nothing else is created
    (trainjob_controller.go, v2.0-v2.3). The Event is what a user sees, so the error recorded here is
    the Event's, cut the same way."""
    cut = error[:950] + (" ..." if len(error.encode()) > 950 else "")
    cluster.record_event(trainjob, "Warning", "TrainJobResourcesCreationFailed",
                         f"TrainJob resources reconciliation failed: {cut}")
    cluster.record_error(trainjob, cut)


def _not_found(trainjob: dict) -> str:
    """NewObjects' error when the runtime is gone (core/{cluster,}trainingruntime.go), around the
    NotFound of the manager's cache reader (it names the Kind)."""
    name = trainjob["spec"]["runtimeRef"]["name"]
    if trainjob["spec"]["runtimeRef"].get("kind") == "ClusterTrainingRuntime":
        return f'not found ClusterTrainingRuntime specified in TrainJob: ClusterTrainingRuntime.{GROUP} "{name}" not found'
    return f'TrainingRuntime specified in TrainJob is not found: TrainingRuntime.{GROUP} "{name}" not found'


def _finished(trainjob: dict) -> bool:
    """Whether v2.3's Reconcile skips ``reconcileObjects``: ``IsTrainJobFinished`` (Complete or Failed
    True), asked only after ``removeFailedCondition`` dropped a Failed condition whose reason is not
    DeadlineExceeded. Every Failed condition here is the JobSet's (activeDeadlineSeconds is not
    modelled), so only Complete finishes: a Failed TrainJob still reads its snapshot."""
    return any(c.get("type") == "Complete" and c.get("status") == "True"
               for c in (trainjob.get("status") or {}).get("conditions") or [])


class TrainJobController:
    watches = ((GROUP, "TrainJob"),)
    #: Built-in kinds it reads (and creates) besides what it watches: see ``Controller.reads``.
    reads = (("", "ConfigMap"), ("", "Secret"))

    def reconcile(self, cluster, trainjob: dict) -> None:
        md = trainjob["metadata"]
        jobset = cluster.find(JOBSET_GROUP, "JobSet", md.get("namespace", ""), md["name"])
        if jobset is None:
            runtime = self._runtime(cluster, trainjob)
            if runtime is None:
                return
            try:
                objects = run_build(runtimes.PLUGINS, new_runtime_info(runtime), trainjob, cluster.profile, cluster.find)
            except BuildError as exc:
                _creation_failed(cluster, trainjob, str(exc))
                return
            for obj in objects:
                if cluster.find(*meta.key(obj)) is None:
                    try:
                        cluster.create(obj)
                    except (Rejection, AlreadyExists) as refused:
                        _creation_failed(cluster, trainjob, str(refused))
                        return
            return
        if cluster.profile.runtime_snapshot and not _finished(trainjob):
            self._runtime(cluster, trainjob)
        self._sync_status(cluster, trainjob, jobset)

    @staticmethod
    def _runtime(cluster, trainjob: dict) -> dict | None:
        """The runtime to build from: the TrainJob's snapshot when the profile keeps one, else the
        (Cluster)TrainingRuntime itself. ``None``: nothing to build now (an error is recorded)."""
        md = trainjob["metadata"]
        cm = cluster.find("", "ConfigMap", md.get("namespace", ""), snapshot.name_for(trainjob)) \
            if cluster.profile.runtime_snapshot else None
        if cm is not None:
            try:
                return snapshot.read(cm, trainjob)
            except snapshot.SnapshotError as exc:
                cluster_scoped = trainjob["spec"]["runtimeRef"].get("kind") == "ClusterTrainingRuntime"
                wrap = "getting runtime snapshot" if cluster_scoped else "unable to get runtime snapshot"
                _creation_failed(cluster, trainjob, f"{wrap}: {exc}")
                return None
        runtime = runtimes.lookup(cluster, trainjob)
        if runtime is None:
            _creation_failed(cluster, trainjob, _not_found(trainjob))
        elif cluster.profile.runtime_snapshot:
            cluster.create(snapshot.configmap(trainjob, runtime))
        return runtime

    @staticmethod
    def _sync_status(cluster, trainjob: dict, jobset: dict) -> None:
        """JobSet Completed/Failed → TrainJob Complete/Failed; replicatedJobsStatus → jobsStatus."""
        js_status = jobset.get("status") or {}
        status = {}
        jobs = [{k: rj.get(k, 0) for k in ("ready", "succeeded", "failed", "active", "suspended")} | {"name": rj["name"]}
                for rj in js_status.get("replicatedJobsStatus", [])]
        if jobs:
            status["jobsStatus"] = jobs
        conditions = []
        for source, target in (("Completed", "Complete"), ("Failed", "Failed")):
            cond = meta.condition(jobset, source)
            if cond and cond.get("status") == "True":
                conditions.append({"type": target, "status": "True", "reason": cond.get("reason"),
                                   "message": cond.get("message"), "lastTransitionTime": cond.get("lastTransitionTime")})
        if conditions:
            status["conditions"] = conditions
        if status and trainjob.get("status") != status:
            trainjob["status"] = status
            cluster.update(trainjob)
