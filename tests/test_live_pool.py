"""The live pool's scheduling rules and the shared cluster-scoped inputs (no cluster needed)."""

from __future__ import annotations

import functools
import threading
import time
from pathlib import Path

import pytest

from conformance.live.pool import ABSENT, Demand, Job, LivePool, node_capacity, pod_totals
from conformance.live.shared import SharedInputs


class Recorder:
    """Jobs that record which others were running when they started, and finish on demand."""

    def __init__(self):
        self.lock = threading.Lock()
        self.running: set[str] = set()
        self.seen: dict[str, set[str]] = {}
        self.release: dict[str, threading.Event] = {}
        self.started: dict[str, threading.Event] = {}

    def job(self, key: str, profile: str = "p", demand: Demand | None = None) -> Job:
        self.release[key], self.started[key] = threading.Event(), threading.Event()

        def call():
            with self.lock:
                self.seen[key] = set(self.running)
                self.running.add(key)
            self.started[key].set()
            assert self.release[key].wait(10), f"{key} was never released"
            with self.lock:
                self.running.discard(key)
            return key

        return Job(key, profile, demand or Demand(), call)

    def finish(self, key: str) -> None:
        self.release[key].set()


def _finish_all(rec: Recorder, pool: LivePool, keys: list[str]) -> None:
    for key in keys:
        rec.finish(key)
    for key in keys:
        assert pool.result(key) == key


def test_cases_of_one_profile_overlap_up_to_the_worker_count():
    rec = Recorder()
    jobs = [rec.job(k) for k in "abc"]
    pool = LivePool(jobs, workers=2, budget={}).start()
    assert rec.started["a"].wait(5) and rec.started["b"].wait(5)
    assert not rec.started["c"].wait(0.3), "a third case started beyond 2 workers"
    rec.finish("a")
    assert rec.started["c"].wait(5)
    _finish_all(rec, pool, list("abc"))


def test_next_profile_waits_until_the_previous_one_has_finished():
    rec = Recorder()
    pool = LivePool([rec.job("a", "p1"), rec.job("b", "p2")], workers=4, budget={}).start()
    assert rec.started["a"].wait(5)
    assert not rec.started["b"].wait(0.3), "a case of the next profile overlapped (the operator is per profile)"
    _finish_all(rec, pool, ["a", "b"])
    assert rec.seen["b"] == set()


def test_same_claim_shares_a_different_claim_waits_and_is_not_overtaken():
    rec = Recorder()
    jobs = [rec.job("a", demand=Demand(claims={"torch": "v1"})),
            rec.job("b", demand=Demand(claims={"torch": "v1"})),      # same content: shares
            rec.job("c", demand=Demand(claims={"torch": ABSENT})),    # needs it not to exist
            rec.job("d", demand=Demand(claims={"torch": "v1"})),      # may not overtake c
            rec.job("e")]                                             # unrelated: runs
    pool = LivePool(jobs, workers=8, budget={}).start()
    for key in "abe":
        assert rec.started[key].wait(5), key
    assert not rec.started["c"].wait(0.3)
    assert not rec.started["d"].is_set()
    rec.finish("a"), rec.finish("b")
    assert rec.started["c"].wait(5)
    assert not rec.started["d"].wait(0.3), "d overlapped c although their claims on 'torch' differ"
    _finish_all(rec, pool, list("abcde"))


def test_budget_limits_overlap_but_a_too_big_case_still_runs_alone():
    rec = Recorder()
    budget = {"pods": 10.0}
    jobs = [rec.job("a", demand=Demand(resources={"pods": 6})),
            rec.job("b", demand=Demand(resources={"pods": 6})),
            rec.job("big", demand=Demand(resources={"pods": 50}))]
    pool = LivePool(jobs, workers=4, budget=budget).start()
    assert rec.started["a"].wait(5)
    assert not rec.started["b"].wait(0.3), "6 + 6 pods overlapped within a budget of 10"
    rec.finish("a")
    assert rec.started["b"].wait(5)
    assert not rec.started["big"].wait(0.3)
    rec.finish("b")
    assert rec.started["big"].wait(5)
    _finish_all(rec, pool, ["a", "b", "big"])
    assert rec.seen["big"] == set()


