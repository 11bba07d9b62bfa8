"""kube-controller-manager's StatefulSet controller (k8s v1.35 ``pkg/controller/statefulset``), as far
as LeaderWorkerSet's StatefulSets need it. Live, the real controller does this; this is render's stand-in,
beside :mod:`reconciler.batch` for Jobs.

Per sync of a StatefulSet (``UpdateStatefulSet`` → ``updateStatefulSet``):

* **Revisions.** The pod template is kept in ControllerRevisions ``<set>-<hash>`` (label
  ``controller.kubernetes.io/hash``, the template's labels, the set's annotations; ``data`` =
  ``{"spec": {"template": {..., "$patch": "replace"}}}``; :mod:`reconciler.history` hashes it as the
  apiserver stores the template, see :func:`stored_template`). The latest revision equal to the
  template is the update revision (an older equal one gets the next revision number: a rollback),
  otherwise a new one is created; ``status.currentRevision`` names the current one (the update
  revision at first). Non-live revisions beyond ``revisionHistoryLimit`` are deleted.
* **Pods** ``<set>-<ordinal>``, ordinals ``spec.ordinals.start`` … ``start + replicas - 1``
  (``newStatefulSetPod``): the template's labels plus ``statefulset.kubernetes.io/pod-name``,
  ``apps.kubernetes.io/pod-index`` and ``controller-revision-hash``; ``generateName: <set>-`` (as
  ``GetPodFromTemplate`` writes it) beside the name; ``hostname`` = the pod name, ``subdomain`` =
  ``spec.serviceName``; the set as controller owner. An ordinal below the rolling update's
  ``partition`` gets the current revision's template, the others the update revision's.
* **Replicas in ordinal order** (``processReplica``): a Failed or Succeeded pod is deleted (and made
  again once it is gone); a missing pod is created; with ``OrderedReady`` the sync stops after a
  creation, at a pod being deleted and at a pod not Running and Ready, so pods come up one at a
  time; ``Parallel`` takes the ordinals in slow-start batches of 1, 2, 4, ... (``runForAll`` →
  ``slowStartBatch``) and a batch with a failed create ends the sync - a pod of the same name left
  by an earlier set (AlreadyExists) holds back the ordinals after its batch too. Pods beyond the
  range are deleted, highest first (one at a time, once every replica is Ready, with
  ``OrderedReady``).
* **Rolling update** (MaxUnavailableStatefulSet is off by default in v1.35): from the highest
  ordinal down to ``partition``, the first pod not at the update revision is deleted, unless a pod
  on the way is unavailable (not Ready, or being deleted) - one pod at a time.
* **Status** (written only when it changes): ``replicas`` counts pods that exist (the apiserver
  gives every pod phase Pending on create; a pod render's kubelet has not run yet counts as such),
  ``readyReplicas`` / ``availableReplicas`` Running and Ready ones (``minReadySeconds`` 0),
  ``currentReplicas`` / ``updatedReplicas`` pods not being deleted at each revision; once every
  replica is updated and Ready the update revision becomes the current one.
* A StatefulSet being deleted only updates its status (no revision is made again).

Not modelled: volumeClaimTemplates and PVC retention, ``minReadySeconds``, adoption/orphaning of
pods by selector, hash collisions, the ``OnDelete`` strategy's manual updates (it simply never
deletes for an update) and the maxUnavailable rolling update behind its feature gate.
"""

from __future__ import annotations

import re

from . import history, meta
from .cluster import AlreadyExists
from .errors import Rejection
from .trainer.gotyped import pod_template

GROUP = "apps"
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
REVISION_LABEL = "controller-revision-hash"
HASH_LABEL = "controller.kubernetes.io/hash"
_ORDINAL = re.compile(r"(.*)-([0-9]+)$")
_TERMINAL = ("Succeeded", "Failed")
_MAX_INT32 = 2**31 - 1
# distribution/reference v0.6.0 regexp.go, as Go's RE2 reads them (\w is ASCII).
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN_AND_PORT = rf"(?:{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*|\[(?:[a-fA-F0-9:]+)\])(?::[0-9]+)?"
_PATH_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*"
_REMOTE_NAME = rf"{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*"
_REFERENCE = re.compile(rf"((?:{_DOMAIN_AND_PORT}/)?{_REMOTE_NAME})(?::([\w][\w.-]{{0,127}}))?"
                        r"(?:@([A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9A-Fa-f]{32,}))?", re.ASCII)
