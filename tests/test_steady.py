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
