"""What kube-apiserver checks in every object's ``apiVersion``/``kind``/``metadata``, for every kind.

Two stages, as the apiserver runs them on create:

1. **decoding** (:func:`decode_error`, HTTP 400 ``BadRequest``): ``metadata`` is decoded into Go's
   ``metav1.ObjectMeta`` - a value of the wrong JSON type is ``<Kind> in version "<v>" cannot be
   handled as a <Kind>: json: cannot unmarshal ...``. A custom resource's metadata is decoded on its
   own (``ObjectMeta.name``, ``Go value of type v1.ObjectMeta``); a built-in object's as a field of
   the whole object (``ObjectMeta.metadata.name``, ``Go struct field ConfigMap.metadata``). A
   namespace that is not a DNS-1123 label cannot exist: the request is ``404 namespaces "<ns>" not
   found`` (NamespaceLifecycle admission), before anything else.
2. **validation** (:func:`validate`, part of the 422 ``Invalid``): ``ValidateObjectMetaAccessor`` -
   name or generateName required, both checked with the kind's name rule (DNS-1123 subdomain for
   custom resources and most built-in kinds, DNS-1035 label for a Service, DNS-1123 label for a
   Namespace and a StatefulSet), label keys/values and annotation keys.

Every wording here was read back from a kube-apiserver v1.35.8 (the live plane, dry-run creates of a
ConfigMap, a Service and an MPIJob; docs/bad-input.md lists them).
"""

from __future__ import annotations

import re

from .errors import INVALID, REQUIRED, FieldError, Rejection, plain
from .gotypes import _type_error
from .jobset.validation import dns1035_label, dns1123_subdomain

_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS1123_LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
                      "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used "
                      "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
_NAME_PART = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_NAME_PART_MSG = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
                  "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
                  "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
_LABEL_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
                    "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
                    "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")

#: ObjectMeta's fields: JSON kind and the Go type named in a decode error.
_FIELDS = {
    "name": (str, "string"), "generateName": (str, "string"), "namespace": (str, "string"),
    "selfLink": (str, "string"), "uid": (str, "types.UID"), "resourceVersion": (str, "string"),
    "generation": (int, "int64"), "deletionGracePeriodSeconds": (int, "int64"),
    "labels": (dict, "map[string]string"), "annotations": (dict, "map[string]string"),
    "finalizers": (list, "[]string"), "ownerReferences": (list, "[]v1.OwnerReference"),
    "managedFields": (list, "[]v1.ManagedFieldsEntry"),
    "creationTimestamp": (str, "v1.Time"), "deletionTimestamp": (str, "v1.Time"),
}


class DecodeError(Rejection):
    """The apiserver cannot decode the request's object: HTTP 400 ``BadRequest``."""

    @property
    def code(self) -> int:
        return 400

    @property
    def reason(self) -> str:
        return "BadRequest"

    @property
    def message(self) -> str:
        return str(self.errors[0])


class NamespaceNotFound(Rejection):
    """NamespaceLifecycle admission: the object's namespace does not exist (HTTP 404 ``NotFound``)."""

    @property
    def code(self) -> int:
        return 404

    @property
    def reason(self) -> str:
        return "NotFound"

    @property
    def message(self) -> str:
        return str(self.errors[0])


def cannot_handle(obj: dict, detail: str) -> DecodeError:
    kind, version = obj.get("kind", ""), str(obj.get("apiVersion", "")).split("/")[-1]
    return DecodeError("decode", "", [plain(f'{kind} in version "{version}" cannot be handled as a {kind}: {detail}')])


def decode_error(obj: dict, custom: bool) -> str | None:
    """Go's ``json.Unmarshal`` error for ``obj``'s metadata (first mismatch in document order), or None."""
    md = obj.get("metadata")
    if md is None:
        return None
    prefix = "ObjectMeta." if custom else "ObjectMeta.metadata."
    if not isinstance(md, dict):
        found = _type_error(md, "", "", "v1.ObjectMeta").split(" into ")[0]
        where = "Go value of type v1.ObjectMeta" if custom else f"Go struct field {obj.get('kind')}.metadata of type v1.ObjectMeta"
        return f"{found} into {where}"
    for key, value in md.items():
        if key not in _FIELDS or value is None:
            continue
        kind, go_type = _FIELDS[key]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)) \
                or (kind is int and not -2**63 <= value < 2**63):
            return _field_error(value, prefix + key, go_type)
        if kind is dict:
            for item in value.values():
                if item is not None and not isinstance(item, str):
                    return _field_error(item, prefix + key, "string")
        if key == "finalizers":
            for item in value:
                if item is not None and not isinstance(item, str):
                    return _field_error(item, prefix + key, "string")
    return None


