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


def test_jobset_with_a_job_whose_restart_attempt_is_no_integer_is_steady_as_it_stands():
    # getChildJobs returns strconv.Atoi's error before the reconcile acts: the status is not written.
    jobs = [_job("js-workers-0", 2), _job("js-workers-1", 2)]
    for label, steady in (("x", True), ("", True), ("1.0", True), ("9223372036854775808", True),
                          ("+0", False), ("-1", False), ("007", False)):
        jobs[1]["metadata"]["labels"]["jobset.sigs.k8s.io/restart-attempt"] = label
        assert (_jobset_reasons([_jobset(ready=0)] + jobs) == []) is steady, label


def test_jobset_ready_counts_only_unfinished_jobs_of_the_current_attempt():
    jobs = [_job("js-workers-0", 2, attempt=0),                      # previous attempt
            _job("js-workers-1", 1, attempt=1),                      # 1 of 2 pods ready
            _job("js-workers-2", 0, attempt=1, succeeded=2,          # finished
                 conditions=[{"type": "Complete", "status": "True"}])]
    assert _jobset_reasons([_jobset(ready=0, restarts=1)] + jobs) == []


def _batch_job(spec: dict, **status) -> dict:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "ns", "uid": "job-uid"},
            "spec": spec, "status": status}


def _job_pod(name: str, phase: str) -> dict:
    return {**_pod(name, phase), "spec": {"schedulerName": "default-scheduler", "nodeName": "node-0"},
            "status": {"phase": phase, "conditions": [{"type": "Ready", "status": str(phase == "Running")}]}}


def _job_reasons(objects):
    return [r for r in reasons_not_steady(objects) if r.startswith("Job ns/j")]


def test_work_queue_job_wants_no_new_pod_after_a_success():
    spec = {"parallelism": 2}  # no completions
    one_left = [_job_pod("j-a", "Succeeded"), _job_pod("j-b", "Running")]
    assert _job_reasons([_batch_job(spec, active=1, ready=1, succeeded=1)] + one_left) == []
    [reason] = _job_reasons([_batch_job(spec, active=1, ready=1)] + [_job_pod("j-b", "Running")])
    assert reason.endswith("1 of 2 pod(s) created")


def test_job_whose_pods_the_apiserver_refuses_is_not_waited_for():
    job = _batch_job({"parallelism": 2, "completions": 2}, ready=0)
    refused = {"apiVersion": "v1", "kind": "Event", "type": "Warning", "reason": "FailedCreate",
               "involvedObject": {"kind": "Job", "uid": "job-uid"},
               "message": 'Error creating: pods "j-0-" is forbidden: no PriorityClass with name x was found'}
    assert _job_reasons([job]) == ["Job ns/j: 0 of 2 pod(s) created"]
    assert _job_reasons([job, refused]) == []


def test_job_managed_by_another_controller_is_not_waited_for():
    """kube-controller-manager skips a Job whose spec.managedBy names another controller
    (managedByExternalController): no pod and no status are coming."""
    spec = {"parallelism": 1, "completions": 1, "managedBy": "example.com/custom-controller"}
    assert _job_reasons([_batch_job(spec)]) == []
    ours = dict(spec, managedBy="kubernetes.io/job-controller")
    assert _job_reasons([_batch_job(ours)]) == ["Job ns/j: 0 of 1 pod(s) created"]


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


def test_deleted_cluster_runtime_waits_for_its_in_use_finalizer_to_come_off():
    from conformance.live.steady import cluster_runtimes_not_released

    fin = "trainer.kubeflow.org/resource-in-use"
    deleting = {"metadata": {"name": "torch-distributed", "deletionTimestamp": "2026-01-01T00:00:00Z",
                             "finalizers": ["example.com/keep", fin]}}
    trainjob = {"kind": "TrainJob", "metadata": {"name": "tj", "namespace": "ns"},
                "spec": {"runtimeRef": {"name": "torch-distributed", "kind": "ClusterTrainingRuntime"}}}
    [reason] = cluster_runtimes_not_released([deleting], [])
    assert reason.startswith("ClusterTrainingRuntime torch-distributed: being deleted")
    assert cluster_runtimes_not_released([deleting], [trainjob]) == []  # still in use: rightly kept
    namespaced_ref = {**trainjob, "spec": {"runtimeRef": {"name": "torch-distributed", "kind": "TrainingRuntime"}}}
    assert len(cluster_runtimes_not_released([deleting], [namespaced_ref])) == 1  # refers to another kind
    released = {"metadata": {**deleting["metadata"], "finalizers": ["example.com/keep"]}}
    assert cluster_runtimes_not_released([released], []) == []  # the in-use finalizer is off: another's to drop
    kept = {"metadata": {"name": "torch-distributed", "finalizers": [fin]}}
    assert cluster_runtimes_not_released([kept], []) == []  # not being deleted: nothing to release


