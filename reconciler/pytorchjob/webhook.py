"""The validating webhook ``validator.pytorchjob.training-operator.kubeflow.org``
(pkg/webhooks/pytorch/pytorchjob_webhook.go; shared/reference/kubeflow-v1-mpi-operator.md A.4).

It sees the object as sent (plus the CRD's ``suspend: false``): nothing is defaulted before it, so a
Master without ``replicas`` is refused. Checks, in upstream's order:

1. ``metadata.name`` is a DNS-1035 label (``should match: <errors joined by ",">``);
2. (v1.9, #2203) ``runPolicy.managedBy`` is ``kubeflow.org/training-operator`` or
   ``kueue.x-k8s.io/multikueue``;
3. with an ``elasticPolicy``: (v1.9, #2320) a Worker spec exists; a set ``elasticPolicy.nProcPerNode``
   is a deprecation warning, and an error next to ``spec.nprocPerNode``;
4. ``pytorchReplicaSpecs`` is given; per replica type: the key is ``Master`` or ``Worker`` (case
   matters), it has containers, each with an image, one named ``pytorch``; Master ``replicas`` is 1;
   (v1.9, #2320) a Worker's ``replicas``, when set, is at least 1.

Upstream walks the replica specs in Go map order, so with errors in both replica types their order
is random; here they come in key order. Not modelled: the update path (``ValidateUpdate`` compares
the new object with itself - ``oldJob := newObj`` - so managedBy's immutability never fires), and the
nil replica spec that would panic the loop (the CRD schema refuses ``null`` first).
"""

from __future__ import annotations

from .. import meta
from ..errors import FORBIDDEN, NOT_SUPPORTED, REQUIRED, FieldError, invalid
from ..jobset.validation import dns1035_label
from . import keys
from .defaults import containers

REPLICAS_PATH = "spec.pytorchReplicaSpecs"
DEPRECATED_NPROC = "spec.elasticPolicy.nProcPerNode is deprecated, use spec.nprocPerNode instead"
#: sets.New(MultiKueueController, KubeflowJobsController).UnsortedList(): Go map order, random per
#: call upstream; listed here as the reference (and the apimachinery rendering in A.4) shows them.
MANAGED_BY_VALUES = (keys.MULTIKUEUE_CONTROLLER, keys.KUBEFLOW_JOBS_CONTROLLER)


def validate(job: dict, cluster) -> list[FieldError]:
    errors: list[FieldError] = []
    name = (job.get("metadata") or {}).get("name", "")
    name_errors = dns1035_label(name)
    if name_errors:
        errors.append(invalid("metadata.name", name, "should match: " + ",".join(name_errors)))
    spec = job.get("spec") or {}
    if cluster.profile.pytorchjob_managed_by:
        errors += _managed_by(spec.get("runPolicy") or {})
    errors += _elastic(job, spec, cluster)
    errors += _replica_specs(spec.get("pytorchReplicaSpecs"), cluster.profile.pytorchjob_worker_checks)
    return errors


def _managed_by(run_policy: dict) -> list[FieldError]:
    manager = run_policy.get("managedBy")
    if manager is None or manager in MANAGED_BY_VALUES:
        return []
    supported = ", ".join(f'"{v}"' for v in MANAGED_BY_VALUES)
    return [FieldError(NOT_SUPPORTED, "spec.runPolicy.managedBy", f"supported values: {supported}", manager)]


def _elastic(job: dict, spec: dict, cluster) -> list[FieldError]:
    elastic = spec.get("elasticPolicy")
    if elastic is None:
        return []
    errors = []
    replicas = spec.get("pytorchReplicaSpecs")
    if cluster.profile.pytorchjob_worker_checks and not (isinstance(replicas, dict) and keys.WORKER in replicas):
        errors.append(FieldError(REQUIRED, f"{REPLICAS_PATH}[{keys.WORKER}]", "must be configured if elastic policy is used"))
    if isinstance(elastic, dict) and elastic.get("nProcPerNode") is not None:
        cluster.warnings.append(f"{meta.describe(job)}: {DEPRECATED_NPROC}")
        if spec.get("nprocPerNode") is not None:
            errors.append(FieldError(FORBIDDEN, "spec.elasticPolicy.nProcPerNode", "must not be used with spec.nprocPerNode"))
    return errors


def _replica_specs(replicas, worker_checks: bool) -> list[FieldError]:
    if replicas is None:
        return [FieldError(REQUIRED, REPLICAS_PATH, "must be required")]
    errors = []
    for replica_type in sorted(replicas) if isinstance(replicas, dict) else []:
        replica = replicas[replica_type] if isinstance(replicas[replica_type], dict) else {}
        role = f"{REPLICAS_PATH}[{replica_type}]"
        containers_path = f"{role}.template.spec.containers"
        if replica_type not in keys.REPLICA_TYPES:
            supported = ", ".join(f'"{t}"' for t in keys.REPLICA_TYPES)
            errors.append(FieldError(NOT_SUPPORTED, role, f"supported values: {supported}", replica_type))
        found = containers(replica)
        if not found:
            errors.append(FieldError(REQUIRED, containers_path, "must be specified"))
        for index, container in enumerate(found):
            if not container.get("image"):
                errors.append(FieldError(REQUIRED, f"{containers_path}[{index}].image", "must be required"))
        if not any(c.get("name") == keys.DEFAULT_CONTAINER for c in found):
            errors.append(FieldError(REQUIRED, containers_path,
                                     f"must have at least one container with name {keys.DEFAULT_CONTAINER}"))
        count = replica.get("replicas")
        if replica_type == keys.MASTER:
            if count != 1:
                errors.append(FieldError(FORBIDDEN, f"{role}.replicas", "must be 1"))
        elif worker_checks and count is not None and count < 1:
            errors.append(FieldError(FORBIDDEN, f"{role}.replicas", "must be at least 1"))
    return errors
