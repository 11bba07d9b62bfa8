"""Bad input never crashes: damaged manifests keep ``conformance render``'s contract.

Property (hypothesis): any seed of the case table (a case's manifests, on one of its profiles) with
one value damaged - deleted, null, a number of any size or sign, a string (empty, long, with a NUL),
a list, a map (conformance/fuzz.py) - renders with exit 0, 1 or 2, never an exception; exit 1 names
every rejected object with the apiserver's code. ``derandomize``: ``make test`` runs the same
examples every time; ``bench/fuzz_render.py`` explores 10,000 fresh ones per seed.

Below the property: inputs the fuzzer once crashed on, shrunk to the damage, with the answer
kube-apiserver v1.35 or the upstream operator gives them.
"""

from __future__ import annotations

import os

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import reconciler
from conformance import fuzz

SEEDS = fuzz.seeds()
EXAMPLES = int(os.environ.get("TC_FUZZ_EXAMPLES", "250"))


@st.composite
def damaged(draw):
    seed = draw(st.sampled_from(SEEDS))
    profile = draw(st.sampled_from(seed.profiles))
    doc = draw(st.integers(0, len(seed.manifests) - 1))
    paths = fuzz.paths(seed.manifests[doc])
    path = draw(st.sampled_from(paths))
    how = draw(st.sampled_from(sorted(fuzz.DAMAGES)))
    return seed, profile, doc, path, how


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(damaged())
def test_a_damaged_manifest_keeps_the_render_contract(case):
    seed, profile, doc, path, how = case
    outcome = fuzz.render(fuzz.damage(seed.manifests, doc, path, how), profile)
    assert outcome.crash is None, f"{seed.source} on {profile}, {fuzz.describe(doc, path, how)}:\n{outcome.crash}"
    assert outcome.code in (0, 1, 2)
    if outcome.code == 1:
        assert "error: " in outcome.stderr and "was rejected by" in outcome.stderr
    if outcome.code == 2:
        assert outcome.stderr.startswith("error: ") or "\nerror: " in outcome.stderr


# ---------------------------------------------------------------------- shrunk examples

TRAINJOB = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
            "metadata": {"name": "test-job", "namespace": "default"},
            "spec": {"runtimeRef": {"name": "torch-distributed"}}}


def _runtime(containers=None, rj_name="node") -> dict:
    runtime = yaml.safe_load(open(fuzz.table_dirs.locate(None).cases / "trainer/_bases/torch-runtime.yaml"))
    rj = runtime["spec"]["template"]["spec"]["replicatedJobs"][0]
    rj["name"] = rj_name
    if containers is not None:
        rj["template"]["spec"]["template"]["spec"]["containers"] = containers
    return runtime


def _render(manifests, profile):
    return fuzz.render(manifests, profile)


@pytest.mark.parametrize("api_version", [7, None, ["v1"], {"a": "b"}])
def test_an_api_version_that_is_not_a_string_is_not_an_object(api_version):
    outcome = _render([{**TRAINJOB, "apiVersion": api_version}], "trainer-v2.3")
    assert (outcome.code, outcome.crash) == (2, None)
    assert "document 1 is not a Kubernetes object (needs apiVersion and kind, both strings)" in outcome.stderr


def test_a_trainjob_whose_name_is_null_is_422_name_or_generate_name_required():
    # PruneNonNullableNullsWithoutDefaults drops the null, then ValidateObjectMetaAccessor (seen live).
    trainjob = {**TRAINJOB, "metadata": {"name": None, "namespace": "default"}}
    result = reconciler.render([_runtime(), trainjob], "trainer-v2.3")
    (rejected,) = result.rejections
    assert rejected.error.code == 422
    assert rejected.error.message == ('TrainJob.trainer.kubeflow.org "" is invalid: [metadata.name: Required value: '
                                      "name or generateName is required, <nil>: Invalid value: null: some validation "
                                      "rules were not checked because the object was invalid; correct the existing "
                                      "errors to complete validation]")


def test_a_name_that_is_a_number_is_400_cannot_be_handled():
    trainjob = {**TRAINJOB, "metadata": {"name": 7, "namespace": "default"}}
    result = reconciler.render([trainjob], "trainer-v2.3")
    (rejected,) = result.rejections
    assert (rejected.error.code, rejected.error.message) == (
        400, 'TrainJob in version "v1alpha1" cannot be handled as a TrainJob: json: cannot unmarshal number into '
             "Go struct field ObjectMeta.name of type string")


