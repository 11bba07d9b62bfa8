"""LeaderWorkerSet v0.7.0's two reconcilers (``pkg/controllers``), as one controller over LeaderWorkerSets,
their StatefulSets and their pods (shared/reference/lws-volcano-upstream.md A.1-A.3).

**LeaderWorkerSet** (``LeaderWorkerSetReconciler``; also woken by any StatefulSet labelled with its
name): find or create the revision of the leader StatefulSet's ``template-revision-hash`` (event
``CreatingRevision``); a LeaderWorkerSet that no longer matches it gets a new revision, which starts
a rolling update; compute the leader StatefulSet's ``partition`` and ``replicas``
(:func:`rolling_update_parameters`: ``maxSurge`` extra groups while updating, the partition walking
down ``maxUnavailable`` groups at a time as updated groups become ready) and apply the leader
StatefulSet ``<lws>`` (Parallel, serviceName ``<lws>``, one pod per group with ``worker-index: "0"``;
events ``Created leader statefulset``, ``Updating replicas``); create the Shared headless Service
``<lws>``; write the status (``replicas`` of the leader StatefulSet, ``readyReplicas``,
``updatedReplicas``, ``hpaPodSelector``, conditions Available / Progressing / UpdateInProgress with
an Event when they change); once every group is updated and ready, delete the other revisions.

**Pod** (``PodReconciler``, pods labelled ``leaderworkerset.sigs.k8s.io/name``): first the restart
policy - with ``RecreateGroupOnPodRestart``, a pod whose container restarted (Running or Pending,
some ``restartCount`` > 0) or that is being deleted makes its leader (itself, for a leader; the pod
``<lws>-<g>`` of the same revision, for a worker) be deleted with ``Foreground`` propagation, once,
with the Normal event ``RecreateGroupOnPodRestart``: ``Worker pod <pod> failed, deleted leader pod
<leader> to recreate group <g>``. The garbage collector then removes the worker StatefulSet and its
pods, the leader StatefulSet makes the leader again and, from it, this reconciler makes the worker
StatefulSet again: the whole group comes back. ``None`` leaves each pod to its StatefulSet. Then,
for a leader not being deleted: the UniquePerReplica Service ``<lws>-<g>`` (owned by the leader pod)
and - unless ``size`` is 1, and with ``LeaderReady`` only once the leader is Ready - the worker
StatefulSet ``<lws>-<g>`` from the leader's revision (``size - 1`` replicas, ordinals from 1,
Parallel, owned by the leader pod; event ``Created worker statefulset for leader pod``).

A failure to create or apply is what upstream returns to controller-runtime (logged, retried): a
reconcile error here, plus upstream's Warning event where it records one. Not modelled: exclusive
placement (the worker StatefulSet waits for a scheduled leader, which render never has), TPU
variables, gang scheduling.
"""

from __future__ import annotations

from .. import builtin, meta
from ..cluster import AlreadyExists, NotFound
from ..errors import Rejection
from ..statefulset import parent_and_ordinal
from . import keys, revision
from .webhooks import scaled_value

STS = ("apps", "StatefulSet")
_CONDITIONS = {  # makeCondition: type -> (reason, message)
    "Available": ("AllGroupsReady", "All replicas are ready"),
    "Progressing": (keys.GROUPS_PROGRESSING, "Replicas are progressing"),
    "UpdateInProgress": (keys.GROUPS_UPDATING, "Rolling Upgrade is in progress"),
}


class LeaderWorkerSetController:
    watches = ((keys.GROUP, keys.KIND), ("", "Pod"), STS)
    #: Owns(StatefulSet), Owns(Service): a write of its ControllerRevisions does not wake an LWS.
    owns = (STS, ("", "Service"))
    #: Built-in kinds it reads (and creates) besides what it watches: see ``Controller.reads``.
    reads = (("", "Service"), ("apps", "ControllerRevision"))

    def related(self, obj: dict) -> list[tuple[str, str, str, str]]:
        """A StatefulSet labelled with an LWS name wakes that LWS (upstream's ``Watches`` map function)."""
        if obj.get("kind") != "StatefulSet":
            return []
        name = (obj["metadata"].get("labels") or {}).get(keys.NAME)
        return [(keys.GROUP, keys.KIND, obj["metadata"].get("namespace", ""), name)] if name else []

    def reconcile(self, cluster, obj: dict) -> None:
        kind = obj.get("kind")
        try:
            if kind == keys.KIND:
                reconcile_lws(cluster, obj)
            elif kind == "Pod" and keys.NAME in (obj["metadata"].get("labels") or {}):
                reconcile_pod(cluster, obj)
        except (Rejection, AlreadyExists, NotFound, ValueError) as exc:
            cluster.record_error(obj, str(exc))


