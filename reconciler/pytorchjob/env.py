"""``SetClusterSpec``: the env every container gets and the worker's init container
(pkg/controller.v1/pytorch/envvar.go, master.go, elastic.go, initcontainer.go;
shared/reference/kubeflow-v1-mpi-operator.md A.1), on the defaulted job.

Every entry of ``containers`` (not init containers) gets the same list, appended after the user's
env, in this order:

1. ``PYTHONUNBUFFERED=1``;
2. with a Master spec: ``MASTER_PORT``, ``PET_MASTER_PORT`` (the Master's ``pytorch`` container port
   named ``pytorchjob-port``), ``MASTER_ADDR``, ``PET_MASTER_ADDR`` (``<job>-master-0``), then
   ``WORLD_SIZE`` = (sum of every replica spec's replicas) x nprocPerNode - ``Atoi`` of
   ``spec.nprocPerNode``, 1 when it is not an integer (``auto``, ``cpu``, ``gpu``); a Go ``int``
   product, so it wraps past int64 - then ``RANK`` and
   ``PET_NODE_RANK``: the replica index, + 1 for a Worker (a *node* rank, kubeflow/trainer#1840);
3. ``PET_NPROC_PER_NODE`` = ``spec.nprocPerNode`` verbatim, when set;
4. with an ``elasticPolicy``: ``PET_RDZV_ENDPOINT`` (``rdzvHost`` or ``<job>-worker-0``, ``:``,
   ``rdzvPort`` or the Worker's ``pytorchjob-port``), ``PET_RDZV_BACKEND`` (default ``c10d``),
   ``PET_NNODES`` ``min:max``, then when set ``PET_MAX_RESTARTS``, ``PET_NPROC_PER_NODE`` (the
   deprecated ``elasticPolicy.nProcPerNode``), ``PET_RDZV_ID``, ``PET_RDZV_CONF`` (``k=v`` joined by
   ``,``), ``PET_STANDALONE`` (empty value: Go's ``omitempty`` drops ``value`` from the JSON);
   otherwise ``PET_NNODES`` = the total replicas.

Without a Master there is no ``MASTER_*``, ``WORLD_SIZE``, ``RANK`` or ``PET_NODE_RANK``.
"""

from __future__ import annotations

from . import keys
from .defaults import UpstreamPanic, containers

#: initcontainer.go's template, with the defaults of --pytorch-init-container-image / -max-tries.
INIT_COMMAND = ("err=1;for i in $(seq {tries}); do if nslookup {master}; then err=0 && break; fi;"
                "echo waiting for master; sleep 2; done; exit $err")


class PortNotFound(Exception):
    """getPortFromPyTorchJob's ``port not found`` (returned to controller-runtime, logged)."""


def replica_name(job_name: str, replica_type: str, index: int | str) -> str:
    """GenGeneralName / replicaName: ``<job>-<lowercase type>-<index>``, every ``/`` → ``-``."""
    return f"{job_name}-{replica_type.lower()}-{index}".replace("/", "-")


def nproc_per_node_int(spec: dict) -> int:
    """getNprocPerNodeInt: ``strconv.Atoi(*spec.nprocPerNode)``, else 1."""
    return go_atoi(spec.get("nprocPerNode"), default=1)


def go_atoi(text, default: int) -> int:
    """``strconv.Atoi``: an optional sign and ASCII digits only (no spaces, no ``_``), within int64."""
    if not isinstance(text, str):
        return default
    digits = text[1:] if text[:1] in "+-" else text
    if not digits or not all("0" <= ch <= "9" for ch in digits):
        return default
    value = int(text)
    return value if -(2 ** 63) <= value < 2 ** 63 else default


def go_int64(value: int) -> int:
    """Go's 64-bit ``int`` arithmetic: a product past int64 wraps around (two's complement)."""
    return (value + 2 ** 63) % 2 ** 64 - 2 ** 63


def node_rank(spec: dict, replica_type: str, index: int) -> int:
    """RANK and PET_NODE_RANK: the replica index, + 1 for a Worker (the Master is node 0). A node
    rank whatever ``nprocPerNode`` is (envvar.go; kubeflow/trainer#1872)."""
    return index + 1 if replica_type.lower() == keys.WORKER.lower() else index


def total_replicas(spec: dict) -> int:
    return sum(r.get("replicas") or 0 for r in (spec.get("pytorchReplicaSpecs") or {}).values())


def port_of(spec: dict, replica_type: str) -> int:
    """getPortFromPyTorchJob: the ``pytorchjob-port`` of the replica's ``pytorch`` container."""
    replica = (spec.get("pytorchReplicaSpecs") or {}).get(replica_type)
    if replica is None:
        raise UpstreamPanic(f"invalid memory address or nil pointer dereference: no {replica_type} replica "
                            "spec to read the port from (getPortFromPyTorchJob)")
    for container in containers(replica):
        if container.get("name") == keys.DEFAULT_CONTAINER:
            for port in container.get("ports") if isinstance(container.get("ports"), list) else []:
                if isinstance(port, dict) and port.get("name") == keys.DEFAULT_PORT_NAME:
                    return port.get("containerPort", 0)
    raise PortNotFound("port not found")


