"""One cluster, one operator and one set of watches, shared by every case of a run.

* The cluster is the one ``--kubeconfig`` (or ``TC_LIVE_KUBECONFIG``) names; without one the
  session starts a :class:`~conformance.cluster.LocalControlPlane` and stops it at the end.
* The operator under test is, by default, the reference reconciler in its own process
  (``python -m reconciler.live``), restarted whenever the profile changes (each profile serves
  its own CRDs). ``TC_LIVE_OPERATOR=external`` leaves installing and running an operator to the
  user: the harness then only applies inputs and reads back what happened.
* Informers over every kind a case can produce (the profile's CRD kinds, the built-in kinds
  render models - ConfigMap, Secret, Service, Job, Pod, NetworkPolicy ... - and Events) feed :class:`~conformance.live.steady.Activity` and a cache that the
  steadiness check reads.
"""

from __future__ import annotations

import atexit
import json
import os
import queue
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from reconciler import crds as crd_files, profiles
from reconciler.live.informer import Cache, Informer, wait_synced
from reconciler.live.operator import builtin_kinds
from reconciler.live.rest import Api

from . import external
from .shared import SharedInputs
from .steady import Activity



#: No proxy from the environment for 127.0.0.1.
_LOOPBACK = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _env_float(name: str, default: float) -> float:
    return float(os.environ.get(name, default))


PROVIDERS = ("local", "realnodes")
POD_LIFECYCLES = ("plane", "harness", "cluster")


class Settings:
    """Knobs, from the environment (the pytest plugin and the CLI set the kubeconfig)."""

    def __init__(self):
        self.kubeconfig: str | None = os.environ.get("TC_LIVE_KUBECONFIG") or None
        self.operator = os.environ.get("TC_LIVE_OPERATOR") or "reference"
        if self.operator not in ("reference", "external"):
            raise ValueError(f"TC_LIVE_OPERATOR={self.operator!r}: expected reference or external")
        self.quiet = _env_float("TC_LIVE_QUIET", 0.3)
        self.steady_timeout = _env_float("TC_LIVE_TIMEOUT", 30.0)
        #: The quiet window after a scenario fault: kube-controller-manager's Job controller batches
        #: pod updates for 1 s before it syncs (an in-place restart past backoffLimit changes
        #: nothing else it could be waited on by), so a fault step waits for more than that.
        #: A local control plane's Job controller batches for 0.1 s only (cluster/local.py), so the
        #: window is shorter there (LiveSession.fault_quiet).
        self.fault_quiet = _env_float("TC_LIVE_FAULT_QUIET", 0) or None
        self.start_timeout = _env_float("TC_LIVE_START_TIMEOUT", 90.0)
        #: How long Pods for another scheduler (volcano) may stay unbound before the case is skipped.
        self.scheduler_grace = _env_float("TC_LIVE_SCHEDULER_GRACE", 2.0)
        #: Without a kubeconfig, the planes this run starts: ``local`` (kwok runs every pod) or
        #: ``realnodes`` (stand-in kubelets that never run the cases' images, as kind's would).
        self.provider = os.environ.get("TC_LIVE_PROVIDER") or "local"
        if self.provider not in PROVIDERS:
            raise ValueError(f"TC_LIVE_PROVIDER={self.provider!r}: expected one of {', '.join(PROVIDERS)}")
        #: Who runs the cases' pods: ``harness`` (its own Nodes and kwok, conformance/cluster/podlife.py),
        #: ``cluster`` (the cluster's own kubelets), or ``plane`` (a local plane's kwok; the default there).
        self.pod_lifecycle = os.environ.get("TC_LIVE_POD_LIFECYCLE") or (
            "plane" if self.provider == "local" and not self.kubeconfig else "harness")
        if self.pod_lifecycle not in POD_LIFECYCLES:
            raise ValueError(f"TC_LIVE_POD_LIFECYCLE={self.pod_lifecycle!r}: expected one of {', '.join(POD_LIFECYCLES)}")
        if self.pod_lifecycle == "plane" and (self.kubeconfig or self.provider != "local"):
            raise ValueError("pod lifecycle 'plane' is the local plane's own kwok; this cluster has none: "
                             "use harness or cluster")


class OperatorProcess:
    """``python -m reconciler.live`` as a child; ready once it prints its ``ready`` line."""

    def __init__(self, kubeconfig: str, profile: str, log_dir: Path, timeout: float):
        self.profile = profile
        self.log = log_dir / f"operator-{profile}.log"
        self._log_file = open(self.log, "ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "reconciler.live", "--kubeconfig", kubeconfig, "--profile", profile,
             "--exit-with-stdin", "--timeout", str(timeout)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log_file)
        lines: queue.Queue = queue.Queue()
        def read() -> None:
            for line in self.proc.stdout:
                lines.put(line)
            lines.put(b"")  # stdout closed: the operator has exited

        threading.Thread(target=read, daemon=True).start()
        try:
            line = lines.get(timeout=timeout + 10)
        except queue.Empty:
            line = b""
        if not line.startswith(b"ready "):
            self.stop()
            raise RuntimeError(f"reference operator for {profile} did not start; {self.log}:\n{self.tail()}")
        self.ready = json.loads(line[len(b"ready "):])

    def tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self, timeout: float = 15.0) -> None:
        from ..cluster.process import cpu_seconds
        self.cpu = cpu_seconds(self.proc.pid) or 0.0
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()  # --exit-with-stdin: it unregisters its webhooks and exits
                self.proc.wait(timeout)
            except (subprocess.TimeoutExpired, OSError):
                self.proc.terminate()
                try:
                    self.proc.wait(5)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
        self._log_file.close()


