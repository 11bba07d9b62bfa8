"""The MPI Operator v0.6.0 stand-in (reconciler/mpijob) where the case table cannot reach: upstream's unit
vectors that run validation without defaults (validation_test.go, default_test.go), condition bookkeeping
(mpi_job_controller_status.go), MPIJob updates (suspend/resume, scale down: the table has no update step) and
malformed objects. Facts: shared/reference/kubeflow-v1-mpi-operator.md part B (vectors M1-M27)."""

from __future__ import annotations

import copy

import pytest

import reconciler
from reconciler.mpijob import defaults, keys, resources, status, validation

BASE = {
    "apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": {"name": "pi", "namespace": "default"},
    "spec": {"mpiReplicaSpecs": {
        "Launcher": {"replicas": 1, "template": {"spec": {"containers": [{"name": "l", "image": "x"}]}}},
        "Worker": {"replicas": 2, "template": {"spec": {"containers": [{"name": "w", "image": "x"}]}}},
    }},
}
PROFILE = "mpi-operator-v0.6"


def _job(**spec) -> dict:
    job = copy.deepcopy(BASE)
    job["spec"].update(spec)
    return job


def _messages(errors) -> list[str]:
    return [str(e) for e in errors]


def _get(cluster, kind: str, name: str, group: str = "") -> dict | None:
    return cluster.find(group, kind, "default", name)


# ---------------------------------------------------------------------- validation without defaults

def test_empty_job_without_defaults_gives_m10_errors():
    # validation_test.go "empty job": the errors upstream asserts, before any defaulting.
    errors = validation.validate({"metadata": {"name": ""}, "spec": {}})
    assert [(e.type, e.field) for e in errors] == [
        ("Invalid value", "metadata.name"), ("Required value", "spec.mpiReplicaSpecs"),
        ("Required value", "spec.slotsPerWorker"), ("Required value", "spec.runPolicy.cleanPodPolicy"),
        ("Required value", "spec.sshAuthMountPath"), ("Unsupported value", "spec.mpiImplementation")]
    assert _messages(errors)[1:5] == [
        "spec.mpiReplicaSpecs: Required value: must have replica specs",
        "spec.slotsPerWorker: Required value: must have number of slots per worker",
        "spec.runPolicy.cleanPodPolicy: Required value: must have clean Pod policy",
        "spec.sshAuthMountPath: Required value: must have a mount path for SSH credentials"]
    assert _messages(errors)[5] == 'spec.mpiImplementation: Unsupported value: "": supported values: "Intel", "MPICH", "OpenMPI"'


def test_missing_replica_spec_fields_without_defaults_m13():
    job = {"metadata": {"name": "foo"}, "spec": {"mpiReplicaSpecs": {"Launcher": {}, "Worker": {}}, "slotsPerWorker": 1,
                                                 "runPolicy": {"cleanPodPolicy": "None"}, "sshAuthMountPath": "/root/.ssh",
                                                 "mpiImplementation": "OpenMPI"}}
    assert _messages(validation.validate(job)) == [
        "spec.mpiReplicaSpecs[Launcher].replicas: Required value: must define number of replicas",
        'spec.mpiReplicaSpecs[Launcher].restartPolicy: Unsupported value: "": supported values: "Never", "OnFailure"',
        "spec.mpiReplicaSpecs[Launcher].template.spec.containers: Required value: must define at least one container",
        "spec.mpiReplicaSpecs[Worker].replicas: Required value: must define number of replicas",
        'spec.mpiReplicaSpecs[Worker].restartPolicy: Unsupported value: "": supported values: "Never", "OnFailure"',
        "spec.mpiReplicaSpecs[Worker].template.spec.containers: Required value: must define at least one container"]


