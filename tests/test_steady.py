"""Steadiness rules of the live backend (no cluster needed)."""

from conformance.live.steady import reasons_not_steady


def _volcano(phase: str, **counters) -> dict:
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": "train", "namespace": "ns", "uid": "job-uid"},
            "spec": {"tasks": [{"name": "worker", "replicas": 2}]},
            "status": {"state": {"phase": phase}, **counters}}


def _pod(name: str, phase: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "ns", "ownerReferences": [{"uid": "job-uid"}]},
            "spec": {"schedulerName": "volcano", "nodeName": "node-0"}, "status": {"phase": phase}}


def test_volcano_job_whose_counters_lag_its_pods_is_not_steady():
    pods = [_pod("train-worker-0", "Running"), _pod("train-worker-1", "Running")]
    [reason] = reasons_not_steady([_volcano("Pending", pending=2)] + pods)
    assert reason.endswith("status.pending 2 but 0 Pending pod(s)")


def test_volcano_job_whose_counters_match_is_steady():
    pods = [_pod("train-worker-0", "Running"), _pod("train-worker-1", "Running")]
    assert reasons_not_steady([_volcano("Running", running=2)] + pods) == []


def test_volcano_counters_are_not_judged_once_the_job_is_restarting_or_finished():
    # A kill resets the counters on purpose (upstream counts only what it failed to delete).
    pods = [_pod("train-worker-0", "Failed"), _pod("train-worker-1", "Running")]
    for phase in ("Restarting", "Aborted", "Failed"):
        assert reasons_not_steady([_volcano(phase, terminating=1)] + pods) == []


def _jobset(ready: int, restarts: int = 0) -> dict:
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
            "metadata": {"name": "js", "namespace": "ns", "uid": "js-uid"},
            "status": {"restarts": restarts, "replicatedJobsStatus": [{"name": "workers", "ready": ready}]}}


def _job(name: str, ready: int, attempt: int = 0, **extra) -> dict:
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": "ns", "ownerReferences": [{"uid": "js-uid"}],
                         "labels": {"jobset.sigs.k8s.io/replicatedjob-name": "workers",
                                    "jobset.sigs.k8s.io/restart-attempt": str(attempt)}},
            "spec": {"parallelism": 2, "completions": 2},
            "status": {"ready": ready, "active": 2, **extra}}


def _jobset_reasons(objects):
    return [r for r in reasons_not_steady(objects) if r.startswith("JobSet")]


def test_jobset_whose_ready_count_lags_its_jobs_is_not_steady():
    jobs = [_job("js-workers-0", 2), _job("js-workers-1", 2)]
    [reason] = _jobset_reasons([_jobset(ready=0)] + jobs)
    assert reason.endswith("replicatedJobsStatus workers ready 0 but 2 ready Job(s)")
    assert _jobset_reasons([_jobset(ready=2)] + jobs) == []


def test_jobset_ready_counts_only_unfinished_jobs_of_the_current_attempt():
    jobs = [_job("js-workers-0", 2, attempt=0),                      # previous attempt
            _job("js-workers-1", 1, attempt=1),                      # 1 of 2 pods ready
            _job("js-workers-2", 0, attempt=1, succeeded=2,          # finished
                 conditions=[{"type": "Complete", "status": "True"}])]
    assert _jobset_reasons([_jobset(ready=0, restarts=1)] + jobs) == []


def test_young_trainjob_waits_for_its_runtime_to_be_marked_in_use():
    import datetime as dt

    from conformance.live.steady import runtimes_not_marked_in_use

    now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    trainjob = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
                "metadata": {"name": "tj", "namespace": "ns", "creationTimestamp": now},
                "spec": {"runtimeRef": {"name": "torch-distributed"}}}
    bare = {"metadata": {"name": "torch-distributed"}}
    marked = {"metadata": {"name": "torch-distributed", "finalizers": ["trainer.kubeflow.org/resource-in-use"]}}
    [reason] = runtimes_not_marked_in_use([trainjob], lambda tj: bare)
    assert reason.endswith("runtime torch-distributed not yet marked in use")
    assert runtimes_not_marked_in_use([trainjob], lambda tj: marked) == []
    assert runtimes_not_marked_in_use([trainjob], lambda tj: None) == []  # no such runtime: nothing to wait for
    old = {**trainjob, "metadata": {**trainjob["metadata"], "creationTimestamp": "2020-01-01T00:00:00Z"}}
    assert runtimes_not_marked_in_use([old], lambda tj: bare) == []  # past the grace: judged by the golden
