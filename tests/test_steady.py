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
    for phase in ("Aborting", "Aborted", "Failed"):
        assert reasons_not_steady([_volcano(phase, terminating=1)] + pods) == []


def test_volcano_job_restarting_with_nothing_terminating_is_not_steady():
    pods = [_pod("train-worker-0", "Failed")]
    [reason] = reasons_not_steady([_volcano("Restarting", terminating=1)] + pods)
    assert reason.endswith("Restarting, no pod terminating any more")
    pods[0]["metadata"]["deletionTimestamp"] = "t"
    assert not any("Restarting" in r for r in reasons_not_steady([_volcano("Restarting", terminating=1)] + pods))


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


# ---------------------------------------------------------------------- StatefulSets and LeaderWorkerSets

def _sts(name="web", replicas=2, policy="Parallel", start=None, **status) -> dict:
    spec = {"replicas": replicas, "podManagementPolicy": policy}
    if start is not None:
        spec["ordinals"] = {"start": start}
    return {"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": name, "namespace": "ns", "uid": f"{name}-uid", "generation": 1,
                         "labels": status.pop("labels", {})},
            "spec": spec, "status": {"observedGeneration": 1, "replicas": replicas, "readyReplicas": replicas,
                                     "updateRevision": f"{name}-r1", **status}}


