"""Bad input on the live plane: a damaged manifest gets the same answer from kube-apiserver v1.35 + the
reference operator as from render, and the operator keeps reconciling what comes after it.

A small hypothesis sample (``TC_FUZZ_LIVE_EXAMPLES``, default 8) of the damage ``tests/test_fuzz_render.py``
draws, on JobSet v0.12 (a mutating and a validating webhook, a controller): each damaged JobSet is created
in a namespace of its own; its answer (admitted, or the HTTP code and message) must be render's; then an
undamaged JobSet is created and must get its Jobs. Needs the local control plane (``make control-plane``).
"""

from __future__ import annotations

import re

import os
import time

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import reconciler
from conformance import fuzz

pytestmark = pytest.mark.live

PROFILE = "jobset-v0.12"
SEEDS = [s for s in fuzz.seeds() if PROFILE in s.profiles
         and all(m.get("kind") == "JobSet" for m in s.manifests)]
EXAMPLES = int(os.environ.get("TC_FUZZ_LIVE_EXAMPLES", "8"))
HEALTHY = fuzz.table_dirs.locate(None).cases / "jobset" / "_bases" / "jobset.yaml"
#: Damage there is the client's business (no apiVersion/kind: nothing to send; the namespace: the URL's).
_SKIPPED = {("apiVersion",), ("kind",), ("metadata", "namespace")}


@pytest.fixture(scope="module")
def operator():
    from reconciler.live.operator import Operator
    from reconciler.live.rest import Api

    plane = None
    kubeconfig = os.environ.get("TC_LIVE_KUBECONFIG")
    if not kubeconfig:
        from conformance.cluster import LocalControlPlane
        plane = LocalControlPlane(start_timeout=90).up()
        kubeconfig = str(plane.kubeconfig)
    api = Api.from_kubeconfig(kubeconfig)
    running = Operator(api, PROFILE).start()
    try:
        yield running
    finally:
        running.stop()
        api.close()
        if plane is not None:
            plane.down()


@st.composite
def damaged_jobsets(draw):
    seed = draw(st.sampled_from(SEEDS))
    path = draw(st.sampled_from([p for p in fuzz.paths(seed.manifests[0])
                                 if p[:1] not in _SKIPPED and p[:2] not in _SKIPPED]))
    how = draw(st.sampled_from(sorted(fuzz.DAMAGES)))
    return seed, path, how


_counter = iter(range(10**6))


def _namespace(api) -> str:
    name = f"fuzz-{os.getpid()}-{next(_counter)}"
    api.request("POST", "/api/v1/namespaces", query=[("fieldManager", "fuzz")],
                body={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    return name


def _live_answer(api, obj: dict, namespace: str):
    from reconciler.live.rest import ApiError

    resource = api.must_resource(obj["apiVersion"], obj["kind"])
    try:
        api.request("POST", resource.path(namespace), query=[("fieldManager", "fuzz")], body=obj)
        return None
    except ApiError as exc:
        return exc.code, (exc.status or {}).get("message", str(exc))


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(damaged_jobsets())
def test_a_damaged_jobset_gets_renders_answer_and_the_operator_goes_on(operator, case):
    seed, path, how = case
    api = operator.api
    namespace = _namespace(api)
    (obj,) = fuzz.damage(seed.manifests, 0, path, how)
    if isinstance(obj.get("metadata"), dict):
        obj["metadata"]["namespace"] = namespace
    rendered = reconciler.render([obj], PROFILE)
    expected = (rendered.rejections[0].error.code, rendered.rejections[0].error.message) if rendered.rejections else None
    assert _unordered(_live_answer(api, obj, namespace)) == _unordered(expected), f"{seed.source}: {fuzz.describe(0, path, how)}"


def _unordered(answer):
    """kube-apiserver lists sibling properties' schema errors in Go map order, so compare the list as a set."""
    if not answer or "is invalid: [" not in answer[1]:
        return answer
    head, _, rest = answer[1].partition("is invalid: [")
    return answer[0], head, tuple(sorted(re.split(r", (?=(?:[a-z][\w.\[\]-]*|<nil>): )", rest.removesuffix("]"))))

    healthy = yaml.safe_load(HEALTHY.read_text())  # the table's base JobSet, valid by construction
    healthy["metadata"].update(name="healthy", namespace=namespace)
    assert _live_answer(api, healthy, namespace) is None
    jobs = api.must_resource("batch/v1", "Job")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        owned = [j for j in api.list(jobs, namespace)["items"]
                 if (j["metadata"].get("labels") or {}).get("jobset.sigs.k8s.io/jobset-name") == "healthy"]
        if owned:
            break
        time.sleep(0.2)
    assert owned, f"the operator created no Job for an undamaged JobSet after {fuzz.describe(0, path, how)}"
    api.request("DELETE", f"/api/v1/namespaces/{namespace}")


#: The answers the rows pin, on the live plane: (path into the base JobSet, damaged value).
PINNED = [
    (("spec", "replicatedJobs", 0, "template", "spec", "template", "spec", "containers"), "main"),
    (("spec", "replicatedJobs", 0, "template", "spec", "template", "spec", "containers", 0, "ports"), [{"containerPort": "80"}]),
    (("spec", "replicatedJobs", 0, "template", "spec", "template", "spec", "containers", 0, "ports"), [{"containerPort": 2**63}]),
    (("spec", "replicatedJobs", 0, "template", "spec", "template", "spec", "containers", 0, "resources"), {"limits": {"cpu": "abc"}}),
    (("spec", "replicatedJobs", 0, "template", "spec", "template", "spec", "containers"), ["main"]),
    (("spec", "replicatedJobs", 0, "template", "spec", "template", "metadata"), {"labels": {"a": 7}}),
    (("metadata", "name"), None),
    (("metadata", "name"), 7),
    (("metadata", "name"), "Not_A-DNS.Name"),
    (("metadata", "labels"), {"a b": "c"}),
    (("spec", "successPolicy"), None),
]


@pytest.mark.parametrize(("path", "value"), PINNED, ids=[f"{'/'.join(map(str, p))}={v!r}"[:60] for p, v in PINNED])
def test_pinned_answers_are_the_live_planes(operator, path, value):
    api = operator.api
    namespace = _namespace(api)
    obj = yaml.safe_load(HEALTHY.read_text())
    parent = obj
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = value
    obj["metadata"]["namespace"] = namespace
    rendered = reconciler.render([obj], PROFILE)
    expected = (rendered.rejections[0].error.code, rendered.rejections[0].error.message) if rendered.rejections else None
    assert _live_answer(api, obj, namespace) == expected
    api.request("DELETE", f"/api/v1/namespaces/{namespace}")
