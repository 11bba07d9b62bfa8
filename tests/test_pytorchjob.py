"""Training Operator v1 PyTorchJob: the pieces whose logic the case table does not show at a glance.

Expected values come from shared/reference/kubeflow-v1-mpi-operator.md part A (vectors P*, V*, D*) and
the training-operator sources it cites (envvar.go / elastic.go code order, pkg/util/status.go
setCondition, pkg/core/job.go PastBackoffLimit, pkg/core/pod.go GetPodSlices, train_util.go), and for
``strconv.Atoi`` from Go's strconv package; each test names its source.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

import reconciler
from reconciler import profiles
from reconciler.pytorchjob import controller, defaults, env, status, webhook

BASE = Path(__file__).resolve().parents[1] / "cases" / "pytorchjob" / "_bases" / "job.yaml"
V18, V19 = profiles.get("training-operator-v1.8"), profiles.get("training-operator-v1.9")


def job(**spec) -> dict:
    obj = yaml.safe_load(BASE.read_text())
    obj["spec"].update(copy.deepcopy(spec))
    return obj


def pods_env(obj: dict, profile: str = "training-operator-v1.9") -> dict[str, list[tuple[str, str | None]]]:
    result = reconciler.render([obj], profile)
    assert not result.rejections, result.rejections
    return {o["metadata"]["name"]: [(e["name"], e.get("value")) for e in o["spec"]["containers"][0]["env"]]
            for o in result.objects if o["kind"] == "Pod"}


# ---------------------------------------------------------------- env order (A.1, envvar.go code order)

def test_env_order_with_master():
    """P1, in setPodEnv's order: PYTHONUNBUFFERED, MASTER_PORT, PET_MASTER_PORT, MASTER_ADDR,
    PET_MASTER_ADDR, WORLD_SIZE, RANK, PET_NODE_RANK, PET_NPROC_PER_NODE, PET_NNODES."""
    assert pods_env(job())["test-job-worker-1"] == [
        ("PYTHONUNBUFFERED", "1"), ("MASTER_PORT", "23456"), ("PET_MASTER_PORT", "23456"),
        ("MASTER_ADDR", "test-job-master-0"), ("PET_MASTER_ADDR", "test-job-master-0"), ("WORLD_SIZE", "3"),
        ("RANK", "2"), ("PET_NODE_RANK", "2"), ("PET_NPROC_PER_NODE", "auto"), ("PET_NNODES", "3")]


def test_env_order_elastic_full():
    """P7 (elastic_test.go "With ElasticPolicy") in elastic.go's order - endpoint, backend, nnodes, max
    restarts, nproc, id, conf, standalone - after PYTHONUNBUFFERED and spec.nprocPerNode."""
    obj = job(elasticPolicy={"minReplicas": 1, "maxReplicas": 3, "rdzvBackend": "c10d", "rdzvPort": 1234,
                             "rdzvHost": "localhost", "rdzvId": "rdzv-id", "maxRestarts": 3, "standalone": True,
                             "rdzvConf": [{"key": "rdzv-conf-name", "value": "rdzv-conf-value"},
                                          {"key": "rdzv-conf-name-1", "value": "rdzv-conf-value-1"}]})
    del obj["spec"]["pytorchReplicaSpecs"]["Master"]
    obj["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] = 1
    assert pods_env(obj)["test-job-worker-0"] == [
        ("PYTHONUNBUFFERED", "1"), ("PET_NPROC_PER_NODE", "auto"), ("PET_RDZV_ENDPOINT", "localhost:1234"),
        ("PET_RDZV_BACKEND", "c10d"), ("PET_NNODES", "1:3"), ("PET_MAX_RESTARTS", "3"), ("PET_RDZV_ID", "rdzv-id"),
        ("PET_RDZV_CONF", "rdzv-conf-name=rdzv-conf-value,rdzv-conf-name-1=rdzv-conf-value-1"),
        ("PET_STANDALONE", None)]  # EnvVar.Value "" is omitempty: no "value" key at all


def test_env_deprecated_nproc_comes_after_max_restarts():
    """P11: elasticPolicy.nProcPerNode goes out as PET_NPROC_PER_NODE inside the elastic block (after
    PET_MAX_RESTARTS, before PET_RDZV_ID); spec.nprocPerNode is then not defaulted, so there is one."""
    obj = job(elasticPolicy={"nProcPerNode": 4, "maxRestarts": 1, "rdzvId": "x"})
    del obj["spec"]["pytorchReplicaSpecs"]["Master"]
    names = [n for n, _ in pods_env(obj)["test-job-worker-0"]]
    assert names == ["PYTHONUNBUFFERED", "PET_RDZV_ENDPOINT", "PET_RDZV_BACKEND", "PET_NNODES", "PET_MAX_RESTARTS",
                     "PET_NPROC_PER_NODE", "PET_RDZV_ID"]


def test_user_env_first_then_operator_env():
    """A.1: the operator appends; the user's variables keep their place in front."""
    obj = job()
    obj["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]["env"] = [
        {"name": "A", "value": "1"}, {"name": "B", "value": "2"}]
    names = [n for n, _ in pods_env(obj)["test-job-master-0"]]
    assert names[:3] == ["A", "B", "PYTHONUNBUFFERED"]


