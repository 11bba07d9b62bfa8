"""Validating webhooks of Kubeflow Trainer: TrainJob, TrainingRuntime, ClusterTrainingRuntime.

Their denials are HTTP 403 (``BeForbiddenError`` upstream), unlike CRD schema/CEL errors (422).
"""

from __future__ import annotations

from ..errors import FieldError, invalid, plain
from . import gotyped, runtimes
from .framework import run_validate
from .info import ANCESTOR_CONTAINERS, ANCESTOR_LABEL, new_runtime_info

TRAINJOB_WEBHOOK = "validator.trainjob.trainer.kubeflow.org"
TRAININGRUNTIME_WEBHOOK = "validator.trainingruntime.trainer.kubeflow.org"
CLUSTERTRAININGRUNTIME_WEBHOOK = "validator.clustertrainingruntime.trainer.kubeflow.org"


def validate_trainjob(trainjob: dict, cluster) -> list[FieldError]:
    ref = (trainjob.get("spec") or {}).get("runtimeRef") or {}
    kind, group, name = ref.get("kind"), ref.get("apiGroup"), ref.get("name")
    if (group, kind) not in runtimes.RUNTIME_KINDS:
        # schema.GroupKind.String(): "<Kind>.<group>", the Kind alone when the group is empty.
        return [plain(f"unsupported runtime: {kind or ''}{'.' + group if group else ''}")]
    runtime = runtimes.lookup(cluster, trainjob)
    if runtime is None:
        if cluster.profile.field_values_json:  # printed as Go's JSON of RuntimeRef (field order), seen live
            ref = gotyped.GoValue("runtimeRef", ref)
        if kind == "ClusterTrainingRuntime":
            # Upstream spells this path with a capital R. The NotFound text comes from the manager's
            # cache reader, which names the Kind, not the resource (seen live against Trainer v2.3.0).
            return [invalid("spec.RuntimeRef", ref, f'ClusterTrainingRuntime.trainer.kubeflow.org "{name}" not found: '
                            "specified clusterTrainingRuntime must be created before the TrainJob is created")]
        return [invalid("spec.runtimeRef", ref, f'TrainingRuntime.trainer.kubeflow.org "{name}" not found: '
                        "specified trainingRuntime must be created before the TrainJob is created")]
    return run_validate(runtimes.PLUGINS, new_runtime_info(runtime), trainjob, cluster.profile)


def validate_runtime(runtime: dict, cluster) -> list[FieldError]:
    """Every ancestor-labelled replicatedJob has replicas 1 and the ancestor's container."""
    errors = []
    # A runtime without spec is Go's zero value: nothing to check.
    for i, rj in enumerate((((runtime.get("spec") or {}).get("template") or {}).get("spec") or {}).get("replicatedJobs") or []):
        template = rj.get("template") or {}
        ancestor = ((template.get("metadata") or {}).get("labels") or {}).get(ANCESTOR_LABEL)
        if ancestor not in ANCESTOR_CONTAINERS:
            continue
        path = f"spec.template.spec.replicatedJobs[{i}]"
        if rj.get("replicas", 1) != 1:
            errors.append(invalid(f"{path}.replicas", rj.get("replicas"), "always must be 1"))
        containers = (((template.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers") or []
        if not any(c.get("name") == ANCESTOR_CONTAINERS[ancestor] for c in containers):
            # Upstream hands the []Container to field.Invalid, which prints it as JSON (seen live).
            errors.append(invalid(f"{path}.template.spec.template.spec.containers", gotyped.Containers(containers),
                                  f"must contain the required container for the ancestor: {ancestor}"))
    return errors
