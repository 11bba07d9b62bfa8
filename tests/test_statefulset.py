"""The StatefulSet stand-in (reconciler/statefulset.py) and the ControllerRevision hashing it shares with LWS.

Expected values come from Kubernetes v1.35 (pkg/controller/statefulset: stateful_set_control.go,
stateful_set_utils.go; pkg/controller/history; pkg/apis/apps/v1/defaults.go), from the FNV
specification's published test vectors, and from apimachinery's ``rand`` alphabet; each test says which.
"""

from __future__ import annotations

import pytest

import reconciler
from reconciler import builtin, history, meta, profiles, statefulset
from reconciler.cluster import Cluster
from reconciler.kubelet import FakeKubelet

LWS = profiles.get("lws-v0.7")


def sts(name="web", replicas=3, policy="Parallel", start=None, **spec) -> dict:
    obj = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name, "namespace": "default"},
           "spec": {"replicas": replicas, "podManagementPolicy": policy, "serviceName": "svc",
                    "selector": {"matchLabels": {"app": name}},
                    "template": {"metadata": {"labels": {"app": name}},
                                 "spec": {"containers": [{"name": "c", "image": "busybox:1.36"}]}}, **spec}}
    if start is not None:
        obj["spec"]["ordinals"] = {"start": start}
    return obj


def cluster(kubelet=True) -> Cluster:
    c = Cluster(LWS)
    c.controllers = [statefulset.StatefulSetController()] + ([FakeKubelet()] if kubelet else [])
    return c


def pods(c: Cluster) -> list[str]:
    return sorted(p["metadata"]["name"] for p in c.list("", "Pod"))


def ready(c: Cluster, name: str) -> None:
    pod = c.get("", "Pod", "default", name)
    pod["status"] = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    c.update(pod)


# ---------------------------------------------------------------- names and ordinals

@pytest.mark.parametrize("name, parent, ordinal", [
    # LWS v0.7.0 pkg/utils/statefulset TestGetParentNameAndOrdinal (the same regex as kube-controller-manager's).
    ("lws-samples-132", "lws-samples", 132), ("lws-samples-132-u", "", -1), ("lws-samples-", "", -1),
    ("lws-samples-0", "lws-samples", 0), ("lws-samples--1", "lws-samples-", 1), ("lws-samples1", "", -1),
    ("lws-samples-1-0", "lws-samples-1", 0),
    # strconv.ParseInt(_, 10, 32) fails beyond int32: the parent is kept, the ordinal is -1.
    ("web-2147483648", "web", -1),
])
def test_parent_and_ordinal(name, parent, ordinal):
    assert statefulset.parent_and_ordinal(name) == (parent, ordinal)


# ---------------------------------------------------------------- hashing

def test_fnv32_is_fnv1_not_fnv1a():
    # FNV spec test vectors (draft-eastlake-fnv): FNV-1 32 of "" = 0x811c9dc5, of "a" = 0x050c5d7e
    # (FNV-1a would give 0xe40c292c). hash/fnv.New32 is FNV-1.
    assert history.fnv32(b"") == 0x811C9DC5
    assert history.fnv32(b"a") == 0x050C5D7E
    assert history.fnv32(b"foobar") == 0x31F0B262


def test_safe_encode_maps_digits_by_code_point():
    # rand.SafeEncodeString: alphanums[rune % 27] over "bcdfghjklmnpqrstvwxz2456789"; '0' is 48 → index 21.
    assert history.safe_encode("0123456789") == "456789bcdf"


def test_go_json_sorts_keys_and_escapes_html():
    # encoding/json on a map[string]interface{}: keys sorted, compact, <>& as \u003c \u003e \u0026.
    assert history.go_json({"b": 1, "a": "<&>", "$patch": "replace"}) == b'{"$patch":"replace","a":"\\u003c\\u0026\\u003e","b":1}'


def test_revision_hash_includes_the_collision_count():
    # HashControllerRevision writes the probe (collision count) after the data.
    data = {"spec": {"template": {"$patch": "replace"}}}
    assert history.hash_revision(data, 0) != history.hash_revision(data, 1)
    expected = history.safe_encode(str(history.fnv32(b"0", history.fnv32(history.go_json(data)))))
    assert history.hash_revision(data, 0) == expected


