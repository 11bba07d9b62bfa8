"""Normalize a set of objects into the stable form stored in goldens.

Render and live runs produce the same golden only after removing what the apiserver invents:
UIDs (replaced by the name of the object they point at, so owner links stay visible), resource
versions, timestamps, managed fields, generated name suffixes, status, and the SSH key pair
(checked to be a real ECDSA P-521 key, then replaced by a description, so goldens never churn).
"""

from __future__ import annotations

import base64
import copy
import json

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

_DROP_METADATA = ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields", "selfLink")
_KIND_ORDER = ["Namespace", "ClusterTrainingRuntime", "TrainingRuntime", "TrainJob", "JobSet", "ConfigMap",
               "Secret", "Service", "Job", "Pod"]
SSH_PRIVATE = "<ECDSA P-521 private key, PEM 'EC PRIVATE KEY'>"
SSH_PUBLIC = "<ecdsa-sha2-nistp521 authorized_keys line of ssh-privatekey>"


def normalize(objects: list[dict]) -> list[dict]:
    owners = {o["metadata"]["uid"]: _identity(o) for o in objects if o.get("metadata", {}).get("uid")}
    out = [_normalize_one(copy.deepcopy(o), owners) for o in objects]
    return sorted(out, key=_sort_key)


def _identity(obj: dict) -> str:
    md = obj["metadata"]
    ns = f"{md['namespace']}/" if md.get("namespace") else ""
    return f"uid of {obj['kind']} {ns}{md.get('name')}"


def _normalize_one(obj: dict, owners: dict[str, str]) -> dict:
    md = obj.setdefault("metadata", {})
    for key in _DROP_METADATA:
        md.pop(key, None)
    if md.get("generateName"):
        md["name"] = md["generateName"] + "*"
    obj.pop("status", None)
    if obj.get("kind") == "Secret" and obj.get("type") == "kubernetes.io/ssh-auth":
        _normalize_ssh(obj)
    return _replace_uids(obj, owners)


def _replace_uids(value, owners: dict[str, str]):
    if isinstance(value, dict):
        return {k: _replace_uids(v, owners) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace_uids(v, owners) for v in value]
    if isinstance(value, str) and value in owners:
        return owners[value]
    return value


def _normalize_ssh(secret: dict) -> None:
    data = secret.get("data") or {}
    try:
        private_pem = base64.b64decode(data["ssh-privatekey"])
        key = serialization.load_pem_private_key(private_pem, password=None)
        if not isinstance(key, ec.EllipticCurvePrivateKey) or key.curve.name != "secp521r1":
            raise ValueError(f"not an ECDSA P-521 key ({type(key).__name__})")
        if not private_pem.startswith(b"-----BEGIN EC PRIVATE KEY-----"):
            raise ValueError("PEM block type is not 'EC PRIVATE KEY'")
        data["ssh-privatekey"] = SSH_PRIVATE
    except Exception as exc:  # the golden shows exactly what is wrong
        data["ssh-privatekey"] = f"<INVALID ssh-privatekey: {exc}>"
        return
    expected = key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH) + b"\n"
    try:
        public = base64.b64decode(data["ssh-publickey"])
    except Exception as exc:
        data["ssh-publickey"] = f"<INVALID ssh-publickey: {exc}>"
        return
    data["ssh-publickey"] = SSH_PUBLIC if public == expected else f"<INVALID ssh-publickey: {public[:40]!r}...>"


def _sort_key(obj: dict):
    kind = obj.get("kind", "")
    order = _KIND_ORDER.index(kind) if kind in _KIND_ORDER else len(_KIND_ORDER)
    md = obj.get("metadata", {})
    return (order, kind, md.get("namespace", ""), md.get("name", ""), json.dumps(obj, sort_keys=True))
