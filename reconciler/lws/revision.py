"""LeaderWorkerSet's ControllerRevisions (v0.7.0 ``pkg/utils/revision/revision_utils.go``).

A revision keeps what a group is built from: ``spec.leaderWorkerTemplate`` and ``spec.networkConfig``
(a missing networkConfig counts as Shared), as the patch
``{"spec": {"leaderWorkerTemplate": {..., "$patch": "replace"}, "networkConfig": {..., "$patch": "replace"}}}``.
Its key - label ``leaderworkerset.sigs.k8s.io/template-revision-hash`` on the revision, the
StatefulSets and the pods - is the hash of that patch as LWS's Go code encodes it (:func:`go_patch`,
:mod:`reconciler.history`); the revision is named ``<lws>-<key>-<number>`` (numbers count up from 1)
and owned by the LeaderWorkerSet. So ``replicas``, ``rolloutStrategy`` and ``startupPolicy`` changes
make no new revision; a template, ``size``, ``restartPolicy`` or subdomain policy change does.

Render stores ``data`` as written; the key is computed from the Go encoding LWS hashes (pod
templates decoded into ``corev1.PodTemplateSpec`` - ``metadata: {"creationTimestamp": null}``,
``resources: {}`` - with the upstream CRD's ``protocol: TCP`` default for container ports). v0.7.0
builds with apimachinery v0.33.3, whose ``ObjectMeta.CreationTimestamp`` is ``omitempty`` only (a
struct: written as ``null``); ``omitzero`` came with v0.34. The real v0.7.0 manager's revision of
``admission/defaults`` is named ``test-sample-59cc48d6d5-1``, which is this hash.
"""

from __future__ import annotations

from .. import history, meta
from ..trainer.gotyped import pod_template
from . import keys

KIND = "ControllerRevision"


def patch(lws: dict) -> dict:
    """``getPatch`` over the stored object."""
    spec = lws.get("spec") or {}
    template = meta.clone(spec.get("leaderWorkerTemplate") or {})
    network = meta.clone(spec.get("networkConfig") or {"subdomainPolicy": keys.SHARED})
    template["$patch"] = "replace"
    network["$patch"] = "replace"
    return {"spec": {"leaderWorkerTemplate": template, "networkConfig": network}}


def go_patch(lws: dict) -> dict:
    """The patch as LWS encodes it: its Go types' field set (``LeaderWorkerTemplate``: leaderTemplate,
    workerTemplate, size, restartPolicy, subGroupPolicy)."""
    data = patch(lws)
    template = data["spec"]["leaderWorkerTemplate"]
    for key in ("leaderTemplate", "workerTemplate"):
        if key in template or key == "workerTemplate":
            template[key] = _with_port_protocol(pod_template(template.get(key) or {}))
            template[key]["metadata"].setdefault("creationTimestamp", None)  # apimachinery v0.33: no omitzero
    return data


def key_of(lws: dict) -> str:
    """``hashRevision``: the revision key of the LeaderWorkerSet as it is now."""
    return history.hash_revision(go_patch(lws))


def revisions(cluster, lws: dict, key: str | None = None) -> list[dict]:
    """``ListRevisions``: the revisions labelled with the LWS name (and ``key``), owned by it or by
    nobody, lowest revision number first."""
    uid = lws["metadata"].get("uid")
    found = []
    for revision in cluster.list("apps", KIND, lws["metadata"].get("namespace")):
        labels = revision["metadata"].get("labels") or {}
        if labels.get(keys.NAME) != lws["metadata"]["name"] or (key is not None and labels.get(keys.REVISION) != key):
            continue
        controller = next((r for r in revision["metadata"].get("ownerReferences") or [] if r.get("controller")), None)
        if controller is None or controller.get("uid") == uid:
            found.append(revision)
    return sorted(found, key=lambda r: r.get("revision", 0))


def get(cluster, lws: dict, key: str) -> dict | None:
    """``GetRevision``: the revision with ``key`` (the highest numbered, if several); none for ``""``."""
    if not key:
        return None
    found = revisions(cluster, lws, key)
    return found[-1] if found else None


def new(cluster, lws: dict, key: str = "") -> dict:
    """``NewRevision`` (not stored): numbered after the highest existing one; ``key`` overrides the
    label (a StatefulSet made by an LWS version without revisions keeps its hash)."""
    existing = revisions(cluster, lws)
    number = existing[-1].get("revision", 0) + 1 if existing else 1
    digest = key_of(lws)
    name = lws["metadata"]["name"][:220]
    return {"apiVersion": "apps/v1", "kind": KIND,
            "metadata": {"name": f"{name}-{digest}-{number}", "namespace": lws["metadata"].get("namespace"),
                         "labels": {keys.NAME: lws["metadata"]["name"], keys.REVISION: key or digest},
                         "ownerReferences": [meta.controller_ref(lws)]},
            "data": patch(lws), "revision": number}


def equal(a: dict | None, b: dict | None) -> bool:
    """``EqualRevision``: the same patch (both absent counts as equal)."""
    if a is None or b is None:
        return a is b
    return history.go_json(a.get("data")) == history.go_json(b.get("data"))


def key(obj: dict | None) -> str:
    """``GetRevisionKey``: the revision label of a pod, StatefulSet or revision."""
    return ((obj or {}).get("metadata", {}).get("labels") or {}).get(keys.REVISION, "")


def apply(lws: dict, revision: dict) -> dict:
    """``ApplyRevision``: ``lws`` with the revision's leaderWorkerTemplate and networkConfig."""
    restored = meta.clone(lws)
    spec = restored.setdefault("spec", {})
    for field, value in ((revision.get("data") or {}).get("spec") or {}).items():
        value = meta.clone(value)
        if isinstance(value, dict):
            value.pop("$patch", None)
        spec[field] = value
    return restored


def _with_port_protocol(template: dict) -> dict:
    for container in ((template.get("spec") or {}).get("initContainers") or []) + \
            ((template.get("spec") or {}).get("containers") or []):
        for port in container.get("ports") or []:
            port.setdefault("protocol", "TCP")
    return template