# ---------------------------------------------------------------- PyTorchJob (training-operator v1)

def _stamp(seconds_ago: float = 0) -> str:
    import datetime as dt

    moment = dt.datetime.now(dt.timezone.utc) - dt.timedelta(seconds=seconds_ago)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _pytorchjob(status=None, age: float = 0, workers=2, run_policy=None) -> dict:
    template = {"spec": {"containers": [{"name": "pytorch", "image": "pytorch:1"}]}}
    job = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
           "metadata": {"name": "pt", "namespace": "ns", "uid": "pt-uid", "creationTimestamp": _stamp(age)},
           "spec": {"pytorchReplicaSpecs": {"Master": {"replicas": 1, "template": template},
                                            "Worker": {"replicas": workers, "template": template}}}}
    if run_policy:
        job["spec"]["runPolicy"] = run_policy
    if status is not None:
        job["status"] = status
    return job


def _child(kind: str, name: str, phase: str = "Running", owner: str = "pt-uid", **labels) -> dict:
    obj = {"apiVersion": "v1", "kind": kind,
           "metadata": {"name": name, "namespace": "ns", "labels": labels,
                        "ownerReferences": [{"uid": owner, "controller": True}]}}
    if kind == "Pod":
        obj["spec"] = {"nodeName": "node-0"}
        obj["status"] = {"phase": phase}
    return obj


def _pytorch_children(master="Running", workers=("Running", "Running")) -> list[dict]:
    label = "training.kubeflow.org/replica-type"
    out = [_child("Pod", "pt-master-0", master, **{label: "master"}), _child("Service", "pt-master-0")]
    for i, phase in enumerate(workers):
        out += [_child("Pod", f"pt-worker-{i}", phase, **{label: "worker"}), _child("Service", f"pt-worker-{i}")]
    return out


def _created(*extra, master_active=1, worker_active=2) -> dict:
    return {"conditions": [{"type": "Created", "status": "True"}, *extra],
            "replicaStatuses": {"Master": {"active": master_active}, "Worker": {"active": worker_active}}}


def _reasons(objects, kind):
    return [r.split(": ", 1)[1] for r in reasons_not_steady(objects) if r.startswith(kind)]


def test_pytorchjob_waits_for_its_controller_to_see_it_until_the_grace_ends():
    assert _reasons([_pytorchjob()], "PyTorchJob") == ["no Created condition yet"]
    assert _reasons([_pytorchjob(age=60)], "PyTorchJob") == []  # an operator that never acts on it


def test_pytorchjob_needs_a_pod_and_a_service_per_index_and_counts_that_agree():
    children = _pytorch_children()
    assert _reasons([_pytorchjob(_created())] + children, "PyTorchJob") == []
    without_w1 = [c for c in children if c["metadata"]["name"] != "pt-worker-1"]
    assert _reasons([_pytorchjob(_created())] + without_w1, "PyTorchJob") == [
        "Pod pt-worker-1 not created yet", "Service pt-worker-1 not created yet",
        "replicaStatuses.Worker.active 2 but 1 pod(s)"]
    # Worker replicas unset default to 1: only pt-worker-0 is wanted.
    job = _pytorchjob(_created(worker_active=1))
    del job["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"]
    assert _reasons([job] + _pytorch_children(workers=("Running",)), "PyTorchJob") == []


