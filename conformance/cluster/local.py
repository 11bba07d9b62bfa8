"""A throw-away Kubernetes control plane on 127.0.0.1 with kwok standing in for kubelets.

:class:`LocalControlPlane` runs etcd, kube-apiserver, kube-controller-manager, kube-scheduler
and kwok as child processes (binaries from ``make control-plane``), waits for each to report
ready, registers a few fake GPU Nodes and writes an admin kubeconfig::

    with LocalControlPlane() as cluster:
        api = kubernetes.client.CoreV1Api(cluster.api_client())

Choices, and why:

* Every listener is on 127.0.0.1 at a port the kernel picked; kube-apiserver serves only its
  secure port. All clients (our tests, kube-controller-manager, kube-scheduler, kwok) use one
  admin client certificate in ``system:masters`` (see :mod:`.certs`).
* Clients authenticate with a bearer token of the admin user (``--token-auth-file``), not the
  admin client certificate (still written, in ``pki/``): kube-apiserver verifies a client
  certificate's chain on every request, which cost 11 % of its CPU in a live table (ECDSA).
  Go components run with ``GOGC=400``: garbage collection was another 10 %, and memory is
  plentiful for a throw-away plane.
* ``--authorization-mode=Node,RBAC`` as in kubeadm clusters: the admin certificate bypasses
  RBAC, but an operator that runs with its own ServiceAccount token meets real RBAC, which is
  part of what a conformance run should check. AlwaysAllow would hide missing ClusterRole
  rules.
* Admission: the default plugin set, nothing disabled. ServiceAccount admission (which envtest
  turns off) works because kube-controller-manager runs and creates each namespace's
  ``default`` ServiceAccount; ``up()`` waits for ``default/default`` for that reason.
* ``--endpoint-reconciler-type=none``: the apiserver would publish its 127.0.0.1 address in the
  ``kubernetes`` Endpoints, which validation rejects (loopback), and nothing in the cluster
  could use it anyway - no pod really runs.
* ``--http2-max-streams-per-connection=1000`` (kube-apiserver's default is 100, a guard of a
  shared server against clients that open streams to exhaust it): kube-controller-manager keeps
  a watch open on every resource type (its garbage collector), so under the default its HTTP/2
  client opened a new connection, TLS handshake and all, whenever a burst found its connections
  full - 1,068 connections in the 1,024-pod group restart (the handshakes were ~4% of
  kube-apiserver's CPU), 2 with this. The requests and their answers are the same whichever
  connection carries them, so no row sees a difference. Only this throw-away plane sets it
  (aggregated apiservers get 1,000 by default); a user's cluster keeps its own.
* ``--shutdown-watch-termination-grace-period=2s`` lets a stopped apiserver end its clients'
  watches; without it a restart (:meth:`LocalControlPlane.restart`) waits out the 60 s request
  timeout, or our 10 s SIGTERM grace and then SIGKILL.
* kube-controller-manager and kube-scheduler run with ``--leader-elect=false``: a single
  replica needs no lease, and with leader election a restart of the apiserver longer than the
  renew deadline would make both exit.
* etcd runs with ``--unsafe-no-fsync``: the data is thrown away, durability buys nothing.
* ``volcano-binder`` (a Python child, :mod:`.volcano_binder`) stands in for the Volcano
  scheduler: it binds Pods with ``schedulerName: volcano`` to fake Nodes and does nothing else
  (gang-less). Platform, like kwok - in a vendor's cluster the real Volcano scheduler runs.
  ``LocalControlPlane(volcano_binder=False)`` leaves it out, for a plane where the real
  vc-scheduler runs (the upstream kit's Volcano): both would bind the same pods.
* kwok manages only Nodes annotated ``kwok.x-k8s.io/node: fake`` (all Nodes here) with the
  stages in ``kwok-stages.yaml``; that file documents the pod-outcome convention
  (``training-conformance.io/exit-code`` label). Node liveness goes through Leases
  (``--node-lease-duration-seconds``), which kube-controller-manager's node lifecycle
  controller reads, so fake Nodes never turn NotReady.

Teardown is certain: each component is its own process group, stopped with SIGTERM then
SIGKILL; ``down()`` runs on leaving the ``with`` block, on an exception in ``up()``, at
interpreter exit, and on SIGTERM/SIGHUP; on Linux the children also get SIGKILL if the thread
that started them dies (PR_SET_PDEATHSIG) - unless ``detach=True``, which the ``conformance
cluster up`` command uses to leave the cluster running.
"""

