"""Install upstream controller managers into a running cluster, each as a local process built
from its Go module, with webhooks served on 127.0.0.1.

::

    with UpstreamKit(cluster.kubeconfig, "v2.3.0") as kit:   # Trainer; JobSet v0.12.0 comes with it
        ...create ClusterTrainingRuntimes and TrainJobs...
    with UpstreamKit(cluster.kubeconfig, "v0.6.0", project="mpi-operator") as kit:
        ...

What each project needs is its entry in :mod:`.projects`. ``up()``:

1. finds the builds (``make upstream-kit``): the project's release, the release of each project it
   requires that its go.mod pins (Trainer: JobSet), and kustomize (if a project has kustomizations);
2. renders the CRDs and webhook configurations from the release sources in the Go module cache
   (:mod:`.manifests`), keeps those the project installs, and points every webhook at
   ``https://127.0.0.1:<port>`` with the CA of a certificate made here (:mod:`.pki`);
3. applies the CRDs (required projects' first: Trainer's manager watches JobSets) and waits until
   they are Established; creates each project's namespace and bootstrap objects (the Training
   Operator's certificate Secret) and placeholder files;
4. starts the managers (:mod:`.managers`), required ones first, and waits until each is ready; a
   project of several managers starts them in its order, each once the one before is ready (the
   n-th managers of all projects start together);
5. creates the webhook configurations, mutating ones first, and waits until a dry-run request
   shows each webhook is called and answers (:mod:`.probes`). A project whose manager waits for
   its configurations (:attr:`~.projects.Project.webhooks_first`: Volcano) gets them before step 4.

Once up, the kit watches its managers as a Deployment's kubelet would: a manager that exits (a Go
panic the release does not recover - the Training Operator v1.8.1's controller-runtime v0.17 has no
RecoverPanic) is started again after :data:`RESTART_DELAY` seconds, and counted
(:attr:`Manager.restarts`, :meth:`UpstreamKit.restarts`); :meth:`UpstreamKit.wait_ready` waits for
all of them to serve again.

``down()`` leaves the cluster as it was: it deletes the projects' objects while the managers
still run (Trainer removes its runtime finalizers), then the webhook configurations (so nothing
is left calling a dead port with ``failurePolicy: Fail``), stops the managers, and deletes the
CRDs (a CRD of the same name that was there before ``up()`` is replaced by the release's and
then deleted too), the namespaces and the placeholder files it created. It runs on leaving the
``with`` block, on a failure inside ``up()``, and at interpreter exit; the managers also get
SIGKILL if the thread that started them dies (PR_SET_PDEATHSIG).
"""

from __future__ import annotations

import atexit
import ctypes
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
import weakref
from dataclasses import dataclass
from pathlib import Path

from conformance.cluster.local import free_ports
from conformance.cluster.process import log_tail, stop_groups

from . import builds as builds_mod
from . import manifests as manifests_mod
from . import pki as pki_mod
from . import projects as projects_mod
from .builds import Build
from .managers import Context, Manager
from .probes import api_message, probes_for
_PR_SET_PDEATHSIG = 1


#: Seconds before a manager that exited is started again (kubelet's CrashLoopBackOff starts at 10 s
#: and doubles; a kit restarts at once, so that what else runs meanwhile loses as little as it can).
RESTART_DELAY = 0.5


class UpstreamStartError(RuntimeError):
    """A manager exited or did not become ready, or a webhook never answered."""


@dataclass
class Timings:
    render: float = 0.0  # kustomize + parsing + certificate
    crds: float = 0.0
    managers: float = 0.0
    webhooks: float = 0.0
    total: float = 0.0
    teardown: float = 0.0


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


_ATTACHED: "weakref.WeakSet[UpstreamKit]" = weakref.WeakSet()


@atexit.register
def _down_all() -> None:
    for kit in list(_ATTACHED):
        kit.down()


