"""How each upstream controller manager is started on 127.0.0.1: one builder per project
(:attr:`conformance.upstream.projects.Project.manager`), taking a :class:`Context` and returning
a :class:`Manager` - the command line, the environment, and what shows it is ready.

Common to all: the kubeconfig given on the command line is the only one (``KUBECONFIG`` is
removed from the environment), leader election is off where a flag allows it, and every port a
flag or configuration field can name is a free loopback port.

**Trainer and JobSet** read a ``Configuration`` file (``--config``); the fields used here exist,
with the same meaning, in every release the kit pins (Trainer v2.1/v2.3, JobSet v0.10/v0.12).
Both decode it strictly, so an unknown field is a start-up error rather than silently ignored.

* Webhook server on ``127.0.0.1:<port>``, serving our certificate (``tls.crt``/``tls.key``).
  JobSet takes the directory as ``webhook.certDir``. Trainer's configuration has no cert
  directory, so its webhook server uses controller-runtime's default,
  ``$TMPDIR/k8s-webhook-server/serving-certs`` (``os.TempDir()``), and the kit sets ``TMPDIR``.
* Internal certificate management off (``certManagement.enable: false`` /
  ``internalCertManagement.enable: false``). Both would otherwise generate a CA into a Secret and
  patch the caBundle of webhook configurations with their in-cluster names, and wait for that
  before registering controllers and webhooks.
* Leader election off (``leaderElect: false``, and JobSet's ``--leader-elect=false``, which its
  main gives precedence over the file): one replica, no Lease, and no exit when a lease renewal
  misses during an apiserver restart.
* Health probes and metrics on free loopback ports; Trainer's metrics in plain HTTP (the default
  is HTTPS with a self-signed certificate), JobSet's are always HTTPS (its main hard-codes it),
  served with our certificate (``metrics.certDir``) so that nothing is written to ``/tmp``.
* Both talk to the apiserver with the kubeconfig they are given (``--kubeconfig``, registered by
  controller-runtime).

**Training Operator v1** (``cmd/training-operator.v1``, v1.8.1 and v1.9.2 alike) has flags only:
``--enable-scheme=pytorchjob`` (only the PyTorchJob controller and its webhook are set up),
``--metrics-bind-address`` / ``--health-probe-bind-address`` on loopback, ``--webhook-server-port``
(its webhook server binds every interface: ``webhook.Options`` gets a port and no host),
``--leader-elect`` false by default. Its certificate management cannot be turned off
(``pkg/cert.ManageCerts``, cert-controller's rotator): it needs the Secret
``training-operator-webhook-cert`` in ``$MY_POD_NAMESPACE`` (default ``kubeflow``; the kit creates
it from our PKI, see :mod:`.pki`), injects that CA into ``validator.training-operator.kubeflow.org``
(the one our webhook configuration already carries), and waits until ``tls.crt`` exists in the
hard-coded ``/tmp/k8s-webhook-server/serving-certs`` - a mounted Secret in a Pod. Its webhook
server reads ``$TMPDIR/k8s-webhook-server/serving-certs``, our private copy; the ``/tmp`` file is
only looked at, so the kit puts a copy there when there is none (and removes what it put there).
Controllers are registered only after that (``setupControllers`` waits for ``certsReady``), and
``/readyz`` answers once the certificates are ready and the webhook server has started.

**MPI Operator v0.6.0** (``cmd/mpi-operator``) is not controller-runtime: client-go informers, a
work queue and ``leaderelection.RunOrDie``, which cannot be turned off - it takes a Lease named
``mpi-operator`` in ``--lock-namespace`` (default ``mpi-operator``; the kit creates it). Flags:
``--kubeConfig`` (sic; ``KUBECONFIG`` would override it), ``--monitoring-port=0`` (no metrics
server: it would listen on every interface), default ``--threadiness`` 2, no ``--namespace``
(cluster-wide). Its health server is hard-coded to ``:8080`` (``healthCheckPort``, all interfaces),
so only one MPI Operator runs on a machine at a time and the port must be free. It has no webhooks.
It is ready when ``/healthz`` answers and its log says ``Started workers`` (after leading started
and its informer caches synced, ``MPIJobController.Run``).

**LeaderWorkerSet v0.7.0** (``sigs.k8s.io/lws/cmd``) is controller-runtime with a ``Configuration``
file (``config.lws.x-k8s.io/v1alpha1``, decoded strictly, defaults applied): webhook server on
``127.0.0.1:<port>`` serving our certificate from ``webhook.certDir``, health probes and metrics on
loopback ports (metrics are always HTTPS behind authn/authz, its main hard-codes it, with a
certificate controller-runtime makes in memory), ``internalCertManagement.enable: false`` (there is
no flag for it; enabled, cert-controller's rotator would want the Secret ``lws-webhook-server-cert``
and a mounted ``tls.crt``, and ``setupControllers`` waits for it), leader election off in the file
and by ``--leader-elect=false`` (an explicit flag wins over the file; its Lease namespace would be
the service-account namespace, else ``lws-system``). Its webhooks must run: the pod defaulter
gives workers their ``worker-index`` label, which the pod controller requires.

**Volcano v1.10.0** is three processes from one build, started in this order (each once the one
before is ready, :func:`volcano_managers`):

* ``vc-webhook-manager`` serves the seven admission paths (``/jobs/mutate``, ``/jobs/validate``,
  ``/podgroups/mutate``, ``/pods/mutate``, ``/pods/validate``, ``/queues/mutate``,
  ``/queues/validate``; its default ``--enabled-admission``) on ``127.0.0.1:<port>`` with our
  certificate (``--tls-cert-file``/``--tls-private-key-file``, ``--ca-cert-file``: all three are
  required, ``main`` exits when one cannot be read). It creates no webhook configuration: for each
  path it waits up to 5 min for ``volcano-admission-service-<path with - for />`` to exist, writes
  ``--ca-cert-file`` into every ``caBundle`` (ours already), and only then listens
  (``cmd/webhook-manager/app/server.go``, ``util.go`` addCaCertForWebhook) - so the kit creates
  the configurations first (:attr:`Project.webhooks_first`). ``--webhook-url`` must be non-empty
  and is used for nothing else. No ``--enable-healthz``: its health server would serve TLS on
  ``:11251`` (every interface); it is ready when ``GET /jobs/mutate`` answers over TLS (the
  handler writes nothing for a request that is not JSON: 200). Its ``/pods/mutate`` has
  ``failurePolicy: Fail`` for every pod outside ``volcano-system`` and ``kube-system``, and the
  other two need its queue webhooks (the scheduler creates the queue ``default``), so it starts first.
* ``vc-controller-manager`` with ``--controllers=job-controller,pg-controller,queue-controller,gc-controller``
  (every controller but the two of the flow CRDs, which are not installed; a bare ``-name`` turns
  every other controller off) and ``--leader-elect=false``; ``/healthz`` on a loopback port.
* ``vc-scheduler`` with ``--leader-elect=false``, ``--cache-dumper=false`` (it would dump its cache
  to ``/tmp`` on a signal), its built-in configuration (actions enqueue, allocate, backfill) and
  ``/healthz`` on a loopback port. It creates the queue ``default``, which the queue controller
  opens; only the scheduler's enqueue action moves a PodGroup to ``Inqueue``, before which the job
  controller creates no pod - so the local plane's stand-in binder is left out when it runs
  (:attr:`Project.replaces`).
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from .builds import Build
from .pki import Pki


@dataclass
class Manager:
    #: the project's name for its one manager (trainer | jobset | training-operator | mpi-operator |
    #: lws), the binary's for a project of several (vc-webhook-manager, ...)
    name: str
    build: Build
    argv: list[str]
    env: dict[str, str]
    log: Path
    webhook_port: int | None  # None: the manager serves no webhooks
    health_port: int | None  # None: ready_urls say when it is ready
    metrics_port: int | None = None
    #: URLs that answer 200 once it is ready (default: controller-runtime's /healthz and /readyz);
    #: https ones are checked against the kit's CA.
    ready_urls: tuple[str, ...] = ()
    #: A line its log shows once it is ready, for managers whose health endpoint says less.
    ready_log_line: str | None = None
    #: Ports it binds on every interface whatever its flags say (checked free before it starts).
    fixed_ports: tuple[int, ...] = ()
    popen: subprocess.Popen | None = field(default=None, repr=False)
    #: Times the kit started it again after it exited, and the exit codes.
    restarts: int = 0
    exits: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.ready_urls:
            if self.health_port is None:
                raise ValueError(f"manager {self.name}: no health port and no ready_urls - nothing shows it is ready")
            self.ready_urls = (self.healthz_url, self.readyz_url)

    @property
    def webhook_url(self) -> str | None:
        return None if self.webhook_port is None else f"https://127.0.0.1:{self.webhook_port}"

    @property
    def readyz_url(self) -> str:
        return f"http://127.0.0.1:{self.health_port}/readyz"

    @property
    def healthz_url(self) -> str:
        return f"http://127.0.0.1:{self.health_port}/healthz"

    def running(self) -> bool:
        return self.popen is not None and self.popen.poll() is None


@dataclass(frozen=True)
class Context:
    """What a manager builder gets from the kit."""

    build: Build
    kubeconfig: Path
    workdir: Path  # the manager's own directory (configuration, certificates, log)
    pki: Pki
    ports: tuple[int, ...]  # free loopback ports, as many as the project asks for
    namespace: str | None  # the project's own namespace (Project.namespace), created by the kit


def _write_config(path: Path, config: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def _write_cert(directory: Path, cert: bytes, key: bytes) -> None:
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    (directory / "tls.crt").write_bytes(cert)
    (directory / "tls.key").write_bytes(key)
    (directory / "tls.key").chmod(0o600)


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("KUBECONFIG", None)  # --kubeconfig is the only source
    env.update(extra)
    return env


def jobset_manager(ctx: Context) -> Manager:
    build, kubeconfig, workdir = ctx.build, ctx.kubeconfig, ctx.workdir
    webhook_port, health_port, metrics_port = ctx.ports
    cert_dir = workdir / "certs"
    _write_cert(cert_dir, ctx.pki.cert, ctx.pki.key)
    config = _write_config(workdir / "config.yaml", {
        "apiVersion": "config.jobset.x-k8s.io/v1alpha1",
        "kind": "Configuration",
        "webhook": {"port": webhook_port, "host": "127.0.0.1", "certDir": str(cert_dir)},
        "metrics": {"bindAddress": f"127.0.0.1:{metrics_port}", "certDir": str(cert_dir)},
        "health": {"healthProbeBindAddress": f"127.0.0.1:{health_port}"},
        "leaderElection": {"leaderElect": False},
        "internalCertManagement": {"enable": False},
    })
    argv = [str(build.binary), f"--config={config}", f"--kubeconfig={kubeconfig}", "--leader-elect=false"]
    return Manager("jobset", build, argv, _env(), workdir / "jobset.log", webhook_port, health_port, metrics_port)


def trainer_manager(ctx: Context) -> Manager:
    build, kubeconfig, workdir = ctx.build, ctx.kubeconfig, ctx.workdir
    webhook_port, health_port, metrics_port = ctx.ports
    tmpdir = workdir / "tmp"
    _write_cert(tmpdir / "k8s-webhook-server" / "serving-certs", ctx.pki.cert, ctx.pki.key)
    config = _write_config(workdir / "config.yaml", {
        "apiVersion": "config.trainer.kubeflow.org/v1alpha1",
        "kind": "Configuration",
        "webhook": {"port": webhook_port, "host": "127.0.0.1"},
        "metrics": {"bindAddress": f"127.0.0.1:{metrics_port}", "secureServing": False},
        "health": {"healthProbeBindAddress": f"127.0.0.1:{health_port}"},
        "leaderElection": {"leaderElect": False},
        "certManagement": {"enable": False},
    })
    argv = [str(build.binary), f"--config={config}", f"--kubeconfig={kubeconfig}"]
    return Manager("trainer", build, argv, _env(TMPDIR=str(tmpdir)), workdir / "trainer.log",
                   webhook_port, health_port, metrics_port)


#: Where cert-controller's rotator looks for the mounted certificate (training-operator pkg/cert).
TRAINING_OPERATOR_CERT_DIR = Path("/tmp/k8s-webhook-server/serving-certs")
TRAINING_OPERATOR_SECRET = "training-operator-webhook-cert"


def training_operator_manager(ctx: Context) -> Manager:
    webhook_port, health_port, metrics_port = ctx.ports
    tmpdir = ctx.workdir / "tmp"
    _write_cert(tmpdir / "k8s-webhook-server" / "serving-certs", ctx.pki.cert, ctx.pki.key)
    argv = [str(ctx.build.binary), f"--kubeconfig={ctx.kubeconfig}", "--enable-scheme=pytorchjob",
            f"--webhook-server-port={webhook_port}", f"--health-probe-bind-address=127.0.0.1:{health_port}",
            f"--metrics-bind-address=127.0.0.1:{metrics_port}", "--leader-elect=false"]
    env = _env(TMPDIR=str(tmpdir), MY_POD_NAMESPACE=ctx.namespace or "kubeflow")
    env.pop("KUBEFLOW_NAMESPACE", None)  # --namespace's default: every namespace
    return Manager("training-operator", ctx.build, argv, env, ctx.workdir / "training-operator.log",
                   webhook_port, health_port, metrics_port)


def training_operator_secret(pki: Pki, namespace: str) -> dict:
    """The Secret cert-controller's rotator reads: our CA and serving certificate, which satisfy
    its checks (see :mod:`.pki`), so it keeps them."""
    import base64

    data = {"ca.crt": pki.ca_cert, "ca.key": pki.ca_key, "tls.crt": pki.cert, "tls.key": pki.key}
    return {"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": TRAINING_OPERATOR_SECRET, "namespace": namespace},
            "data": {k: base64.b64encode(v).decode() for k, v in data.items()}}


#: cmd/mpi-operator/app/server.go healthCheckPort: a variable, no flag.
MPI_OPERATOR_HEALTH_PORT = 8080


def mpi_operator_manager(ctx: Context) -> Manager:
    argv = [str(ctx.build.binary), f"--kubeConfig={ctx.kubeconfig}", "--monitoring-port=0",
            f"--lock-namespace={ctx.namespace or 'mpi-operator'}"]
    env = _env()
    env.pop("KUBEFLOW_NAMESPACE", None)  # --namespace's default: every namespace
    port = MPI_OPERATOR_HEALTH_PORT
    return Manager("mpi-operator", ctx.build, argv, env, ctx.workdir / "mpi-operator.log",
                   webhook_port=None, health_port=port, ready_urls=(f"http://127.0.0.1:{port}/healthz",),
                   ready_log_line="Started workers", fixed_ports=(port,))


def lws_manager(ctx: Context) -> Manager:
    webhook_port, health_port, metrics_port = ctx.ports
    cert_dir = ctx.workdir / "certs"
    _write_cert(cert_dir, ctx.pki.cert, ctx.pki.key)
    config = _write_config(ctx.workdir / "config.yaml", {
        "apiVersion": "config.lws.x-k8s.io/v1alpha1",
        "kind": "Configuration",
        "webhook": {"port": webhook_port, "host": "127.0.0.1", "certDir": str(cert_dir)},
        "metrics": {"bindAddress": f"127.0.0.1:{metrics_port}"},
        "health": {"healthProbeBindAddress": f"127.0.0.1:{health_port}"},
        "leaderElection": {"leaderElect": False},
        "internalCertManagement": {"enable": False},
    })
    argv = [str(ctx.build.binary), f"--config={config}", f"--kubeconfig={ctx.kubeconfig}", "--leader-elect=false"]
    env = _env()
    env.pop("ENABLE_WEBHOOKS", None)  # "false" would register neither webhook
    return Manager("lws", ctx.build, argv, env, ctx.workdir / "lws.log", webhook_port, health_port, metrics_port)


#: Volcano's three binaries (tools/upstream/volcano-v1.10/build.env BINARIES), in start order.
VOLCANO_BINARIES = ("vc-webhook-manager", "vc-controller-manager", "vc-scheduler")
#: vc-controller-manager's controllers but jobflow-controller and jobtemplate-controller (their
#: flow.volcano.sh CRDs are not installed; their informers would never sync).
VOLCANO_CONTROLLERS = ("job-controller", "pg-controller", "queue-controller", "gc-controller")
#: The path whose GET shows vc-webhook-manager serves (after every configuration got its CA).
VOLCANO_READY_PATH = "/jobs/mutate"


def volcano_managers(ctx: Context) -> list[Manager]:
    """vc-webhook-manager, vc-controller-manager, vc-scheduler (see the module docstring)."""
    webhook_port, controller_health, scheduler_health = ctx.ports
    cert_dir = ctx.workdir / "certs"
    _write_cert(cert_dir, ctx.pki.cert, ctx.pki.key)
    (cert_dir / "ca.crt").write_bytes(ctx.pki.ca_cert)
    kubeconfig = f"--kubeconfig={ctx.kubeconfig}"
    url = f"https://127.0.0.1:{webhook_port}"
    webhook = Manager(
        "vc-webhook-manager", ctx.build,
        [str(ctx.build.binary_named("vc-webhook-manager")), kubeconfig,
         f"--tls-cert-file={cert_dir / 'tls.crt'}", f"--tls-private-key-file={cert_dir / 'tls.key'}",
         f"--ca-cert-file={cert_dir / 'ca.crt'}", "--listen-address=127.0.0.1", f"--port={webhook_port}",
         f"--webhook-url={url}"],
        _env(), ctx.workdir / "vc-webhook-manager.log", webhook_port, None,
        ready_urls=(url + VOLCANO_READY_PATH,))
    common = [kubeconfig, "--leader-elect=false", "--enable-healthz"]
    controllers = Manager(
        "vc-controller-manager", ctx.build,
        [str(ctx.build.binary_named("vc-controller-manager")), *common,
         f"--healthz-address=127.0.0.1:{controller_health}", "--controllers=" + ",".join(VOLCANO_CONTROLLERS)],
        _env(), ctx.workdir / "vc-controller-manager.log", None, controller_health,
        ready_urls=(f"http://127.0.0.1:{controller_health}/healthz",))
    scheduler = Manager(
        "vc-scheduler", ctx.build,
        [str(ctx.build.binary_named("vc-scheduler")), *common, f"--healthz-address=127.0.0.1:{scheduler_health}",
         "--cache-dumper=false"],
        _env(), ctx.workdir / "vc-scheduler.log", None, scheduler_health,
        ready_urls=(f"http://127.0.0.1:{scheduler_health}/healthz",))
    return [webhook, controllers, scheduler]
