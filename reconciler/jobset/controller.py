"""JobSet controller: JobSet → headless Service + one Job per replicatedJob replica, restarts.

Facts (shared/reference/volcano-jobset-restart.md §2.2): Job name ``<jobset>-<rjob>-<index>``;
the jobset.sigs.k8s.io keys go on the Job and its pod template as labels *and* annotations (jobset-uid
and the group keys since v0.9, profile switches ``jobset_uid_keys``, ``jobset_group_labels``);
``restart-attempt`` is ``status.restarts`` when the Job was created; pod subdomain is
``network.subdomain`` or the JobSet name; ``dependsOn`` holds a replicatedJob back until its
dependencies are Ready/Complete (later replicatedJobs are still created); ``startupPolicy`` InOrder
creates one replicatedJob at a time, with conditions ``StartupPolicyInProgress``/``Completed``.

Reconcile order (upstream's, order matters): bucket the child Jobs - ``restart-attempt`` below
``status.restarts`` → previous, else by condition failed / successful / active; recompute
``replicatedJobsStatus`` from the current ones; a finished JobSet deletes its active Jobs and stops;
delete the previous Jobs (``Foreground``, so a Job goes only after its pods); all Jobs ready →
``RestartingJobSet=False``; any failed Job → failure policy, stop; successful Jobs → success
policy; then Service and the missing Jobs - none at all while a previous Job exists under
``BlockingRecreate``, never a name that still exists in any bucket, no later replicatedJob once
one's creation failed or, InOrder, while an earlier one has not started. The status is written
once, at the end, and not at all when upstream's reconcile returns an error (a failed Job creation,
a failure-policy error, a bad restart-attempt label).
"""

from __future__ import annotations

import copy
import hashlib
from dataclasses import dataclass, field

from .. import meta
from ..errors import Rejection
from ..cluster import AlreadyExists
from . import conditions as c
from . import failure_policy

GROUP = "jobset.x-k8s.io"
PREFIX = "jobset.sigs.k8s.io/"
RESTART_ATTEMPT = PREFIX + "restart-attempt"
JOBSET_NAME = PREFIX + "jobset-name"
REPLICATED_JOB_NAME = PREFIX + "replicatedjob-name"
GROUP_NAME = PREFIX + "group-name"


def subdomain(jobset: dict) -> str:
    return (jobset["spec"].get("network") or {}).get("subdomain") or jobset["metadata"]["name"]


def job_name(jobset: dict, rj_name: str, index: int) -> str:
    return f"{jobset['metadata']['name']}-{rj_name}-{index}"


def group_keys(jobset: dict, rj: dict, index: int) -> dict[str, str]:
    """group-name, group-replicas (Jobs of all replicatedJobs in the group) and job-group-index (the
    Job's position in its group, counting the group's replicatedJobs in spec order)."""
    group = rj.get("groupName", "")
    members = [r for r in jobset["spec"].get("replicatedJobs", []) if r.get("groupName", "") == group]
    before = 0
    for member in members:
        if member["name"] == rj["name"]:
            break
        before += member.get("replicas", 1)
    return {GROUP_NAME: group, PREFIX + "group-replicas": str(sum(r.get("replicas", 1) for r in members)),
            PREFIX + "job-group-index": str(before + index)}


def job_ready(job: dict) -> bool:
    status = job.get("status") or {}
    spec = job["spec"]
    pods = min(spec.get("parallelism", 1), spec.get("completions", spec.get("parallelism", 1)))
    return status.get("ready", 0) + status.get("succeeded", 0) >= pods


def job_finished(job: dict, condition: str) -> bool:
    cond = meta.condition(job, condition)
    return bool(cond and cond.get("status") == "True")


def _delete_jobs(cluster, jobs: list[dict]) -> None:
    """Upstream's deleteJobs: Foreground (a Job goes only after its pods), side by side, and a Job
    already being deleted is skipped - not deleted again on every reconcile until it is gone."""
    cluster.delete_all([j for j in jobs if not j["metadata"].get("deletionTimestamp")], propagation="Foreground")


@dataclass
class ChildJobs:
    active: list[dict] = field(default_factory=list)
    successful: list[dict] = field(default_factory=list)
    failed: list[dict] = field(default_factory=list)
    #: From an earlier restart attempt: to be deleted, and never counted in status.
    previous: list[dict] = field(default_factory=list)

    @property
    def current(self) -> list[dict]:
        return self.active + self.successful + self.failed