from __future__ import annotations

import datetime as dt
import json
import secrets
import shutil
import socket
import ssl
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from . import certs
from .binaries import COMPONENTS, KUBERNETES_VERSION, bin_dir as default_bin_dir, find_binaries
from .process import cpu_seconds, down_at_exit, forget_at_exit, is_running, log_tail, spawn, stop_groups

SERVICE_CLUSTER_IP_RANGE = "10.0.0.0/24"  # certs.SERVING_IPS holds its first address
POD_CIDR = "10.244.0.1/16"  # kwok's pod IPs; apart from the service range
SERVICE_ACCOUNT_ISSUER = "https://kubernetes.default.svc.cluster.local"
KWOK_NODE_ANNOTATION = "kwok.x-k8s.io/node"
KWOK_NODE_ANNOTATION_VALUE = "fake"
KWOK_NODE_LEASE_SECONDS = 40
STAGES_FILE = Path(__file__).with_name("kwok-stages.yaml")
STATE_FILE = "state.json"
#: Client-side rate limits of kube-controller-manager and kube-scheduler. The defaults (kcm 20 QPS
#: / burst 30, scheduler 50 / 100) are sized for shared production apiservers; a group restart
#: of 1,024 pods is ~2,000 pod creates/deletes by kcm plus 1,024 bindings, i.e. > 100 s at 20 QPS
#: on an otherwise idle throw-away apiserver. (kube-scheduler calls its flags deprecated in favour
#: of a config file; they still work in v1.35.)
CLIENT_RATE = ["--kube-api-qps=500", "--kube-api-burst=1000"]
#: kube-controller-manager syncs 5 Jobs at a time by default; a JobSet group restart recreates
#: all of its Jobs at once (16 in the 1,024-pod row), so more of them may sync side by side.
KCM_JOB_SYNCS = ["--concurrent-job-syncs=16"]
#: Controllers of kube-controller-manager left out on this plane: the Endpoints and EndpointSlice
#: controllers rewrite a Service's endpoints on every change of one of its pods (a 1,024-pod
#: JobSet's headless Service: thousands of EndpointSlice writes per restart, ~10% of the
#: apiserver's requests in a live table run). Nothing resolves names on fake Nodes and no row reads
#: Endpoints, so they only cost time; a user's cluster keeps them.
#: Also left out: the controllers of kinds no row creates and no kwok Node needs (Deployments,
#: ReplicaSets, DaemonSets, CronJobs, PodDisruptionBudgets, autoscalers, volumes and claims,
#: DRA claims, certificate requests, cloud load balancers and routes). Most of them watch every
#: Pod, and the live table is CPU-bound on 2 cores, so each pod event they look at is time the
#: table waits; and the root CA publisher, which writes a ConfigMap into each case's namespace
#: (one in every 55 requests of a trainer table; kwok's pods mount nothing).
KCM_CONTROLLERS = ["--controllers=" + ",".join(["*"] + [f"-{name}-controller" for name in (
    "endpoints", "endpointslice", "endpointslice-mirroring",
    "deployment", "replicaset", "replicationcontroller", "daemonset", "cronjob", "disruption",
    "horizontal-pod-autoscaler", "persistentvolume-attach-detach", "persistentvolume-binder",
    "persistentvolume-expander", "persistentvolume-protection", "persistentvolumeclaim-protection",
    "ephemeral-volume", "volumeattributesclass-protection", "resourceclaim", "root-ca-certificate-publisher",
    "certificatesigningrequest-approving", "certificatesigningrequest-cleaner",
    "certificatesigningrequest-signing", "podcertificaterequest-cleaner", "service-lb", "node-route",
    "cloud-node-lifecycle")])]