def test_pytorchjob_counts_pods_as_its_last_reconcile_did():
    """UpdateJobReplicaStatuses: Running → active, a Running pod being deleted → failed, Succeeded,
    Failed; Pending not at all. A count that disagrees means a change not seen yet."""
    children = _pytorch_children(workers=("Running", "Pending"))
    assert _reasons([_pytorchjob(_created(worker_active=2))] + children, "PyTorchJob") == [
        "replicaStatuses.Worker.active 2 but 1 pod(s)"]
    assert _reasons([_pytorchjob(_created(worker_active=1))] + children, "PyTorchJob") == []
    children = _pytorch_children(workers=("Failed", "Running"))
    assert _reasons([_pytorchjob(_created(worker_active=1))] + children, "PyTorchJob") == [
        "replicaStatuses.Worker.failed 0 but 1 pod(s)"]  # a pod that just failed: not reconciled yet
    status = _created(worker_active=1)
    status["replicaStatuses"]["Worker"]["failed"] = 1
    assert _reasons([_pytorchjob(status)] + children, "PyTorchJob") == []
    children[2]["metadata"]["deletionTimestamp"] = _stamp()  # pt-worker-0 being deleted, still Running
    children[2]["status"]["phase"] = "Running"
    assert _reasons([_pytorchjob(status)] + children, "PyTorchJob") == []  # deleting Running counts as failed


def test_pytorchjob_past_its_backoff_limit_waits_to_fail_for_the_grace():
    """PastBackoffLimit: the restartCounts of Running pods reach backoffLimit; an in-place restart
    changes no count, so the restart's time (lastState.terminated.finishedAt) starts the grace."""
    children = _pytorch_children()
    worker = children[2]
    worker["status"]["containerStatuses"] = [{"name": "pytorch", "restartCount": 1,
                                              "lastState": {"terminated": {"exitCode": 1, "finishedAt": _stamp()}}}]
    job = _pytorchjob(_created(), run_policy={"backoffLimit": 1})
    assert _reasons([job] + children, "PyTorchJob") == ["backoffLimit 1 reached, not Failed yet"]
    assert _reasons([_pytorchjob(_created(), run_policy={"backoffLimit": 2})] + children, "PyTorchJob") == []
    worker["status"]["containerStatuses"][0]["lastState"]["terminated"]["finishedAt"] = _stamp(60)
    assert _reasons([job] + children, "PyTorchJob") == []  # never failed by its operator: the case judges


def test_pytorchjob_past_its_active_deadline_waits_to_fail_for_the_grace():
    status = {**_created(), "startTime": _stamp(1)}
    job = _pytorchjob(status, run_policy={"activeDeadlineSeconds": 0})
    assert _reasons([job] + _pytorch_children(), "PyTorchJob") == ["activeDeadlineSeconds 0 passed, not Failed yet"]
    job = _pytorchjob(status, run_policy={"activeDeadlineSeconds": 86400})
    assert _reasons([job] + _pytorch_children(), "PyTorchJob") == []


def test_suspended_pytorchjob_waits_for_the_suspended_condition_only():
    suspend = {"suspend": True}
    assert _reasons([_pytorchjob(_created(), run_policy=suspend)], "PyTorchJob") == ["not Suspended yet"]
    status = _created({"type": "Suspended", "status": "True"}, master_active=0, worker_active=0)
    assert _reasons([_pytorchjob(status, run_policy=suspend)], "PyTorchJob") == []


def test_finished_pytorchjob_waits_for_its_clean_pod_policy():
    done = _created({"type": "Succeeded", "status": "True"}, master_active=0, worker_active=0)
    children = _pytorch_children(master="Succeeded", workers=("Running", "Succeeded"))
    assert _reasons([_pytorchjob(done)] + children, "PyTorchJob") == []  # default None keeps every pod
    assert _reasons([_pytorchjob(done, run_policy={"cleanPodPolicy": "Running"})] + children, "PyTorchJob") == [
        "cleanPodPolicy Running: pod pt-worker-0 not deleted yet"]
    assert len(_reasons([_pytorchjob(done, run_policy={"cleanPodPolicy": "All"})] + children, "PyTorchJob")) == 3
    # Succeeded a moment ago: the reconcile that moves active to succeeded is still to come.
    fresh = _created({"type": "Succeeded", "status": "True"}, master_active=0, worker_active=1)
    assert _reasons([_pytorchjob(fresh)] + children, "PyTorchJob") == [
        "replicaStatuses.Worker.active not moved to succeeded yet"]


def test_pytorchjob_managed_elsewhere_is_never_waited_for():
    job = _pytorchjob(run_policy={"managedBy": "kueue.x-k8s.io/multikueue"})
    assert _reasons([job], "PyTorchJob") == []


# ---------------------------------------------------------------- MPIJob (mpi-operator v0.6.0)

