"""JobSet controller: JobSet → headless Service + one Job per replicatedJob replica.

Facts (shared/reference/volcano-jobset-restart.md §2.2): Job name ``<jobset>-<rjob>-<index>``;
the jobset.sigs.k8s.io keys go on the Job and its pod template as labels *and* annotations;
``restart-attempt`` is ``status.restarts`` when the Job was created; pod subdomain is
``network.subdomain`` or the JobSet name; ``dependsOn`` holds a replicatedJob back until its
dependencies are Ready/Complete.
"""

from __future__ import annotations

import copy
import hashlib

from .. import meta

GROUP = "jobset.x-k8s.io"
PREFIX = "jobset.sigs.k8s.io/"
RESTART_ATTEMPT = PREFIX + "restart-attempt"
JOBSET_NAME = PREFIX + "jobset-name"
REPLICATED_JOB_NAME = PREFIX + "replicatedjob-name"


def subdomain(jobset: dict) -> str:
    return (jobset["spec"].get("network") or {}).get("subdomain") or jobset["metadata"]["name"]


def job_name(jobset: dict, rj_name: str, index: int) -> str:
    return f"{jobset['metadata']['name']}-{rj_name}-{index}"


def job_ready(job: dict) -> bool:
    status = job.get("status") or {}
    return status.get("ready", 0) + status.get("succeeded", 0) >= job["spec"].get("parallelism", 1)


def job_finished(job: dict, condition: str) -> bool:
    cond = meta.condition(job, condition)
    return bool(cond and cond.get("status") == "True")


