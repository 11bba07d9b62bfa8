"""A (Cluster)TrainingRuntime as Go's ``encoding/json`` writes the typed object.

The apiserver stores a custom resource as sent; Trainer decodes it into its Go types and, for the
v2.3 runtime snapshot, encodes it again. That round trip changes the text in three ways this module
reproduces for the types a runtime holds (trainer v1alpha1 → JobSet v1alpha2 → batch/v1 → core/v1):

* a non-pointer struct field is always written, so an absent ``metadata``/``resources`` becomes
  ``{}`` and an absent ``resourceFieldRef.divisor`` ``"0"`` (``json:",omitempty"`` does not omit
  structs; ``omitzero`` fields - the runtime's ``spec`` and ``spec.template`` - are left out when
  Go's ``IsZero`` holds), and ``PodSpec.containers`` (no omitempty) becomes ``null`` when absent;
* empty slices, and empty maps of the fields that are maps (labels, annotations, resource lists,
  node selectors), are omitted (``omitempty``);
* quantities (resources, overhead, ``emptyDir.sizeLimit``, ``divisor``) are written as
  ``Quantity.MarshalJSON`` writes them: the text as given when ``ParseQuantity`` finds it canonical
  (``1E3``, ``+100Mi``, ``1.500``), else ``CanonicalizeBytes``' spelling (``2.5`` → ``2500m``,
  ``1.5e3`` → ``1500``, ``1000E3`` → ``1e6``).

Everything else passes through unchanged (pointer fields keep their zero values: ``torch: {}``,
``runLauncherAsNode: false``).
"""

from __future__ import annotations

import json
import math
from fractions import Fraction

from .. import meta

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
                "nodeSelector": "map", "resources": "resources", "volumes": "[]volume"},
    "container": {"resources": "resources", "env": "[]envVar"},
    "resources": {"limits": "quantities", "requests": "quantities"},
    "envVar": {"valueFrom": "envVarSource"},
    "envVarSource": {"resourceFieldRef": "resourceFieldSelector"},
    "resourceFieldSelector": {"divisor": "quantity"},
    "volume": {"emptyDir": "emptyDir"},
    "emptyDir": {"sizeLimit": "quantity"},
    "meta": {"labels": "map", "annotations": "map"},
}
#: (struct, field) written even when absent; "omitzero" ones only when non-empty.
_ALWAYS = {("runtime", "metadata"), ("jobSetTemplate", "metadata"), ("jobSetTemplate", "spec"),
           ("replicatedJob", "template"), ("jobTemplate", "metadata"), ("jobTemplate", "spec"),
           ("jobSpec", "template"), ("podTemplate", "metadata"), ("podTemplate", "spec"),
           ("container", "resources"), ("resourceFieldSelector", "divisor")}
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
    fields = _FIELDS[type_name]
    out = {}
    for key, item in value.items():
        kind = fields.get(key)
        if (type_name, key) in _OMITZERO and _zero(kind, item):
            continue  # omitzero
        if isinstance(item, list) and not item and (type_name, key) not in _NULL_WHEN_ABSENT:
            continue  # omitempty slice
        if kind in ("map", "quantities") and not item:
            continue  # omitempty map
        out[key] = _typed(kind, item)
    for key, kind in fields.items():
        if key in out:
            continue
        if (type_name, key) in _ALWAYS:  # a struct's zero value; a Quantity's is "0"
            out[key] = "0" if kind == "quantity" else _typed(kind, {})
        elif (type_name, key) in _NULL_WHEN_ABSENT:
            out[key] = None
    return out


def _zero(type_name: str, value: dict) -> bool:
    """Go's ``IsZero`` of the struct decoded from ``value``: each field it holds is a non-pointer struct
    field that is zero itself (a slice, map, pointer or scalar that is present is not zero)."""
    fields = _FIELDS[type_name]
    return all(((type_name, k) in _ALWAYS or (type_name, k) in _OMITZERO) and _zero(fields[k], v)
               for k, v in value.items())


def _typed(kind: str | None, value):
    if kind is None:  # (the apiserver prunes a null a schema does not allow, so value is never None)
        return value
    if kind.startswith("[]"):
        return [_typed(kind[2:], v) for v in value]
    if kind == "map":
        return value
    if kind == "quantity":
        return canonical_quantity(value)
    if kind == "quantities":
        return {name: canonical_quantity(q) for name, q in value.items()}
    return _struct(kind, value)


# ---------------------------------------------------------------------- quantities
#
# apimachinery's resource.Quantity (v0.34-v0.36): UnmarshalJSON parses the text with ParseQuantity,
# MarshalJSON writes the text it was parsed from when ParseQuantity found it already canonical,
# else CanonicalizeBytes' spelling.

_DECIMAL_EXPONENT = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_EXPONENT = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_SUFFIX = {exponent: suffix for suffix, exponent in _DECIMAL_EXPONENT.items()}
_BINARY_SUFFIX = {exponent: suffix for suffix, exponent in _BINARY_EXPONENT.items()}
_INT64_MAX = 2**63 - 1