@pytest.mark.parametrize("text, value", [
    ("4", 4), ("+2", 2), ("-2", -2), ("007", 7), ("0", 0),
    (" 4", 1), ("4 ", 1), ("4.0", 1), ("1_000", 1), ("", 1), ("auto", 1), ("gpu", 1), ("cpu", 1),
    ("9223372036854775807", 9223372036854775807), ("9223372036854775808", 1), ("٣", 1),
])
def test_nproc_per_node_is_go_atoi_or_1(text, value):
    """getNprocPerNodeInt: strconv.Atoi (sign, ASCII digits, int64 range; no spaces or underscores), else 1."""
    assert env.nproc_per_node_int({"nprocPerNode": text}) == value


def test_nproc_nil_counts_as_1():
    assert env.nproc_per_node_int({}) == 1


def test_rank_is_the_node_rank():
    """#1840/#1872: RANK = index for the Master, index + 1 for a Worker, whatever nprocPerNode."""
    spec = {"nprocPerNode": "8"}
    assert [env.node_rank(spec, "master", 0), env.node_rank(spec, "worker", 0), env.node_rank(spec, "worker", 3)] == [0, 1, 4]


def test_replica_name_lowercases_and_replaces_slashes():
    """util_test.go TestGenGeneralName: key "1/2/3/4/5", type WORKER, index 1 → 1-2-3-4-5-worker-1."""
    assert env.replica_name("1/2/3/4/5", "WORKER", 1) == "1-2-3-4-5-worker-1"


# ---------------------------------------------------------------- exit codes and restart policies

@pytest.mark.parametrize("code, retryable", [(1, False), (2, False), (3, False), (127, False),
                                             (128, True), (130, True), (138, True), (255, True)])
def test_retryable_exit_codes(code, retryable):
    """P16: train_util_test.go TestIsRetryableExitCode (1, 2, 3 permanent; 130, 138 retryable); >= 128."""
    assert controller.is_retryable_exit_code(code) is retryable


def test_missing_exit_code_is_0xbeef_and_retryable():
    """pod.go: without a terminated `pytorch` container the code stays 0xbeef (48879) - retryable."""
    pod = {"status": {"containerStatuses": [{"name": "sidecar", "state": {"terminated": {"exitCode": 1}}},
                                            {"name": "pytorch", "state": {"running": {}}}]}}
    assert controller.exit_code(pod) == 48879 and controller.is_retryable_exit_code(48879)


@pytest.mark.parametrize("replica, pod", [("ExitCode", "Never"), ("Never", "Never"), ("Always", "Always"),
                                          ("OnFailure", "OnFailure")])
def test_pod_restart_policy(replica, pod):
    """P15: pod_test.go TestSetRestartPolicy."""
    assert controller.pod_restart_policy(replica) == pod


