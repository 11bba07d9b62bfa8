"""Go's serialization in custom resources, read back the way render writes them.

A Go controller that writes a custom resource marshals its Go structs: Trainer builds the JobSet
from apply configurations, JobSet's defaulting webhook patches the whole JobSet it decoded,
Trainer v2.1 adds its finalizer to a runtime with an Update of the decoded object. A struct field
is written even when empty, a string without ``omitempty`` even when ``""``, and a quantity in its
canonical spelling. The apiserver stores a custom resource as it gets it (it defaults built-in
kinds only, see :mod:`.platform`), so the live object carries:

=====================  ==========================================================================
``metadata: {}``       the ObjectMeta of an embedded template: any ``template`` (or LWS
                       ``leaderTemplate`` / ``workerTemplate``) that has a ``spec`` (JobSet
                       ``spec.replicatedJobs[].template`` and its pod ``template``, Volcano
                       ``spec.tasks[].template``, a runtime's ``spec.template``)
``creationTimestamp:`` ``null`` in such an ObjectMeta, as apimachinery before v0.34 writes its zero
                       time (no ``omitzero``; LWS v0.7.0 builds with v0.33.3)
``resources: {}``      a container's ResourceRequirements (``containers``, ``initContainers``)
``protocol: TCP``      a container port's protocol (the value Kubernetes defaults it to)
``status: ''``         ``podFailurePolicy.rules[].onPodConditions[].status``
quantities             under ``limits``/``requests``: the canonical spelling (``'2.5'`` →
                       ``2500m``)
=====================  ==========================================================================

A field is dropped only when it has exactly that zero/default value *and* render's object of the
same case (the golden) has no such field at the same place; a quantity takes render's spelling
only when both spell the same amount. A real value - or a zero value render writes too - stays.

One more field is written or not by Go's map iteration order, random from one reconcile to the next
(:data:`MAP_ORDER_FIELDS`); render walks such maps in key order. Where render does not write it,
the live object's is dropped too - the harness cannot tell the two apart - and where render writes
it, it is compared:

==================================================  ===============================================
PyTorchJob ``status.replicaStatuses.<type>.selector`` training-operator UpdateJobStatus sets each
of a Succeeded job with a Master, ``<type>`` not     type's selector as it ranges over the replica
Master                                                specs (a Go map) and returns at the Master's
                                                      success; ReconcilePods had reset every type's
                                                      status - so the types after the Master keep
                                                      none (render: Master first, Worker none)
==================================================  ===============================================

A ControllerRevision's ``data`` is what its controller marshalled (LeaderWorkerSet's revision
holds its ``leaderWorkerTemplate``), so it is read the same way, although the kind is built in.
"""

from __future__ import annotations

import copy

from reconciler import builtin, meta, quantity

from .keyorder import Partners

#: Under these keys, a list of containers.
_CONTAINER_LISTS = ("containers", "initContainers")
#: (key of the list, field) -> the Go zero/default value dropped from an element of that list.
_ELEMENT_ZEROS = {
    **{(key, "resources"): {} for key in _CONTAINER_LISTS},
    ("ports", "protocol"): "TCP",
    ("onPodConditions", "status"): "",
}
#: Keys under which an embedded template (ObjectMeta + spec) sits.
_TEMPLATE_KEYS = ("template", "leaderTemplate", "workerTemplate")
#: List elements are paired with render's by these keys (else by position).
_ELEMENT_KEYS = ("name", "containerPort", "type")


def is_custom(obj: dict) -> bool:
    """Not a kind Kubernetes itself serves (those are :mod:`.platform`'s)."""
    return (obj.get("apiVersion"), obj.get("kind")) not in builtin.BUILTIN and obj.get("kind") != "Namespace"