class LiveSession:
    def __init__(self, settings: Settings | None = None, lane: int = 0):
        self.settings = settings or Settings()
        self.lane = lane
        #: Names this run's namespaces, and (with the lane) its harness Nodes.
        self.run_token = secrets.token_hex(3)
        #: The reference operator's logs: made when an operator first starts, removed at close.
        self.log_dir: Path | None = None
        self.plane = None
        #: The harness's own pod lifecycle, when this session brings it (conformance/cluster/podlife.py).
        self.pods = None
        #: The most any case of the run needs at once (pods, cpu, nvidia.com/gpu): sizes the harness's Nodes.
        self.demand_at_once: dict[str, float] = {}
        self.api: Api | None = None
        self.operator: OperatorProcess | None = None
        self.profile: str | None = None
        self.cache = Cache()
        self.activity = Activity()
        self.shared = SharedInputs()
        self.informers: list[Informer] = []
        self.timings: dict[str, float] = {}
        #: Set by close(): a thread that started this session's plane may end then.
        self.closed = threading.Event()
        #: CPU seconds per component, filled in by close() (benchmarks: where a run's time goes).
        self.cpu: dict[str, float] = {}
        self._cpu_start = sum(os.times()[:2])
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ set-up
    def ensure(self, profile: str) -> Api:
        with self._lock:
            if self.api is None:
                self._connect()
            if profile != self.profile or (self.operator is not None and not self.operator.alive()):
                self._switch(profile)
            return self.api

    def _connect(self) -> None:
        started = time.monotonic()
        kubeconfig = self.settings.kubeconfig
        if kubeconfig is None:
            from ..cluster import LocalControlPlane
            from ..cluster.local import real_nodes
            nodes = real_nodes() if self.settings.provider == "realnodes" else None
            self.plane = LocalControlPlane(start_timeout=self.settings.start_timeout, nodes=nodes).up()
            kubeconfig = str(self.plane.kubeconfig)
        self.kubeconfig = kubeconfig
        self.api = Api.from_kubeconfig(kubeconfig, user_agent="training-conformance-harness")
        if self.settings.pod_lifecycle == "harness":
            from ..cluster.podlife import HarnessPods, node_capacity
            pods = HarnessPods(self.api, Path(kubeconfig), run_id=f"{self.run_token}{self.lane}",
                               capacity=node_capacity(self.demand_at_once, nodes=3),
                               start_timeout=self.settings.start_timeout)
            self.pods = pods.up()
        self.timings["cluster"] = time.monotonic() - started

    def namespace_metadata(self) -> tuple[dict[str, str], dict[str, str]]:
        """Labels and annotations every namespace this session creates for a case gets besides
        its case label: the run (``conformance cluster clean`` finds a killed run's by it) and,
        with the harness's pod lifecycle, the steering of its pods onto the harness's Nodes."""
        if self.pods is not None:
            return self.pods.namespace_metadata()
        from ..cluster.podlife import RUN_LABEL
        return {RUN_LABEL: f"{self.run_token}{self.lane}"}, {}

    def _stop_operator(self) -> None:
        if self.operator is not None:
            self.operator.stop()
            self.cpu["reference operator"] = self.cpu.get("reference operator", 0.0) + self.operator.cpu
            self.operator = None

    def _switch(self, profile: str) -> None:
        started = time.monotonic()
        self._stop_operator()
        self._stop_informers()
        if self.settings.operator == "reference":
            if self.log_dir is None:
                self.log_dir = Path(tempfile.mkdtemp(prefix="tc-live-"))
            self.operator = OperatorProcess(self.kubeconfig, profile, self.log_dir, self.settings.start_timeout)
        self.api.forget()
        if self.settings.operator == "external":  # nothing of ours installed: the vendor's must be there
            external.check_served(self.api, [profile], where=f"the cluster of {self.kubeconfig}")
        self._start_informers(profiles.get(profile))
        self.profile = profile
        self.timings[f"operator {profile}"] = time.monotonic() - started

    def _start_informers(self, profile) -> None:
        # ServiceAccounts too: a case waits for its namespaces' default one (case.py) in this cache.
        kinds = [(f"{g}/{v}", k) for g, v, k in crd_files.schemas(profile.crd_dirs)] + builtin_kinds() + [
            ("v1", "Event"), ("v1", "ServiceAccount")]
        self.cache = Cache()
        for api_version, kind in kinds:
            resource = self.api.resource(api_version, kind)
            if resource is None:  # an external operator that does not serve this kind
                continue
            informer = Informer(self.api, resource, self.cache, self.activity.handler)
            self.informers.append(informer)
            informer.start()
        wait_synced(self.informers, self.settings.start_timeout)

    def _stop_informers(self) -> None:
        for informer in self.informers:
            informer.stop()
        self.informers = []

    def close(self) -> None:
        try:
            self._close()
        finally:
            if self.log_dir is not None and not os.environ.get("TC_LIVE_KEEP_LOGS"):  # kept on request
                shutil.rmtree(self.log_dir, ignore_errors=True)
                self.log_dir = None

    def _close(self) -> None:
        with self._lock:
            self._stop_informers()
            self._stop_operator()
            self.cpu["harness"] = sum(os.times()[:2]) - self._cpu_start
            if self.pods is not None:
                self.pods.down()  # before the plane: its Nodes live in that cluster
                self.pods = None
            if self.api is not None:
                self.api.close()
                self.api = None
            if self.plane is not None:
                self.cpu.update(self.plane.cpu_seconds())
                self.plane.down()
                self.plane = None
            self.closed.set()
            self.profile = None

    def operator_behind(self) -> list[str]:
        """What the reference operator has not handled yet of everything this session's informers
        saw ([] when it has caught up, or when the operator is not ours: nothing to ask)."""
        url = (self.operator.ready or {}).get("caughtUpUrl") if self.operator is not None else None
        if not url:
            return []
        seen = [[group, kind, rv] for (group, kind), rv in self.activity.seen_versions().items()]
        request = urllib.request.Request(url, data=json.dumps({"seen": seen}).encode(),
                                         headers={"Content-Type": "application/json"}, method="POST")
        try:
            with _LOOPBACK.open(request, timeout=5) as response:
                return [f"reference operator has not handled {b}" for b in json.loads(response.read())["behind"]]
        except (OSError, ValueError, KeyError) as exc:
            return [f"reference operator does not answer {url}: {exc}"]

    @property
    def owns_cluster(self) -> bool:
        """The cluster is a local plane this session started and will throw away."""
        return self.plane is not None

    @property
    def fault_quiet(self) -> float:
        """The quiet window that ends a fault step's settle: more than the Job controller's batch
        period (1 s upstream, 0.1 s on the local plane), or TC_LIVE_FAULT_QUIET."""
        if self.settings.fault_quiet is not None:
            return self.settings.fault_quiet
        if self.plane is not None:
            from ..cluster.local import JOB_SYNC_BATCH_SECONDS
            return max(self.settings.quiet, 5 * JOB_SYNC_BATCH_SECONDS)
        return 1.5

    def kubernetes_version(self) -> str:
        if self.api is None:
            self._connect()
        return self.api.request("GET", "/version").get("gitVersion", "unknown")


