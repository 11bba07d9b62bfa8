"""Volcano Job: plugin argument parsing, pytorch/svc/env plugins, admission, lifecycle policies.

Expected values come from shared/reference/volcano-jobset-restart.md (§1.2-§1.6 plugin facts and
upstream test vectors, §2.4 lifecycle policies) and, for argument parsing, from Go's ``flag`` and
``strconv`` packages (the parser Volcano's plugins use); each test names its source.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

import reconciler
from reconciler import profiles
from reconciler.volcano import webhooks
from reconciler.volcano.goflag import FlagError, FlagSet, parse_int
from reconciler.volcano.plugins.env import EnvPlugin
from reconciler.volcano.plugins.pytorch import PytorchPlugin
from reconciler.volcano.plugins.svc import SvcPlugin, generate_hosts
from reconciler.volcano.policies import Request, apply_policies

V11, V12 = profiles.get("volcano-v1.11"), profiles.get("volcano-v1.12")
BASE = Path(__file__).resolve().parents[1] / "cases" / "volcano" / "_bases" / "pytorch-job.yaml"
TORCH_ENV = ["MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK"]


# ---------------------------------------------------------------- Go flag parsing

def pytorch_flags(args):
    flags = FlagSet("pytorch")
    flags.string("master", "master")
    flags.string("worker", "worker")
    flags.int("port", 23456)
    error = None
    try:
        flags.parse(args)
    except FlagError as exc:
        error = str(exc)
    return flags.values, error


@pytest.mark.parametrize("args, master, worker, port", [
    (None, "master", "worker", 23456),                                       # New(…, nil): defaults
    (["--master=chief", "--worker=node", "--port=29500"], "chief", "node", 29500),
    (["-master=chief", "-port", "29500"], "chief", "worker", 29500),         # one dash; value as next arg
    (["--port=1111", "--port=2222"], "master", "worker", 2222),              # the last one wins
    (["--worker="], "master", "", 23456),                                    # an empty value is a value
    (["chief", "--port=1"], "master", "worker", 23456),                      # stops at a non-flag, no error
    (["--port=1", "--", "--master=x"], "master", "worker", 1),               # "--" ends the flags
])
def test_flag_parsing_follows_go(args, master, worker, port):
    values, error = pytorch_flags(args)
    assert (values["master"], values["worker"], values["port"], error) == (master, worker, port, None)


@pytest.mark.parametrize("args, error, kept", [
    # Go's flag stores strconv's value even when Set fails (flag.go intValue.Set: *i = intValue(v)):
    # 0 for a syntax error, the int64 limit out of range; a flag never reached keeps its default.
    (["--port=abc"], 'invalid value "abc" for flag -port: parse error', {"port": 0}),
    (["--master=chief", "--port=abc", "--worker=node"], 'invalid value "abc" for flag -port: parse error',
     {"master": "chief", "worker": "worker", "port": 0}),
    (["--wait-master-enabled=true", "--port=1"], "flag provided but not defined: -wait-master-enabled", {"port": 23456}),
    (["--port"], "flag needs an argument: -port", {"port": 23456}),
    (["--help"], "flag: help requested", {}),
    (["-h"], "flag: help requested", {}),
    (["---port=1"], "bad flag syntax: ---port=1", {"port": 23456}),
    (["-=1"], "bad flag syntax: -=1", {}),
    (["--port=99999999999999999999"], 'invalid value "99999999999999999999" for flag -port: value out of range',
     {"port": 2**63 - 1}),
    (["--port=-99999999999999999999"], 'invalid value "-99999999999999999999" for flag -port: value out of range',
     {"port": -2**63}),
    (["--port=9223372036854775808"], 'invalid value "9223372036854775808" for flag -port: value out of range',
     {"port": 2**63 - 1}),
])
def test_flag_errors_stop_parsing_and_keep_what_was_parsed(args, error, kept):
    values, got = pytorch_flags(args)
    assert got == error
    for name, value in kept.items():
        assert values[name] == value


@pytest.mark.parametrize("text, value", [
    ("23456", 23456), ("+5", 5), ("-5", -5), ("0x7530", 30000), ("0X7530", 30000), ("023456", 10030),
    ("0o17", 15), ("0b101", 5), ("29_500", 29500), ("0x_75_30", 30000), ("0", 0), ("9223372036854775807", 2**63 - 1),
])
def test_int_flags_use_parseint_base_0(text, value):
    """strconv.ParseInt(s, 0, 64): sign, 0x/0o/0b prefixes, leading 0 = octal, '_' between digits."""
    assert parse_int(text) == value


@pytest.mark.parametrize("text, message", [
    ("", "parse error"), ("0x", "parse error"), ("08", "parse error"), ("_1", "parse error"), ("1_", "parse error"),
    ("1__0", "parse error"), ("1.5", "parse error"), ("+", "parse error"), ("9223372036854775808", "value out of range"),
])
def test_int_flag_errors(text, message):
    with pytest.raises(Exception, match=message):
        parse_int(text)


def test_bool_flags():
    """svc's flags are bools: alone means true; =value takes strconv.ParseBool's spellings."""
    for args, expected in ((["--publish-not-ready-addresses"], True), (["--publish-not-ready-addresses=F"], False),
                           (["--disable-network-policy=1"], False)):
        plugin = SvcPlugin(args, V12)
        assert plugin.flags.values["publish-not-ready-addresses"] is expected and not plugin.notices
    bad = SvcPlugin(["--publish-not-ready-addresses=yes"], V12)
    assert bad.notices == ['plugin svc flagset parse failed, err: invalid boolean value "yes" for '
                           '-publish-not-ready-addresses: parse error']
    # --inject-hosts-env only exists from v1.16.
    assert SvcPlugin(["--inject-hosts-env=false"], V12).notices == [
        "plugin svc flagset parse failed, err: flag provided but not defined: -inject-hosts-env"]


# ---------------------------------------------------------------- pytorch plugin, upstream vectors (§1.6)

def job(*tasks, name="test-pytorch"):
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": name},
            "spec": {"tasks": [{"name": t, "replicas": r, "template": {}} for t, r in tasks]}}


def pod(name, task=None, ports=None, env=None):
    annotations = {"volcano.sh/task-spec": task} if task else {}
    container = {"name": "c"}
    if ports is not None:
        container["ports"] = ports
    if env is not None:
        container["env"] = env
    return {"metadata": {"name": name, "annotations": annotations}, "spec": {"containers": [container]}}


def run(plugin_pod, the_job, profile=V12, args=None):
    plugin = PytorchPlugin(args, profile)
    plugin.on_pod_create(plugin_pod, the_job)
    return plugin_pod["spec"]["containers"][0], plugin


def env_of(container):
    return [(e["name"], e.get("value")) for e in container.get("env") or []]


ADDR = "test-pytorch-master-0.test-pytorch"


def test_upstream_pod_without_master():
    container, plugin = run(pod("test-pytorch-worker-0"), job(("worker", 1)))
    assert "env" not in container and "ports" not in container
    assert plugin.notices == ["job test-pytorch doesn't have task master"]


def test_upstream_master_pod_without_port():
    container, _ = run(pod("test-pytorch-master-0", "master"), job(("master", 1), ("worker", 1)))
    assert env_of(container) == [("MASTER_ADDR", ADDR), ("MASTER_PORT", "23456"), ("WORLD_SIZE", "2"), ("RANK", "0")]
    assert container["ports"] == [{"name": "pytorchjob-port", "containerPort": 23456}]


def test_upstream_master_pod_with_port():
    existing = [{"name": "pytorchjob-port", "containerPort": 23456}]
    container, _ = run(pod("test-pytorch-master-0", "master", ports=copy.deepcopy(existing)),
                       job(("master", 1), ("worker", 1)))
    assert container["ports"] == existing
    assert env_of(container)[2:] == [("WORLD_SIZE", "2"), ("RANK", "0")]


@pytest.mark.parametrize("pod_name, task, rank", [
    ("test-pytorch-master-0", "master", "0"), ("test-pytorch-worker-0", "worker", "1"),
    ("test-pytorch-worker-1", "worker", "2"),
])
@pytest.mark.parametrize("profile, world_size", [(V12, "3"), (V11, "5")])
def test_upstream_env_vectors_with_extra_task(pod_name, task, rank, profile, world_size):
    """Cases 4-6 gain extra×2 in the fix (ae092898): WORLD_SIZE stays 3; the old code gives 5."""
    container, _ = run(pod(pod_name, task, ports=[{"name": "metrics", "containerPort": 123}]),
                       job(("master", 1), ("worker", 2), ("extra", 2)), profile)
    assert container["ports"][0]["containerPort"] == 123
    assert env_of(container) == [("MASTER_ADDR", ADDR), ("MASTER_PORT", "23456"), ("WORLD_SIZE", world_size),
                                 ("RANK", rank)]


def test_issue_4238_world_size_counts_master_and_worker_only():
    the_job = job(("master", 1), ("worker", 3), ("extras", 4), name="multi-node-with-extra")
    args = ["--master=master", "--worker=worker", "--port=23456"]
    for profile, expected in ((V12, "4"), (V11, "8")):
        container, _ = run(pod("multi-node-with-extra-worker-2", "worker"), the_job, profile, args)
        assert dict(env_of(container))["WORLD_SIZE"] == expected
        assert dict(env_of(container))["RANK"] == "3"
        assert dict(env_of(container))["MASTER_ADDR"] == "multi-node-with-extra-master-0.multi-node-with-extra"


def test_extended_extra_task_pods_get_no_env_and_no_port():
    """Stricter than upstream (which injects ADDR/PORT/WORLD_SIZE and the port there, §1.3)."""
    container, _ = run(pod("test-pytorch-extras-0", "extras"), job(("master", 1), ("worker", 3), ("extras", 4)))
    assert "env" not in container and "ports" not in container


def test_master_replicas_above_one_all_rank_zero():
    the_job = job(("master", 2), ("worker", 2))
    container, _ = run(pod("test-pytorch-master-1", "master"), the_job)
    assert dict(env_of(container))["RANK"] == "0" and dict(env_of(container))["WORLD_SIZE"] == "4"
    container, _ = run(pod("test-pytorch-worker-0", "worker"), the_job)
    assert dict(env_of(container))["RANK"] == "1"


def test_master_equal_to_worker_is_a_worker():
    """Upstream checks the worker name first, so with one name every pod has RANK index + 1."""
    args = ["--master=trainer", "--worker=trainer"]
    container, _ = run(pod("test-pytorch-trainer-0", "trainer"), job(("trainer", 3)), args=args)
    assert dict(env_of(container)) == {"MASTER_ADDR": "test-pytorch-trainer-0.test-pytorch", "MASTER_PORT": "23456",
                                       "WORLD_SIZE": "3", "RANK": "1"}


def test_master_addr_uses_the_master_templates_hostname_and_subdomain():
    the_job = job(("master", 1), ("worker", 1))
    the_job["spec"]["tasks"][0]["template"] = {"spec": {"hostname": "head", "subdomain": "net"}}
    container, _ = run(pod("test-pytorch-worker-0", "worker"), the_job)
    assert dict(env_of(container))["MASTER_ADDR"] == "head.net"


def test_extended_user_env_is_kept_once_and_reported():
    user = [{"name": "MASTER_ADDR", "value": "10.0.0.1"}, {"name": "MASTER_PORT", "value": "23456"}]
    container, plugin = run(pod("test-pytorch-master-0", "master", env=copy.deepcopy(user)),
                            job(("master", 1), ("worker", 1)))
    assert env_of(container) == [("MASTER_ADDR", "10.0.0.1"), ("MASTER_PORT", "23456"), ("WORLD_SIZE", "2"),
                                 ("RANK", "0")]
    # Only a different value is reported; the same value is simply not appended twice.
    assert plugin.notices == ["pytorch plugin: pod test-pytorch-master-0 container 'c' sets MASTER_ADDR in its "
                              "template; kept it instead of the plugin's value 'test-pytorch-master-0.test-pytorch'"]


def test_parse_error_is_a_notice_and_the_bad_port_is_zero():
    """--port=abc: the flag keeps strconv's 0 (Go's intValue.Set), so MASTER_PORT 0 and containerPort 0,
    which kube-apiserver then refuses; the parse error itself is only logged upstream (a notice)."""
    container, plugin = run(pod("test-pytorch-master-0", "master"), job(("master", 1), ("worker", 1)),
                            args=["--port=abc"])
    assert dict(env_of(container))["MASTER_PORT"] == "0"
    assert {"name": "pytorchjob-port", "containerPort": 0} in container["ports"]
    assert plugin.notices == ['plugin pytorch flagset parse failed, err: invalid value "abc" for flag -port: parse error']


def test_init_containers_are_not_touched_by_pytorch():
    the_pod = pod("test-pytorch-master-0", "master")
    the_pod["spec"]["initContainers"] = [{"name": "init"}]
    run(the_pod, job(("master", 1)))
    assert the_pod["spec"]["initContainers"] == [{"name": "init"}]


# ---------------------------------------------------------------- svc and env plugins (§1.4)

def test_svc_hosts_config_map_data():
    the_job = job(("master", 1), ("data-loader", 2))
    the_job["spec"]["tasks"][0]["template"] = {"spec": {"hostname": "head"}}
    assert generate_hosts(the_job) == {
        "master.host": "head.test-pytorch", "VC_MASTER_HOSTS": "head.test-pytorch", "VC_MASTER_NUM": "1",
        "data_loader.host": "test-pytorch-data-loader-0.test-pytorch\ntest-pytorch-data-loader-1.test-pytorch",
        "VC_DATA_LOADER_HOSTS": "test-pytorch-data-loader-0.test-pytorch,test-pytorch-data-loader-1.test-pytorch",
        "VC_DATA_LOADER_NUM": "2",
    }


def test_svc_pod_hostname_subdomain_env_and_mount():
    the_pod = pod("test-pytorch-worker-0", "worker")
    the_pod["spec"]["initContainers"] = [{"name": "init"}]
    SvcPlugin([], V12).on_pod_create(the_pod, job(("master", 1), ("worker", 1)))
    spec = the_pod["spec"]
    assert (spec["hostname"], spec["subdomain"]) == ("test-pytorch-worker-0", "test-pytorch")
    for container in spec["containers"] + spec["initContainers"]:
        assert [e["name"] for e in container["env"]] == ["VC_MASTER_HOSTS", "VC_MASTER_NUM", "VC_WORKER_HOSTS",
                                                         "VC_WORKER_NUM"]
        assert container["env"][0]["valueFrom"] == {"configMapKeyRef": {"name": "test-pytorch-svc",
                                                                         "key": "VC_MASTER_HOSTS"}}
        assert container["volumeMounts"] == [{"name": "test-pytorch-svc", "mountPath": "/etc/volcano"}]
    assert spec["volumes"] == [{"name": "test-pytorch-svc", "configMap": {"name": "test-pytorch-svc"}}]


def test_env_plugin_task_index():
    the_pod = pod("test-pytorch-worker-1", "worker")
    the_pod["spec"]["initContainers"] = [{"name": "init"}]
    EnvPlugin([], V12).on_pod_create(the_pod, job(("worker", 2)))
    for container in the_pod["spec"]["containers"] + the_pod["spec"]["initContainers"]:
        assert env_of(container) == [("VK_TASK_INDEX", "1"), ("VC_TASK_INDEX", "1")]


# ---------------------------------------------------------------- admission (§1.4, §2.4)

def admitted(manifest):
    return reconciler.new_cluster("volcano-v1.12").admit(copy.deepcopy(manifest))


def test_mutating_webhook_defaults():
    manifest = yaml.safe_load(BASE.read_text())
    for key in ("minAvailable", "queue", "schedulerName"):
        del manifest["spec"][key]
    manifest["spec"]["maxRetry"] = 0
    manifest["spec"]["tasks"][1]["name"] = ""
    spec = admitted(manifest)["spec"]
    assert (spec["queue"], spec["schedulerName"], spec["maxRetry"], spec["minAvailable"]) == ("default", "volcano", 3, 3)
    assert [(t["name"], t["minAvailable"], t["maxRetry"]) for t in spec["tasks"]] == [("master", 1, 3), ("default1", 2, 3)]
    assert spec["plugins"] == {"pytorch": ["--master=master", "--worker=worker", "--port=23456"], "svc": []}


def test_maxretry_crd_default_is_3():
    manifest = yaml.safe_load(BASE.read_text())
    manifest["spec"].pop("maxRetry", None)
    assert admitted(manifest)["spec"]["maxRetry"] == 3


POLICY_CASES = [
    ([{"event": "PodFailed", "exitCode": 3, "action": "RestartJob"}], "must not specify event and exitCode simultaneously"),
    ([{"action": "RestartJob"}], "either event and exitCode should be specified"),
    ([{"event": "PodFailed", "action": "RestartJob"}, {"events": ["PodFailed"], "action": "AbortJob"}],
     "duplicate event PodFailed  across different policy"),
    ([{"exitCode": 0, "action": "RestartJob"}], "0 is not a valid error code"),
    ([{"exitCode": 3, "action": "RestartJob"}, {"exitCode": 3, "action": "AbortJob"}], "duplicate exitCode 3"),
    ([{"event": "*", "action": "RestartJob"}, {"event": "PodEvicted", "action": "RestartJob"}],
     "if there's * here, no other policy should be here"),
]


@pytest.mark.parametrize("policies, error", POLICY_CASES)
def test_policy_validation_errors(policies, error):
    assert webhooks.validate_policies(policies, "spec.policies") == f"1 error occurred:\n\t* {error}\n\n"


def test_policy_validation_rejects_the_job_with_400_and_no_reason():
    """validatejob.volcano.sh denies with a Status of no code; kube-apiserver's ToStatusErr makes that
    400 (seen against the real v1.10.0 webhook manager)."""
    manifest = yaml.safe_load(BASE.read_text())
    manifest["spec"]["policies"] = [{"exitCode": 0, "action": "RestartJob"}]
    result = reconciler.render([manifest], "volcano-v1.12")
    (rejected,) = result.rejections
    assert (rejected.error.code, rejected.error.reason) == (400, "")
    assert rejected.error.message.startswith('admission webhook "validatejob.volcano.sh" denied the request: '
                                             "1 error occurred:\n\t* 0 is not a valid error code\n\n valid events are [")


def test_unknown_plugin_is_rejected():
    manifest = yaml.safe_load(BASE.read_text())
    manifest["spec"]["plugins"]["pytorchx"] = []
    (rejected,) = reconciler.render([manifest], "volcano-v1.12").rejections
    assert rejected.error.message == ('admission webhook "validatejob.volcano.sh" denied the request: '
                                      "unable to find job plugin: pytorchx;")


# ---------------------------------------------------------------- lifecycle policies (§2.4)

def apply(policies=None, task_policies=None, max_retry=None, restart_policy="Never", profile="volcano-v1.12", **spec):
    manifest = yaml.safe_load(BASE.read_text())
    if policies is not None:
        manifest["spec"]["policies"] = policies
    for task in manifest["spec"]["tasks"]:
        task["template"]["spec"]["restartPolicy"] = restart_policy
        if task_policies and task["name"] in task_policies:
            task["policies"] = task_policies[task["name"]]
    if max_retry is not None:
        manifest["spec"]["maxRetry"] = max_retry
    manifest["spec"].update(spec)
    result = reconciler.render([manifest], profile)
    assert not result.rejections, result.rejections[0].error
    return result.cluster


def get_job(cluster):
    return cluster.find("batch.volcano.sh", "Job", "default", "test-pytorch")


def get_pod(cluster, name):
    return cluster.find("", "Pod", "default", f"test-pytorch-{name}")


def status(cluster):
    st = get_job(cluster)["status"]
    return st["state"]["phase"], st.get("retryCount", 0), st.get("version", 0)


def pods(cluster):
    """name → (phase, job-retry-count, job-version) of every pod of the job."""
    return {p["metadata"]["name"].removeprefix("test-pytorch-"): (
        p["status"]["phase"], p["metadata"]["annotations"]["volcano.sh/job-retry-count"],
        p["metadata"]["annotations"]["volcano.sh/job-version"]) for p in cluster.list("", "Pod", "default")}


def fail(cluster, name, exit_code=1, phase="Failed"):
    """What a fault does: the pod's only container terminates, the pod turns Failed; then settle."""
    the_pod = copy.deepcopy(get_pod(cluster, name))
    the_pod["status"]["phase"] = phase
    the_pod["status"]["containerStatuses"] = [{"name": the_pod["spec"]["containers"][0]["name"], "restartCount": 0,
                                               "state": {"terminated": {"exitCode": exit_code}}}]
    cluster.update(the_pod)
    cluster.settle()


