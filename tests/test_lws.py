"""LeaderWorkerSet v0.7.0 pieces whose rules are not obvious from the table.

Expected values are upstream's unit-test vectors (shared/reference/lws-volcano-upstream.md A.6, and the
tests of LWS v0.7.0 pkg/utils/pod, pkg/webhooks, pkg/controllers they come from), named per test.
"""

from __future__ import annotations

import copy

import pytest

import reconciler
from reconciler import faults
from reconciler.lws import controller, keys, revision, webhooks

WRAPPER_ENV = [{"name": "key1", "value": "value1"}, {"name": "key2", "value": "value2"}]


def lws(**spec) -> dict:
    """BuildLeaderWorkerSet-like (test/wrappers): test-sample, replicas 2, size 2."""
    obj = {"apiVersion": keys.API_VERSION, "kind": keys.KIND, "metadata": {"name": "test-sample", "namespace": "default"},
           "spec": {"replicas": 2, "leaderWorkerTemplate": {"size": 2, "workerTemplate": {
               "spec": {"containers": [{"name": "c", "image": "nginxinc/nginx-unprivileged:1.27"}]}}}}}
    obj["spec"].update(spec)
    return obj


# ---------------------------------------------------------------- the pod webhook

@pytest.mark.parametrize("namespace, name, expected", [
    # TestGenGroupUniqueKey.
    ("default", "test-sample", "95e88034e460983f51a9952fe128729fbc0663b5"),
    ("default", "podName", "390b34ab671d29e9997d7d4252b8bbf8da02f5b7"),
    ("leaderworkerset", "test-sample", "39f5d7e9122b9d94d3932e3720b43fd3b56347e8"),
])
def test_group_key(namespace, name, expected):
    assert webhooks.group_key(namespace, name) == expected


@pytest.mark.parametrize("size, subgroup_size, worker, expected", [((4, 2, 2, "1")), ((5, 2, 2, "0")),
                                                                 ((3, 2, 0, "0"))])  # Go truncates (0-1)/2 to 0
def test_subgroup_index(size, subgroup_size, worker, expected):
    # TestGetSubGroupIndex.
    assert webhooks.subgroup_index(size, subgroup_size, worker) == expected


def _pod(name, namespace, labels, size, subdomain="test-sample"):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "labels": labels, "annotations": {keys.SIZE: size}},
            "spec": {"subdomain": subdomain,
                     "containers": [{"name": "c", "env": copy.deepcopy(WRAPPER_ENV)}],
                     "initContainers": [{"name": "i", "env": copy.deepcopy(WRAPPER_ENV)}]}}


@pytest.mark.parametrize("pod, address, size, worker", [
    # TestAddLWSVariables "Leader pod": the three variables first, in this order, then the user's.
    (_pod("test-sample-0", "default", {keys.NAME: "test-sample", keys.GROUP_INDEX: "0", keys.WORKER_INDEX: "0"}, "3"),
     "test-sample-0.test-sample.default", "3", "0"),
    # "Worker pod, group 1" and "... non-default namespace".
    (_pod("test-sample-1-3", "default", {keys.NAME: "test-sample", keys.GROUP_INDEX: "1", keys.WORKER_INDEX: "3"}, "2"),
     "test-sample-1.test-sample.default", "2", "3"),
    (_pod("test-sample-1-3", "lws", {keys.NAME: "test-sample", keys.GROUP_INDEX: "1", keys.WORKER_INDEX: "3"}, "2"),
     "test-sample-1.test-sample.lws", "2", "3"),
])
def test_lws_variables_come_first_in_every_container(pod, address, size, worker):
    assert webhooks.add_lws_variables(pod) is None
    expected = [{"name": "LWS_LEADER_ADDRESS", "value": address}, {"name": "LWS_GROUP_SIZE", "value": size},
                {"name": "LWS_WORKER_INDEX", "value": worker}] + WRAPPER_ENV
    assert pod["spec"]["containers"][0]["env"] == expected
    assert pod["spec"]["initContainers"][0]["env"] == expected