# ====================================================================== the LeaderWorkerSet reconciler

def reconcile_lws(cluster, lws: dict) -> None:
    if lws["metadata"].get("deletionTimestamp"):
        return
    namespace, name = lws["metadata"].get("namespace", ""), lws["metadata"]["name"]
    sts = cluster.find(*STS, namespace, name)
    current = _get_or_create_revision(cluster, lws, sts)
    updated = None
    if sts is not None:
        candidate = revision.new(cluster, lws)
        if not revision.equal(candidate, current):
            updated = candidate
    if updated is not None:
        current = cluster.create(updated)
        cluster.record_event(lws, "Normal", keys.CREATING_REVISION,
                             f"Creating revision with key {revision.key(current)} for updated LWS")
    key = revision.key(current)
    partition, replicas = rolling_update_parameters(cluster, lws, sts, key, updated is not None)
    try:
        apply_statefulset(cluster, leader_statefulset(lws, partition, replicas, key))
    except (Rejection, AlreadyExists):
        if sts is None:
            cluster.record_event(lws, "Warning", keys.FAILED_CREATE, f"Failed to create leader statefulset {name}")
        raise
    if sts is None:
        cluster.record_event(lws, "Normal", keys.GROUPS_PROGRESSING, f"Created leader statefulset {name}")
    elif updated is None and partition != _partition(sts):
        cluster.record_event(lws, "Normal", keys.GROUPS_UPDATING, f"Updating replicas {_partition(sts)} to {partition}")
    if _subdomain_policy(lws) == keys.SHARED:
        try:
            create_headless_service(cluster, lws, name, {keys.NAME: name}, lws)
        except (Rejection, AlreadyExists) as exc:
            cluster.record_event(lws, "Warning", keys.FAILED_CREATE, f"Failed to create headless service for error: {exc}")
            raise
    if update_status(cluster, lws, key):
        for old in revision.revisions(cluster, lws):
            if revision.key(old) != key:
                cluster.delete(old)


def _get_or_create_revision(cluster, lws: dict, sts: dict | None) -> dict:
    """``getOrCreateRevisionIfNonExist``: the revision named by the leader StatefulSet's hash."""
    key = revision.key(sts) if sts is not None else ""
    found = revision.get(cluster, lws, key)
    if found is not None:
        return found
    created = cluster.create(revision.new(cluster, lws, key))
    message = (f"Creating missing revision with key {revision.key(created)} for existing LeaderWorkerSet" if key
               else f"Creating revision with key {revision.key(created)} for a newly created LeaderWorkerSet")
    cluster.record_event(lws, "Normal", keys.CREATING_REVISION, message)
    return created