class JobSetController:
    watches = ((GROUP, "JobSet"),)
    #: Built-in kinds it reads (and creates) besides what it watches: see ``Controller.reads``.
    reads = (("batch", "Job"), ("", "Service"))

    def reconcile(self, cluster, jobset: dict) -> None:
        if jobset["metadata"].get("deletionTimestamp"):
            return
        status = copy.deepcopy(jobset.get("status") or {})
        status.setdefault("restarts", 0)
        children = self._children(cluster, jobset, status["restarts"])
        if children is None:
            return
        status["replicatedJobsStatus"] = self._replicated_jobs_status(jobset, children)
        # Upstream persists the status once, at the end of a reconcile that returned no error.
        if self._reconcile(cluster, jobset, children, status) and status != jobset.get("status"):
            jobset["status"] = status
            cluster.update(jobset)

    def _reconcile(self, cluster, jobset: dict, children: ChildJobs, status: dict) -> bool:
        """Steps in upstream's order; False where upstream's reconcile returns an error."""
        now = cluster.now()
        if self._finished(status):
            _delete_jobs(cluster, children.active)
            return True
        _delete_jobs(cluster, children.previous)
        if not jobset["spec"].get("suspend") and self._all_ready(jobset, status):
            c.set_condition(status, c.RESTARTING, False, *c.RESTARTING_JOBS_READY, now)
        if children.failed:
            error = failure_policy.execute(jobset, status, children.failed, now,
                                           cluster.profile.jobset_restarting_condition)
            if error:
                cluster.record_error(jobset, error)
            return not error
        if children.successful and self._success_policy(jobset, children.successful):
            c.set_condition(status, c.COMPLETED, True, *c.ALL_JOBS_COMPLETED, now)
            c.set_condition(status, c.RESTARTING, False, *c.RESTARTING_JOBSET_COMPLETED, now)
            status["terminalState"] = c.COMPLETED
            return True
        if (jobset["spec"].get("network") or {}).get("enableDNSHostnames"):
            self._ensure_service(cluster, jobset)
        return self._create_missing_jobs(cluster, jobset, children, status, now)

    # ------------------------------------------------------------------ status
    @staticmethod
    def _children(cluster, jobset: dict, restarts: int) -> ChildJobs | None:
        children = ChildJobs()
        for job in cluster.list("batch", "Job", jobset["metadata"].get("namespace"), owner=jobset):
            label = meta.labels(job).get(RESTART_ATTEMPT, "")
            if not label.isdigit():
                # Upstream's strconv.Atoi fails (a label value starts with a letter or digit, so there is
                # no sign to parse): it logs the error and returns it, so the whole reconcile stops before
                # anything is written, and no Event says why - nothing a client can see.
                return None
            if int(label) < restarts:
                children.previous.append(job)
            elif job_finished(job, "Failed"):
                children.failed.append(job)
            elif job_finished(job, "Complete"):
                children.successful.append(job)
            else:
                children.active.append(job)
        return children

    @staticmethod
    def _replicated_jobs_status(jobset: dict, children: ChildJobs) -> list[dict]:
        rj_status = []
        for rj in jobset["spec"].get("replicatedJobs", []):
            def mine(jobs: list[dict]) -> list[dict]:
                return [j for j in jobs if meta.labels(j).get(REPLICATED_JOB_NAME) == rj["name"]]
            active = mine(children.active)
            rj_status.append({
                "name": rj["name"],
                "ready": sum(1 for j in active if job_ready(j)),
                "succeeded": len(mine(children.successful)),
                "failed": len(mine(children.failed)),
                "active": sum(1 for j in active if (j.get("status") or {}).get("active", 0) > 0),
                "suspended": sum(1 for j in active if j["spec"].get("suspend")),
            })
        return rj_status

    @staticmethod
    def _finished(status: dict) -> bool:
        return c.is_true(status, c.COMPLETED) or c.is_true(status, c.FAILED)

    @staticmethod
    def _all_ready(jobset: dict, status: dict) -> bool:
        total = sum(rj.get("replicas", 1) for rj in jobset["spec"].get("replicatedJobs", []))
        ready = sum(rj["ready"] + rj["succeeded"] for rj in status["replicatedJobsStatus"])
        return total == ready

    @staticmethod
    def _success_policy(jobset: dict, successful: list[dict]) -> bool:
        policy = jobset["spec"].get("successPolicy") or {"operator": "All"}
        targets = policy.get("targetReplicatedJobs") or [rj["name"] for rj in jobset["spec"].get("replicatedJobs", [])]
        done = sum(1 for j in successful if meta.labels(j).get(REPLICATED_JOB_NAME) in targets)
        if policy.get("operator") == "Any":
            return done >= 1
        return done >= sum(rj.get("replicas", 1) for rj in jobset["spec"].get("replicatedJobs", [])
                           if rj["name"] in targets)

    # ------------------------------------------------------------------ children
    @staticmethod
    def _ensure_service(cluster, jobset: dict) -> None:
        name, ns = subdomain(jobset), jobset["metadata"].get("namespace")
        if cluster.find("", "Service", ns, name) is not None:
            return
        spec = {"clusterIP": "None", "selector": {JOBSET_NAME: jobset["metadata"]["name"]}}
        # Service's publishNotReadyAddresses is omitempty: the apiserver never stores a false one.
        if jobset["spec"]["network"].get("publishNotReadyAddresses"):
            spec["publishNotReadyAddresses"] = True
        cluster.create({
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": name, "namespace": ns, "ownerReferences": [meta.controller_ref(jobset)]},
            "spec": spec,
        })

    def _create_missing_jobs(self, cluster, jobset: dict, children: ChildJobs, status: dict, now: str) -> bool:
        """Upstream's reconcileReplicatedJobs: replicatedJob by replicatedJob, create its missing Jobs; stop
        after one whose creation failed (upstream returns that error, so later replicatedJobs wait). False
        on a failure.

        A replicatedJob whose dependsOn is not reached yet is skipped, the later ones are still looked at
        (dependencyReachedStatus, on the counts of this reconcile's replicatedJobsStatus: Ready = ready +
        failed + succeeded Jobs, Complete = succeeded Jobs, each equal to the dependency's replicas). With
        startupPolicy InOrder (unless suspended) a replicatedJob whose Jobs have all started (ready + failed +
        succeeded = replicas) is passed over; the first one that has not gets its Jobs, condition
        StartupPolicyInProgress, and the reconcile stops there; once all have started,
        StartupPolicyCompleted."""
        policy = jobset["spec"].get("failurePolicy") or {}
        # constructJobsFromTemplate: no Job at all while a previous Job exists under BlockingRecreate.
        blocked = bool(children.previous) and policy.get("restartStrategy") == "BlockingRecreate"
        existing = {j["metadata"]["name"] for j in children.current + children.previous}
        counts = {rs["name"]: rs for rs in status["replicatedJobsStatus"]}
        in_order = (not jobset["spec"].get("suspend")
                    and (jobset["spec"].get("startupPolicy") or {}).get("startupPolicyOrder") == "InOrder")
        replicas_so_far: dict[str, int] = {}
        global_index = 0
        rjobs = jobset["spec"].get("replicatedJobs", [])
        total = sum(rj.get("replicas", 1) for rj in rjobs)
        for rj in rjobs:
            first_global, global_index = global_index, global_index + rj.get("replicas", 1)
            replicas_so_far[rj["name"]] = rj.get("replicas", 1)
            if not self._dependencies_met(rj, replicas_so_far, counts):
                continue
            mine = counts[rj["name"]]
            if in_order and mine["ready"] + mine["failed"] + mine["succeeded"] == rj.get("replicas", 1):
                continue
            failed = False
            for index in range(0 if blocked else rj.get("replicas", 1)):
                name = job_name(jobset, rj["name"], index)
                if name not in existing:
                    job = self._job(jobset, rj, index, first_global + index, total, status["restarts"],
                                    cluster.profile)
                    try:
                        cluster.create(job)
                    except (Rejection, AlreadyExists) as exc:
                        if cluster.profile.jobset_job_creation_event:  # else nothing observable reports it
                            cluster.record_error(jobset, f'job "{name}" creation failed with error: {exc}')
                        failed = True
            if failed:
                return False
            if in_order:
                c.set_condition(status, c.STARTUP_IN_PROGRESS, True, *c.IN_ORDER_IN_PROGRESS, now)
                return True
        if in_order:
            c.set_condition(status, c.STARTUP_COMPLETED, True, *c.IN_ORDER_COMPLETED, now)
        return True

    @staticmethod
    def _dependencies_met(rj: dict, replicas_so_far: dict[str, int], counts: dict[str, dict]) -> bool:
        for dep in rj.get("dependsOn") or []:
            done = counts.get(dep["name"])
            if done is None:
                return False
            reached = done["succeeded"] if dep["status"] == "Complete" else done["ready"] + done["failed"] + done["succeeded"]
            if reached != replicas_so_far.get(dep["name"], 0):
                return False
        return True

    @staticmethod
    def _job(jobset: dict, rj: dict, index: int, global_index: int, total: int, restarts: int, profile) -> dict:
        md = jobset["metadata"]
        name = job_name(jobset, rj["name"], index)
        keys = {
            JOBSET_NAME: md["name"],
            PREFIX + "replicatedjob-replicas": str(rj.get("replicas", 1)),
            REPLICATED_JOB_NAME: rj["name"],
            PREFIX + "job-index": str(index),
            PREFIX + "job-global-index": str(global_index),
            PREFIX + "global-replicas": str(total),
            RESTART_ATTEMPT: str(restarts),
            PREFIX + "job-key": hashlib.sha1(f"{md.get('namespace', '')}/{name}".encode()).hexdigest(),
        }
        if profile.jobset_uid_keys:
            keys[PREFIX + "jobset-uid"] = md["uid"]
        if profile.jobset_group_labels:
            keys.update(group_keys(jobset, rj, index))
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