def test_stored_template_has_the_apiserver_defaults():
    # SetDefaults_PodSpec / SetDefaults_Container (k8s v1.35 pkg/apis/core/v1/defaults.go); Go encodes an
    # absent metadata as {} and resources as {}.
    template = {"spec": {"containers": [{"name": "a", "image": "nginx"}, {"name": "b", "image": "nginx:1.27",
                                                                         "ports": [{"containerPort": 80}]},
                                        {"name": "c", "image": "reg.io/x/nginx:latest"}]}}
    stored = statefulset.stored_template(template)
    assert stored["metadata"] == {}
    assert {k: stored["spec"][k] for k in ("dnsPolicy", "restartPolicy", "securityContext", "terminationGracePeriodSeconds",
                                           "schedulerName")} == {
        "dnsPolicy": "ClusterFirst", "restartPolicy": "Always", "securityContext": {},
        "terminationGracePeriodSeconds": 30, "schedulerName": "default-scheduler"}
    a, b, c = stored["spec"]["containers"]
    assert (a["imagePullPolicy"], b["imagePullPolicy"], c["imagePullPolicy"]) == ("Always", "IfNotPresent", "Always")
    assert a["terminationMessagePath"] == "/dev/termination-log" and a["terminationMessagePolicy"] == "File"
    assert a["resources"] == {} and b["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    assert "dnsPolicy" not in template["spec"]  # the input is not changed


# ---------------------------------------------------------------- defaults and validation

def test_statefulset_defaults():
    # SetDefaults_StatefulSet; MaxUnavailableStatefulSet is off by default in v1.35, so maxUnavailable is dropped.
    obj = builtin.default({"kind": "StatefulSet", "spec": {"updateStrategy": {"type": "RollingUpdate",
                                                                             "rollingUpdate": {"maxUnavailable": 2}}}})
    assert obj["spec"] == {"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
                           "podManagementPolicy": "OrderedReady",
                           "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"},
                           "replicas": 1, "revisionHistoryLimit": 10}


