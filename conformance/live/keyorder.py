"""Put a live object's keys in the order the rendered object has them.

Goldens are YAML text and keep each object's key order; kube-apiserver serializes Go struct
fields in its own order (and map keys sorted), render writes them in the order its code builds
them. Key order means nothing in JSON, so the live backend re-keys each object after the render
of the same case - only the order: no key is added, dropped or changed, and list order is kept -
so that the golden diff shows nothing but real differences. Keys render does not have come last,
in the apiserver's order.
"""

from __future__ import annotations

from reconciler import meta


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
    md = obj.get("metadata") or {}
    return (obj.get("apiVersion"), obj.get("kind"), md.get("namespace", ""), md.get("generateName") or md.get("name"))


def reorder_like(objects: list[dict], rendered: list[dict]) -> list[dict]:
    templates = {identity(o): o for o in rendered}
    return [reorder(o, templates[identity(o)]) if identity(o) in templates else o for o in objects]
