"""What the MPI Operator v0.6.0 creates for an MPIJob (pkg/controller/mpi_job_controller.go), as pure
functions of the *defaulted* MPIJob (see :mod:`.defaults`).

Facts: shared/reference/kubeflow-v1-mpi-operator.md B.1 (ConfigMap, hostfile, discover_hosts.sh,
Service) and B.2 (worker Pods, launcher Job, env, SSH Secret and volumes); vectors M1-M9.

* ConfigMap ``<job>-config`` (label ``app: <job>``): ``hostfile`` - the launcher first when
  runLauncherAsWorker, then workers 0..replicas-1, host ``<pod>.<job>.<ns>.svc``, ``<host> slots=<n>``
  for OpenMPI, ``<host>:<n>`` for Intel and MPICH; ``discover_hosts.sh`` - ``#!/bin/sh``, the launcher
  (runLauncherAsWorker), then ``echo <host>`` per *Running* worker pod, by name.
* Service ``<job>``: headless, no ports, selecting operator-name + job-name (launcher and workers).
* Secret ``<job>-ssh``, type ``kubernetes.io/ssh-auth``: an ECDSA P-521 key, PEM ``EC PRIVATE KEY``,
  and its ``authorized_keys`` line (the key maker Trainer's MPI plugin uses; upstream's too).
* Worker Pod ``<job>-worker-<i>``: the Worker template, labels operator-name/job-name/job-role worker/
  replica-index, hostname = the pod name, subdomain ``<job>``, DNS search ``<job>.<ns>.svc.cluster.local``
  appended, ``ClusterFirstWithHostNet`` under hostNetwork, the replica restartPolicy, command
  ``/usr/sbin/sshd -De`` when the first container has neither command nor args, env ``K_MPI_JOB_ROLE=worker``
  after the user's, the SSH volume on the first container.
* Launcher Job ``<job>-launcher`` (label ``app``): ttl/activeDeadlineSeconds/backoffLimit from runPolicy
  as given (nil -> the Job API's own default), ``suspend: true`` when suspended; its pod template carries
  the MPIJob's controller ownerReference (the Job controller does not copy it to pods), labels with
  job-role launcher, hostname ``<job>-launcher``, no DNS search; env ``K_MPI_JOB_ROLE=launcher``, the
  implementation's env and slots env, then - unless runLauncherAsWorker (#628) - ``NVIDIA_VISIBLE_DEVICES``
  and ``NVIDIA_DRIVER_CAPABILITIES`` with no value; volumes SSH then ``mpi-job-config``.
* The SSH secret volume has ``defaultMode: 0600`` only when mounted at ``/root/.ssh``.

Every list the operator extends is appended to (``append``), so a name the user already set stays and
is followed by the operator's.
"""

from __future__ import annotations

import base64

from .. import meta
from ..trainer.plugins.mpi import new_ssh_key
from . import keys
from .validation import replica_spec

_SSH_ITEMS = [{"key": keys.SSH_PRIVATE_KEY, "path": "id_rsa"}, {"key": keys.SSH_PUBLIC_KEY, "path": "id_rsa.pub"},
              {"key": keys.SSH_PUBLIC_KEY, "path": "authorized_keys"}]
_CONFIG_ITEMS = [{"key": keys.HOSTFILE, "path": keys.HOSTFILE, "mode": 0o444},
                 {"key": keys.DISCOVER_HOSTS, "path": keys.DISCOVER_HOSTS, "mode": 0o555}]
SSHD_COMMAND = ["/usr/sbin/sshd", "-De"]


def name(job: dict) -> str:
    return job["metadata"]["name"]


def namespace(job: dict) -> str:
    return job["metadata"].get("namespace", "")


def launcher_name(job: dict) -> str:
    return name(job) + keys.LAUNCHER_SUFFIX


def worker_name(job: dict, index: int) -> str:
    return f"{name(job)}{keys.WORKER_SUFFIX}-{index}"


def worker_replicas(job: dict) -> int:
    """workerReplicas: the Worker spec's replicas, 0 without a Worker spec."""
    worker = replica_spec(job["spec"].get("mpiReplicaSpecs"), keys.WORKER)
    return (worker or {}).get("replicas") or 0


def run_launcher_as_worker(job: dict) -> bool:
    return job["spec"].get("runLauncherAsWorker") is True


def suspended(job: dict) -> bool:
    return (job["spec"].get("runPolicy") or {}).get("suspend") is True