def leader_statefulset(lws: dict, partition: int, replicas: int, key: str) -> dict:
    """``constructLeaderStatefulSetApplyConfiguration``."""
    spec = lws["spec"]
    lwt = spec["leaderWorkerTemplate"]
    template = meta.clone(lwt.get("leaderTemplate") or lwt.get("workerTemplate") or {})
    tmd = template.setdefault("metadata", {})
    tmd["labels"] = {**(tmd.get("labels") or {}), keys.WORKER_INDEX: "0", keys.NAME: lws["metadata"]["name"],
                     keys.REVISION: key}
    annotations = {keys.SIZE: str(lwt.get("size", 1))}
    lws_annotations = lws["metadata"].get("annotations") or {}
    if lws_annotations.get(keys.EXCLUSIVE):
        annotations[keys.EXCLUSIVE] = lws_annotations[keys.EXCLUSIVE]
    policy = lwt.get("subGroupPolicy")
    if policy is not None:
        annotations[keys.SUBGROUP_POLICY_TYPE] = str(policy.get("subGroupPolicyType", ""))
        annotations[keys.SUBGROUP_SIZE] = str(policy.get("subGroupSize"))
        if lws_annotations.get(keys.SUBGROUP_EXCLUSIVE):
            annotations[keys.SUBGROUP_EXCLUSIVE] = lws_annotations[keys.SUBGROUP_EXCLUSIVE]
    if _subdomain_policy(lws) == keys.UNIQUE_PER_REPLICA:
        annotations[keys.SUBDOMAIN_POLICY] = keys.UNIQUE_PER_REPLICA
    tmd["annotations"] = {**(tmd.get("annotations") or {}), **annotations}
    template = _metadata_first(template)
    rollout = spec.get("rolloutStrategy") or {}
    config = rollout.get("rollingUpdateConfiguration") or {}
    name = lws["metadata"]["name"]
    return {
        "apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": lws["metadata"].get("namespace"),
                     "labels": {keys.NAME: name, keys.REVISION: key},
                     "annotations": {keys.REPLICAS: str(spec.get("replicas", 1))},
                     "ownerReferences": [meta.controller_ref(lws)]},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {keys.NAME: name, keys.WORKER_INDEX: "0"}},
                 "template": template, "serviceName": name, "podManagementPolicy": "Parallel",
                 "updateStrategy": {"type": rollout.get("type"),
                                    "rollingUpdate": {"maxUnavailable": config.get("maxUnavailable"),
                                                      "partition": partition}}},
    }


def apply_statefulset(cluster, desired: dict) -> dict:
    """Server-side apply with LWS's field manager (forced), for what LWS sets: create the object, or
    merge its labels/annotations and replace the spec fields it gives, through the apiserver's
    StatefulSet defaults and validation."""
    existing = cluster.find(*meta.key(desired))
    if existing is None:
        return cluster.create(desired)
    merged = meta.clone(existing)
    md = merged["metadata"]
    for field in ("labels", "annotations"):
        if desired["metadata"].get(field):
            md[field] = {**(md.get(field) or {}), **desired["metadata"][field]}
    owners = md.setdefault("ownerReferences", [])
    for ref in desired["metadata"].get("ownerReferences") or []:
        if not any(o.get("uid") == ref["uid"] for o in owners):
            owners.append(ref)
    merged["spec"].update(meta.clone(desired["spec"]))
    merged = builtin.default(merged)
    errors = builtin.validate(merged)
    if errors:
        raise Rejection("schema", meta.ref(merged), errors)
    if merged == existing:
        return existing
    if merged["spec"] != existing["spec"]:
        md["generation"] = existing["metadata"].get("generation", 1) + 1
    return cluster.update(merged)


def create_headless_service(cluster, lws: dict, name: str, selector: dict, owner: dict) -> None:
    """``CreateHeadlessServiceIfNotExists``."""
    namespace = lws["metadata"].get("namespace", "")
    if cluster.find("", "Service", namespace, name) is not None:
        return
    cluster.create({"apiVersion": "v1", "kind": "Service",
                    "metadata": {"name": name, "namespace": namespace, "labels": {keys.NAME: lws["metadata"]["name"]},
                                 "ownerReferences": [meta.controller_ref(owner)]},
                    "spec": {"selector": dict(selector), "clusterIP": "None", "publishNotReadyAddresses": True}})


# ---------------------------------------------------------------------- rolling update

