"""Structural OpenAPI v3 schemas as kube-apiserver applies them to custom resources.

The render backend admits objects with the very CRD files that the live backend installs, so the
two cannot drift. This module does, in memory, what the apiserver does on create:

1. prune fields the schema does not know (unless ``x-kubernetes-preserve-unknown-fields``);
2. apply ``default`` values (recursively, into freshly defaulted objects as well);
3. validate types, enums, bounds, lengths, required fields and list-map keys, worded like
   kube-openapi's validator;
4. evaluate ``x-kubernetes-validations`` (CEL) rules - unless step 3 found a type or enum error,
   which blocks CEL exactly as in apiextensions-apiserver.

Only the schema keywords that structural schemas allow are supported; an unknown keyword in a
CRD file is a programming error and raises.
"""

from __future__ import annotations

import copy
import re

import cel

from .errors import _OMIT as _OMITTED
from .errors import INVALID, NOT_SUPPORTED, REQUIRED, TOO_LONG, TOO_MANY, DUPLICATE, FieldError

_SUPPORTED_KEYWORDS = {
    "type", "description", "properties", "items", "additionalProperties", "required", "default",
    "enum", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength",
    "pattern", "minItems", "maxItems", "format", "nullable", "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-int-or-string", "x-kubernetes-validations", "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys", "x-kubernetes-map-type", "x-kubernetes-embedded-resource",
}

BLOCKED_CEL = FieldError(
    INVALID, "", "some validation rules were not checked because the object was invalid; "
    "correct the existing errors to complete validation", None)


def check_keywords(schema: dict, path: str = "") -> None:
    """Fail loudly on schema keywords this engine does not implement."""
    unknown = set(schema) - _SUPPORTED_KEYWORDS
    if unknown:
        raise ValueError(f"unsupported schema keyword(s) {sorted(unknown)} at {path or '<root>'}")
    for name, sub in (schema.get("properties") or {}).items():
        check_keywords(sub, f"{path}.{name}")
    if isinstance(schema.get("items"), dict):
        check_keywords(schema["items"], f"{path}[]")
    if isinstance(schema.get("additionalProperties"), dict):
        check_keywords(schema["additionalProperties"], f"{path}{{}}")


_TOP_LEVEL = ("apiVersion", "kind", "metadata")


def _body(schema: dict) -> dict:
    # metadata, apiVersion and kind are the apiserver's business, not the CRD schema's.
    props = {k: v for k, v in (schema.get("properties") or {}).items() if k not in _TOP_LEVEL}
    return {**schema, "properties": props}


def prune_and_default(obj: dict, schema: dict) -> tuple[dict, list[str]]:
    """What decoding a request does: drop unknown fields, then apply ``default`` values.

    Returns the new object and the paths of the pruned fields (the apiserver warns about them).
    """
    obj = copy.deepcopy(obj)
    pruned: list[str] = []
    body_schema = _body(schema)
    top = {k: obj[k] for k in _TOP_LEVEL if k in obj}
    body = {k: v for k, v in obj.items() if k not in _TOP_LEVEL}
    _prune(body, body_schema, "", pruned)
    _default(body, body_schema)
    return {**top, **body}, pruned


def validate(obj: dict, schema: dict, scale_path: str | None = None) -> list[FieldError]:
    """OpenAPI validation, the scale subresource's replicas (``scale_path``, its ``specReplicasPath``),
    then CEL rules unless a type/enum error blocks them."""
    body_schema = _body(schema)
    body = {k: v for k, v in obj.items() if k not in _TOP_LEVEL}
    errors = _validate(body, body_schema, "")
    if scale_path:
        errors.extend(validate_scale_spec(obj, scale_path))
    if not _has_cel(body_schema):
        return errors  # no CEL validator at all, so nothing is reported as skipped
    if any(e.blocking for e in errors):
        errors.append(BLOCKED_CEL)
    else:
        errors.extend(_validate_cel(body, body_schema, ""))
    return errors


