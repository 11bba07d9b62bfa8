"""createJobPod: one pod of a Volcano Job task, before plugins run (job_controller_util.go, v1.12.0).

Name ``<job>-<task>-<index>``; the template's labels, annotations and spec; the Job as controller
owner; ``schedulerName`` / ``priorityClassName`` from the Job when the template has none. Annotations
``volcano.sh/task-index``, ``task-spec``, ``scheduling.k8s.io/group-name`` (``<job>-<job uid>``, the
PodGroup's name), ``job-name``, ``queue-name``, ``job-version`` (status.version), ``template-uid``
(``<job>-<task>``) and ``job-retry-count`` (status.retryCount); labels ``task-index``, ``job-name``,
``task-spec``, ``job-namespace``, ``queue-name`` (shared/reference/volcano-jobset-restart.md §1.4).
"""

from __future__ import annotations

import copy

from .. import meta
from . import keys

#: Job annotations / labels that upstream copies onto pods (scheduling/v1beta1 keys).
_COPIED_ANNOTATIONS = ("volcano.sh/preemptable", "volcano.sh/cooldown-time", "volcano.sh/revocable-zone")
_COPIED_LABELS = ("volcano.sh/preemptable", "volcano.sh/cooldown-time")
_JDB_KEYS = ("volcano.sh/jdb-min-available", "volcano.sh/jdb-max-unavailable")


def pod_name(job: dict, task_name: str, index: int) -> str:
    return f"{job['metadata']['name']}-{task_name}-{index}"


def create_job_pod(job: dict, task: dict, index: int, profile) -> dict:
    template = copy.deepcopy(task.get("template") or {})
    job_md, status = job["metadata"], job.get("status") or {}
    task_name = task["name"] or keys.DEFAULT_TASK_SPEC
    labels = dict((template.get("metadata") or {}).get("labels") or {})
    annotations = dict((template.get("metadata") or {}).get("annotations") or {})
    spec = template.get("spec") or {}
    if not spec.get("schedulerName") and job["spec"].get("schedulerName"):
        spec["schedulerName"] = job["spec"]["schedulerName"]
    if profile.volcano_pod_priority_from_job and not spec.get("priorityClassName") \
            and job["spec"].get("priorityClassName"):
        spec["priorityClassName"] = job["spec"]["priorityClassName"]
    queue = job["spec"].get("queue", "")
    annotations.update({
        keys.TASK_INDEX: str(index),
        keys.TASK_SPEC: task_name,
        keys.POD_GROUP: f"{job_md['name']}-{job_md['uid']}",
        keys.JOB_NAME: job_md["name"],
        keys.QUEUE_NAME: queue,
        keys.JOB_VERSION: str(status.get("version", 0)),
        keys.TEMPLATE_UID: f"{job_md['name']}-{task['name']}",
        keys.JOB_RETRY_COUNT: str(status.get("retryCount", 0)),
    })
    if task.get("topologyPolicy"):
        annotations[keys.NUMA_POLICY] = task["topologyPolicy"]
    job_annotations = job_md.get("annotations") or {}
    annotations.update({k: job_annotations[k] for k in _COPIED_ANNOTATIONS if k in job_annotations})
    jdb = next((k for k in _JDB_KEYS if k in job_annotations), None)
    if jdb:
        annotations[jdb] = job_annotations[jdb]
    labels.update({
        keys.TASK_INDEX: str(index),
        keys.JOB_NAME: job_md["name"],
        keys.TASK_SPEC: task_name,
        keys.JOB_NAMESPACE: job_md.get("namespace", ""),
        keys.QUEUE_NAME: queue,
    })
    job_labels = job_md.get("labels") or {}
    labels.update({k: job_labels[k] for k in _COPIED_LABELS if k in job_labels})
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": pod_name(job, task["name"], index), "namespace": job_md.get("namespace"),
                     "labels": labels, "annotations": annotations, "ownerReferences": [meta.controller_ref(job)]},
        "spec": spec,
    }
