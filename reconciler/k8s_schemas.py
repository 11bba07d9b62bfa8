"""Kubernetes' own types inside CRD schemas: a CRD file names a type, the loader inlines its schema.

The upstream CRDs of every suite describe their pod templates in full (controller-gen writes
``corev1.PodTemplateSpec`` out field by field), so a value of the wrong type anywhere in a template
is the apiserver's 422 before any webhook or controller sees it. Writing that schema by hand would be
neither readable nor checkable, so the CRD files here say where it goes with a marker::

    template:
      x-training-conformance-k8s-type: io.k8s.api.core.v1.PodTemplateSpec

and :func:`expand` replaces the marker with the type's structural schema from
``crds/_k8s/<kube version>.json`` - derived by ``hack/gen-k8s-schemas.py`` from kube-apiserver
v1.35.8's own OpenAPI v3 document, with the rules that make it what controller-gen writes for the
same Go types (docs/bad-input.md). :func:`reconciler.crds.load` expands every CRD it reads, so the
render backend admits with, and the live backend installs, the same expanded CRDs.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from . import gotypes

MARKER = "x-training-conformance-k8s-type"
KUBE_VERSION = "v1.35.8"
_DATA = Path(__file__).parent / "crds" / "_k8s" / f"{KUBE_VERSION}.json"


@lru_cache(maxsize=None)
def definitions() -> dict[str, dict]:
    return json.loads(_DATA.read_text())["definitions"]


@lru_cache(maxsize=None)
def _inlined(name: str) -> str:
    # JSON text, so that each use gets its own copy cheaply and no two places share a dict.
    return json.dumps(_inline(definitions()[name], ()))


def _inline(node, seen: tuple[str, ...]):
    if isinstance(node, list):
        return [_inline(n, seen) for n in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        name = node["$ref"]
        if name in seen:
            raise ValueError(f"recursive type {' -> '.join(seen + (name,))}")
        return _inline(definitions()[name], seen + (name,))
    return {k: _inline(v, seen) for k, v in node.items()}


def schema_of(name: str) -> dict:
    """The structural schema of Kubernetes type ``name`` (``io.k8s.api.core.v1.PodTemplateSpec``)."""
    return json.loads(_inlined(name))


def expand(node):
    """``node`` (a CRD, or any part of one) with every marker replaced by the type's schema; keys
    beside the marker (a ``description``) are kept."""
    if isinstance(node, list):
        return [expand(n) for n in node]
    if not isinstance(node, dict):
        return node
    if MARKER in node:
        rest = {k: expand(v) for k, v in node.items() if k != MARKER}
        return {**schema_of(node[MARKER]), **rest}
    return {k: expand(v) for k, v in node.items()}


__all__ = ["MARKER", "KUBE_VERSION", "definitions", "schema_of", "expand"]


def go_structs(path: str, name: str) -> dict[str, str]:
    """JSON path (no indexes) → Go struct name, for type ``name`` placed at ``path`` and everything it
    holds (``spec.template`` + PodTemplateSpec → ``spec.template.spec.containers``: ``Container``), as Go's
    ``encoding/json`` names the struct in a decode error."""
    found: dict[str, str] = {}
    _structs(definitions()[name], name, path, found, ())
    return found


def _structs(node: dict, name: str | None, path: str, found: dict, seen: tuple) -> None:
    if "$ref" in node:
        ref = node["$ref"]
        if ref not in seen:
            _structs(definitions()[ref], ref, path, found, seen + (ref,))
        return
    if node.get("type") == "object" and node.get("properties"):
        if name:
            found[path] = name.rsplit(".", 1)[-1]
        for key, sub in node["properties"].items():
            _structs(sub, None, f"{path}.{key}" if path else key, found, seen)
    elif node.get("type") == "array" and isinstance(node.get("items"), dict):
        _structs(node["items"], None, path, found, seen)


# --------------------------------------------------------------------------- Go decoding

_INT_RANGES = {"int32": (-2**31, 2**31), "int64": (-2**63, 2**63)}
#: resource.ErrFormatWrong (k8s.io/apimachinery/pkg/api/resource).
QUANTITY_FORMAT_WRONG = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"


def _json_text(value) -> str:
    return json.dumps(value)


def go_type(node: dict) -> str:
    """The Go type of a field, as ``encoding/json`` names it (``[]v1.Container``, ``int32``); a named
    string type (``v1.RestartPolicy``) is not in the OpenAPI document and reads ``string``."""
    if "$ref" in node:
        parts = node["$ref"].split(".")
        return f"{parts[-2]}.{parts[-1]}"
    kind = node.get("type")
    if kind == "array":
        return "[]" + go_type(node.get("items") or {})
    if kind == "object" and isinstance(node.get("additionalProperties"), dict):
        return "map[string]" + go_type(node["additionalProperties"])
    if kind == "integer":
        return node.get("format") or "int"
    return {"boolean": "bool", "number": "float64", "string": "string"}.get(kind, "interface {}")


def decode_error(value, name: str, path: str, struct: str | None = None, sort_keys: bool = False) -> str | None:
    """Go's ``json.Unmarshal`` error for ``value`` decoded as Kubernetes type ``name`` found at JSON
    ``path`` as a field of Go struct ``struct`` (first mismatch in document order - ``sort_keys`` for
    an object a webhook receives, which the apiserver encodes with sorted keys), or None. Nulls decode
    to zero values."""
    return _decode(_sorted(value) if sort_keys else value, {"$ref": name}, path, struct)


def _sorted(value):
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value


def _decode(value, node: dict, path: str, struct: str | None):
    if value is None:
        return None
    if "$ref" in node:
        ref = node["$ref"]
        target = definitions()[ref]
        if target.get("x-kubernetes-int-or-string"):
            if "pattern" in target:
                # resource.Quantity's UnmarshalJSON parses any JSON text but null: ErrFormatWrong as is.
                from . import quantity
                try:
                    quantity.parse(value if isinstance(value, str) else _json_text(value))
                except quantity.QuantityError:
                    return QUANTITY_FORMAT_WRONG
                return None
            # intstr.IntOrString's UnmarshalJSON: a string, else json.Unmarshal into its int32.
            if isinstance(value, str):
                return None
            return _decode(value, {"type": "integer", "format": "int32"}, "", None)
        if target.get("type") == "object" and target.get("properties"):
            if not isinstance(value, dict):
                return _mismatch(value, struct, path, go_type(node))
            short = ref.rsplit(".", 1)[-1]
            for key, item in value.items():
                sub = target["properties"].get(key)
                if sub is not None:
                    found = _decode(item, sub, f"{path}.{key}" if path else key, short)
                    if found:
                        return found
            return None
        return _decode(value, {**target, "$go": go_type(node)}, path, struct)
    kind = node.get("type")
    want = node.get("$go") or go_type(node)
    if kind == "array":
        if not isinstance(value, list):
            return _mismatch(value, struct, path, want)
        items = node.get("items") or {}
        return next((f for f in (_decode(i, items, path, struct) for i in value) if f), None)
    if kind == "object" and isinstance(node.get("additionalProperties"), dict):
        if not isinstance(value, dict):
            return _mismatch(value, struct, path, want)
        return next((f for f in (_decode(v, node["additionalProperties"], path, struct) for v in value.values()) if f), None)
    if kind == "string" and not isinstance(value, str) \
            or kind == "boolean" and not isinstance(value, bool) \
            or kind == "number" and (isinstance(value, bool) or not isinstance(value, (int, float))):
        return _mismatch(value, struct, path, want)
    if kind == "integer":
        low, high = _INT_RANGES.get(node.get("format"), (-2**63, 2**63))
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or isinstance(value, float) and not value.is_integer() or not low <= value < high:
            return _mismatch(value, struct, path, want)
    return None


def _mismatch(value, struct: str | None, path: str, want: str) -> str:
    if isinstance(value, bool):
        found = "bool"
    elif isinstance(value, (int, float)):
        # Go names the number when it is one (it did parse) that the integer type cannot hold.
        found = f"number {gotypes.go_number(value)}" if want.startswith(("int", "uint")) else "number"
    else:
        found = {str: "string", dict: "object", list: "array"}.get(type(value), "value")
    where = f"Go struct field {struct}.{path}" if struct else f"Go value"
    return f"json: cannot unmarshal {found} into {where} of type {want}"