def test_lanes_run_their_profiles_side_by_side_each_with_its_own_barrier_and_budget():
    rec = Recorder()
    jobs = [Job(j.key, j.profile, j.demand, j.call, lane=lane) for j, lane in (
        (rec.job("a1", "a", Demand(resources={"pods": 6})), 0), (rec.job("a2", "a", Demand(resources={"pods": 6})), 0),
        (rec.job("b1", "b"), 1), (rec.job("c1", "c"), 0))]
    pool = LivePool(jobs, workers=4, budgets={0: {"pods": 10.0}, 1: {"pods": 100.0}}).start()
    assert rec.started["a1"].wait(5) and rec.started["b1"].wait(5)  # two lanes: a and b at once
    assert not rec.started["a2"].wait(0.3), "lane 0's budget of 10 pods held 12"
    assert not rec.started["c1"].is_set(), "profile c overlapped a on lane 0"
    rec.finish("a1")
    assert rec.started["a2"].wait(5)
    rec.finish("a2")
    assert rec.started["c1"].wait(5)
    _finish_all(rec, pool, ["a1", "a2", "b1", "c1"])
    assert "b1" in rec.seen["a2"] or "a1" in rec.seen["b1"] or "b1" in rec.seen["a1"]


def _until(condition, seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)


def _floating(rec: Recorder, key: str, profile: str, lanes_bound: list[tuple[str, int]]) -> Job:
    """A job whose profile floats: ``bind(lane)`` notes the lane and gives the recorder's call."""
    call = rec.job(key, profile).call

    def bind(lane: int):
        lanes_bound.append((key, lane))
        return call
    return Job(key, profile, Demand(), None, lane=1, bind=bind)


def test_a_floating_profile_goes_whole_to_the_lane_that_runs_out_of_work_first():
    rec, bound = Recorder(), []
    jobs = [Job(j.key, j.profile, j.demand, j.call, lane=lane) for j, lane in (
        (rec.job("a1", "a"), 0), (rec.job("b1", "b"), 1), (rec.job("b2", "b"), 1), (rec.job("b3", "b"), 1))]
    jobs += [_floating(rec, "c1", "c", bound), _floating(rec, "c2", "c", bound), _floating(rec, "d1", "d", bound)]
    pool = LivePool(jobs, workers=1, budget={}, lanes=[0, 1]).start()
    assert rec.started["a1"].wait(5) and rec.started["b1"].wait(5)
    # lane 0 has nothing left to start: it takes profile c (planned for lane 1), but the barrier
    # holds c back until a1 has finished; lane 1 still has b2, b3 to start, so d waits for a lane
    _until(lambda: len(bound) >= 2)
    assert sorted(bound) == [("c1", 0), ("c2", 0)]
    assert not rec.started["c1"].wait(0.3), "profile c overlapped a on lane 0"
    rec.finish("a1")
    assert rec.started["c1"].wait(5)
    rec.finish("b1")
    assert rec.started["b2"].wait(5)
    rec.finish("b2")
    assert rec.started["b3"].wait(5)
    _until(lambda: ("d1", 1) in bound)  # the dispatcher claims on its next turn, after starting b3
    assert ("d1", 1) in bound, "lane 1 had nothing left to start and did not take profile d"
    assert not rec.started["d1"].wait(0.3), "profile d overlapped b on lane 1"
    rec.finish("b3")
    assert rec.started["d1"].wait(5)
    _finish_all(rec, pool, ["a1", "b1", "b2", "b3", "c1", "c2", "d1"])
    assert "c1" not in rec.seen["c2"] and not {"b1", "b2", "b3"} & rec.seen["d1"], "a lane ran two cases beside 1 worker"


