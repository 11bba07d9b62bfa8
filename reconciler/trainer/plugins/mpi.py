"""MPI ML policy: launcher/node topology check, worker counts, hostfile, SSH auth, OpenMPI env.

Facts: shared/reference/trainer-v2.md §1-2 (PR #2551 topology check, #2653 GPU slots, #3491
reserved env, #3539 replica loop, #3649 file modes).
"""

from __future__ import annotations

import base64

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from ... import meta
from ...errors import FieldError, invalid
from ...profiles import Profile
from ..framework import BuildError, Lookup, Plugin
from ..info import LAUNCHER, NODE, TRAINER_CONTAINER, RuntimeInfo, gpu_count, resources_per_node
from . import common

NAME = "MPI"
TOPOLOGY_MESSAGE = "must have 1 when MPI trainingRuntime with enabled runLauncherAsNode does not have either launcher and node"
RESERVED_ENV = ("OMPI_MCA_orte_default_hostfile", "OMPI_MCA_plm_rsh_args",
                "OMPI_MCA_orte_keep_fqdn_hostnames", "OMPI_MCA_orte_set_default_slots")
SSH_VOLUME = "mpi-ssh-auth"
HOSTFILE_VOLUME = "mpi-hostfile"
HOSTFILE_DIR = "/etc/mpi"


def _policy(info: RuntimeInfo) -> dict | None:
    return info.ml_policy.get("mpi")


def validate(info: RuntimeInfo, trainjob: dict, profile: Profile) -> list[FieldError]:
    policy = _policy(info)
    if policy is None:
        return []
    errors = []
    trainer = trainjob.get("spec", {}).get("trainer")
    nproc = (trainer or {}).get("numProcPerNode")
    if profile.int_or_string_nproc and isinstance(nproc, str):
        errors.append(invalid("spec.trainer.numProcPerNode", common.nproc_value(nproc, profile), "must have an int value for MPI TrainJob"))
    # Only the TrainJob's numNodes triggers the check; the runtime's mlPolicy.numNodes is ignored.
    if (trainer is not None and (trainer.get("numNodes") if trainer.get("numNodes") is not None else 1) >= 2
            and policy.get("runLauncherAsNode") is True
            and (info.pod_set(LAUNCHER) is None or info.pod_set(NODE) is None)):
        errors.append(invalid("spec.trainer.numNodes", trainer.get("numNodes"), TOPOLOGY_MESSAGE))
    if profile.mpi_reserved_env_check and trainer:
        reserved = sorted({e.get("name") for e in trainer.get("env") or []} & set(RESERVED_ENV))
        if reserved:
            errors.append(invalid("spec.trainer.env", trainer["env"],
                                  f"must not have reserved envs, invalid envs configured: [{' '.join(reserved)}]"))
    return errors


def resolve_slots(info: RuntimeInfo, trainjob: dict, profile: Profile) -> int:
    """numProcPerNode: the TrainJob's value wins; else a runtime value of 1 becomes the GPU count
    per node when that is > 1 (v2.1+)."""
    policy = _policy(info)
    nproc = common.trainer_spec(trainjob).get("numProcPerNode")
    if nproc is not None:
        return int(nproc) if not isinstance(nproc, str) else _int_value(nproc)
    slots = policy.get("numProcPerNode", 1)
    if profile.mpi_slots_from_gpu and slots == 1:
        gpus = gpu_count(resources_per_node(info, trainjob))
        if gpus > 1:
            slots = gpus
    return slots


def _int_value(text: str) -> int:
    # IntOrString.IntValue() on a string: strconv.Atoi, 0 on failure.
    try:
        return int(text)
    except ValueError:
        return 0


