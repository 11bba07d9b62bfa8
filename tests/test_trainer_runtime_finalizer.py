"""``trainer.kubeflow.org/resource-in-use`` on runtimes (v2.0-v2.2 controllers; v2.3 removes it).

Facts from upstream pkg/controller/{cluster,}trainingruntime_controller.go: added while any TrainJob
refers to the runtime, removed only once the runtime is being deleted and no TrainJob refers to it.
"""

import copy

from reconciler import render

GROUP = "trainer.kubeflow.org"
FINALIZER = "trainer.kubeflow.org/resource-in-use"


def _runtime(result, kind="ClusterTrainingRuntime", namespace=""):
    return result.cluster.find(GROUP, kind, namespace, "torch-distributed")


def test_v21_holds_a_runtime_in_use_until_its_last_trainjob_is_gone(torch_runtime, torch_trainjob):
    result = render([torch_runtime, torch_trainjob], profile="trainer-v2.1")
    cluster = result.cluster
    assert _runtime(result)["metadata"]["finalizers"] == [FINALIZER]

    cluster.delete(_runtime(result))
    cluster.settle()
    assert _runtime(result)["metadata"].get("deletionTimestamp")  # still there: in use

    cluster.delete(cluster.find(GROUP, "TrainJob", "default", "test-job"))
    cluster.settle()
    assert _runtime(result) is None


def test_v21_finalizer_stays_after_the_trainjob_goes_if_the_runtime_is_not_deleted(torch_runtime, torch_trainjob):
    result = render([torch_runtime, torch_trainjob], profile="trainer-v2.1")
    result.cluster.delete(result.cluster.find(GROUP, "TrainJob", "default", "test-job"))
    result.cluster.settle()
    assert _runtime(result)["metadata"]["finalizers"] == [FINALIZER]


def test_v21_only_the_referenced_runtime_kind_and_namespace_count(torch_runtime, torch_trainjob):
    namespaced = copy.deepcopy(torch_runtime)
    namespaced["kind"] = "TrainingRuntime"
    namespaced["metadata"]["namespace"] = "default"
    result = render([torch_runtime, namespaced, torch_trainjob], profile="trainer-v2.1")
    assert _runtime(result)["metadata"]["finalizers"] == [FINALIZER]  # runtimeRef kind defaults to Cluster...
    assert "finalizers" not in _runtime(result, "TrainingRuntime", "default")["metadata"]


def test_v21_unused_runtime_has_no_finalizer(torch_runtime):
    assert "finalizers" not in _runtime(render([torch_runtime], profile="trainer-v2.1"))["metadata"]


def test_v23_never_adds_it_and_removes_a_leftover(torch_runtime, torch_trainjob):
    assert "finalizers" not in _runtime(render([torch_runtime, torch_trainjob], profile="trainer-v2.3"))["metadata"]
    leftover = copy.deepcopy(torch_runtime)
    leftover["metadata"]["finalizers"] = [FINALIZER, "example.com/keep"]
    result = render([leftover, torch_trainjob], profile="trainer-v2.3")
    assert _runtime(result)["metadata"]["finalizers"] == ["example.com/keep"]
