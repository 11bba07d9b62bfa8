"""The Job stand-in's status as kube v1.35 writes it. The Suspended condition
(pkg/controller/job/job_controller.go syncJob after manageJob, ensureJobConditionStatus): True "JobSuspended"/"Job suspended" while spec.suspend is true; on
resume the condition is replaced by False "JobResumed"/"Job resumed"; a Job never suspended gets none. And
completedIndexes (indexed_job_utils.go orderedIntervals.String)."""

import copy

from reconciler import new_cluster

JOB = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "default"},
       "spec": {"parallelism": 1, "completions": 1, "backoffLimit": 0,
                "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]}}}}


def conditions(cluster):
    job = cluster.get("batch", "Job", "default", "j")
    return [(c["type"], c["status"], c["reason"], c["message"]) for c in (job.get("status") or {}).get("conditions", [])]


def test_suspended_then_resumed():
    cluster = new_cluster("jobset-v0.12")
    cluster.create({**JOB, "spec": {**JOB["spec"], "suspend": True}})
    cluster.settle()
    assert conditions(cluster) == [("Suspended", "True", "JobSuspended", "Job suspended")]
    assert cluster.list("", "Pod", "default") == []
    job = copy.deepcopy(cluster.get("batch", "Job", "default", "j"))
    job["spec"]["suspend"] = False
    cluster.update(job)
    cluster.settle()
    assert conditions(cluster) == [("Suspended", "False", "JobResumed", "Job resumed")]
    assert len(cluster.list("", "Pod", "default")) == 1


def test_never_suspended_job_has_no_suspended_condition():
    cluster = new_cluster("jobset-v0.12")
    cluster.create(JOB)
    cluster.settle()
    assert conditions(cluster) == []


def test_completed_indexes_format_as_kubernetes_writes_them():
    # orderedIntervals.String (kube v1.35 indexed_job_utils.go): runs of 3+ as first-last, of 2 as first,last.
    from reconciler.batch import _format_indexes
    assert _format_indexes({0, 1, 2, 4, 5}) == "0-2,4,5"
    assert _format_indexes({3}) == "3"
    assert _format_indexes({0, 1}) == "0,1"
    assert _format_indexes({7, 1, 2, 3, 4}) == "1-4,7"