def test_steady_state_writes_nothing():
    cluster = apply()
    writes = cluster.writes
    cluster.settle()
    assert cluster.writes == writes
    assert status(cluster) == ("Running", 0, 0)


def test_no_policy_means_no_restart():
    """No matching policy → SyncJob: the failed pod stays, the job keeps running with failed = 1."""
    cluster = apply()
    fail(cluster, "worker-1")
    assert status(cluster) == ("Running", 0, 0)
    assert pods(cluster)["worker-1"] == ("Failed", "0", "0")
    assert get_job(cluster)["status"]["failed"] == 1


def test_restart_job_recreates_every_pod_with_the_new_retry_count_and_version():
    cluster = apply(policies=[{"event": "PodFailed", "action": "RestartJob"}])
    before = {p["metadata"]["name"]: p["metadata"]["uid"] for p in cluster.list("", "Pod", "default")}
    fail(cluster, "worker-1")
    assert status(cluster) == ("Running", 1, 1)
    assert pods(cluster) == {"master-0": ("Running", "1", "1"), "worker-0": ("Running", "1", "1"),
                             "worker-1": ("Running", "1", "1")}
    after = {p["metadata"]["name"]: p["metadata"]["uid"] for p in cluster.list("", "Pod", "default")}
    assert not set(before.values()) & set(after.values())  # new pods, same names
    # svc's objects were removed with the kill and are back once the job is Pending again.
    assert cluster.find("", "Service", "default", "test-pytorch") is not None
    assert cluster.find("networking.k8s.io", "NetworkPolicy", "default", "test-pytorch") is not None
    # Plugin env is derived afresh: still one entry per name.
    env = [e["name"] for e in get_pod(cluster, "worker-1")["spec"]["containers"][0]["env"]]
    assert [n for n in env if n in TORCH_ENV] == TORCH_ENV


