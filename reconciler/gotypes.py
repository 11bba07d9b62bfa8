"""Go values that appear in upstream error messages, rendered as Go renders them, and the decode
errors Go's ``encoding/json`` gives for a value of the wrong JSON type (:func:`unmarshal_error`).

``field.Error`` prints a bad value with ``%v`` for simple types, ``String()`` for Stringers and
``%#v`` otherwise. IntOrString's ``String()`` has a pointer receiver, so a dereferenced value
prints with ``%#v`` - e.g. ``intstr.IntOrString{Type:1, IntVal:0, StrVal:"npu"}``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass


@dataclass(frozen=True)
class IntOrString:
    value: int | str

    def go_repr(self) -> str:
        if isinstance(self.value, str):
            return f'intstr.IntOrString{{Type:1, IntVal:0, StrVal:{json.dumps(self.value)}}}'
        return f'intstr.IntOrString{{Type:0, IntVal:{self.value}, StrVal:""}}'


#: Struct -> field -> (JSON kind, Go type named in the error, struct of the value or of the items), for the
#: part of core/v1 pod templates that the reference reconciler reads or writes. Kinds: object, map (of
#: strings), array (of structs), string, int.
POD_TYPES = {
    "PodTemplateSpec": {"metadata": ("object", "v1.ObjectMeta", "ObjectMeta"), "spec": ("object", "v1.PodSpec", "PodSpec")},
    "ObjectMeta": {"labels": ("map", "map[string]string", None), "annotations": ("map", "map[string]string", None)},
    "PodSpec": {"containers": ("array", "[]v1.Container", "Container"), "initContainers": ("array", "[]v1.Container", "Container"),
                "subdomain": ("string", "string", None), "hostname": ("string", "string", None),
                "restartPolicy": ("string", "v1.RestartPolicy", None)},
    "Container": {"name": ("string", "string", None), "image": ("string", "string", None),
                  "env": ("array", "[]v1.EnvVar", "EnvVar")},
    "EnvVar": {"name": ("string", "string", None), "value": ("string", "string", None)},
}
_KINDS = {"object": dict, "map": dict, "array": list, "string": str, "int": int}


def unmarshal_error(value: dict, types: dict, struct: str, path: str) -> str | None:
    """``json.Unmarshal``'s error for the first value of the wrong JSON type in ``value`` (a ``struct``
    at JSON ``path``), keys in sorted order (as the apiserver sends objects); null decodes to a zero value."""
    fields = types[struct]
    for key in sorted(value):
        if key not in fields or value[key] is None:
            continue
        kind, go_type, inner = fields[key]
        item, where = value[key], f"{path}.{key}" if path else key
        if not isinstance(item, _KINDS[kind]) or (kind == "int" and isinstance(item, bool)):
            return _type_error(item, struct, where, go_type)
        found = None
        if kind == "object":
            found = unmarshal_error(item, types, inner, where)
        elif kind == "map":
            found = next((_type_error(v, struct, where, "string") for v in item.values()
                          if v is not None and not isinstance(v, str)), None)
        elif kind == "array":
            for element in item:
                if element is not None:
                    found = (unmarshal_error(element, types, inner, where) if isinstance(element, dict)
                             else _type_error(element, struct, where, go_type[2:]))
                if found:
                    break
        if found:
            return found
    return None


def json_kind(value) -> str:
    """How Go's decoder names a JSON value in an UnmarshalTypeError."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    return {str: "string", dict: "object", list: "array"}.get(type(value), "value")


def _type_error(value, struct: str, path: str, go_type: str) -> str:
    if isinstance(value, bool):
        found = "bool"
    elif isinstance(value, float) and go_type.startswith("int"):
        found = f"number {go_number(value)}"
    elif isinstance(value, (int, float)):
        found = "number"
    else:
        found = {str: "string", dict: "object", list: "array"}.get(type(value), "value")
    return f"json: cannot unmarshal {found} into Go struct field {struct}.{path} of type {go_type}"


def go_number(value) -> str:
    """A JSON number as Go's encoder writes a float64 (``strconv`` 'f' below 1e21, else 'e'; shortest
    digits): 2.5, 9223372036854776000, 1e+30; an int as is."""
    if not isinstance(value, float):
        return str(value)
    text = repr(value)
    if abs(value) < 1e21 and "e" in text:
        from decimal import Decimal
        text = format(Decimal(text), "f")
    return text.removesuffix(".0")