def test_lws_variables_errors_name_the_missing_key():
    pod = _pod("p-1", "ns", {keys.NAME: "p"}, "2")
    assert webhooks.add_lws_variables(pod) == \
        "Failure constructing environment variables, no group index label found for pod ns/p-1"


def test_pod_webhook_labels_match_upstream_integration_vectors():
    # test/integration/webhooks/pod_test.go: a worker gets exactly {name, worker-index, group-index};
    # a leader gets group-index from its name and the group key.
    worker = {"metadata": {"name": "test-1-1", "namespace": "default", "labels": {keys.NAME: "test", keys.GROUP_INDEX: "1"},
                           "annotations": {keys.SIZE: "2"}}, "spec": {"containers": []}}
    webhooks.default_pod(worker, None)
    assert worker["metadata"]["labels"] == {keys.NAME: "test", keys.WORKER_INDEX: "1", keys.GROUP_INDEX: "1"}
    leader = {"metadata": {"name": "test-1", "namespace": "default", "labels": {keys.NAME: "test", keys.WORKER_INDEX: "0"},
                           "annotations": {keys.SIZE: "2"}}, "spec": {"containers": []}}
    webhooks.default_pod(leader, None)
    assert leader["metadata"]["labels"] == {keys.NAME: "test", keys.WORKER_INDEX: "0", keys.GROUP_INDEX: "1",
                                            keys.GROUP_KEY: webhooks.group_key("default", "test-1")}


# ---------------------------------------------------------------- restart detection

@pytest.mark.parametrize("status, restarted", [
    # TestContainerRestarted (a)-(e).
    ({"phase": "Running", "initContainerStatuses": [{"restartCount": 1}]}, True),
    ({"phase": "Pending", "initContainerStatuses": [{"restartCount": 1}]}, True),
    ({"phase": "Running", "containerStatuses": [{"restartCount": 1}]}, True),
    ({"phase": "Failed", "containerStatuses": [{"restartCount": 1}]}, False),
    ({"phase": "Running", "containerStatuses": [{"restartCount": 0}], "initContainerStatuses": [{"restartCount": 0}]}, False),
])
def test_container_restarted(status, restarted):
    assert controller.container_restarted({"status": status}) is restarted


# ---------------------------------------------------------------- the LWS webhook

def _admit(obj: dict, profile="lws-v0.7"):
    cluster = reconciler.new_cluster(profile)
    return cluster.admit(copy.deepcopy({**obj, "metadata": {**obj["metadata"], "uid": "u"}}))


@pytest.mark.parametrize("patch, expected", [
    # Defaulting table (test/integration/webhooks/leaderworkerset_test.go), vector 17.
    ({"restartPolicy": ""}, {"restartPolicy": "RecreateGroupOnPodRestart"}),
    ({"restartPolicy": "Default"}, {"restartPolicy": "None"}),
])
def test_restart_policy_defaulting(patch, expected):
    obj = lws()
    obj["spec"]["leaderWorkerTemplate"].update(patch)
    stored = _admit(obj)
    assert {k: stored["spec"]["leaderWorkerTemplate"][k] for k in expected} == expected


def test_rollout_network_and_startup_defaults():
    obj = lws(rolloutStrategy={})
    del obj["spec"]["replicas"]
    del obj["spec"]["leaderWorkerTemplate"]["size"]
    stored = _admit(obj)["spec"]
    assert stored["rolloutStrategy"] == {"type": "RollingUpdate",
                                         "rollingUpdateConfiguration": {"partition": 0, "maxUnavailable": 1, "maxSurge": 0}}
    assert stored["networkConfig"] == {"subdomainPolicy": "Shared"}
    assert (stored["replicas"], stored["leaderWorkerTemplate"]["size"], stored["startupPolicy"]) == (1, 1, "LeaderCreated")


