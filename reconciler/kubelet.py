"""A stand-in for the kubelet (kwok's fast pod stages in the live backend).

* A new pod (stored by the apiserver with phase Pending and nothing else) becomes Running and Ready,
  every container running with ``restartCount: 0``; its init containers are done (terminated, exit
  code 0, ``Completed``), or running if they are sidecars (``restartPolicy: Always``) - as kwok's
  ``pod-running`` stage writes them.
* A pod being deleted stops: phase ``Failed`` (unless it already finished), Ready ``False``. Its
  containers record no exit code - there is no process (kwok has none either) - so only
  ``onPodConditions`` rules of a pod failure policy can match such a pod.
* Nothing exits on its own: :func:`container_exit` is how a scenario's fault makes a container
  exit, and the pod's ``restartPolicy`` decides what follows (in-place restart or a finished pod).
"""

from __future__ import annotations

from . import meta

TERMINAL = ("Succeeded", "Failed")


class FakeKubelet:
    watches = (("", "Pod"),)

    def reconcile(self, cluster, pod: dict) -> None:
        status = pod.get("status") or {}
        # The apiserver stores every new pod with phase Pending; this stand-in writes Running (and the
        # container statuses) in one go, so Pending means "not started yet".
        if status.get("phase") == "Pending":
            now = cluster.now()
            containers = [c for c in (pod.get("spec") or {}).get("containers") or [] if isinstance(c, dict)]
            pod["status"] = {
                "phase": "Running",
                "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": now}],
                "containerStatuses": [{"name": c.get("name"), "ready": True, "restartCount": 0, "started": True,
                                       "state": {"running": {"startedAt": now}}} for c in containers],
            }
            init = (pod.get("spec") or {}).get("initContainers") or []
            if init:
                pod["status"]["initContainerStatuses"] = [_init_status(c, now) for c in init]
            cluster.update(pod)
        elif pod["metadata"].get("deletionTimestamp") and status["phase"] not in TERMINAL:
            status["phase"] = "Failed"
            set_not_ready(cluster, pod)
            cluster.update(pod)


def _init_status(container: dict, now: str) -> dict:
    if container.get("restartPolicy") == "Always":
        return {"name": container.get("name"), "ready": True, "restartCount": 0, "started": True,
                "state": {"running": {"startedAt": now}}}
    return {"name": container.get("name"), "ready": True, "restartCount": 0,
            "state": {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": now, "finishedAt": now}}}


def container_exit(cluster, pod: dict, exit_code: int, container: str | None = None) -> None:
    """Container ``container`` (every container when None) exits with ``exit_code``.

    With ``restartPolicy`` OnFailure (or Always) a non-zero exit is restarted in place:
    ``restartCount`` + 1 and ``lastState.terminated`` records the exit, the pod stays Running.
    Otherwise the container stays terminated; once every container is, the pod is Succeeded
    (all exited 0) or Failed. Reasons are the kubelet's: ``Completed`` for 0, ``Error`` otherwise.
    """
    status = pod["status"]  # a running pod: this stand-in wrote its status and containerStatuses
    restart_policy = pod["spec"].get("restartPolicy", "Always")
    now = cluster.now()
    terminated = {"exitCode": exit_code, "reason": "Completed" if exit_code == 0 else "Error",
                  "startedAt": now, "finishedAt": now}
    for cs in status["containerStatuses"]:
        if container is not None and cs["name"] != container:
            continue
        if "terminated" in cs["state"]:
            continue
        if exit_code != 0 and restart_policy in ("OnFailure", "Always"):
            cs["restartCount"] += 1
            cs["lastState"] = {"terminated": dict(terminated)}
            cs["state"] = {"running": {"startedAt": now}}
        else:
            cs["state"] = {"terminated": dict(terminated)}
            cs["ready"] = False
            cs["started"] = False
    states = [cs["state"] for cs in status["containerStatuses"]]
    if states and all("terminated" in s for s in states):
        failed = any(s["terminated"]["exitCode"] for s in states)
        status["phase"] = "Failed" if failed else "Succeeded"
        set_not_ready(cluster, pod)
    cluster.update(pod)


def set_not_ready(cluster, pod: dict) -> None:
    """The pod's Ready condition becomes False - when it stops (its containers ended, it is deleted or
    evicted). Every pod this is called for is running and ready: this stand-in starts each pod Ready,
    and a pod leaves its Ready phase only once, so the condition is there and True."""
    cond = meta.find_by(pod["status"]["conditions"], "type", "Ready")
    cond.update({"status": "False", "lastTransitionTime": cluster.now()})
