"""Case isolation on a shared cluster: a fresh namespace per case namespace, translated back after.

Every namespace a case uses (its inputs' ``metadata.namespace``, ``default`` when unset, and the
names of Namespace inputs) gets a live namespace of its own, ``tc-<run>-<n>-<name>``; the inputs
are rewritten into it and whatever comes back is rewritten out of it again, so the outcome names
the case's namespaces. Cluster-scoped inputs (ClusterTrainingRuntimes) keep their names - names
are part of what is tested (length rules, messages) - so cases run one at a time and delete them
before the next starts (:mod:`conformance.live.session`).

Some values depend on the namespace in a way a rename cannot see: JobSet's
``jobset.sigs.k8s.io/job-key`` is ``sha1("<namespace>/<job name>")``, LeaderWorkerSet's
``leaderworkerset.sigs.k8s.io/group-key`` ``sha1("<namespace>/<leader pod name>")``. A hash equal
to that of a live namespace and a name of the outcome is replaced by the same hash of the case
namespace. A hash of content that holds such a value follows it: a StatefulSet's
ControllerRevision is named ``<set>-<hash of its data>`` (kube-controller-manager's
``HashControllerRevision``, :func:`reconciler.history.hash_revision`), and LWS's worker
StatefulSet templates carry the group-key. When the hash of a live revision's data is the one in
its name (so it is the hash kube-controller-manager computes), the hash of the data translated
back replaces it - in its name, its hash label and wherever the revision is named (pod labels,
StatefulSet status).
"""

from __future__ import annotations

import copy
import hashlib
import itertools

from reconciler import history
from reconciler.statefulset import HASH_LABEL

_counter = itertools.count(1)
MAX_NAME = 63


class NamespaceMap:
    def __init__(self, run_token: str):
        self.case_no = next(_counter)
        self.prefix = f"tc-{run_token}-{self.case_no}-"
        self.forward: dict[str, str] = {}

    def live(self, namespace: str) -> str:
        if namespace not in self.forward:
            self.forward[namespace] = (self.prefix + namespace)[:MAX_NAME].rstrip("-")
        return self.forward[namespace]

    @property
    def live_namespaces(self) -> list[str]:
        return list(self.forward.values())

    def rewrite_input(self, obj: dict, namespaced: bool) -> dict:
        obj = copy.deepcopy(obj)
        md = obj.setdefault("metadata", {})
        if obj.get("kind") == "Namespace" and obj.get("apiVersion") == "v1":
            md["name"] = self.live(md.get("name", ""))
        elif namespaced:
            md["namespace"] = self.live(md.get("namespace") or "default")
        return obj

    # ------------------------------------------------------------------ back
    def back(self, value, names: list[tuple[str, str]] = ()):
        """``value`` with every live namespace name replaced by the case's (and namespace/name hashes
        re-hashed).

        ``names`` are (live namespace, object name) pairs of the outcome.
        """
        hashes = {}
        backward = {v: k for k, v in self.forward.items()}
        for live_ns, name in names:
            if live_ns in backward:
                hashes[_name_key(live_ns, name)] = _name_key(backward[live_ns], name)
        # Longest first, so that "tc-x-1-team" never replaces part of "tc-x-1-team-b".
        renames = sorted(backward.items(), key=lambda kv: len(kv[0]), reverse=True)
        out = _walk(value, renames, hashes)
        if isinstance(value, list):
            revisions = _revision_hashes(value, out)
            if revisions:
                out = _walk(out, [], revisions)
        return out


def _revision_hashes(live: list, translated: list) -> dict[str, str]:
    """Live revision hash -> the hash of the translated data (bare and as ``<set>-<hash>``), for each
    StatefulSet ControllerRevision whose translated data hashes differently - and for each
    StatefulSet's own template, whose revision may be gone already (a set being deleted)."""
    collisions = {o["metadata"].get("uid"): (o.get("status") or {}).get("collisionCount", 0)
                  for o in live if isinstance(o, dict) and o.get("kind") == "StatefulSet" and o.get("metadata")}
    remaps = {}
    for before, after in zip(live, translated):
        if isinstance(before, dict) and (before.get("apiVersion"), before.get("kind")) == ("apps/v1", "StatefulSet"):
            _template_hash(before, after, remaps)
        if not isinstance(before, dict) or (before.get("apiVersion"), before.get("kind")) != ("apps/v1", "ControllerRevision"):
            continue
        md = before.get("metadata") or {}
        digest = (md.get("labels") or {}).get(HASH_LABEL)
        owner = next((r for r in md.get("ownerReferences") or [] if r.get("controller")), None)
        if not digest or owner is None or owner.get("kind") != "StatefulSet" or "data" not in before:
            continue
        collision = collisions.get(owner.get("uid"), 0)
        if history.hash_revision(before["data"], collision) != digest:
            continue  # not a hash this harness can recompute: left as it is (a golden diff shows it)
        translated_digest = history.hash_revision(after["data"], collision)
        if translated_digest != digest:
            prefix = owner.get("name", "")[:223]
            remaps[digest] = translated_digest
            remaps[f"{prefix}-{digest}"] = f"{prefix}-{translated_digest}"
    return remaps


def _name_key(namespace: str, name: str) -> str:
    return hashlib.sha1(f"{namespace}/{name}".encode()).hexdigest()


def _walk(value, renames, hashes):
    if isinstance(value, dict):
        return {_walk(k, renames, hashes): _walk(v, renames, hashes) for k, v in value.items()}
    if isinstance(value, list):
        return [_walk(v, renames, hashes) for v in value]
    if isinstance(value, str):
        if value in hashes:
            return hashes[value]
        for live, original in renames:
            if live in value:
                value = value.replace(live, original)
        return value
    return value


def _template_hash(before: dict, after: dict, remaps: dict[str, str]) -> None:
    """The revision a StatefulSet's current template makes (``getPatch``: the template under
    ``spec.template`` with ``$patch: replace``), when it is the set's update revision."""
    def digest(sts: dict) -> str:
        template = dict((sts.get("spec") or {}).get("template") or {})
        template["$patch"] = "replace"
        return history.hash_revision({"spec": {"template": template}}, (sts.get("status") or {}).get("collisionCount", 0))

    prefix = (before.get("metadata") or {}).get("name", "")[:223]
    live_digest = digest(before)
    if (before.get("status") or {}).get("updateRevision") != f"{prefix}-{live_digest}":
        return  # not the update revision (or not a hash this harness recomputes): left as it is
    translated_digest = digest(after)
    if translated_digest != live_digest:
        remaps[live_digest] = translated_digest
        remaps[f"{prefix}-{live_digest}"] = f"{prefix}-{translated_digest}"