def _one_fixed_then_floating(rec: Recorder, bound: list, floating: int) -> LivePool:
    """Lane 0: case a1 of its own; profile c (c1..c<floating>) floats and goes to the idle lane 1."""
    fixed = rec.job("a1", "a")
    jobs = [Job(fixed.key, fixed.profile, fixed.demand, fixed.call, lane=0)]
    jobs += [_floating(rec, f"c{i}", "c", bound) for i in range(1, floating + 1)]
    pool = LivePool(jobs, workers=1, budget={}, lanes=[0, 1]).start()
    assert rec.started["a1"].wait(5) and rec.started["c1"].wait(5)
    return pool


def test_an_idle_lane_takes_over_the_later_half_of_another_lanes_unstarted_cases():
    rec, bound = Recorder(), []
    pool = _one_fixed_then_floating(rec, bound, 5)
    assert sorted(bound) == [(f"c{i}", 1) for i in range(1, 6)], "lane 1 had nothing to start and took profile c"
    rec.finish("a1")
    # lane 0 is idle and c2..c5 wait on lane 1 (4 >= 2 x 1 worker): it takes the later two
    _until(lambda: ("c4", 0) in bound and ("c5", 0) in bound)
    assert rec.started["c4"].wait(5), "the idle lane did not start the cases it took over"
    assert ("c2", 0) not in bound and ("c3", 0) not in bound
    assert "c1" in rec.seen["c4"], "c4 ran beside c1: on the other lane"
    _finish_all(rec, pool, ["c1", "c2", "c3", "c4", "c5"])
    assert "c4" not in rec.seen["c5"], "a lane ran two cases beside 1 worker"


def test_a_lane_takes_nothing_over_when_too_little_is_left():
    rec, bound = Recorder(), []
    pool = _one_fixed_then_floating(rec, bound, 2)
    rec.finish("a1")
    assert pool.result("a1") == "a1"
    time.sleep(0.3)
    assert ("c2", 0) not in bound, "one case left is not worth an operator switch"
    _finish_all(rec, pool, ["c1", "c2"])


def test_without_lanes_to_float_between_nothing_floats():
    rec, bound = Recorder(), []
    pool = LivePool([rec.job("a1", "a"), _floating(rec, "c1", "c", bound)], workers=4, budget={}).start()
    assert rec.started["a1"].wait(5)
    rec.finish("a1")
    assert pool.result("a1") == "a1"
    assert not rec.started["c1"].wait(0.3) and bound == [], "a floating job ran with no lane to float to"
    pool.stop()
    with pytest.raises(RuntimeError, match="stopped before this case started"):
        pool.result("c1")


def test_plan_lanes_spreads_the_heaviest_profiles_first():
    from conformance.backends import live

    def case(steps):
        return type("Case", (), {"steps": [type("Step", (), {"repeat": 1})()] * steps if steps else None})()
    cases = ([(f"x{i}", case(0), "big") for i in range(10)] + [(f"y{i}", case(3), "mid") for i in range(2)]
             + [(f"z{i}", case(0), "small") for i in range(3)] + [("w", case(0), "tiny")])
    demands = [Demand()] * len(cases)
    # costs: big 10, mid 6, small 3, tiny 1 -> lane 0 takes big, lane 1 mid then small then tiny
    assert live.plan_lanes(cases, demands, 2) == {"big": 0, "mid": 1, "small": 1, "tiny": 1}
    assert set(live.plan_lanes(cases, demands, 1).values()) == {0}
    assert live.plan_lanes(cases, demands, 8) == {"big": 0, "mid": 1, "small": 2, "tiny": 3}
    pods = [Demand(at_once={"pods": 1024.0}) if p == "tiny" else Demand() for _, _, p in cases]
    assert live.plan_lanes(cases, pods, 2)["tiny"] == 0 and live.plan_lanes(cases, pods, 2)["big"] == 1


def test_unknown_demand_runs_alone():
    rec = Recorder()
    pool = LivePool([rec.job("a"), rec.job("odd", demand=Demand(unknown=True)), rec.job("c")], 4, {}).start()
    _finish_all(rec, pool, ["a", "odd", "c"])
    assert rec.seen["odd"] == set()
    assert "odd" not in rec.seen["c"]