_NAME = re.compile(rf"(?:({_DOMAIN_AND_PORT})/)?({_REMOTE_NAME})", re.ASCII)
_HEX_IDENTIFIER = re.compile(r"[a-f0-9]{64}")


def parent_and_ordinal(name: str) -> tuple[str, int]:
    """``getParentNameAndOrdinal``: ``("web", 3)`` for ``web-3``; ``("", -1)`` without an ordinal;
    an ordinal beyond int32 fails ``ParseInt`` and gives ``(parent, -1)``."""
    found = _ORDINAL.fullmatch(name or "")
    if not found:
        return "", -1
    ordinal = int(found.group(2))
    return found.group(1), ordinal if ordinal <= _MAX_INT32 else -1


class StatefulSetController:
    watches = ((GROUP, "StatefulSet"), ("", "Pod"))

    def related(self, obj: dict) -> list[tuple[str, str, str, str]]:
        """A pod maps to the StatefulSet named in its controller reference: when a pod of a deleted
        set goes away, a new set of the same name may now create it. This stands in for upstream's
        retry, not its pod handlers: those resolve the reference by UID and skip the new set
        (resolveControllerRef), whose create failed with AlreadyExists and is requeued with backoff.
        In render every sync this adds is also triggered otherwise (see the equivalent mutants)."""
        if obj.get("kind") != "Pod":
            return []
        ref = next((r for r in obj["metadata"].get("ownerReferences") or [] if r.get("controller")), None)
        if ref is None or ref.get("kind") != "StatefulSet":
            return []
        return [(GROUP, "StatefulSet", obj["metadata"].get("namespace", ""), ref.get("name", ""))]

    def reconcile(self, cluster, obj: dict) -> None:
        if obj.get("kind") == "StatefulSet":
            sync(cluster, obj)


# ---------------------------------------------------------------------- the sync

def sync(cluster, sts: dict) -> None:
    spec = sts.get("spec") or {}
    namespace = sts["metadata"].get("namespace", "")
    pods = [p for p in cluster.list("", "Pod", namespace, owner=sts) if _controlled_by(p, sts)]
    if sts["metadata"].get("deletionTimestamp"):
        # Only the status is updated. kube-controller-manager would also make a revision again if the
        # garbage collector had already taken it, which the collector deletes again; render skips that.
        _write_status(cluster, sts, pods)
        return
    revisions = sorted(cluster.list(GROUP, "ControllerRevision", namespace, owner=sts), key=lambda r: r.get("revision", 0))
    update_rev = _update_revision(cluster, sts, revisions)
    current_rev = next((r for r in revisions if r["metadata"]["name"] == (sts.get("status") or {}).get("currentRevision")),
                       update_rev)
    revisions = sorted(cluster.list(GROUP, "ControllerRevision", namespace, owner=sts), key=lambda r: r.get("revision", 0))
    start = (spec.get("ordinals") or {}).get("start", 0)
    replicas = spec.get("replicas", 1)
    by_ordinal: dict[int, dict] = {}
    condemned = []
    for pod in pods:
        ordinal = parent_and_ordinal(pod["metadata"]["name"])[1]
        if start <= ordinal < start + replicas:
            by_ordinal[ordinal] = pod
        elif ordinal >= 0:
            condemned.append(pod)
    _process(cluster, sts, by_ordinal, condemned, start, replicas, current_rev, update_rev)
    pods = [p for p in cluster.list("", "Pod", namespace, owner=sts) if _controlled_by(p, sts)]
    status = _status(sts, pods, current_rev["metadata"]["name"], update_rev["metadata"]["name"])
    _truncate_history(cluster, sts, pods, revisions, current_rev, update_rev)
    if status != (sts.get("status") or {}):
        sts["status"] = status
        cluster.update(sts)