def test_restart_job_fails_the_job_at_max_retry_keeping_the_failed_pod():
    """maxRetry 3 (default): failures 1 and 2 restart; the 3rd is the last retry (retryCount 2 >= 3-1),
    so Failed/Succeeded pods are kept; retryCount 3 >= maxRetry → Failed."""
    cluster = apply(policies=[{"event": "PodFailed", "action": "RestartJob"}])
    fail(cluster, "worker-1")
    fail(cluster, "master-0")
    assert status(cluster)[:2] == ("Running", 2)
    assert set(pods(cluster).values()) == {("Running", "2", "2")}
    fail(cluster, "worker-0", exit_code=2)
    phase, retries, _ = status(cluster)
    assert (phase, retries) == ("Failed", 3)
    assert pods(cluster) == {"worker-0": ("Failed", "2", "2")}
    # v1.12 killPods calls every plugin's OnJobDelete: svc deletes its Service (and ConfigMap, NetworkPolicy)
    # and drops plugin-svc from controlledResources. The Restarting sync's OnJobUpdate writes the ConfigMap
    # again, and the later OnJobDelete skips a plugin that no longer controls anything: the ConfigMap stays.
    assert cluster.find("", "Service", "default", "test-pytorch") is None
    assert cluster.find("", "ConfigMap", "default", "test-pytorch-svc") is not None
    assert "plugin-svc" not in get_job(cluster)["status"].get("controlledResources", {})


