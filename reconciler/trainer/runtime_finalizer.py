"""The ``trainer.kubeflow.org/resource-in-use`` finalizer on (Cluster)TrainingRuntimes (v2.0-v2.2).

Upstream's runtime controllers (pkg/controller/{cluster,}trainingruntime_controller.go) add the
finalizer as soon as any TrainJob refers to the runtime, and remove it only while the runtime is
being deleted and no TrainJob refers to it any more - so a runtime in use survives a delete until
its last TrainJob is gone. A TrainJob refers to a runtime by ``runtimeRef`` name, with apiGroup
``trainer.kubeflow.org`` and the runtime's kind (a TrainingRuntime: in the TrainJob's namespace).
TrainJob events (create, update, delete) enqueue the runtime they name.

v2.3 replaced this with runtime snapshots: its controllers only remove the finalizer if present.
"""

from __future__ import annotations

from .. import meta

GROUP = "trainer.kubeflow.org"
FINALIZER = "trainer.kubeflow.org/resource-in-use"
_RUNTIME_KINDS = ("TrainingRuntime", "ClusterTrainingRuntime")


def _runtime_key(trainjob: dict) -> tuple[str, str, str, str] | None:
    ref = (trainjob.get("spec") or {}).get("runtimeRef") or {}
    if ref.get("apiGroup") != GROUP or ref.get("kind") not in _RUNTIME_KINDS:
        return None
    namespace = trainjob["metadata"].get("namespace", "") if ref["kind"] == "TrainingRuntime" else ""
    return (GROUP, ref["kind"], namespace, ref.get("name", ""))


class RuntimeInUseController:
    watches = ((GROUP, "TrainingRuntime"), (GROUP, "ClusterTrainingRuntime"), (GROUP, "TrainJob"))

    @staticmethod
    def related(obj: dict) -> list[tuple[str, str, str, str]]:
        """Keys to reconcile when ``obj`` changes or goes away: a TrainJob's runtime."""
        if obj.get("kind") != "TrainJob":
            return []
        key = _runtime_key(obj)
        return [key] if key else []

    def reconcile(self, cluster, obj: dict) -> None:
        if obj.get("kind") not in _RUNTIME_KINDS:
            return
        md = obj["metadata"]
        finalizers = md.get("finalizers") or []
        if not cluster.profile.runtime_in_use_finalizer:
            if FINALIZER in finalizers:
                self._set(cluster, obj, [f for f in finalizers if f != FINALIZER])
            return
        in_use = any(_runtime_key(tj) == meta.key(obj)
                     for tj in cluster.list(GROUP, "TrainJob", md.get("namespace") or None))
        if FINALIZER not in finalizers and in_use:
            self._set(cluster, obj, [*finalizers, FINALIZER])
        elif md.get("deletionTimestamp") and not in_use and FINALIZER in finalizers:
            self._set(cluster, obj, [f for f in finalizers if f != FINALIZER])

    @staticmethod
    def _set(cluster, obj: dict, finalizers: list[str]) -> None:
        if finalizers:
            obj["metadata"]["finalizers"] = finalizers
        else:
            obj["metadata"].pop("finalizers", None)
        cluster.update(obj)
