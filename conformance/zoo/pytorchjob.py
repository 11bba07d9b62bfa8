"""Training Operator v1 PyTorchJob bugs from the operator's history: WORLD_SIZE as a replica count,
RANK as a process rank, and ExitCode retrying every non-zero exit."""

from __future__ import annotations

from functools import partial

from reconciler.pytorchjob import controller, env

from .variants import Variant, patched


def _nproc_ignored(spec: dict) -> int:
    """Before kubeflow/trainer#1840 there was no nprocPerNode: WORLD_SIZE was the replica count."""
    return 1


def _global_process_rank(spec: dict, replica_type: str, index: int) -> int:
    """RANK (and PET_NODE_RANK) as the global rank of the node's first process, node rank x nprocPerNode -
    what #1872 asked for; torchrun then gets a node rank past nnodes."""
    node = index + 1 if replica_type.lower() == "worker" else index
    return node * env.nproc_per_node_int(spec)


def _every_nonzero_retryable(code: int) -> bool:
    """ExitCode restarts on any non-zero exit, as if 1-127 were not permanent errors."""
    return code != 0


VARIANTS = [
    Variant("pytorchjob-world-size-ignores-nproc", "pytorchjob",
            bug="WORLD_SIZE is the number of Master + Worker replicas, whatever nprocPerNode says",
            seed="kubeflow/trainer#1790 (fixed by #1840: WORLD_SIZE = replicas x nprocPerNode); #1947",
            applied=partial(patched, env, "nproc_per_node_int", _nproc_ignored)),
    Variant("pytorchjob-rank-is-process-rank", "pytorchjob",
            bug="RANK/PET_NODE_RANK are the node's first global process rank (node rank x nprocPerNode), not the node rank",
            seed="kubeflow/trainer#1872 (ranks only 0-1 with 8 GPUs per pod), #1836; envvar.go sets the node rank",
            applied=partial(patched, env, "node_rank", _global_process_rank)),
    Variant("pytorchjob-exitcode-every-nonzero-retryable", "pytorchjob",
            bug="restartPolicy ExitCode recreates the pod for any non-zero exit code, so exit 1 never fails the job",
            seed="common_types.go RestartPolicyExitCode (1-127 permanent, 128-255 retryable); train_util.IsRetryableExitCode",
            applied=partial(patched, controller, "is_retryable_exit_code", _every_nonzero_retryable)),
]
