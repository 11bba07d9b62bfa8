"""Run live cases side by side, as far as they cannot disturb each other.

Most of a live case's time is waiting (kube-controller-manager batches Job updates for 1 s, a
steady state needs a quiet window), so running several at once is what makes a live table fast.
Cases are already isolated by namespace; what they still share is:

* **the operator**: one per profile (a profile switch restarts it and replaces the CRDs), so only
  cases of one profile are ever in flight together on one cluster; the next profile starts when
  the last case of the previous one has finished. A run may have several *lanes* - independent
  clusters, each with its own operator (the local planes of ``backends/live.py``) - and each lane
  goes through its profiles, side by side with the others: each starts with one of the heaviest,
  and every other profile goes to the first lane that runs out of work;
* **cluster-scoped inputs** (ClusterTrainingRuntimes): they keep their names, because names are
  part of what is tested. Each case *claims* every such name it creates or merely mentions, in a
  mode: the content it creates (its manifest plus what render says becomes of it - finalizers
  included), or ``absent`` when it only refers to the name and may need it not to exist (a
  "runtime not found" row). Cases whose claims agree run together and share the one object
  (:class:`conformance.live.session.SharedInputs` counts its users); any other pair waits;
* **node capacity**: a Pod that does not fit stays Pending and its case never looks steady.
  Each case carries its demand (pods, CPU, GPUs - read from render's output of the same case) and
  cases start only while the sum stays within a share of what the nodes offer. A case whose
  demand alone is larger runs with nothing else in flight, so it fails for its own reason.

Cases start in the order given (the pytest items' order), skipping ahead only past cases that
must wait; a test then waits for its own case's result (:meth:`LivePool.result`).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable

from reconciler.quantity import parse as parse_quantity

#: Resources a case's Pods ask the nodes for; the rest are not scheduling constraints here.
DEMAND_RESOURCES = ("pods", "cpu", "nvidia.com/gpu")


ABSENT = "absent"


@dataclass(frozen=True)
class Demand:
    """What a case needs from the cluster at once: resource totals, and its claims on
    cluster-scoped names (name -> mode: a content fingerprint, or :data:`ABSENT`)."""

    resources: dict[str, float] = field(default_factory=dict)
    claims: dict[str, str] = field(default_factory=dict)
    #: The largest single step's totals (``resources`` counts a scenario's pods twice).
    at_once: dict[str, float] = field(default_factory=dict)
    #: Every string in the case's inputs: a mention of another case's cluster-scoped name.
    mentions: frozenset[str] = frozenset()
    #: True when the demand could not be worked out: the case then runs alone.
    unknown: bool = False

    @classmethod
    def of_outputs(cls, outputs: list[list[dict]], claims: dict[str, str], mentions: frozenset[str] = frozenset()) -> "Demand":
        """From render's output(s) of the case (one list per scenario step): the largest step's
        Pods. A scenario's restarts keep old and new Pods side by side for a while, so a case with
        more than one step counts its Pods twice."""
        factor = 2 if len(outputs) > 1 else 1
        peak: dict[str, float] = {}
        for objects in outputs:
            for name, value in pod_totals(objects).items():
                peak[name] = max(peak.get(name, 0.0), value)
        return cls(resources={k: v * factor for k, v in peak.items()}, claims=dict(claims), at_once=peak,
                   mentions=mentions)

    def beyond(self, capacity: dict[str, float]) -> list[str]:
        """What this case needs at once that the whole cluster does not have (it could never settle)."""
        return [f"{self.at_once[name]:g} {name} (the cluster offers {capacity[name]:g})" for name in sorted(self.at_once)
                if name in capacity and self.at_once[name] > capacity[name]]

    def with_absent(self, names: set[str]) -> "Demand":
        """Add an ``absent`` claim for each of ``names`` (another case's cluster-scoped names)
        that this case mentions without creating."""
        extra = {name: ABSENT for name in names & self.mentions if name not in self.claims}
        if not extra:
            return self
        return Demand(resources=self.resources, claims={**self.claims, **extra}, at_once=self.at_once,
                      mentions=self.mentions, unknown=self.unknown)


def strings_in(value) -> set[str]:
    """Every string value inside a manifest (where another object's name could be mentioned)."""
    if isinstance(value, dict):
        return set().union(*(strings_in(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(strings_in(v) for v in value)) if value else set()
    return {value} if isinstance(value, str) else set()


def pod_totals(objects: list[dict]) -> dict[str, float]:
    """Pods, CPU cores and GPUs requested by the Pods among ``objects`` (requests, else limits,
    as the scheduler counts them: the larger of the init containers and the sum of the others)."""
    totals = {name: 0.0 for name in DEMAND_RESOURCES}
    for pod in objects:
        if pod.get("kind") != "Pod" or pod.get("apiVersion") != "v1":
            continue
        spec = pod.get("spec") or {}
        totals["pods"] += 1
        for name in ("cpu", "nvidia.com/gpu"):
            main = sum(_request(c, name) for c in spec.get("containers") or [])
            init = max((_request(c, name) for c in spec.get("initContainers") or []), default=0.0)
            totals[name] += max(main, init)
    return totals


def _request(container: dict, name: str) -> float:
    resources = container.get("resources") or {}
    value = (resources.get("requests") or {}).get(name, (resources.get("limits") or {}).get(name))
    if value is None:
        return 0.0
    try:
        return float(parse_quantity(str(value)))
    except ValueError:
        return 0.0


@dataclass
class Job:
    """One case to run: ``call()`` returns its result or raises (a skip is an exception too)."""

    key: str
    profile: str
    demand: Demand
    call: Callable[[], Any]
    #: Which cluster (lane) runs it; budgets, workers and the profile barrier are per lane.
    lane: int = 0
    #: For a job whose profile *floats*: the call on a given lane. The pool gives a floating
    #: profile, whole, to the first lane that has nothing else left to start (see
    #: :meth:`LivePool._claim`), and then calls ``bind(lane)`` for each of its jobs.
    bind: Callable[[int], Callable[[], Any]] | None = None
    #: ``bind`` kept once the job is placed: a lane that runs out of work may still take it over
    #: while it has not started (see :meth:`LivePool._steal`).
    rebind: Callable[[int], Callable[[], Any]] | None = None
    #: Relative cost, for progress estimates.
    cost: float = 1.0
    done: threading.Event = field(default_factory=threading.Event)
    result: Any = None
    error: BaseException | None = None


class LivePool:
    """Starts jobs on up to ``workers`` threads per lane within each lane's budget (resource ->
    amount; ``budget`` for every lane, or ``budgets`` per lane). Jobs with a ``bind`` float: their
    profiles, in the order of the job list, go to whichever of ``lanes`` runs out of work first."""

    def __init__(self, jobs: list[Job], workers: int, budget: dict[str, float] | None = None,
                 budgets: dict[int, dict[str, float]] | None = None, lanes: list[int] | None = None):
        self.workers = max(1, workers)
        self._lanes = list(lanes or [])
        self._budgets = budgets or {}
        self._default_budget = budget or {}
        self._pending = list(jobs)
        self._jobs = {job.key: job for job in jobs}
        self._running: list[Job] = []
        #: Listeners told about every job that starts or ends (progress display): f(event, job).
        self.listeners: list[Callable[[str, Job], None]] = []
        self._cond = threading.Condition()
        self._stopped = False
        self._dispatcher = threading.Thread(target=self._dispatch, name="live-pool", daemon=True)

    def start(self) -> "LivePool":
        self._dispatcher.start()
        return self

    def __contains__(self, key: str) -> bool:
        return key in self._jobs

    def result(self, key: str):
        job = self._jobs[key]
        job.done.wait()
        if job.error is not None:
            raise job.error
        return job.result

    def stop(self) -> None:
        """Start nothing new; wait for the cases in flight (each is bounded by its own timeouts,
        and cleans up after itself)."""
        with self._cond:
            self._stopped = True
            for job in self._pending:
                job.error = RuntimeError("live run stopped before this case started")
                job.done.set()
            self._pending.clear()
            self._cond.notify_all()
            while self._running:
                self._cond.wait()

    # ------------------------------------------------------------------ scheduling
    def _dispatch(self) -> None:
        with self._cond:
            while self._pending and not self._stopped:
                job = self._next_startable()
                if job is None:
                    self._cond.wait()
                    continue
                self._pending.remove(job)
                self._running.append(job)
                self._tell("start", job)
                threading.Thread(target=self._work, args=(job,), name=f"live-case-{job.key}", daemon=True).start()

    def _tell(self, event: str, job: Job) -> None:
        for listener in list(self.listeners):
            try:
                listener(event, job)
            except Exception:  # noqa: BLE001 - a display must never stop the run
                pass

    def _claim(self) -> None:
        """Give the next floating profile to each lane that has no job of its own left to start
        (it may still be finishing its last profile: the barrier then holds the new one back).
        Greedy list scheduling: with profiles ordered heaviest first, the lanes end close together
        even where a profile's cost was misjudged."""
        for lane in self._lanes:
            floating = [job for job in self._pending if job.bind is not None]
            if not floating:
                break
            if any(job.lane == lane and job.bind is None for job in self._pending):
                continue
            profile = floating[0].profile
            for job in floating:
                if job.profile == profile:
                    job.lane, job.call, job.rebind, job.bind = lane, job.bind(lane), job.bind, None
        self._steal()

    def _steal(self) -> None:
        """Once no floating profile is left, a lane with nothing left to start takes over the later
        half of the cases another lane has yet to start of one profile - when there are at
        least ``2 x workers`` of them, so the operator switch it costs is worth it: otherwise the
        last profile of a run goes on alone on one cluster while the other stands idle (38 s of a
        13-minute table)."""
        if any(job.bind is not None for job in self._pending):
            return
        for lane in self._lanes:
            if any(job.lane == lane for job in self._pending + self._running):
                continue  # work left, or still finishing it (its stolen cases would wait for that)
            donors: dict[tuple[int, str], list[Job]] = {}
            for job in self._pending:
                if job.rebind is not None and job.lane != lane:
                    donors.setdefault((job.lane, job.profile), []).append(job)
            if not donors:
                return
            jobs = max(donors.values(), key=len)
            if len(jobs) < 2 * self.workers:
                continue
            for job in jobs[len(jobs) - len(jobs) // 2:]:
                job.lane, job.call = lane, job.rebind(lane)

    def _next_startable(self) -> Job | None:
        self._claim()
        for lane in dict.fromkeys(job.lane for job in self._pending if job.bind is None):
            job = self._next_in_lane(lane)
            if job is not None:
                return job
        return None

    def _next_in_lane(self, lane: int) -> Job | None:
        running = [j for j in self._running if j.lane == lane]
        pending = [j for j in self._pending if j.lane == lane and j.bind is None]
        if len(running) >= self.workers or not pending:
            return None
        profile = running[0].profile if running else pending[0].profile
        held: dict[str, str] = {}
        for job in running:
            held.update(job.demand.claims)
        waiting: set[str] = set()  # names an earlier case waits for: later ones may not overtake it
        for job in pending:
            if job.profile != profile:
                break  # a profile starts only after the previous one of its lane has finished
            claims = job.demand.claims
            agrees = all(held.get(name, mode) == mode for name, mode in claims.items())
            if agrees and not (waiting & claims.keys()) and self._fits(job, running):
                return job
            waiting |= claims.keys()
        return None

    def _fits(self, job: Job, running: list[Job]) -> bool:
        if not running:
            return True  # alone, a case gets the whole cluster (and fails for itself if too big)
        if job.demand.unknown or any(j.demand.unknown for j in running):
            return False
        for name, limit in self._budgets.get(job.lane, self._default_budget).items():
            used = sum(j.demand.resources.get(name, 0.0) for j in running)
            if used + job.demand.resources.get(name, 0.0) > limit:
                return False
        return True

    def _work(self, job: Job) -> None:
        try:
            job.result = job.call()
        except BaseException as exc:  # noqa: BLE001 - handed to the test, which re-raises it
            job.error = exc
        finally:
            with self._cond:
                self._running.remove(job)
                job.done.set()
                self._tell("end", job)
                self._cond.notify_all()


def node_capacity(nodes: list[dict]) -> dict[str, float]:
    """The allocatable pods, CPU and GPUs of the Ready, schedulable nodes, summed."""
    totals = {name: 0.0 for name in DEMAND_RESOURCES}
    for node in nodes:
        if (node.get("spec") or {}).get("unschedulable"):
            continue
        conditions = (node.get("status") or {}).get("conditions") or []
        if not any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions):
            continue
        allocatable = (node.get("status") or {}).get("allocatable") or {}
        for name in DEMAND_RESOURCES:
            if name in allocatable:
                totals[name] += float(parse_quantity(str(allocatable[name])))
    return totals
