"""TrainJob defaulting webhook ``defaulter.trainjob.trainer.kubeflow.org`` (v2.2+).

kube-apiserver calls mutating webhooks *before* it checks a custom resource against the CRD
schema. controller-runtime's defaulting handler first decodes the object into Trainer's Go type,
and answers a value of the wrong JSON type with HTTP 400 (``admission.Errored``) and Go's
``encoding/json`` error - so such a TrainJob never reaches the schema's 422. Seen live on Trainer
v2.3.0: numNodes ``"two"`` gives ``400 admission webhook "defaulter.trainjob.trainer.kubeflow.org"
denied the request: json: cannot unmarshal string into Go struct field Trainer.spec.trainer.numNodes
of type int32``.

Go's message names the innermost struct and the JSON path from the root; its decoder keeps the first
mismatch in document order, and the apiserver sends the object with sorted keys. The struct names
are known here for the TrainJob's own types (below); a mismatch elsewhere is left to the schema.
What the webhook then defaults (v2.3 stamps ``runtimePatches[].time`` on create) is not modelled.
"""

from __future__ import annotations

from .. import crds, meta
from ..errors import Rejection, plain
from ..gotypes import go_number

WEBHOOK = "defaulter.trainjob.trainer.kubeflow.org"
GROUP = "trainer.kubeflow.org"

#: JSON path (without indexes) of a struct → its Go type name, for the TrainJob's types.
_GO_STRUCTS = {
    "": "TrainJob", "spec": "TrainJobSpec", "spec.runtimeRef": "RuntimeRef", "spec.trainer": "Trainer",
    "spec.initializer": "Initializer", "spec.initializer.dataset": "DatasetInitializer",
    "spec.initializer.model": "ModelInitializer", "spec.runtimePatches": "RuntimePatch",
    "spec.trainer.env": "EnvVar", "spec.initializer.dataset.env": "EnvVar", "spec.initializer.model.env": "EnvVar",
}
_JSON_KIND = {str: "string", bool: "bool", dict: "object", list: "array"}


class BadRequest(Rejection):
    """A webhook's HTTP 400 (not a denial): controller-runtime's ``admission.Errored``, no reason."""

    @property
    def code(self) -> int:
        return 400

    @property
    def reason(self) -> str:
        return ""


def decode_error(obj: dict, schema: dict, structs: dict[str, str] | None = None) -> str | None:
    """Go's ``json.Unmarshal`` error for ``obj`` (first type mismatch), if it has one we can name;
    ``structs`` maps a struct's JSON path to its Go type name (default: the TrainJob's)."""
    return _walk(obj, schema, "", _GO_STRUCTS if structs is None else structs)


def _walk(value, schema: dict, path: str, structs: dict[str, str]) -> str | None:
    if value is None or schema.get("x-kubernetes-int-or-string") or schema.get("x-kubernetes-preserve-unknown-fields"):
        return None
    expected = schema.get("type")
    if expected in ("integer", "number", "boolean", "string"):
        return _scalar(value, schema, path, structs)
    if expected == "object" and isinstance(value, dict):
        properties = schema.get("properties") or {}
        for key in sorted(value):
            if path == "" and key in ("metadata", "status"):
                continue
            sub = properties.get(key)
            if sub is None:
                continue
            found = _walk(value[key], sub, f"{path}.{key}" if path else key, structs)
            if found:
                return found
    elif expected == "array" and isinstance(value, list):
        for item in value:
            found = _walk(item, schema.get("items") or {}, path, structs)
            if found:
                return found
    return None


def _scalar(value, schema: dict, path: str, structs: dict[str, str]) -> str | None:
    expected = schema["type"]
    if expected == "string":
        ok, go_type = isinstance(value, str), "string"
    elif expected == "boolean":
        ok, go_type = isinstance(value, bool), "bool"
    else:
        go_type = schema.get("format") or ("int" if expected == "integer" else "float64")
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) \
            and (expected == "number" or float(value).is_integer())
    if ok:
        return None
    parent = path.rpartition(".")[0]
    struct = structs.get(parent)
    if struct is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        found = f"number {go_number(value)}" if expected == "integer" and isinstance(value, float) else "number"
    else:
        found = _JSON_KIND.get(type(value), "value")
    return f"json: cannot unmarshal {found} into Go struct field {struct}.{path} of type {go_type}"


def default_trainjob(trainjob: dict, cluster) -> None:
    """Mutating admission of a TrainJob: refuse what Trainer's Go types cannot decode. (The apiserver
    calls it only for a TrainJob of a version it serves; a webhook's denial names no object.)"""
    schema, _ = crds.schemas(cluster.profile.crd_dirs)[(GROUP, trainjob["apiVersion"].rpartition("/")[2], "TrainJob")]
    message = decode_error(trainjob, schema)
    if message:
        raise BadRequest("webhook", meta.ref(trainjob), [plain(message)], webhook=WEBHOOK)