class UpstreamKit:
    """Upstream ``project`` (default Trainer) at ``version`` (e.g. ``"v2.3.0"``) and the projects
    it requires, installed into the cluster of ``kubeconfig`` (which must let them do anything: the
    admin kubeconfig of the local control plane). ``state_dir`` (default: a temporary directory,
    removed by ``down()``) holds the certificate, the manager configurations and their logs."""

    def __init__(self, kubeconfig: Path | str, version: str, state_dir: Path | str | None = None, *,
                 project: str = "trainer", start_timeout: float = 120.0, keep_state: bool = False,
                 remove_crds: bool = True, restart: bool = True):
        self.kubeconfig = Path(kubeconfig)
        self.project = projects_mod.get(project)
        self.version = version
        self.start_timeout = start_timeout
        self.keep_state = keep_state
        self.remove_crds = remove_crds
        self._owns_state_dir = state_dir is None
        self.state_dir: Path | None = Path(state_dir) if state_dir is not None else None
        self.builds: dict[str, Build] = {}
        self.managers: dict[str, Manager] = {}
        self.manifests: dict[str, manifests_mod.OperatorManifests] = {}
        self.unprobed_webhooks: list[str] = []
        self.timings = Timings()
        self._api = None
        self._created_crds: list[str] = []
        self._created_webhooks: list[tuple[str, str]] = []  # (kind, name)
        self._created_namespaces: list[str] = []
        self._created_files: list[tuple[Path, bytes]] = []
        self._created_dirs: list[Path] = []
        self._projects: list[projects_mod.Project] = []
        self._project_managers: dict[str, list[Manager]] = {}
        self.restart = restart
        self._stopping = threading.Event()
        self._supervisor: threading.Thread | None = None
        self._pki: pki_mod.Pki | None = None
        self._lock = threading.RLock()
        self._up = False

    # ------------------------------------------------------------------ public

    @property
    def trainer_version(self) -> str:  # the release a Trainer kit was asked for
        return self.version

    @property
    def jobset_version(self) -> str:
        return self.builds["jobset"].version

    @property
    def projects(self) -> list[projects_mod.Project]:
        """The installed projects, required ones first."""
        return list(self._projects)

    def describe(self) -> dict[str, dict[str, str]]:
        """What runs, for reports: module, version and commit of each upstream build."""
        return {name: {"module": b.module, "version": b.version, "commit": b.commit}
                for name, b in self.builds.items() if name != "kustomize"}

    def __enter__(self) -> "UpstreamKit":
        return self.up()

    def __exit__(self, *exc) -> None:
        self.down()

    def api_client(self):
        """A new ``kubernetes.client.ApiClient`` for ``kubeconfig`` (close it, or use ``with``)."""
        from kubernetes import config

        return config.new_client_from_config(config_file=str(self.kubeconfig), persist_config=False)

    def up(self) -> "UpstreamKit":
        with self._lock:
            if self._up:
                return self
            started = time.monotonic()
            self._resolve_builds()  # before anything is created
            self._up = True
            _ATTACHED.add(self)
            try:
                phase = time.monotonic()
                self._prepare()
                self.timings.render = time.monotonic() - phase
                self._api = self.api_client()
                phase = time.monotonic()
                self._apply_crds([crd for p in self._projects for crd in self.manifests[p.name].crds])
                self._bootstrap()
                self.timings.crds = time.monotonic() - phase
                phase = time.monotonic()
                self._create_webhook_configurations([p for p in self._projects if p.webhooks_first])
                early = time.monotonic() - phase
                phase = time.monotonic()
                for stage in self._stages():
                    for manager in stage:
                        self._start(manager)
                    self._wait_ready(stage)
                self.timings.managers = time.monotonic() - phase
                phase = time.monotonic()
                self._create_webhook_configurations([p for p in self._projects if not p.webhooks_first])
                self._wait_webhooks()
                self.timings.webhooks = early + time.monotonic() - phase
            except BaseException:
                self.down()
                raise
            self.timings.total = time.monotonic() - started
            if self.restart:
                self._stopping.clear()
                self._supervisor = threading.Thread(target=self._supervise, name="upstream-kit-supervisor", daemon=True)
                self._supervisor.start()
            return self

    def restarts(self) -> dict[str, int]:
        """How often each manager has been started again since ``up()``."""
        return {name: m.restarts for name, m in self.managers.items()}

    def wait_ready(self, timeout: float | None = None) -> None:
        """Until every manager runs and answers its readiness checks (after a restart: again)."""
        deadline = time.monotonic() + (self.start_timeout if timeout is None else timeout)
        while True:
            managers = list(self.managers.values())
            if all(m.running() and all(self._ok(u) for u in m.ready_urls) for m in managers):
                return
            if time.monotonic() > deadline:
                waiting = [m.name for m in managers if not m.running() or not all(self._ok(u) for u in m.ready_urls)]
                raise UpstreamStartError(f"manager(s) {', '.join(waiting)} not ready again after {timeout}s")
            time.sleep(0.2)

    def _supervise(self) -> None:
        """Start a manager again when it exits (see RESTART_DELAY), until down() begins."""
        while not self._stopping.wait(0.2):
            for manager in list(self.managers.values()):
                if manager.popen is None or manager.popen.poll() is None:
                    continue
                code = manager.popen.returncode
                if self._stopping.wait(RESTART_DELAY):
                    return
                with self._lock:
                    if self._stopping.is_set() or not self._up:
                        return
                    manager.restarts += 1
                    manager.exits.append(code)
                    try:
                        self._start(manager, check_ports=False)  # its own port, just released
                    except OSError:
                        pass  # tried again on the next round

    def down(self) -> None:
        """Undo ``up()`` (idempotent; safe after a partial ``up()``)."""
        self._stopping.set()
        supervisor, self._supervisor = self._supervisor, None
        if supervisor is not None and supervisor is not threading.current_thread():
            supervisor.join(timeout=10)
        with self._lock:
            if not self._up:
                return
            started = time.monotonic()
            try:
                if self._api is not None:
                    if self.remove_crds and self._created_crds and all(m.running() for m in self.managers.values()):
                        self._delete_owned_objects()
                    self._delete_webhook_configurations()
            finally:
                running = [m for m in self.managers.values() if m.popen is not None]
                stop_groups([(m.popen.pid, m.popen) for m in running])
                for m in running:
                    m.popen = None
                try:
                    if self._api is not None and self.remove_crds:
                        self._delete_crds()
                    if self._api is not None:
                        self._delete_namespaces()
                    self._remove_files()
                finally:
                    if self._api is not None:
                        self._api.close()
                        self._api = None
                    _ATTACHED.discard(self)
                    self._up = False
                    if self.state_dir is not None and self._owns_state_dir and not self.keep_state:
                        shutil.rmtree(self.state_dir, ignore_errors=True)
                    self.timings.teardown = time.monotonic() - started

    # ------------------------------------------------------------------ up() steps

    def _resolve_builds(self) -> None:
        chain = projects_mod.with_requirements(self.project.name)
        builds = {self.project.name: builds_mod.find_build(self.project.name, self.version)}
        for project in reversed(chain):  # from the one asked for down to what it requires
            if project.requires:
                build = builds[project.name]
                wanted = build.requires.get(project.requires)
                if not wanted:
                    raise builds_mod.MissingUpstreamBuildError(
                        f"{build.binary.parent}/source.env names no {builds_mod.version_key(project.requires)}; "
                        f"rerun `{builds_mod.BUILD_COMMAND}`")
                builds[project.requires] = builds_mod.find_build(project.requires, wanted)
        self._projects = chain
        self.builds = {p.name: builds[p.name] for p in chain}
        if any(p.kustomizations for p in chain):
            self.builds["kustomize"] = builds_mod.find_build("kustomize", builds_mod.kustomize_version())

    def _prepare(self) -> None:
        if self.state_dir is None:
            self.state_dir = Path(tempfile.mkdtemp(prefix="tc-upstream-"))
        self.state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        # One CA and one serving certificate for 127.0.0.1, shared by every manager's webhook
        # server, with the names the projects' own certificate checks want (pki.py).
        self._pki = pki_mod.generate(
            dns_names=("localhost",) + tuple(n for p in self._projects for n in p.serving_dns_names),
            ca_dns_names=tuple(n for p in self._projects for n in p.ca_dns_names))
        (self.state_dir / "ca.crt").write_bytes(self._pki.ca_cert)
        ports = iter(free_ports(sum(p.ports for p in self._projects)))
        self.managers, self._project_managers = {}, {}
        for project in self._projects:
            context = Context(build=self.builds[project.name], kubeconfig=self.kubeconfig,
                              workdir=self.state_dir / project.name, pki=self._pki,
                              ports=tuple(next(ports) for _ in range(project.ports)), namespace=project.namespace)
            self._project_managers[project.name] = managers_of(project, context)
            for manager in self._project_managers[project.name]:
                if manager.name in self.managers:
                    raise UpstreamStartError(f"two managers named {manager.name!r} ({project.name})")
                self.managers[manager.name] = manager
        kustomize = self.builds["kustomize"].binary if "kustomize" in self.builds else None
        for project in self._projects:
            rendered = manifests_mod.load(kustomize, project, self.builds[project.name].module_dir)
            url = webhook_url(project, self._project_managers[project.name], bool(rendered.webhook_configurations))
            self.manifests[project.name] = manifests_mod.point_at(rendered, url or "", self._pki.ca_cert)

    def _stages(self) -> list[list[Manager]]:
        """The managers in start order: the first of every project (required ones first), then the
        second of every project that has one, and so on."""
        lists = [self._project_managers[p.name] for p in self._projects]
        return [[m[i] for m in lists if i < len(m)] for i in range(max(map(len, lists), default=0))]

    def _bootstrap(self) -> None:
        """Each project's namespace, the objects its manager needs there before it starts, and the
        files it only looks for (see Project)."""
        from kubernetes import client
        from kubernetes.client.exceptions import ApiException

        core = client.CoreV1Api(self._api)
        for project in self._projects:
            if project.namespace:
                try:
                    core.create_namespace({"metadata": {"name": project.namespace}})
                    self._created_namespaces.append(project.namespace)
                except ApiException as exc:
                    if exc.status != 409:
                        raise UpstreamStartError(f"creating namespace {project.namespace}: HTTP {exc.status}: "
                                                 f"{api_message(exc)}") from exc
            for obj in project.bootstrap(self._pki, project.namespace) if project.bootstrap else []:
                self._put_secret(obj)
            for path in project.placeholders:
                if not path.exists():
                    missing = [d for d in [path.parent, *path.parent.parents] if not d.exists()]
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_bytes(self._pki.cert)
                    self._created_files.append((path, self._pki.cert))
                    self._created_dirs += missing  # deepest first

    def _put_secret(self, obj: dict) -> None:
        """Create a bootstrap Secret (the one kind they are so far), replacing one of that name."""
        from kubernetes import client
        from kubernetes.client.exceptions import ApiException

        if obj.get("kind") != "Secret":
            raise UpstreamStartError(f"bootstrap objects of kind {obj.get('kind')} are not supported")
        core = client.CoreV1Api(self._api)
        md = obj["metadata"]
        try:
            core.create_namespaced_secret(md["namespace"], obj)
        except ApiException as exc:
            if exc.status != 409:
                raise UpstreamStartError(f"creating Secret {md['namespace']}/{md['name']}: HTTP {exc.status}: "
                                         f"{api_message(exc)}") from exc
            core.replace_namespaced_secret(md["name"], md["namespace"], obj)

    def _apply_crds(self, crds: list[dict]) -> None:
        from kubernetes import client
        from kubernetes.client.exceptions import ApiException

        ext = client.ApiextensionsV1Api(self._api)
        for crd in crds:
            name = crd["metadata"]["name"]
            try:
                ext.create_custom_resource_definition(crd)
            except ApiException as exc:
                if exc.status != 409:
                    raise UpstreamStartError(f"creating CRD {name}: HTTP {exc.status}: {api_message(exc)}") from exc
                # Left by an earlier install (perhaps another release): take this release's.
                current = ext.read_custom_resource_definition(name)
                crd = {**crd, "metadata": {**crd["metadata"], "resourceVersion": current.metadata.resource_version}}
                ext.replace_custom_resource_definition(name, crd)
            self._created_crds.append(name)
        deadline = time.monotonic() + self.start_timeout
        for crd in crds:
            name = crd["metadata"]["name"]
            while True:
                conditions = ext.read_custom_resource_definition(name).status.conditions or []
                if any(c.type == "Established" and c.status == "True" for c in conditions):
                    break
                if time.monotonic() > deadline:
                    raise UpstreamStartError(f"CRD {name} not Established after {self.start_timeout:.0f}s: {conditions}")
                time.sleep(0.05)

    def _start(self, manager: Manager, check_ports: bool = True) -> None:
        for port in manager.fixed_ports if check_ports else ():
            if not _port_free(port):
                raise UpstreamStartError(
                    f"{manager.name} {manager.build.version} binds port {port} whatever its flags say, and that port "
                    f"is in use (another {manager.name} running on this machine?)")
        manager.log.parent.mkdir(parents=True, exist_ok=True)
        with open(manager.log, "ab") as log:
            manager.popen = subprocess.Popen(
                manager.argv, env=manager.env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True, preexec_fn=_die_with_parent, close_fds=True)

    def _wait_ready(self, managers: list[Manager]) -> None:
        pending = list(managers)
        deadline = time.monotonic() + self.start_timeout
        while pending:
            for manager in list(pending):
                if not manager.running():
                    code = manager.popen.poll() if manager.popen is not None else "?"
                    raise UpstreamStartError(
                        f"{manager.name} manager {manager.build.version} exited (code {code}) while starting; "
                        f"{manager.log}:\n{log_tail(manager.log)}")
                if all(self._ok(url) for url in manager.ready_urls) and _logged(manager):
                    pending.remove(manager)
            if pending and time.monotonic() > deadline:
                manager = pending[0]
                waited = ", ".join(manager.ready_urls) + (f", log line {manager.ready_log_line!r}"
                                                          if manager.ready_log_line else "")
                raise UpstreamStartError(
                    f"{manager.name} manager not ready after {self.start_timeout:.0f}s ({waited}); "
                    f"{manager.log}:\n{log_tail(manager.log)}")
            if pending:
                time.sleep(0.1)

    def _ok(self, url: str) -> bool:
        """``url`` answers 200 (an https one with a certificate of the kit's CA)."""
        return _http_ok(url, self._pki.ca_cert if self._pki is not None else None)

    def _create_webhook_configurations(self, projects: list[projects_mod.Project]) -> None:
        from kubernetes import client
        from kubernetes.client.exceptions import ApiException

        admission = client.AdmissionregistrationV1Api(self._api)
        calls = {
            "MutatingWebhookConfiguration": (admission.create_mutating_webhook_configuration,
                                             admission.read_mutating_webhook_configuration,
                                             admission.replace_mutating_webhook_configuration),
            "ValidatingWebhookConfiguration": (admission.create_validating_webhook_configuration,
                                               admission.read_validating_webhook_configuration,
                                               admission.replace_validating_webhook_configuration),
        }
        configs = [c for p in projects for c in self.manifests[p.name].webhook_configurations]
        configs.sort(key=lambda c: c["kind"] != "MutatingWebhookConfiguration")  # mutating first
        for config in configs:
            create, read, replace = calls[config["kind"]]
            name = config["metadata"]["name"]
            try:
                create(config)
            except ApiException as exc:
                if exc.status != 409:
                    raise UpstreamStartError(f"creating {config['kind']} {name}: HTTP {exc.status}: {api_message(exc)}") from exc
                current = read(name)
                replace(name, {**config, "metadata": {**config["metadata"],
                                                      "resourceVersion": current.metadata.resource_version}})
            self._created_webhooks.append((config["kind"], name))

    def _wait_webhooks(self) -> None:
        from kubernetes.client.exceptions import ApiException

        probes, self.unprobed_webhooks = [], []
        for project, manifests in self.manifests.items():
            chosen, unprobed = probes_for(manifests.webhook_names(), project)
            probes += chosen
            self.unprobed_webhooks += unprobed
        deadline = time.monotonic() + self.start_timeout
        pending = list(probes)
        last: dict[str, str] = {}
        while pending:
            for probe in list(pending):
                try:
                    missing = probe.run(self._api)
                except ApiException as exc:
                    missing = f"HTTP {exc.status}: {api_message(exc)}"
                if missing is None:
                    pending.remove(probe)
                else:
                    last[probe.description] = missing
            if pending and time.monotonic() > deadline:
                lines = "\n".join(f"  {p.description} ({', '.join(p.webhooks)}): {last.get(p.description)}"
                                  for p in pending)
                logs = "\n".join(f"{m.log}:\n{log_tail(m.log, 10)}" for m in self.managers.values())
                raise UpstreamStartError(f"webhooks not answering after {self.start_timeout:.0f}s:\n{lines}\n{logs}")
            if pending:
                time.sleep(0.2)

    # ------------------------------------------------------------------ down() steps

    def _delete_owned_objects(self, timeout: float = 30.0) -> None:
        """Delete every object of the projects' kinds while the managers still run (the project
        asked for first, then what it requires), kind by kind, waiting for each kind to be gone
        (finalizers removed by its controller)."""
        from kubernetes import client
        from kubernetes.client.exceptions import ApiException

        custom = client.CustomObjectsApi(self._api)
        owned = [kind for project in reversed(self._projects) for kind in project.owned_kinds]
        for group, version, plural, namespaced in owned:
            try:
                items = custom.list_cluster_custom_object(group, version, plural)["items"]
            except ApiException:
                continue  # CRD not there
            for item in items:
                meta = item["metadata"]
                try:
                    if namespaced:
                        custom.delete_namespaced_custom_object(group, version, meta["namespace"], plural, meta["name"])
                    else:
                        custom.delete_cluster_custom_object(group, version, plural, meta["name"])
                except ApiException as exc:
                    if exc.status != 404:
                        raise
            deadline = time.monotonic() + timeout
            while custom.list_cluster_custom_object(group, version, plural)["items"]:
                if time.monotonic() > deadline:
                    break  # _delete_crds strips what is left
                time.sleep(0.1)

    def _delete_webhook_configurations(self) -> None:
        from kubernetes import client
        from kubernetes.client.exceptions import ApiException

        admission = client.AdmissionregistrationV1Api(self._api)
        delete = {"MutatingWebhookConfiguration": admission.delete_mutating_webhook_configuration,
                  "ValidatingWebhookConfiguration": admission.delete_validating_webhook_configuration}
        for kind, name in reversed(self._created_webhooks):
            try:
                delete[kind](name)
            except ApiException as exc:
                if exc.status != 404:
                    raise
        self._created_webhooks.clear()

    def _delete_crds(self, timeout: float = 60.0) -> None:
        """Delete the CRDs and wait until they are gone. Instances still holding a finalizer
        (their controller is stopped now) get it removed, or the CRD would stay Terminating."""
        from kubernetes import client
        from kubernetes.client.exceptions import ApiException

        ext = client.ApiextensionsV1Api(self._api)
        custom = client.CustomObjectsApi(self._api)
        for name in self._created_crds:
            try:
                ext.delete_custom_resource_definition(name)
            except ApiException as exc:
                if exc.status != 404:
                    raise
        deadline = time.monotonic() + timeout
        remaining = list(self._created_crds)
        while remaining:
            for name in list(remaining):
                try:
                    crd = ext.read_custom_resource_definition(name)
                except ApiException as exc:
                    if exc.status == 404:
                        remaining.remove(name)
                        continue
                    raise
                _strip_finalizers(custom, crd)
            if remaining:
                if time.monotonic() > deadline:
                    raise UpstreamStartError(f"CRDs still present {timeout:.0f}s after deletion: {remaining}")
                time.sleep(0.1)
        self._created_crds.clear()


    def _delete_namespaces(self, timeout: float = 60.0) -> None:
        from kubernetes import client
        from kubernetes.client.exceptions import ApiException

        core = client.CoreV1Api(self._api)
        for name in self._created_namespaces:
            try:
                core.delete_namespace(name)
            except ApiException as exc:
                if exc.status != 404:
                    raise
        deadline = time.monotonic() + timeout
        for name in self._created_namespaces:
            while time.monotonic() < deadline:
                try:
                    core.read_namespace(name)
                except ApiException as exc:
                    if exc.status == 404:
                        break
                    raise
                time.sleep(0.1)
        self._created_namespaces.clear()

    def _remove_files(self) -> None:
        for path, content in self._created_files:
            try:
                if path.read_bytes() == content:  # still ours
                    path.unlink()
            except OSError:
                pass
        self._created_files.clear()
        for directory in self._created_dirs:
            try:
                directory.rmdir()  # only if empty
            except OSError:
                pass
        self._created_dirs.clear()