def rolling_update_parameters(cluster, lws: dict, sts: dict | None, key: str, updated: bool) -> tuple[int, int]:
    """``rollingUpdateParameters``: the leader StatefulSet's (partition, replicas)."""
    spec = lws["spec"]
    lws_replicas = spec.get("replicas", 1)
    config = (spec.get("rolloutStrategy") or {}).get("rollingUpdateConfiguration") or {}
    floor = config.get("partition", 0)
    if sts is None:
        return max(0, floor), lws_replicas
    sts_replicas = sts["spec"].get("replicas", 1)
    max_surge = scaled_value(config.get("maxSurge", 0), lws_replicas, round_up=True)
    if max_surge is None:
        raise ValueError(f"invalid value for IntOrString: {config.get('maxSurge')!r}")
    max_surge = min(max_surge, lws_replicas)
    burst = lws_replicas + max_surge

    def want(unready: int) -> int:
        if unready <= max_surge:
            final = lws_replicas + max(unready - 1, 0)
            cluster.record_event(lws, "Normal", keys.GROUPS_PROGRESSING,
                                 f"deleting surge replica {lws['metadata']['name']}-{final}")
            return final
        return burst

    if updated:  # a new rolling update: scale first
        partition = min(lws_replicas, sts_replicas)
        return max(partition, floor), want(lws_replicas)
    partition = _partition(sts)
    if partition == 0 and sts_replicas == lws_replicas:
        return max(0, floor), lws_replicas
    states = replica_states(cluster, lws, sts_replicas, key)
    unready = sum(1 for i in range(lws_replicas) if i >= len(states) or not all(states[i]))
    original = (sts["metadata"].get("annotations") or {}).get(keys.REPLICAS, "")
    if not original.lstrip("+-").isdigit():
        raise ValueError(f'strconv.Atoi: parsing "{original}": invalid syntax')
    if int(original) != lws_replicas:  # replicas changed during the rolling update
        return max(min(partition, burst), floor), want(unready)
    step = scaled_value(config.get("maxUnavailable", 1), lws_replicas, round_up=False)
    if step is None:
        raise ValueError(f"invalid value for IntOrString: {config.get('maxUnavailable')!r}")
    step += max_surge - (burst - sts_replicas)
    return max(rolling_update_partition(states, sts_replicas, step, partition), floor), want(unready)


def replica_states(cluster, lws: dict, sts_replicas: int, key: str) -> list[tuple[bool, bool]]:
    """``getReplicaStates``: (ready, updated) per group index below the leader StatefulSet's replicas."""
    namespace, name = lws["metadata"].get("namespace", ""), lws["metadata"]["name"]
    leaders = _by_index([p for p in cluster.list("", "Pod", namespace) if _is_leader_of(p, name)], sts_replicas)
    sets = _by_index([s for s in cluster.list(*STS, namespace)
                      if (s["metadata"].get("labels") or {}).get(keys.NAME) == name], sts_replicas)
    no_workers = lws["spec"]["leaderWorkerTemplate"].get("size", 1) == 1
    states = []
    for index in range(sts_replicas):
        nominated = f"{name}-{index}"
        leader, workers = leaders.get(index), sets.get(index)
        if leader is None or leader["metadata"]["name"] != nominated or \
                (not no_workers and (workers is None or workers["metadata"]["name"] != nominated)):
            states.append((False, False))
            continue
        ready, updated = running_and_ready(leader), revision.key(leader) == key
        if not no_workers:
            ready = ready and statefulset_ready(workers)
            updated = updated and revision.key(workers) == key
        states.append((ready, updated))
    return states


def rolling_update_partition(states: list[tuple[bool, bool]], sts_replicas: int, step: int, current: int) -> int:
    """``rollingUpdatePartition``: the partition moves down only, ``step`` groups at a time below the
    ready-and-updated groups at the top, never past a group that is not ready."""
    continuous = 0
    for ready, updated in reversed(states):
        if not (ready and updated):
            break
        continuous += 1
    step_partition = max(sts_replicas - continuous - step, 0)
    partition = step_partition + sum(1 for i in range(step_partition) if not states[i][0])
    index = min(partition, sts_replicas - 1)
    while index >= step_partition:
        ready, updated = states[index]
        if not ready or updated:
            partition = index
        else:
            break
        index -= 1
    return min(partition, current)


# ---------------------------------------------------------------------- status

