"""Live backend: the case table against a real API server (``--backend live``).

Same interface as :mod:`.render` - ``run(manifests, profile) -> Outcome`` - so the same
expectations and the same goldens apply. The cluster is ``--kubeconfig`` / ``TC_LIVE_KUBECONFIG``
or, without one, a local control plane started for the run; the operator is the reference
reconciler in its own process unless ``TC_LIVE_OPERATOR=external``. Each case runs in fresh
namespaces (see :mod:`conformance.live.case`); a suite run starts its cases side by side where
they cannot disturb each other (:mod:`conformance.live.pool`, ``--live-workers``), and each test
then waits for its own case.

Scenario rows (steps, faults, ``never`` windows) are replayed on the cluster
(:mod:`conformance.live.scenario`, :mod:`conformance.live.faults`). What a live run cannot do is
skipped with the reason, never passed: a case whose Pods wait for a scheduler the cluster does
not run cannot finish.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from types import SimpleNamespace

import pytest

from reconciler import crds as crd_files, meta, profiles

from ..live import session
from ..live.case import CaseRun
from ..live.pool import Demand, Job, LivePool, node_capacity, strings_in
from ..live.progress import LiveProgress, Tally
from ..normalize import normalize
from ..live.scenario import ScenarioRun
from ..outcome import Outcome

#: Per-case step timings of this process's run, for benchmarks: [(label, {step: seconds})].
TIMINGS: list[tuple[str, dict[str, float]]] = []


def run(manifests: list[dict], profile: str, label: str = "", lane: int = 0) -> Outcome:
    case = CaseRun(session.lane(lane), profile, manifests, label=label)
    return _finished(case, case.run(), label)


def _finished(runner, result, label: str):
    """Record a case's or scenario's step timings; a case the provider cannot run is a skip."""
    TIMINGS.append((label, dict(runner.timings)))
    if runner.skip_reason:
        pytest.skip(f"live backend: {runner.skip_reason}")
    return result


#: Share of the nodes' allocatable pods/CPU/GPUs that cases in flight together may ask for.
NODE_SHARE = 0.5
#: Pods in flight per lane beside one another: what one plane's kwok, kube-controller-manager and
#: operator keep up with on a small machine. A case asking more (the 1,024-pod group restart) runs
#: alone in its lane, so the cases beside it are not starved and its own timings are its own.
PODS_IN_FLIGHT = float(os.environ.get("TC_LIVE_PODS_IN_FLIGHT", 256))

_POOL: LivePool | None = None


def for_test(label: str):
    """The backend as the pytest plugin hands it to a test: runs carry the test id as their label
    (namespace label, timings); a case the pool has run (or is running) is waited for."""
    if _POOL is not None and label in _POOL:
        pooled = lambda *_: _POOL.result(label)  # noqa: E731 - the pool ran this very case
        return SimpleNamespace(run=pooled, run_steps=pooled, kubernetes_version=kubernetes_version)
    return SimpleNamespace(run=lambda manifests, profile: run(manifests, profile, label=label),
                           run_steps=lambda steps, profile: run_steps(steps, profile, label=label),
                           kubernetes_version=kubernetes_version)


def start_pool(cases: list[tuple[str, object, str]], workers: int) -> None:
    """Start running ``(test id, case, profile)`` on up to ``workers`` threads per lane, in that
    order within a lane (lanes: :func:`plan_lanes`; on alike lanes, all but each lane's first
    profile float, heaviest first - :class:`~conformance.live.pool.LivePool`)."""
    global _POOL
    stop_pool()
    if not cases:
        return
    # Within a profile, a case whose steps may take minutes (liveTimeout) starts first, so the
    # others run beside it instead of the profile waiting for it at the end.
    profile_order = {profile: i for i, (_, _, profile) in reversed(list(enumerate(cases)))}
    cases = sorted(cases, key=lambda c: (profile_order[c[2]], not any(s.live_timeout for s in c[1].steps or [])))
    demands = [_demand(case, label, profile) for label, case, profile in cases]
    claimed = set().union(*(d.claims.keys() for d in demands))
    lane_of = plan_lanes(cases, demands, session.max_lanes())
    lanes = sorted(set(lane_of.values()))
    # Each lane starts with one of the heaviest profiles (longest-processing-time first places them
    # on lanes 0..n-1); the others may float to whichever lane runs out of work first.
    cost: dict[str, float] = {}
    for (_, case, profile), demand in zip(cases, demands):
        cost[profile] = cost.get(profile, 0.0) + case_cost(case, demand)
    heaviest = sorted(cost, key=lambda p: (-cost[p], p))
    firsts = {lane_of[p]: p for p in heaviest[:len(lanes)]}
    for (_, _, profile), demand in zip(cases, demands):
        for lane in (lanes if len(lanes) > 1 and profile not in firsts.values() else [lane_of[profile]]):
            at_once = session.lane(lane).demand_at_once  # sizes a harness's own Nodes
            for name, value in demand.at_once.items():
                at_once[name] = max(at_once.get(name, 0.0), value)
    capacities, failures = _connect_lanes(firsts)
    # Float only between lanes that are alike: all up, with the same nodes (this run's local planes).
    floats = len(lanes) > 1 and not failures and all(capacities[lane] == capacities[lanes[0]] for lane in lanes)
    if floats:
        # Profiles with a case that may take minutes float first: as the last profile of a run, one
        # such case was all that still ran (mpi-operator-v0.6: a deletion that waits for
        # kube-controller-manager's 30-s garbage-collector resync, 39 s alone on one plane).
        slow = {profile for _, case, profile in cases if any(s.live_timeout for s in case.steps or [])}
        rank = {p: i for i, p in enumerate(sorted(heaviest, key=lambda p: (p not in slow, -cost[p], p)))}
        order = sorted(range(len(cases)), key=lambda i: rank[cases[i][2]])  # stable: keeps liveTimeout first
        cases, demands = [cases[i] for i in order], [demands[i] for i in order]

    def call_on(label, case, profile, demand):
        def bound(lane: int):
            if lane in failures:
                return _raiser(failures[lane])
            return _caller(label, case, profile, demand.beyond(capacities[lane]), lane,
                           needs_pods=demand.at_once.get("pods", 0) > 0)
        return bound

    jobs = []
    for (label, case, profile), demand in zip(cases, demands):
        bind = call_on(label, case, profile, demand)
        floating = floats and profile not in firsts.values()
        jobs.append(Job(label, profile, demand.with_absent(claimed), None if floating else bind(lane_of[profile]),
                        lane=lane_of[profile], cost=case_cost(case, demand), bind=bind if floating else None))
    budgets = {lane: {name: min(value * NODE_SHARE, PODS_IN_FLIGHT) if name == "pods" else value * NODE_SHARE
                      for name, value in capacity.items()}
               for lane, capacity in capacities.items()}
    pool = LivePool(jobs, workers, budgets=budgets, lanes=lanes if floats else None)
    _start_progress(pool, jobs)
    _POOL = pool.start()


_PROGRESS: LiveProgress | None = None


def _start_progress(pool: LivePool, jobs: list[Job]) -> None:
    global _PROGRESS
    tally = Tally()
    for job in jobs:
        tally.add(job.profile, job.lane, job.cost)
    _PROGRESS = LiveProgress(tally).start()

    def tell(event: str, job: Job) -> None:
        failed = job.error is not None and not isinstance(job.error, pytest.skip.Exception)
        _PROGRESS.on_event(event, job.profile, job.cost, failed, lane=job.lane)

    pool.listeners.append(tell)


def _connect_lanes(firsts: dict[int, str]) -> tuple[dict[int, dict[str, float]], dict[int, Exception]]:
    """Start (or connect) every lane's cluster with its first profile, all at once; returns the
    capacity of each and the error of each that failed (its cases then fail with it).

    A local control plane's processes die with the thread that started them (PR_SET_PDEATHSIG),
    and the pool's threads come and go: lane 0 starts on this (the main) thread, which also
    installs the planes' signal hooks; every other lane on a thread of its own that lives until
    its session closes."""
    capacities: dict[int, dict[str, float]] = {}
    failures: dict[int, Exception] = {}

    def connect(lane: int) -> None:
        try:
            capacities[lane] = _capacity(firsts[lane], lane)
        except Exception as exc:  # noqa: BLE001 - reported through every case of the lane
            capacities[lane], failures[lane] = {}, exc

    def keeper(lane: int, ready: threading.Event) -> None:
        connect(lane)
        ready.set()
        session.lane(lane).closed.wait()

    waits = []
    for lane in sorted(firsts):
        if lane == 0:
            continue
        ready = threading.Event()
        threading.Thread(target=keeper, args=(lane, ready), name=f"live-lane-{lane}", daemon=True).start()
        waits.append(ready)
    if 0 in firsts:
        connect(0)
    for ready in waits:
        ready.wait()
    return capacities, failures


def case_cost(case, demand: Demand) -> float:
    """A rough relative cost of a live case: a settle per step (a fault step's repeats each
    settle), plus its pods (a 1,024-pod group weighs like a few dozen small cases)."""
    steps = sum(getattr(step, "repeat", 1) for step in case.steps) if case.steps else 1
    return steps + demand.at_once.get("pods", 0.0) / 32


def plan_lanes(cases: list[tuple[str, object, str]], demands: list[Demand], lanes: int) -> dict[str, int]:
    """Profile -> lane: each profile runs whole on one lane; the heaviest profiles are placed first,
    each on the lane with the least work so far (longest-processing-time first)."""
    cost: dict[str, float] = {}
    for (_, case, profile), demand in zip(cases, demands):
        cost[profile] = cost.get(profile, 0.0) + case_cost(case, demand)
    load = [0.0] * max(1, min(lanes, len(cost)))
    lane_of = {}
    for profile in sorted(cost, key=lambda p: (-cost[p], p)):
        lane = min(range(len(load)), key=lambda i: (load[i], i))
        lane_of[profile] = lane
        load[lane] += cost[profile]
    return lane_of


def _raiser(exc: Exception):
    def call():
        raise exc
    return call


def stop_pool() -> None:
    global _POOL, _PROGRESS
    if _POOL is not None:
        _POOL.stop()
        _POOL = None
    if _PROGRESS is not None:
        _PROGRESS.stop()
        _PROGRESS = None


def _caller(label: str, case, profile: str, beyond: list[str], lane: int, needs_pods: bool = False):
    if beyond:  # its pods could never all start here: a skip that says why, never a pass
        reason = f"live backend: needs {', '.join(beyond)} at once on its schedulable nodes"
        return lambda: pytest.skip(reason)
    if needs_pods and session.lane(lane).settings.pod_lifecycle == "cluster":
        reason = ("live backend: needs pod lifecycle - its pods must start and play faults, which the cases' "
                  "placeholder images never do on the cluster's own kubelets (--pod-lifecycle harness brings it)")
        return lambda: pytest.skip(reason)
    if case.steps:
        return lambda: run_steps(case.steps, profile, label=label, lane=lane)
    return lambda: run(case.inputs, profile, label=label, lane=lane)


def _capacity(first_profile: str, lane: int) -> dict[str, float]:
    """Connects (or starts) the lane's cluster; the pods, CPUs and GPUs its schedulable nodes offer."""
    api = session.lane(lane).ensure(first_profile)
    return node_capacity(api.list(api.must_resource("v1", "Node")).get("items", []))


