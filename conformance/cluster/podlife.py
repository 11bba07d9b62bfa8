"""The harness's own pod lifecycle on any cluster: its fake Nodes, a kwok for them, and the
steering of every case pod - and of no other pod - onto them.

On the local plane kwok runs every pod. A real cluster (kind, k3s, a vendor's) has kubelets that
would pull the cases' placeholder images, never start them, and never play the table's faults; so
for the duration of a run the harness brings what the table needs (``--pod-lifecycle harness``):

* **Nodes** ``tc-<run>-node-<i>``: cluster-scoped, labelled and annotated with the run
  (``training-conformance.io/run``), tainted ``training-conformance.io/run=<run>:NoSchedule`` so
  nothing else is scheduled there, with room for the run's biggest case (:func:`node_capacity`).
* **kwok**, as a local process with the cluster's kubeconfig, managing only those Nodes (its
  ``--manage-nodes-with-annotation-selector`` names the run) with the local plane's stages
  (``kwok-stages.yaml``: start, exit with a code, in-place restart, eviction, deletion).
* **Steering** through two admission plugins of kube-apiserver, PodNodeSelector and
  PodTolerationRestriction: every namespace the harness creates for a case carries the
  annotations ``scheduler.alpha.kubernetes.io/node-selector`` and
  ``scheduler.alpha.kubernetes.io/defaultTolerations``, and the apiserver adds that node selector
  and toleration to each pod created there, by whichever controller. Why this and not the other
  ways: it changes nothing the operator under test sees or writes (pod templates of the inputs,
  and every serialized copy of them - Trainer v2.3's runtime snapshot, LWS and StatefulSet
  revisions - stay as the goldens have them; only the pods' own two fields differ, dropped again
  by :mod:`conformance.live.platform`), and it needs no network path from the apiserver back to
  the harness, which a webhook would (a kind apiserver cannot call 127.0.0.1 of its host). It
  needs the two plugins enabled: the local planes do (``--enable-admission-plugins``), kind does
  with ``docs/ci/kind-config.yaml``; :func:`steering_problem` (and ``conformance doctor``) checks
  with a server-side dry run and says what is missing.

Nothing outside the case namespaces and these Nodes is written (kwok's node Leases belong to the
Nodes and go with them). ``down()`` removes it all on a normal end, on an exception and at exit or
SIGTERM/SIGHUP; a run killed outright leaves a state file under ``<cache>/runs/<run>/``, which
``conformance cluster clean --kubeconfig K`` (:func:`clean`) uses - with the run label - to find
and remove its leftovers, and nothing else.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path

from .binaries import bin_dir, cache_dir
from .process import down_at_exit, forget_at_exit, is_running, log_tail, spawn, stop_groups

RUN_LABEL = "training-conformance.io/run"
KWOK_NODE_ANNOTATION = "kwok.x-k8s.io/node"
NODE_SELECTOR_ANNOTATION = "scheduler.alpha.kubernetes.io/node-selector"
TOLERATIONS_ANNOTATION = "scheduler.alpha.kubernetes.io/defaultTolerations"
STAGES_FILE = Path(__file__).with_name("kwok-stages.yaml")
KWOK_VERSION = "v0.8.0"
KWOK_INSTALL = f"`make control-plane`, or `go install sigs.k8s.io/kwok/cmd/kwok@{KWOK_VERSION}`"
#: A Node's room unless the cases need more (kwok's pods cost only their API objects).
DEFAULT_CAPACITY = {"pods": 1500.0, "cpu": 64.0, "memory": 512 * 2 ** 30, "nvidia.com/gpu": 16.0}


class PodLifecycleError(RuntimeError):
    """The harness cannot bring its pod lifecycle to this cluster; the message says why."""


def runs_dir() -> Path:
    return cache_dir() / "runs"


def node_capacity(at_once: dict[str, float], nodes: int) -> dict[str, float]:
    """Each Node's room: the default, or enough that the run's biggest case fits twice over on
    the Nodes together (cases run side by side within half of what the Nodes offer)."""
    capacity = dict(DEFAULT_CAPACITY)
    for name, value in at_once.items():
        if name in capacity:
            capacity[name] = max(capacity[name], math.ceil(2 * value / nodes))
    return capacity


def _quantity(name: str, value: float) -> str:
    return f"{int(value)}" if name != "memory" else f"{int(value // 2 ** 20)}Mi"


def kwok_binary() -> Path:
    """kwok from PATH, else the one ``make control-plane`` built."""
    found = shutil.which("kwok")
    if found:
        return Path(found)
    built = bin_dir() / "kwok"
    if built.is_file() and os.access(built, os.X_OK):
        return built
    raise PodLifecycleError(f"the harness pod lifecycle runs kwok {KWOK_VERSION}, found neither on PATH nor in "
                            f"{built.parent}: {KWOK_INSTALL}")


@dataclass(eq=False)  # identity: kept in the teardown registry
class HarnessPods:
    """Fake Nodes plus a kwok for them in the cluster of ``kubeconfig``, for one run."""

    api: object  # reconciler.live.rest.Api, admin enough to create Nodes
    kubeconfig: Path
    run_id: str
    nodes: int = 3
    capacity: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_CAPACITY))
    start_timeout: float = 60.0
    node_names: list[str] = field(default_factory=list)
    state_dir: Path | None = None
    _popen: object = None

    # ------------------------------------------------------------------ what case namespaces carry
    def namespace_metadata(self) -> tuple[dict[str, str], dict[str, str]]:
        """Labels and annotations of every namespace the harness creates for a case."""
        toleration = {"key": RUN_LABEL, "operator": "Equal", "value": self.run_id, "effect": "NoSchedule"}
        return ({RUN_LABEL: self.run_id},
                {NODE_SELECTOR_ANNOTATION: f"{RUN_LABEL}={self.run_id}", TOLERATIONS_ANNOTATION: json.dumps([toleration])})

    def owns_node(self, name: str | None) -> bool:
        return bool(name) and name in self.node_names

    # ------------------------------------------------------------------ lifecycle
    def up(self) -> "HarnessPods":
        binary = kwok_binary()
        problem = steering_problem(self.api, self.run_id)
        if problem:
            raise PodLifecycleError(problem)
        self.state_dir = runs_dir() / self.run_id
        self.state_dir.mkdir(parents=True, exist_ok=True)
        down_at_exit(self)
        try:
            self.node_names = [f"tc-{self.run_id}-node-{i}" for i in range(self.nodes)]
            self._write_state()
            nodes = self.api.must_resource("v1", "Node")
            for name in self.node_names:
                self.api.create(self._node(name), "training-conformance")
            port = _free_port()
            argv = [str(binary), f"--kubeconfig={self.kubeconfig}", f"--config={STAGES_FILE}", "--manage-all-nodes=false",
                    f"--manage-nodes-with-annotation-selector={KWOK_NODE_ANNOTATION}={self._kwok_selector()}",
                    "--node-lease-duration-seconds=40", "--node-ip=127.0.0.1", f"--server-address=127.0.0.1:{port}"]
            self._popen = spawn(argv, self.state_dir / "kwok.log", die_with_parent=True)
            self._write_state()
            self._wait_ready(nodes)
        except BaseException:
            self.down()
            raise
        return self

    def _kwok_selector(self) -> str:
        return f"tc-{self.run_id}"

    def _node(self, name: str) -> dict:
        resources = {k: _quantity(k, v) for k, v in self.capacity.items()}
        return {
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name,
                         "labels": {RUN_LABEL: self.run_id, "kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                                    "kubernetes.io/arch": "amd64", "type": "kwok"},
                         "annotations": {KWOK_NODE_ANNOTATION: self._kwok_selector(), RUN_LABEL: "training-conformance harness node"}},
            "spec": {"taints": [{"key": RUN_LABEL, "value": self.run_id, "effect": "NoSchedule"}]},
            "status": {"capacity": dict(resources), "allocatable": dict(resources)},
        }

    def _wait_ready(self, nodes_resource) -> None:
        deadline = time.monotonic() + self.start_timeout
        while True:
            if self._popen.poll() is not None:
                raise PodLifecycleError(f"kwok exited (code {self._popen.returncode}) while starting; "
                                        f"{self.state_dir / 'kwok.log'}:\n{log_tail(self.state_dir / 'kwok.log')}")
            ready = set()
            for node in self.api.list(nodes_resource, None, label_selector=f"{RUN_LABEL}={self.run_id}").get("items", []):
                if any(c.get("type") == "Ready" and c.get("status") == "True"
                       for c in (node.get("status") or {}).get("conditions") or []):
                    ready.add(node["metadata"]["name"])
            if ready >= set(self.node_names):
                return
            if time.monotonic() > deadline:
                raise PodLifecycleError(f"the harness's Nodes {sorted(set(self.node_names) - ready)} are not Ready after "
                                        f"{self.start_timeout:.0f}s (kwok log {self.state_dir / 'kwok.log'}):\n"
                                        f"{log_tail(self.state_dir / 'kwok.log')}")
            time.sleep(0.2)

    def down(self) -> None:
        """Stop kwok, delete the Nodes, forget the state file (idempotent)."""
        forget_at_exit(self)
        if self._popen is not None:
            stop_groups([(self._popen.pid, self._popen)])
            self._popen = None
        if self.node_names:
            try:
                nodes = self.api.must_resource("v1", "Node")
                for name in self.node_names:
                    self.api.delete(nodes, None, name)
            except Exception:  # noqa: BLE001 - unreachable cluster: the state file lets `cluster clean` finish
                if self.state_dir is not None:
                    return
            self.node_names = []
        if self.state_dir is not None:
            shutil.rmtree(self.state_dir, ignore_errors=True)
            self.state_dir = None

    def _write_state(self) -> None:
        state = {"runId": self.run_id, "kubeconfig": str(Path(self.kubeconfig).resolve()), "nodes": self.node_names,
                 "ownerPid": os.getpid(), "ownerExecutable": _owner_argv0(),
                 "kwokPid": self._popen.pid if self._popen is not None else None,
                 "kwokExecutable": self._popen.args[0] if self._popen is not None else None,
                 "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        (self.state_dir / "state.json").write_text(json.dumps(state, indent=2) + "\n")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def steering_problem(api, run_id: str) -> str | None:
    """Whether the apiserver steers pods as the harness needs: a server-side dry run of a pod in a
    namespace carrying the steering annotations must come back with that node selector and
    toleration. None when it does; else what is missing, in one sentence."""
    probe = HarnessPods(api, Path("-"), run_id)
    labels, annotations = probe.namespace_metadata()
    namespaces = api.must_resource("v1", "Namespace")
    name = f"tc-{run_id}-steering-probe"
    api.create({"apiVersion": "v1", "kind": "Namespace",
                "metadata": {"name": name, "labels": labels, "annotations": annotations}}, "training-conformance")
    try:
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "probe", "namespace": name},
               "spec": {"containers": [{"name": "c", "image": "training-conformance.invalid/probe"}]}}
        created = api.create(pod, "training-conformance", dry_run=True)
    finally:
        api.delete(namespaces, None, name)
    spec = created.get("spec") or {}
    selected = (spec.get("nodeSelector") or {}).get(RUN_LABEL) == run_id
    tolerated = any(t.get("key") == RUN_LABEL and t.get("value") == run_id for t in spec.get("tolerations") or [])
    missing = [plugin for plugin, ok in (("PodNodeSelector", selected), ("PodTolerationRestriction", tolerated)) if not ok]
    if not missing:
        return None
    return (f"kube-apiserver does not run the admission plugin(s) {', '.join(missing)}, which steer the cases' pods "
            f"onto the harness's own Nodes (a dry-run pod in an annotated namespace came back without "
            f"{'the node selector' if not selected else 'the toleration'}): enable them "
            f"(--enable-admission-plugins=PodNodeSelector,PodTolerationRestriction; for kind see docs/ci/kind-config.yaml), "
            f"or run with --pod-lifecycle cluster to let the cluster's kubelets run the pods")


def _owner_argv0() -> str | None:
    """This process's argv[0] as /proc shows it, so that :func:`is_running` can tell it later."""
    try:
        return Path("/proc/self/cmdline").read_bytes().split(b"\0", 1)[0].decode()
    except OSError:
        return None


