"""What the live reference operator runs and watches for a profile, without a cluster.

It runs only the controllers of the profile's own kinds and informs only the built-in kinds those
controllers watch or read (``reads``). Two things make that safe, both checked here on render:
every built-in kind a controller reads is declared, and render with only those controllers gives
the rows' goldens."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

import reconciler
from reconciler import builtin, meta, profiles
from reconciler.live.facade import LiveCluster
from reconciler.live.informer import Cache
from reconciler.live.operator import informed_kinds, runs_live, served_kinds, stands_in_for_kubernetes

ROOT = Path(__file__).resolve().parents[1]
BUILT_IN = {(meta.group_of(api_version), kind) for api_version, kind in builtin.BUILTIN}


def _live_controllers(profile: str) -> list:
    served = served_kinds(profiles.get(profile))
    return [c for c in reconciler.new_cluster(profile).controllers if runs_live(c, served)]


def _names(controllers) -> list[str]:
    return [type(c).__name__ for c in controllers]


def test_a_jobset_operator_runs_the_jobset_controller_and_watches_no_pods():
    controllers = _live_controllers("jobset-v0.12")
    assert _names(controllers) == ["JobSetController"]
    assert informed_kinds(profiles.get("jobset-v0.12"), controllers) == [
        ("jobset.x-k8s.io/v1alpha2", "JobSet"), ("batch/v1", "Job"), ("v1", "Service")]


def test_each_profile_runs_its_own_suite_only():
    assert _names(_live_controllers("trainer-v2.3")) == ["TrainJobController", "RuntimeInUseController",
                                                         "JobSetController"]
    assert _names(_live_controllers("volcano-v1.12")) == ["JobController"]
    assert _names(_live_controllers("mpi-operator-v0.6")) == ["MPIJobController"]
    assert _names(_live_controllers("training-operator-v1.9")) == ["PyTorchJobController"]
    assert _names(_live_controllers("lws-v0.7")) == ["LeaderWorkerSetController"]


@pytest.mark.parametrize("profile", ["volcano-v1.12", "mpi-operator-v0.6", "training-operator-v1.9", "lws-v0.7"])
def test_operators_that_read_pods_watch_them(profile):
    assert ("v1", "Pod") in informed_kinds(profiles.get(profile), _live_controllers(profile))


def test_stand_ins_are_neither_run_nor_counted_as_not_installed():
    wired = reconciler.new_cluster("jobset-v0.12").controllers
    assert sorted(_names(c for c in wired if stands_in_for_kubernetes(c))) == [
        "FakeKubelet", "JobController", "StatefulSetController"]
    assert not any(runs_live(c, served_kinds(profiles.get(p))) for c in wired if stands_in_for_kubernetes(c)
                   for p in profiles.PROFILES)


# ---------------------------------------------------------------------- reads of a kind without an informer

class _Api:
    def __init__(self):
        self.requests = []

    def resource(self, api_version, kind):
        return type("R", (), {"api_version": api_version, "kind": kind})()

    def get(self, resource, namespace, name):
        self.requests.append(("get", resource.kind, name))
        return {"metadata": {"name": name, "namespace": namespace, "uid": "p1", "resourceVersion": "3"}}

    def list(self, resource, namespace=None):
        self.requests.append(("list", resource.kind, namespace))
        return {"items": [{"metadata": {"name": "p", "namespace": namespace, "uid": "p1", "resourceVersion": "3"}}]}


def test_a_kind_no_informer_keeps_is_read_from_the_api_and_never_cached():
    cache, api = Cache(), _Api()
    cache.replace_kind("batch", "Job", [])
    cluster = LiveCluster(api, profiles.get("jobset-v0.12"), cache=cache)
    assert cluster.find("batch", "Job", "ns", "j") is not None  # a cache miss of an informed kind: a GET
    assert cluster.find("", "Pod", "ns", "p")["metadata"]["name"] == "p"
    assert [p["metadata"]["name"] for p in cluster.list("", "Pod", "ns")] == ["p"]
    assert api.requests == [("get", "Job", "j"), ("get", "Pod", "p"), ("list", "Pod", "ns")]
    assert cache.get(("batch", "Job", "ns", "j")) is not None  # put ahead of its watch event
    assert cache.get(("", "Pod", "ns", "p")) is None  # nothing would ever refresh it
    assert cluster.list("batch", "Job", "ns") == [cluster.find("batch", "Job", "ns", "j")]
    assert len(api.requests) == 3


# ---------------------------------------------------------------------- checked on render

#: Every how-many-th row of the table is rendered (all 1,574 take two minutes; checked so once).
SAMPLE = 12


class _Reads:
    """The cluster a controller is handed, noting each (group, kind) it finds or lists."""

    def __init__(self, cluster, seen: set):
        self._cluster, self._seen = cluster, seen

    def find(self, group, kind, *args, **kwargs):
        self._seen.add((group, kind))
        return self._cluster.find(group, kind, *args, **kwargs)

    def get(self, group, kind, *args, **kwargs):
        self._seen.add((group, kind))
        return self._cluster.get(group, kind, *args, **kwargs)

    def list(self, group, kind, *args, **kwargs):
        self._seen.add((group, kind))
        return self._cluster.list(group, kind, *args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._cluster, name)


@contextlib.contextmanager
def _live_scope(reads: dict):
    """Render with, besides the stand-ins, only the controllers the live operator of the profile runs;
    what each reads goes into ``reads`` by controller class."""
    original = reconciler.new_cluster

    def new_cluster(profile=None):
        cluster = original(profile)
        served = served_kinds(cluster.profile)
        cluster.controllers = [c for c in cluster.controllers if stands_in_for_kubernetes(c) or runs_live(c, served)]
        for controller in cluster.controllers:
            seen = reads.setdefault(type(controller), set())
            controller.reconcile = (lambda inner, s: lambda c, obj: inner(_Reads(c, s), obj))(controller.reconcile, seen)
        return cluster

    reconciler.new_cluster = new_cluster
    try:
        yield
    finally:
        reconciler.new_cluster = original


def test_render_with_the_live_controllers_only_gives_the_goldens_and_every_read_is_declared():
    from conformance.backends import render as backend
    from conformance.cases import Case, load_all
    from conformance.execute import run_case

    rows = [(case, profile) for case in load_all(ROOT / "cases") if isinstance(case, Case)
            for profile in case.profiles()][::SAMPLE]
    reads: dict = {}
    differ = []
    with _live_scope(reads):
        for case, profile in rows:
            golden = ROOT / "snapshots" / profile / f"{case.full_id}.yaml"
            if golden.exists() and run_case(case, profile, backend).golden != golden.read_text():
                differ.append(f"{profile} {case.full_id}")
    assert len(rows) > 100 and not differ
    undeclared = {cls.__name__: sorted(seen & BUILT_IN - {tuple(k) for k in (*cls.watches, *getattr(cls, "reads", ()))})
                  for cls, seen in reads.items() if not stands_in_for_kubernetes(cls)}
    assert {name: kinds for name, kinds in undeclared.items() if kinds} == {}
    assert {"JobSetController", "TrainJobController", "JobController", "MPIJobController"} <= set(undeclared)


# ---------------------------------------------------------------------- watch events

def test_watch_events_decode_as_json_does_big_integers_and_lone_surrogates_included():
    import json

    from reconciler.live.rest import _Watch

    lines = ['{"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"p","resourceVersion":"7"},"spec":{"x":1.5}}}',
             '{"type":"MODIFIED","object":{"kind":"X","spec":{"n":123456789012345678901234567890}}}',
             '{"type":"MODIFIED","object":{"kind":"X","data":{"s":"\\ud800"}}}', "  ", "not json"]
    for line in lines:
        decoded = _Watch().unmarshal_event(line, None)
        expected = json.loads(line) if line.strip().startswith("{") else None
        if expected is not None:
            expected["raw_object"] = expected["object"]
        assert decoded == expected
