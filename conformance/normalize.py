"""Normalize a set of objects into the stable form stored in goldens.

Render and live runs produce the same golden only after removing what the apiserver invents:
UIDs (replaced by the name of the object they point at, so owner links stay visible - also inside
longer strings, as ``<uid of Kind ns/name>``; an owner reference to an object that is gone names
it as ``uid of Kind ns/name, gone``, and a pod of a StatefulSet that is gone has its
``controller-revision-hash`` say so; the ControllerRevisions of a StatefulSet being deleted are left
out, see :func:`_without_revisions_of_deleting_sets`), resource
versions, timestamps, managed fields, generated name suffixes, status, and the SSH key pair
(checked to be a real ECDSA P-521 key, then replaced by a description, so goldens never churn).

Scenario steps keep status (``status=True``), because restarts and conditions are what they are
about - minus timestamps, with generated pod names in messages shortened like the names
themselves, and for Pods only what the harness models (phase, Ready/DisruptionTarget conditions,
container exits and restarts), so a kwok pod and a rendered one compare equal.
"""

from __future__ import annotations

import base64
import json
import re

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from reconciler import meta
from reconciler.cluster import GENERATED_PREFIX_MAX

_DROP_METADATA = ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields", "selfLink")
_KIND_ORDER = ["Namespace", "ClusterTrainingRuntime", "TrainingRuntime", "TrainJob", "MPIJob", "JobSet", "LeaderWorkerSet",
               "ConfigMap", "Secret", "Service", "ControllerRevision", "StatefulSet", "Job", "Pod"]
SSH_PRIVATE = "<ECDSA P-521 private key, PEM 'EC PRIVATE KEY'>"
SSH_PUBLIC = "<ecdsa-sha2-nistp521 authorized_keys line of ssh-privatekey>"
DELETING = "<set>"
#: A condition's lastTransitionTime: when it is, is timing; that it is written is the contract
#: (metav1.Condition requires it; every controller here stamps the conditions it sets). Not for Pods:
#: a status patch that adds a condition (a harness fault, a user's kubelet) may leave it out.
TRANSITIONED = "<set>"
#: ...and a wall-clock duration: a Volcano Job's status.runningDuration, time.Since(creation) at each kill
#: (volcano v1.10.0 killJob, pkg/controllers/job/job_controller_actions.go L122).
_TIME_KEYS = {"lastTransitionTime", "lastProbeTime", "lastHeartbeatTime", "lastUpdateTime", "startTime",
              "completionTime", "startedAt", "finishedAt", "runningDuration"}