def update_status(cluster, lws: dict, key: str) -> bool:
    """``updateStatus`` + ``updateConditions``; True once the rolling update is done."""
    namespace, name = lws["metadata"].get("namespace", ""), lws["metadata"]["name"]
    sts = cluster.get(*STS, namespace, name)
    status = meta.clone(lws.get("status") or {})
    spec = lws["spec"]
    replicas = spec.get("replicas", 1)
    floor = ((spec.get("rolloutStrategy") or {}).get("rollingUpdateConfiguration") or {}).get("partition", 0)
    no_workers = spec["leaderWorkerTemplate"].get("size", 1) == 1
    ready_count = updated_count = ready_non_burst = 0
    current_non_burst = updated_non_burst = updated_and_ready = 0
    for pod in [p for p in cluster.list("", "Pod", namespace) if _is_leader_of(p, name)]:
        text = (pod["metadata"].get("labels") or {}).get(keys.GROUP_INDEX, "")
        if not text.lstrip("+-").isdigit():
            raise ValueError(f'strconv.Atoi: parsing "{text}": invalid syntax')
        index = int(text)
        workers = None
        if not no_workers:
            workers = cluster.find(*STS, namespace, pod["metadata"]["name"])
            if workers is None:
                continue
        counted = floor <= index < replicas
        current_non_burst += counted
        ready = (no_workers or statefulset_ready(workers)) and running_and_ready(pod)
        updated = (no_workers or revision.key(workers) == key) and revision.key(pod) == key
        ready_count += ready
        updated_count += updated
        updated_non_burst += updated and counted
        if index < replicas:
            ready_non_burst += ready
            updated_and_ready += counted and ready and updated
    if updated_non_burst < current_non_burst:
        wanted = ["UpdateInProgress", "Progressing"]
    elif ready_non_burst == replicas and updated_and_ready == current_non_burst:
        wanted = ["Available"]
    else:
        wanted = ["Progressing"]
    conditions = status.get("conditions") or []
    changed = False
    for type_ in wanted:  # setConditions: Go's || stops at the first condition that changed
        changed = changed or _set_condition(conditions, _condition(cluster, type_))
    if changed:
        reason, message = _CONDITIONS[wanted[0]]
        cluster.record_event(lws, "Normal", reason,
                             f"{message}, with {ready_count} groups ready of total {replicas} groups")
    new = {}
    if conditions:
        new["conditions"] = conditions
    for field, value in (("readyReplicas", ready_count), ("updatedReplicas", updated_count),
                         ("replicas", (sts.get("status") or {}).get("replicas", 0))):
        if value:
            new[field] = value
    new["hpaPodSelector"] = status.get("hpaPodSelector") or f"{keys.NAME}={name},{keys.WORKER_INDEX}=0"
    if new != (lws.get("status") or {}):
        lws["status"] = new
        cluster.update(lws)
    return floor == 0 and updated_and_ready == replicas


def _condition(cluster, type_: str) -> dict:
    reason, message = _CONDITIONS[type_]
    return {"type": type_, "status": "True", "lastTransitionTime": cluster.now(), "reason": reason, "message": message}


def _set_condition(conditions: list[dict], new: dict) -> bool:
    """``setCondition``: Available excludes Progressing and UpdateInProgress (the other turns False)."""
    found = changed = False
    for i, current in enumerate(conditions):
        if current.get("type") == new["type"]:
            if current.get("status") != new["status"]:
                conditions[i] = new
                changed = True
            found = True
        elif {current.get("type"), new["type"]} in ({"Available", "Progressing"}, {"Available", "UpdateInProgress"}) \
                and new["status"] == "True" and current.get("status") == "True":
            current["status"] = "False"
            changed = True
    if new["status"] == "True" and not found:
        conditions.append(new)
        changed = True
    return changed


# ====================================================================== the pod reconciler