def _mpijob(status=None, age: float = 0, workers=2, policy=None, run_policy=None) -> dict:
    template = {"spec": {"containers": [{"name": "mpi", "image": "mpi:1"}]}}
    job = {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
           "metadata": {"name": "pi", "namespace": "ns", "uid": "mpi-uid", "creationTimestamp": _stamp(age)},
           "spec": {"mpiReplicaSpecs": {"Launcher": {"replicas": 1, "template": template},
                                        "Worker": {"replicas": workers, "template": template}}}}
    if policy:
        job["spec"]["launcherCreationPolicy"] = policy
    if run_policy:
        job["spec"]["runPolicy"] = run_policy
    if status is not None:
        job["status"] = status
    return job


def _mpi_children(workers=("Running", "Running"), launcher=True, ready=True, hosts=None) -> list[dict]:
    """``hosts``: the workers discover_hosts.sh lists (default: the Running ones)."""
    if hosts is None:
        hosts = [i for i, phase in enumerate(workers) if phase == "Running"]
    script = "#!/bin/sh\n" + "".join(f"echo pi-worker-{i}.pi.ns.svc\n" for i in hosts)
    config = _child("ConfigMap", "pi-config", owner="mpi-uid")
    config["data"] = {"discover_hosts.sh": script}
    service, secret = _child("Service", "pi", owner="mpi-uid"), _child("Secret", "pi-ssh", owner="mpi-uid")
    service["spec"] = {"selector": {"training.kubeflow.org/operator-name": "mpi-operator", "training.kubeflow.org/job-name": "pi"}}
    secret["data"] = {"ssh-privatekey": "a2V5", "ssh-publickey": "cHVi"}
    out = [service, config, secret]
    for i, phase in enumerate(workers):
        pod = _child("Pod", f"pi-worker-{i}", phase, owner="mpi-uid",
                     **{"training.kubeflow.org/operator-name": "mpi-operator", "training.kubeflow.org/job-name": "pi",
                        "training.kubeflow.org/job-role": "worker"})
        pod["status"]["conditions"] = [{"type": "Ready", "status": "True" if ready else "False"}]
        out.append(pod)
    if launcher:
        out.append({"apiVersion": "batch/v1", "kind": "Job",
                    "metadata": {"name": "pi-launcher", "namespace": "ns", "uid": "launcher-uid",
                                 "ownerReferences": [{"uid": "mpi-uid", "controller": True}]},
                    "spec": {"parallelism": 1, "completions": 1}, "status": {"active": 1}})
        out.append(_child("Pod", "pi-launcher-x1", "Running", owner="launcher-uid"))
    return out


def _mpi_status(worker_active=2, launcher_active=1, *extra) -> dict:
    return {"conditions": [{"type": "Created", "status": "True"}, *extra],
            "replicaStatuses": {"Launcher": {"active": launcher_active}, "Worker": {"active": worker_active}}}


def test_a_valid_mpijob_waits_for_service_configmap_and_secret_however_long_it_takes():
    missing = ["Service pi not created yet", "ConfigMap pi-config not created yet", "Secret pi-ssh not created yet"]
    assert _reasons([_mpijob()], "MPIJob") == missing
    assert _reasons([_mpijob(age=60)], "MPIJob") == missing  # a throttled operator (5 QPS) is still coming


def _warning(uid: str = "mpi-uid") -> dict:
    return {"apiVersion": "v1", "kind": "Event", "type": "Warning", "reason": "ValidationError",
            "metadata": {"name": "pi.1", "namespace": "ns"}, "involvedObject": {"uid": uid}}


def test_an_invalid_mpijob_is_steady_once_a_warning_event_says_so():
    invalid = _mpijob(age=60, run_policy={"backoffLimit": -1})  # ValidateMPIJob: a Warning Event, nothing else
    assert _reasons([invalid], "MPIJob") == ["invalid: no Warning Event yet"]  # a throttled recorder is still coming
    assert _reasons([invalid, _warning()], "MPIJob") == []
    assert _reasons([invalid, _warning("other-uid")], "MPIJob") == ["invalid: no Warning Event yet"]
    assert _reasons([_mpijob(run_policy={"managedBy": "kueue.x-k8s.io/multikueue"})], "MPIJob") == []