def _write_status(cluster, sts: dict, pods: list[dict]) -> None:
    old = sts.get("status") or {}
    status = _status(sts, pods, old.get("currentRevision", ""), old.get("updateRevision", ""))
    if status != old:
        sts["status"] = status
        cluster.update(sts)


def _process(cluster, sts: dict, by_ordinal: dict[int, dict], condemned: list[dict], start: int, replicas: int,
             current_rev: dict, update_rev: dict) -> None:
    spec = sts["spec"]
    monotonic = spec.get("podManagementPolicy") != "Parallel"
    partition = ((spec.get("updateStrategy") or {}).get("rollingUpdate") or {}).get("partition", 0)
    ordinals = list(range(start, start + replicas))
    if monotonic:
        for ordinal in ordinals:
            if any(_process_replica(cluster, sts, by_ordinal, ordinal, start + partition, current_rev, update_rev, True)):
                return
    else:
        # runForAll → slowStartBatch: batches of 1, 2, 4, ... (at most MaxBatchSize 500); a batch in which a
        # replica failed (a refused create) ends the sync - the later ordinals wait for the next one.
        for batch in slow_start_batches(ordinals):
            errors = [_process_replica(cluster, sts, by_ordinal, ordinal, start + partition, current_rev, update_rev,
                                       False)[1] for ordinal in batch]
            if any(errors):
                return
    if _process_condemned(cluster, condemned, by_ordinal, monotonic):
        return
    strategy = spec.get("updateStrategy") or {}
    if strategy.get("type") != "RollingUpdate":
        return
    for ordinal in range(start + replicas - 1, start + partition - 1, -1):
        pod = by_ordinal.get(ordinal)
        if pod is None:
            return
        if _revision_of(pod) != update_rev["metadata"]["name"] and not pod["metadata"].get("deletionTimestamp"):
            cluster.delete(pod)
            return
        if _unavailable(pod):
            return


def slow_start_batches(items: list) -> list[list]:
    """``slowStartBatch(1, len(items), fn)``: batches of 1, 2, 4, ... items, at most 500 each."""
    batches, size, i = [], 1, 0
    while i < len(items):
        batches.append(items[i:i + size])
        i += size
        size = min(2 * size, 500)
    return batches


def _process_replica(cluster, sts: dict, by_ordinal: dict[int, dict], ordinal: int, partition_ordinal: int,
                     current_rev: dict, update_rev: dict, monotonic: bool) -> tuple[bool, bool]:
    """``processReplica`` for one ordinal: (stop the sync in monotonic mode, the replica failed)."""
    pod = by_ordinal.get(ordinal)
    if pod is not None and _phase(pod) in _TERMINAL:
        if not pod["metadata"].get("deletionTimestamp"):
            cluster.delete(pod)
        return True, False  # the new pod is made on a later sync, once this one is gone
    if pod is None:
        revision = current_rev if ordinal < partition_ordinal else update_rev
        try:
            # A pod of that name the set does not own (left by a set deleted before, still being deleted)
            # makes the create fail with AlreadyExists until it is gone; a refused pod fails likewise.
            by_ordinal[ordinal] = cluster.create(new_pod(sts, revision, ordinal))
        except (AlreadyExists, Rejection):
            return True, True
        return monotonic, False
    if monotonic and (pod["metadata"].get("deletionTimestamp") or not running_and_ready(pod)):
        return True, False
    return False, False


def _process_condemned(cluster, condemned: list[dict], replicas: dict[int, dict], monotonic: bool) -> bool:
    """Scale down, highest ordinal first; True when the sync stops here."""
    first_unhealthy = next((p for _, p in sorted(replicas.items()) if _unavailable(p)), None)
    if first_unhealthy is None:
        first_unhealthy = next((p for p in sorted(condemned, key=_ordinal) if _unavailable(p)), None)
    for pod in sorted(condemned, key=_ordinal, reverse=True):
        if pod["metadata"].get("deletionTimestamp"):
            if monotonic:
                return True
            continue
        if monotonic and not running_and_ready(pod) and pod is not first_unhealthy:
            return True
        cluster.delete(pod)
        if monotonic:
            return True
    return False


