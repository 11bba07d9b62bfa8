"""A (Cluster)TrainingRuntime as Go's ``encoding/json`` writes the typed object.

The apiserver stores a custom resource as sent; Trainer decodes it into its Go types and, for the
v2.3 runtime snapshot, encodes it again. That round trip changes the text in three ways this module
reproduces for the types a runtime holds (trainer v1alpha1 → JobSet v1alpha2 → batch/v1 → core/v1):

* a non-pointer struct field is always written, so an absent ``metadata``/``resources`` becomes
  ``{}`` (``json:",omitempty"`` does not omit structs; ``omitzero`` fields - the runtime's
  ``spec`` and ``spec.template`` - are left out when empty), and ``PodSpec.containers`` (no
  omitempty) becomes ``null`` when absent;
* empty slices, and empty maps of the fields that are maps (labels, annotations, resource lists,
  node selectors), are omitted (``omitempty``);
* quantities are re-spelled canonically (``resource.Quantity.String()``: ``2.5`` → ``2500m``).

Everything else passes through unchanged (pointer fields keep their zero values: ``torch: {}``,
``runLauncherAsNode: false``).
"""

from __future__ import annotations

import json
import math
from fractions import Fraction

from .. import meta, quantity

# Field -> type of the value, per struct type. A name in _ALWAYS is a non-pointer struct field.
_FIELDS: dict[str, dict[str, str]] = {
    "runtime": {"metadata": "meta", "spec": "runtimeSpec"},
    "runtimeSpec": {"template": "jobSetTemplate"},
    "jobSetTemplate": {"metadata": "meta", "spec": "jobSetSpec"},
    "jobSetSpec": {"replicatedJobs": "[]replicatedJob"},
    "replicatedJob": {"template": "jobTemplate"},
    "jobTemplate": {"metadata": "meta", "spec": "jobSpec"},
    "jobSpec": {"template": "podTemplate"},
    "podTemplate": {"metadata": "meta", "spec": "podSpec"},
    "podSpec": {"containers": "[]container", "initContainers": "[]container", "overhead": "quantities",
                "nodeSelector": "map", "resources": "resources"},
    "container": {"resources": "resources"},
    "resources": {"limits": "quantities", "requests": "quantities"},
    "meta": {"labels": "map", "annotations": "map"},
}
#: (struct, field) written even when absent; "omitzero" ones only when non-empty.
_ALWAYS = {("runtime", "metadata"), ("jobSetTemplate", "metadata"), ("jobSetTemplate", "spec"),
           ("replicatedJob", "template"), ("jobTemplate", "metadata"), ("jobTemplate", "spec"),
           ("jobSpec", "template"), ("podTemplate", "metadata"), ("podTemplate", "spec"),
           ("container", "resources")}
_OMITZERO = {("runtime", "spec"), ("runtimeSpec", "template")}
#: Slices without omitempty: written as null when nil.
_NULL_WHEN_ABSENT = {("podSpec", "containers")}


def runtime(obj: dict) -> dict:
    """``obj`` (a stored runtime) after a Go decode/encode round trip."""
    return _struct("runtime", meta.clone(obj))


def pod_template(template: dict) -> dict:
    """A ``corev1.PodTemplateSpec`` after the same round trip (other workloads' templates: LeaderWorkerSet)."""
    return _struct("podTemplate", meta.clone(template))


def _struct(type_name: str, value: dict) -> dict:
    fields = _FIELDS.get(type_name, {})
    out = {}
    for key, item in value.items():
        kind = fields.get(key)
        if isinstance(item, list) and not item and (type_name, key) not in _NULL_WHEN_ABSENT:
            continue  # omitempty slice
        if kind in ("map", "quantities") and not item:
            continue  # omitempty map
        out[key] = _typed(kind, item)
    for key, kind in fields.items():
        if key in out:
            continue
        if (type_name, key) in _ALWAYS:
            out[key] = _typed(kind, {})
        elif (type_name, key) in _NULL_WHEN_ABSENT:
            out[key] = None
    for key in [k for k in out if (type_name, k) in _OMITZERO and not out[k]]:
        del out[key]
    return out


def _typed(kind: str | None, value):
    if kind is None or value is None:
        return value
    if kind.startswith("[]"):
        return [_typed(kind[2:], v) for v in value]
    if kind == "map":
        return value
    if kind == "quantities":
        return {name: canonical_quantity(q) for name, q in value.items()}
    return _struct(kind, value) if isinstance(value, dict) else value


# ---------------------------------------------------------------------- quantities

_DECIMAL_SUFFIX = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
_BINARY_SUFFIX = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]