def test_statefulset_validation_messages():
    # ValidateStatefulSetSpec wording (k8s v1.35 pkg/apis/apps/validation).
    bad = sts()
    bad["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    bad["spec"]["template"]["metadata"]["labels"] = {"app": "other"}
    builtin.default(bad)
    errors = [(e.field, e.type, e.detail) for e in builtin.validate(bad)]
    assert errors == [
        ("spec.template.metadata.labels", "Invalid value", "`selector` does not match template `labels`"),
        ("spec.template.spec.restartPolicy", "Unsupported value", 'supported values: "Always"'),
    ]


# ---------------------------------------------------------------- pods

def test_parallel_creates_every_pod_with_identity():
    c = cluster(kubelet=False)
    c.create(sts(start=1))
    c.settle()
    assert pods(c) == ["web-1", "web-2", "web-3"]
    pod = c.get("", "Pod", "default", "web-2")
    revision = c.get("apps", "StatefulSet", "default", "web")["status"]["updateRevision"]
    # newStatefulSetPod: GetPodFromTemplate (generateName <set>-), initIdentity (hostname, subdomain),
    # updateIdentity (pod-name, pod-index), setPodRevision.
    assert pod["metadata"]["generateName"] == "web-"
    assert pod["metadata"]["labels"] == {"app": "web", "statefulset.kubernetes.io/pod-name": "web-2",
                                         "apps.kubernetes.io/pod-index": "2", "controller-revision-hash": revision}
    assert (pod["spec"]["hostname"], pod["spec"]["subdomain"]) == ("web-2", "svc")
    assert pod["metadata"]["ownerReferences"][0]["kind"] == "StatefulSet"
    assert revision.startswith("web-")
    revisions = c.list("apps", "ControllerRevision")
    assert [r["metadata"]["name"] for r in revisions] == [revision]
    assert revisions[0]["revision"] == 1 and revisions[0]["metadata"]["labels"]["controller.kubernetes.io/hash"] == revision[4:]


def test_status_counts_created_pods_and_ready_ones():
    # computeReplicaStatus: replicas counts created pods (the apiserver makes them Pending), ready only
    # Running+Ready ones; one revision, so current == update.
    c = cluster(kubelet=False)
    c.create(sts(replicas=2))
    c.settle()
    status = c.get("apps", "StatefulSet", "default", "web")["status"]
    assert (status["replicas"], status.get("readyReplicas", 0), status["availableReplicas"]) == (2, 0, 0)
    assert status["currentRevision"] == status["updateRevision"]
    ready(c, "web-0")
    c.settle()
    status = c.get("apps", "StatefulSet", "default", "web")["status"]
    assert (status["replicas"], status["readyReplicas"], status["currentReplicas"]) == (2, 1, 2)


def test_ordered_ready_waits_for_each_pod():
    # OrderedReady (monotonic): the sync stops after a creation and at a pod not Running and Ready.
    c = cluster(kubelet=False)
    c.create(sts(policy="OrderedReady"))
    c.settle()
    assert pods(c) == ["web-0"]
    ready(c, "web-0")
    c.settle()
    assert pods(c) == ["web-0", "web-1"]
    ready(c, "web-1")
    ready(c, "web-0")
    c.settle()
    assert pods(c) == ["web-0", "web-1", "web-2"]


def test_deleted_pod_is_made_again_once_gone():
    c = cluster()
    c.create(sts())
    c.settle()
    old = c.get("", "Pod", "default", "web-1")["metadata"]["uid"]
    c.delete(c.get("", "Pod", "default", "web-1"))
    c.settle()
    new = c.get("", "Pod", "default", "web-1")
    assert new["metadata"]["uid"] != old and new["status"]["phase"] == "Running"


def test_failed_pod_is_deleted_and_made_again():
    # processReplica: a Failed (or Succeeded) pod is deleted; a new one is made once it is gone.
    c = cluster()
    c.create(sts(replicas=1))
    c.settle()
    pod = c.get("", "Pod", "default", "web-0")
    pod["status"]["phase"] = "Failed"
    c.update(pod)
    c.settle()
    assert c.get("", "Pod", "default", "web-0")["status"]["phase"] == "Running"
    assert c.get("", "Pod", "default", "web-0")["metadata"]["uid"] != pod["metadata"]["uid"]


def test_scale_down_deletes_the_highest_ordinals():
    c = cluster()
    c.create(sts(replicas=3))
    c.settle()
    obj = c.get("apps", "StatefulSet", "default", "web")
    obj["spec"]["replicas"] = 1
    c.update(obj)
    c.settle()
    assert pods(c) == ["web-0"]


def test_rolling_update_respects_the_partition():
    # A new template: from the highest ordinal down to the partition, pods not at the update revision are
    # replaced one at a time; ordinals below the partition keep the current revision.
    c = cluster()
    c.create(sts(replicas=3, updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"partition": 1}}))
    c.settle()
    first = c.get("apps", "StatefulSet", "default", "web")["status"]["currentRevision"]
    obj = c.get("apps", "StatefulSet", "default", "web")
    obj["spec"]["template"]["spec"]["containers"][0]["image"] = "busybox:1.37"
    c.update(obj)
    c.settle()
    status = c.get("apps", "StatefulSet", "default", "web")["status"]
    images = {p["metadata"]["name"]: p["spec"]["containers"][0]["image"] for p in c.list("", "Pod")}
    assert images == {"web-0": "busybox:1.36", "web-1": "busybox:1.37", "web-2": "busybox:1.37"}
    assert status["currentRevision"] == first and status["updateRevision"] != first
    assert (status["currentReplicas"], status["updatedReplicas"]) == (1, 2)
    assert len(c.list("apps", "ControllerRevision")) == 2


def test_rolling_update_completes_and_moves_the_current_revision():
    c = cluster()
    c.create(sts(replicas=2))
    c.settle()
    obj = c.get("apps", "StatefulSet", "default", "web")
    obj["spec"]["template"]["spec"]["containers"][0]["image"] = "busybox:1.37"
    c.update(obj)
    c.settle()
    status = c.get("apps", "StatefulSet", "default", "web")["status"]
    # completeRollingUpdate: all replicas updated and ready → current = update.
    assert status["currentRevision"] == status["updateRevision"] and status["currentReplicas"] == 2
    assert {p["spec"]["containers"][0]["image"] for p in c.list("", "Pod")} == {"busybox:1.37"}


