"""Runtime lookup and the plugin set, shared by the webhook and the controller."""

from __future__ import annotations

from .plugins import jobset, mpi, plainml, torch

GROUP = "trainer.kubeflow.org"
RUNTIME_KINDS = {(GROUP, "TrainingRuntime"), (GROUP, "ClusterTrainingRuntime")}

#: Order matters: ML policies set counts and env, then the JobSet plugin computes endpoints
#: (the MPI hostfile reads them) and finally builds the JobSet.
PLUGINS = [plainml.PLUGIN, torch.PLUGIN, mpi.PLUGIN, jobset.PLUGIN]


def lookup(cluster, trainjob: dict) -> dict | None:
    ref = trainjob["spec"]["runtimeRef"]
    if ref.get("kind") == "ClusterTrainingRuntime":
        return cluster.find(GROUP, "ClusterTrainingRuntime", "", ref["name"])
    return cluster.find(GROUP, "TrainingRuntime", trainjob["metadata"].get("namespace", ""), ref["name"])