@pytest.mark.parametrize("spec", [
    # Vector 18: every one of these is refused.
    {"replicas": -1}, {"leaderWorkerTemplate": {"size": -1}}, {"replicas": 100000, "leaderWorkerTemplate": {"size": 1000000}},
    {"leaderWorkerTemplate": {"subGroupPolicy": {"subGroupSize": -1}}},
    {"leaderWorkerTemplate": {"size": 2, "subGroupPolicy": {"subGroupSize": 3}}},
    {"leaderWorkerTemplate": {"size": 4, "subGroupPolicy": {"subGroupSize": 2, "subGroupPolicyType": "LeaderExcluded"}}},
    {"rolloutStrategy": {"rollingUpdateConfiguration": {"maxUnavailable": "200%"}}},
    {"rolloutStrategy": {"rollingUpdateConfiguration": {"maxUnavailable": -1}}},
    {"rolloutStrategy": {"rollingUpdateConfiguration": {"maxSurge": "200%"}}},
    {"rolloutStrategy": {"rollingUpdateConfiguration": {"maxSurge": -1}}},
    {"rolloutStrategy": {"rollingUpdateConfiguration": {"maxUnavailable": 0, "maxSurge": 0}}},
    {"rolloutStrategy": {"rollingUpdateConfiguration": {"maxUnavailable": "25%", "maxSurge": 0}}},
])
def test_validation_refuses(spec):
    obj = lws()
    template = spec.pop("leaderWorkerTemplate", {})
    obj["spec"].update(spec)
    obj["spec"]["leaderWorkerTemplate"].update(template)
    obj["spec"].setdefault("rolloutStrategy", {}).setdefault("rollingUpdateConfiguration", {})
    admitted = _admit_defaults(obj)
    assert webhooks.validate_lws(admitted, None), spec


def test_validation_allows():
    # Vector 19: maxUnavailable above replicas, maxSurge 10, replicas 0 with 25%/25%.
    for config, replicas in (({"maxUnavailable": 10}, 2), ({"maxSurge": 10}, 2), ({"maxUnavailable": "25%", "maxSurge": "25%"}, 0)):
        obj = lws(replicas=replicas, rolloutStrategy={"rollingUpdateConfiguration": config})
        assert webhooks.validate_lws(_admit_defaults(obj), None) == []


def _admit_defaults(obj: dict) -> dict:
    """CRD defaults and the defaulter, without the validating webhook (called by the test)."""
    cluster = reconciler.new_cluster("lws-v0.7")
    from reconciler import crds, schema
    served = crds.schemas(cluster.profile.crd_dirs)[(keys.GROUP, "v1", keys.KIND)][0]
    out, _ = schema.prune_and_default(copy.deepcopy(obj), served)
    webhooks.default_lws(out, cluster)
    return out


def test_scaled_value_rounds_like_intstr():
    # GetScaledValueFromIntOrPercent: 25% of 2 rounds down to 0 (maxUnavailable) and up to 1 (maxSurge).
    assert webhooks.scaled_value("25%", 2, round_up=False) == 0
    assert webhooks.scaled_value("25%", 2, round_up=True) == 1
    assert webhooks.scaled_value("abc", 2, round_up=True) is None
    assert webhooks.scaled_value(3, 2, round_up=False) == 3


# ---------------------------------------------------------------- StatefulSets LWS builds

