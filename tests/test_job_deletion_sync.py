"""A Job being deleted keeps syncing its status (kube v1.35 pkg/controller/job: syncJob runs for a Job
with a deletionTimestamp, only manageJob - pod creation - is skipped), and lets go of its pods."""

from reconciler import new_cluster
from reconciler.batch import TRACKING_FINALIZER
from reconciler.faults import HOLD_FINALIZER

JOB = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "default"},
       "spec": {"parallelism": 2, "completions": 2, "completionMode": "Indexed", "backoffLimit": 0,
                "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]}}}}


def running_job():
    cluster = new_cluster("jobset-v0.12")
    job = cluster.create(JOB)
    cluster.settle()
    pods = cluster.list("", "Pod", "default", owner=job)
    assert job["status"]["ready"] == 2 and job["status"]["active"] == 2 and len(pods) == 2
    return cluster, job, pods


def test_foreground_deleted_job_with_a_held_pod_reports_it_stopped():
    cluster, job, pods = running_job()
    pods[0]["metadata"]["finalizers"].append(HOLD_FINALIZER)
    cluster.update(pods[0])
    cluster.delete(job, propagation="Foreground")
    cluster.settle()
    held = cluster.get("", "Pod", "default", pods[0]["metadata"]["name"])
    job = cluster.get("batch", "Job", "default", "j")
    # The held pod is stopped (the kubelet ends a deleted pod) and only the hold keeps it.
    assert held["status"]["phase"] == "Failed" and held["metadata"]["finalizers"] == [HOLD_FINALIZER]
    # Its Job no longer counts it active or ready, and no replacement was created.
    assert job["status"]["ready"] == 0 and job["status"]["terminating"] == 0 and "active" not in job["status"]
    assert len(cluster.list("", "Pod", "default", owner=job)) == 1
    # Released before the garbage collector deleted them, the pods are not counted as failed.
    assert "failed" not in job["status"]


def test_pod_deleted_before_its_job_is_still_counted():
    cluster, job, pods = running_job()
    pods[1]["metadata"]["finalizers"].append(HOLD_FINALIZER)
    cluster.update(pods[1])
    pods[0]["metadata"]["finalizers"].append(HOLD_FINALIZER)
    cluster.update(pods[0])
    cluster.delete(pods[0])  # a plain delete counts as a failure (podReplacementPolicy TerminatingOrFailed)
    cluster.tick()
    cluster.delete(job, propagation="Foreground")
    cluster.settle()
    job = cluster.get("batch", "Job", "default", "j")
    assert job["status"].get("failed") == 1
    for pod in pods:
        assert TRACKING_FINALIZER not in cluster.get("", "Pod", "default", pod["metadata"]["name"])["metadata"]["finalizers"]
