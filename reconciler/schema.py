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
import json
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


def prune_and_default(obj: dict, schema: dict, nulls: bool = True) -> tuple[dict, list[str]]:
    """What decoding a request does: drop unknown fields, then apply ``default`` values.

    Returns the new object and the paths of the pruned fields (the apiserver warns about them).
    ``nulls=False``: non-nullable nulls are kept - after mutating webhooks, whose patched object the
    apiserver decodes without the schema coercer (``unstructuredSchemaCoercer`` prunes nulls at
    request decoding only), so a null a webhook writes reaches validation.
    """
    obj = copy.deepcopy(obj)
    pruned: list[str] = []
    body_schema = _body(schema)
    top = {k: obj[k] for k in _TOP_LEVEL if k in obj}
    body = {k: v for k, v in obj.items() if k not in _TOP_LEVEL}
    body = _as_decoded(body)
    _prune(body, body_schema, "", pruned)
    if nulls:
        _prune_nulls(body, body_schema)
    _default(body, body_schema)
    return {**top, **body}, pruned


def validate(obj: dict, schema: dict, prior: list[FieldError] = (), scale: dict | None = None) -> list[FieldError]:
    """OpenAPI validation, the scale subresource's paths (``scale``: the CRD version's
    ``subresources.scale``), the list-type invariants, then CEL rules unless a type/enum error blocks
    them. ``prior``: the errors ``ValidateObjectMetaAccessor`` found before (they are returned first
    and block CEL too - a missing name is Required - as in the custom resource strategy's Validate)."""
    body_schema = _body(schema)
    body = {k: v for k, v in obj.items() if k not in _TOP_LEVEL}
    errors = list(prior) + _validate(body, body_schema, "")
    errors += validate_scale(obj, scale)
    # structurallisttype.ValidateListSetsAndMaps runs after the custom resource validator, with
    # field.Path spelling (a map key as [key], not .key).
    errors.extend(_validate_lists(body, body_schema, ""))
    if not _has_cel_cached(schema):
        return errors  # no CEL validator at all, so nothing is reported as skipped
    if any(e.blocking for e in errors):
        errors.append(BLOCKED_CEL)
    else:
        errors.extend(_validate_cel(body, body_schema, ""))
    return errors


#: id(schema) -> (schema, has CEL): a CRD's schema is loaded once and large (full pod templates).
_CEL_CACHE: dict[int, tuple[dict, bool]] = {}


def _has_cel_cached(schema: dict) -> bool:
    cached = _CEL_CACHE.get(id(schema))
    if cached is None or cached[0] is not schema:
        cached = _CEL_CACHE[id(schema)] = (schema, _has_cel(_body(schema)))
    return cached[1]


def type_errors(obj: dict, schema: dict) -> list[FieldError]:
    """The values of the wrong JSON type in ``obj`` (what a typed decoder cannot read), as the OpenAPI
    validator words them."""
    body = {k: v for k, v in obj.items() if k not in _TOP_LEVEL}
    return [e for e in _validate(body, _body(schema), "") if e.blocking and " must be of type " in e.detail]


# --------------------------------------------------------------------------- scale subresource

_MAX_INT32 = 2**31 - 1


def validate_scale(obj: dict, scale: dict | None) -> list[FieldError]:
    """apiextensions-apiserver ``customResourceValidator.ValidateScaleSpec`` and ``ValidateScaleStatus``
    (pkg/registry/customresource/validator.go), run on create and update after the OpenAPI schema and
    before CEL: the value at ``specReplicasPath`` and ``statusReplicasPath`` read with
    ``unstructured.NestedInt64`` - absent is fine (0), anything but an integer is an accessor error,
    then 0 <= n <= MaxInt32 - and the one at ``labelSelectorPath`` with ``NestedString``. The
    errors are ``field.Invalid`` at the path as the CRD spells it (leading dot included), so they do
    not block CEL."""
    if not scale:
        return []
    errors = []
    for key in ("specReplicasPath", "statusReplicasPath"):
        path = scale.get(key)
        if not path:
            continue
        value, error = _nested(obj, path, int, "int64")
        if error:
            errors.append(FieldError(INVALID, path, error, 0))
        elif value is not None and value < 0:
            errors.append(FieldError(INVALID, path, "should be a non-negative integer", value))
        elif value is not None and value > _MAX_INT32:
            errors.append(FieldError(INVALID, path, f"should be less than or equal to {_MAX_INT32}", value))
    selector = scale.get("labelSelectorPath")
    if selector:
        _, error = _nested(obj, selector, str, "string")
        if error:
            errors.append(FieldError(INVALID, selector, error, ""))
    return errors


def _nested(obj: dict, path: str, want: type, go_type: str):
    """``unstructured.NestedInt64`` / ``NestedString``: (value or None when absent, error text)."""
    fields = path.removeprefix(".").split(".")
    value = obj
    for i, name in enumerate(fields):
        if value is None:
            return None, None
        if not isinstance(value, dict):
            where = "." + ".".join(fields[:i + 1])
            return None, f"{where} accessor error: {_go_v(value)} is of the type {_go_type(value)}, expected map[string]interface{{}}"
        if name not in value:
            return None, None
        value = value[name]
    if isinstance(value, want) and not isinstance(value, bool):
        return value, None
    where = "." + ".".join(fields)
    return None, f"{where} accessor error: {_go_v(value)} is of the type {_go_type(value)}, expected {go_type}"