def _strip_finalizers(custom, crd) -> None:
    from kubernetes.client.exceptions import ApiException

    group, plural = crd.spec.group, crd.spec.names.plural
    version = next((v.name for v in crd.spec.versions if v.storage), crd.spec.versions[0].name)
    try:
        items = custom.list_cluster_custom_object(group, version, plural)["items"]
    except ApiException:
        return
    for item in items:
        meta = item["metadata"]
        if not meta.get("finalizers"):
            continue
        patch = {"metadata": {"finalizers": None}}
        try:
            if meta.get("namespace"):
                custom.patch_namespaced_custom_object(group, version, meta["namespace"], plural, meta["name"], patch)
            else:
                custom.patch_cluster_custom_object(group, version, plural, meta["name"], patch)
        except ApiException as exc:
            if exc.status != 404:
                raise


def _logged(manager: Manager) -> bool:
    if not manager.ready_log_line:
        return True
    try:
        return manager.ready_log_line in manager.log.read_text(errors="replace")
    except OSError:
        return False


def _port_free(port: int) -> bool:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        # As Go's net.Listen does: connections still in TIME_WAIT do not make the port busy, a listener does.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("0.0.0.0", port))
        except OSError:
            return False
    return True


def managers_of(project: projects_mod.Project, context: Context) -> list[Manager]:
    """What ``project.manager`` builds, as a list (one manager, or several in start order)."""
    built = project.manager(context)
    managers = [built] if isinstance(built, Manager) else list(built)
    if not managers or not all(isinstance(m, Manager) for m in managers):
        raise UpstreamStartError(f"{project.name}: its manager builder returned {built!r}, not Managers")
    return managers


