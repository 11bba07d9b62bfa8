"""LeaderWorkerSet group-restart bugs: restarting only the failed pod, and a group whose workers never
come back."""

from __future__ import annotations

from functools import partial

from reconciler.lws import controller, keys

from .variants import Variant, patched


def _restart_only_failed_pod(cluster, pod: dict, lws: dict) -> bool:
    """The pod that restarted or is being deleted is deleted on its own (its StatefulSet makes it
    again), with the same Event; the leader and the rest of the group keep running, so the group is
    never restarted as a whole."""
    if lws["spec"]["leaderWorkerTemplate"].get("restartPolicy") != keys.RECREATE_GROUP:
        return False
    if not controller.container_restarted(pod) and not pod["metadata"].get("deletionTimestamp"):
        return False
    if pod["metadata"].get("deletionTimestamp"):
        return True
    cluster.delete(pod)
    name = pod["metadata"]["name"]
    leader = name if (pod["metadata"].get("labels") or {}).get(keys.WORKER_INDEX) == "0" else name.rsplit("-", 1)[0]
    group = (pod["metadata"].get("labels") or {}).get(keys.GROUP_INDEX, "")
    cluster.record_event(lws, "Normal", keys.RECREATE_GROUP,
                         f"Worker pod {name} failed, deleted leader pod {leader} to recreate group {group}")
    return True


_real_reconcile_pod = controller.reconcile_pod


def _workers_only_once(cluster, pod: dict) -> None:
    """Each group's worker StatefulSet is made once, when the group first comes up: a leader made
    again after a group restart gets no workers (as if the workers were set up with the LWS, not
    from each leader pod)."""
    md = pod["metadata"]
    made = f"Created worker statefulset for leader pod {md['name']}"
    already = any(e["reason"] == keys.GROUPS_PROGRESSING and e["message"] == made for e in cluster.events)
    if already and cluster.find("apps", "StatefulSet", md.get("namespace", ""), md["name"]) is None:
        lws = cluster.find(keys.GROUP, keys.KIND, md.get("namespace", ""), (md.get("labels") or {}).get(keys.NAME, ""))
        if lws is not None:
            controller.handle_restart_policy(cluster, pod, lws)
        return
    _real_reconcile_pod(cluster, pod)


VARIANTS = [
    Variant("lws-restart-only-failed-pod", "lws",
            bug="a restarted or deleted pod is recreated alone: the leader and the rest of its group keep running",
            seed="LWS RecreateGroupOnPodRestart (A.3; lws#508 asks for exactly the group semantics)",
            applied=partial(patched, controller, "handle_restart_policy", _restart_only_failed_pod)),
    Variant("lws-never-recreates-workers", "lws",
            bug="after a group restart the leader comes back but its worker StatefulSet is never made again",
            seed="LWS pod_controller: the worker StatefulSet is made from each (new) leader pod",
            applied=partial(patched, controller, "reconcile_pod", _workers_only_once)),
]
