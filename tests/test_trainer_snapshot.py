"""Runtime snapshots (Trainer v2.3, KEP-2599): the ConfigMap, its YAML text, and builds that read it.

Expected texts are upstream output: the ConfigMap Trainer v2.3.0 wrote in the live run
(docs/results/trainer-v2.3.0/conformance.log, admission/runtimeref-defaults), and what Go's
sigs.k8s.io/yaml v1.6.0 and resource.Quantity (apimachinery v0.36.2) print for the vectors below.
"""

import copy

import pytest

from conformance.normalize import normalize
from reconciler import meta, render
from reconciler.trainer import goyaml, gotyped, snapshot

#: Trainer v2.3.0's snapshot of the torch base runtime, after normalization (apiserver-made
#: metadata lines dropped).
UPSTREAM_TORCH_SNAPSHOT = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: torch-distributed
spec:
  mlPolicy:
    numNodes: 1
    torch: {}
  template:
    metadata: {}
    spec:
      replicatedJobs:
      - groupName: default
        name: node
        replicas: 1
        template:
          metadata:
            labels:
              trainer.kubeflow.org/trainjob-ancestor-step: trainer
          spec:
            template:
              metadata: {}
              spec:
                containers:
                - command:
                  - torchrun
                  - /workspace/train.py
                  image: ghcr.io/example/torch:2.7
                  name: node
                  resources: {}
"""


def _snapshot(result, name="test-job-runtime-snapshot"):
    return result.cluster.find("", "ConfigMap", "default", name)


def test_v23_writes_the_snapshot_upstream_writes(torch_runtime, torch_trainjob):
    result = render([torch_runtime, torch_trainjob], profile="trainer-v2.3")
    cm = _snapshot(result)
    trainjob = result.cluster.find("trainer.kubeflow.org", "TrainJob", "default", "test-job")
    assert cm["metadata"]["ownerReferences"] == [{
        "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "name": "test-job",
        "uid": trainjob["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}]
    assert "labels" not in cm["metadata"] and list(cm["data"]) == ["runtime"]
    assert normalize([cm])[0]["data"]["runtime"] == UPSTREAM_TORCH_SNAPSHOT


def test_v21_keeps_no_snapshot(torch_runtime, torch_trainjob):
    assert _snapshot(render([torch_runtime, torch_trainjob], profile="trainer-v2.1")) is None


def _rebuild_after_runtime_edit(torch_runtime, torch_trainjob, profile):
    """Render, change the runtime's image, delete the JobSet, settle: which image is rebuilt?"""
    result = render([torch_runtime, torch_trainjob], profile=profile)
    cluster = result.cluster
    runtime = cluster.find("trainer.kubeflow.org", "ClusterTrainingRuntime", "", "torch-distributed")
    edited = copy.deepcopy(runtime)
    edited["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"][
        "containers"][0]["image"] = "ghcr.io/example/torch:9.9"
    cluster.update(edited)
    cluster.delete(cluster.find("jobset.x-k8s.io", "JobSet", "default", "test-job"))
    cluster.settle()
    jobset = cluster.find("jobset.x-k8s.io", "JobSet", "default", "test-job")
    return jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]["image"]


def test_later_builds_read_the_snapshot_not_the_runtime(torch_runtime, torch_trainjob):
    assert _rebuild_after_runtime_edit(torch_runtime, torch_trainjob, "trainer-v2.3") == "ghcr.io/example/torch:2.7"
    assert _rebuild_after_runtime_edit(torch_runtime, torch_trainjob, "trainer-v2.1") == "ghcr.io/example/torch:9.9"


def test_snapshot_of_another_owner_stops_the_build(torch_runtime, torch_trainjob):
    foreign = {"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "test-job-runtime-snapshot", "namespace": "default"},
               "data": {"runtime": "kind: ClusterTrainingRuntime\n"}}
    result = render([torch_runtime, foreign, torch_trainjob], profile="trainer-v2.3")
    assert result.cluster.find("jobset.x-k8s.io", "JobSet", "default", "test-job") is None
    assert result.cluster.reconcile_errors == [
        "TrainJob default/test-job: getting runtime snapshot: invalid runtime snapshot: "
        "a snapshot configmap exists but is owned by another object"]