def default_labels(job: dict, role: str) -> dict:
    return {keys.OPERATOR_NAME_LABEL: keys.OPERATOR_NAME, keys.JOB_NAME_LABEL: name(job), keys.JOB_ROLE_LABEL: role}


def _owned(job: dict, obj_name: str) -> dict:
    return {"name": obj_name, "namespace": namespace(job), "labels": {"app": name(job)},
            "ownerReferences": [meta.controller_ref(job)]}


def host(job: dict, pod_name: str) -> str:
    return f"{pod_name}.{name(job)}.{namespace(job)}.svc"


# ---------------------------------------------------------------------- ConfigMap

def hostfile(job: dict) -> str:
    """newConfigMap's ``hostfile``: launcher first under runLauncherAsWorker, then every worker."""
    slots = job["spec"]["slotsPerWorker"]
    hosts = [launcher_name(job)] if run_launcher_as_worker(job) else []
    hosts += [worker_name(job, i) for i in range(worker_replicas(job))]
    implementation = job["spec"]["mpiImplementation"]
    if implementation == keys.OPENMPI:
        return "".join(f"{host(job, h)} slots={slots}\n" for h in hosts)
    if implementation in (keys.INTEL, keys.MPICH):
        return "".join(f"{host(job, h)}:{slots}\n" for h in hosts)
    return ""


def discover_hosts(job: dict, running_workers: list[dict]) -> str:
    """updateDiscoverHostsInConfigMap: ``echo`` lines for the launcher (runLauncherAsWorker) and the
    Running worker pods, sorted by name; the pod's own namespace names its host."""
    lines = ["#!/bin/sh\n"]
    if run_launcher_as_worker(job):
        lines.append(f"echo {host(job, launcher_name(job))}\n")
    for pod in sorted(running_workers, key=lambda p: p["metadata"]["name"]):
        md = pod["metadata"]
        lines.append(f"echo {md['name']}.{name(job)}.{md.get('namespace', '')}.svc\n")
    return "".join(lines)


def config_map(job: dict, running_workers: list[dict]) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _owned(job, name(job) + keys.CONFIG_SUFFIX),
            "data": {keys.DISCOVER_HOSTS: discover_hosts(job, running_workers), keys.HOSTFILE: hostfile(job)}}


# ---------------------------------------------------------------------- Service, Secret

def service_selector(job: dict) -> dict:
    return {keys.OPERATOR_NAME_LABEL: keys.OPERATOR_NAME, keys.JOB_NAME_LABEL: name(job)}


def service(job: dict) -> dict:
    """newJobService: one headless Service for launcher and workers, named after the job, no ports."""
    return {"apiVersion": "v1", "kind": "Service", "metadata": _owned(job, name(job)),
            "spec": {"clusterIP": "None", "selector": service_selector(job)}}


def ssh_secret(job: dict) -> dict:
    private_pem, public_line = new_ssh_key()
    return {"apiVersion": "v1", "kind": "Secret", "metadata": _owned(job, name(job) + keys.SSH_SUFFIX),
            "type": "kubernetes.io/ssh-auth",
            "data": {keys.SSH_PRIVATE_KEY: base64.b64encode(private_pem).decode(),
                     keys.SSH_PUBLIC_KEY: base64.b64encode(public_line).decode()}}


# ---------------------------------------------------------------------- pods

def _setup_ssh(pod_spec: dict, job: dict) -> None:
    """setupSSHOnPod: the ``ssh-auth`` volume (mode 0600 only at /root/.ssh) on the first container."""
    mount_path = job["spec"]["sshAuthMountPath"]
    secret = {"secretName": name(job) + keys.SSH_SUFFIX, "items": meta.clone(_SSH_ITEMS)}
    if mount_path == keys.ROOT_SSH_PATH:
        secret["defaultMode"] = 0o600
    pod_spec.setdefault("volumes", []).append({"name": keys.SSH_VOLUME, "secret": secret})
    pod_spec["containers"][0].setdefault("volumeMounts", []).append({"name": keys.SSH_VOLUME, "mountPath": mount_path})


def _restart_policy(pod_spec: dict, replica: dict) -> None:
    """setRestartPolicy: the replica's policy, ``ExitCode`` -> ``Never``."""
    policy = replica["restartPolicy"]  # defaulted, and validated to Never or OnFailure
    pod_spec["restartPolicy"] = "Never" if policy == "ExitCode" else policy


def _env(name_: str, value: str | None = None) -> dict:
    return {"name": name_} if value is None else {"name": name_, "value": value}