def validate_scale_spec(obj: dict, path: str) -> list[FieldError]:
    """apiextensions-apiserver's ``ValidateScaleSpec`` (registry/customresource/validator.go, k8s v1.35),
    after the schema and before CEL: the value at the scale subresource's ``specReplicasPath`` read with
    ``unstructured.NestedInt64`` (absent = 0) must lie in 0..MaxInt32. The field is the path as the CRD
    writes it, leading dot included; a value that is not an integer is NestedInt64's accessor error."""
    fields = path.removeprefix(".").split(".")
    value = obj
    for name in fields:
        if not isinstance(value, dict) or name not in value:
            return []
        value = value[name]
    if isinstance(value, bool) or not isinstance(value, int):
        go_type = {str: "string", float: "float64", bool: "bool", dict: "map[string]interface {}",
                   list: "[]interface {}", type(None): "<nil>"}.get(type(value), type(value).__name__)
        shown = _go_print(value)
        return [FieldError(INVALID, path, f".{'.'.join(fields)} accessor error: {shown} is of the type {go_type}, "
                                          "expected int64", 0)]
    if value < 0:
        return [FieldError(INVALID, path, "should be a non-negative integer", value)]
    if value > 2**31 - 1:
        return [FieldError(INVALID, path, f"should be less than or equal to {2**31 - 1}", value)]
    return []


