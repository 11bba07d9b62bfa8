"""An apiserver refusal as the harness records it: code, reason, message and field errors.

The field errors come from ``details.causes`` when the apiserver sends them (schema and CEL
failures, 422). A webhook denial (403) carries only a message - controller-runtime sends no
causes - so its errors are read back from the message, which is ``field.ErrorList``'s aggregate:
one error as is, several as ``[a, b]``, each ``<field>: <Type>[: <value>][: <detail>]``. Values
are read as JSON (quoted strings, numbers, ``true``, JSON objects); a value printed some other way
(Go's ``%#v`` of a struct) is left out rather than guessed - except ``intstr.IntOrString``, whose
``%#v`` form names the one value it holds.

An aggregate is split at ``", "`` only where a new ``<field>: <Type>`` starts, since details
themselves contain commas ("must not have reserved envs, invalid envs configured: [...]").

A webhook that lists the supported values of an ``Unsupported value`` error from a Go set
(``sets.UnsortedList``) lists them in a random order, different from one request to the next
(:data:`GO_SET_LISTS`); the same values in another order are put in render's order, in the errors
and in the message. Another set of values is left as it is.
"""

from __future__ import annotations

import json
import re

from reconciler.errors import CAUSE_TYPES
from reconciler.pytorchjob import webhook as pytorchjob_webhook

_TYPES = {cause: error_type for error_type, cause in CAUSE_TYPES.items()} | {"FieldValueTypeInvalid": "Invalid value"}
# Error types whose rendering carries no value (field.Error.ErrorBody).
_VALUELESS = {"Required value", "Forbidden", "Too long", "Not found", "Internal error"}
_KNOWN = sorted(set(_TYPES.values()), key=len, reverse=True)
_ITEM_START = re.compile(r"(<nil>|[A-Za-z][\w.\-\[\]]*): (" + "|".join(re.escape(t) for t in _KNOWN) + r")(: |,|$)")
_GO_STRUCT = re.compile(r"^[\w.*]+\{")
_INT_OR_STRING = re.compile(r'^intstr\.IntOrString\{Type:(\d+), IntVal:(-?\d+), StrVal:"((?:[^"\\]|\\.)*)"\}$')
_WEBHOOK_PREFIX = re.compile(r'^admission webhook "[^"]*" denied the request: ')
_INVALID_PREFIX = re.compile(r"^.*? is invalid: ")


def field_errors(status: dict) -> list[dict]:
    causes = (status.get("details") or {}).get("causes") or []
    if causes:
        return [_from_cause(c) for c in causes]
    message = status.get("message", "")
    body = _WEBHOOK_PREFIX.sub("", message, count=1)
    if body == message:
        body = _INVALID_PREFIX.sub("", message, count=1)
    return [parse_error(item) for item in split_aggregate(body)]


def _from_cause(cause: dict) -> dict:
    type_ = _TYPES.get(cause.get("reason", ""), cause.get("reason", ""))
    field = cause.get("field", "")
    error = {"type": type_, "field": "" if field == "<nil>" else field}
    error.update(_body(type_, cause.get("message", "")))
    return error


def _body(type_: str, text: str) -> dict:
    """``{detail[, value]}`` from an ErrorBody text that starts with ``type_``."""
    rest = text[len(type_):] if text.startswith(type_) else text
    rest = rest.removeprefix(": ")
    if type_ in _VALUELESS or not rest:
        return {"detail": rest}
    if _GO_STRUCT.match(rest):
        return _go_struct_body(rest)
    try:
        value, end = json.JSONDecoder().raw_decode(rest)
    except json.JSONDecodeError:
        return {"detail": rest.split(": ", 1)[1] if ": " in rest else rest}
    if end == len(rest):
        return {"detail": "", "value": value}
    if rest[end:].startswith(": "):
        return {"detail": rest[end + 2:], "value": value}
    return {"detail": rest}


def _go_struct_body(rest: str) -> dict:
    """``pkg.Type{...}: detail`` - the value printed with %#v."""
    end = _closing(rest, rest.index("{"))
    text, detail = rest[:end + 1], rest[end + 1:].removeprefix(": ")
    match = _INT_OR_STRING.match(text)
    if match is None:
        return {"detail": detail}
    value = int(match.group(2)) if match.group(1) == "0" else json.loads(f'"{match.group(3)}"')
    return {"detail": detail, "value": value}


def _top_level(text: str, start: int = 0):
    """Yield ``(index, char, depth)`` for characters outside double quotes; ``depth`` counts the
    brackets open *before* this character (so a closing bracket reports its own level)."""
    depth, quoted, i = 0, False, start
    while i < len(text):
        ch = text[i]
        if quoted:
            if ch == "\\":
                i += 1
            elif ch == '"':
                quoted = False
        elif ch == '"':
            quoted = True
        else:
            yield i, ch, depth
            if ch in "[{(":
                depth += 1
            elif ch in "]})":
                depth -= 1
        i += 1


def _closing(text: str, start: int) -> int:
    for i, ch, depth in _top_level(text, start):
        if ch in "]})" and depth == 1:
            return i
    return len(text) - 1


def parse_error(item: str) -> dict:
    """One rendered ``field.Error`` (or a plain error, which has no field)."""
    field, sep, body = item.partition(": ")
    for type_ in _KNOWN:
        if sep and (body == type_ or body.startswith(type_ + ": ")):
            error = {"type": type_, "field": "" if field == "<nil>" else field}
            error.update(_body(type_, body))
            return error
    return {"type": "", "field": "", "detail": item}


def split_aggregate(text: str) -> list[str]:
    """``[a, b]`` → ``["a", "b"]`` at top level (not inside quotes or brackets); else ``[text]``."""
    if not (text.startswith("[") and text.endswith("]")):
        return [text]
    inner, items, start = text[1:-1], [], 0
    for i, _ch, depth in _top_level(inner):
        if depth == 0 and i >= start and inner.startswith(", ", i) and _ITEM_START.match(inner, i + 2):
            items.append(inner[start:i])
            start = i + 2
    items.append(inner[start:])
    return items


#: (group, kind, field) -> render's order of the values an upstream webhook lists from a Go set.
GO_SET_LISTS = {
    # kubeflow/training-operator v1.9 pkg/common/util/webhooks.go ValidateRunPolicy (#2203):
    # field.NotSupported(..., supportedJobControllers.UnsortedList()).
    ("kubeflow.org", "PyTorchJob", "spec.runPolicy.managedBy"): pytorchjob_webhook.MANAGED_BY_VALUES,
}
_SUPPORTED = "supported values: "


def in_render_order(group: str, kind: str, message: str, errors: list[dict]) -> tuple[str, list[dict]]:
    """``message`` and ``errors`` with each :data:`GO_SET_LISTS` list of supported values in render's order."""
    for error in errors:
        order = GO_SET_LISTS.get((group, kind, error.get("field")))
        detail = error.get("detail", "")
        if order is None or error.get("type") != "Unsupported value" or not detail.startswith(_SUPPORTED):
            continue
        listed = detail[len(_SUPPORTED):]
        canonical = ", ".join(json.dumps(v) for v in order)
        if sorted(listed.split(", ")) == sorted(canonical.split(", ")) and listed != canonical:
            error["detail"] = _SUPPORTED + canonical
            message = message.replace(_SUPPORTED + listed, _SUPPORTED + canonical)
    return message, errors