def worker_pod(job: dict, index: int) -> dict:
    """newWorker."""
    replica = replica_spec(job["spec"]["mpiReplicaSpecs"], keys.WORKER)
    template = meta.clone(replica.get("template") or {})
    md, spec = template.get("metadata") or {}, template.get("spec") or {}
    pod_name = worker_name(job, index)
    labels = {**(md.get("labels") or {}), **default_labels(job, keys.ROLE_WORKER),
              keys.REPLICA_INDEX_LABEL: str(index)}
    spec["hostname"] = pod_name
    spec["subdomain"] = name(job)
    if spec.get("hostNetwork"):
        spec["dnsPolicy"] = "ClusterFirstWithHostNet"
    search = f"{name(job)}.{namespace(job)}.svc.cluster.local"
    spec["dnsConfig"] = spec.get("dnsConfig") or {}
    spec["dnsConfig"]["searches"] = [*(spec["dnsConfig"].get("searches") or []), search]
    _restart_policy(spec, replica)
    container = spec["containers"][0]
    if not container.get("command") and not container.get("args"):
        container["command"] = list(SSHD_COMMAND)
    container["env"] = [*(container.get("env") or []), _env(keys.ROLE_ENV, keys.ROLE_WORKER)]
    _setup_ssh(spec, job)
    metadata = {"name": pod_name, "namespace": namespace(job), "labels": labels}
    if md.get("annotations"):
        metadata["annotations"] = md["annotations"]
    metadata["ownerReferences"] = [meta.controller_ref(job)]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


def launcher_env(job: dict) -> list[dict]:
    """What newLauncherPodTemplate appends to the first container's env, in order."""
    implementation = job["spec"]["mpiImplementation"]
    env = [_env(keys.ROLE_ENV, keys.ROLE_LAUNCHER)]
    env += [_env(n, v) for n, v in keys.IMPLEMENTATION_ENV.get(implementation, [])]
    if implementation in keys.SLOTS_ENV:
        env.append(_env(keys.SLOTS_ENV[implementation], str(job["spec"]["slotsPerWorker"])))
    if not run_launcher_as_worker(job):
        env += [_env(n) for n in keys.NVIDIA_ENV]
    return env


def launcher_pod_template(job: dict) -> tuple[dict, bool]:
    """newLauncherPodTemplate, and whether the template set a restartPolicy of its own (upstream then
    records the Warning Event ``SetPodTemplateRestartPolicy``)."""
    replica = replica_spec(job["spec"]["mpiReplicaSpecs"], keys.LAUNCHER)
    template = meta.clone(replica.get("template") or {})
    md, spec = template.get("metadata") or {}, template.get("spec") or {}
    labels = {**(md.get("labels") or {}), **default_labels(job, keys.ROLE_LAUNCHER)}
    spec["hostname"] = launcher_name(job)
    spec["subdomain"] = name(job)
    if spec.get("hostNetwork"):
        spec["dnsPolicy"] = "ClusterFirstWithHostNet"
    container = spec["containers"][0]
    container["env"] = [*(container.get("env") or []), *launcher_env(job)]
    _setup_ssh(spec, job)
    overridden = bool(spec.get("restartPolicy"))
    _restart_policy(spec, replica)
    spec["volumes"].append({"name": keys.CONFIG_VOLUME, "configMap": {
        "name": name(job) + keys.CONFIG_SUFFIX, "items": meta.clone(_CONFIG_ITEMS)}})
    container["volumeMounts"].append({"name": keys.CONFIG_VOLUME, "mountPath": keys.CONFIG_MOUNT_PATH})
    metadata = {"labels": labels}
    if md.get("annotations"):
        metadata["annotations"] = md["annotations"]
    metadata["ownerReferences"] = [meta.controller_ref(job)]
    return {"metadata": metadata, "spec": spec}, overridden


def launcher_job(job: dict) -> tuple[dict, bool]:
    """newLauncherJob (and whether the pod template's restartPolicy was overridden)."""
    template, overridden = launcher_pod_template(job)
    run_policy = job["spec"].get("runPolicy") or {}
    spec = {k: run_policy[k] for k in ("ttlSecondsAfterFinished", "activeDeadlineSeconds", "backoffLimit")
            if run_policy.get(k) is not None}
    spec["template"] = template
    if suspended(job):
        spec["suspend"] = True
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": _owned(job, launcher_name(job)), "spec": spec}, overridden
