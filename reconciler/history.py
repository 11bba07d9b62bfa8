"""ControllerRevision names and hashes, as Kubernetes' controller history and LeaderWorkerSet make them.

Both keep a workload's template in a ControllerRevision whose ``data`` is a strategic-merge patch,
``{"spec": {..., "$patch": "replace"}}``, and name the revision after a hash of that patch's bytes:

* kube-controller-manager (k8s v1.35 ``pkg/controller/history``, ``HashControllerRevision``): FNV-32
  (not FNV-1a) of the bytes, then of the collision count written in decimal, printed as a decimal
  ``uint32`` and passed through ``rand.SafeEncodeString``; revision ``<set>-<hash>``;
* LeaderWorkerSet v0.7.0 (``pkg/utils/revision/revision_utils.go``, ``hashRevision``): the same
  without a collision count; revision ``<lws>-<hash>-<revision number>``.

The bytes are Go's ``json.Marshal`` of a ``map[string]interface{}`` (the patch is built by
unmarshalling the object into one): keys sorted, no spaces, ``<``, ``>`` and ``&`` escaped as
``\\u003c``-style sequences, non-ASCII text as UTF-8. :func:`go_json` writes exactly that, so the
hash of a given patch is the one Go computes; which fields the patch holds (the Go types' encoding,
the apiserver's defaults) is the caller's business.
"""

from __future__ import annotations

import json

#: apimachinery ``pkg/util/rand``: the alphabet of generated names and of encoded hashes.
SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_FNV32_OFFSET, _FNV32_PRIME = 0x811C9DC5, 0x01000193


def go_json(value) -> bytes:
    """``json.Marshal`` of decoded JSON (maps with sorted keys), byte for byte."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                          ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(char, escaped)
    return text.encode("utf-8")


def fnv32(data: bytes, seed: int = _FNV32_OFFSET) -> int:
    """Go's ``hash/fnv.New32`` (FNV-1: multiply, then xor) over ``data``, continuing from ``seed``."""
    value = seed
    for byte in data:
        value = (value * _FNV32_PRIME) & 0xFFFFFFFF
        value ^= byte
    return value


def safe_encode(text: str) -> str:
    """``rand.SafeEncodeString``: every character mapped into :data:`SAFE_ALPHABET` by its code point."""
    return "".join(SAFE_ALPHABET[ord(c) % len(SAFE_ALPHABET)] for c in text)


def hash_revision(data: dict, collision_count: int | None = None) -> str:
    """The hash in a ControllerRevision's name: of ``go_json(data)`` and, when given, the collision count."""
    value = fnv32(go_json(data))
    if collision_count is not None:
        value = fnv32(str(collision_count).encode(), value)
    return safe_encode(str(value))