def test_leader_statefulset_matches_upstream_apply_config():
    # TestLeaderStatefulSetApplyConfig case 1 (vector 20): replicas 1, size 1, maxUnavailable 1.
    obj = lws(replicas=1, rolloutStrategy={"type": "RollingUpdate",
                                           "rollingUpdateConfiguration": {"partition": 0, "maxUnavailable": 1, "maxSurge": 0}},
              networkConfig={"subdomainPolicy": "Shared"})
    obj["spec"]["leaderWorkerTemplate"]["size"] = 1
    obj["metadata"]["uid"] = "u"
    sts = controller.leader_statefulset(obj, 0, 1, "key")
    assert sts["metadata"]["labels"] == {keys.NAME: "test-sample", keys.REVISION: "key"}
    assert sts["metadata"]["annotations"] == {keys.REPLICAS: "1"}
    spec = sts["spec"]
    assert spec["replicas"] == 1 and spec["serviceName"] == "test-sample" and spec["podManagementPolicy"] == "Parallel"
    assert spec["selector"] == {"matchLabels": {keys.NAME: "test-sample", keys.WORKER_INDEX: "0"}}
    assert spec["template"]["metadata"] == {"labels": {keys.WORKER_INDEX: "0", keys.NAME: "test-sample", keys.REVISION: "key"},
                                            "annotations": {keys.SIZE: "1"}}
    assert spec["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "partition": 0}}
    assert "ordinals" not in spec


def test_worker_statefulset_matches_upstream_apply_config():
    # TestConstructWorkerStatefulSetApplyConfiguration "1 replica, size 1" (vector 21): replicas 0.
    obj = lws(replicas=1, networkConfig={"subdomainPolicy": "Shared"})
    obj["spec"]["leaderWorkerTemplate"]["size"] = 1
    obj["metadata"]["uid"] = "u"
    leader = {"apiVersion": "v1", "kind": "Pod",
              "metadata": {"name": "test-sample", "namespace": "default", "uid": "p",
                           "labels": {keys.GROUP_INDEX: "1", keys.GROUP_KEY: "test-key", keys.REVISION: "rev"}}}
    sts = controller.worker_statefulset(leader, obj, {"data": revision.patch(obj)})
    assert sts["metadata"]["labels"] == {keys.GROUP_INDEX: "1", keys.NAME: "test-sample", keys.GROUP_KEY: "test-key",
                                         keys.REVISION: "rev"}
    assert sts["spec"]["replicas"] == 0 and sts["spec"]["ordinals"] == {"start": 1}
    assert sts["spec"]["selector"] == {"matchLabels": {keys.GROUP_INDEX: "1", keys.NAME: "test-sample", keys.GROUP_KEY: "test-key"}}
    assert sts["spec"]["template"]["metadata"]["annotations"] == {keys.SIZE: "1", keys.LEADER_NAME: "test-sample"}
    assert (sts["spec"]["serviceName"], sts["spec"]["podManagementPolicy"]) == ("test-sample", "Parallel")


# ---------------------------------------------------------------- revisions

def test_revision_covers_template_and_network_only():
    # getPatch: replicas, rolloutStrategy and startupPolicy changes keep the key; size and subdomain policy change it.
    base = lws(networkConfig={"subdomainPolicy": "Shared"})
    key = revision.key_of(base)
    assert revision.key_of(lws(replicas=7, startupPolicy="LeaderReady", networkConfig={"subdomainPolicy": "Shared"})) == key
    assert revision.key_of(lws(networkConfig={"subdomainPolicy": "UniquePerReplica"})) != key
    bigger = lws(networkConfig={"subdomainPolicy": "Shared"})
    bigger["spec"]["leaderWorkerTemplate"]["size"] = 3
    assert revision.key_of(bigger) != key
    # A nil networkConfig counts as Shared.
    assert revision.key_of(lws()) == key


def test_revision_key_is_the_one_the_real_v0_7_0_manager_computes():
    """docs/results/lws-v0.7.0: for admission/defaults' LWS the real manager (apimachinery v0.33.3,
    whose ObjectMeta writes creationTimestamp: null) made revision test-sample-59cc48d6d5-1."""
    defaulted = {"metadata": {"name": "test-sample", "namespace": "default"},
                 "spec": {"replicas": 2, "networkConfig": {"subdomainPolicy": "Shared"},
                          "leaderWorkerTemplate": {"size": 3, "restartPolicy": "RecreateGroupOnPodRestart", "workerTemplate": {
                              "spec": {"containers": [{"name": "worker", "image": "nginxinc/nginx-unprivileged:1.27"}]}}}}}
    assert revision.key_of(defaulted) == "59cc48d6d5"


# ---------------------------------------------------------------- rolling update partition

@pytest.mark.parametrize("states, replicas, step, current, expected", [
    # Nothing updated yet, all ready: the partition moves down by one step from the top.
    ([(True, False)] * 4, 4, 1, 4, 3),
    # The top group is updated and ready: the next one below it.
    ([(True, False)] * 3 + [(True, True)], 4, 1, 3, 2),
    # The top group is updated but not ready yet: no progress (partition stays).
    ([(True, False)] * 3 + [(False, True)], 4, 1, 3, 3),
    # A not-ready group below the step already uses up maxUnavailable 1: the partition stays where it is.
    ([(False, False)] + [(True, False)] * 3, 4, 1, 4, 4),
    # With maxUnavailable 2 the step covers it: one more group can go.
    ([(False, False)] + [(True, False)] * 3, 4, 2, 4, 3),
    # The partition only moves down.
    ([(True, True)] * 4, 4, 1, 1, 0),
])
def test_rolling_update_partition(states, replicas, step, current, expected):
    assert controller.rolling_update_partition(states, replicas, step, current) == expected


def test_set_condition_rules():
    # TestSetCondition / TestExclusiveConditionTypes: Available excludes Progressing and UpdateInProgress.
    conditions = [{"type": "Available", "status": "True"}]
    assert controller._set_condition(conditions, {"type": "Progressing", "status": "True"})
    assert conditions == [{"type": "Available", "status": "False"}, {"type": "Progressing", "status": "True"}]
    assert not controller._set_condition([{"type": "Available", "status": "True"}], {"type": "Progressing", "status": "False"})
    assert not controller._set_condition([{"type": "Progressing", "status": "False"}], {"type": "Progressing", "status": "False"})
    updating = [{"type": "UpdateInProgress", "status": "True"}]
    controller._set_condition(updating, {"type": "Progressing", "status": "True"})
    assert updating[0]["status"] == "True"  # Progressing and UpdateInProgress may both be true


# ---------------------------------------------------------------- bad input never raises

def test_refused_leader_statefulset_is_a_reconcile_error_not_an_exception():
    obj = lws()
    obj["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["restartPolicy"] = "Never"
    result = reconciler.render([obj], "lws-v0.7")
    assert not result.rejections
    assert result.cluster.reconcile_errors == [
        'LeaderWorkerSet default/test-sample: StatefulSet.apps "test-sample" is invalid: '
        'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"']
    assert [(e["type"], e["reason"], e["message"]) for e in result.cluster.events if e["reason"] == "FailedCreate"] == [
        ("Warning", "FailedCreate", "Failed to create leader statefulset test-sample")]


def test_a_worker_pod_without_worker_index_is_a_reconcile_error():
    cluster = reconciler.new_cluster("lws-v0.7")
    reconciler.render([lws()], cluster=cluster)
    pod = cluster.get("", "Pod", "default", "test-sample-0-1")
    del pod["metadata"]["labels"][keys.WORKER_INDEX]
    cluster.update(pod)
    cluster.settle()
    assert cluster.reconcile_errors == [
        "Pod default/test-sample-0-1: leaderworkerset.sigs.k8s.io/worker-index label is unexpected missing"]


def test_faults_select_by_group_and_worker_index():
    cluster = reconciler.new_cluster("lws-v0.7")
    reconciler.render([lws()], cluster=cluster)
    chosen = faults.select_pods(cluster, {"fault": "podDeleted", "lws": "test-sample", "group": 1, "pod": 0})
    assert [p["metadata"]["name"] for p in chosen] == ["test-sample-1"]
    chosen = faults.select_pods(cluster, {"fault": "podDeleted", "lws": "test-sample", "pod": 1})
    assert [p["metadata"]["name"] for p in chosen] == ["test-sample-0-1", "test-sample-1-1"]


def test_a_pod_template_go_cannot_decode_is_a_400_from_the_defaulter():
    # controller-runtime decodes the LWS (pod templates included) before defaulting: admission.Errored 400.
    obj = lws()
    obj["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"] = "c"
    [rejected] = reconciler.render([obj], "lws-v0.7").rejections
    assert rejected.error.code == 400
    assert rejected.error.message == (
        'admission webhook "mleaderworkerset.kb.io" denied the request: json: cannot unmarshal string into Go struct '
        'field PodSpec.spec.leaderWorkerTemplate.workerTemplate.spec.containers of type []v1.Container')