def _field_error(value, path: str, go_type: str) -> str:
    # gotypes words "Go struct field <Struct>.<path>"; here the struct and path are one string.
    struct, _, rest = path.partition(".")
    return _type_error(value, struct, rest, go_type)


def check(obj: dict, custom: bool) -> None:
    """Stage 1 (see the module docstring): raise the apiserver's 400 or 404, or return."""
    message = decode_error(obj, custom)
    if message:
        raise cannot_handle(obj, message)
    namespace = (obj.get("metadata") or {}).get("namespace")
    if namespace and not _DNS1123_LABEL.fullmatch(namespace) or (namespace and len(namespace) > 63):
        raise NamespaceNotFound("not-found", "", [plain(f'namespaces "{namespace}" not found')])


def name_rule(kind: str):
    """The name validation of a kind (``ValidateObjectMeta``'s ``nameFn``)."""
    if kind == "Service":
        return dns1035_label
    if kind == "Namespace":
        return dns1123_label
    if kind == "StatefulSet":  # apps ValidateStatefulSetName: NameIsDNSLabel (k8s v1.35 pkg/apis/apps/validation)
        return dns1123_label
    return dns1123_subdomain


def dns1123_label(value: str) -> list[str]:
    """apimachinery ``validation.IsDNS1123Label``."""
    errors = ["must be no more than 63 characters"] if len(value) > 63 else []
    if not _DNS1123_LABEL.fullmatch(value):
        errors.append(_DNS1123_LABEL_MSG)
    return errors


def validate(obj: dict) -> list[FieldError]:
    """Stage 2: ``ValidateObjectMetaAccessor`` for an object that passed :func:`check`."""
    md = obj.get("metadata") or {}
    rule = name_rule(obj.get("kind", ""))
    errors = []
    generate = md.get("generateName")
    if generate:
        # A prefix may end with '-' (maskTrailingDash), the generated suffix follows it.
        masked = generate[:-1] + "a" if len(generate) > 1 and generate.endswith("-") else generate
        errors += [FieldError(INVALID, "metadata.generateName", m, generate) for m in rule(masked)]
    name = md.get("name")
    if not name:
        errors.append(FieldError(REQUIRED, "metadata.name", "name or generateName is required", blocking=True))
    else:
        errors += [FieldError(INVALID, "metadata.name", m, name) for m in rule(name)]
    for key, value in (md.get("labels") or {}).items():
        errors += [FieldError(INVALID, "metadata.labels", m, key) for m in qualified_name(key)]
        if value is not None:
            errors += [FieldError(INVALID, "metadata.labels", m, value) for m in label_value(value)]
    for key in md.get("annotations") or {}:
        errors += [FieldError(INVALID, "metadata.annotations", m, key) for m in qualified_name(key.lower())]
    return errors


def qualified_name(value: str) -> list[str]:
    """apimachinery ``validation.IsQualifiedName``: ``[prefix/]name``."""
    prefix, slash, name = value.rpartition("/")
    if value.count("/") > 1:
        return ["a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
                "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
                "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix "
                "and '/' (e.g. 'example.com/MyName')"]
    errors = []
    if slash:
        if not prefix:
            errors.append("prefix part must be non-empty")
        else:
            errors += [f"prefix part {m}" for m in dns1123_subdomain(prefix)]
    if not name:
        errors.append("name part must be non-empty")
    elif len(name) > 63:
        errors.append("name part must be no more than 63 characters")
    if not _NAME_PART.fullmatch(name):
        errors.append(_NAME_PART_MSG)
    return errors


def label_value(value: str) -> list[str]:
    """apimachinery ``validation.IsValidLabelValue``."""
    errors = ["must be no more than 63 characters"] if len(value) > 63 else []
    if not _LABEL_VALUE.fullmatch(value):
        errors.append(_LABEL_VALUE_MSG)
    return errors