def test_a_runtime_container_that_is_a_string_is_the_schemas_422():
    result = reconciler.render([_runtime(containers=["node"])], "trainer-v2.3")
    (rejected,) = result.rejections
    path = "spec.template.spec.replicatedJobs[0].template.spec.template.spec.containers[0]"
    assert rejected.error.code == 422
    assert [str(e) for e in rejected.error.errors] == [
        f'{path}: Invalid value: "string": {path} in body must be of type object: "string"',
        f'spec.template.spec.replicatedJobs[0].template.spec.template.spec.containers[0]: Invalid value: "node": '
        "must be an object for an array of list-type map",
        "<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; "
        "correct the existing errors to complete validation",
    ]


@pytest.mark.parametrize("profile", ["trainer-v2.1", "trainer-v2.3"])
def test_a_jobset_the_jobset_webhook_refuses_is_an_event_and_nothing_created(profile):
    # replicatedJob "Node": a valid runtime (no rule on its names), but the JobSet Trainer builds from it
    # is denied by JobSet's webhook - Trainer records TrainJobResourcesCreationFailed and retries.
    result = reconciler.render([_runtime(rj_name="Node"), TRAINJOB], profile)
    assert not result.rejections
    kinds = [o["kind"] for o in result.objects]
    assert "JobSet" not in kinds and "Pod" not in kinds
    events = [e for e in result.cluster.events if e["reason"] == "TrainJobResourcesCreationFailed"]
    assert events and all(e == events[0] for e in events)  # one per (retried) reconcile, all alike
    event = events[0]
    assert event["type"] == "Warning" and event["name"] == "test-job"
    assert event["message"].startswith("TrainJob resources reconciliation failed: ")
    assert "spec.replicatedJobs[0].name" in event["message"]


def test_an_internal_error_is_reported_as_a_bug_not_a_traceback(monkeypatch, tmp_path, capsys):
    from conformance import cli

    def broken(*args, **kwargs):
        raise ZeroDivisionError("boom")

    manifest = tmp_path / "tj.yaml"
    manifest.write_text(yaml.safe_dump(TRAINJOB))
    monkeypatch.setattr(reconciler, "render", broken)
    assert cli.main(["render", "-f", str(manifest), "--profile", "trainer-v2.3"]) == 3
    err = capsys.readouterr().err
    assert "internal error: ZeroDivisionError: boom" in err and "Traceback" not in err
    with pytest.raises(ZeroDivisionError):  # --debug: the traceback, for developers
        cli.main(["render", "-f", str(manifest), "--profile", "trainer-v2.3", "--debug"])


# bench/fuzz_render.py -n 10000 --seed 1 found these four (each had crashed render); the answers are
# Go's: a null decodes to the zero struct (a podFailurePolicy rule, a pod template level), and a pod
# with no containers is kube-apiserver's "spec.containers: Required value".
@pytest.mark.parametrize(("source", "profile", "path", "how"), [
    ("group-restart/eviction-failjob-then-ignore-max", "jobset-v0.10",
     ("spec", "replicatedJobs", 1, "template", "spec", "podFailurePolicy", "rules", 0), "null"),
    ("admission/pod-webhook-labels-leader", "lws-v0.7", ("spec", "containers"), "null"),
    ("mpi-render/openmpi-env-replaces-runtime-value", "trainer-v2.3",
     ("spec", "template", "spec", "replicatedJobs", 1, "template", "spec", "template", "spec"), "null"),
    ("mpi-topology/rlan-false-node-only-numnodes-10", "trainer-v2.3",
     ("spec", "template", "spec", "replicatedJobs", 0, "template"), "map"),
])
def test_found_by_the_fuzz_benchmark(source, profile, path, how):
    [seed] = [s for s in SEEDS if s.source == source]
    outcome = fuzz.render(fuzz.damage(seed.manifests, 0, path, how), profile)
    assert outcome.crash is None, outcome.crash
    assert outcome.code in (0, 1, 2)


def test_a_pod_without_containers_is_422_containers_required():
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
           "spec": {"containers": None}}
    outcome = fuzz.render([pod], "jobset-v0.12")
    assert outcome.code == 1
    assert "spec.containers: Required value" in outcome.stderr
