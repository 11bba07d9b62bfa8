"""``SetDefaults_PyTorchJob`` (pkg/apis/kubeflow.org/v1/pytorch_defaults.go, defaulting_utils.go;
shared/reference/kubeflow-v1-mpi-operator.md A.5), identical in v1.8.1 and v1.9.2.

Upstream applies these defaults **in the controller**, with ``r.Scheme.Default`` on its cached copy
(in the create-event predicate and at the top of every Reconcile), never through admission: the
validating webhook sees the object as sent, and the stored object keeps its spec as sent (the
controller writes only ``status``). :func:`defaulted` therefore returns a defaulted *copy*; the
stored PyTorchJob differs from what the user applied only by the CRD's own default
(``runPolicy.suspend: false``).

In order: ``runPolicy.cleanPodPolicy`` nil → ``None``; replica keys matched case-insensitively are
renamed ``Master`` / ``Worker``; per replica: ``replicas`` nil → 1, ``restartPolicy`` "" →
``OnFailure``, and the container named ``pytorch`` (else container 0) gets the port
``pytorchjob-port: 23456`` appended unless it has a port of that name; ``elasticPolicy``
min/max: both kept, one copied to the other, or both ← ``Worker.replicas``; ``nprocPerNode`` nil →
``"auto"`` unless ``elasticPolicy.nProcPerNode`` is set.

Two inputs make the Go code dereference nil (an elasticPolicy with neither min nor max and no
Worker; a replica without containers): :class:`UpstreamPanic`. v1.9's webhook refuses both; v1.8's
refuses only the second.
"""

from __future__ import annotations

from .. import meta
from . import keys


class UpstreamPanic(Exception):
    """The upstream operator would dereference nil here (a Go panic): it crashes in the create-event
    predicate or fails the Reconcile, and nothing it would have written is written."""


def defaulted(job: dict) -> dict:
    job = meta.clone(job)
    spec = job.setdefault("spec", {})
    run_policy = spec.get("runPolicy")
    if not isinstance(run_policy, dict):
        run_policy = spec["runPolicy"] = {}
    if run_policy.get("cleanPodPolicy") is None:
        run_policy["cleanPodPolicy"] = keys.CLEAN_NONE
    replicas = spec.get("pytorchReplicaSpecs")
    if isinstance(replicas, dict):
        for replica_type in keys.REPLICA_TYPES:
            _camel_case(replicas, replica_type)
        for replica in replicas.values():
            if not isinstance(replica, dict):
                continue
            if replica.get("replicas") is None:
                replica["replicas"] = 1
            if not replica.get("restartPolicy"):
                replica["restartPolicy"] = keys.DEFAULT_RESTART_POLICY
            _default_port(replica)
    _default_elastic(spec)
    elastic = spec.get("elasticPolicy")
    if (elastic is None or elastic.get("nProcPerNode") is None) and spec.get("nprocPerNode") is None:
        spec["nprocPerNode"] = keys.DEFAULT_NPROC_PER_NODE
    return job


def _camel_case(replicas: dict, replica_type: str) -> None:
    """setTypeNameToCamelCase: the first key equal to ``replica_type`` but for case is renamed."""
    for key in list(replicas):
        if key.lower() == replica_type.lower() and key != replica_type:
            replicas[replica_type] = replicas.pop(key)
            return


def containers(replica: dict) -> list[dict]:
    """``template.spec.containers`` of a replica spec, [] when absent (or not a list: the full
    upstream CRD would have refused it; the one here preserves pod templates as given)."""
    found = (((replica.get("template") or {}).get("spec") or {}).get("containers")) if isinstance(replica, dict) else None
    return [c for c in found if isinstance(c, dict)] if isinstance(found, list) else []


def _default_port(replica: dict) -> None:
    """setPyTorchDefaultPort: the ``pytorch`` container, else container 0 (getDefaultContainerIndex)."""
    found = containers(replica)
    if not found:
        raise UpstreamPanic("index out of range: a replica without containers (setPyTorchDefaultPort)")
    container = next((c for c in found if c.get("name") == keys.DEFAULT_CONTAINER), found[0])
    ports = container.get("ports") if isinstance(container.get("ports"), list) else []
    if not any(isinstance(p, dict) and p.get("name") == keys.DEFAULT_PORT_NAME for p in ports):
        container["ports"] = [*ports, {"name": keys.DEFAULT_PORT_NAME, "containerPort": keys.DEFAULT_PORT}]


def _default_elastic(spec: dict) -> None:
    elastic = spec.get("elasticPolicy")
    if not isinstance(elastic, dict):
        return
    low, high = elastic.get("minReplicas"), elastic.get("maxReplicas")
    if low is not None and high is not None:
        return
    if high is not None:
        elastic["minReplicas"] = high
    elif low is not None:
        elastic["maxReplicas"] = low
    else:
        worker = (spec.get("pytorchReplicaSpecs") or {}).get(keys.WORKER)
        if not isinstance(worker, dict):
            raise UpstreamPanic("invalid memory address or nil pointer dereference: elasticPolicy without "
                                "min/maxReplicas and no Worker replica spec (setElasticPolicy)")
        elastic["minReplicas"] = elastic["maxReplicas"] = worker["replicas"]