# ---------------------------------------------------------------------- pods

def new_pod(sts: dict, revision: dict, ordinal: int) -> dict:
    """``newVersionedStatefulSetPod`` for ``ordinal`` from the template kept in ``revision``."""
    template = meta.clone(((revision.get("data") or {}).get("spec") or {}).get("template") or {})
    template.pop("$patch", None)
    tmd = template.get("metadata") or {}
    name = f"{sts['metadata']['name']}-{ordinal}"
    md = {"name": name, "generateName": f"{sts['metadata']['name']}-", "namespace": sts["metadata"].get("namespace"),
          "labels": {**(tmd.get("labels") or {}), POD_NAME_LABEL: name, POD_INDEX_LABEL: str(ordinal),
                     REVISION_LABEL: revision["metadata"]["name"]}}
    if tmd.get("annotations"):
        md["annotations"] = dict(tmd["annotations"])
    md["ownerReferences"] = [meta.controller_ref(sts)]
    if tmd.get("finalizers"):
        md["finalizers"] = list(tmd["finalizers"])
    spec = template.get("spec") or {}
    spec["hostname"] = name
    if sts["spec"].get("serviceName"):
        spec["subdomain"] = sts["spec"]["serviceName"]
    else:
        spec.pop("subdomain", None)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec}


def running_and_ready(pod: dict) -> bool:
    """``isRunningAndReady``: phase Running and condition Ready True."""
    ready = meta.condition(pod, "Ready")
    return _phase(pod) == "Running" and bool(ready and ready.get("status") == "True")


def _unavailable(pod: dict) -> bool:
    return not running_and_ready(pod) or bool(pod["metadata"].get("deletionTimestamp"))


def _phase(pod: dict) -> str:
    # The apiserver sets Pending on create; render's pods have no status until its kubelet runs.
    return (pod.get("status") or {}).get("phase") or "Pending"


def _revision_of(pod: dict) -> str:
    return (pod["metadata"].get("labels") or {}).get(REVISION_LABEL, "")


def _ordinal(pod: dict) -> int:
    return parent_and_ordinal(pod["metadata"]["name"])[1]


def _controlled_by(pod: dict, sts: dict) -> bool:
    uid = sts["metadata"].get("uid")
    return any(r.get("uid") == uid and r.get("controller") for r in pod["metadata"].get("ownerReferences") or [])


# ---------------------------------------------------------------------- revisions

def revision_data(sts: dict) -> dict:
    """``getPatch``: the template under ``spec.template`` with ``$patch: replace`` (as render stores it)."""
    template = meta.clone((sts.get("spec") or {}).get("template") or {})
    template["$patch"] = "replace"
    return {"spec": {"template": template}}


def revision_hash(sts: dict, collision_count: int = 0) -> str:
    """``HashControllerRevision`` of the patch as kube-controller-manager encodes it: from the
    template the apiserver stores (:func:`stored_template`), with the collision count."""
    template = stored_template((sts.get("spec") or {}).get("template") or {})
    template["$patch"] = "replace"
    return history.hash_revision({"spec": {"template": template}}, collision_count)