def test_invalid_managed_by_is_reported_by_validation_itself():
    # M11: the check exists (sorted list), even though syncHandler skips such a job before validating.
    job = defaults.set_defaults(_job(runPolicy={"managedBy": "invalid.com/controller"}))
    assert _messages(validation.validate(job)) == [
        'spec.runPolicy.managedBy: Unsupported value: "invalid.com/controller": supported values: '
        '"kubeflow.org/mpi-operator", "kueue.x-k8s.io/multikueue"']


def test_valid_intel_and_mpich_jobs_with_and_without_worker_m16():
    for implementation in ("Intel", "MPICH"):
        for drop_worker in (False, True):
            job = _job(mpiImplementation=implementation)
            if drop_worker:
                del job["spec"]["mpiReplicaSpecs"]["Worker"]
            assert validation.validate(defaults.set_defaults(job)) == []


def test_truncate_keeps_1021_characters_and_appends_dots():
    assert validation.truncate("x" * 1024) == "x" * 1024
    assert validation.truncate("x" * 1025) == "x" * 1021 + "..."


# ---------------------------------------------------------------------- defaults (M17)

def test_defaults_of_an_empty_job_and_empty_replica_specs():
    job = defaults.set_defaults({"spec": {"mpiReplicaSpecs": {"Launcher": {}, "Worker": {}}}})
    spec = job["spec"]
    assert (spec["slotsPerWorker"], spec["runPolicy"]["cleanPodPolicy"], spec["sshAuthMountPath"],
            spec["mpiImplementation"], spec["launcherCreationPolicy"]) == (1, "None", "/root/.ssh", "OpenMPI", "AtStartup")
    assert spec["mpiReplicaSpecs"] == {"Launcher": {"restartPolicy": "OnFailure", "replicas": 1},
                                       "Worker": {"restartPolicy": "Never", "replicas": 0}}
    assert "runLauncherAsWorker" not in spec  # read with ptr.Deref(..., false), never defaulted in Go


def test_defaults_keep_explicit_values():
    job = defaults.set_defaults(_job(mpiImplementation="MPICH", slotsPerWorker=0, runPolicy={"cleanPodPolicy": "All"}))
    assert (job["spec"]["mpiImplementation"], job["spec"]["slotsPerWorker"], job["spec"]["runPolicy"]["cleanPodPolicy"]) \
        == ("MPICH", 0, "All")


# ---------------------------------------------------------------------- hostfile vectors (M1-M3)

@pytest.mark.parametrize("workers, launcher_as_worker, expected", [
    (2, True, "openmpi-without-slots-launcher.openmpi-without-slots.tenant-a.svc slots=1\n"
              "openmpi-without-slots-worker-0.openmpi-without-slots.tenant-a.svc slots=1\n"
              "openmpi-without-slots-worker-1.openmpi-without-slots.tenant-a.svc slots=1\n"),
    (None, True, "openmpi-without-slots-launcher.openmpi-without-slots.tenant-a.svc slots=1\n"),
    (2, None, "openmpi-without-slots-worker-0.openmpi-without-slots.tenant-a.svc slots=1\n"
              "openmpi-without-slots-worker-1.openmpi-without-slots.tenant-a.svc slots=1\n"),
])
def test_new_config_map_vectors(workers, launcher_as_worker, expected):
    job = _job()
    job["metadata"] = {"name": "openmpi-without-slots", "namespace": "tenant-a", "uid": "u"}
    if workers is None:
        del job["spec"]["mpiReplicaSpecs"]["Worker"]
    if launcher_as_worker is not None:
        job["spec"]["runLauncherAsWorker"] = launcher_as_worker
    cm = resources.config_map(defaults.set_defaults(job), [])
    assert cm["metadata"]["name"] == "openmpi-without-slots-config" and cm["metadata"]["labels"] == {"app": "openmpi-without-slots"}
    assert cm["data"]["hostfile"] == expected