def test_a_child_name_taken_by_a_foreign_object_stops_the_sync_with_a_warning_event():
    foreign = _child("ConfigMap", "pi-config", owner="someone-else")
    objects = [_mpijob(), _child("Service", "pi", owner="mpi-uid"), foreign]
    assert _reasons(objects, "MPIJob") == ["ConfigMap pi-config is not its own: no Warning Event yet"]
    assert _reasons(objects + [_warning()], "MPIJob") == []  # ErrResourceExists: no Secret, no workers follow


def test_a_launcher_job_or_worker_pod_it_does_not_control_stops_the_sync_with_a_warning_event():
    # getLauncherJob is the sync's first lookup: nothing else is made after it.
    foreign_launcher = {"apiVersion": "batch/v1", "kind": "Job",
                        "metadata": {"name": "pi-launcher", "namespace": "ns", "uid": "other-job"}}
    assert _reasons([_mpijob(), foreign_launcher], "MPIJob") == ["Job pi-launcher is not its own: no Warning Event yet"]
    assert _reasons([_mpijob(), foreign_launcher, _warning()], "MPIJob") == []
    # getOrCreateWorker / deleteWorkerPods: a worker name taken by another object's pod, no status written.
    children = _mpi_children(launcher=False)
    children[3]["metadata"]["ownerReferences"] = [{"uid": "a-statefulset", "controller": True}]
    assert _reasons([_mpijob()] + children, "MPIJob") == ["a worker pod is not its own: no Warning Event yet"]
    assert _reasons([_mpijob()] + children + [_warning()], "MPIJob") == []


def test_a_service_selector_or_ssh_secret_keys_a_user_changed_are_waited_for_until_put_back():
    # getOrCreateService / getOrCreateSSHAuthSecret: every sync that is not done restores them.
    children = _mpi_children()
    children[0]["spec"]["selector"] = {"app": "other"}
    children[2]["data"] = {"ssh-privatekey": "a2V5", "extra": "eA=="}
    assert _reasons([_mpijob(_mpi_status())] + children, "MPIJob") == [
        "Service pi: selector not its own yet", "Secret pi-ssh: not exactly its two keys yet"]
    assert _reasons([_mpijob(_mpi_status())] + _mpi_children(), "MPIJob") == []