def _go_print(value) -> str:
    """``%v`` of a decoded JSON value."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}" if value != int(value) or abs(value) >= 1e21 else str(int(value))
    if isinstance(value, (dict, list)):
        return "map[...]" if isinstance(value, dict) else "[...]"
    return str(value)


def _has_cel(schema) -> bool:
    if isinstance(schema, dict):
        return "x-kubernetes-validations" in schema or any(_has_cel(v) for v in schema.values())
    if isinstance(schema, list):
        return any(_has_cel(v) for v in schema)
    return False


# --------------------------------------------------------------------------- pruning

def _prune(value, schema: dict, path: str, pruned: list[str]) -> None:
    if schema.get("x-kubernetes-preserve-unknown-fields") and not schema.get("properties"):
        return
    if isinstance(value, dict):
        props = schema.get("properties")
        additional = schema.get("additionalProperties")
        if props is not None:
            for key in list(value):
                if key in props:
                    _prune(value[key], props[key], _join(path, key), pruned)
                elif not schema.get("x-kubernetes-preserve-unknown-fields"):
                    pruned.append(_join(path, key))
                    del value[key]
        elif isinstance(additional, dict):
            for key, item in value.items():
                _prune(item, additional, _join(path, key), pruned)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            _prune(item, schema["items"], f"{path}[{i}]", pruned)


# --------------------------------------------------------------------------- defaulting

def _default(value, schema: dict) -> None:
    if isinstance(value, dict):
        for key, sub in (schema.get("properties") or {}).items():
            # A null in a non-nullable field with a default is replaced by the default (1.20+).
            if "default" in sub and (key not in value or (value[key] is None and not sub.get("nullable"))):
                value[key] = copy.deepcopy(sub["default"])
            if key in value:
                _default(value[key], sub)
        additional = schema.get("additionalProperties")
        if isinstance(additional, dict) and not schema.get("properties"):
            for item in value.values():
                _default(item, additional)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for item in value:
            _default(item, schema["items"])


# --------------------------------------------------------------------------- validation

def _type_name(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _matches_type(value, expected: str) -> bool:
    actual = _type_name(value)
    if expected == "number":
        return actual in ("number", "integer")
    if expected == "integer" and isinstance(value, float) and value.is_integer():
        return True
    return actual == expected


def _validate(value, schema: dict, path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    where = path or "<root>"
    if value is None:
        if schema.get("nullable"):
            return errors
        if schema.get("type"):
            return [FieldError(INVALID, path, f'{where} in body must be of type {schema["type"]}: "null"', "null", blocking=True)]
        return errors
    if schema.get("x-kubernetes-int-or-string"):
        if not isinstance(value, (int, str)) or isinstance(value, bool):
            return [FieldError(INVALID, path, f'{where} in body must be of type integer,string: "{_type_name(value)}"',
                               _type_name(value), blocking=True)]
    elif schema.get("type") and not _matches_type(value, schema["type"]):
        return [FieldError(INVALID, path, f'{where} in body must be of type {schema["type"]}: "{_type_name(value)}"',
                           _type_name(value), blocking=True)]

    if "enum" in schema and value not in schema["enum"]:
        supported = ", ".join(_quote(v) for v in schema["enum"])
        errors.append(FieldError(NOT_SUPPORTED, path, f"supported values: {supported}", value, blocking=True))
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema:
            if schema.get("exclusiveMinimum") and value <= schema["minimum"]:
                errors.append(FieldError(INVALID, path, f"{where} in body should be greater than {schema['minimum']}", value))
            elif value < schema["minimum"]:
                errors.append(FieldError(INVALID, path, f"{where} in body should be greater than or equal to {schema['minimum']}", value))
        if "maximum" in schema:
            if schema.get("exclusiveMaximum") and value >= schema["maximum"]:
                errors.append(FieldError(INVALID, path, f"{where} in body should be less than {schema['maximum']}", value))
            elif value > schema["maximum"]:
                errors.append(FieldError(INVALID, path, f"{where} in body should be less than or equal to {schema['maximum']}", value))
    if isinstance(value, str):
        if "maxLength" in schema and len(value.encode()) > schema["maxLength"]:
            errors.append(FieldError(TOO_LONG, path, f"may not be more than {schema['maxLength']} bytes", value, blocking=True))
        if "minLength" in schema and len(value) < schema["minLength"]:
            errors.append(FieldError(INVALID, path, f"{where} in body should be at least {schema['minLength']} chars long", value))
        if "pattern" in schema and not re.search(schema["pattern"], value):
            errors.append(FieldError(INVALID, path, f"{where} in body should match '{schema['pattern']}'", value))
    if isinstance(value, list):
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            errors.append(FieldError(TOO_MANY, path, f"must have at most {schema['maxItems']} items", len(value), blocking=True))
        if "minItems" in schema and len(value) < schema["minItems"]:
            errors.append(FieldError(INVALID, path, f"{where} in body should have at least {schema['minItems']} items", len(value)))
        items = schema.get("items")
        if isinstance(items, dict):
            for i, item in enumerate(value):
                errors.extend(_validate(item, items, f"{path}[{i}]"))
        errors.extend(_list_uniqueness(value, schema, path))
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                errors.append(FieldError(REQUIRED, _join(path, key), blocking=True))
        props = schema.get("properties") or {}
        for key, sub in props.items():
            if key in value:
                errors.extend(_validate(value[key], sub, _join(path, key)))
        additional = schema.get("additionalProperties")
        if isinstance(additional, dict) and not props:
            for key, item in value.items():
                errors.extend(_validate(item, additional, _join(path, key)))
    return errors


def _list_uniqueness(value: list, schema: dict, path: str) -> list[FieldError]:
    list_type = schema.get("x-kubernetes-list-type")
    seen: dict = {}
    errors = []
    for i, item in enumerate(value):
        if list_type == "map" and isinstance(item, dict):
            key = tuple(item.get(k) for k in schema.get("x-kubernetes-list-map-keys", []))
            shown = {k: item.get(k) for k in schema.get("x-kubernetes-list-map-keys", [])}
        elif list_type == "set":
            key, shown = repr(item), item
        else:
            return []
        if key in seen:
            errors.append(FieldError(DUPLICATE, f"{path}[{i}]", "", shown))
        seen[key] = i
    return errors


# --------------------------------------------------------------------------- CEL

def _evaluate(rule: str, self_value):
    return cel.evaluate(rule, {"self": self_value})


def _validate_cel(value, schema: dict, path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    if value is None:
        return errors
    for rule in schema.get("x-kubernetes-validations", []):
        if "oldSelf" in rule["rule"]:
            continue  # transition rules only apply to updates
        message = (rule.get("message") or rule["rule"]).strip()
        rule_path = path + rule.get("fieldPath", "") if rule.get("fieldPath") else path
        # kube-apiserver 1.35 prints the value of a scalar and no value for an object or a list.
        shown = _OMITTED if isinstance(value, (dict, list)) else value
        try:
            ok = _evaluate(rule["rule"], value)
        except Exception as exc:  # evaluation errors are reported, as the apiserver does
            # ... with the schema's type as the bad value ("" for int-or-string), not the value itself
            # (apiextensions cel validation: field.Invalid(fldPath, sts.Type, ...); seen live on v2.1.0).
            shown = schema.get("type", "")
            text = str(exc)
            if "overload" in text.lower():
                detail = ("'no such overload': call arguments did not match a supported operator, "
                          f"function or macro signature for rule: {message}")
            else:
                detail = f"{text} evaluating rule: {message}"
            errors.append(FieldError(INVALID, rule_path, detail, shown))
            continue
        if ok is not True:
            if rule.get("reason") == "FieldValueForbidden":
                errors.append(FieldError("Forbidden", rule_path, message))
            elif rule.get("reason") == "FieldValueRequired":
                errors.append(FieldError(REQUIRED, rule_path, message))
            else:
                errors.append(FieldError(INVALID, rule_path, message, shown))
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        for key, sub in props.items():
            if key in value:
                errors.extend(_validate_cel(value[key], sub, _join(path, key)))
        additional = schema.get("additionalProperties")
        if isinstance(additional, dict) and not props:
            for key, item in value.items():
                errors.extend(_validate_cel(item, additional, _join(path, key)))
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            errors.extend(_validate_cel(item, schema["items"], f"{path}[{i}]"))
    return errors


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _quote(value) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    if value is None:
        return "null"
    return str(value).lower() if isinstance(value, bool) else str(value)