def test_max_retry_1_fails_on_the_first_failure():
    cluster = apply(policies=[{"event": "PodFailed", "action": "RestartJob"}], max_retry=1)
    fail(cluster, "master-0")
    assert status(cluster)[:2] == ("Failed", 1)
    assert pods(cluster) == {"master-0": ("Failed", "0", "0")}


def test_restart_task_only_recreates_that_task_and_keeps_the_version():
    cluster = apply(task_policies={"worker": [{"event": "PodFailed", "action": "RestartTask"}]})
    master_uid = get_pod(cluster, "master-0")["metadata"]["uid"]
    fail(cluster, "worker-0")
    assert status(cluster) == ("Running", 1, 0)
    assert pods(cluster) == {"master-0": ("Running", "0", "0"), "worker-0": ("Running", "1", "0"),
                             "worker-1": ("Running", "1", "0")}
    assert get_pod(cluster, "master-0")["metadata"]["uid"] == master_uid


def test_restart_pod_only_recreates_that_pod():
    cluster = apply(policies=[{"event": "PodFailed", "action": "RestartPod"}])
    fail(cluster, "worker-1")
    assert pods(cluster) == {"master-0": ("Running", "0", "0"), "worker-0": ("Running", "0", "0"),
                             "worker-1": ("Running", "1", "0")}