def test_a_finished_launcher_job_is_waited_for_in_the_mpijob_conditions():
    children = _mpi_children()
    children[-2]["status"] = {"failed": 2, "conditions": [{"type": "Failed", "status": "True"}]}
    assert _reasons([_mpijob(_mpi_status())] + children, "MPIJob") == ["Job pi-launcher Failed, no Failed condition yet"]
    # Failed for an eviction first, the launcher then completes: Succeeded is still to come.
    children[-2]["status"] = {"succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]}
    evicted = _mpi_status(2, 1, {"type": "Failed", "status": "True", "reason": "MPIJobEvicted"})
    assert _reasons([_mpijob(evicted)] + children, "MPIJob") == ["Job pi-launcher Complete, no Succeeded condition yet"]


def test_an_mpijob_with_children_waits_for_its_created_condition():
    assert _reasons([_mpijob()] + _mpi_children(), "MPIJob") == ["no Created condition yet"]


def test_mpijob_needs_its_workers_and_the_launcher_at_startup():
    assert _reasons([_mpijob(_mpi_status())] + _mpi_children(), "MPIJob") == []
    partial = [c for c in _mpi_children(hosts=[0]) if c["metadata"]["name"] not in ("pi-worker-1", "pi-launcher",
                                                                                       "pi-launcher-x1")]
    assert _reasons([_mpijob(_mpi_status(worker_active=1, launcher_active=0))] + partial, "MPIJob") == [
        "Pod pi-worker-1 not created yet", "Job pi-launcher not created yet"]


def test_mpijob_launcher_waits_for_ready_workers_under_another_creation_policy():
    children = _mpi_children(launcher=False, ready=False)
    job = _mpijob(_mpi_status(launcher_active=0), policy="WaitForWorkersReady")
    assert _reasons([job] + children, "MPIJob") == []
    job = _mpijob(_mpi_status(launcher_active=0), policy="WaitForWorkersReady")
    assert _reasons([job] + _mpi_children(launcher=False), "MPIJob") == ["Job pi-launcher not created yet"]


def test_mpijob_counts_must_agree_with_its_pods():
    assert _reasons([_mpijob(_mpi_status(worker_active=1, launcher_active=0))] + _mpi_children(), "MPIJob") == [
        "replicaStatuses.Worker.active 1 but 2 Running worker(s)",
        "replicaStatuses.Launcher.active 0 but 1 Running launcher pod(s)"]


def test_finished_mpijob_waits_only_for_its_clean_pod_policy():
    done = {**_mpi_status(0, 0, {"type": "Succeeded", "status": "True"}), "completionTime": _stamp()}
    children = _mpi_children(workers=("Running", "Succeeded"), launcher=False)
    assert _reasons([_mpijob(done)] + children, "MPIJob") == []  # cleanPodPolicy defaults to None
    assert _reasons([_mpijob(done, run_policy={"cleanPodPolicy": "Running"})] + children, "MPIJob") == [
        "cleanPodPolicy Running: pod pi-worker-0 not deleted yet"]


def test_mpijob_discover_hosts_must_list_the_running_workers():
    stale = _mpi_children(hosts=[0])
    assert _reasons([_mpijob(_mpi_status())] + stale, "MPIJob") == [
        "ConfigMap pi-config: discover_hosts.sh does not list the 2 Running worker(s) yet"]


def test_mpijob_worker_counts_follow_the_worker_phases():
    children = _mpi_children(workers=("Running", "Failed"))
    assert _reasons([_mpijob(_mpi_status(worker_active=1))] + children, "MPIJob") == [
        "replicaStatuses.Worker.failed 0 but 1 Failed worker(s)"]
    status = _mpi_status(worker_active=1)
    status["replicaStatuses"]["Worker"]["failed"] = 1
    assert _reasons([_mpijob(status)] + children, "MPIJob") == []


def test_objects_whose_controller_is_gone_wait_for_the_garbage_collector():
    orphan = _child("Pod", "pt-master-0", owner="deleted-uid")
    orphan["metadata"]["ownerReferences"][0].update(kind="PyTorchJob", name="pt")
    assert "Pod ns/pt-master-0: its PyTorchJob pt is gone, garbage collection pending" in reasons_not_steady([orphan])
    owned = [_pytorchjob(age=60), _child("Service", "pt-master-0")]  # its controller is there
    assert not any("garbage collection" in r for r in reasons_not_steady(owned))
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


def test_a_finished_condemned_pod_waits_while_a_replica_stops_the_sync():
    # OrderedReady scaled to 1: a finished web-1 beyond the range is deleted only once web-0 lets the
    # sync reach the condemned pods (processCondemned after the replicas); while web-0 is held
    # terminating nothing is behind, once web-0 is Running and Ready the condemned pods are.
    held = _sts_pod("web-0", ready=False)
    held["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    blocked = _sts(replicas=1, policy="OrderedReady", readyReplicas=1)
    blocked["status"]["replicas"] = 3
    failed = _sts_pod("web-1", phase="Failed", ready=False)
    assert _sts_reasons([blocked, held, failed, _sts_pod("web-2")]) == []
    running = _sts(replicas=1, policy="OrderedReady", readyReplicas=2)
    running["status"]["replicas"] = 3
    [behind] = _sts_reasons([running, _sts_pod("web-0"), failed, _sts_pod("web-2")])
    assert behind.endswith("Pod web-2 is beyond the replicas and not deleted yet")  # the highest goes first
    running = _sts(replicas=1, policy="OrderedReady", readyReplicas=1)
    running["status"]["replicas"] = 2
    [behind] = _sts_reasons([running, _sts_pod("web-0"), failed])
    assert behind.endswith("Pod web-1 is beyond the replicas and not deleted yet")  # the first unhealthy one
    # web-2 finished too: processCondemned gets to web-2 first, which is not the lowest unhealthy condemned
    # pod (web-1), and waits there for good.
    stuck = _sts(replicas=1, policy="OrderedReady", readyReplicas=1)
    stuck["status"]["replicas"] = 3
    assert _sts_reasons([stuck, _sts_pod("web-0"), failed, _sts_pod("web-2", phase="Failed", ready=False)]) == []


def test_a_statefulset_counts_only_the_pods_of_its_own_namespace():
    # Two sets named web in two namespaces, each with its pods web-0 and web-1: a pod is looked up by
    # name in its set's namespace (a name-only lookup found the other namespace's pods, not owned).
    other = _sts()
    other["metadata"].update(namespace="b", uid="web-uid-b")
    pods_b = [_sts_pod(n, namespace="b") for n in ("web-0", "web-1")]
    for pod in pods_b:
        pod["metadata"]["ownerReferences"][0]["uid"] = "web-uid-b"
    assert _sts_reasons([_sts(), other, _sts_pod("web-0"), _sts_pod("web-1"), *pods_b]) == []


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
    # A blocking Pod the garbage collector has not deleted yet: the owner is still changing (a
    # JobSet's Job in foreground deletion with its pods still running, seen live against JobSet).
    running = _sts_pod("w-2", owner="w", uid="w-2-uid")
    running["metadata"]["ownerReferences"][0]["blockOwnerDeletion"] = True
    assert any("ns/w is being deleted" in r for r in reasons_not_steady([owner, worker, held, running]))
    # Other dependents are not waited for: the StatefulSet controller writes its revisions again
    # while the set waits for a held pod (seen live on kube-controller-manager v1.35).
    revision = {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": {
        "name": "w-5db56dbff5", "namespace": "ns", "ownerReferences": [{"uid": "w-uid", "blockOwnerDeletion": True}]}}
    assert reasons_not_steady([owner, worker, held, revision]) == []
    # Any other blocking dependent not deleted yet: the collector has still to reach it (a JobSet
    # deleted in Foreground, its Jobs not yet marked - seen live under load).
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {
        "name": "j", "namespace": "ns", "uid": "j-uid", "ownerReferences": [{"uid": "lead-uid", "blockOwnerDeletion": True}]},
        "spec": {}, "status": {}}
    assert any("ns/lead-0 is being deleted" in r for r in reasons_not_steady([owner, worker, held, job]))


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


