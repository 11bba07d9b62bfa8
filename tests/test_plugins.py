"""Each runtime plugin on its own, with upstream's unit-test vectors (shared/reference/trainer-v2.md)."""

import copy

import pytest

from reconciler import profiles
from reconciler.trainer.info import new_runtime_info
from reconciler.trainer.plugins import jobset, mpi, torch

V20, V21, V23 = profiles.get("trainer-v2.0"), profiles.get("trainer-v2.1"), profiles.get("trainer-v2.3")


def info_for(runtime, policy_defaults=None):
    runtime = copy.deepcopy(runtime)
    if policy_defaults:
        for key, value in policy_defaults.items():
            runtime["spec"]["mlPolicy"][key].update(value)
    return new_runtime_info(runtime)


def trainjob(trainer, name="test-job"):
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
            "metadata": {"name": name, "namespace": "default", "uid": "u"}, "spec": {"trainer": trainer}}


# ---------------------------------------------------------------- torch: numProcPerNode generations

@pytest.mark.parametrize("requests, expected", [
    ({"cpu": "4"}, 4), (None, 1), ({"cpu": "2"}, 2), ({"cpu": "2.5"}, 3), ({"cpu": "0.7"}, 1),
    ({"cpu": "2500m"}, 3), ({"example.com/gpu": "2"}, "auto"), ({"cpu": "3.7"}, 4),
])
def test_torch_auto_vectors_v21_and_later(torch_runtime, requests, expected):
    """TestTorch rows "nproc_per_node=auto with ..." (same on v2.1 and v2.3)."""
    trainer = {"resourcesPerNode": {"requests": requests}} if requests is not None else {}
    for profile, policy in ((V21, {"torch": {"numProcPerNode": "auto"}}), (V23, None)):
        assert torch.resolve_nproc(info_for(torch_runtime, policy), trainjob(trainer), profile) == expected


def test_torch_explicit_value_wins(torch_runtime):
    tj = trainjob({"numProcPerNode": 3, "resourcesPerNode": {"requests": {"cpu": "8"}}})
    assert torch.resolve_nproc(info_for(torch_runtime), tj, V23) == 3


def test_torch_v21_cpu_and_gpu_keywords(torch_runtime):
    info = info_for(torch_runtime, {"torch": {"numProcPerNode": "auto"}})
    both = {"requests": {"cpu": "6", "example.com/gpu": "2"}}
    assert torch.resolve_nproc(info, trainjob({"numProcPerNode": "cpu", "resourcesPerNode": both}), V21) == 6
    assert torch.resolve_nproc(info, trainjob({"numProcPerNode": "gpu", "resourcesPerNode": both}), V21) == "gpu"
    assert torch.resolve_nproc(info, trainjob({"resourcesPerNode": both}), V23) == "auto"


def test_torch_runtime_resources_used_when_trainjob_has_none(torch_runtime):
    torch_runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"][
        "containers"][0]["resources"] = {"limits": {"cpu": "5"}}
    assert torch.resolve_nproc(info_for(torch_runtime), trainjob({}), V23) == 5
    # v2.0 only looks at the TrainJob's resourcesPerNode.
    assert torch.resolve_nproc(info_for(torch_runtime, {"torch": {"numProcPerNode": "auto"}}), trainjob({}), V20) == "auto"


def test_torch_v20_limits_first_and_limits_only_quirk(torch_runtime):
    info = info_for(torch_runtime, {"torch": {"numProcPerNode": "auto"}})
    assert torch.resolve_nproc(info, trainjob({"resourcesPerNode": {"limits": {"cpu": "2"}, "requests": {"cpu": "6"}}}), V20) == 2
    # limits with a GPU do not use CPU; then requests decide; nil requests give 1.
    assert torch.resolve_nproc(info, trainjob({"resourcesPerNode": {"limits": {"nvidia.com/gpu": "4"}}}), V20) == 1
    assert torch.resolve_nproc(info, trainjob({"numProcPerNode": 3, "resourcesPerNode": {"limits": {"cpu": "8"}}}), V20) == 1


def test_torch_enforce_env_and_port(torch_runtime):
    info = info_for(torch_runtime)
    tj = trainjob({"numNodes": 2, "env": [{"name": "USER_VAR", "value": "x"}]}, name="trainJob")
    torch.enforce(info, tj, V23)
    container = info.container("node", "node")
    assert [e["name"] for e in container["env"]] == ["USER_VAR", "PET_NNODES", "PET_NPROC_PER_NODE", "PET_NODE_RANK",
                                                      "PET_MASTER_ADDR", "PET_MASTER_PORT"]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["PET_NNODES"] == "2" and env["PET_NPROC_PER_NODE"] == "1"
    assert env["PET_MASTER_ADDR"] == "trainJob-node-0-0.trainJob" and env["PET_MASTER_PORT"] == "29500"
    assert container["ports"] == [{"containerPort": 29500}]
    assert info.pod_set("node").count == 2


