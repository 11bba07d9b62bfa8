"""The Kubernetes Job controller, as far as training workloads need it: Job → Pods, Job status.

Indexed Jobs (JobSet's default) get one pod per completion index: generateName
``<job>-<index>-``, the ``batch.kubernetes.io/job-completion-index`` annotation and label,
hostname ``<job>-<index>`` and the ``JOB_COMPLETION_INDEX`` env var in every container.
"""

from __future__ import annotations

import copy

from . import meta

COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"


class JobController:
    watches = (("batch", "Job"),)

    def reconcile(self, cluster, job: dict) -> None:
        pods = cluster.list("", "Pod", job["metadata"].get("namespace"), owner=job)
        self._update_status(cluster, job, pods)
        if job["spec"].get("suspend") or meta.condition(job, "Complete") or meta.condition(job, "Failed"):
            return
        self._create_pods(cluster, job, pods)

    @staticmethod
    def _indexes(job: dict) -> list[int | None]:
        spec = job["spec"]
        if spec.get("completionMode") == "Indexed":
            return list(range(min(spec.get("parallelism", 1), spec.get("completions", 1))))
        return [None] * spec.get("parallelism", 1)

    def _create_pods(self, cluster, job: dict, pods: list[dict]) -> None:
        live = [p for p in pods if p.get("status", {}).get("phase") not in ("Failed",)]
        taken = {meta.annotations(p).get(COMPLETION_INDEX) for p in live}
        unindexed_missing = len(self._indexes(job)) - len(live)
        for index in self._indexes(job):
            if index is not None and str(index) in taken:
                continue
            if index is None:
                if unindexed_missing <= 0:
                    continue
                unindexed_missing -= 1
            cluster.create(self._pod(job, index))

    @staticmethod
    def _pod(job: dict, index: int | None) -> dict:
        template = copy.deepcopy(job["spec"].get("template") or {})
        md = template.get("metadata") or {}
        spec = template.get("spec") or {}
        name = job["metadata"]["name"]
        md.update({"namespace": job["metadata"].get("namespace"), "finalizers": [TRACKING_FINALIZER],
                   "ownerReferences": [meta.controller_ref(job)]})
        if index is None:
            md["generateName"] = f"{name}-"
        else:
            md["generateName"] = f"{name}-{index}-"
            md["annotations"] = {**(md.get("annotations") or {}), COMPLETION_INDEX: str(index)}
            md["labels"] = {**(md.get("labels") or {}), COMPLETION_INDEX: str(index)}
            spec["hostname"] = f"{name}-{index}"
            for container in spec.get("initContainers", []) + spec.get("containers", []):
                env = container.setdefault("env", [])
                if not meta.find_named(env, "JOB_COMPLETION_INDEX"):
                    env.append({"name": "JOB_COMPLETION_INDEX", "valueFrom": {"fieldRef": {
                        "fieldPath": f"metadata.annotations['{COMPLETION_INDEX}']"}}})
        return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec}

    @staticmethod
    def _update_status(cluster, job: dict, pods: list[dict]) -> None:
        phases = [p.get("status", {}).get("phase", "Pending") for p in pods]
        status = copy.deepcopy(job.get("status") or {})
        status["active"] = sum(1 for ph in phases if ph in ("Pending", "Running"))
        status["ready"] = sum(1 for p in pods if _pod_ready(p))
        status["succeeded"] = phases.count("Succeeded")
        status["failed"] = phases.count("Failed")
        completions = job["spec"].get("completions")
        if completions is not None and status["succeeded"] >= completions and not meta.condition(job, "Complete"):
            status.setdefault("conditions", []).append({
                "type": "Complete", "status": "True", "lastTransitionTime": cluster.now()})
        if status != (job.get("status") or {}):
            job["status"] = status
            cluster.update(job)


def _pod_ready(pod: dict) -> bool:
    cond = meta.condition(pod, "Ready")
    return bool(cond and cond.get("status") == "True")
