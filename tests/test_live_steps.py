"""Scenario steps on the live backend: ``update`` and ``delete`` steps, ``events`` expectations and container restarts.

The unmarked tests check how Events become an outcome's ``events`` without a cluster. Tests marked
``live`` run on the local control plane (``make test-live``): LeaderWorkerSet rows that update,
record Events and restart containers must meet their expectations and equal their render goldens,
and an update of another suite's object (a JobSet) is a JSON Patch request whose refusal is judged
like an apply's.
"""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest
import yaml

from conformance import expectations
from conformance.cases import Step
from conformance.golden import golden_steps_text, golden_text, relative_path
from conformance.live import events

ROOT = Path(__file__).resolve().parents[1]
live = pytest.mark.live


# ---------------------------------------------------------------------- without a cluster

def _event(uid: str, reason: str, count: int = 1, when: str = "2026-01-01T00:00:00Z", **extra) -> dict:
    return {"metadata": {"uid": uid, "resourceVersion": "1"}, "type": "Normal", "reason": reason,
            "involvedObject": {"kind": "LeaderWorkerSet", "namespace": "ns", "name": "lws"},
            "message": f"{reason} happened", "count": count, "firstTimestamp": when, **extra}


def test_events_are_one_entry_per_emission_and_each_step_gets_its_own():
    seen: dict[str, int] = {}
    first = events.recorded([_event("a", "Created"), _event("b", "Progressing", count=2)], seen)
    assert [e["reason"] for e in first] == ["Created", "Progressing", "Progressing"]
    assert first[0] == {"type": "Normal", "reason": "Created", "kind": "LeaderWorkerSet", "namespace": "ns",
                        "name": "lws", "message": "Created happened"}
    # client-go's recorder counts a repeat on the same Event: only the new emission is the next step's.
    second = events.recorded([_event("a", "Created"), _event("b", "Progressing", count=3)], seen)
    assert [e["reason"] for e in second] == ["Progressing"]


def test_reconcile_errors_and_events_k8s_io_series_are_told_apart():
    error = _event("e", "ReconcileError", source={"component": "training-conformance-reference"})
    series = _event("s", "Scheduled", count=0, series={"count": 2})
    assert [e["reason"] for e in events.recorded([error, series])] == ["Scheduled", "Scheduled"]


def test_a_delete_answer_refreshes_the_cache_but_never_brings_an_object_back():
    """The reference operator sees its own delete at once (as render does), but the answer of a graceful
    delete may come after the watch saw the pod removed: a ghost pod would stall its owner's controller."""
    from reconciler.live.informer import Cache

    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns", "uid": "u", "resourceVersion": "5"}}
    deleting = {**pod, "metadata": {**pod["metadata"], "resourceVersion": "6", "deletionTimestamp": "t"}}
    cache = Cache()
    cache.put(pod)
    assert cache.refresh(deleting) and cache.get(("", "Pod", "ns", "p"))["metadata"]["deletionTimestamp"] == "t"
    cache.remove({**pod, "metadata": {**pod["metadata"], "resourceVersion": "8"}})
    assert not cache.refresh(deleting) and cache.get(("", "Pod", "ns", "p")) is None


# ---------------------------------------------------------------------- on a cluster

def _diff(golden: str, text: str) -> str:
    return "\n".join(difflib.unified_diff(golden.splitlines(), text.splitlines(), "render golden", "live", lineterm=""))


# Each row: what it proves live.
LWS_ROWS = [
    "admission/update-size-allowed",                  # an admitted update: a new revision, a rolling update
    "admission/update-subgroup-size-immutable",       # a refused update: vleaderworkerset.kb.io's 403 on UPDATE
    "admission/update-subdomain-policy",              # mleaderworkerset.kb.io defaults on UPDATE (null -> Shared)
    "render/create-events",                           # Events read from the case's namespaces
    "group-restart/worker-restart-recreates-group",   # podExit (restartPolicy Always): restartCount 1 -> group restart
    "group-restart/none-worker-restart-in-place",     # podExit under None: restartCount 1 while Running, no Event
    "group-restart/sidecar-container-restart",        # podExit of one container (exit-container) among two
]


@live
@pytest.mark.parametrize("row", LWS_ROWS)
def test_lws_row_live_equals_render_golden(live_session, table, row):
    from conformance.backends import live as backend

    case, profile = table[row], "lws-v0.7"
    if case.steps:
        outcomes = backend.run_steps(case.steps, profile, label=f"{profile}:{row}")
        failures = [f"{s.label}: {f}" for s, o in zip(case.steps, outcomes) for f in expectations.check(s.expect, o)]
        text = golden_steps_text(case.full_id, case.title, profile, case.steps, outcomes)
    else:
        outcome = backend.run(case.inputs, profile, label=f"{profile}:{row}")
        failures = expectations.check(case.expect, outcome)
        text = golden_text(case.full_id, case.title, profile, outcome)
    golden = (ROOT / "snapshots" / relative_path(profile, case.table, case.id)).read_text()
    assert not failures and text == golden, "\n".join(failures) + "\n" + _diff(golden, text)


@live
def test_a_container_restart_is_in_place_and_counted_live(live_session, table):
    """podExit with a non-zero code on a restartPolicy Always pod: kwok's pod-exit-now stage restarts the
    container in place - restartCount 1, still Running - as render's kubelet does."""
    from conformance.backends import live as backend

    case = table["group-restart/none-worker-restart-in-place"]
    outcomes = backend.run_steps(case.steps, "lws-v0.7", label="restart-in-place")
    [pod] = [o for o in outcomes[1].objects if o["kind"] == "Pod" and o["metadata"]["name"] == "test-sample-0-1"]
    [status] = pod["status"]["containerStatuses"]
    assert (pod["status"]["phase"], status["restartCount"]) == ("Running", 1)
    assert status["lastState"]["terminated"]["exitCode"] == 1 and "running" in status["state"]