def test_discover_hosts_sorts_pod_names_as_strings():
    job = defaults.set_defaults(_job())
    pods = [{"metadata": {"name": f"pi-worker-{i}", "namespace": "default"}} for i in (2, 10, 1)]
    assert resources.discover_hosts(job, pods) == ("#!/bin/sh\necho pi-worker-1.pi.default.svc\n"
                                                   "echo pi-worker-10.pi.default.svc\necho pi-worker-2.pi.default.svc\n")


# ---------------------------------------------------------------------- conditions

def test_set_condition_same_status_and_reason_changes_nothing_not_even_the_message():
    st: dict = {}
    assert status.set_condition(st, "Failed", "True", "MPIJobEvicted", "1/3 workers are evicted", "t1")
    assert not status.set_condition(st, "Failed", "True", "MPIJobEvicted", "2/3 workers are evicted", "t2")
    assert st["conditions"][0]["message"] == "1/3 workers are evicted"


def test_set_condition_keeps_transition_time_on_a_new_reason_with_the_same_status():
    st: dict = {}
    status.set_condition(st, "Failed", "True", "MPIJobEvicted", "1/2 workers are evicted", "t1")
    status.set_condition(st, "Failed", "True", "BackoffLimitExceeded/", "m", "t2")
    [failed] = st["conditions"]
    assert (failed["reason"], failed["lastUpdateTime"], failed["lastTransitionTime"]) == ("BackoffLimitExceeded/", "t2", "t1")


def test_succeeded_flips_running_and_failed_to_false_and_goes_last():
    st: dict = {}
    status.set_condition(st, "Created", "True", keys.REASON_CREATED, "c", "t")
    status.set_condition(st, "Running", "True", keys.REASON_RUNNING, "r", "t")
    status.set_condition(st, "Failed", "True", keys.REASON_EVICTED, "e", "t")
    status.set_condition(st, "Succeeded", "True", keys.REASON_SUCCEEDED, "s", "t")
    assert [(c["type"], c["status"], c["reason"]) for c in st["conditions"]] == [
        ("Created", "True", "MPIJobCreated"), ("Running", "False", "MPIJobRunning"),
        ("Failed", "False", "MPIJobEvicted"), ("Succeeded", "True", "MPIJobSucceeded")]


def test_running_and_restarting_replace_each_other():
    st = {"conditions": [{"type": "Restarting", "status": "True", "reason": "x"}]}
    status.set_condition(st, "Running", "True", keys.REASON_RUNNING, "r", "t")
    assert [c["type"] for c in st["conditions"]] == ["Running"]


# ---------------------------------------------------------------------- updates: suspend, resume, scale down

def _update_spec(cluster, mutate) -> None:
    job = copy.deepcopy(_get(cluster, "MPIJob", "pi", "kubeflow.org"))
    mutate(job["spec"])
    cluster.update(job)
    cluster.settle()


def _conditions(cluster) -> list[tuple]:
    job = _get(cluster, "MPIJob", "pi", "kubeflow.org")
    return [(c["type"], c["status"], c["reason"], c["message"]) for c in job["status"]["conditions"]]


def test_suspend_a_running_job_then_resume_it():
    # TestSuspendedRunningMPIJob and TestResumeMPIJob (M24/M25).
    cluster = reconciler.render([_job()], PROFILE).cluster
    _update_spec(cluster, lambda spec: spec.setdefault("runPolicy", {}).update(suspend=True))
    assert _get(cluster, "Job", "pi-launcher", "batch")["spec"]["suspend"] is True
    assert [p["metadata"]["name"] for p in cluster.list("", "Pod") if "worker" in p["metadata"]["name"]] == []
    assert _conditions(cluster)[-2:] == [("Suspended", "True", "MPIJobSuspended", "MPIJob suspended"),
                                         ("Running", "False", "MPIJobSuspended", "MPIJob default/pi is suspended.")]
    _update_spec(cluster, lambda spec: spec["runPolicy"].update(suspend=False))
    assert _get(cluster, "Job", "pi-launcher", "batch")["spec"]["suspend"] is False
    assert {p["metadata"]["name"] for p in cluster.list("", "Pod")} >= {"pi-worker-0", "pi-worker-1"}
    assert ("Suspended", "False", "MPIJobResumed", "MPIJob resumed") in _conditions(cluster)