def stored_template(template: dict) -> dict:
    """A pod template as kube-apiserver v1.35 stores it in a StatefulSet and kube-controller-manager
    encodes it: Go's encoding of ``corev1.PodTemplateSpec`` (``metadata: {}``, ``resources: {}``,
    canonical quantities) with the defaults of ``SetDefaults_PodSpec``, ``SetDefaults_Container``
    and their neighbours (k8s v1.35 pkg/apis/core/v1/defaults.go; the same list
    conformance/live/platform.py removes from live objects). Render stores templates without
    these; only the revision hash needs them, so that it names the revision kube-controller-manager
    would."""
    out = pod_template(template)
    spec = out.setdefault("spec", {})
    for key, value in (("dnsPolicy", "ClusterFirst"), ("restartPolicy", "Always"), ("securityContext", {}),
                       ("terminationGracePeriodSeconds", 30), ("schedulerName", "default-scheduler")):
        spec.setdefault(key, value)
    for container in (spec.get("initContainers") or []) + (spec.get("containers") or []):
        container.setdefault("terminationMessagePath", "/dev/termination-log")
        container.setdefault("terminationMessagePolicy", "File")
        container.setdefault("imagePullPolicy", pull_policy(container.get("image", "")))
        for port in container.get("ports") or []:
            port.setdefault("protocol", "TCP")
        for env in container.get("env") or []:
            _default_selectors(env.get("valueFrom") or {})
        for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
            if isinstance(container.get(probe), dict):
                for key, value in (("timeoutSeconds", 1), ("periodSeconds", 10), ("successThreshold", 1),
                                   ("failureThreshold", 3)):
                    container[probe].setdefault(key, value)
    for volume in spec.get("volumes") or []:
        for source in ("secret", "configMap", "downwardAPI", "projected"):
            if isinstance(volume.get(source), dict):
                volume[source].setdefault("defaultMode", 420)
        downward = [volume.get("downwardAPI") or {}] + [
            source.get("downwardAPI") or {} for source in (volume.get("projected") or {}).get("sources") or []]
        for item in (item for source in downward for item in source.get("items") or []):
            _default_selectors(item)
        if len(volume) == 1:  # a volume without a source is an emptyDir (SetDefaults_Volume)
            volume["emptyDir"] = {}
    return out


def _default_selectors(holder: dict) -> None:
    """An env ``valueFrom`` or a downwardAPI item (of a volume or a projected source):
    ``SetDefaults_ObjectFieldSelector`` gives a ``fieldRef`` ``apiVersion: v1``, and a
    ``resourceFieldRef``'s ``divisor`` - a non-pointer Quantity - is encoded as ``"0"`` when unset."""
    if isinstance(holder.get("fieldRef"), dict):
        holder["fieldRef"].setdefault("apiVersion", "v1")
    if isinstance(holder.get("resourceFieldRef"), dict):
        holder["resourceFieldRef"].setdefault("divisor", "0")


def pull_policy(image: str) -> str:
    """``SetDefaults_Container``'s imagePullPolicy: Always for the tag ``latest`` (or none), else IfNotPresent."""
    return "Always" if _image_tag(image) == "latest" else "IfNotPresent"


def _image_tag(image: str) -> str:
    """The tag ``SetDefaults_Container`` gets from ``parsers.ParseImageName`` (k8s v1.35
    pkg/util/parsers, over distribution/reference v0.6.0 ``ParseNormalizedNamed``): the reference's
    tag, ``latest`` when it has neither tag nor digest, and ``""`` when it does not parse (the
    defaulter ignores the error) - kube-apiserver's pod validation admits any image without
    surrounding spaces, so an upper-case repository, a bad tag or digest reach the defaulter."""
    if _HEX_IDENTIFIER.fullmatch(image):
        return ""  # "cannot specify 64-byte hexadecimal strings"
    domain, remainder = _split_docker_domain(image)
    remote = remainder.partition(":")[0]
    if remote.lower() != remote:
        return ""  # "repository name must be lowercase"
    found = _REFERENCE.fullmatch(f"{domain}/{remainder}")
    if not found or len(_NAME.fullmatch(found[1])[2]) > 255:
        return ""  # ErrReferenceInvalidFormat, ErrNameTooLong
    tag, digest = found[2] or "", found[3] or ""
    if digest and not _valid_digest(digest):
        return ""
    return tag or ("" if digest else "latest")


def _split_docker_domain(name: str) -> tuple[str, str]:
    """``splitDockerDomain``: a first path element that is ``localhost`` or holds ``.`` or ``:`` (or
    upper case) is a registry, else Docker Hub's; a single Hub name gets ``library/``."""
    first, slash, rest = name.partition("/")
    if not slash:
        return "docker.io", "library/" + name
    if first == "localhost" or first == "index.docker.io" or any(c in first for c in ".:") or first.lower() != first:
        domain, remote = ("docker.io" if first == "index.docker.io" else first), rest
    else:
        domain, remote = "docker.io", name
    if domain == "docker.io" and "/" not in remote:
        remote = "library/" + remote
    return domain, remote


