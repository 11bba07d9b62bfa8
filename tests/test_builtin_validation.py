"""kube-apiserver's resource rules for built-in kinds (ValidateResourceRequirements), as worded by
v1.35: an extended resource needs a limit equal to its request; no request may exceed its limit."""

from reconciler import builtin


def job(resources: dict) -> dict:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
            "spec": {"template": {"spec": {"containers": [{"name": "node", "resources": resources}]}}}}


def messages(obj):
    return [str(e) for e in builtin.validate(obj)]


def test_gpu_request_without_limit_is_refused():
    assert messages(job({"requests": {"nvidia.com/gpu": 2}})) == [
        "spec.template.spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources"]


def test_gpu_request_must_equal_limit():
    assert messages(job({"requests": {"nvidia.com/gpu": "0"}, "limits": {"nvidia.com/gpu": "2"}})) == [
        'spec.template.spec.containers[0].resources.requests: Invalid value: "0": must be equal to nvidia.com/gpu limit of 2']


def test_cpu_may_be_overcommitted_but_not_above_its_limit():
    assert messages(job({"requests": {"cpu": "1"}, "limits": {"cpu": "4"}})) == []
    assert messages(job({"requests": {"cpu": "1"}})) == []
    assert messages(job({"requests": {"cpu": "4"}, "limits": {"cpu": "2"}})) == [
        'spec.template.spec.containers[0].resources.requests: Invalid value: "4": must be less than or equal to cpu limit of 2']


def test_gpu_as_limit_only_is_fine():
    assert messages(job({"limits": {"nvidia.com/gpu": 8}})) == []


def pod(ports: list, field: str = "containers") -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c"}], field: [{"name": "c", "ports": ports}]}}


def test_container_ports_as_validate_container_ports_words_them():
    # pkg/apis/core/validation validateContainerPorts (v1.35): 0 is "Required value", others 1-65535.
    assert messages(pod([{"containerPort": 0}])) == ["spec.containers[0].ports[0].containerPort: Required value"]
    assert messages(pod([{"name": "x"}])) == ["spec.containers[0].ports[0].containerPort: Required value"]
    assert messages(pod([{"containerPort": -1}])) == [
        "spec.containers[0].ports[0].containerPort: Invalid value: -1: must be between 1 and 65535, inclusive"]
    assert messages(pod([{"containerPort": 65536, "hostPort": 70000}])) == [
        "spec.containers[0].ports[0].containerPort: Invalid value: 65536: must be between 1 and 65535, inclusive",
        "spec.containers[0].ports[0].hostPort: Invalid value: 70000: must be between 1 and 65535, inclusive"]
    assert messages(pod([{"containerPort": 1}, {"containerPort": 65535, "hostPort": 8080}])) == []
    assert messages(pod([{"containerPort": 0}], field="initContainers")) == [
        "spec.initContainers[0].ports[0].containerPort: Required value"]