def test_volcano_job_missing_pods_waits_unless_a_warning_says_its_creates_were_refused():
    # A pytorch --port that failed to parse opens containerPort 0: every pod create is refused, and
    # the job stays without pods for good (upstream's Warning FailedCreate, the reference's ReconcileError).
    job = _volcano("Pending")
    [reason] = reasons_not_steady([job])
    assert reason.endswith("0 of 2 pod(s) created")
    warning = {"apiVersion": "v1", "kind": "Event", "type": "Warning", "reason": "FailedCreate",
               "message": "Error creating pods: [failed to create pod train-worker-0, err: ...]",
               "metadata": {"name": "e", "namespace": "ns"}, "involvedObject": {"uid": "job-uid"}}
    assert reasons_not_steady([job, warning]) == []
    reference = {**warning, "reason": "ReconcileError",
                 "message": 'Pod "train-worker-0" is invalid: spec.containers[0].ports[0].containerPort: Required value'}
    assert reasons_not_steady([job, reference]) == []
    assert reasons_not_steady([job, {**warning, "type": "Normal"}]) == [reason]
    assert reasons_not_steady([job, {**warning, "involvedObject": {"uid": "other"}}]) == [reason]
    # Any other Warning about the job (the scheduler's, a policy's) does not end the wait.
    assert reasons_not_steady([job, {**warning, "reason": "Unschedulable", "message": "0/3 nodes"}]) == [reason]


def test_first_reason_is_the_first_of_all_reasons():
    # A wait checks with first=True and reports the whole list only when it gives up: both must agree.
    owner = _sts_pod("lead-0", owner=None, phase="Failed", ready=False, uid="lead-uid", deletionTimestamp="t",
                     finalizers=["foregroundDeletion"])
    lagging = [_volcano("Pending", pending=2), _pod("train-worker-0", "Running"), _pod("train-worker-1", "Pending")]
    for objects in ([], [_volcano("Running", running=2), _pod("a", "Running"), _pod("b", "Running")], lagging,
                    [owner] + lagging, lagging[::-1]):
        every = reasons_not_steady(objects)
        assert reasons_not_steady(objects, first=True) == every[:1]
    assert len(reasons_not_steady([owner] + lagging)) > 1


def _cached_pod(name: str, phase: str | None = "Running", **metadata) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ns", "uid": name,
                                                           "resourceVersion": "1", **metadata},
            "spec": {"nodeName": "node-0"}, "status": {"phase": phase} if phase else {}}