_DROP_STATUS = {"observedGeneration", "uncountedTerminatedPods"}
_POD_CONDITIONS = ("Ready", "DisruptionTarget")
#: Phases in which a Volcano Job has finished: its controller still bumps ``status.version`` once per
#: kill request it handles there, and how many pod events arrive apart (rather than coalesced by
#: its work queue) is timing, so the number is not part of the contract.
_VOLCANO_FINISHED = {"Aborted", "Completed", "Failed", "Terminated"}
VERSION_AFTER_FINISH = "<bumped per kill request after the Job finished: timing-dependent>"
#: ...and its pod counters are those of the last request it handled: the sync that finished it counts the
#: pods it keeps (a Failed one on the last retry), a kill request after that (volcano v1.11+ killPods)
#: counts only the pods it deletes - whether one arrives before the outcome is read is timing too.
_VOLCANO_COUNTERS = ("pending", "running", "succeeded", "failed", "terminating", "unknown", "taskStatusCount")
COUNTERS_AFTER_FINISH = "<as of the last request after the Job finished: timing-dependent>"
#: A Volcano Job resumed after Aborted (a ResumeJob Command) carries on from that timing-dependent version:
#: its status.version and its pods' job-version annotation are not part of the contract either.
VERSION_AFTER_RESUME = "<counted on from a version bumped after the Job finished: timing-dependent>"
_VOLCANO_JOB_VERSION = "volcano.sh/job-version"
_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # the apiserver's generateName suffix (and render's)
_NAME_TOKEN = re.compile(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def normalize(objects: list[dict], status: bool = False) -> list[dict]:
    objects = _without_revisions_of_deleting_sets(objects)
    owners = {o["metadata"]["uid"]: _identity(o) for o in objects if o.get("metadata", {}).get("uid")}
    generated = _Generated(objects) if status else {}
    objects = meta.clone(objects)
    _mask_resumed_volcano_versions(objects)
    out = [_normalize_one(o, owners, status, generated) for o in objects]
    return sorted(out, key=_sort_key)


def _mask_resumed_volcano_versions(objects: list[dict]) -> None:
    """A Volcano Job that was in a finished phase (a condition says so) and is not now: its version and
    its pods' job-version annotation (see VERSION_AFTER_RESUME)."""
    resumed = set()
    for obj in objects:
        if obj.get("kind") != "Job" or not (obj.get("apiVersion") or "").startswith("batch.volcano.sh/"):
            continue
        status = obj.get("status") or {}
        if (status.get("state") or {}).get("phase") in _VOLCANO_FINISHED:
            continue
        if any(c.get("status") in _VOLCANO_FINISHED for c in status.get("conditions") or []):
            resumed.add(obj["metadata"].get("uid"))
            if "version" in status:
                status["version"] = VERSION_AFTER_RESUME
    if not resumed:
        return
    for obj in objects:
        md = obj.get("metadata") or {}
        annotations = md.get("annotations") or {}
        if obj.get("kind") == "Pod" and _VOLCANO_JOB_VERSION in annotations and any(
                r.get("controller") and r.get("uid") in resumed for r in md.get("ownerReferences") or []):
            annotations[_VOLCANO_JOB_VERSION] = VERSION_AFTER_RESUME


def _without_revisions_of_deleting_sets(objects: list[dict]) -> list[dict]:
    """Leave out the ControllerRevisions of a StatefulSet that is being deleted. Whether one exists is a
    race of two controllers: kube-controller-manager makes the set's revision again on every sync
    (k8s v1.35 ``getStatefulSetRevisions`` runs before the DeletionTimestamp check), the garbage
    collector deletes it only when it looks at the waiting owner again - after one of its dependents
    went away, not when a new one appears (``graph_builder.go``). Which acted last decides."""
    deleting = {o["metadata"].get("uid") for o in objects
                if o.get("kind") == "StatefulSet" and (o.get("metadata") or {}).get("deletionTimestamp")}
    if not deleting:
        return objects
    return [o for o in objects if not (o.get("kind") == "ControllerRevision" and any(
        r.get("controller") and r.get("uid") in deleting for r in (o.get("metadata") or {}).get("ownerReferences") or []))]


class _Generated(dict):
    """Generated name -> ``<generateName>*``: of the objects present, and of a pod that a status
    message names after it was deleted (a Job's failure names the failed pod): a name of the form
    ``<prefix><5 characters of the apiserver's suffix alphabet>`` whose prefix is the generateName
    of an object present or that a present Job gives its pods (``<job>-<index>-``, ``<job>-``)."""

    _NAME = re.compile(r"(.*-)([bcdfghjklmnpqrstvwxz2456789]{5})")
    _INDEX = re.compile(r"(.*-)[0-9]+-")

    def __init__(self, objects: list[dict]):
        super().__init__({o["metadata"]["name"]: o["metadata"]["generateName"] + "*" for o in objects
                          if o.get("metadata", {}).get("generateName")
                          and _generated_from(o["metadata"].get("name", ""), o["metadata"]["generateName"])})
        self.prefixes = {o["metadata"]["generateName"] for o in objects if o.get("metadata", {}).get("generateName")}
        self.jobs = {o["metadata"].get("name", "") + "-" for o in objects if o.get("kind") == "Job"}
        #: A prefix longer than the apiserver keeps -> the whole one (a long Job name's pods).
        self.cut = {p[:GENERATED_PREFIX_MAX]: p for p in self.prefixes | self.jobs if len(p) > GENERATED_PREFIX_MAX}

    def __bool__(self) -> bool:
        return bool(self.prefixes or self.jobs)

    def get(self, name, default=None):
        if name in self:
            return self[name]
        cut = name[:GENERATED_PREFIX_MAX]
        if cut in self.cut and _generated_from(name, self.cut[cut]):
            return self.cut[cut] + "*"
        found = self._NAME.fullmatch(name)
        if found:
            prefix = found.group(1)
            indexed = self._INDEX.fullmatch(prefix)
            if prefix in self.prefixes or prefix in self.jobs or (indexed and indexed.group(1) in self.jobs):
                return prefix + "*"
        return default


def _generated_from(name: str, prefix: str) -> bool:
    """The apiserver made ``name`` from ``generateName`` (prefix + 5 characters of its suffix alphabet).
    A controller may set both, as kube-controller-manager does for StatefulSet pods (``GetPodFromTemplate``
    gives every pod ``generateName: <set>-``, then the name ``<set>-<ordinal>``): such a name is kept."""
    prefix = prefix[:GENERATED_PREFIX_MAX]  # the apiserver cuts a longer one
    suffix = name[len(prefix):] if name.startswith(prefix) else ""
    return len(suffix) == 5 and all(c in _SUFFIX_ALPHABET for c in suffix)


def _identity(obj: dict) -> str:
    md = obj["metadata"]
    ns = f"{md['namespace']}/" if md.get("namespace") else ""
    return f"uid of {obj['kind']} {ns}{md.get('name')}"


def _normalize_one(obj: dict, owners: dict[str, str], status: bool, generated: dict[str, str]) -> dict:
    md = obj.setdefault("metadata", {})
    for key in _DROP_METADATA:
        md.pop(key, None)
    if md.get("generateName") and _generated_from(md.get("name", ""), md["generateName"]):
        md["name"] = md["generateName"] + "*"
    if md.get("deletionTimestamp"):
        md["deletionTimestamp"] = DELETING
    if status and "status" in obj:
        obj["status"] = _rename(_status(obj["kind"], obj["status"]), generated)
    else:
        obj.pop("status", None)
    if obj.get("kind") == "Secret" and obj.get("type") == "kubernetes.io/ssh-auth":
        _normalize_ssh(obj)
    if obj.get("kind") == "ConfigMap" and md.get("name", "").endswith(RUNTIME_SNAPSHOT_SUFFIX):
        _normalize_runtime_snapshot(obj)
    for ref in md.get("ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("uid") and ref["uid"] not in owners:
            # The owner is gone (a held pod outlives its StatefulSet), perhaps replaced by one of the same name.
            ns = f"{md['namespace']}/" if md.get("namespace") else ""
            ref["uid"] = f"uid of {ref.get('kind')} {ns}{ref.get('name')}, gone"
            labels = md.get("labels") or {}
            if ref.get("controller") and ref.get("kind") == "StatefulSet" and REVISION_LABEL in labels:
                # Its revision is gone with it; the hash in the name cannot be computed again from what
                # is left (a live backend translates namespace-dependent hashes from the revision's data).
                labels[REVISION_LABEL] = f"<a revision of StatefulSet {ns}{ref.get('name')}, gone>"
    return _replace_uids(obj, owners)


RUNTIME_SNAPSHOT_SUFFIX = "-runtime-snapshot"
REVISION_LABEL = "controller-revision-hash"
_SNAPSHOT_ENTRY = re.compile(r"  ([^ -][^:]*):")


def _normalize_runtime_snapshot(cm: dict) -> None:
    """Trainer v2.3's runtime snapshot holds the runtime as YAML text, metadata included: the same
    apiserver-made fields are dropped from that text, line by line so the rest stays byte-exact
    (top-level ``metadata:`` entries are the lines indented by two spaces, each with its deeper
    lines and, for ``managedFields``, its indentless ``  - `` items)."""
    text = (cm.get("data") or {}).get("runtime")
    if not isinstance(text, str):
        return
    out, in_metadata, dropping = [], False, False
    for line in text.splitlines(keepends=True):
        if not line.startswith(" "):
            in_metadata, dropping = line.rstrip("\n") == "metadata:", False
        elif in_metadata:
            entry = _SNAPSHOT_ENTRY.match(line)
            if entry:
                dropping = entry.group(1) in _DROP_METADATA
        if not dropping:
            out.append(line)
    cm["data"]["runtime"] = "".join(out)


def _status(kind: str, status: dict) -> dict:
    status = _without_times(status, stamp_conditions=kind != "Pod")
    if kind == "Job" and status.get("state", {}).get("phase") in _VOLCANO_FINISHED and "version" in status:
        status["version"] = VERSION_AFTER_FINISH  # only Volcano Jobs have status.state.phase
        for key in _VOLCANO_COUNTERS:  # zero counters are left out (omitempty): present or not is timing too
            status.pop(key, None)
        status["podCounters"] = COUNTERS_AFTER_FINISH
    if kind != "Pod":
        return status
    out = {k: status[k] for k in ("phase",) if k in status}
    conditions = [c for c in status.get("conditions", []) if c.get("type") in _POD_CONDITIONS]
    if conditions:
        out["conditions"] = sorted(conditions, key=lambda c: c["type"])
    for key in ("initContainerStatuses", "containerStatuses"):
        if status.get(key):
            out[key] = [_container_status(cs) for cs in status[key]]
    return out


def _container_status(cs: dict) -> dict:
    out = {k: cs[k] for k in ("name", "ready", "restartCount") if k in cs}
    for key in ("state", "lastState"):
        state = cs.get(key) or {}
        kept = {}
        if "running" in state:
            kept["running"] = {}
        if "waiting" in state:
            kept["waiting"] = {k: v for k, v in state["waiting"].items() if k == "reason"}
        if "terminated" in state:
            kept["terminated"] = {k: v for k, v in state["terminated"].items() if k in ("exitCode", "reason")}
        if kept:
            out[key] = kept
    return out


def _without_times(value, stamp_conditions: bool = False, condition: bool = False):
    """``value`` without timestamps - except that a condition's lastTransitionTime, when
    ``stamp_conditions``, becomes :data:`TRANSITIONED` (null or absent stays so)."""
    if isinstance(value, dict):
        out = {k: _without_times(v, stamp_conditions, stamp_conditions and k == "conditions")
               for k, v in value.items() if k not in _TIME_KEYS and k not in _DROP_STATUS}
        if condition and "lastTransitionTime" in value:
            out["lastTransitionTime"] = TRANSITIONED if value["lastTransitionTime"] else None
        return out
    if isinstance(value, list):
        return [_without_times(v, stamp_conditions, condition) for v in value]
    return value


def _rename(value, generated: dict[str, str]):
    """Generated names inside status strings (a Job's failure message names its pod)."""
    if isinstance(value, dict):
        return {k: _rename(v, generated) for k, v in value.items()}
    if isinstance(value, list):
        return [_rename(v, generated) for v in value]
    if isinstance(value, str) and generated:
        return _NAME_TOKEN.sub(lambda m: generated.get(m.group(0), m.group(0)), value)
    return value


def _replace_uids(value, owners: dict[str, str]):
    if isinstance(value, dict):
        return {k: _replace_uids(v, owners) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace_uids(v, owners) for v in value]
    if isinstance(value, str):
        if value in owners:
            return owners[value]
        # A UID inside a longer string (Volcano's pod annotation scheduling.k8s.io/group-name is
        # "<job>-<job uid>"): replaced in place, bracketed so the rest of the string stays readable.
        return _UUID.sub(lambda m: f"<{owners[m.group(0)]}>" if m.group(0) in owners else m.group(0), value)
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