def _split(text: str) -> tuple[int, str, str, str]:
    """``parseQuantityString``: sign, numerator without leading zeros ("0" if none), the digits after
    the point, the suffix."""
    sign, rest = (-1, text[1:]) if text[:1] == "-" else (1, text[1:] if text[:1] == "+" else text)
    digits = len(rest) - len(rest.lstrip("0123456789"))
    num, rest = rest[:digits].lstrip("0") or "0", rest[digits:]
    denom = ""
    if rest[:1] == ".":
        rest = rest[1:]
        digits = len(rest) - len(rest.lstrip("0123456789"))
        denom, rest = rest[:digits], rest[digits:]
    return sign, num, denom, rest


def _interpret(suffix: str) -> tuple[int, int, str]:
    """``quantitySuffixer.interpret``: base, exponent and format of a suffix."""
    if suffix in _DECIMAL_EXPONENT:
        return 10, _DECIMAL_EXPONENT[suffix], "DecimalSI"
    if suffix in _BINARY_EXPONENT:
        return 2, _BINARY_EXPONENT[suffix], "BinarySI"
    return 10, int(suffix[1:]), "DecimalExponent"


def canonical_quantity(q) -> str:
    """A quantity as Go's ``Quantity.MarshalJSON`` writes it after ``UnmarshalJSON`` (``q``: an
    admitted quantity, as the CRD pattern allows)."""
    text = str(q).strip()
    if text == "0":
        return text
    sign, num, denom, suffix = _split(text)
    base, exponent, fmt = _interpret(suffix)
    if fmt == "BinarySI":
        scale = 0
        fast = exponent >= 0 and not denom
        mantissa = 1 << exponent
        precision = 15 - len(num) - int(exponent * 3 / 10) - 1 if fast else -1
    else:
        scale, mantissa, precision = exponent, 1, 18 - (len(num) + len(denom))
    if precision >= 0 and scale - len(denom) >= -9:
        # ParseQuantity's int64 path: the text is kept when it is already in canonical form.
        scale -= len(denom)
        shifted = num + denom
        value = int(shifted)
        if abs(value * mantissa) <= _INT64_MAX:
            if fmt == "BinarySI":
                if exponent % 10 == 0 and value & 0x07 != 0:
                    return text
            elif scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0":
                return text
            return _canonical(sign * value * mantissa * Fraction(10) ** scale, fmt)
    amount = Fraction(int(num + denom), 10 ** len(denom)) * (Fraction(base) ** exponent)
    amount = Fraction(math.ceil(amount * 10**9), 10**9)  # rounded up to nano precision
    if fmt == "BinarySI":
        amount = min(amount, Fraction(_INT64_MAX))
        if amount < 1:
            fmt = "DecimalSI"
    return _canonical(sign * amount, fmt)


def _canonical(amount: Fraction, fmt: str) -> str:
    """``Quantity.CanonicalizeBytes``."""
    if amount == 0:
        return "0"
    if fmt == "BinarySI" and (abs(amount) < 1024 or amount.denominator != 1):
        fmt = "DecimalSI"  # small or fractional binary amounts print as decimal (no rounding)
    if fmt == "BinarySI":
        mantissa, power = int(amount), 0
        while mantissa % 1024 == 0:
            mantissa, power = mantissa // 1024, power + 10
        return f"{mantissa}{_BINARY_SUFFIX.get(power, '')}"
    # Decimal: integer mantissa without trailing zeros, exponent lowered to a multiple of 3.
    exponent = 0
    while amount.denominator != 1:
        amount, exponent = amount * 10, exponent - 1
    mantissa = int(amount)
    while mantissa % 10 == 0:
        mantissa, exponent = mantissa // 10, exponent + 1
    floor3 = exponent // 3 * 3
    mantissa *= 10 ** (exponent - floor3)
    if fmt == "DecimalExponent":
        return f"{mantissa}e{floor3}" if floor3 else str(mantissa)
    return f"{mantissa}{_DECIMAL_SUFFIX.get(floor3, '')}"  # past E (10^18) Go prints no suffix at all


# ---------------------------------------------------------------------- Go's JSON text