def test_task_policy_overrides_job_policy():
    cluster = apply(policies=[{"event": "PodFailed", "action": "RestartJob"}],
                    task_policies={"worker": [{"event": "PodFailed", "action": "AbortJob"}]})
    fail(cluster, "worker-0")
    assert status(cluster)[0] == "Aborted"
    assert pods(cluster) == {"worker-0": ("Failed", "0", "0")}  # AbortJob keeps Failed/Succeeded pods


def test_exit_code_policy():
    cluster = apply(policies=[{"exitCode": 3, "action": "RestartJob"}])
    fail(cluster, "worker-0", exit_code=1)
    assert status(cluster) == ("Running", 0, 0)
    fail(cluster, "worker-1", exit_code=3)
    assert status(cluster)[:2] == ("Running", 1)


def test_pod_evicted_restarts_the_job():
    """A pod deleted by someone else is PodEvicted; pods the controller deletes are not."""
    cluster = apply(policies=[{"event": "PodEvicted", "action": "RestartJob"}])
    cluster.delete(get_pod(cluster, "worker-0"))
    cluster.settle()
    assert status(cluster) == ("Running", 1, 1)
    assert set(pods(cluster).values()) == {("Running", "1", "1")}


def test_task_completed_completes_the_job():
    cluster = apply(task_policies={"master": [{"event": "TaskCompleted", "action": "CompleteJob"}]})
    fail(cluster, "master-0", exit_code=0, phase="Succeeded")
    assert status(cluster)[0] == "Completed"
    assert pods(cluster) == {"master-0": ("Succeeded", "0", "0")}