@pytest.mark.parametrize("profile, nproc, rejected", [(V23, None, True), (V21, None, False), (V21, 2, True)])
def test_torch_reserved_env_and_the_v21_quirk(torch_runtime, profile, nproc, rejected):
    trainer = {"env": [{"name": "PET_NPROC_PER_NODE", "value": "3"}]}
    if nproc is not None:
        trainer["numProcPerNode"] = nproc
    errors = torch.validate(info_for(torch_runtime), trainjob(trainer), profile)
    assert bool(errors) is rejected
    if rejected:
        assert errors[0].detail == "must not have reserved envs, invalid envs configured: [PET_NPROC_PER_NODE]"


# ---------------------------------------------------------------- MPI

def mpi_info(mpi_runtime, **policy):
    runtime = copy.deepcopy(mpi_runtime)
    runtime["spec"]["mlPolicy"]["mpi"].update(policy)
    return new_runtime_info(runtime)


def render_hostfile(info, tj, profile=V23):
    mpi.enforce(info, tj, profile)
    jobset.enforce(info, tj, profile)
    return mpi.hostfile(info, tj)


def test_mpi_run_launcher_as_node_vector(mpi_runtime):
    """TestMPI "runLauncherAsNode is true": numNodes 10 → node Count 9, launcher 1."""
    info = mpi_info(mpi_runtime, runLauncherAsNode=True)
    text = render_hostfile(info, trainjob({"numNodes": 10}, name="trainJob"))
    assert info.pod_set("node").count == 9 and info.pod_set("launcher").count == 1
    assert text.splitlines()[:2] == ["trainJob-launcher-0-0.trainJob slots=1", "trainJob-node-0-0.trainJob slots=1"]
    assert len(text.splitlines()) == 10 and text.endswith("\n")
    launcher = info.container("launcher", "node")
    assert {e["name"]: e["value"] for e in launcher["env"]} == {
        "OMPI_MCA_orte_default_hostfile": "/etc/mpi/hostfile", "OMPI_MCA_orte_keep_fqdn_hostnames": "true",
        "OMPI_MCA_orte_set_default_slots": "1", "OMPI_MCA_plm_rsh_args": "-o ConnectionAttempts=10"}
    assert [m["mountPath"] for m in launcher["volumeMounts"]] == ["/home/mpiuser/.ssh", "/etc/mpi"]
    assert [m["mountPath"] for m in info.container("node", "node")["volumeMounts"]] == ["/home/mpiuser/.ssh"]


def test_mpi_without_launcher_as_node_lists_only_workers(mpi_runtime):
    """Core vector: numNodes 2, numProcPerNode 8, rLAN false → two node lines with slots=8."""
    info = mpi_info(mpi_runtime, runLauncherAsNode=False)
    text = render_hostfile(info, trainjob({"numNodes": 2, "numProcPerNode": 8}))
    assert text == "test-job-node-0-0.test-job slots=8\ntest-job-node-0-1.test-job slots=8\n"


def test_mpi_slots_from_gpu_count_since_v21(mpi_runtime):
    """TestMPI "numProcPerNode is set to number of GPUs in TrainJob" (v2.1+)."""
    tj = trainjob({"numNodes": 1, "resourcesPerNode": {"requests": {"custom.com/gpu": 5}}})
    assert mpi.resolve_slots(mpi_info(mpi_runtime), tj, V21) == 5
    assert mpi.resolve_slots(mpi_info(mpi_runtime), tj, V20) == 1


def test_mpi_topology_validation_vector(mpi_runtime):
    runtime = copy.deepcopy(mpi_runtime)
    del runtime["spec"]["template"]["spec"]["replicatedJobs"][0]
    info = new_runtime_info(runtime)
    assert mpi.validate(info, trainjob({"numNodes": 1}), V23) == []
    [error] = mpi.validate(info, trainjob({"numNodes": 2}), V23)
    assert str(error) == ("spec.trainer.numNodes: Invalid value: 2: must have 1 when MPI trainingRuntime with "
                          "enabled runLauncherAsNode does not have either launcher and node")