def test_scale_down_deletes_workers_with_an_index_beyond_replicas():
    cluster = reconciler.render([_job()], PROFILE).cluster
    _update_spec(cluster, lambda spec: spec["mpiReplicaSpecs"]["Worker"].update(replicas=1))
    assert sorted(p["metadata"]["name"] for p in cluster.list("", "Pod") if "worker" in p["metadata"]["name"]) \
        == ["pi-worker-0"]
    cm = _get(cluster, "ConfigMap", "pi-config")
    assert cm["data"]["hostfile"] == "pi-worker-0.pi.default.svc slots=1\n"


def test_go_defaults_are_never_written_back():
    cluster = reconciler.render([_job()], PROFILE).cluster
    spec = _get(cluster, "MPIJob", "pi", "kubeflow.org")["spec"]
    assert "runPolicy" not in spec and "restartPolicy" not in spec["mpiReplicaSpecs"]["Worker"]


def test_a_worker_pod_not_controlled_by_the_job_stops_the_sync():
    foreign = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pi-worker-1", "namespace": "default"},
               "spec": {"containers": [{"name": "c", "image": "x"}]}}
    result = reconciler.render([foreign, _job()], PROFILE)
    assert result.cluster.reconcile_errors == [
        'MPIJob default/pi: Resource "pi-worker-1" of Kind "" already exists and is not managed by MPIJob']
    assert _get(result.cluster, "Job", "pi-launcher", "batch") is None  # the launcher comes after the workers


# ---------------------------------------------------------------------- malformed objects never raise

@pytest.mark.parametrize("mutate", [
    lambda s: s["mpiReplicaSpecs"]["Worker"]["template"]["spec"].update(containers="not a list"),
    lambda s: s["mpiReplicaSpecs"]["Worker"]["template"]["spec"].update(containers=["not an object"]),
    lambda s: s["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0].update(env={"A": "b"}),
    lambda s: s["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0].update(env=["A=b"]),
    lambda s: s["mpiReplicaSpecs"]["Worker"]["template"]["spec"].update(dnsConfig={"searches": "a.b"}),
    lambda s: s["mpiReplicaSpecs"]["Worker"]["template"]["spec"].update(volumes={"name": "v"}),
    lambda s: s["mpiReplicaSpecs"]["Worker"]["template"]["spec"].update(hostNetwork="yes"),
    lambda s: s["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0].update(command="mpirun"),
])
def test_undecodable_pod_templates_are_refused_by_the_schema(mutate):
    # Upstream's CRD describes the pod templates in full (core/v1 PodTemplateSpec): a value of the wrong
    # type there is the apiserver's 422, and nothing is created.
    job = _job()
    mutate(job["spec"])
    result = reconciler.render([job], PROFILE)
    assert result.objects == [] and result.cluster.reconcile_errors == []
    (rejected,) = result.rejections
    assert rejected.error.code == 422 and "in body must be of type" in str(rejected.error)


@pytest.mark.parametrize("replicas", [
    {"Launcher": None, "Worker": None},
    {"Launcher": {"replicas": 1}},
    {"Launcher": {"replicas": 1, "template": {}}, "Worker": {"replicas": 1, "template": {"spec": {}}}},
    {"Launcher": {"replicas": 1, "template": {"spec": {"containers": []}}}, "Extra": {"replicas": 3}},
])
def test_odd_replica_specs_never_raise(replicas):
    job = _job()
    job["spec"]["mpiReplicaSpecs"] = replicas
    result = reconciler.render([job], PROFILE)  # must not raise
    assert not any(o["kind"] in ("Pod", "Job") for o in result.objects)