def _go_type(value) -> str:
    """``%T`` of a decoded JSON value (unstructured: int64 for integral numbers, float64 else)."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "[]interface {}"
    return "map[string]interface {}"


def _go_v(value) -> str:
    """``%v`` of a decoded JSON scalar (composite values print as Go maps and slices, rendered here
    approximately)."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(int(value)) if value.is_integer() and abs(value) < 1e21 else repr(value)
    if isinstance(value, list):
        return "[" + " ".join(_go_v(v) for v in value) + "]"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{_go_v(v)}" for k, v in sorted(value.items())) + "]"
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


# --------------------------------------------------------------------------- numbers

def _as_decoded(value):
    """A JSON integer that does not fit int64 is decoded as a float64 (unstructured JSON), so webhooks
    and the stored object see a float (re-encoded by Go as 9223372036854776000, 1e+30)."""
    if isinstance(value, dict):
        return {k: _as_decoded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_decoded(v) for v in value]
    if isinstance(value, int) and not isinstance(value, bool) and not -2**63 <= value < 2**63:
        return float(value)
    return value


# --------------------------------------------------------------------------- nulls

def _prune_nulls(value, schema: dict | None) -> None:
    """``PruneNonNullableNullsWithoutDefaults`` (apiextensions-apiserver schema/defaulting): a null in an
    object's field whose schema is neither nullable nor defaulted is removed, as if not sent (a null
    list item stays, and fails validation). Nulls with a default are left for :func:`_default`."""
    if isinstance(value, dict):
        for key in list(value):
            sub = _field_schema(key, schema)
            if value[key] is None and sub is not None and not sub.get("nullable") and "default" not in sub:
                del value[key]
            else:
                _prune_nulls(value[key], sub)
    elif isinstance(value, list):
        items = schema.get("items") if schema else None
        for item in value:
            _prune_nulls(item, items if isinstance(items, dict) else None)


def _field_schema(key: str, schema: dict | None) -> dict | None:
    if not schema:
        return None
    props = schema.get("properties") or {}
    if key in props:
        return props[key]
    additional = schema.get("additionalProperties")
    return additional if isinstance(additional, dict) else None


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
        # Decoded JSON: an integer beyond int64 becomes a float64 (a "number").
        return "integer" if -2**63 <= value < 2**63 else "number"
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
    if expected == "integer" and isinstance(value, float) and value.is_integer() and -2**63 <= value < 2**63:
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
        if _type_name(value) not in ("integer", "string"):
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
    if isinstance(value, dict):
        # kube-openapi's objectValidator: the properties' own errors first, then this object's missing
        # required keys (a nested Required comes before its parent's). The stored schema's properties
        # are a Go map, so kube-apiserver's order of sibling properties is not fixed; render uses
        # their names' order (tests/test_fuzz_live.py still compares the joined message: open).
        props = schema.get("properties") or {}
        for key, sub in sorted(props.items()):
            if key in value:
                errors.extend(_validate(value[key], sub, _join(path, key)))
        for key in schema.get("required", []):
            if key not in value:
                errors.append(FieldError(REQUIRED, _join(path, key), blocking=True))
        additional = schema.get("additionalProperties")
        if isinstance(additional, dict) and not props:
            for key, item in value.items():
                errors.extend(_validate(item, additional, _join(path, key)))
    return errors


def _validate_lists(value, schema: dict, path: str) -> list[FieldError]:
    """x-kubernetes-list-type invariants everywhere in ``value`` (apiextensions' structurallisttype)."""
    errors: list[FieldError] = []
    if isinstance(value, list):
        errors.extend(_list_uniqueness(value, schema, path))
        items = schema.get("items")
        if isinstance(items, dict):
            for i, item in enumerate(value):
                errors.extend(_validate_lists(item, items, f"{path}[{i}]"))
    elif isinstance(value, dict):
        props = schema.get("properties") or {}
        for key, sub in props.items():
            if key in value:
                errors.extend(_validate_lists(value[key], sub, _join(path, key)))
        additional = schema.get("additionalProperties")
        if isinstance(additional, dict) and not props:
            for key, item in value.items():
                errors.extend(_validate_lists(item, additional, f"{path}[{key}]"))
    return errors


def _list_uniqueness(value: list, schema: dict, path: str) -> list[FieldError]:
    list_type = schema.get("x-kubernetes-list-type")
    seen: dict = {}
    errors = []
    if list_type == "map":
        # listtype validateListMap: nulls and objects only, and only the first other item is reported;
        # a null item is one whose keys are all unspecified.
        for i, item in enumerate(value):
            if item is not None and not isinstance(item, dict):
                return [FieldError(INVALID, f"{path}[{i}]", "must be an object for an array of list-type map", item)]
    for i, item in enumerate(value):
        if list_type == "map":
            shown = {k: (item or {}).get(k) for k in schema.get("x-kubernetes-list-map-keys", [])}
            key = json.dumps(shown, sort_keys=True, default=str)
        elif list_type == "set":
            key, shown = json.dumps(item, sort_keys=True, default=str), item
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