def test_task_failed_after_max_retry_container_restarts():
    """TaskFailed: restartCount of the task's live pods reaches the task's maxRetry (webhook default 3)."""
    cluster = apply(restart_policy="OnFailure", policies=[{"event": "TaskFailed", "action": "RestartJob"}])
    worker = copy.deepcopy(get_pod(cluster, "worker-0"))
    worker["status"]["containerStatuses"] = [{"name": "worker", "restartCount": 3, "state": {"running": {}}}]
    cluster.update(worker)
    cluster.settle()
    assert status(cluster)[:2] == ("Running", 1)


def test_apply_policies_table():
    the_job = {"spec": {"tasks": [{"name": "worker", "policies": [{"event": "PodEvicted", "action": "RestartTask"}]}],
                        "policies": [{"events": ["PodFailed", "PodEvicted"], "action": "RestartJob"},
                                     {"exitCode": 137, "action": "AbortJob"}]},
               "status": {"version": 2}}
    assert apply_policies(the_job, Request("PodEvicted", task="worker", job_version=2)) == "RestartTask"
    assert apply_policies(the_job, Request("PodEvicted", task="master", job_version=2)) == "RestartJob"
    assert apply_policies(the_job, Request("PodFailed", task="worker", job_version=1)) == "SyncJob"  # stale
    assert apply_policies(the_job, Request("TaskCompleted", job_version=2, exit_code=137)) == "AbortJob"
    assert apply_policies(the_job, Request("OutOfSync", job_version=2)) == "SyncJob"
    assert apply_policies({"spec": {"policies": [{"event": "*", "action": "RestartJob"}]}},
                          Request("PodRunning")) == "SyncJob"  # internal events never run a policy
    assert apply_policies({"spec": {"policies": [{"event": "*", "action": "RestartJob"}]}},
                          Request("PodFailed")) == "RestartJob"


