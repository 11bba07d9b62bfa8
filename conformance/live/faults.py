"""Scenario faults replayed against real Pods, as data (the live side of ``reconciler/faults.py``).

Pods are chosen exactly as render chooses them - :func:`reconciler.faults.select_pods` runs on
a listing of the case's namespace - and each fault is done the way the real thing happens:

=====================  =====================================================================
``podExit``            annotations ``training-conformance.io/exit-now: <code>`` (+
                       ``exit-container``): kwok's ``pod-exit-now`` stage makes the containers
                       exit once and consumes the annotations (kubelet rules, see
                       ``conformance/cluster/kwok-stages.yaml``); added again, another exit
``podSucceed``         the same with code 0
``podEvicted``         the Eviction API (``pods/eviction``, policy/v1): kube-apiserver adds
                       DisruptionTarget EvictionByEvictionAPI and deletes gracefully; kwok stops it
``nodeLost``           what PodGC does for a pod whose node is gone: status gets DisruptionTarget
                       (DeletionByPodGC) and phase Failed, then a force delete (grace 0)
``nodePressureEvicted`` what the kubelet's eviction manager writes: status phase Failed, reason
                       Evicted and its message, DisruptionTarget (TerminationByKubelet), Ready
                       False, containers terminated with 137 (status patch); no delete
``podDeleted``         a plain graceful DELETE
``holdTermination``    finalizer ``training-conformance.dev/hold`` added (JSON patch)
``releaseTermination`` that finalizer removed (JSON patch, tested against the list it edits)
=====================  =====================================================================

The exit annotations are a request kwok consumes, so they never show in an outcome; a scenario
step is steady only once every request is consumed (:func:`pending_exits`).
"""

from __future__ import annotations

import json

from reconciler import faults as model
from reconciler.live.rest import Api, ApiError

EXIT_NOW = "training-conformance.io/exit-now"
EXIT_CONTAINER = "training-conformance.io/exit-container"
FIELD_MANAGER = "training-conformance"


class PodListing:
    """What :func:`reconciler.faults.select_pods` needs of a cluster, over one fresh LIST per kind."""

    def __init__(self, api: Api, live_namespace: str):
        self.api, self.namespace = api, live_namespace
        self._lists: dict[str, list[dict]] = {}

    def _items(self, api_version: str, kind: str) -> list[dict]:
        if kind not in self._lists:
            resource = self.api.must_resource(api_version, kind)
            self._lists[kind] = self.api.list(resource, self.namespace).get("items", [])
        return self._lists[kind]

    def list(self, group: str, kind: str, namespace: str | None = None, owner: dict | None = None) -> list[dict]:
        items = self._items("batch/v1" if kind == "Job" else "v1", kind)
        if owner is not None:
            uid = owner["metadata"]["uid"]
            items = [i for i in items if any(r.get("uid") == uid for r in i["metadata"].get("ownerReferences", []))]
        return sorted(items, key=lambda o: o["metadata"]["name"])


def inject(api: Api, fault: dict, live_namespace: str) -> int:
    """Apply ``fault`` to the pods it selects; returns how many. Raises FaultError when none."""
    kind = fault["fault"]
    handler = _HANDLERS.get(kind)
    if handler is None:
        raise model.FaultError(f"unknown fault {kind!r}; known: {', '.join(sorted(_HANDLERS))}")
    pods = model.select_pods(PodListing(api, live_namespace), fault, held=kind == "releaseTermination")
    if not pods:
        raise model.FaultError(f"fault {model.describe(fault)} selects no pod")
    resource = api.must_resource("v1", "Pod")
    for pod in pods:
        handler(api, resource, pod, fault)
    return len(pods)


def pending_exits(pods: list[dict]) -> list[str]:
    """Exit requests kwok has not consumed yet (a pod gone or being deleted needs none)."""
    return [f"Pod {p['metadata']['name']} has an exit request pending" for p in pods
            if EXIT_NOW in (p["metadata"].get("annotations") or {}) and not p["metadata"].get("deletionTimestamp")]


def _patch(api: Api, resource, pod: dict, body, content_type: str, subresource: str | None = None) -> None:
    md = pod["metadata"]
    api.request("PATCH", resource.path(md["namespace"], md["name"], subresource), [("fieldManager", FIELD_MANAGER)],
                body, content_type=content_type)


