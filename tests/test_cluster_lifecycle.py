"""The in-memory cluster's deletion semantics, indexes and change-driven settling, plus faults."""

import pytest

import reconciler
from reconciler import faults
from reconciler.cluster import FOREGROUND_FINALIZER


def job_manifest(name: str = "j", parallelism: int = 2, restart_policy: str = "Never", **spec) -> dict:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {"parallelism": parallelism, "completions": parallelism, "completionMode": "Indexed",
                     "backoffLimit": 0, **spec,
                     "template": {"spec": {"restartPolicy": restart_policy,
                                           "containers": [{"name": "main", "image": "busybox"}]}}}}


@pytest.fixture
def cluster():
    return reconciler.render([job_manifest()], "jobset-v0.12").cluster


def pods(cluster, job="j"):
    return [p for p in cluster.list("", "Pod") if p["metadata"]["labels"].get("job-name") == job]


def test_list_by_owner_and_kind_use_indexes(cluster):
    job = cluster.get("batch", "Job", "default", "j")
    assert len(cluster.list("", "Pod", owner=job)) == 2
    assert cluster.list("", "Pod", namespace="other") == []
    assert [j["metadata"]["name"] for j in cluster.list("batch", "Job")] == ["j"]


def test_pod_deletion_waits_for_kubelet_and_tracking_finalizer(cluster):
    pod = pods(cluster)[0]
    cluster.delete(pod)
    stored = cluster.find(*reconciler.meta.key(pod))
    assert stored is not None and stored["metadata"]["deletionTimestamp"]
    cluster.settle()
    assert cluster.find(*reconciler.meta.key(pod)) is None  # kubelet stopped it, Job controller released it


def test_foreground_deletion_keeps_owner_until_dependents_are_gone(cluster):
    faults.inject(cluster, {"fault": "holdTermination", "job": "j", "pod": 0})
    job = cluster.get("batch", "Job", "default", "j")
    cluster.delete(job, propagation="Foreground")
    cluster.settle()
    job = cluster.get("batch", "Job", "default", "j")
    assert job["metadata"]["finalizers"] == [FOREGROUND_FINALIZER]
    [held] = pods(cluster)
    assert held["status"]["phase"] == "Failed" and held["metadata"]["finalizers"] == [faults.HOLD_FINALIZER]
    faults.inject(cluster, {"fault": "releaseTermination", "job": "j", "pod": 0})
    cluster.settle()
    assert cluster.find("batch", "Job", "default", "j") is None and pods(cluster) == []


def test_background_deletion_removes_owner_then_dependents(cluster):
    cluster.delete(cluster.get("batch", "Job", "default", "j"))
    assert cluster.find("batch", "Job", "default", "j") is None
    cluster.settle()
    assert pods(cluster) == []


def test_settle_reconciles_only_what_changed(cluster):
    class Counter:
        watches = (("batch", "Job"),)
        calls = 0

        def reconcile(self, cluster, obj):
            Counter.calls += 1

    cluster.controllers.append(Counter())
    cluster.settle()
    first = Counter.calls  # the opening pass visits every Job once
    faults.inject(cluster, {"fault": "podSucceed", "job": "j", "pod": 0})
    cluster.settle()
    assert first == 1 and Counter.calls > first  # a pod change requeued its owner Job


def test_fault_without_a_live_pod_is_an_error(cluster):
    with pytest.raises(faults.FaultError, match="selects no pod"):
        faults.inject(cluster, {"fault": "podExit", "job": "nope", "pod": 0, "exitCode": 1})
    with pytest.raises(faults.FaultError, match="selects no pod"):
        faults.inject(cluster, {"fault": "podExit", "job": "j", "pod": 7, "exitCode": 1})


def test_exit_under_on_failure_restarts_in_place():
    cluster = reconciler.render([job_manifest(restart_policy="OnFailure", backoffLimit=3)], "jobset-v0.12").cluster
    faults.inject(cluster, {"fault": "podExit", "job": "j", "pod": 1, "exitCode": 7})
    cluster.settle()
    [restarted] = [p for p in pods(cluster) if p["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"] == "1"]
    status = restarted["status"]
    assert status["phase"] == "Running"
    assert status["containerStatuses"][0]["restartCount"] == 1
    terminated = status["containerStatuses"][0]["lastState"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (7, "Error")
    assert "running" in status["containerStatuses"][0]["state"]


def test_eviction_and_node_loss_set_disruption_target(cluster):
    faults.inject(cluster, {"fault": "podEvicted", "job": "j", "pod": 0})
    evicted = [p for p in pods(cluster) if p["metadata"].get("deletionTimestamp")][0]
    assert {"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI",
            "message": "Eviction API: evicting"}.items() <= evicted["status"]["conditions"][-1].items()
    faults.inject(cluster, {"fault": "nodeLost", "job": "j", "pod": 1})
    lost = [p for p in pods(cluster) if p["status"]["conditions"][-1].get("reason") == "DeletionByPodGC"][0]
    assert lost["status"]["phase"] == "Failed"
    assert lost["status"]["conditions"][-1]["message"] == "PodGC: node no longer exists"


def test_job_with_pod_failure_policy_needs_never():
    result = reconciler.render([job_manifest(restart_policy="OnFailure",
                                             podFailurePolicy={"rules": [{"action": "Ignore", "onExitCodes": {
                                                 "operator": "In", "values": [1]}}]})], "jobset-v0.12")
    [rejected] = result.rejections
    assert rejected.error.code == 422
    assert rejected.error.message == ('Job.batch "j" is invalid: spec.template.spec.restartPolicy: Invalid value: '
                                      '"OnFailure": only "Never" is supported when podFailurePolicy is specified')