def test_a_cluster_that_does_not_come_up_fails_every_case_with_its_error(monkeypatch):
    from conformance.backends import live

    def unreachable(_profile, _lane):
        raise ConnectionError("cluster at 127.0.0.1:6443 refused the connection")

    monkeypatch.setattr(live, "_capacity", unreachable)
    monkeypatch.setattr(live, "_demand", lambda case, label, profile: Demand())
    case = type("Case", (), {"steps": None, "inputs": []})()
    live.start_pool([("t1", case, "trainer-v2.3"), ("t2", case, "trainer-v2.3")], workers=2)
    try:
        for key in ("t1", "t2"):
            with pytest.raises(ConnectionError, match="refused"):
                live.for_test(key).run([], "trainer-v2.3")
    finally:
        live.stop_pool()


def test_a_profile_with_a_slow_case_floats_before_heavier_ones(monkeypatch):
    from conformance.backends import live

    captured = {}

    class Pool:
        def __init__(self, jobs, workers, budgets=None, lanes=None):
            captured["jobs"], self.listeners = jobs, []

        def start(self):
            return self

        def stop(self):
            pass

    monkeypatch.setattr(live, "LivePool", Pool)
    monkeypatch.setattr(live, "_start_progress", lambda pool, jobs: None)
    monkeypatch.setattr(live, "_capacity", lambda profile, lane: {"pods": 100.0})
    monkeypatch.setattr(live, "_demand", lambda case, label, profile: Demand())
    monkeypatch.setattr(live.session, "max_lanes", lambda: 2)
    quick = type("Case", (), {"steps": None, "inputs": []})()
    slow = type("Case", (), {"steps": [type("Step", (), {"repeat": 1, "live_timeout": 180})()], "inputs": []})()
    # costs a 10, b 9 (each lane starts with one), c 6, e 3, d 1 - but d has a case that may take minutes
    cases = ([(f"a{i}", quick, "a") for i in range(10)] + [(f"b{i}", quick, "b") for i in range(9)]
             + [(f"c{i}", quick, "c") for i in range(6)] + [("d0", slow, "d")] + [(f"e{i}", quick, "e") for i in range(3)])
    try:
        live.start_pool(cases, workers=2)
        floating = [job.profile for job in captured["jobs"] if job.bind is not None]
        assert list(dict.fromkeys(floating)) == ["d", "c", "e"]
    finally:
        live.stop_pool()
        live.session.close()


def test_a_case_error_reaches_its_test_and_the_rest_go_on():
    ok = Job("ok", "p", Demand(), lambda: "fine")
    bad = Job("bad", "p", Demand(), lambda: (_ for _ in ()).throw(RuntimeError("webhook down")))
    pool = LivePool([bad, ok], 2, {}).start()
    with pytest.raises(RuntimeError, match="webhook down"):
        pool.result("bad")
    assert pool.result("ok") == "fine"


def test_stop_fails_cases_not_started_and_waits_for_those_in_flight():
    rec = Recorder()
    pool = LivePool([rec.job("a"), rec.job("b")], 1, {}).start()
    assert rec.started["a"].wait(5)
    threading.Timer(0.2, rec.finish, args=("a",)).start()
    pool.stop()
    assert rec.running == set()
    with pytest.raises(RuntimeError, match="stopped before this case started"):
        pool.result("b")


def test_demand_counts_pods_and_requests_and_doubles_scenarios():
    pod = {"apiVersion": "v1", "kind": "Pod", "spec": {
        "containers": [{"resources": {"requests": {"cpu": "500m"}, "limits": {"nvidia.com/gpu": 2}}},
                       {"resources": {"limits": {"cpu": "1"}}}],
        "initContainers": [{"resources": {"requests": {"cpu": "4"}}}]}}
    # cpu: max(init 4, 0.5 + 1) = 4; gpu from the limit when no request.
    assert pod_totals([pod, {"apiVersion": "batch/v1", "kind": "Job"}]) == {"pods": 1, "cpu": 4, "nvidia.com/gpu": 2}
    assert Demand.of_outputs([[pod, pod]], {}).resources["pods"] == 2
    assert Demand.of_outputs([[pod], [pod, pod]], {}).resources["pods"] == 4