def _valid_digest(digest: str) -> bool:
    """go-digest v1.0.0 ``Digest.Validate`` for the algorithms kube-apiserver links (sha256/384/512):
    lower-case hex of the algorithm's length."""
    algorithm, _, encoded = digest.partition(":")
    size = {"sha256": 64, "sha384": 96, "sha512": 128}.get(algorithm)
    return size is not None and re.fullmatch(f"[a-f0-9]{{{size}}}", encoded) is not None


def _update_revision(cluster, sts: dict, revisions: list[dict]) -> dict:
    data = revision_data(sts)
    equal = [r for r in revisions if r.get("data") == data]
    if equal and revisions and equal[-1] is revisions[-1]:
        return revisions[-1]
    next_number = (revisions[-1].get("revision", 0) + 1) if revisions else 1
    if equal:  # a rollback: the equal revision becomes the newest
        revision = equal[-1]
        revision["revision"] = next_number
        return cluster.update(revision)
    collision_count = (sts.get("status") or {}).get("collisionCount", 0)
    digest = revision_hash(sts, collision_count)
    labels = {**(((sts["spec"].get("template") or {}).get("metadata") or {}).get("labels") or {}), HASH_LABEL: digest}
    md = {"name": f"{sts['metadata']['name'][:223]}-{digest}", "namespace": sts["metadata"].get("namespace"),
          "labels": labels}
    if sts["metadata"].get("annotations"):
        md["annotations"] = dict(sts["metadata"]["annotations"])
    md["ownerReferences"] = [meta.controller_ref(sts)]
    existing = cluster.find(GROUP, "ControllerRevision", md["namespace"], md["name"])
    if existing is not None:
        return existing  # a hash collision is not modelled: the same name is the same template here
    return cluster.create({"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": md,
                           "data": data, "revision": next_number})


def _truncate_history(cluster, sts: dict, pods: list[dict], revisions: list[dict], current: dict, update: dict) -> None:
    live = {current["metadata"]["name"], update["metadata"]["name"], *(_revision_of(p) for p in pods)}
    old = [r for r in revisions if r["metadata"]["name"] not in live and cluster.find(*meta.key(r)) is not None]
    limit = sts["spec"].get("revisionHistoryLimit", 10)
    for revision in old[:max(0, len(old) - limit)]:
        cluster.delete(revision)


# ---------------------------------------------------------------------- status

def _status(sts: dict, pods: list[dict], current_name: str, update_name: str) -> dict:
    """StatefulSetStatus in Go's field order, ``omitempty`` fields left out when zero."""
    counts = {"replicas": 0, "ready": 0, "current": 0, "updated": 0}
    for pod in pods:
        counts["replicas"] += 1
        if running_and_ready(pod):
            counts["ready"] += 1
        if not pod["metadata"].get("deletionTimestamp"):
            counts["current"] += _revision_of(pod) == current_name
            counts["updated"] += _revision_of(pod) == update_name
    spec = sts["spec"]
    replicas = spec.get("replicas", 1)
    if (spec.get("updateStrategy") or {}).get("type") == "RollingUpdate" and \
            counts["updated"] == counts["ready"] == counts["replicas"] == replicas:
        counts["current"], current_name = counts["updated"], update_name
    status = {"observedGeneration": sts["metadata"].get("generation", 1), "replicas": counts["replicas"]}
    for key, value in (("readyReplicas", counts["ready"]), ("currentReplicas", counts["current"]),
                       ("updatedReplicas", counts["updated"]), ("currentRevision", current_name),
                       ("updateRevision", update_name)):
        if value:
            status[key] = value
    status["collisionCount"] = (sts.get("status") or {}).get("collisionCount", 0)
    status["availableReplicas"] = counts["ready"]
    return status