def test_a_pods_own_reason_is_one_every_rule_gives_too():
    from conformance.live.steady import own_reason
    pods = [_cached_pod("new", None), _cached_pod("pending", "Pending"), _cached_pod("running"),
            _cached_pod("stopping", "Running", deletionTimestamp="t"),
            _cached_pod("stopped", "Failed", deletionTimestamp="t", finalizers=["batch.kubernetes.io/job-tracking"]),
            _cached_pod("held", "Failed", deletionTimestamp="t", finalizers=["training-conformance.dev/hold"]),
            _pod("unbound-volcano", "Pending") | {"spec": {"schedulerName": "volcano"}}]
    own = {p["metadata"]["name"]: own_reason(p) for p in pods}
    assert own == {"new": "Pod ns/new is new", "pending": "Pod ns/pending is Pending", "running": None,
                   "stopping": "Pod ns/stopping is being deleted", "stopped": None, "held": None,
                   "unbound-volcano": None}
    every = reasons_not_steady(pods)
    assert all(reason in every for reason in own.values() if reason)


def test_a_wait_keeps_its_witness_while_that_pod_is_unchanged():
    from conformance.live.steady import FirstReason
    from reconciler.live.informer import Cache

    cache, checked = Cache(), []
    for pod in (_cached_pod("a"), _cached_pod("b", "Pending"), _cached_pod("c", "Pending")):
        cache.put(pod)
    ready = FirstReason(cache, ["ns"], lambda objects: checked.append(len(objects)) or ["rules"])
    assert ready() == ["Pod ns/b is Pending"]
    cache.put(_cached_pod("c", "Running", resourceVersion="2"))  # another pod changes: the answer stands
    assert ready() == ["Pod ns/b is Pending"]
    cache.put(_cached_pod("b", "Pending", resourceVersion="2"))  # b itself changed: looked for again
    assert ready() == ["Pod ns/b is Pending"]
    cache.put(_cached_pod("b", "Running", resourceVersion="3"))
    assert ready() == ["rules"] and checked == [3]  # no pod is unsteady on its own: every rule is asked
    cache.put(_cached_pod("a", "Running", resourceVersion="2", deletionTimestamp="t"))
    assert ready() == ["Pod ns/a is being deleted"] and checked == [3]


def test_the_cache_lists_in_the_order_first_seen_without_sorting():
    from reconciler.live.informer import Cache

    cache = Cache()
    for name, namespace in (("a", "ns"), ("b", "other"), ("c", "ns"), ("d", "other")):
        cache.put(_cached_pod(name) | {"metadata": {"name": name, "namespace": namespace, "uid": name}})
    cache.put(_cached_pod("a") | {"metadata": {"name": "a", "namespace": "ns", "uid": "a2"}})  # new object, same name
    names = lambda objects: [o["metadata"]["name"] for o in objects]  # noqa: E731
    assert names(cache.in_namespaces(["ns"])) == ["c", "a"]
    assert names(cache.in_namespaces(["ns", "other"])) == ["b", "c", "d", "a"]
    assert names(cache.list("", "Pod")) == ["b", "c", "d", "a"]
    assert names(cache.list("", "Pod", "other")) == ["b", "d"]


def test_a_wait_ends_after_the_quiet_window_and_checks_once_the_window_is_over():
    import threading
    import time

    from conformance.live.steady import Activity

    activity, state, checks = Activity(), {"reasons": ["Pod ns/p is Pending"]}, []

    def ready():
        checks.append(time.monotonic())
        return list(state["reasons"])

    def events():
        time.sleep(0.15)
        state["reasons"] = []
        for _ in range(20):  # a burst while nothing is left but the quiet window
            activity.handler("MODIFIED", {"metadata": {"namespace": "ns", "resourceVersion": "5"}})
            time.sleep(0.01)

    started = time.monotonic()
    threading.Thread(target=events, daemon=True).start()
    assert activity.wait(["ns"], ready, quiet=0.2, timeout=5, since=started) == []
    last_event = activity.last["ns"]
    assert time.monotonic() - last_event >= 0.2  # quiet for the whole window after the last event
    assert len([t for t in checks if t > started + 0.2]) <= 4  # not one check per event of the burst
    # Never steady: the reasons at the deadline.
    assert activity.wait(["ns"], lambda: ["Job ns/j: 0 of 1 pod(s) created"], quiet=0.05, timeout=0.3,
                         since=time.monotonic()) == ["Job ns/j: 0 of 1 pod(s) created"]