# ---------------------------------------------------------------- conditions (pkg/util/status.go)

def test_failed_is_terminal():
    st = {"conditions": [{"type": "Failed", "status": "True", "reason": "PyTorchJobFailed", "message": "m"}]}
    status.set_condition(st, "Running", "True", "PyTorchJobRunning", "r", "t")
    status.set_condition(st, "Failed", "True", "PyTorchJobFailed", "other", "t")
    assert st["conditions"] == [{"type": "Failed", "status": "True", "reason": "PyTorchJobFailed", "message": "m"}]


def test_same_status_and_reason_keeps_the_message():
    st = {}
    status.set_condition(st, "Restarting", "True", "PyTorchJobRestarting", "first", "t1")
    status.set_condition(st, "Restarting", "True", "PyTorchJobRestarting", "second", "t2")
    assert [(c["message"], c["lastUpdateTime"]) for c in st["conditions"]] == [("first", "t1")]


def test_restarting_and_running_remove_each_other():
    st = {}
    status.set_condition(st, "Created", "True", "PyTorchJobCreated", "c", "t")
    status.set_condition(st, "Running", "True", "PyTorchJobRunning", "r", "t")
    status.set_condition(st, "Restarting", "True", "PyTorchJobRestarting", "x", "t")
    assert [c["type"] for c in st["conditions"]] == ["Created", "Restarting"]
    status.set_condition(st, "Running", "True", "PyTorchJobRunning", "r", "t")
    assert [c["type"] for c in st["conditions"]] == ["Created", "Running"]


def test_succeeded_turns_running_false_keeping_its_reason():
    st = {}
    status.set_condition(st, "Running", "True", "PyTorchJobRunning", "r", "t1")
    status.set_condition(st, "Succeeded", "True", "PyTorchJobSucceeded", "s", "t2")
    assert [(c["type"], c["status"], c["reason"]) for c in st["conditions"]] == [
        ("Running", "False", "PyTorchJobRunning"), ("Succeeded", "True", "PyTorchJobSucceeded")]


def test_same_status_new_reason_keeps_transition_time():
    st = {}
    status.set_condition(st, "Running", "False", "PyTorchJobSuspended", "s", "t1")
    status.set_condition(st, "Running", "False", "PyTorchJobOther", "o", "t2")
    assert (st["conditions"][0]["lastTransitionTime"], st["conditions"][0]["lastUpdateTime"]) == ("t1", "t2")


def test_selector_is_sorted_match_labels():
    """A.2: status.replicaStatuses[type].selector = FormatLabelSelector(operator-name, job-name, replica-type)."""
    assert status.selector("test-job", "Worker") == (
        "training.kubeflow.org/job-name=test-job,training.kubeflow.org/operator-name=pytorchjob-controller,"
        "training.kubeflow.org/replica-type=worker")


# ---------------------------------------------------------------- backoffLimit, pod slices, roles

def _pod(rtype: str, phase: str, restarts: int, init_restarts: int = 0) -> dict:
    return {"metadata": {"labels": {"training.kubeflow.org/replica-type": rtype}},
            "status": {"phase": phase, "containerStatuses": [{"restartCount": restarts}],
                       "initContainerStatuses": [{"restartCount": init_restarts}]}}


@pytest.mark.parametrize("limit, pods, past", [
    (3, [_pod("worker", "Running", 3)], True),                                   # P20: backOffLimit is 3
    (0, [_pod("worker", "Running", 0), _pod("worker", "Succeeded", 0)], False),  # P21: backOffLimit is 0
    (0, [_pod("worker", "Running", 1)], True),                                   # 0: any restart
    (2, [_pod("worker", "Running", 1), _pod("master", "Running", 0, 1)], True),  # init containers count too
    (1, [_pod("worker", "Failed", 5)], False),                                   # only Running pods
])
def test_past_backoff_limit(limit, pods, past):
    """job_test.go TestPastBackoffLimit; pkg/core/job.go (OnFailure/Always/ExitCode replicas)."""
    job_ = {"spec": {"runPolicy": {"backoffLimit": limit},
                     "pytorchReplicaSpecs": {"Master": {"restartPolicy": "OnFailure"}, "Worker": {"restartPolicy": "OnFailure"}}}}
    assert controller.past_backoff_limit(job_, pods) is past