#: Lane 0 (``get()``) and any further lanes a run opened (``lane(i)``): independent clusters.
_SESSIONS: list[LiveSession] = []


def get() -> LiveSession:
    return lane(0)


def lane(index: int) -> LiveSession:
    """The session of lane ``index`` (made on first use; a lane beyond the first can only be a
    local plane of its own, see :func:`max_lanes`)."""
    if not _SESSIONS:
        atexit.register(close)
    while len(_SESSIONS) <= index:
        _SESSIONS.append(LiveSession(lane=len(_SESSIONS)))
    return _SESSIONS[index]


def max_lanes() -> int:
    """How many clusters a run may use side by side: one when it is given a cluster (a kubeconfig,
    an external operator), else ``TC_LIVE_PLANES`` local planes (default 2: on 2 cores one plane
    keeps about one core busy, and a live table is mostly waiting)."""
    settings = Settings()
    if settings.kubeconfig or settings.operator == "external":
        return 1
    return max(1, int(os.environ.get("TC_LIVE_PLANES", "2")))


def configure(kubeconfig: str | None = None) -> None:
    """Point the (next) sessions at a cluster; the pytest plugin calls this for ``--kubeconfig``."""
    if kubeconfig:
        os.environ["TC_LIVE_KUBECONFIG"] = str(kubeconfig)
    for session in _SESSIONS:
        if session.api is None:
            session.settings = Settings()


#: The CPU use of the last sessions closed in this process, summed per component (benchmarks read it).
LAST_CPU: dict[str, float] = {}


def close() -> None:
    if not _SESSIONS:
        return
    LAST_CPU.clear()
    for session in _SESSIONS:
        session.close()
        for name, seconds in session.cpu.items():
            # "harness" is this whole process since the session began: the first lane's covers the others.
            LAST_CPU[name] = max(LAST_CPU.get(name, 0.0), seconds) if name == "harness" else LAST_CPU.get(name, 0.0) + seconds
    _SESSIONS.clear()