def _format(q) -> str:
    """``resource.Quantity`` keeps the format it was parsed with: BinarySI, DecimalExponent, DecimalSI."""
    text = str(q).strip()
    if isinstance(q, str) and text[-2:] in _BINARY_SUFFIX[1:]:
        return "BinarySI"
    if isinstance(q, str) and ("e" in text.lower()[1:] and text[-1].isdigit()):
        return "DecimalExponent"
    return "DecimalSI"


def canonical_quantity(q) -> str:
    """``Quantity.String()`` of a parsed quantity (values at nano precision or coarser)."""
    amount = quantity.parse(q)
    if amount == 0:
        return "0"
    fmt = _format(q)
    amount = Fraction(math.ceil(amount * 10**9), 10**9)  # parsing rounds up to nano precision
    if fmt == "BinarySI" and (abs(amount) < 1024 or amount.denominator != 1):
        fmt = "DecimalSI"  # small or fractional binary amounts print as decimal (no rounding)
    if fmt == "BinarySI":
        mantissa, power = int(amount), 0
        while mantissa % 1024 == 0 and power < len(_BINARY_SUFFIX) - 1:
            mantissa, power = mantissa // 1024, power + 1
        return f"{mantissa}{_BINARY_SUFFIX[power]}"
    # Decimal: integer mantissa without trailing zeros, exponent lowered to a multiple of 3.
    exponent = 0
    while amount.denominator != 1:
        amount, exponent = amount * 10, exponent - 1
    mantissa = int(amount)
    while mantissa % 10 == 0:
        mantissa, exponent = mantissa // 10, exponent + 1
    floor3 = min((exponent // 3) * 3, 18)
    mantissa *= 10 ** (exponent - floor3)
    if fmt == "DecimalExponent":
        return f"{mantissa}{'E' if 'E' in str(q) else 'e'}{floor3}"
    return f"{mantissa}{_DECIMAL_SUFFIX[floor3]}"



# ---------------------------------------------------------------------- Go's JSON text

#: encoding/json writes struct fields in declaration order (k8s.io/api core/v1); maps sorted by key.
_FIELD_ORDER = {
    "container": ["name", "image", "command", "args", "workingDir", "ports", "envFrom", "env", "resources",
                  "resizePolicy", "restartPolicy", "restartPolicyRules", "volumeMounts", "volumeDevices",
                  "livenessProbe", "readinessProbe", "startupProbe", "lifecycle", "terminationMessagePath",
                  "terminationMessagePolicy", "imagePullPolicy", "securityContext", "stdin", "stdinOnce", "tty"],
    "envVar": ["name", "value", "valueFrom"],
    "envVarSource": ["fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef", "fileKeyRef"],
    "containerPort": ["name", "hostPort", "containerPort", "protocol", "hostIP"],
    "volumeMount": ["name", "readOnly", "recursiveReadOnly", "mountPath", "subPath", "mountPropagation", "subPathExpr"],
    "resources": ["limits", "requests", "claims"],
    "runtimeRef": ["name", "apiGroup", "kind"],  # trainer v1alpha1 RuntimeRef
}
_NESTED = {"container": {"env": "envVar", "ports": "containerPort", "volumeMounts": "volumeMount", "resources": "resources"},
           "envVar": {"valueFrom": "envVarSource"}}


def _ordered(type_name: str | None, value):
    if isinstance(value, list):
        return [_ordered(type_name, v) for v in value]
    if not isinstance(value, dict):
        return value
    order = _FIELD_ORDER.get(type_name)
    if order is None:  # a map (sorted by Go) or a struct not listed here (kept as given)
        keys = sorted(value) if type_name in ("map", None) and all(isinstance(k, str) for k in value) else list(value)
    else:
        keys = [k for k in order if k in value] + [k for k in value if k not in order]
    nested = _NESTED.get(type_name, {})
    return {k: _ordered(nested.get(k, "map" if type_name == "resources" else None), value[k]) for k in keys}


def go_json(type_name: str, value) -> str:
    """``json.Marshal`` text of a typed value: field order, HTML-safe escapes, no spaces."""
    text = json.dumps(_ordered(type_name, value), separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


class GoValue:
    """A typed value handed to field.Invalid: apimachinery v0.34+ prints it as its JSON."""

    def __init__(self, type_name: str, value):
        self.type_name, self.value = type_name, value

    def go_repr(self) -> str:
        return go_json(self.type_name, self.value)


class Containers(GoValue):
    """``[]corev1.Container``, typed (resources ``{}``, canonical quantities)."""

    def __init__(self, containers: list[dict]):
        super().__init__("container", [_struct("container", meta.clone(c)) for c in containers])