def test_never_replicas_are_not_counted_for_backoff():
    job_ = {"spec": {"runPolicy": {"backoffLimit": 1}, "pytorchReplicaSpecs": {"Worker": {"restartPolicy": "Never"}}}}
    assert controller.past_backoff_limit(job_, [_pod("worker", "Running", 4)]) is False


def _indexed(i: int) -> dict:
    return {"metadata": {"labels": {"training.kubeflow.org/replica-index": str(i)}}}


@pytest.mark.parametrize("indexes, replicas, sizes", [
    ([], 3, [0, 0, 0]),          # GetPodSlices comment: replicas 3 → 3 slots
    ([0, 1, 2], 4, [1, 1, 1, 0]),  # "a pod with replica-index 3 will be created"
    ([0, 1, 2], 1, [1, 1, 1]),     # "pod with replica-index 1 and 2 are out of range"
    ([], 0, [0]),                # CalculatePodSliceSize = max(0 + 1, 0): one slot even for 0 replicas
    ([1, 1], 2, [0, 2]),          # two pods for one index: "too many pods"
])
def test_pod_slices(indexes, replicas, sizes):
    assert [len(s) for s in controller.slices([_indexed(i) for i in indexes], replicas)] == sizes


def test_master_role():
    """IsMasterRole: the Master when there is one, else Worker 0."""
    both, workers = {"Master": {}, "Worker": {}}, {"Worker": {}}
    assert [controller.is_master_role(both, "Master", 0), controller.is_master_role(both, "Worker", 0),
            controller.is_master_role(workers, "Worker", 0), controller.is_master_role(workers, "Worker", 1)] == \
        [True, False, True, False]


# ---------------------------------------------------------------- defaults (A.5, D1-D5)

@pytest.mark.parametrize("elastic, low, high", [
    ({}, 1, 1), ({"maxReplicas": 1}, 1, 1), ({"minReplicas": 1}, 1, 1), ({"minReplicas": 1, "maxReplicas": 5}, 1, 5),
])
def test_elastic_defaults(elastic, low, high):
    """D1-D3: pytorch_defaults_test.go TestSetElasticPolicy (Worker replicas 1)."""
    obj = {"spec": {"elasticPolicy": dict(elastic), "pytorchReplicaSpecs": {"Worker": {
        "replicas": 1, "template": {"spec": {"containers": [{"name": "pytorch", "image": "x"}]}}}}}}
    got = defaults.defaulted(obj)["spec"]["elasticPolicy"]
    assert (got["minReplicas"], got["maxReplicas"]) == (low, high)


@pytest.mark.parametrize("spec, nproc", [({}, "auto"), ({"elasticPolicy": {}}, "auto"),
                                         ({"elasticPolicy": {"nProcPerNode": 2}}, None), ({"nprocPerNode": ""}, "")])
def test_nproc_default(spec, nproc):
    """D4: TestSetDefaultNprocPerNode - auto unless elasticPolicy.nProcPerNode is set; "" is kept."""
    obj = job(**spec)
    assert defaults.defaulted(obj)["spec"].get("nprocPerNode") == nproc