def recorded_runs(kubeconfig: Path) -> list[dict]:
    """The state files under :func:`runs_dir` of runs against ``kubeconfig`` (resolved paths
    compared), each with ``stateDir`` added and ``alive``: its owning process still runs."""
    found = []
    if not runs_dir().is_dir():
        return found
    for state_file in sorted(runs_dir().glob("*/state.json")):
        try:
            state = json.loads(state_file.read_text())
        except (OSError, ValueError):
            continue
        if not isinstance(state, dict) or Path(str(state.get("kubeconfig", ""))).resolve() != Path(kubeconfig).resolve():
            continue
        pid = state.get("ownerPid")
        state["alive"] = bool(pid) and is_running(pid, state.get("ownerExecutable"))
        state["stateDir"] = str(state_file.parent)
        found.append(state)
    return found


def clean(api, kubeconfig: Path, *, runs: list[str] | None = None, timeout: float = 60.0) -> list[str]:
    """Remove what killed runs of this harness left in the cluster of ``kubeconfig``, and nothing
    else: local kwok processes recorded for that kubeconfig under :func:`runs_dir`, then the
    namespaces labelled ``training-conformance.io/run`` (their pods force-deleted first: no kwok
    is left to confirm a graceful delete), then the Nodes with that label; waits up to
    ``timeout`` seconds for them to be gone. A run whose state file names an owner process still
    running on this machine is left alone (``skipped ...`` line); ``runs`` narrows it to those
    run ids. Returns a line per thing removed or skipped."""
    removed, alive = [], set()
    for state in recorded_runs(kubeconfig):
        run = str(state.get("runId"))
        if runs is not None and run not in runs:
            continue
        if state["alive"]:
            alive.add(run)
            removed.append(f"skipped run {run}: its process {state.get('ownerPid')} is still running")
            continue
        pid, executable = state.get("kwokPid"), state.get("kwokExecutable")
        if pid and is_running(pid, executable):
            stop_groups([(pid, None)])
            removed.append(f"kwok process {pid} (run {run})")
        shutil.rmtree(state["stateDir"], ignore_errors=True)
    gone = []
    namespaces, nodes, pods = (api.must_resource("v1", k) for k in ("Namespace", "Node", "Pod"))
    for resource in (namespaces, nodes):
        for obj in api.list(resource, None, label_selector=RUN_LABEL).get("items", []):
            name, run = obj["metadata"]["name"], obj["metadata"]["labels"][RUN_LABEL]
            if run in alive or (runs is not None and run not in runs):
                continue
            if resource is namespaces:
                for pod in api.list(pods, name).get("items", []):
                    api.delete(pods, name, pod["metadata"]["name"], grace_seconds=0)
            api.delete(resource, None, name)
            gone.append((resource, name))
            removed.append(f"{resource.kind} {name} (run {run})")
    deadline = time.monotonic() + timeout
    while gone and time.monotonic() < deadline:
        gone = [(r, n) for r, n in gone if api.get(r, None, n) is not None]
        if gone:
            time.sleep(0.5)
    removed += [f"still terminating after {timeout:.0f}s: {r.kind} {n}" for r, n in gone]
    return removed