def _sts_pod(name: str, owner: str | None = "web", phase="Running", ready=True, revision=None, **md) -> dict:
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": "ns", "labels": {"controller-revision-hash": revision or f"{owner}-r1"},
                        **md},
           "spec": {"nodeName": "n"},
           "status": {"phase": phase, "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}
    if owner:
        pod["metadata"]["ownerReferences"] = [{"uid": f"{owner}-uid", "controller": True, "blockOwnerDeletion": True}]
    return pod


def _sts_reasons(objects):
    return [r for r in reasons_not_steady(objects) if r.startswith("StatefulSet")]


def test_statefulset_is_steady_with_a_pod_per_ordinal_counted_in_its_status():
    assert _sts_reasons([_sts(), _sts_pod("web-0"), _sts_pod("web-1")]) == []
    assert _sts_reasons([_sts(start=1), _sts_pod("web-1"), _sts_pod("web-2")]) == []


def test_statefulset_not_yet_seen_or_miscounting_or_missing_a_pod_is_not_steady():
    [unseen] = _sts_reasons([_sts(observedGeneration=0), _sts_pod("web-0"), _sts_pod("web-1")])
    assert "observedGeneration 0 < generation 1" in unseen
    [counted] = _sts_reasons([_sts(replicas=2, readyReplicas=1), _sts_pod("web-0"), _sts_pod("web-1")])
    assert counted.endswith("status.readyReplicas 1 but 2 ready pod(s)")
    short = _sts(replicas=2, readyReplicas=1)
    short["status"]["replicas"] = 1
    [missing] = _sts_reasons([short, _sts_pod("web-0")])
    assert missing.endswith("Pod web-1 not created yet")
    [finished] = _sts_reasons([_sts(readyReplicas=1), _sts_pod("web-0"), _sts_pod("web-1", phase="Failed", ready=False)])
    assert finished.endswith("Pod web-1 finished and is not deleted yet")


def test_a_pod_left_by_an_earlier_set_holds_back_its_slow_start_batch_only():
    # Parallel: batches [0], [1, 2], [3..6]; web-1 (another set's, held) fails the second batch, so web-3
    # is never tried (kube-controller-manager's slowStartBatch) - web-2 is.
    held = _sts_pod("web-1", owner="old", phase="Failed", ready=False, deletionTimestamp="t",
                    finalizers=["training-conformance.dev/hold"])
    sts = _sts(replicas=4, readyReplicas=2)
    sts["status"]["replicas"] = 2
    assert _sts_reasons([sts, _sts_pod("web-0"), held, _sts_pod("web-2")]) == []
    sts["status"].update(replicas=1, readyReplicas=1)
    [reason] = _sts_reasons([sts, _sts_pod("web-0"), held])
    assert reason.endswith("Pod web-2 not created yet")


def test_ordered_ready_waits_at_the_first_pod_not_running_and_ready():
    sts = _sts(replicas=3, policy="OrderedReady", readyReplicas=1)
    sts["status"]["replicas"] = 2
    # web-1 not Ready yet: the controller makes web-2 only after it (the pending pod has its own rule).
    assert _sts_reasons([sts, _sts_pod("web-0"), _sts_pod("web-1", ready=False)]) == []
    sts["status"].update(readyReplicas=1, replicas=1)
    [reason] = _sts_reasons([sts, _sts_pod("web-0")])
    assert reason.endswith("Pod web-1 not created yet")


def test_rolling_update_not_done_while_all_pods_are_ready():
    sts = _sts(updateRevision="web-r2")
    [reason] = _sts_reasons([sts, _sts_pod("web-0", revision="web-r2"), _sts_pod("web-1", revision="web-r1")])
    assert reason.endswith("Pod web-1 at revision web-r1, not yet rolled to web-r2")
    sts["spec"]["updateStrategy"] = {"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}
    assert _sts_reasons([sts, _sts_pod("web-0", revision="web-r1"), _sts_pod("web-1", revision="web-r1")]) == []


def test_foreground_deletion_is_steady_only_while_a_blocking_dependent_is_left():
    owner = _sts_pod("lead-0", owner=None, phase="Failed", ready=False, uid="lead-uid", deletionTimestamp="t",
                     finalizers=["foregroundDeletion"])
    worker = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {
        "name": "w", "namespace": "ns", "uid": "w-uid", "deletionTimestamp": "t", "finalizers": ["foregroundDeletion"],
        "ownerReferences": [{"uid": "lead-uid", "blockOwnerDeletion": True}]}, "spec": {}, "status": {}}
    held = _sts_pod("w-1", owner="w", phase="Failed", ready=False, deletionTimestamp="t",
                    finalizers=["training-conformance.dev/hold"])
    assert reasons_not_steady([owner, worker, held]) == []
    # The held pod released and gone: the garbage collector has the set's and then the leader's finalizer to drop.
    assert any("ns/w is being deleted" in r for r in reasons_not_steady([owner, worker]))
    assert reasons_not_steady([owner]) == ["Pod ns/lead-0 is being deleted"]
    # A held pod that still waits for its own dependents' foreground deletion is not done either.
    held_owner = dict(owner, metadata={**owner["metadata"], "finalizers": ["training-conformance.dev/hold", "foregroundDeletion"]})
    assert reasons_not_steady([held_owner]) == ["Pod ns/lead-0 is being deleted"]


LWS_KEY = "leaderworkerset.sigs.k8s.io/"


def _lws(**status) -> dict:
    return {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
            "metadata": {"name": "lws", "namespace": "ns", "uid": "lws-uid", "creationTimestamp": "2020-01-01T00:00:00Z"},
            "spec": {"replicas": 1, "leaderWorkerTemplate": {"size": 2, "restartPolicy": "RecreateGroupOnPodRestart",
                                                             "workerTemplate": {"spec": {"containers": [{"name": "c"}]}}},
                     "rolloutStrategy": {"rollingUpdateConfiguration": {"partition": 0}}},
            "status": {"replicas": 1, "readyReplicas": 1, "updatedReplicas": 1,
                       "conditions": [{"type": "Available", "status": "True"}], **status}}


def _group(restarts: int = 0, leader_deleting: bool = False, worker_set: bool = True) -> list[dict]:
    labels = {LWS_KEY + "name": "lws", LWS_KEY + "template-revision-hash": "k1"}
    leader_sts = _sts("lws", replicas=1, labels=labels)
    workers = _sts("lws-0", replicas=1, start=1, labels={**labels, LWS_KEY + "group-index": "0"})
    workers["status"]["currentRevision"] = workers["status"]["updateRevision"]
    leader = _sts_pod("lws-0", owner="lws", uid="leader-uid",
                      labels={**labels, LWS_KEY + "worker-index": "0", LWS_KEY + "group-index": "0",
                              "controller-revision-hash": "lws-r1"})
    worker = _sts_pod("lws-0-1", owner="lws-0", labels={**labels, LWS_KEY + "worker-index": "1",
                                                        "controller-revision-hash": "lws-0-r1"})
    worker["status"]["containerStatuses"] = [{"name": "c", "restartCount": restarts}]
    if leader_deleting:
        leader["metadata"]["deletionTimestamp"] = "t"
    revision = {"apiVersion": "apps/v1", "kind": "ControllerRevision",
                "metadata": {"name": "lws-k1-1", "namespace": "ns", "labels": labels, "ownerReferences": [{"uid": "lws-uid"}]},
                "data": {"spec": {"leaderWorkerTemplate": {**_lws()["spec"]["leaderWorkerTemplate"], "$patch": "replace"},
                                  "networkConfig": {"subdomainPolicy": "Shared", "$patch": "replace"}}}}
    return [leader_sts, leader, revision] + ([workers, worker] if worker_set else [])


def _lws_reasons(objects):
    return [r for r in reasons_not_steady(objects) if r.startswith("LeaderWorkerSet")]


def test_leaderworkerset_counting_its_ready_groups_is_steady():
    assert _lws_reasons([_lws()] + _group()) == []


def test_leaderworkerset_whose_status_or_children_lag_is_not_steady():
    [ready] = _lws_reasons([_lws(readyReplicas=0)] + _group())
    assert ready.endswith("status.readyReplicas 0 but 1 ready group(s)")
    [updated] = _lws_reasons([_lws(updatedReplicas=0)] + _group())
    assert updated.endswith("status.updatedReplicas 0 but 1 updated group(s)")
    [available] = _lws_reasons([_lws(conditions=[{"type": "Progressing", "status": "True"}])] + _group())
    assert available.endswith("condition Available False but 1 of 1 group(s) ready")
    [workers] = _lws_reasons([_lws(readyReplicas=0)] + _group(worker_set=False))
    assert workers.endswith("no worker StatefulSet for leader pod lws-0 yet")
    young = _lws()
    young["metadata"]["creationTimestamp"] = __import__("datetime").datetime.now(
        __import__("datetime").timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert _lws_reasons([young]) == ["LeaderWorkerSet ns/lws: no leader StatefulSet yet"]


def test_leaderworkerset_with_a_template_its_revision_does_not_hold_is_not_steady():
    changed = _lws()
    changed["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]["image"] = "new"
    [reason] = _lws_reasons([changed] + _group())
    assert reason.endswith("its template changed and its leader StatefulSet still has revision k1")


def test_a_restarted_worker_whose_leader_is_not_deleted_yet_is_not_steady():
    [reason] = _lws_reasons([_lws()] + _group(restarts=1))
    assert reason.endswith("Pod lws-0-1 restarted, its leader lws-0 not deleted yet")
    assert not any("restarted" in r for r in _lws_reasons([_lws()] + _group(restarts=1, leader_deleting=True)))
    none = _lws()
    none["spec"]["leaderWorkerTemplate"]["restartPolicy"] = "None"
    none_group = _group(restarts=1)
    none_group[2]["data"]["spec"]["leaderWorkerTemplate"]["restartPolicy"] = "None"
    assert _lws_reasons([none] + none_group) == []


def test_a_rolling_update_with_a_step_left_is_not_steady():
    objects = [_lws()] + _group()
    objects[1]["spec"]["updateStrategy"] = {"type": "RollingUpdate", "rollingUpdate": {"partition": 1}}
    [reason] = _lws_reasons(objects)
    assert "rolling update not finished: leader StatefulSet partition 1 (floor 0)" in reason