#: kube-apiserver on this plane: no API Priority and Fairness (one client set, nothing to be fair
#: between; classifying and queueing each request costs CPU), and no LimitRanger admission (no row
#: has a LimitRange, and with none cached it LISTs them for every new namespace - once per case).
APISERVER_TUNING = ["--enable-priority-and-fairness=false", "--disable-admission-plugins=LimitRanger"]
#: The Job controller's waits, shortened on this throw-away plane only (the wrapper's
#: kube-controller-manager reads them, tools/kube/cmd/kube-controller-manager/main.go; unset, as on
#: any real cluster, upstream's stay). Upstream batches a Job's pod updates for 1 s and waits 10 s
#: x 2^(n-1) (at most 10 min) before replacing the n-th failed pod, so a row with six failures took
#: 10.5 min and every Job status lagged a second. A tenth / a hundredth of those (the same 60:1
#: ratio of the longest to the first back-off) changes how long the controller waits, never what
#: it decides.
JOB_SYNC_BATCH_SECONDS = 0.1  # a fault step's quiet window is sized on it (live/session.py)
JOB_CONTROLLER_TIMING = {
    "TC_JOB_SYNC_BATCH_PERIOD": f"{JOB_SYNC_BATCH_SECONDS * 1000:.0f}ms",
    "TC_JOB_POD_FAILURE_BACKOFF": "100ms",
    "TC_JOB_MAX_POD_FAILURE_BACKOFF": "6s",
}
#: Streams a client may have open on one HTTP/2 connection (see the module docstring).
HTTP2_STREAMS = ["--http2-max-streams-per-connection=1000"]
#: Environment of the Go components (see the module docstring).
GO_ENV = {"GOGC": "400"}
#: Not a built binary: the Volcano scheduler's stand-in (gang-less binder, see volcano_binder.py).
VOLCANO_BINDER = "volcano-binder"
CLUSTER_NAME = "training-conformance"


class ClusterStartError(RuntimeError):
    """A component exited or did not become ready; the message carries its log's last lines."""


@dataclass(frozen=True)
class FakeNode:
    """A Node kwok keeps Ready, with what the scheduler may place on it. ``kwok`` names the kwok
    instance that manages it: the plane's own (``fake``: pods run) or the ``realnodes`` stand-in
    kubelets' (``realnode``: pods never start, see kwok-stages-realnodes.yaml)."""

    name: str
    cpu: str = "32"
    memory: str = "256Gi"
    gpus: int = 8
    #: A kubelet's default is 110; kwok's pods cost nothing but their API objects, and the table's
    #: biggest row is a group of 1,024 pods, which must run beside the rest (3 x 1,500 = 4,500).
    pods: str = "1500"
    kwok: str = KWOK_NODE_ANNOTATION_VALUE

    def manifest(self) -> dict:
        resources = {"cpu": self.cpu, "memory": self.memory, "pods": self.pods}
        if self.gpus:
            resources["nvidia.com/gpu"] = str(self.gpus)
        return {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": self.name,
                "annotations": {KWOK_NODE_ANNOTATION: self.kwok},
                "labels": {
                    "kubernetes.io/hostname": self.name,
                    "kubernetes.io/os": "linux",
                    "kubernetes.io/arch": "amd64",
                    "type": "kwok",
                },
            },
            # Every Node is fake, so no kwok taint: workloads need no toleration to land.
            "spec": {},
            # The apiserver keeps a Node's status on create; kwok's node stage keeps it too.
            "status": {"capacity": dict(resources), "allocatable": dict(resources)},
        }


def default_nodes(count: int = 3) -> tuple[FakeNode, ...]:
    return tuple(FakeNode(f"kwok-node-{i}") for i in range(count))


#: kwok's annotation value for the ``realnodes`` stand-in kubelets, and their stages.
REAL_NODE_KWOK = "realnode"
REAL_NODE_STAGES_FILE = Path(__file__).with_name("kwok-stages-realnodes.yaml")
#: The component that runs them.
REAL_NODE_COMPONENT = "kwok-realnodes"


def real_nodes(count: int = 1) -> tuple[FakeNode, ...]:
    """Stand-ins for a kind cluster's real kubelets: Ready, schedulable, untainted, roomy - and
    no pod ever starts on them (the provider ``realnodes``)."""
    return tuple(FakeNode(f"real-node-{i}", kwok=REAL_NODE_KWOK) for i in range(count))


