"""Admission errors, worded the way kube-apiserver words them.

A rejected object carries a list of :class:`FieldError` plus *who* rejected it:

* the schema (OpenAPI + CEL in the CRD) → HTTP 422, reason ``Invalid``;
* a validating webhook → HTTP 403, reason ``Forbidden``, message prefixed with
  ``admission webhook "<name>" denied the request:``.

Upstream integration tests assert exactly this split (``BeInvalidError`` vs ``BeForbiddenError``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

# field.ErrorType strings from k8s.io/apimachinery/pkg/util/validation/field.
INVALID = "Invalid value"
REQUIRED = "Required value"
NOT_SUPPORTED = "Unsupported value"
TYPE_INVALID = "Invalid value"  # type errors render as "Invalid value" too (FieldValueTypeInvalid)
FORBIDDEN = "Forbidden"
TOO_LONG = "Too long"
TOO_MANY = "Too many"
DUPLICATE = "Duplicate value"

#: field.ErrorType -> the metav1.CauseType a Status carries for it (k8s.io/apimachinery). A type
#: error (FieldValueTypeInvalid) also renders as "Invalid value".
CAUSE_TYPES = {INVALID: "FieldValueInvalid", REQUIRED: "FieldValueRequired", NOT_SUPPORTED: "FieldValueNotSupported",
               FORBIDDEN: "FieldValueForbidden", TOO_LONG: "FieldValueTooLong", TOO_MANY: "FieldValueTooMany",
               DUPLICATE: "FieldValueDuplicate", "Not found": "FieldValueNotFound", "Internal error": "InternalError"}

# Error types that hide the value in the rendered message.
_VALUELESS = {REQUIRED, FORBIDDEN, TOO_LONG}
_OMIT = object()


_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t",
               "\v": "\\v", "\\": "\\\\", '"': '\\"'}


def go_quote(text: str) -> str:
    """Go's ``%q`` of a string (``strconv.Quote``): printable runes as they are, the C escapes, other
    runes below 0x80 as ``\\xNN``, other non-printable runes as ``\\uNNNN`` / ``\\UNNNNNNNN``."""
    out = []
    for ch in text:
        if ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return '"' + "".join(out) + '"'


def render_value(value) -> str:
    """Render a bad value like ``field.Error.ErrorBody`` does for the JSON values we meet."""
    if hasattr(value, "go_repr"):
        return value.go_repr()
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return go_quote(value)
    # Structs and lists print with Go's %#v upstream; a compact JSON form is the honest stand-in.
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


@dataclass(frozen=True)
class FieldError:
    type: str
    field: str
    detail: str = ""
    value: object = _OMIT
    #: Marks errors whose type is an apimachinery "type" error (FieldValueTypeInvalid) or
    #: "not supported" - these block CEL evaluation in the apiserver.
    blocking: bool = False

    def body(self) -> str:
        if self.type in _VALUELESS or self.value is _OMIT:
            text = self.type
        else:
            text = f"{self.type}: {render_value(self.value)}"
        return f"{text}: {self.detail}" if self.detail else text

    def __str__(self) -> str:
        if not self.type:  # a plain error, not a field error (e.g. "unsupported runtime: ...")
            return self.detail
        return f"{self.field or '<nil>'}: {self.body()}"

    def to_dict(self) -> dict:
        data = {"type": self.type, "field": self.field, "detail": self.detail}
        if self.value is not _OMIT:
            data["value"] = getattr(self.value, "value", self.value)
        return data


def invalid(path: str, value, detail: str) -> FieldError:
    return FieldError(INVALID, path, detail, value)


def plain(message: str) -> FieldError:
    """A webhook error that is not about one field."""
    return FieldError("", "", message)


@dataclass
class Rejection(Exception):
    """An admission failure for one object."""

    kind: str  # "schema" | "webhook" | "not-found"
    obj_ref: str  # e.g. 'TrainJob.trainer.kubeflow.org "alpha"'
    errors: list[FieldError] = field(default_factory=list)
    webhook: str | None = None

    @property
    def code(self) -> int:
        return 403 if self.kind == "webhook" else 422

    @property
    def reason(self) -> str:
        return "Forbidden" if self.kind == "webhook" else "Invalid"

    @property
    def message(self) -> str:
        """The Status message kube-apiserver would return."""
        rendered = _aggregate([str(e) for e in self.errors])
        if self.kind == "webhook":
            return f'admission webhook "{self.webhook}" denied the request: {rendered}'
        return f"{self.obj_ref} is invalid: {rendered}"

    def __str__(self) -> str:
        return self.message


def _aggregate(messages: list[str]) -> str:
    # utilerrors.NewAggregate: one message as is, several as "[a, b]" with duplicates removed.
    unique = list(dict.fromkeys(messages))
    if len(unique) == 1:
        return unique[0]
    return "[" + ", ".join(unique) + "]"
