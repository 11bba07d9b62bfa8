"""Small helpers over plain Kubernetes JSON objects (dicts)."""

from __future__ import annotations

import pickle
from typing import Iterable

from .errors import go_quote


def clone(value):
    """A deep copy of plain API data (dicts, lists, scalars); pickle makes it ~3x faster than
    ``copy.deepcopy``, which matters when a group restart recreates a thousand pods."""
    return pickle.loads(pickle.dumps(value, pickle.HIGHEST_PROTOCOL))


def group_of(api_version: str) -> str:
    if not isinstance(api_version, str):
        return ""
    return api_version.split("/")[0] if "/" in api_version else ""


def key(obj: dict) -> tuple[str, str, str, str]:
    """Identity of an object: (group, kind, namespace, name)."""
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    return (group_of(obj.get("apiVersion", "")), obj.get("kind", ""), meta.get("namespace", ""), meta.get("name", ""))


def ref(obj: dict) -> str:
    """``Kind.group "name"`` as the apiserver names an object in errors."""
    group = group_of(obj.get("apiVersion", ""))
    kind = obj.get("kind", "")
    name = (obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}).get("name", "")
    quoted = go_quote(name) if isinstance(name, str) else f'"{name}"'  # %q of the name
    return f'{kind}.{group} {quoted}' if group else f'{kind} {quoted}'


def describe(obj: dict) -> str:
    """``Kind namespace/name`` for humans."""
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    ns = meta.get("namespace")
    return f"{obj.get('kind')} {f'{ns}/' if ns else ''}{meta.get('name')}"


def labels(obj: dict) -> dict:
    return obj.setdefault("metadata", {}).setdefault("labels", {})


def annotations(obj: dict) -> dict:
    return obj.setdefault("metadata", {}).setdefault("annotations", {})


def controller_ref(owner: dict) -> dict:
    meta = owner["metadata"]
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def is_owned_by(obj: dict, owner: dict) -> bool:
    uid = owner["metadata"].get("uid")
    return any(r.get("uid") == uid for r in obj.get("metadata", {}).get("ownerReferences", []))


def find_named(items: Iterable[dict] | None, name: str) -> dict | None:
    for item in items or []:
        if item.get("name") == name:
            return item
    return None


def upsert_named(items: list[dict], item: dict) -> None:
    """Replace the entry with the same name, or append (upstream's Upsert helpers)."""
    for i, existing in enumerate(items):
        if existing.get("name") == item.get("name"):
            items[i] = item
            return
    items.append(item)


def upsert_by(items: list[dict], item: dict, field: str) -> None:
    for i, existing in enumerate(items):
        if existing.get(field) == item.get(field):
            items[i] = item
            return
    items.append(item)


def condition(obj: dict, type_: str) -> dict | None:
    return find_by(obj.get("status", {}).get("conditions"), "type", type_)


def find_by(items: Iterable[dict] | None, field: str, value) -> dict | None:
    for item in items or []:
        if item.get(field) == value:
            return item
    return None
