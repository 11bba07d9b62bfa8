"""JobSet group keys (PR #822, v0.9) and the pod webhook's priority label (PR #1077, v0.11)."""

import pytest

from reconciler import profiles
from reconciler.jobset.controller import group_keys
from reconciler.jobset.pod_webhook import PRIORITY, label_priority

JOBSET = {"spec": {"replicatedJobs": [
    {"name": "a", "groupName": "g1", "replicas": 2},
    {"name": "b", "groupName": "g2", "replicas": 1},
    {"name": "c", "groupName": "g1", "replicas": 3},
]}}


@pytest.mark.parametrize("rj, index, expected", [
    (0, 1, ("g1", "5", "1")),   # first member of g1
    (1, 0, ("g2", "1", "0")),   # alone in its group
    (2, 2, ("g1", "5", "4")),   # after a's 2 replicas; b (other group) not counted
])
def test_group_keys(rj, index, expected):
    keys = group_keys(JOBSET, JOBSET["spec"]["replicatedJobs"][rj], index)
    assert (keys["jobset.sigs.k8s.io/group-name"], keys["jobset.sigs.k8s.io/group-replicas"],
            keys["jobset.sigs.k8s.io/job-group-index"]) == expected


class FakeCluster:
    def __init__(self, profile):
        self.profile = profiles.get(profile)


def pod(annotations=None, **spec):
    return {"metadata": {"annotations": annotations or {}}, "spec": spec}


JS_POD = {"jobset.sigs.k8s.io/jobset-name": "js"}


@pytest.mark.parametrize("obj, profile, expected", [
    (pod(JS_POD), "jobset-v0.12", "0"),
    (pod(JS_POD, priority=2000001000), "jobset-v0.12", "2000001000"),  # as Priority admission set it
    (pod(JS_POD), "trainer-v2.3", "0"),                  # Trainer v2.3 runs JobSet v0.12.0
    (pod(JS_POD), "jobset-v0.10", None),                 # v0.10: exclusive-placement pods only
    (pod(JS_POD), "trainer-v2.1", None),
    (pod(), "jobset-v0.12", None),                       # not a JobSet pod
    (pod({**JS_POD, "alpha.jobset.sigs.k8s.io/node-selector": "true"}), "jobset-v0.12", None),
])
def test_priority_label(obj, profile, expected):
    label_priority(obj, FakeCluster(profile))
    assert (obj["metadata"].get("labels") or {}).get(PRIORITY) == expected


@pytest.mark.parametrize("spec, priority", [
    ({"priorityClassName": "system-node-critical"}, 2000001000),     # SystemCriticalPriority + 1000
    ({"priorityClassName": "system-cluster-critical"}, 2000000000),  # SystemCriticalPriority
    ({}, None),                        # 0 on a real apiserver; render leaves it out, as live normalising does
    ({"priorityClassName": "batch-high"}, None),  # not in render's cluster (a real one refuses the Pod)
])
def test_priority_admission_sets_spec_priority_from_builtin_class(spec, priority):
    from reconciler import builtin
    obj = builtin.default({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": dict(spec)})
    assert obj["spec"].get("priority") == priority


@pytest.mark.parametrize("profile, uid_and_group", [("trainer-v2.0", False), ("trainer-v2.1", True),
                                                     ("jobset-v0.10", True)])
def test_jobset_uid_and_group_keys_since_v09(profile, uid_and_group):
    from reconciler import new_cluster
    cluster = new_cluster(profile)
    cluster.create({"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "js"},
                    "spec": {"replicatedJobs": [{"name": "w", "template": {"spec": {"template": {"spec": {
                        "containers": [{"name": "main", "image": "busybox"}]}}}}}]}})
    cluster.settle()
    labels = cluster.get("batch", "Job", "default", "js-w-0")["metadata"]["labels"]
    assert ("jobset.sigs.k8s.io/jobset-uid" in labels) is uid_and_group
    assert ("jobset.sigs.k8s.io/group-name" in labels) is uid_and_group
