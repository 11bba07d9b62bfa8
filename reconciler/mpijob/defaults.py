"""``SetDefaults_MPIJob`` (pkg/apis/kubeflow/v2beta1/default.go, v0.6.0).

The controller runs it on its own copy at the start of every sync (``scheme.Scheme.Default``); it is
never written back - only status is - so a stored MPIJob carries the CRD defaults alone.
Facts: shared/reference/kubeflow-v1-mpi-operator.md B.3 (defaults table; M17).

| field                       | default                      |
|-----------------------------|------------------------------|
| runPolicy.cleanPodPolicy    | ``None`` (the type comment says Running; the code says None) |
| slotsPerWorker              | 1                            |
| sshAuthMountPath            | ``/root/.ssh``               |
| mpiImplementation           | ``OpenMPI``                  |
| launcherCreationPolicy      | ``AtStartup``                |
| Launcher                    | restartPolicy ``OnFailure``, replicas 1 |
| Worker                      | restartPolicy ``Never``, replicas **0** |

Go's zero values decide "unset": an empty string counts as unset for the string fields, a
missing pointer for the others. ``runLauncherAsWorker`` is not defaulted here (read as false).
"""

from __future__ import annotations

from . import keys


def set_defaults(job: dict) -> dict:
    """Default ``job`` in place (the caller passes its own copy) and return it."""
    spec = job.setdefault("spec", {})
    run_policy = spec.get("runPolicy")
    if not isinstance(run_policy, dict):
        run_policy = spec["runPolicy"] = {}
    if run_policy.get("cleanPodPolicy") is None:
        run_policy["cleanPodPolicy"] = keys.CLEAN_NONE
    if spec.get("slotsPerWorker") is None:
        spec["slotsPerWorker"] = 1
    if not spec.get("sshAuthMountPath"):
        spec["sshAuthMountPath"] = keys.ROOT_SSH_PATH
    if not spec.get("mpiImplementation"):
        spec["mpiImplementation"] = keys.OPENMPI
    if not spec.get("launcherCreationPolicy"):
        spec["launcherCreationPolicy"] = keys.AT_STARTUP
    specs = spec.get("mpiReplicaSpecs") or {}
    _replica(specs.get(keys.LAUNCHER), "OnFailure", 1)
    _replica(specs.get(keys.WORKER), "Never", 0)
    return job


def _replica(replica: dict | None, restart_policy: str, replicas: int) -> None:
    # A map value of null decodes to a nil *ReplicaSpec, which the defaulter skips.
    if not isinstance(replica, dict):
        return
    if not replica.get("restartPolicy"):
        replica["restartPolicy"] = restart_policy
    if replica.get("replicas") is None:
        replica["replicas"] = replicas