def reconcile_pod(cluster, pod: dict) -> None:
    md = pod["metadata"]
    labels = md.get("labels") or {}
    if keys.WORKER_INDEX not in labels:
        raise ValueError(f"{keys.WORKER_INDEX} label is unexpected missing")
    lws = cluster.find(keys.GROUP, keys.KIND, md.get("namespace", ""), labels[keys.NAME])
    if lws is None:
        return
    if handle_restart_policy(cluster, pod, lws):
        return
    if labels[keys.WORKER_INDEX] != "0":
        return
    if (md.get("annotations") or {}).get(keys.LEADER_NAME):
        cluster.record_event(lws, "Warning", keys.FAILED_CREATE,
                             f"leader pod {md.get('namespace', '')}/{md['name']} contains mistake annotation "
                             f"'{keys.LEADER_NAME}': requires Kubernetes \u2265v1.27 or v1.26 with "
                             f"StatefulSetStartOrdinal feature")
        return
    if _subdomain_policy(lws) == keys.UNIQUE_PER_REPLICA:
        create_headless_service(cluster, lws, md["name"],
                                {keys.NAME: lws["metadata"]["name"], keys.GROUP_INDEX: labels.get(keys.GROUP_INDEX, "")},
                                pod)
    if md.get("deletionTimestamp"):
        return  # "skip creating the worker sts since the leader pod is being deleted"
    lwt = lws["spec"]["leaderWorkerTemplate"]
    if lwt.get("size", 1) == 1:
        return
    if lws["spec"].get("startupPolicy") == keys.LEADER_READY and not pod_ready(pod):
        return  # "defer the creation of the worker statefulset because leader pod is not ready."
    found = revision.get(cluster, lws, revision.key(pod))
    if found is None:
        return  # upstream requeues after a second; the revision exists before any leader pod
    if (lws["metadata"].get("annotations") or {}).get(keys.EXCLUSIVE) and not (pod.get("spec") or {}).get("nodeName"):
        return  # exclusive placement waits for the leader to be scheduled
    if cluster.find(*STS, md.get("namespace", ""), md["name"]) is not None:
        return
    try:
        cluster.create(worker_statefulset(pod, lws, found))
    except (Rejection, AlreadyExists) as exc:
        cluster.record_event(lws, "Warning", keys.FAILED_CREATE, f"Failed to create worker statefulset for leader pod {md['name']}")
        # client.IgnoreAlreadyExists; any other error goes back to controller-runtime, which only logs it
        # and retries with back-off - each retry refused the same way, recording this Event again. The
        # Event (without the error's text) is all the operator reports, so it is all the reference reports.
        return
    cluster.record_event(lws, "Normal", keys.GROUPS_PROGRESSING, f"Created worker statefulset for leader pod {md['name']}")


def handle_restart_policy(cluster, pod: dict, lws: dict) -> bool:
    """``handleRestartPolicy``: True when the group is (being) recreated."""
    if lws["spec"]["leaderWorkerTemplate"].get("restartPolicy") != keys.RECREATE_GROUP:
        return False
    if not container_restarted(pod) and not pod["metadata"].get("deletionTimestamp"):
        return False
    name, namespace = pod["metadata"]["name"], pod["metadata"].get("namespace", "")
    if (pod["metadata"].get("labels") or {}).get(keys.WORKER_INDEX) != "0":
        leader_name, ordinal = parent_and_ordinal(name)
        if ordinal == -1:
            raise ValueError(f"parsing pod name for pod {name}")
        leader = cluster.find("", "Pod", namespace, leader_name)
        if leader is None:
            return False  # the leader is gone; its worker StatefulSet's pods follow
        if revision.key(leader) != revision.key(pod):
            return False  # an old-revision pod of a rolling update: it is being replaced anyway
    else:
        leader = pod
    if leader["metadata"].get("deletionTimestamp"):
        return True
    cluster.delete(leader, propagation="Foreground")
    group = (leader["metadata"].get("labels") or {}).get(keys.GROUP_INDEX, "")
    cluster.record_event(lws, "Normal", keys.RECREATE_GROUP,
                         f"Worker pod {name} failed, deleted leader pod {leader['metadata']['name']} to recreate group {group}")
    return True