def pod_env(job: dict, replica_type: str, index: int) -> list[dict]:
    """What setPodEnv appends to each container of the ``replica_type`` pod with ``index``."""
    spec, name = job["spec"], job["metadata"]["name"]
    replicas = spec.get("pytorchReplicaSpecs") or {}
    env = [{"name": "PYTHONUNBUFFERED", "value": "1"}]
    if replicas.get(keys.MASTER) is not None:
        port = str(port_of(spec, keys.MASTER))
        address = replica_name(name, keys.MASTER, 0)
        rank = str(node_rank(spec, replica_type, index))
        env += [{"name": "MASTER_PORT", "value": port}, {"name": "PET_MASTER_PORT", "value": port},
                {"name": "MASTER_ADDR", "value": address}, {"name": "PET_MASTER_ADDR", "value": address},
                {"name": "WORLD_SIZE", "value": str(go_int64(total_replicas(spec) * nproc_per_node_int(spec)))},
                {"name": "RANK", "value": rank}, {"name": "PET_NODE_RANK", "value": rank}]
    if spec.get("nprocPerNode") is not None:
        env.append({"name": "PET_NPROC_PER_NODE", "value": spec["nprocPerNode"]})
    if spec.get("elasticPolicy") is not None:
        env += elastic_env(job)
    else:
        env.append({"name": "PET_NNODES", "value": str(total_replicas(spec))})
    # corev1.EnvVar's value is omitempty: an empty value is not in the JSON at all.
    return [{"name": e["name"]} if e.get("value") == "" else e for e in env]


def elastic_env(job: dict) -> list[dict]:
    """ElasticEnvVarGenerator.Generate (elastic.go), on the defaulted job."""
    spec, name = job["spec"], job["metadata"]["name"]
    elastic = spec["elasticPolicy"]
    host = elastic["rdzvHost"] if elastic.get("rdzvHost") is not None else f"{name}-worker-0"
    port = elastic["rdzvPort"] if elastic.get("rdzvPort") is not None else port_of(spec, keys.WORKER)
    env = [{"name": "PET_RDZV_ENDPOINT", "value": f"{host}:{port}"},
           {"name": "PET_RDZV_BACKEND", "value": elastic.get("rdzvBackend") or keys.DEFAULT_RDZV_BACKEND}]
    # generateEnvNnodes falls back to Worker.replicas ("cannot find the worker spec" without one) when
    # neither bound is set - which never happens after SetDefaults (defaults._default_elastic sets both,
    # or panics first), so only its min:max form is written here.
    env.append({"name": "PET_NNODES", "value": f"{elastic['minReplicas']}:{elastic['maxReplicas']}"})
    if elastic.get("maxRestarts") is not None:
        env.append({"name": "PET_MAX_RESTARTS", "value": str(elastic["maxRestarts"])})
    if elastic.get("nProcPerNode") is not None:
        env.append({"name": "PET_NPROC_PER_NODE", "value": str(elastic["nProcPerNode"])})
    if elastic.get("rdzvId") is not None:
        env.append({"name": "PET_RDZV_ID", "value": elastic["rdzvId"]})
    if elastic.get("rdzvConf") is not None:
        # Upstream cuts the last character of "k=v,...,": an empty list would panic (val[:-1] of "").
        text = "".join(f"{c.get('key', '')}={c.get('value', '')}," for c in elastic["rdzvConf"])
        if not text:
            raise UpstreamPanic("slice bounds out of range: empty elasticPolicy.rdzvConf (generateEnvRDZVConf)")
        env.append({"name": "PET_RDZV_CONF", "value": text[:-1]})
    if elastic.get("standalone") is True:
        env.append({"name": "PET_STANDALONE", "value": ""})
    return env


def init_containers(job: dict, replica_type: str) -> list[dict]:
    """setInitContainer: Worker pods of a job with a Master get ``init-pytorch`` after their own."""
    replicas = job["spec"].get("pytorchReplicaSpecs") or {}
    if replicas.get(keys.MASTER) is None or replica_type.lower() != keys.WORKER.lower():
        return []
    master = replica_name(job["metadata"]["name"], keys.MASTER, 0)
    command = INIT_COMMAND.format(tries=keys.INIT_CONTAINER_MAX_TRIES, master=master)
    return [{
        "name": keys.INIT_CONTAINER_NAME,
        "image": keys.INIT_CONTAINER_IMAGE,
        "command": ["sh", "-c", command],
        "resources": {"limits": {"cpu": "100m", "memory": "20Mi"}, "requests": {"cpu": "50m", "memory": "10Mi"}},
        "imagePullPolicy": "IfNotPresent",
    }]