@live
def test_an_update_of_another_suite_is_a_json_patch_judged_like_an_apply(live_session):
    """JobSet: a label added by JSON Patch is admitted and kept; a replicas of the wrong type is the CRD
    schema's 422 at the field, the stored JobSet unchanged - live as in render."""
    from conformance.backends import live as backend, render

    jobset = yaml.safe_load((ROOT / "cases/jobset/_bases/jobset.yaml").read_text())
    update = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "name": "js"}
    steps = [Step(1, "apply inputs", apply=[jobset]),
             Step(2, "update JobSet js", update={**update, "patch": [
                 {"op": "add", "path": "/metadata/labels", "value": {"team": "a"}}]}),
             Step(3, "update JobSet js", update={**update, "patch": [
                 {"op": "replace", "path": "/spec/replicatedJobs/1/replicas", "value": "three"}]})]
    outcomes = backend.run_steps(steps, "jobset-v0.12", label="jobset-update")
    assert [o.input_errors for o in outcomes] == [[], [], []]
    [labelled] = [o for o in outcomes[1].objects if o["kind"] == "JobSet"]
    assert labelled["metadata"]["labels"] == {"team": "a"} and not outcomes[1].rejections
    [refused] = outcomes[2].rejections
    assert (refused.kind, refused.name, refused.code, refused.reason) == ("JobSet", "js", 422, "Invalid")
    # The type error, then the note that CEL rules were not checked (the JobSet CRD has some).
    assert [e["field"] for e in refused.errors] == ["spec.replicatedJobs[1].replicas", ""]
    [kept] = [o for o in outcomes[2].objects if o["kind"] == "JobSet"]
    assert kept["spec"]["replicatedJobs"][1]["replicas"] == 3
    rendered = render.run_steps(steps, "jobset-v0.12")
    assert [r.message for r in rendered[2].rejections] == [refused.message]
    golden = golden_steps_text("x", "", "jobset-v0.12", steps, rendered)
    text = golden_steps_text("x", "", "jobset-v0.12", steps, outcomes)
    assert text == golden, _diff(golden, text)


@live
def test_a_delete_step_is_a_delete_request_with_render_garbage_collection(live_session):
    """A JobSet deleted in Foreground while a pod of its is held waits with the garbage collector's
    foregroundDeletion finalizer; released, it goes with everything it owned - live (the real
    garbage collector) as render; a missing object is an error of the case."""
    from conformance.backends import live as backend, render

    jobset = yaml.safe_load((ROOT / "cases/jobset/_bases/jobset.yaml").read_text())
    pod = {"replicatedJob": jobset["spec"]["replicatedJobs"][0]["name"], "jobIndex": 0, "pod": 0}
    steps = [Step(1, "apply inputs", apply=[jobset]),
             Step(2, "hold", fault={"fault": "holdTermination", **pod}),
             Step(3, "delete JobSet js", delete={"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
                                                 "name": "js", "propagationPolicy": "Foreground"}),
             Step(4, "release", fault={"fault": "releaseTermination", **pod}),
             Step(5, "delete JobSet js", delete={"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
                                                 "name": "js"})]
    outcomes = backend.run_steps(steps, "jobset-v0.12", label="jobset-delete")
    assert [o.input_errors for o in outcomes] == [[], [], [], [], ["delete: JobSet default/js does not exist"]]
    [waiting] = [o for o in outcomes[2].objects if o["kind"] == "JobSet"]
    assert "foregroundDeletion" in waiting["metadata"]["finalizers"]
    assert outcomes[3].objects == []
    rendered = render.run_steps(steps, "jobset-v0.12")
    golden = golden_steps_text("x", "", "jobset-v0.12", steps, rendered)
    text = golden_steps_text("x", "", "jobset-v0.12", steps, outcomes)
    assert text == golden, _diff(golden, text)


def test_go_zero_values_in_lws_templates_and_revision_data_go_unless_render_has_them():
    from conformance.live import gozero

    template = {"metadata": {}, "spec": {"containers": [{"name": "c", "image": "i", "resources": {}}]}}
    lws = {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet", "metadata": {"name": "l", "namespace": "d"},
           "spec": {"leaderWorkerTemplate": {"workerTemplate": template, "leaderTemplate": template}}}
    revision = {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": {"name": "l-abc-1", "namespace": "d"},
                "data": {"spec": {"leaderWorkerTemplate": {"workerTemplate": template, "$patch": "replace"}}}}
    clean = {"spec": {"containers": [{"name": "c", "image": "i"}]}}
    rendered = [{**lws, "spec": {"leaderWorkerTemplate": {"workerTemplate": clean, "leaderTemplate": clean}}},
                {**revision, "data": {"spec": {"leaderWorkerTemplate": {"workerTemplate": clean, "$patch": "replace"}}}}]
    out_lws, out_revision = gozero.strip([lws, revision], rendered)
    assert out_lws["spec"]["leaderWorkerTemplate"] == {"workerTemplate": clean, "leaderTemplate": clean}
    assert out_revision["data"]["spec"]["leaderWorkerTemplate"]["workerTemplate"] == clean
    # Render writing the same zero value keeps it.
    assert gozero.strip([lws], [lws])[0] == lws
