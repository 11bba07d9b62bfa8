"""Mutating webhooks decode the object into their Go types before their handler runs.

kube-apiserver calls mutating webhooks before it validates a custom resource against its CRD schema,
so a webhook sees objects the schema would refuse. Upstream's handlers decode the request's object
first (controller-runtime's ``admission.Decoder``; Volcano's ``schema.DecodeJob``) and answer a value
of the wrong JSON type with Go's ``encoding/json`` error - controller-runtime with HTTP 400
(``admission.Errored``), Volcano with a plain denial (403). Their handler never runs on it.

:func:`decoding` gives a Python mutator the same front: Go's error where the struct holding the bad
value is known (``structs``: JSON path → Go struct name; :func:`reconciler.k8s_schemas.go_structs`
supplies pod templates'); where it is not (a list where Go wants a struct: the message would need
the field's Go type), the handler is skipped and the schema's 422 answers - the one place where the
reference's answer is not upstream's word for word (docs/bad-input.md). A null, which Go decodes to a
zero value, does not stop the handler: the apiserver has already dropped nulls the schema does not
allow (:func:`reconciler.schema.prune_and_default`).
"""

from __future__ import annotations

from functools import wraps

from . import crds, k8s_schemas, meta, schema
from .errors import FieldError, Rejection, plain
from .trainer.defaulter import BadRequest, decode_error


POD_TEMPLATE = "io.k8s.api.core.v1.PodTemplateSpec"


def items(value) -> list:
    """The list at ``value``, or none (a wrong type there is the struct walk's to report)."""
    return value if isinstance(value, list) else []


def field(value, *keys):
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def decoding(webhook: str, structs: dict[str, str], status: int = 400, templates=None):
    """Decorate ``mutator(obj, cluster)`` of a custom resource kind; ``status`` 400 (controller-runtime)
    or 403 (a plain denial carrying the error, Volcano's ``ToAdmissionResponse``). ``templates(obj)``
    yields ``(template, JSON path, Go struct holding it)`` for each pod template, decoded with
    kube-apiserver's own types (:func:`reconciler.k8s_schemas.decode_error`)."""
    def wrap(mutator):
        @wraps(mutator)
        def mutate(obj: dict, cluster) -> None:
            api_version = obj.get("apiVersion", "")
            served = crds.schemas(cluster.profile.crd_dirs).get(
                (meta.group_of(api_version), api_version.split("/")[-1], obj.get("kind", "")))
            if served is not None:
                message = decode_error(obj, served[0], structs) or next(
                    (m for m in (k8s_schemas.decode_error(t, POD_TEMPLATE, path, struct, sort_keys=True)
                                 for t, path, struct in (templates(obj) if templates else ())) if m), None)
                if message:
                    error_class = BadRequest if status == 400 else Rejection
                    raise error_class("webhook", meta.ref(obj), [FieldError("", "", message) if status == 400
                                                                  else plain(message)], webhook=webhook)
                if schema.type_errors(obj, served[0]):
                    return  # undecodable where we cannot name the struct: the schema's 422 answers
            mutator(obj, cluster)
        mutate.webhook_name = webhook
        return mutate
    return wrap