class JobSetController:
    watches = ((GROUP, "JobSet"),)

    def reconcile(self, cluster, jobset: dict) -> None:
        jobs = cluster.list("batch", "Job", jobset["metadata"].get("namespace"), owner=jobset)
        self._update_status(cluster, jobset, jobs)
        if self._finished(jobset):
            return
        if (jobset["spec"].get("network") or {}).get("enableDNSHostnames"):
            self._ensure_service(cluster, jobset)
        self._create_missing_jobs(cluster, jobset, jobs)

    # ------------------------------------------------------------------ status
    @staticmethod
    def _finished(jobset: dict) -> bool:
        return any((meta.condition(jobset, t) or {}).get("status") == "True" for t in ("Completed", "Failed"))

    def _update_status(self, cluster, jobset: dict, jobs: list[dict]) -> None:
        status = copy.deepcopy(jobset.get("status") or {})
        status.setdefault("restarts", 0)
        rj_status = []
        for rj in jobset["spec"].get("replicatedJobs", []):
            mine = [j for j in jobs if meta.labels(j).get(REPLICATED_JOB_NAME) == rj["name"]]
            rj_status.append({
                "name": rj["name"],
                "ready": sum(1 for j in mine if job_ready(j) and not job_finished(j, "Complete")),
                "succeeded": sum(1 for j in mine if job_finished(j, "Complete")),
                "failed": sum(1 for j in mine if job_finished(j, "Failed")),
                "active": sum(1 for j in mine if (j.get("status") or {}).get("active", 0) > 0),
                "suspended": sum(1 for j in mine if j["spec"].get("suspend")),
            })
        status["replicatedJobsStatus"] = rj_status
        self._success_policy(cluster, jobset, jobs, status)
        if status != jobset.get("status"):
            jobset["status"] = status
            cluster.update(jobset)

    @staticmethod
    def _success_policy(cluster, jobset: dict, jobs: list[dict], status: dict) -> None:
        policy = jobset["spec"].get("successPolicy") or {"operator": "All"}
        targets = policy.get("targetReplicatedJobs") or [rj["name"] for rj in jobset["spec"].get("replicatedJobs", [])]
        wanted = sum(rj.get("replicas", 1) for rj in jobset["spec"].get("replicatedJobs", []) if rj["name"] in targets)
        done = sum(1 for j in jobs if job_finished(j, "Complete") and meta.labels(j).get(REPLICATED_JOB_NAME) in targets)
        if (policy.get("operator") == "Any" and done >= 1) or (done and done >= wanted):
            if not meta.condition({"status": status}, "Completed"):
                status.setdefault("conditions", []).append({
                    "type": "Completed", "status": "True", "reason": "AllJobsCompleted",
                    "message": "jobset completed successfully", "lastTransitionTime": cluster.now()})
                status["terminalState"] = "Completed"

    # ------------------------------------------------------------------ children
    @staticmethod
    def _ensure_service(cluster, jobset: dict) -> None:
        name, ns = subdomain(jobset), jobset["metadata"].get("namespace")
        if cluster.find("", "Service", ns, name) is not None:
            return
        cluster.create({
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": name, "namespace": ns, "ownerReferences": [meta.controller_ref(jobset)]},
            "spec": {"clusterIP": "None", "selector": {JOBSET_NAME: jobset["metadata"]["name"]},
                     "publishNotReadyAddresses": bool(jobset["spec"]["network"].get("publishNotReadyAddresses"))},
        })

    def _create_missing_jobs(self, cluster, jobset: dict, jobs: list[dict]) -> None:
        existing = {j["metadata"]["name"] for j in jobs}
        by_rj = {}
        for j in jobs:
            by_rj.setdefault(meta.labels(j).get(REPLICATED_JOB_NAME), []).append(j)
        in_order = (jobset["spec"].get("startupPolicy") or {}).get("startupPolicyOrder") == "InOrder"
        global_index = 0
        total = sum(rj.get("replicas", 1) for rj in jobset["spec"].get("replicatedJobs", []))
        for position, rj in enumerate(jobset["spec"].get("replicatedJobs", [])):
            if not self._dependencies_met(jobset, rj, position, in_order, by_rj):
                return  # later replicatedJobs wait too, as upstream creates them in order
            for index in range(rj.get("replicas", 1)):
                name = job_name(jobset, rj["name"], index)
                if name not in existing:
                    cluster.create(self._job(jobset, rj, index, global_index + index, total))
            global_index += rj.get("replicas", 1)

    @staticmethod
    def _dependencies_met(jobset: dict, rj: dict, position: int, in_order: bool, by_rj: dict) -> bool:
        deps = list(rj.get("dependsOn") or [])
        if in_order and position > 0:
            deps.append({"name": jobset["spec"]["replicatedJobs"][position - 1]["name"], "status": "Ready"})
        for dep in deps:
            target = meta.find_named(jobset["spec"]["replicatedJobs"], dep["name"])
            mine = by_rj.get(dep["name"], [])
            if target is None or len(mine) < target.get("replicas", 1):
                return False
            check = job_ready if dep["status"] == "Ready" else (lambda j: job_finished(j, "Complete"))
            if not all(check(j) or job_finished(j, "Complete") for j in mine):
                return False
        return True

    @staticmethod
    def _job(jobset: dict, rj: dict, index: int, global_index: int, total: int) -> dict:
        md = jobset["metadata"]
        name = job_name(jobset, rj["name"], index)
        keys = {
            JOBSET_NAME: md["name"],
            PREFIX + "replicatedjob-replicas": str(rj.get("replicas", 1)),
            REPLICATED_JOB_NAME: rj["name"],
            PREFIX + "job-index": str(index),
            PREFIX + "job-global-index": str(global_index),
            PREFIX + "global-replicas": str(total),
            RESTART_ATTEMPT: str((jobset.get("status") or {}).get("restarts", 0)),
            PREFIX + "job-key": hashlib.sha1(f"{md.get('namespace', '')}/{name}".encode()).hexdigest(),
            PREFIX + "jobset-uid": md["uid"],
        }
        template = copy.deepcopy(rj["template"])
        job_md = template.get("metadata") or {}
        spec = template.get("spec") or {}
        pod_template = spec.setdefault("template", {})
        pod_md = pod_template.setdefault("metadata", {})
        for target in (job_md, pod_md):
            target["labels"] = {**(target.get("labels") or {}), **keys}
            target["annotations"] = {**(target.get("annotations") or {}), **keys}
        if jobset["spec"]["network"].get("enableDNSHostnames"):
            pod_template.setdefault("spec", {})["subdomain"] = subdomain(jobset)
        if jobset["spec"].get("suspend"):
            spec["suspend"] = True
        job_md.update({"name": name, "namespace": md.get("namespace"),
                       "ownerReferences": [meta.controller_ref(jobset)]})
        return {"apiVersion": "batch/v1", "kind": "Job", "metadata": job_md, "spec": spec}