def _demand(case, label: str, profile: str) -> Demand:
    """A case's demand, read from render's output of it (milliseconds per case)."""
    from . import render

    served = crd_files.schemas(profiles.get(profile).crd_dirs)

    def cluster_scoped(obj: dict) -> bool:
        api_version = obj.get("apiVersion", "")
        found = served.get((meta.group_of(api_version), api_version.split("/")[-1], obj.get("kind", "")))
        return found is not None and found[1] == "Cluster"

    try:
        if case.steps:
            outputs = [outcome.objects for outcome in render.run_steps(case.steps, profile)]
            inputs = [obj for step in case.steps for obj in (step.apply or [])]
            final: list[dict] = []  # scenarios do not share cluster-scoped inputs
        else:
            outputs, inputs = [render.run(case.inputs, profile).objects], case.inputs
            final = outputs[0]
        claims = {}
        for obj in filter(cluster_scoped, inputs):
            name = obj["metadata"]["name"]
            claims[name] = _share_mode(obj, final) or f"only {label}"
        return Demand.of_outputs(outputs, claims, frozenset(strings_in(inputs)))
    except Exception:  # noqa: BLE001 - the case itself will report what is wrong; it just runs alone
        return Demand(unknown=True)


def _share_mode(obj: dict, rendered: list[dict]) -> str | None:
    """Cases may share a cluster-scoped input when they create the same manifest and render
    stores the same object for it (so its finalizers, say, do not depend on who else uses it);
    None when render did not store it (rejected: each case must see its own rejection)."""
    key = (obj.get("apiVersion"), obj.get("kind"), obj["metadata"]["name"])
    stored = [o for o in rendered if (o.get("apiVersion"), o.get("kind"), o["metadata"].get("name")) == key]
    if not stored:
        return None
    text = json.dumps([obj, normalize([stored[0]])], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def run_steps(steps: list, profile: str, label: str = "", lane: int = 0) -> list[Outcome]:
    scenario = ScenarioRun(session.lane(lane), profile, steps, label=label)
    return _finished(scenario, scenario.run_steps(), label)


def kubernetes_version() -> str:
    return session.get().kubernetes_version()
