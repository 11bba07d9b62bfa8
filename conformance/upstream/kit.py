"""Install the real Kubeflow Trainer and JobSet controller managers into a running cluster,
each as a local process built from its Go module, with webhooks served on 127.0.0.1.

::

    with UpstreamKit(cluster.kubeconfig, "v2.3.0") as kit:   # JobSet v0.12.0 comes with it
        ...create ClusterTrainingRuntimes and TrainJobs...

``up()``:

1. finds the builds (``make upstream-kit``): the Trainer release, the JobSet release that Trainer
   release requires in its go.mod, and kustomize;
2. renders both operators' CRDs and webhook configurations from the release sources in the Go
   module cache (:mod:`.manifests`) and points every webhook at ``https://127.0.0.1:<port>``
   with the CA of a certificate made here (``conformance.cluster.certs``);
3. applies the CRDs (JobSet's first: Trainer's manager watches JobSets) and waits until they
   are Established;
4. starts the JobSet and Trainer managers (:mod:`.managers`) and waits for their ``/readyz``;
5. creates the webhook configurations, mutating ones first, and waits until a dry-run request
   shows each webhook is called and answers (:mod:`.probes`).

``down()`` leaves the cluster as it was: it deletes the operators' objects while the managers
still run (Trainer removes its runtime finalizers), then the webhook configurations (so nothing
is left calling a dead port with ``failurePolicy: Fail``), stops the managers, and deletes the
CRDs (a CRD of the same name that was there before ``up()`` is replaced by the release's and
then deleted too). It runs on leaving the ``with`` block, on a failure inside ``up()``, and at interpreter
exit; the managers also get SIGKILL if the thread that started them dies (PR_SET_PDEATHSIG).
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

from conformance.cluster import certs
from conformance.cluster.local import free_ports
from conformance.cluster.process import log_tail, stop_groups

from . import builds as builds_mod
from . import manifests as manifests_mod
from .builds import Build
from .managers import Manager, jobset_manager, trainer_manager
from .probes import api_message, probes_for

#: The operators' kinds, deleted before their CRDs in this order (TrainJobs release runtimes).
OWNED_KINDS = (
    ("trainer.kubeflow.org", "v1alpha1", "trainjobs", True),
    ("trainer.kubeflow.org", "v1alpha1", "trainingruntimes", True),
    ("trainer.kubeflow.org", "v1alpha1", "clustertrainingruntimes", False),
    ("jobset.x-k8s.io", "v1alpha2", "jobsets", True),
)
_PR_SET_PDEATHSIG = 1


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
    """The upstream Trainer ``trainer_version`` (e.g. ``"v2.3.0"``) and its JobSet, installed
    into the cluster of ``kubeconfig`` (which must let them do anything: the admin kubeconfig of
    the local control plane). ``state_dir`` (default: a temporary directory, removed by
    ``down()``) holds the certificate, the manager configurations and their logs."""

    def __init__(self, kubeconfig: Path | str, trainer_version: str, state_dir: Path | str | None = None, *,
                 start_timeout: float = 120.0, keep_state: bool = False, remove_crds: bool = True):
        self.kubeconfig = Path(kubeconfig)
        self.trainer_version = trainer_version
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
        self._lock = threading.RLock()
        self._up = False

    # ------------------------------------------------------------------ public

    @property
    def jobset_version(self) -> str:
        return self.builds["jobset"].version

    def describe(self) -> dict[str, dict[str, str]]:
        """What runs, for reports: module, version and commit of each upstream build."""
        return {name: {"module": b.module, "version": b.version, "commit": b.commit}
                for name, b in self.builds.items()}

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
                self._apply_crds(self.manifests["jobset"].crds + self.manifests["trainer"].crds)
                self.timings.crds = time.monotonic() - phase
                phase = time.monotonic()
                for manager in self.managers.values():
                    self._start(manager)
                self._wait_ready(list(self.managers.values()))
                self.timings.managers = time.monotonic() - phase
                phase = time.monotonic()
                self._create_webhook_configurations()
                self._wait_webhooks()
                self.timings.webhooks = time.monotonic() - phase
            except BaseException:
                self.down()
                raise
            self.timings.total = time.monotonic() - started
            return self

    def down(self) -> None:
        """Undo ``up()`` (idempotent; safe after a partial ``up()``)."""
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
        trainer = builds_mod.find_build("trainer", self.trainer_version)
        if not trainer.jobset_version:
            raise builds_mod.MissingUpstreamBuildError(
                f"{trainer.binary.parent}/source.env names no JOBSET_VERSION; rerun `{builds_mod.BUILD_COMMAND}`")
        self.builds = {
            "trainer": trainer,
            "jobset": builds_mod.find_build("jobset", trainer.jobset_version),
            "kustomize": builds_mod.find_build("kustomize", builds_mod.kustomize_version()),
        }

    def _prepare(self) -> None:
        if self.state_dir is None:
            self.state_dir = Path(tempfile.mkdtemp(prefix="tc-upstream-"))
        self.state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        # One CA and one serving certificate for 127.0.0.1, shared by both managers' webhook
        # servers; the rest of what certs.generate() makes (client cert, SA keys) is unused.
        pki = certs.generate(dns_names=("localhost",), ip_addresses=("127.0.0.1",))
        (self.state_dir / "ca.crt").write_bytes(pki.ca_cert)
        ports = free_ports(6)
        self.managers = {
            "jobset": jobset_manager(self.builds["jobset"], self.kubeconfig, self.state_dir / "jobset",
                                     pki.serving_cert, pki.serving_key, tuple(ports[:3])),
            "trainer": trainer_manager(self.builds["trainer"], self.kubeconfig, self.state_dir / "trainer",
                                       pki.serving_cert, pki.serving_key, tuple(ports[3:])),
        }
        kustomize = self.builds["kustomize"].binary
        for name, manager in self.managers.items():
            rendered = manifests_mod.load(kustomize, name, self.builds[name].module_dir)
            self.manifests[name] = manifests_mod.point_at(rendered, manager.webhook_url, pki.ca_cert)

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

    def _start(self, manager: Manager) -> None:
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
                if _http_ok(manager.healthz_url) and _http_ok(manager.readyz_url):
                    pending.remove(manager)
            if pending and time.monotonic() > deadline:
                manager = pending[0]
                raise UpstreamStartError(
                    f"{manager.name} manager not ready after {self.start_timeout:.0f}s ({manager.readyz_url}); "
                    f"{manager.log}:\n{log_tail(manager.log)}")
            if pending:
                time.sleep(0.1)

    def _create_webhook_configurations(self) -> None:
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
        configs = [c for m in self.manifests.values() for c in m.webhook_configurations]
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

        names = [n for m in self.manifests.values() for n in m.webhook_names()]
        probes, self.unprobed_webhooks = probes_for(names)
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
        """Delete every TrainJob, runtime and JobSet while the managers still run, kind by kind,
        waiting for each kind to be gone (finalizers removed by its controller)."""
        from kubernetes import client
        from kubernetes.client.exceptions import ApiException

        custom = client.CustomObjectsApi(self._api)
        for group, version, plural, namespaced in OWNED_KINDS:
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


def _http_ok(url: str) -> bool:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


def install(kubeconfig: Path | str, trainer_version: str, **options) -> UpstreamKit:
    """Install and start upstream Trainer ``trainer_version`` and its JobSet; ``down()`` (or a
    ``with`` block) removes them again. ``options`` go to :class:`UpstreamKit`."""
    return UpstreamKit(kubeconfig, trainer_version, **options).up()