def test_cli_render_prints_job_service_and_pods_with_env():
    import subprocess
    import sys
    run = subprocess.run([sys.executable, "-m", "conformance.cli", "render", "-f", str(BASE), "--profile", "volcano-v1.12"],
                         capture_output=True, text=True, cwd=BASE.parents[3])
    assert run.returncode == 0, run.stderr
    docs = list(yaml.safe_load_all(run.stdout))
    assert sorted(d["kind"] for d in docs) == ["ConfigMap", "Job", "NetworkPolicy", "Pod", "Pod", "Pod", "Service"]
    worker = next(d for d in docs if d["metadata"]["name"] == "test-pytorch-worker-1")
    assert {e["name"]: e.get("value") for e in worker["spec"]["containers"][0]["env"]}["RANK"] == "2"


# ---------------------------------------------------------------------- v1.10.0, before volcano#3813

def test_v1_10_restart_task_is_a_sync():
    """state/running.go (v1.10.0) has no case for RestartTask: nothing is killed, no retry is counted."""
    cluster = apply(task_policies={"worker": [{"event": "PodFailed", "action": "RestartTask"}]}, profile="volcano-v1.10")
    fail(cluster, "worker-0")
    assert status(cluster) == ("Running", 0, 0)
    assert pods(cluster) == {"master-0": ("Running", "0", "0"), "worker-0": ("Failed", "0", "0"),
                             "worker-1": ("Running", "0", "0")}