def test_snapshot_naming_another_runtime_is_refused(torch_runtime, torch_trainjob):
    result = render([torch_runtime, torch_trainjob], profile="trainer-v2.3")
    trainjob = result.cluster.find("trainer.kubeflow.org", "TrainJob", "default", "test-job")
    cm = meta.clone(_snapshot(result))
    cm["data"]["runtime"] = cm["data"]["runtime"].replace("name: torch-distributed", "name: other")
    with pytest.raises(snapshot.SnapshotError, match=(
            'expecting a runtime with name, api group and kind of "torch-distributed", "trainer.kubeflow.org", '
            '"ClusterTrainingRuntime" but found runtime with name, api group and kind of "other", '
            '"trainer.kubeflow.org", "ClusterTrainingRuntime"')):
        snapshot.read(cm, trainjob)


# ---------------------------------------------------------------- Go's YAML and quantities

@pytest.mark.parametrize("value, text", [
    # Written by sigs.k8s.io/yaml v1.6.0 (go.yaml.in/yaml/v2 v2.4.3) for the same JSON.
    ({"s": ["y", "No", "0o17", "017", "09", "1e3", ".5", "1:20", "2026-01-01", "", "=", "<<", "-De"]},
     's:\n- "y"\n- "No"\n- "0o17"\n- "017"\n- "09"\n- "1e3"\n- ".5"\n- "1:20"\n- "2026-01-01"\n- ""\n- =\n- <<\n- -De\n'),
    ({"s": ["a: b", "a #b", "#c", "- x", "line1\nline2"]},
     "s:\n- 'a: b'\n- 'a #b'\n- '#c'\n- '- x'\n- |-\n  line1\n  line2\n"),
    ({"a10": 1, "a2": 2, "a1": 3, "b.c": 4, "bc": 5, "b-c": 6, "A": 7, "_x": 8},
     "_x: 8\nA: 7\na1: 3\na2: 2\na10: 1\nb-c: 6\nb.c: 4\nbc: 5\n"),
    ({"e": {}, "l": [], "n": None, "t": True, "i": [1, -2]}, "e: {}\ni:\n- 1\n- -2\nl: []\n\"n\": null\nt: true\n"),
    ({"cmd": "python -c 'print(1)' && echo ok; torchrun --nproc_per_node=4 --nnodes=2 train.py --config /etc/x.yaml"},
     "cmd: python -c 'print(1)' && echo ok; torchrun --nproc_per_node=4 --nnodes=2 train.py\n  --config /etc/x.yaml\n"),
])
def test_goyaml_matches_sigs_yaml(value, text):
    assert goyaml.dump(value) == text


@pytest.mark.parametrize("given, printed", [
    # resource.ParseQuantity(given).String(), apimachinery v0.36.2.
    (4, "4"), ("2.5", "2500m"), (2.5, "2500m"), ("0.7", "700m"), ("1000", "1k"), ("1500", "1500"),
    ("2000k", "2M"), ("1.5Gi", "1536Mi"), ("0.5Ki", "512"), ("2048Ki", "2Mi"), ("0.001Ki", "1024m"),
    ("1e3", "1e3"), ("1E3", "1E3"), ("12e-1", "1200e-3"), ("0.0000000001", "1n"),
])
def test_quantities_print_as_go_prints_them(given, printed):
    assert gotyped.canonical_quantity(given) == printed


def test_go_round_trip_fills_structs_and_drops_empty_slices():
    runtime = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainingRuntime",
               "metadata": {"name": "r", "labels": {}},
               "spec": {"mlPolicy": {"torch": {}}, "template": {"spec": {"replicatedJobs": [
                   {"name": "node", "template": {"spec": {"template": {"spec": {"initContainers": [],
                    "containers": [{"name": "node", "command": [], "resources": {"requests": {"cpu": "2.5"}}}]}}}}},
                   {"name": "bare", "template": {}}]}}}}
    typed = gotyped.runtime(runtime)
    assert typed["metadata"] == {"name": "r"}
    assert typed["spec"]["mlPolicy"] == {"torch": {}}
    node, bare = typed["spec"]["template"]["spec"]["replicatedJobs"]
    assert node["template"]["metadata"] == {} and node["template"]["spec"]["template"]["metadata"] == {}
    assert node["template"]["spec"]["template"]["spec"] == {
        "containers": [{"name": "node", "resources": {"requests": {"cpu": "2500m"}}}]}
    assert bare["template"] == {"metadata": {}, "spec": {"template": {"metadata": {}, "spec": {"containers": None}}}}