def webhook_url(project: projects_mod.Project, managers: list[Manager], has_webhooks: bool) -> str | None:
    """The URL of the one manager of ``project`` that serves webhooks (None: none does)."""
    serving = [m for m in managers if m.webhook_url is not None]
    if len(serving) > 1:
        raise manifests_mod.ManifestError(f"{project.name}: managers {', '.join(m.name for m in serving)} all serve "
                                          f"webhooks; the kit points every webhook of a project at one")
    if has_webhooks and not serving:
        raise manifests_mod.ManifestError(f"{project.name} renders webhook configurations, but its manager "
                                          f"serves no webhooks")
    return serving[0].webhook_url if serving else None


def _http_ok(url: str, ca_cert: bytes | None = None) -> bool:
    handlers: list = [urllib.request.ProxyHandler({})]
    if url.startswith("https://"):
        if ca_cert is None:
            return False
        import ssl

        context = ssl.create_default_context(cadata=ca_cert.decode())
        handlers.append(urllib.request.HTTPSHandler(context=context))
    opener = urllib.request.build_opener(*handlers)
    try:
        with opener.open(url, timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


def install(kubeconfig: Path | str, version: str, **options) -> UpstreamKit:
    """Install and start upstream ``project`` (an option; default Trainer, with its JobSet) at
    ``version``; ``down()`` (or a ``with`` block) removes it again. ``options`` go to
    :class:`UpstreamKit`."""
    return UpstreamKit(kubeconfig, version, **options).up()
