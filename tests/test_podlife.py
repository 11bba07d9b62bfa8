"""The harness's own pod lifecycle on any cluster (conformance/cluster/podlife.py) and
``conformance cluster clean``: what a killed run leaves is found by its run label and state file,
and removed - and nothing else is.

The ``live`` tests start one local control plane for the module; every run's state files go to a
private ``TC_CACHE_DIR`` (the binaries stay where ``make control-plane`` put them).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conformance.cluster.podlife import RUN_LABEL

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "conformance.cli"]

UNREACHABLE_KUBECONFIG = """\
apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:%d"}
contexts:
- name: c
  context: {cluster: c, user: u}
current-context: c
users:
- name: u
  user: {token: not-a-token}
"""


def closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when we return: nothing listens there


# ---------------------------------------------------------------------- without a cluster

def test_clean_with_a_missing_kubeconfig_says_so_in_one_line(tmp_path):
    done = subprocess.run([*CLI, "cluster", "clean", "--kubeconfig", str(tmp_path / "nope")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip() == f"error: kubeconfig {tmp_path / 'nope'}: no such file"


def test_clean_with_a_malformed_kubeconfig_says_so_in_one_line(tmp_path):
    bad = tmp_path / "kubeconfig"
    bad.write_text("clusters: [oops\n")
    done = subprocess.run([*CLI, "cluster", "clean", "--kubeconfig", str(bad)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: kubeconfig {bad} is not usable: ")
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_clean_against_an_unreachable_server_says_so_in_one_line(tmp_path):
    port = closed_port()
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(UNREACHABLE_KUBECONFIG % port)
    done = subprocess.run([*CLI, "cluster", "clean", "--kubeconfig", str(kubeconfig)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: cannot reach the API server https://127.0.0.1:{port} of {kubeconfig}")
    assert "Connection refused" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_forbidden_is_one_line_naming_what_was_refused():
    from conformance.cluster.access import explain
    from reconciler.live.rest import ApiError

    error = ApiError(403, {"kind": "Status", "reason": "Forbidden",
                           "message": 'nodes is forbidden: User "dev" cannot list resource "nodes"'})
    line = explain(error, "/k/config", "list and delete run-labelled Nodes and namespaces")
    assert line.startswith("forbidden: the account of /k/config may not list and delete run-labelled Nodes")
    assert 'User "dev" cannot list resource "nodes"' in line and "\n" not in line


# ---------------------------------------------------------------------- live

live = pytest.mark.live


@pytest.fixture(scope="module")
def private_cache(tmp_path_factory):
    """Run state files in a directory of this module's own; binaries from the usual place."""
    from conformance.cluster.binaries import bin_dir

    saved = {k: os.environ.get(k) for k in ("TC_CACHE_DIR", "TC_BIN_DIR")}
    os.environ["TC_BIN_DIR"] = str(bin_dir())
    os.environ["TC_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))
    yield Path(os.environ["TC_CACHE_DIR"])
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@pytest.fixture(scope="module")
def plane(private_cache):
    from conformance.cluster import FakeNode, LocalControlPlane

    with LocalControlPlane(nodes=(FakeNode("kwok-node-0"),)) as cluster:
        yield cluster


def names(api, kind: str, selector: str | None = None) -> set[str]:
    resource = api.must_resource("v1", kind)
    return {o["metadata"]["name"] for o in api.list(resource, None, label_selector=selector).get("items", [])}


def case_namespace(api, pods, name: str) -> None:
    """A namespace as the live backend makes one for a case, with one pod in it."""
    labels, annotations = pods.namespace_metadata()
    api.create({"apiVersion": "v1", "kind": "Namespace",
                "metadata": {"name": name, "labels": labels, "annotations": annotations}}, "training-conformance")
    api.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "worker", "namespace": name},
                "spec": {"containers": [{"name": "c", "image": "registry.invalid/never-pulled:1"}]}},
               "training-conformance")


def bystanders(api) -> None:
    """What clean must leave alone: a Node and namespaces of someone else's (one with another label)."""
    api.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "bystander-node", "labels": {"team": "x"}}},
               "test")
    api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "bystander"}}, "test")
    api.create({"apiVersion": "v1", "kind": "Namespace",
                "metadata": {"name": "bystander-labelled", "labels": {"training-conformance.io/case": "x"}}}, "test")


def run_clean(plane, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, "cluster", "clean", "--kubeconfig", str(plane.kubeconfig), *extra],
                          capture_output=True, text=True, timeout=180, env=os.environ.copy())