def test_v1_10_restarting_kills_again_on_a_sync():
    """state/restarting.go (v1.10.0): every action in Restarting is KillJob, which bumps status.version -
    so a RestartJob leaves Restarting with version 2 or more (v1.11+: exactly 1)."""
    cluster = apply(policies=[{"event": "PodFailed", "action": "RestartJob"}], profile="volcano-v1.10")
    fail(cluster, "worker-1")
    phase, retries, version = status(cluster)
    assert (phase, retries) == ("Running", 1) and version >= 2
    assert {p[2] for p in pods(cluster).values()} == {str(version)}


def test_v1_10_webhook_refuses_pod_pending_and_restart_pod():
    from reconciler.volcano.webhooks import validate_policies

    v10, v11 = profiles.get("volcano-v1.10"), profiles.get("volcano-v1.11")
    pending = [{"event": "PodPending", "action": "RestartJob", "timeout": "1m"}]
    assert "invalid policy event" in validate_policies(pending, "spec.policies", v10)
    assert validate_policies(pending, "spec.policies", v11) == ""
    restart_pod = [{"event": "PodFailed", "action": "RestartPod"}]
    assert "invalid policy action" in validate_policies(restart_pod, "spec.policies", v10)
    assert validate_policies(restart_pod, "spec.policies", v11) == ""


@pytest.mark.parametrize("profile, extra_env", [
    # volcano_plugins_as_upstream: as the real v1.10.0 does (pytorch.go OnPodCreate L94-115)
    ("volcano-v1.10", {"MASTER_ADDR": "test-pytorch-master-0.test-pytorch", "MASTER_PORT": "23456", "WORLD_SIZE": "5"}),
    ("volcano-v1.11", {"MASTER_ADDR": "test-pytorch-master-0.test-pytorch", "MASTER_PORT": "23456", "WORLD_SIZE": "5"}),
    ("volcano-v1.12", {}),  # the reference's extended behaviour, which v1.12's extended rows assert
])
def test_pods_of_other_tasks_get_the_torch_env_where_the_profile_imitates_upstream(profile, extra_env):
    manifest = yaml.safe_load(BASE.read_text())
    manifest["spec"]["tasks"].append({"name": "extra", "replicas": 2, "template": {"spec": {
        "containers": [{"name": "app", "image": "x", "env": [{"name": "WORLD_SIZE", "value": "1"}]}]}}})
    objects = {(o["kind"], o["metadata"]["name"]): o for o in reconciler.render([manifest], profile).objects}
    extra = objects[("Pod", "test-pytorch-extra-1")]["spec"]["containers"][0]
    torch = [e for e in extra["env"] if e["name"] in ("MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK")]
    # the template's own WORLD_SIZE first; upstream appends its own after it (no RANK on an extra task)
    assert torch == [{"name": "WORLD_SIZE", "value": "1"}] + [{"name": k, "value": v} for k, v in extra_env.items()]
    assert any(p.get("name") == "pytorchjob-port" for p in extra.get("ports") or []) == bool(extra_env)
    worker = objects[("Pod", "test-pytorch-worker-1")]["spec"]["containers"][0]
    assert {"name": "RANK", "value": "2"} in worker["env"]