#: encoding/json writes a struct's fields in declaration order and a map's keys sorted. Per type: its
#: fields in order (k8s.io/api core/v1 v0.36; trainer v1alpha1 RuntimeRef), and the type of each field
#: that is itself a struct, a list of structs or a map. A custom resource reaches Go pruned to its
#: schema, so a struct holds no other field.
_GO_TYPES: dict[str, tuple[tuple[str, ...], dict[str, str]]] = {
    "container": (("name", "image", "command", "args", "workingDir", "ports", "envFrom", "env", "resources",
                   "resizePolicy", "restartPolicy", "restartPolicyRules", "volumeMounts", "volumeDevices",
                   "livenessProbe", "readinessProbe", "startupProbe", "lifecycle", "terminationMessagePath",
                   "terminationMessagePolicy", "imagePullPolicy", "securityContext", "stdin", "stdinOnce", "tty"),
                  {"ports": "containerPort", "envFrom": "envFromSource", "env": "envVar", "resources": "resources",
                   "resizePolicy": "containerResizePolicy", "restartPolicyRules": "containerRestartRule",
                   "volumeMounts": "volumeMount", "volumeDevices": "volumeDevice", "livenessProbe": "probe",
                   "readinessProbe": "probe", "startupProbe": "probe", "lifecycle": "lifecycle",
                   "securityContext": "securityContext"}),
    "envVar": (("name", "value", "valueFrom"), {"valueFrom": "envVarSource"}),
    "envVarSource": (("fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef", "fileKeyRef"),
                     {"fieldRef": "objectFieldSelector", "resourceFieldRef": "resourceFieldSelector",
                      "configMapKeyRef": "keySelector", "secretKeyRef": "keySelector",
                      "fileKeyRef": "fileKeySelector"}),
    "objectFieldSelector": (("apiVersion", "fieldPath"), {}),
    "resourceFieldSelector": (("containerName", "resource", "divisor"), {}),
    "keySelector": (("name", "key", "optional"), {}),  # ConfigMapKeySelector, SecretKeySelector
    "fileKeySelector": (("volumeName", "path", "key", "optional"), {}),
    "envFromSource": (("prefix", "configMapRef", "secretRef"), {"configMapRef": "envSource", "secretRef": "envSource"}),
    "envSource": (("name", "optional"), {}),  # ConfigMapEnvSource, SecretEnvSource
    "containerPort": (("name", "hostPort", "containerPort", "protocol", "hostIP"), {}),
    "volumeMount": (("name", "readOnly", "recursiveReadOnly", "mountPath", "subPath", "mountPropagation",
                     "subPathExpr"), {}),
    "volumeDevice": (("name", "devicePath"), {}),
    "resources": (("limits", "requests", "claims"), {"limits": "map", "requests": "map", "claims": "resourceClaim"}),
    "resourceClaim": (("name", "request"), {}),
    "containerResizePolicy": (("resourceName", "restartPolicy"), {}),
    "containerRestartRule": (("action", "exitCodes"), {"exitCodes": "exitCodes"}),
    "exitCodes": (("operator", "values"), {}),
    "probe": (("exec", "httpGet", "tcpSocket", "grpc", "initialDelaySeconds", "timeoutSeconds", "periodSeconds",
               "successThreshold", "failureThreshold", "terminationGracePeriodSeconds"),
              {"exec": "execAction", "httpGet": "httpGetAction", "tcpSocket": "tcpSocketAction", "grpc": "grpcAction"}),
    "execAction": (("command",), {}),
    "httpGetAction": (("path", "port", "host", "scheme", "httpHeaders"), {"httpHeaders": "httpHeader"}),
    "httpHeader": (("name", "value"), {}),
    "tcpSocketAction": (("port", "host"), {}),
    "grpcAction": (("port", "service"), {}),
    "lifecycle": (("postStart", "preStop", "stopSignal"), {"postStart": "lifecycleHandler", "preStop": "lifecycleHandler"}),
    "lifecycleHandler": (("exec", "httpGet", "tcpSocket", "sleep"),
                         {"exec": "execAction", "httpGet": "httpGetAction", "tcpSocket": "tcpSocketAction",
                          "sleep": "sleepAction"}),
    "sleepAction": (("seconds",), {}),
    "securityContext": (("capabilities", "privileged", "seLinuxOptions", "windowsOptions", "runAsUser", "runAsGroup",
                         "runAsNonRoot", "readOnlyRootFilesystem", "allowPrivilegeEscalation", "procMount",
                         "seccompProfile", "appArmorProfile"),
                        {"capabilities": "capabilities", "seLinuxOptions": "seLinuxOptions",
                         "windowsOptions": "windowsOptions", "seccompProfile": "profile", "appArmorProfile": "profile"}),
    "capabilities": (("add", "drop"), {}),
    "seLinuxOptions": (("user", "role", "type", "level"), {}),
    "windowsOptions": (("gmsaCredentialSpecName", "gmsaCredentialSpec", "runAsUserName", "hostProcess"), {}),
    "profile": (("type", "localhostProfile"), {}),  # SeccompProfile, AppArmorProfile
    "runtimeRef": (("name", "apiGroup", "kind"), {}),
}


def _ordered(type_name: str, value):
    """``value`` (of Go type ``type_name``, or a list of it) with its keys in Go's JSON order."""
    if isinstance(value, list):
        return [_ordered(type_name, v) for v in value]
    if type_name == "map":
        return dict(sorted(value.items()))
    fields, nested = _GO_TYPES[type_name]
    return {k: _ordered(nested[k], value[k]) if k in nested else value[k] for k in fields if k in value}


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