def wait_for(predicate, what: str, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(0.2)
    return value


def steering_probe_gone(api, run: str) -> None:
    """up()'s dry-run namespace is deleted at once but takes a moment to go; until then it is a
    run-labelled namespace that clean would (rightly) list too."""
    wait_for(lambda: f"tc-{run}-steering-probe" not in names(api, "Namespace"), "the steering probe namespace to go")


def pod_running(api, namespace: str) -> bool:
    pod = api.get(api.must_resource("v1", "Pod"), namespace, "worker") or {}
    return (pod.get("status") or {}).get("phase") == "Running"


@live
def test_clean_removes_a_run_that_skipped_down_and_nothing_else(plane, api, private_cache):
    from conformance.cluster.podlife import HarnessPods, runs_dir
    from conformance.cluster.process import forget_at_exit, is_running

    bystanders(api)
    pods = HarnessPods(api, plane.kubeconfig, run_id="skipdown", nodes=2).up()
    case_namespace(api, pods, "tc-skipdown-case")
    wait_for(lambda: pod_running(api, "tc-skipdown-case"), "the case pod to run on a harness Node")
    node = api.get(api.must_resource("v1", "Pod"), "tc-skipdown-case", "worker")["spec"]["nodeName"]
    assert node in pods.node_names
    kwok = pods._popen.pid
    steering_probe_gone(api, "skipdown")
    forget_at_exit(pods)  # the run "dies" without down(): its kwok, Nodes and namespace stay
    pods._popen = None
    # ... and its owner is gone (as a run SIGKILLed where kwok outlives it: no parent-death signal).
    state_file = runs_dir() / "skipdown" / "state.json"
    state = json.loads(state_file.read_text())
    assert state["ownerPid"] == os.getpid()
    dead = subprocess.Popen(["true"])
    dead.wait()
    state_file.write_text(json.dumps({**state, "ownerPid": dead.pid}))

    done = run_clean(plane)
    assert done.returncode == 0, done.stderr
    assert sorted(done.stdout.splitlines()) == sorted([
        f"removed kwok process {kwok} (run skipdown)",
        "removed Namespace tc-skipdown-case (run skipdown)",
        "removed Node tc-skipdown-node-0 (run skipdown)",
        "removed Node tc-skipdown-node-1 (run skipdown)",
    ])
    assert not is_running(kwok)
    assert names(api, "Node", RUN_LABEL) == set()
    assert names(api, "Namespace", RUN_LABEL) == set()
    assert not (runs_dir() / "skipdown").exists()
    assert {"bystander-node", "kwok-node-0"} <= names(api, "Node")
    assert {"bystander", "bystander-labelled", "default"} <= names(api, "Namespace")

    again = run_clean(plane)
    assert (again.returncode, again.stdout) == (0, f"nothing to clean in the cluster of {plane.kubeconfig}\n")


KILLED_RUN = """
import json, sys, time
from pathlib import Path
from reconciler.live.rest import Api
from conformance.cluster.podlife import HarnessPods
api = Api.from_kubeconfig(sys.argv[1])
pods = HarnessPods(api, Path(sys.argv[1]), run_id="killed", nodes=1).up()
labels, annotations = pods.namespace_metadata()
api.create({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": "tc-killed-case", "labels": labels, "annotations": annotations}}, "training-conformance")
print(json.dumps({"kwok": pods._popen.pid}), flush=True)
time.sleep(600)
"""


@live
def test_clean_after_sigkill_removes_the_killed_run_and_skips_a_live_one(plane, api, private_cache):
    from conformance.cluster.podlife import HarnessPods, runs_dir

    child = subprocess.Popen([sys.executable, "-c", KILLED_RUN, str(plane.kubeconfig)], stdout=subprocess.PIPE,
                             text=True, cwd=ROOT, env=os.environ.copy())
    live_run = None
    try:
        line = child.stdout.readline()
        assert line, f"the run exited with {child.wait()} before its Nodes were up"
        steering_probe_gone(api, "killed")
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        assert names(api, "Node", f"{RUN_LABEL}=killed") == {"tc-killed-node-0"}  # SIGKILL ran no clean-up
        live_run = HarnessPods(api, plane.kubeconfig, run_id="alive", nodes=1).up()  # this process: still running

        done = run_clean(plane)
        assert done.returncode == 0, done.stderr
        assert sorted(done.stdout.splitlines()) == sorted([
            f"skipped run alive: its process {os.getpid()} is still running",
            "removed Namespace tc-killed-case (run killed)",
            "removed Node tc-killed-node-0 (run killed)",
        ])
        assert not (runs_dir() / "killed").exists()
        assert names(api, "Node", RUN_LABEL) == {"tc-alive-node-0"}
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        if live_run is not None:
            live_run.down()
    assert names(api, "Node", RUN_LABEL) == set()
    assert not (runs_dir() / "alive").exists()
