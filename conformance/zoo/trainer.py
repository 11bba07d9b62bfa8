"""Trainer v2 bugs: nproc resolution and the MPI launcher/node topology."""

from __future__ import annotations

from functools import partial

from reconciler.trainer import runtimes
from reconciler.trainer.info import gpu_count, resources_per_node
from reconciler.trainer.plugins import common, mpi, torch

from .variants import Variant, patched, swapped_plugin

# ------------------------------------------------------------------ torch nproc

_real_resolve_nproc = torch.resolve_nproc


def _nproc_auto_left_to_torchrun(info, trainjob, profile):
    """``auto`` without GPUs is passed through, so torchrun starts one process per *host* CPU."""
    explicit = common.trainer_spec(trainjob).get("numProcPerNode")
    if explicit in (None, "auto") and gpu_count(resources_per_node(info, trainjob)) == 0:
        return "auto"
    return _real_resolve_nproc(info, trainjob, profile)


_real_cpu_count = torch.cpu_count


def _cpu_count_limits_first(resources, prefer=("requests", "limits")):
    """Limits are read before requests (v2.0's order) in a generation that reads requests first."""
    if prefer == ("requests", "limits"):
        prefer = ("limits", "requests")
    return _real_cpu_count(resources, prefer)


# ------------------------------------------------------------------ MPI topology

def _validate_without_topology_check(info, trainjob, profile):
    return [e for e in mpi.validate(info, trainjob, profile) if e.detail != mpi.TOPOLOGY_MESSAGE]


def _validate_with_runtime_numnodes(info, trainjob, profile):
    """A TrainJob without numNodes is checked with the runtime's mlPolicy.numNodes instead of 1."""
    trainer = trainjob.get("spec", {}).get("trainer")
    if trainer is not None and trainer.get("numNodes") is None and info.ml_policy.get("numNodes") is not None:
        trainjob = {**trainjob, "spec": {**trainjob["spec"], "trainer": {**trainer, "numNodes": info.ml_policy["numNodes"]}}}
    return mpi.validate(info, trainjob, profile)


def _enforce_workers_equal_numnodes(info, trainjob, profile):
    """With runLauncherAsNode the node job gets numNodes workers, forgetting the launcher is one."""
    mpi.enforce(info, trainjob, profile)
    num_nodes = common.trainer_spec(trainjob).get("numNodes")
    node = info.pod_set(mpi.NODE)
    if num_nodes is not None and node is not None and (info.ml_policy.get("mpi") or {}).get("runLauncherAsNode") is True:
        node.count = num_nodes


VARIANTS = [
    Variant("torch-nproc-auto-host-cpus", "trainer",
            bug='nproc "auto" on a CPU-only node is left to torchrun, which starts one process per host CPU',
            seed="kubeflow/trainer#2407 (fixed by #2492)",
            applied=partial(patched, torch, "resolve_nproc", _nproc_auto_left_to_torchrun)),
    Variant("torch-nproc-limits-before-requests", "trainer",
            bug="the CPU fallback reads limits before requests in the requests-first generations (v2.1+, #2832)",
            seed="kubeflow/trainer#2832 (order switched from #2492's limits-first)",
            applied=partial(patched, torch, "cpu_count", _cpu_count_limits_first)),
    Variant("mpi-no-topology-check", "trainer",
            bug="a runLauncherAsNode runtime without replicatedJobs named launcher and node is accepted for numNodes >= 2",
            seed="kubeflow/trainer#2550 (fixed by #2551)",
            applied=partial(swapped_plugin, runtimes.PLUGINS, mpi.PLUGIN, validate=_validate_without_topology_check)),
    Variant("mpi-topology-check-reads-runtime-numnodes", "trainer",
            bug="the topology check fires on the runtime's mlPolicy.numNodes when the TrainJob sets none",
            seed="kubeflow/trainer#2551 (only the TrainJob's numNodes counts)",
            applied=partial(swapped_plugin, runtimes.PLUGINS, mpi.PLUGIN, validate=_validate_with_runtime_numnodes)),
    Variant("mpi-workers-numnodes-with-launcher-as-node", "trainer",
            bug="with runLauncherAsNode the node job gets numNodes workers instead of numNodes-1",
            seed="kubeflow/trainer#2548 (numNodes 10 → 1 launcher + 9 workers)",
            applied=partial(swapped_plugin, runtimes.PLUGINS, mpi.PLUGIN, enforce=_enforce_workers_equal_numnodes)),
]