def test_a_pod_left_by_an_earlier_set_blocks_its_ordinal():
    # A terminating pod of the same name that the set does not own: the create is AlreadyExists, which
    # fails the first slow-start batch (ordinal 0 alone), so with Parallel pods web-1 waits too
    # (k8s v1.35 runForAll → slowStartBatch; recorded live: the worker set made no pod beside a held one).
    c = cluster(kubelet=False)
    c.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-0", "namespace": "default",
                                                              "finalizers": ["hold"]},
              "spec": {"containers": [{"name": "c", "image": "busybox:1.36"}]}})
    c.delete(c.get("", "Pod", "default", "web-0"))
    c.create(sts(replicas=2))
    c.settle()
    assert pods(c) == ["web-0"]
    assert "ownerReferences" not in c.get("", "Pod", "default", "web-0")["metadata"]
    held = c.get("", "Pod", "default", "web-0")
    held["metadata"]["finalizers"] = []
    held["status"] = {"phase": "Failed"}
    c.update(held)
    c.settle()
    assert c.get("", "Pod", "default", "web-0")["metadata"]["ownerReferences"][0]["name"] == "web"


def test_foreground_deletion_reaches_the_pods_through_the_set():
    # Garbage collector: an owner deleted in Foreground waits for its blocking dependents; a dependent
    # with dependents of its own (the StatefulSet) is deleted in Foreground too (attemptToDeleteItem).
    c = cluster(kubelet=False)
    owner = c.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "owner", "namespace": "default"}})
    obj = sts(replicas=1)
    obj["metadata"]["ownerReferences"] = [meta.controller_ref(owner)]
    c.create(obj)
    c.settle()
    pod = c.get("", "Pod", "default", "web-0")
    pod["metadata"]["finalizers"] = ["hold"]
    c.update(pod)
    c.delete(c.get("", "ConfigMap", "default", "owner"), propagation="Foreground")
    assert c.get("apps", "StatefulSet", "default", "web")["metadata"]["finalizers"] == ["foregroundDeletion"]
    assert c.get("", "ConfigMap", "default", "owner")["metadata"]["finalizers"] == ["foregroundDeletion"]
    pod = c.get("", "Pod", "default", "web-0")
    pod["metadata"]["finalizers"] = []
    pod["status"] = {"phase": "Failed"}
    c.update(pod)
    assert c.find("apps", "StatefulSet", "default", "web") is None
    assert c.find("", "ConfigMap", "default", "owner") is None


def test_a_statefulset_go_cannot_decode_is_a_400():
    # kube-apiserver decodes built-in kinds into their Go types first (sigs.k8s.io/json wording).
    bad = sts()
    bad["spec"]["replicas"] = "two"
    result = reconciler.render([bad], "lws-v0.7")
    [rejected] = result.rejections
    assert (rejected.error.code, rejected.error.reason) == (400, "BadRequest")
    assert rejected.error.message == ('StatefulSet in version "v1" cannot be handled as a StatefulSet: json: cannot '
                                      'unmarshal string into Go struct field StatefulSetSpec.spec.replicas of type int32')
    assert result.cluster.find("apps", "StatefulSet", "default", "web") is None


def test_parallel_creates_in_slow_start_batches_and_stops_after_a_failed_batch():
    from reconciler.statefulset import slow_start_batches

    assert slow_start_batches(list(range(8))) == [[0], [1, 2], [3, 4, 5, 6], [7]]
    # web-2 (second batch, with web-1) is taken: web-1 is still made, web-3 (third batch) is not.
    c = cluster(kubelet=False)
    c.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-2", "namespace": "default",
                                                              "finalizers": ["hold"]},
              "spec": {"containers": [{"name": "c", "image": "busybox:1.36"}]}})
    c.delete(c.get("", "Pod", "default", "web-2"))
    c.create(sts(replicas=4))
    c.settle()
    assert pods(c) == ["web-0", "web-1", "web-2"]