def _exit(api, resource, pod, code: int, container: str | None) -> None:
    annotations = {EXIT_NOW: str(code), EXIT_CONTAINER: container}
    _patch(api, resource, pod, {"metadata": {"annotations": annotations}}, "application/merge-patch+json")


def _pod_exit(api, resource, pod, fault) -> None:
    _exit(api, resource, pod, int(fault["exitCode"]), fault.get("container"))


def _pod_succeed(api, resource, pod, fault) -> None:
    _exit(api, resource, pod, 0, None)


def _pod_evicted(api, resource, pod, fault) -> None:
    md = pod["metadata"]
    body = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": md["name"], "namespace": md["namespace"]}}
    api.request("POST", resource.path(md["namespace"], md["name"], "eviction"), body=body)


def _node_lost(api, resource, pod, fault) -> None:
    reason, message = model.POD_GC
    # Strategic merge: conditions merge by type, so only DisruptionTarget is added or replaced.
    status = {"status": {"phase": "Failed", "conditions": [
        {"type": "DisruptionTarget", "status": "True", "reason": reason, "message": message}]}}
    _patch(api, resource, pod, status, "application/strategic-merge-patch+json", subresource="status")
    api.delete(resource, pod["metadata"]["namespace"], pod["metadata"]["name"], grace_seconds=0)


def _node_pressure_evicted(api, resource, pod, fault) -> None:
    reason, message, disruption = model.NODE_PRESSURE
    statuses = []
    for cs in (pod.get("status") or {}).get("containerStatuses") or []:
        cs = dict(cs)
        if "terminated" not in (cs.get("state") or {}):
            cs.update({"ready": False, "started": False,
                       "state": {"terminated": {"exitCode": 137, "reason": "Error"}}})
        statuses.append(cs)
    # Strategic merge: conditions merge by type; containerStatuses are replaced as a whole.
    status = {"status": {"phase": "Failed", "reason": reason, "message": message, "containerStatuses": statuses,
                         "conditions": [{"type": "DisruptionTarget", "status": "True", "reason": disruption,
                                         "message": message}, {"type": "Ready", "status": "False"}]}}
    _patch(api, resource, pod, status, "application/strategic-merge-patch+json", subresource="status")


def _pod_deleted(api, resource, pod, fault) -> None:
    api.delete(resource, pod["metadata"]["namespace"], pod["metadata"]["name"])


def _hold(api, resource, pod, fault) -> None:
    _json_patch_retrying(api, resource, pod, _hold_ops)


def _hold_ops(pod: dict) -> list[dict] | None:
    finalizers = pod["metadata"].get("finalizers")
    if finalizers and model.HOLD_FINALIZER in finalizers:
        return None
    return [{"op": "add", "path": "/metadata/finalizers/-", "value": model.HOLD_FINALIZER}] if finalizers else \
        [{"op": "add", "path": "/metadata/finalizers", "value": [model.HOLD_FINALIZER]}]


def _release_ops(pod: dict) -> list[dict] | None:
    finalizers = pod["metadata"].get("finalizers") or []
    if model.HOLD_FINALIZER not in finalizers:
        return None
    i = finalizers.index(model.HOLD_FINALIZER)
    # "test" first: the Job controller may remove its own finalizer meanwhile (indices shift).
    return [{"op": "test", "path": f"/metadata/finalizers/{i}", "value": model.HOLD_FINALIZER},
            {"op": "remove", "path": f"/metadata/finalizers/{i}"}]


def _release(api, resource, pod, fault) -> None:
    _json_patch_retrying(api, resource, pod, _release_ops)


def _json_patch_retrying(api, resource, pod, ops_for, attempts: int = 5) -> None:
    md = pod["metadata"]
    for _ in range(attempts):
        ops = ops_for(pod)
        if not ops:
            return
        try:
            _patch(api, resource, pod, ops, "application/json-patch+json")
            return
        except ApiError as exc:
            if exc.code not in (409, 422):  # a failed "test" is 422
                raise
        pod = api.get(resource, md["namespace"], md["name"])
        if pod is None:
            return
    raise model.FaultError(f"could not patch finalizers of Pod {md['name']} after {attempts} attempts: "
                           f"{json.dumps(pod['metadata'].get('finalizers'))}")


_HANDLERS = {
    "podExit": _pod_exit, "podSucceed": _pod_succeed, "podEvicted": _pod_evicted, "nodeLost": _node_lost,
    "podDeleted": _pod_deleted, "holdTermination": _hold, "releaseTermination": _release,
    "nodePressureEvicted": _node_pressure_evicted,
}