def strip(objects: list[dict], rendered: list[dict]) -> list[dict]:
    """Copies of ``objects`` whose custom resources lose the Go zero values render's do not have."""
    golden = Partners(rendered)
    out = []
    for obj in objects:
        if is_custom(obj):
            obj = copy.deepcopy(obj)
            counterpart = golden.get(obj) or {}
            _walk(obj, counterpart, "")
            for fields in MAP_ORDER_FIELDS.get((meta.group_of(obj.get("apiVersion", "")), obj.get("kind")), ()):
                for path in fields(obj):
                    _drop_unless_rendered(obj, counterpart, path)
        elif (obj.get("apiVersion"), obj.get("kind")) == ("apps/v1", "ControllerRevision") and isinstance(obj.get("data"), dict):
            obj = copy.deepcopy(obj)
            _walk(obj["data"], (golden.get(obj) or {}).get("data") or {}, "data")
        out.append(obj)
    return out


def _pytorchjob_selectors(job: dict) -> list[tuple[str, ...]]:
    status = job.get("status") or {}
    succeeded = any(c.get("type") == "Succeeded" and c.get("status") == "True" for c in status.get("conditions") or [])
    replicas = (job.get("spec") or {}).get("pytorchReplicaSpecs")
    if not succeeded or not isinstance(replicas, dict) or "Master" not in replicas:
        return []
    return [("status", "replicaStatuses", rtype, "selector") for rtype in status.get("replicaStatuses") or {}
            if rtype != "Master"]


#: (group, kind) -> functions naming the paths of fields whose presence is Go map order's.
MAP_ORDER_FIELDS = {
    ("kubeflow.org", "PyTorchJob"): (_pytorchjob_selectors,),
}


def _drop_unless_rendered(obj: dict, rendered: dict, path: tuple[str, ...]) -> None:
    node, golden = obj, rendered
    for key in path[:-1]:
        node = node.get(key) if isinstance(node, dict) else None
        golden = golden.get(key) if isinstance(golden, dict) else None
    if isinstance(node, dict) and path[-1] in node and not (isinstance(golden, dict) and path[-1] in golden):
        del node[path[-1]]


def _walk(node: dict, golden: dict, key: str) -> None:
    """``node`` sits under ``key`` (for a list element: the list's key); ``golden`` is render's
    node at the same place, ``{}`` when render has none."""
    if key in _TEMPLATE_KEYS and "spec" in node:
        if isinstance(node.get("metadata"), dict):
            _drop(node["metadata"], golden.get("metadata") or {}, "creationTimestamp", None)
        _drop(node, golden, "metadata", {})
    for (list_key, field), zero in _ELEMENT_ZEROS.items():
        if key == list_key:
            _drop(node, golden, field, zero)
    if key in ("limits", "requests"):
        respell(node, golden)
    for child_key, child in node.items():
        partner = golden.get(child_key)
        if isinstance(child, dict):
            _walk(child, partner if isinstance(partner, dict) else {}, child_key)
        elif isinstance(child, list):
            partners = partner if isinstance(partner, list) else []
            for index, item in enumerate(child):
                if isinstance(item, dict):
                    _walk(item, _partner(item, index, partners), child_key)


def _drop(node: dict, golden: dict, field: str, zero) -> None:
    if field in node and node[field] == zero and type(node[field]) is type(zero) and field not in golden:
        del node[field]


def respell(amounts: dict, golden: dict) -> None:
    """Give each quantity in ``amounts`` the golden's spelling where the two are equal amounts."""
    for name, amount in amounts.items():
        spelled = golden.get(name)
        if spelled is not None and spelled != amount and _same_quantity(spelled, amount):
            amounts[name] = spelled


def _same_quantity(a, b) -> bool:
    try:
        return quantity.parse(a) == quantity.parse(b)
    except ValueError:
        return False


def _partner(item: dict, index: int, golden: list) -> dict:
    """Render's element for ``item``: the one with the same name (container port, condition type)
    when ``item`` has one, else the one at the same position."""
    candidates = [g for g in golden if isinstance(g, dict)]
    for key in _ELEMENT_KEYS:
        if key in item:
            if key == "name":
                found = meta.find_named(candidates, item["name"])
            else:
                found = next((g for g in candidates if g.get(key) == item[key]), None)
            return found or {}
    found = golden[index] if index < len(golden) else None
    return found if isinstance(found, dict) else {}