def enforce(info: RuntimeInfo, trainjob: dict, profile: Profile) -> None:
    policy = _policy(info)
    if policy is None:
        return
    trainer = common.trainer_spec(trainjob)
    launcher_as_node = policy.get("runLauncherAsNode") is True
    if policy.get("mpiImplementation", "OpenMPI") != "OpenMPI" and info.container(LAUNCHER, TRAINER_CONTAINER):
        # Upstream formats a *pointer* with %v here, so its message carries an address.
        raise BuildError("MPI implementation for <pointer> doesn't supported")
    node = info.pod_set(NODE)
    if trainer.get("numNodes") is not None and node is not None:
        node.count = max(trainer["numNodes"] - 1, 1) if launcher_as_node else trainer["numNodes"]
    slots = resolve_slots(info, trainjob, profile)
    policy["numProcPerNode"] = slots
    name = trainjob["metadata"]["name"]

    # The TrainJob's env is not applied here: upstream's JobSet builder adds it after this plugin's
    # OMPI_* env (see jobset.build), so it comes after them and wins on a shared name.
    if launcher_as_node:
        common.apply_resources(info.container(NODE, TRAINER_CONTAINER), trainjob, profile)

    ssh_path = policy.get("sshAuthMountPath", "/root/.ssh")
    for ps in info.pod_sets:
        if ps.name not in (LAUNCHER, NODE):
            continue
        pod_spec = info.pod_spec(ps.name)
        volumes = pod_spec.setdefault("volumes", [])
        meta.upsert_named(volumes, _ssh_volume(name, profile))
        if ps.name == LAUNCHER:
            meta.upsert_named(volumes, {"name": HOSTFILE_VOLUME, "configMap": {
                "name": f"{name}-mpi-hostfile", "items": [{"key": "hostfile", "path": "hostfile", "mode": 0o444}]}})
        for container in pod_spec.get("containers") or []:
            if container.get("name") != TRAINER_CONTAINER:
                continue
            mounts = container.setdefault("volumeMounts", [])
            meta.upsert_by(mounts, {"name": SSH_VOLUME, "mountPath": ssh_path}, "mountPath")
            if ps.name == LAUNCHER:
                meta.upsert_by(mounts, {"name": HOSTFILE_VOLUME, "mountPath": HOSTFILE_DIR}, "mountPath")
                common.upsert_env(container, [
                    {"name": "OMPI_MCA_orte_default_hostfile", "value": f"{HOSTFILE_DIR}/hostfile"},
                    {"name": "OMPI_MCA_orte_keep_fqdn_hostnames", "value": "true"},
                    {"name": "OMPI_MCA_orte_set_default_slots", "value": str(slots)},
                    {"name": "OMPI_MCA_plm_rsh_args", "value": "-o ConnectionAttempts=10"},
                ])


def _ssh_volume(trainjob_name: str, profile: Profile) -> dict:
    items = [{"key": "ssh-privatekey", "path": "id_rsa"},
             {"key": "ssh-publickey", "path": "id_rsa.pub"},
             {"key": "ssh-publickey", "path": "authorized_keys"}]
    secret = {"secretName": f"{trainjob_name}-mpi-ssh-auth", "items": items}
    if profile.ssh_volume_modes:
        items[0]["mode"], items[1]["mode"], items[2]["mode"] = 0o640, 0o644, 0o644
        secret["defaultMode"] = 0o400
    return {"name": SSH_VOLUME, "secret": secret}


def hostfile(info: RuntimeInfo, trainjob: dict) -> str:
    """One ``<host> slots=<n>`` line per endpoint of ``node`` (and ``launcher`` when it runs as
    a node), in runtime template order."""
    policy = _policy(info)
    launcher_as_node = policy.get("runLauncherAsNode") is True
    if policy.get("mpiImplementation", "OpenMPI") != "OpenMPI":
        return ""
    slots = policy.get("numProcPerNode", 1)
    lines = []
    for ps in info.pod_sets:
        if ps.name == NODE or (launcher_as_node and ps.name == LAUNCHER):
            lines.extend(f"{endpoint} slots={slots}\n" for endpoint in ps.endpoints)
    return "".join(lines)


def build(info: RuntimeInfo, trainjob: dict, profile: Profile, lookup: Lookup) -> list[dict]:
    if _policy(info) is None:
        return []
    md = trainjob["metadata"]
    owner = [meta.controller_ref(trainjob)]
    objects = [{
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": f"{md['name']}-mpi-hostfile", "namespace": md.get("namespace"), "ownerReferences": owner},
        "data": {"hostfile": hostfile(info, trainjob)},
    }]
    secret_name = f"{md['name']}-mpi-ssh-auth"
    if lookup("", "Secret", md.get("namespace"), secret_name) is None:
        private_pem, public_line = new_ssh_key()
        objects.append({
            "apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/ssh-auth", "immutable": True,
            "metadata": {"name": secret_name, "namespace": md.get("namespace"), "ownerReferences": owner},
            "data": {"ssh-privatekey": base64.b64encode(private_pem).decode(),
                     "ssh-publickey": base64.b64encode(public_line).decode()},
        })
    return objects


def new_ssh_key() -> tuple[bytes, bytes]:
    """A fresh ECDSA P-521 key: PEM ``EC PRIVATE KEY`` and an ``authorized_keys`` line."""
    key = ec.generate_private_key(ec.SECP521R1())
    private_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                                    serialization.NoEncryption())
    public_line = key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH) + b"\n"
    return private_pem, public_line


PLUGIN = Plugin(NAME, validate=validate, enforce=enforce, build=build)
