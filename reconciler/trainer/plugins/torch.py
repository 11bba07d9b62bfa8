"""Torch ML policy: torchrun's PET_* environment and the process count per node.

Facts (shared/reference/trainer-v2.md §3): env goes to container ``node`` of the trainer-ancestor
job; PET_MASTER_ADDR is ``<tj>-node-0-0.<tj>`` whatever the JobSet subdomain; port 29500; the
process count has three upstream generations (see :func:`resolve_nproc`).
"""

from __future__ import annotations

from ...errors import FieldError, invalid
from ...profiles import Profile
from ..framework import Plugin
from ..info import TRAINER, RuntimeInfo, cpu_count, gpu_count, resources_per_node
from . import common

NAME = "Torch"
MASTER_PORT = 29500
RESERVED_ENV = ("PET_NNODES", "PET_NPROC_PER_NODE", "PET_NODE_RANK", "PET_MASTER_ADDR", "PET_MASTER_PORT")
COMPLETION_INDEX_FIELD = "metadata.annotations['batch.kubernetes.io/job-completion-index']"


def _active(info: RuntimeInfo) -> bool:
    return "torch" in info.ml_policy


def validate(info: RuntimeInfo, trainjob: dict, profile: Profile) -> list[FieldError]:
    if not _active(info):
        return []
    trainer = common.trainer_spec(trainjob)
    nproc = trainer.get("numProcPerNode")
    errors = []
    if profile.torch_env_check_needs_nproc and nproc is None:
        return errors  # v2.0/v2.1 returned early here, so reserved envs slipped through
    if profile.int_or_string_nproc and isinstance(nproc, str) and nproc not in ("auto", "cpu", "gpu"):
        errors.append(invalid("spec.trainer.numProcPerNode", common.nproc_value(nproc, profile), "must have an int value or [auto cpu gpu]"))
    reserved = sorted({e.get("name") for e in trainer.get("env") or []} & set(RESERVED_ENV))
    if reserved:
        errors.append(invalid("spec.trainer.env", trainer["env"],
                              f"must not have reserved envs, invalid envs configured: [{' '.join(reserved)}]"))
    return errors


def resolve_nproc(info: RuntimeInfo, trainjob: dict, profile: Profile) -> int | str:
    """``PET_NPROC_PER_NODE`` before stringification.

    * v2.2+ (#3239): TrainJob int, else "auto"; "auto" without GPUs becomes max(1, ceil(cpu)),
      cpu = requests, else limits, of TrainJob resourcesPerNode or else the runtime node container.
    * v2.1 (#2832): runtime torch.numProcPerNode (default "auto"), overridden by the TrainJob;
      "cpu", or "auto" without GPUs, becomes max(1, ceil(cpu)); "gpu" and ints pass through.
    * v2.0 (#2492): only TrainJob resourcesPerNode counts, limits first (see ``_resolve_v20``).
    """
    trainer = common.trainer_spec(trainjob)
    if profile.torch_nproc == "v2.0":
        return _resolve_v20(info, trainjob)
    if profile.torch_nproc == "v2.1":
        nproc = info.ml_policy["torch"].get("numProcPerNode", "auto")
    else:
        nproc = "auto"
    if trainer.get("numProcPerNode") is not None:
        nproc = trainer["numProcPerNode"]
    resources = resources_per_node(info, trainjob)
    if nproc == "cpu" or (nproc == "auto" and gpu_count(resources) == 0):
        nproc = max(1, cpu_count(resources))
    return nproc


def _resolve_v20(info: RuntimeInfo, trainjob: dict) -> int | str:
    """v2.0: the CPU cap applies only with TrainJob resourcesPerNode; limits are tried first, and
    when they do not yield a CPU count the requests' result is taken instead (even if nil → 1)."""
    trainer = common.trainer_spec(trainjob)
    nproc = trainer.get("numProcPerNode", info.ml_policy["torch"].get("numProcPerNode", "auto"))
    resources = trainer.get("resourcesPerNode")
    if resources is None:
        return nproc

    def calc(resource_list: dict | None) -> tuple[int | str, bool]:
        if resource_list is None:
            return 1, False
        has_gpu = any("gpu" in name.lower() for name in resource_list)
        if nproc == "auto":
            use_cpu, fallback = not has_gpu, "auto"
        elif nproc == "cpu":
            use_cpu, fallback = "cpu" in resource_list, 1
        else:
            use_cpu, fallback = False, nproc
        if use_cpu:
            return max(1, cpu_count({"list": resource_list}, ("list",))), True
        return fallback, False

    result, used_cpu = calc(resources.get("limits"))
    if not used_cpu:
        result, _ = calc(resources.get("requests"))
    return result


def enforce(info: RuntimeInfo, trainjob: dict, profile: Profile) -> None:
    if not _active(info):
        return
    trainer = common.trainer_spec(trainjob)
    pod_set = info.by_ancestor(TRAINER)
    if pod_set is not None and trainer.get("numNodes") is not None:
        pod_set.count = trainer["numNodes"]
    # Upstream finds the trainer container only when the TrainJob has spec.trainer; without it no
    # PET_* env and no port are written (torch.go; seen live against Trainer v2.3.0).
    container = common.trainer_container(info) if trainjob.get("spec", {}).get("trainer") is not None else None
    if container is None:
        return
    common.apply_trainer_env(container, trainjob)
    name = trainjob["metadata"]["name"]
    common.upsert_env(container, [
        {"name": "PET_NNODES", "value": str(pod_set.count)},
        {"name": "PET_NPROC_PER_NODE", "value": str(resolve_nproc(info, trainjob, profile))},
        {"name": "PET_NODE_RANK", "valueFrom": {"fieldRef": {"fieldPath": COMPLETION_INDEX_FIELD}}},
        {"name": "PET_MASTER_ADDR", "value": f"{name}-node-0-0.{name}"},
        {"name": "PET_MASTER_PORT", "value": str(MASTER_PORT)},
    ])
    ports = container.setdefault("ports", [])
    if not any(p.get("containerPort") == MASTER_PORT for p in ports):
        ports.append({"containerPort": MASTER_PORT})


PLUGIN = Plugin(NAME, validate=validate, enforce=enforce)