def worker_statefulset(leader: dict, lws: dict, found: dict) -> dict:
    """``constructWorkerStatefulSetApplyConfiguration``: the worker template of the leader's revision;
    size, annotations and subdomain policy of the LeaderWorkerSet as it is now."""
    current = revision.apply(lws, found)
    template = meta.clone(current["spec"]["leaderWorkerTemplate"].get("workerTemplate") or {})
    leader_labels = leader["metadata"].get("labels") or {}
    name = lws["metadata"]["name"]
    selector = {keys.GROUP_INDEX: leader_labels.get(keys.GROUP_INDEX, ""), keys.NAME: name,
                keys.GROUP_KEY: leader_labels.get(keys.GROUP_KEY, "")}
    labels = {**selector, keys.REVISION: revision.key(leader)}
    tmd = template.setdefault("metadata", {})
    tmd["labels"] = {**(tmd.get("labels") or {}), **labels}
    lwt = lws["spec"]["leaderWorkerTemplate"]
    annotations = {keys.SIZE: str(lwt.get("size", 1)), keys.LEADER_NAME: leader["metadata"]["name"]}
    lws_annotations = lws["metadata"].get("annotations") or {}
    if lws_annotations.get(keys.EXCLUSIVE):
        annotations[keys.EXCLUSIVE] = lws_annotations[keys.EXCLUSIVE]
    if lwt.get("subGroupPolicy") is not None:
        annotations[keys.SUBGROUP_SIZE] = str(lwt["subGroupPolicy"].get("subGroupSize"))
        if lws_annotations.get(keys.SUBGROUP_EXCLUSIVE):
            annotations[keys.SUBGROUP_EXCLUSIVE] = lws_annotations[keys.SUBGROUP_EXCLUSIVE]
    tmd["annotations"] = {**(tmd.get("annotations") or {}), **annotations}
    template = _metadata_first(template)
    service = name if _subdomain_policy(lws) == keys.SHARED else leader["metadata"]["name"]
    return {
        "apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": leader["metadata"]["name"], "namespace": leader["metadata"].get("namespace"),
                     "labels": labels, "ownerReferences": [meta.controller_ref(leader)]},
        "spec": {"replicas": lwt.get("size", 1) - 1, "selector": {"matchLabels": selector}, "template": template,
                 "serviceName": service, "podManagementPolicy": "Parallel", "ordinals": {"start": 1}},
    }


# ====================================================================== helpers

def container_restarted(pod: dict) -> bool:
    """``ContainerRestarted``: Running or Pending with a (init) container restartCount > 0."""
    status = pod.get("status") or {}
    if status.get("phase") not in ("Running", "Pending"):
        return False
    return any((c.get("restartCount") or 0) > 0
               for c in (status.get("initContainerStatuses") or []) + (status.get("containerStatuses") or []))


def pod_ready(pod: dict) -> bool:
    """``IsPodReady``: condition Ready True (whatever the phase)."""
    ready = meta.condition(pod, "Ready")
    return bool(ready and ready.get("status") == "True")


def running_and_ready(pod: dict) -> bool:
    """``PodRunningAndReady``."""
    return (pod.get("status") or {}).get("phase") == "Running" and pod_ready(pod)


def statefulset_ready(sts: dict) -> bool:
    """``StatefulsetReady``: every replica exists (any phase) and no revision is rolling out;
    ``readyReplicas`` is not looked at."""
    status = sts.get("status") or {}
    return sts["spec"].get("replicas", 1) == status.get("replicas", 0) and \
        status.get("currentRevision", "") == status.get("updateRevision", "")


def _is_leader_of(pod: dict, name: str) -> bool:
    labels = pod["metadata"].get("labels") or {}
    return labels.get(keys.NAME) == name and labels.get(keys.WORKER_INDEX) == "0"


def _by_index(objects: list[dict], length: int) -> dict[int, dict]:
    """``SortByIndex``: by the group-index label; objects without one, or beyond ``length``, are left out."""
    out = {}
    for obj in objects:
        text = (obj["metadata"].get("labels") or {}).get(keys.GROUP_INDEX, "")
        if text.isdigit() and int(text) < length:
            out[int(text)] = obj
    return out


def _metadata_first(template: dict) -> dict:
    return {"metadata": template["metadata"], **{k: v for k, v in template.items() if k != "metadata"}}


def _partition(sts: dict) -> int:
    return ((sts["spec"].get("updateStrategy") or {}).get("rollingUpdate") or {}).get("partition", 0)


def _subdomain_policy(lws: dict) -> str:
    return (lws["spec"].get("networkConfig") or {}).get("subdomainPolicy") or keys.SHARED