def test_mpi_secret_is_a_real_p521_key(mpi_runtime):
    info = mpi_info(mpi_runtime)
    objects = mpi.build(info, trainjob({}), V23, lambda *a: None)
    assert [o["kind"] for o in objects] == ["ConfigMap", "Secret"]
    from conformance.normalize import SSH_PRIVATE, SSH_PUBLIC, _normalize_ssh
    secret = objects[1]
    assert secret["type"] == "kubernetes.io/ssh-auth" and secret["immutable"] is True
    _normalize_ssh(secret)
    assert secret["data"] == {"ssh-privatekey": SSH_PRIVATE, "ssh-publickey": SSH_PUBLIC}
    # An existing Secret is never rebuilt.
    assert [o["kind"] for o in mpi.build(info, trainjob({}), V23, lambda *a: {"exists": True})] == ["ConfigMap"]


# ---------------------------------------------------------------- JobSet endpoints

def test_jobset_endpoints_and_subdomain(mpi_runtime):
    runtime = copy.deepcopy(mpi_runtime)
    runtime["spec"]["template"]["spec"]["network"]["subdomain"] = "kubeflow.org"
    runtime["spec"]["template"]["spec"]["replicatedJobs"][1]["replicas"] = 2
    for profile, expected in ((V23, ["trainJob-node-0-0.kubeflow.org", "trainJob-node-1-0.kubeflow.org"]),
                              (V21, ["trainJob-node-0-0.kubeflow.org"])):
        info = new_runtime_info(runtime)
        jobset.enforce(info, trainjob({}, name="trainJob"), profile)
        assert info.pod_set("launcher").endpoints == ["trainJob-launcher-0-0.kubeflow.org"]
        assert info.pod_set("node").endpoints == expected


# ---------------------------------------------------------------- env order (JobSet builder)

@pytest.mark.parametrize("profile", ["trainer-v2.1", "trainer-v2.3"])
def test_mpi_trainjob_env_comes_after_the_openmpi_env(mpi_runtime, mpi_trainjob, profile):
    """Trainer v2.1.0 and v2.3.0 live (admission/mpi-non-reserved-env-admitted): the JobSet builder
    upserts spec.trainer.env after the MPI plugin's OMPI_* env."""
    from reconciler import render
    mpi_trainjob["spec"]["trainer"]["env"] = [{"name": "CUSTOM_ENV", "value": "custom-value"}]
    jobset_obj = render([mpi_runtime, mpi_trainjob], profile=profile).cluster.find(
        "jobset.x-k8s.io", "JobSet", "default", "test-job")
    launcher = next(rj for rj in jobset_obj["spec"]["replicatedJobs"] if rj["name"] == "launcher")
    env = launcher["template"]["spec"]["template"]["spec"]["containers"][0]["env"]
    assert [e["name"] for e in env] == ["OMPI_MCA_orte_default_hostfile", "OMPI_MCA_orte_keep_fqdn_hostnames",
                                        "OMPI_MCA_orte_set_default_slots", "OMPI_MCA_plm_rsh_args", "CUSTOM_ENV"]


# ---------------------------------------------------------------- runtime resources, webhook values

def test_runtime_resources_first_match_wins_even_without_resources(mpi_runtime, mpi_trainjob):
    """Trainer v2.1.0/v2.3.0 live (mpi-render/gpu-slots-from-runtime-worker-container): the launcher
    (trainer-labelled, first) has no resources, the worker requests 2 GPUs → slots 1, not 2."""
    worker = mpi_runtime["spec"]["template"]["spec"]["replicatedJobs"][1]
    worker["template"]["spec"]["template"]["spec"]["containers"][0]["resources"] = {"requests": {"nvidia.com/gpu": "2"}}
    assert mpi.resolve_slots(info_for(mpi_runtime), mpi_trainjob, V23) == 1


def test_runtime_webhook_prints_the_containers_as_json(torch_runtime):
    """Trainer v2.3.0 live (admission/ancestor-trainer-without-node-container): field.Invalid gets the
    []Container and prints it as Go's JSON of the typed value."""
    from reconciler.trainer.webhooks import validate_runtime
    torch_runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"][
        "containers"][0]["name"] = "trainer"
    (error,) = validate_runtime(torch_runtime, None)
    assert str(error) == (
        'spec.template.spec.replicatedJobs[0].template.spec.template.spec.containers: Invalid value: '
        '[{"name":"trainer","image":"ghcr.io/example/torch:2.7","command":["torchrun","/workspace/train.py"],'
        '"resources":{}}]: must contain the required container for the ancestor: trainer')
