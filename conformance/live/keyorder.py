"""Put a live object's keys in the order the rendered object has them.

Goldens are YAML text and keep each object's key order; kube-apiserver serializes Go struct
fields in its own order (and map keys sorted), render writes them in the order its code builds
them. Key order means nothing in JSON, so the live backend re-keys each object after the render
of the same case - only the order: no key is added, dropped or changed, and list order is kept -
so that the golden diff shows nothing but real differences. Keys render does not have come last,
in the apiserver's order.

List order is kept, except in list-maps an operator builds by iterating a Go map, whose order is
random from one reconcile to the next (:data:`UNORDERED_LISTS`, e.g. JobSet's
``status.replicatedJobsStatus``, keyed by ``name``): there the elements follow render's order by
key, elements render does not have last in the live order. Nothing is added or dropped.
"""

from __future__ import annotations

from reconciler import meta


#: (apiVersion group, kind) -> paths of list-maps keyed by ``name`` that have no order.
UNORDERED_LISTS = {
    # kubernetes-sigs/jobset calculateReplicatedJobStatuses: ranges over a Go map of replicatedJob name -> counts.
    ("jobset.x-k8s.io", "JobSet"): [("status", "replicatedJobsStatus")],
}


def reorder(value, template):
    if isinstance(value, dict) and isinstance(template, dict):
        ordered = {k: reorder(value[k], template[k]) for k in template if k in value}
        ordered.update({k: v for k, v in value.items() if k not in template})
        return ordered
    if isinstance(value, list) and isinstance(template, list):
        return [reorder(item, _partner(item, i, template)) for i, item in enumerate(value)]
    return value


def _partner(item, index: int, template: list):
    """The template element an element corresponds to: same ``name`` if it has one, else same position."""
    if isinstance(item, dict) and "name" in item:
        found = meta.find_named([t for t in template if isinstance(t, dict)], item["name"])
        if found is not None:
            return found
    return template[index] if index < len(template) else None


def identity(obj: dict) -> tuple:
    """An object's kind, namespace and generateName (its name when it has none): the same for the
    live and the rendered copy of an object whose name ends in a random suffix."""
    md = obj.get("metadata") or {}
    return (obj.get("apiVersion"), obj.get("kind"), md.get("namespace", ""), md.get("generateName") or md.get("name"))


class Partners:
    """Render's object for a live one: the one of the same name, else (a generated name) the one of
    the same generateName. A StatefulSet's pods have both a fixed name and ``generateName: <set>-``
    (kube-controller-manager's ``GetPodFromTemplate``), so by generateName alone they would collide."""

    def __init__(self, rendered: list[dict]):
        self.by_name = {_named(o): o for o in rendered}
        self.by_identity = {identity(o): o for o in rendered}

    def get(self, obj: dict) -> dict | None:
        found = self.by_name.get(_named(obj))
        return found if found is not None else self.by_identity.get(identity(obj))


def _named(obj: dict) -> tuple:
    md = obj.get("metadata") or {}
    return (obj.get("apiVersion"), obj.get("kind"), md.get("namespace", ""), md.get("name"))


def reorder_like(objects: list[dict], rendered: list[dict]) -> list[dict]:
    templates = Partners(rendered)
    out = []
    for obj in objects:
        template = templates.get(obj)
        if template is not None:
            obj = reorder(_unordered_like(obj, template), template)
        out.append(obj)
    return out


def _unordered_like(obj: dict, template: dict) -> dict:
    """``obj`` with each of its :data:`UNORDERED_LISTS` in ``template``'s order by name (a shallow copy
    along the path; the elements themselves are the same)."""
    paths = UNORDERED_LISTS.get((meta.group_of(obj.get("apiVersion", "")), obj.get("kind")), [])
    for path in paths:
        obj = _with_list_sorted(obj, template, path)
    return obj


def _with_list_sorted(node, template, path):
    if not isinstance(node, dict) or not isinstance(template, dict) or path[0] not in node:
        return node
    if len(path) > 1:
        return {**node, path[0]: _with_list_sorted(node[path[0]], template.get(path[0]), path[1:])}
    items, wanted = node[path[0]], template.get(path[0])
    if not isinstance(items, list) or not isinstance(wanted, list):
        return node
    rank = {w.get("name"): i for i, w in enumerate(wanted) if isinstance(w, dict) and "name" in w}
    late = len(rank)
    ordered = sorted(enumerate(items), key=lambda p: (rank.get(p[1].get("name"), late) if isinstance(p[1], dict)
                                                       else late, p[0]))
    return {**node, path[0]: [item for _, item in ordered]}