@dataclass
class Component:
    name: str
    argv: list[str]
    log: Path
    health_url: str
    pid: int | None = None
    popen: object | None = field(default=None, repr=False)
    #: Environment added to ours when it starts.
    env: dict[str, str] = field(default_factory=dict)

    @property
    def executable(self) -> str:
        return self.argv[0]

    def running(self) -> bool:
        if self.popen is not None:
            return self.popen.poll() is None
        return self.pid is not None and is_running(self.pid, self.executable)


def free_ports(count: int) -> list[int]:
    """Distinct free TCP ports on 127.0.0.1 (all held open until all are picked)."""
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


class LocalControlPlane:
    """etcd + kube-apiserver + kube-controller-manager + kube-scheduler + kwok on 127.0.0.1.

    ``state_dir`` holds certificates, the kubeconfig, etcd's data, logs and ``state.json``; by
    default a temporary directory, removed by ``down()`` (``keep_state=True`` keeps it).
    ``start_timeout`` bounds each wait (a component, the fake Nodes, the default
    ServiceAccount); slow 2-core runners need tens of seconds in the worst case.
    ``volcano_binder=False`` leaves out the Volcano scheduler's stand-in (the real one will run).
    """

    def __init__(
        self,
        state_dir: Path | str | None = None,
        *,
        nodes: tuple[FakeNode, ...] | None = None,
        bin_dir: Path | None = None,
        version: str = KUBERNETES_VERSION,
        start_timeout: float = 60.0,
        detach: bool = False,
        keep_state: bool = False,
        volcano_binder: bool = True,
        audit_log: Path | str | None = None,
    ):
        self.version = version
        #: Where kube-apiserver writes an audit log (Metadata level, JSON lines) of every request:
        #: who asked what, when. For profiling (``bench/live_restart_bench.py --audit``); it costs
        #: the apiserver CPU, so no figure is taken with it on.
        self.audit_log = Path(audit_log) if audit_log else None
        self.bin_dir = Path(bin_dir) if bin_dir else default_bin_dir(version)
        self.nodes = default_nodes() if nodes is None else tuple(nodes)
        self.start_timeout = start_timeout
        self.volcano_binder = volcano_binder
        self.detach = detach
        self._owns_state_dir = state_dir is None
        self.keep_state = keep_state
        self.state_dir: Path | None = Path(state_dir) if state_dir is not None else None
        self.components: dict[str, Component] = {}
        self.server = ""
        self.startup_seconds: float | None = None
        #: Seconds since the start of ``up()`` at which each step finished.
        self.timings: dict[str, float] = {}
        self.teardown_seconds: float | None = None
        self._lock = threading.RLock()
        self._up = False

    def _extra_components(self) -> list[str]:
        """The Volcano binder unless left out, and the realnodes' kwok when the plane has stand-in kubelets."""
        return ([VOLCANO_BINDER] if self.volcano_binder else []) + (
            [REAL_NODE_COMPONENT] if any(n.kwok == REAL_NODE_KWOK for n in self.nodes) else [])

    # ------------------------------------------------------------------ paths

    @property
    def kubeconfig(self) -> Path:
        return self._dir / "kubeconfig"

    @property
    def state_file(self) -> Path:
        return self._dir / STATE_FILE

    @property
    def _dir(self) -> Path:
        if self.state_dir is None:
            raise RuntimeError("the control plane has no state directory yet (call up())")
        return self.state_dir

    # ------------------------------------------------------------------ lifecycle

    def __enter__(self) -> "LocalControlPlane":
        return self.up()

    def __exit__(self, *exc) -> None:
        self.down()

    def up(self) -> "LocalControlPlane":
        """Start everything and return once the cluster can run pods; on any failure (or
        KeyboardInterrupt) stop what was started and re-raise."""
        with self._lock:
            if self._up:
                return self
            binaries = find_binaries(self.bin_dir)  # before anything is created
            started = time.monotonic()
            if not self.detach:
                down_at_exit(self)
            self._up = True

            def mark(step: str) -> None:
                self.timings[step] = round(time.monotonic() - started, 3)

            try:
                self._prepare(binaries)
                mark("certificates")
                self._start_and_wait(["etcd"])
                mark("etcd")
                self._start_and_wait(["kube-apiserver"])
                mark("kube-apiserver")
                clients = ["kube-controller-manager", "kube-scheduler", "kwok", *self._extra_components()]
                for name in clients:
                    self._start(name)
                with self.api_client() as api:
                    self._register_nodes(api)
                    self._wait_ready(clients)
                    mark("controllers")
                    self._wait_cluster(api)
                    mark("nodes and default ServiceAccount")
            except ClusterStartError as exc:
                removed = self._owns_state_dir and not self.keep_state
                self.down()
                if removed:
                    raise ClusterStartError(f"{exc}\n(the state directory is gone; "
                                            "LocalControlPlane(keep_state=True) keeps the full logs)") from None
                raise
            except BaseException:
                self.down()
                raise
            self.startup_seconds = time.monotonic() - started
            self._write_state()
            return self

    def down(self) -> None:
        """Stop every component (idempotent), then remove the state directory if we made it."""
        with self._lock:
            if not self._up:
                return
            started = time.monotonic()
            # A recorded PID that no longer runs our binary (see attach()) is left alone.
            running = [c for c in self.components.values() if c.pid is not None and c.running()]
            # Clients first, all at once; etcd last so the apiserver can shut down cleanly.
            stop_groups([(c.pid, c.popen) for c in running if c.name != "etcd"])
            stop_groups([(c.pid, c.popen) for c in running if c.name == "etcd"])
            for c in self.components.values():
                c.pid, c.popen = None, None
            forget_at_exit(self)
            self._up = False
            if self.state_dir is not None and self._owns_state_dir and not self.keep_state:
                shutil.rmtree(self.state_dir, ignore_errors=True)
                self.state_dir = None  # a later up() makes a new one
            elif self.state_dir is not None:
                self.state_file.unlink(missing_ok=True)
            self.teardown_seconds = time.monotonic() - started

    def stop(self, name: str) -> None:
        """Stop one component (e.g. to test that operators survive an apiserver outage)."""
        with self._lock:
            component = self.components[name]
            if component.pid is not None:
                stop_groups([(component.pid, component.popen)])
                component.pid, component.popen = None, None

    def start(self, name: str) -> None:
        """Start a stopped component again, same flags and ports, and wait until it is ready."""
        with self._lock:
            if self.components[name].pid is None:
                self._start_and_wait([name])
                self._write_state()

    def restart(self, name: str) -> None:
        self.stop(name)
        self.start(name)

    def api_client(self):
        """A new ``kubernetes.client.ApiClient`` for the admin user (close it, or use ``with``)."""
        from kubernetes import config

        return config.new_client_from_config(config_file=str(self.kubeconfig), persist_config=False)

    # ------------------------------------------------------------------ state file

    def _write_state(self) -> None:
        state = {
            "version": self.version,
            "server": self.server,
            "kubeconfig": str(self.kubeconfig),
            "state_dir": str(self.state_dir),
            "started": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "startup_seconds": None if self.startup_seconds is None else round(self.startup_seconds, 2),
            "nodes": [n.name for n in self.nodes],
            "components": {
                c.name: {"pid": c.pid, "argv": c.argv, "log": str(c.log), "health_url": c.health_url}
                for c in self.components.values()
            },
        }
        tmp = self.state_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(state, indent=2) + "\n")
        tmp.replace(self.state_file)

    @classmethod
    def attach(cls, state_dir: Path | str) -> "LocalControlPlane":
        """The plane recorded in ``state_dir/state.json`` (started by another process), so that
        it can be inspected with :meth:`status` or stopped with :meth:`down`."""
        state_dir = Path(state_dir)
        state = json.loads((state_dir / STATE_FILE).read_text())
        plane = cls(state_dir, version=state["version"], detach=True, keep_state=True)
        plane.server = state["server"]
        plane.startup_seconds = state.get("startup_seconds")
        plane.nodes = tuple(FakeNode(name) for name in state.get("nodes", []))
        plane.components = {
            name: Component(name, c["argv"], Path(c["log"]), c["health_url"], pid=c["pid"])
            for name, c in state["components"].items()
        }
        plane._up = True
        return plane

    def cpu_seconds(self) -> dict[str, float]:
        """CPU seconds each running component has used so far (benchmarks: where a run's time goes)."""
        used = {name: cpu_seconds(c.pid) for name, c in self.components.items() if c.running()}
        return {name: value for name, value in used.items() if value is not None}

    def status(self) -> dict[str, dict]:
        """Per component: pid, whether that PID still runs the binary, whether it is healthy."""
        ctx = self._ssl_context() if self.state_dir and (self._dir / "pki").exists() else None
        report = {}
        for c in self.components.values():
            running = c.running()
            report[c.name] = {
                "pid": c.pid,
                "running": running,
                "healthy": running and _probe(c.health_url, ctx),
                "health_url": c.health_url,
                "log": str(c.log),
            }
        return report

    # ------------------------------------------------------------------ start-up steps

    def _prepare(self, binaries: dict[str, Path]) -> None:
        if self.state_dir is None:
            self.state_dir = Path(tempfile.mkdtemp(prefix="tc-cluster-"))
        self.state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        pki = certs.generate().write(self.state_dir / "pki")
        self._token = secrets.token_hex(32)
        token_file = self.state_dir / "pki" / "tokens.csv"
        token_file.write_text(f'{self._token},{certs.ADMIN_USER},{certs.ADMIN_USER},"{certs.ADMIN_GROUP}"\n')
        token_file.chmod(0o600)
        etcd_port, peer_port, api_port, kcm_port, sched_port, kwok_port, binder_port, real_port = free_ports(8)
        self.server = f"https://127.0.0.1:{api_port}"
        self._write_kubeconfig(pki)
        logs = self.state_dir / "logs"
        kubeconfig = str(self.kubeconfig)
        serving = [f"--tls-cert-file={pki.serving_cert}", f"--tls-private-key-file={pki.serving_key}"]
        # kube-controller-manager and kube-scheduler check callers against the apiserver.
        delegated = [f"--kubeconfig={kubeconfig}", f"--authentication-kubeconfig={kubeconfig}",
                     f"--authorization-kubeconfig={kubeconfig}", "--bind-address=127.0.0.1",
                     "--leader-elect=false", "--profiling=false", *serving]
        argv = {
            "etcd": [
                "--name=local", f"--data-dir={self.state_dir / 'etcd'}",
                f"--listen-client-urls=http://127.0.0.1:{etcd_port}",
                f"--advertise-client-urls=http://127.0.0.1:{etcd_port}",
                f"--listen-peer-urls=http://127.0.0.1:{peer_port}",
                f"--initial-advertise-peer-urls=http://127.0.0.1:{peer_port}",
                f"--initial-cluster=local=http://127.0.0.1:{peer_port}",
                "--unsafe-no-fsync", "--log-level=warn",
            ],
            "kube-apiserver": [
                f"--etcd-servers=http://127.0.0.1:{etcd_port}",
                "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", f"--secure-port={api_port}",
                *serving, f"--client-ca-file={pki.ca_cert}", f"--token-auth-file={token_file}",
                # Steering of the harness's pod lifecycle (podlife.py): both act only on namespaces
                # that carry their annotations, which only the harness's own namespaces do.
                "--enable-admission-plugins=PodNodeSelector,PodTolerationRestriction",
                f"--service-account-issuer={SERVICE_ACCOUNT_ISSUER}",
                f"--service-account-key-file={pki.sa_pub}", f"--service-account-signing-key-file={pki.sa_key}",
                f"--service-cluster-ip-range={SERVICE_CLUSTER_IP_RANGE}",
                "--authorization-mode=Node,RBAC", "--allow-privileged=true",
                "--endpoint-reconciler-type=none", "--profiling=false", *HTTP2_STREAMS, *APISERVER_TUNING,
                # On SIGTERM, end open watches instead of waiting for them: otherwise the HTTP
                # server's shutdown waits out --request-timeout (60 s) while kube-controller-manager,
                # kube-scheduler and kwok keep watching (measured: restart 14 s -> 5 s).
                "--shutdown-watch-termination-grace-period=2s",
                # Request-header (front-proxy) authentication, as kubeadm configures it.
                f"--requestheader-client-ca-file={pki.ca_cert}",
                f"--requestheader-allowed-names={certs.FRONT_PROXY_USER}",
                "--requestheader-username-headers=X-Remote-User", "--requestheader-group-headers=X-Remote-Group",
                "--requestheader-extra-headers-prefix=X-Remote-Extra-",
                f"--proxy-client-cert-file={pki.front_proxy_cert}", f"--proxy-client-key-file={pki.front_proxy_key}",
            ],
            "kube-controller-manager": [
                *delegated, f"--secure-port={kcm_port}", *CLIENT_RATE, *KCM_JOB_SYNCS, *KCM_CONTROLLERS,
                f"--service-account-private-key-file={pki.sa_key}", f"--root-ca-file={pki.ca_cert}",
            ],
            "kube-scheduler": [*delegated, f"--secure-port={sched_port}", *CLIENT_RATE],
            "kwok": [
                f"--kubeconfig={kubeconfig}", f"--config={STAGES_FILE}",
                "--manage-all-nodes=false",
                f"--manage-nodes-with-annotation-selector={KWOK_NODE_ANNOTATION}={KWOK_NODE_ANNOTATION_VALUE}",
                f"--node-lease-duration-seconds={KWOK_NODE_LEASE_SECONDS}",
                f"--cidr={POD_CIDR}", "--node-ip=127.0.0.1", f"--server-address=127.0.0.1:{kwok_port}",
            ],
            VOLCANO_BINDER: ["-m", "conformance.cluster.volcano_binder", f"--kubeconfig={kubeconfig}",
                             f"--health-port={binder_port}"],
            REAL_NODE_COMPONENT: [
                f"--kubeconfig={kubeconfig}", f"--config={REAL_NODE_STAGES_FILE}", "--manage-all-nodes=false",
                f"--manage-nodes-with-annotation-selector={KWOK_NODE_ANNOTATION}={REAL_NODE_KWOK}",
                f"--node-lease-duration-seconds={KWOK_NODE_LEASE_SECONDS}", "--node-ip=127.0.0.2",
                f"--server-address=127.0.0.1:{real_port}",
            ],
        }
        if self.audit_log is not None:
            policy = self.state_dir / "audit-policy.yaml"
            policy.write_text(yaml.safe_dump({"apiVersion": "audit.k8s.io/v1", "kind": "Policy",
                                              "omitStages": ["RequestReceived"], "rules": [{"level": "Metadata"}]}))
            argv["kube-apiserver"] += [f"--audit-policy-file={policy}", f"--audit-log-path={self.audit_log}",
                                       "--audit-log-format=json", "--audit-log-maxbackup=0"]
        health = {
            "etcd": f"http://127.0.0.1:{etcd_port}/readyz",
            "kube-apiserver": f"https://127.0.0.1:{api_port}/readyz",
            "kube-controller-manager": f"https://127.0.0.1:{kcm_port}/healthz",
            "kube-scheduler": f"https://127.0.0.1:{sched_port}/readyz",
            "kwok": f"http://127.0.0.1:{kwok_port}/readyz",
            VOLCANO_BINDER: f"http://127.0.0.1:{binder_port}/readyz",
            REAL_NODE_COMPONENT: f"http://127.0.0.1:{real_port}/readyz",
        }
        executables = {**{name: str(binaries[name]) for name in COMPONENTS}, VOLCANO_BINDER: sys.executable,
                       REAL_NODE_COMPONENT: str(binaries["kwok"])}
        env = {name: dict(GO_ENV) for name in COMPONENTS}
        env["kube-controller-manager"].update(JOB_CONTROLLER_TIMING)
        self.components = {
            name: Component(name, [executables[name], *argv[name]], logs / f"{name}.log", health[name],
                            env=dict(env.get(name, {})))
            for name in (*COMPONENTS, *self._extra_components())
        }

    def _write_kubeconfig(self, pki: certs.CertPaths) -> None:
        # The CA by path, not inline: a client given inline data (the official Python client) writes it
        # to a temp file it removes only at a clean exit, so a process killed mid-start left one behind.
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": CLUSTER_NAME, "cluster": {
                "server": self.server, "certificate-authority": str(Path(pki.ca_cert).resolve())}}],
            "users": [{"name": certs.ADMIN_USER, "user": {"token": self._token}}],
            "contexts": [{"name": CLUSTER_NAME, "context": {
                "cluster": CLUSTER_NAME, "user": certs.ADMIN_USER, "namespace": "default"}}],
            "current-context": CLUSTER_NAME,
        }
        self.kubeconfig.write_text(yaml.safe_dump(config, sort_keys=False))
        self.kubeconfig.chmod(0o600)

    def _ssl_context(self) -> ssl.SSLContext:
        pki = self._dir / "pki"
        ctx = ssl.create_default_context(cafile=str(pki / "ca.crt"))
        ctx.load_cert_chain(str(pki / "admin.crt"), str(pki / "admin.key"))
        return ctx

    def _start(self, name: str) -> None:
        component = self.components[name]
        popen = spawn(component.argv, component.log, die_with_parent=not self.detach, env=component.env)
        component.popen, component.pid = popen, popen.pid

    def _start_and_wait(self, names: list[str]) -> None:
        for name in names:
            self._start(name)
        self._wait_ready(names)

    def _wait_ready(self, names: list[str]) -> None:
        ctx = self._ssl_context()
        pending = list(names)
        deadline = time.monotonic() + self.start_timeout
        while pending:
            for name in list(pending):
                component = self.components[name]
                if not component.running():
                    code = component.popen.poll() if component.popen is not None else "?"
                    raise ClusterStartError(
                        f"{name} exited (code {code}) while starting; {component.log}:\n{log_tail(component.log)}")
                if _probe(component.health_url, ctx):
                    pending.remove(name)
            if pending and time.monotonic() > deadline:
                name = pending[0]
                log = self.components[name].log
                raise ClusterStartError(
                    f"{name} not ready after {self.start_timeout:.0f}s ({self.components[name].health_url}); "
                    f"{log}:\n{log_tail(log)}")
            if pending:
                time.sleep(0.05)

    def _register_nodes(self, api) -> None:
        from kubernetes import client

        core = client.CoreV1Api(api)
        for node in self.nodes:
            core.create_node(node.manifest())

    def _wait_cluster(self, api) -> None:
        """The fake Nodes are Ready (kwok works) and ``default/default`` exists
        (kube-controller-manager works, and Pods can pass ServiceAccount admission)."""
        from kubernetes import client
        from kubernetes.client.exceptions import ApiException

        core = client.CoreV1Api(api)
        wanted = {n.name for n in self.nodes}
        deadline = time.monotonic() + self.start_timeout
        while True:
            ready = {
                n.metadata.name for n in core.list_node().items
                if any(c.type == "Ready" and c.status == "True" for c in (n.status.conditions or []))
            }
            try:
                core.read_namespaced_service_account("default", "default")
                have_sa = True
            except ApiException as exc:
                if exc.status != 404:
                    raise
                have_sa = False
            if wanted <= ready and have_sa:
                return
            if time.monotonic() > deadline:
                if not have_sa:
                    who, what = "kube-controller-manager", "the default ServiceAccount in namespace default"
                else:
                    who, what = "kwok", f"Ready on nodes {sorted(wanted - ready)}"
                log = self.components[who].log
                raise ClusterStartError(
                    f"no {what} after {self.start_timeout:.0f}s ({who} log {log}):\n{log_tail(log)}")
            time.sleep(0.1)


def _probe(url: str, ctx: ssl.SSLContext | None) -> bool:
    """``url`` answers 200 (a proxy from the environment is never used for 127.0.0.1)."""
    handlers = [urllib.request.ProxyHandler({})]
    if url.startswith("https://"):
        handlers.append(urllib.request.HTTPSHandler(context=ctx))
    try:
        with urllib.request.build_opener(*handlers).open(url, timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False
