"""``ValidateMPIJob`` (pkg/apis/kubeflow/validation/validation.go, v0.6.0), run by the controller.

v0.6.0 has no admission webhook: the controller defaults its copy of the MPIJob, skips one managed
by another controller, then validates. Errors are not a denial: the MPIJob stays stored, the
controller records a Warning Event ``ValidationError`` with ``Found validation errors: <aggregate>``
(cut at 1024 characters) and creates nothing (shared/reference/kubeflow-v1-mpi-operator.md B.3, M18).

Checks, in upstream's order: the longest worker hostname ``<name>-worker-<max(replicas,1)-1>`` is a
DNS-1035 label; ``mpiReplicaSpecs`` present (else stop), Launcher present with replicas, restartPolicy
``Never``/``OnFailure`` and a container, replicas 1; Worker (when present) the same and replicas >= 1;
slotsPerWorker present and >= 0; cleanPodPolicy ``All``/``None``/``Running``; ttl, activeDeadlineSeconds
and backoffLimit >= 0; managedBy one of two controllers; sshAuthMountPath set; mpiImplementation
``Intel``/``MPICH``/``OpenMPI``. Supported-value lists are sorted (``sets.String.List()``).
"""

from __future__ import annotations

from ..errors import NOT_SUPPORTED, REQUIRED, FieldError, _aggregate, invalid
from ..jobset.validation import dns1035_label
from . import keys

_RESTART_POLICIES = ("Never", "OnFailure")
_CLEAN_POLICIES = (keys.CLEAN_ALL, keys.CLEAN_NONE, keys.CLEAN_RUNNING)
_IMPLEMENTATIONS = (keys.INTEL, keys.MPICH, keys.OPENMPI)
_MANAGED_BY = (keys.KUBEFLOW_CONTROLLER, keys.MULTIKUEUE_CONTROLLER)
NONNEGATIVE = "must be greater than or equal to 0"  # apivalidation.ValidateNonnegativeField


def validate(job: dict) -> list[FieldError]:
    """The errors of a *defaulted* MPIJob (see :mod:`.defaults`), in upstream's order."""
    spec = job.get("spec") or {}
    return _name(job) + _spec(spec)


def event_message(errors: list[FieldError]) -> str:
    """``truncateMessage(fmt.Sprintf("Found validation errors: %v", errs.ToAggregate()))``."""
    return truncate(f"Found validation errors: {_aggregate([str(e) for e in errors])}")


def truncate(message: str) -> str:
    """truncateMessage: at most 1024 characters, the last three ``...``."""
    if len(message) <= keys.EVENT_MESSAGE_LIMIT:
        return message
    return message[:keys.EVENT_MESSAGE_LIMIT - 3] + "..."


def _not_supported(path: str, value, supported: tuple[str, ...]) -> FieldError:
    listed = ", ".join(f'"{s}"' for s in supported)
    return FieldError(NOT_SUPPORTED, path, f"supported values: {listed}", value)


def _name(job: dict) -> list[FieldError]:
    name = (job.get("metadata") or {}).get("name", "")
    worker = replica_spec((job.get("spec") or {}).get("mpiReplicaSpecs"), keys.WORKER)
    replicas = 1
    if worker is not None and (worker.get("replicas") or 0) > 0:
        replicas = worker["replicas"]
    hostname = f"{name}-worker-{replicas - 1}"
    problems = dns1035_label(hostname)
    if not problems:
        return []
    detail = f'will not able to create pod and service with invalid DNS label "{hostname}": {", ".join(problems)}'
    return [invalid("metadata.name", name, detail)]


def _spec(spec: dict) -> list[FieldError]:
    errors = _replica_specs(spec.get("mpiReplicaSpecs"), "spec.mpiReplicaSpecs")
    slots = spec.get("slotsPerWorker")
    if slots is None:
        errors.append(FieldError(REQUIRED, "spec.slotsPerWorker", "must have number of slots per worker"))
    elif slots < 0:
        errors.append(invalid("spec.slotsPerWorker", slots, NONNEGATIVE))
    errors += _run_policy(spec.get("runPolicy") or {}, "spec.runPolicy")
    if not spec.get("sshAuthMountPath"):
        errors.append(FieldError(REQUIRED, "spec.sshAuthMountPath", "must have a mount path for SSH credentials"))
    implementation = spec.get("mpiImplementation") or ""
    if implementation not in _IMPLEMENTATIONS:
        errors.append(_not_supported("spec.mpiImplementation", implementation, _IMPLEMENTATIONS))
    return errors


def _run_policy(policy: dict, path: str) -> list[FieldError]:
    errors = []
    clean = policy.get("cleanPodPolicy")
    if clean is None:
        errors.append(FieldError(REQUIRED, f"{path}.cleanPodPolicy", "must have clean Pod policy"))
    elif clean not in _CLEAN_POLICIES:
        errors.append(_not_supported(f"{path}.cleanPodPolicy", clean, _CLEAN_POLICIES))
    for field in ("ttlSecondsAfterFinished", "activeDeadlineSeconds", "backoffLimit"):
        value = policy.get(field)
        if value is not None and value < 0:
            errors.append(invalid(f"{path}.{field}", value, NONNEGATIVE))
    managed_by = policy.get("managedBy")
    if managed_by is not None and managed_by not in _MANAGED_BY:
        errors.append(_not_supported(f"{path}.managedBy", managed_by, _MANAGED_BY))
    return errors


def _replica_specs(specs, path: str) -> list[FieldError]:
    if specs is None:
        return [FieldError(REQUIRED, path, "must have replica specs")]
    errors = []
    launcher, worker = replica_spec(specs, keys.LAUNCHER), replica_spec(specs, keys.WORKER)
    launcher_path, worker_path = f"{path}[{keys.LAUNCHER}]", f"{path}[{keys.WORKER}]"
    if launcher is None:
        errors.append(FieldError(REQUIRED, launcher_path, f"must have {keys.LAUNCHER} replica spec"))
    else:
        errors += _replica(launcher, launcher_path)
        if launcher.get("replicas") is not None and launcher["replicas"] != 1:
            errors.append(invalid(f"{launcher_path}.replicas", launcher["replicas"], "must be 1"))
    if worker is not None:
        errors += _replica(worker, worker_path)
        if worker.get("replicas") is not None and worker["replicas"] <= 0:
            errors.append(invalid(f"{worker_path}.replicas", worker["replicas"], "must be greater than or equal to 1"))
    return errors


def replica_spec(specs: dict, replica_type: str) -> dict | None:
    """``mpiReplicaSpecs[type]``: a null or absent entry is a nil *ReplicaSpec."""
    replica = (specs or {}).get(replica_type)
    return replica if isinstance(replica, dict) else None


def _replica(replica: dict, path: str) -> list[FieldError]:
    errors = []
    if replica.get("replicas") is None:
        errors.append(FieldError(REQUIRED, f"{path}.replicas", "must define number of replicas"))
    restart_policy = replica.get("restartPolicy") or ""
    if restart_policy not in _RESTART_POLICIES:
        errors.append(_not_supported(f"{path}.restartPolicy", restart_policy, _RESTART_POLICIES))
    containers = ((replica.get("template") or {}).get("spec") or {}).get("containers")
    if not containers:
        errors.append(FieldError(REQUIRED, f"{path}.template.spec.containers", "must define at least one container"))
    return errors