def test_absent_claims_only_for_mentioned_names_the_case_does_not_create():
    demand = Demand(claims={"mine": "x"}, mentions=frozenset({"torch", "mine", "other"}))
    assert demand.with_absent({"torch", "mine", "elsewhere"}).claims == {"mine": "x", "torch": ABSENT}


def test_capacity_counts_ready_schedulable_nodes():
    ready = {"type": "Ready", "status": "True"}
    nodes = [{"status": {"conditions": [ready], "allocatable": {"pods": "110", "cpu": "32", "nvidia.com/gpu": "8"}}},
             {"status": {"conditions": [ready], "allocatable": {"pods": "110", "cpu": "32000m"}}},
             {"spec": {"unschedulable": True}, "status": {"conditions": [ready], "allocatable": {"pods": "110"}}},
             {"status": {"conditions": [{"type": "Ready", "status": "False"}], "allocatable": {"pods": "110"}}}]
    assert node_capacity(nodes) == {"pods": 220, "cpu": 64, "nvidia.com/gpu": 8}


def test_shared_input_first_user_creates_last_user_deletes():
    shared, log = SharedInputs(), []
    assert shared.create("k", lambda: log.append("create")) is True
    assert shared.create("k", lambda: log.append("create again")) is False
    shared.when_unused("k", lambda: log.append("leftover deleted"))  # in use: not deleted
    shared.release("k", lambda: log.append("delete"))
    assert log == ["create"]
    shared.release("k", lambda: log.append("delete"))
    assert log == ["create", "delete"]
    shared.when_unused("k", lambda: log.append("leftover deleted"))
    assert log[-1] == "leftover deleted"


def test_shared_input_failed_create_adds_no_user():
    shared = SharedInputs()
    with pytest.raises(ValueError):
        shared.create("k", lambda: (_ for _ in ()).throw(ValueError("denied")))
    assert shared.users("k") == 0


@functools.lru_cache(maxsize=None)
def _trainer_tables():
    from conformance.cases import load_all

    return load_all(Path(__file__).resolve().parent.parent / "cases" / "trainer")


def _table_case(table: str, row: str):
    [case] = [c for c in _trainer_tables() if getattr(c, "table", None) == table and c.id == row]
    return case


def test_rows_with_the_same_runtime_share_it_and_a_not_found_row_claims_its_absence():
    from conformance.backends.live import _demand

    profile = "trainer-v2.3"
    a = _demand(_table_case("torch-nproc", "res-requests-cpu-4"), "a", profile)
    b = _demand(_table_case("torch-nproc", "res-requests-cpu-500m"), "b", profile)
    assert a.claims == b.claims and set(a.claims) == {"torch-distributed"}
    assert a.resources["pods"] >= 1
    missing = _demand(_table_case("admission", "missing-cluster-runtime"), "m", profile)
    assert missing.claims == {}
    assert missing.with_absent(set(a.claims)).claims == {"torch-distributed": ABSENT}


def test_a_runtime_render_rejects_is_never_shared():
    from conformance.backends.live import _demand

    rejected = _demand(_table_case("admission", "ancestor-trainer-without-node-container"), "r", "trainer-v2.3")
    assert [mode.startswith("only ") for mode in rejected.claims.values()] == [True]


def test_a_case_bigger_than_the_cluster_is_named_with_what_it_lacks():
    pod = {"apiVersion": "v1", "kind": "Pod", "spec": {"containers": [{"resources": {"limits": {"nvidia.com/gpu": 8}}}]}}
    demand = Demand.of_outputs([[pod] * 3, [pod] * 4], {})
    assert demand.resources["pods"] == 8  # a scenario's pods counted twice for sharing the cluster...
    assert demand.beyond({"pods": 330, "nvidia.com/gpu": 24}) == ["32 nvidia.com/gpu (the cluster offers 24)"]  # ...not for fitting in it
    assert demand.beyond({"pods": 4, "nvidia.com/gpu": 32}) == []