def test_defaults_are_a_copy_and_complete():
    """D5: replicas 1, restartPolicy OnFailure, cleanPodPolicy None, port pytorchjob-port:23456 on the
    container named pytorch (else container 0), lowercase keys CamelCased; the input is not changed."""
    obj = job()
    spec = obj["spec"]["pytorchReplicaSpecs"]
    spec["worker"] = spec.pop("Worker")
    del spec["worker"]["replicas"]
    spec["worker"]["template"]["spec"]["containers"].insert(0, {"name": "sidecar", "image": "s"})
    before = copy.deepcopy(obj)
    got = defaults.defaulted(obj)
    assert obj == before
    worker = got["spec"]["pytorchReplicaSpecs"]["Worker"]
    assert (worker["replicas"], worker["restartPolicy"], got["spec"]["runPolicy"]["cleanPodPolicy"]) == (1, "OnFailure", "None")
    assert [c.get("ports") for c in worker["template"]["spec"]["containers"]] == [
        None, [{"name": "pytorchjob-port", "containerPort": 23456}]]


def test_elastic_without_worker_or_bounds_is_a_panic():
    """setElasticPolicy dereferences Worker.replicas: with no Worker and no min/max upstream panics."""
    obj = job(elasticPolicy={})
    del obj["spec"]["pytorchReplicaSpecs"]["Worker"]
    with pytest.raises(defaults.UpstreamPanic):
        defaults.defaulted(obj)


# ---------------------------------------------------------------- webhook (A.4)

class _Cluster:
    def __init__(self, profile):
        self.profile, self.warnings = profile, []


def test_webhook_sees_no_defaults():
    """V14: a Master without replicas is refused - nothing is defaulted before the webhook."""
    obj = job()
    del obj["spec"]["pytorchReplicaSpecs"]["Master"]["replicas"]
    assert [str(e) for e in webhook.validate(obj, _Cluster(V19))] == [
        "spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1"]


def test_webhook_version_switches():
    """#2320 and #2203 are v1.9 only: elastic without Worker, Worker replicas 0 and managedBy."""
    obj = job(elasticPolicy={}, runPolicy={"managedBy": "x"})
    del obj["spec"]["pytorchReplicaSpecs"]["Worker"]
    assert webhook.validate(obj, _Cluster(V18)) == []
    assert [e.field for e in webhook.validate(obj, _Cluster(V19))] == ["spec.runPolicy.managedBy", "spec.pytorchReplicaSpecs[Worker]"]


def test_webhook_deprecation_is_a_warning_only():
    """V7: elasticPolicy.nProcPerNode alone: no error, one warning."""
    cluster = _Cluster(V19)
    assert webhook.validate(job(elasticPolicy={"nProcPerNode": 4}), cluster) == []
    assert cluster.warnings == ["PyTorchJob test-job: spec.elasticPolicy.nProcPerNode is deprecated, use spec.nprocPerNode instead"]


def test_webhook_no_containers_gives_two_errors_in_order():
    """V3: "must be specified" then "must have at least one container with name pytorch"."""
    obj = job()
    obj["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"] = []
    assert [e.detail for e in webhook.validate(obj, _Cluster(V18))] == [
        "must be specified", "must have at least one container with name pytorch"]


# ---------------------------------------------------------------- never raises; no livelock

@pytest.mark.parametrize("mutate", [
    lambda o: o["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"].update(containers="pytorch"),
    lambda o: o["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0].update(ports="23456"),
    lambda o: o["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0].update(env="X=1"),
    lambda o: o["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"].update(initContainers={"a": 1}),
    lambda o: o["spec"].update(elasticPolicy={"rdzvConf": []}),
    lambda o: o["spec"]["pytorchReplicaSpecs"]["Worker"].update(replicas=-3),
])
@pytest.mark.parametrize("profile", ["training-operator-v1.8", "training-operator-v1.9"])
def test_malformed_jobs_do_not_raise(mutate, profile):
    obj = job()
    mutate(obj)
    reconciler.render([obj], profile)


def test_v18_zero_workers_with_a_master_settles():
    """v1.8: Master + Worker replicas 0 - upstream creates and deletes the phantom test-job-worker-0
    forever (slot 0 of max(1, 0) slots, out of range next time); render creates it once and settles."""
    obj = job()
    obj["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] = 0
    result = reconciler.render([obj], "training-operator-v1.8")
    assert sorted(o["metadata"]["name"] for o in result.objects if o["kind"] == "Pod") == ["test-job-master-0"]
