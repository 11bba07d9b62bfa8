"""A live run leaves nothing behind: not after a normal end, not after Ctrl-C (SIGINT) or SIGTERM.

Each test runs ``conformance run --backend live`` on one small row as a subprocess with a private
``TMPDIR`` and ``TC_CACHE_DIR`` and a marker in its environment, which every process it starts
inherits. Afterwards: the private temp dir is empty (no tc-live-*, tc-cluster-*, tc-kind-* dir, no
client certificate file), no run state is recorded, no process carries the marker (etcd, kube-*,
kwok, the operator, the binder), and - when the run used a cluster that outlives it - that cluster
holds no harness Node and no run-labelled namespace.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from conformance.cluster.podlife import RUN_LABEL

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.live

#: One quick Volcano row (a Job, its pods Running; no faults).
PROFILE = "volcano-v1.12"
ROW = "defaults-master1-worker2"


def marked_processes(marker: str) -> list[str]:
    found = []
    needle = f"TC_LEAK_MARK={marker}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if needle not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            state = (entry / "stat").read_text().rpartition(")")[2].split()[0]
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if state != "Z":
            found.append(f"{entry.name}: {cmdline[:160]}")
    return found


def wait_for(predicate, what: str, timeout: float):
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(0.2)
    return value


@pytest.fixture(scope="module")
def plane():
    """A cluster that outlives the runs (stand-in kubelets whose pods never start, as kind's)."""
    from conformance.cluster import LocalControlPlane
    from conformance.cluster.local import real_nodes

    with LocalControlPlane(nodes=real_nodes()) as cluster:
        yield cluster


def run_labelled(api, kind: str) -> set[str]:
    resource = api.must_resource("v1", kind)
    return {o["metadata"]["name"] for o in api.list(resource, None, label_selector=RUN_LABEL).get("items", [])}


def start_run(tmp_path: Path, where: list[str]) -> tuple[subprocess.Popen, dict]:
    from conformance.cluster.binaries import bin_dir

    marker = uuid.uuid4().hex
    env = {**os.environ, "TMPDIR": str(tmp_path / "tmp"), "TC_CACHE_DIR": str(tmp_path / "cache"),
           "TC_BIN_DIR": str(bin_dir()), "TC_LEAK_MARK": marker, "TC_LIVE_KEEP_LOGS": ""}
    env.pop("TC_LIVE_KUBECONFIG", None)
    (tmp_path / "tmp").mkdir()
    child = subprocess.Popen(
        [sys.executable, "-m", "conformance.cli", "run", "--backend", "live", "--profile", PROFILE, "-k", ROW, *where],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        # SIGINT as Ctrl-C in a terminal gives it: a shell starts background jobs with SIGINT ignored
        # (and Python then installs no KeyboardInterrupt handler), which a child would inherit.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    return child, {"marker": marker, "tmp": tmp_path / "tmp", "runs": tmp_path / "cache" / "runs"}


def harness_up(run: dict) -> bool:
    """The run's own kwok is running: it is mid-run (cluster up, harness Nodes registered)."""
    for state_file in run["runs"].glob("*/state.json"):
        try:
            if json.loads(state_file.read_text()).get("kwokPid"):
                return True
        except (OSError, ValueError):
            pass
    return False


def assert_nothing_left(run: dict, output: str) -> None:
    leftovers = sorted(p.name for p in run["tmp"].iterdir())
    assert leftovers == [], f"left in TMPDIR: {leftovers}\n{output[-3000:]}"
    runs = sorted(str(p.relative_to(run["runs"])) for p in run["runs"].glob("*")) if run["runs"].is_dir() else []
    assert runs == [], f"run state left: {runs}"
    wait_for(lambda: not marked_processes(run["marker"]), "the run's processes to exit", timeout=20)


def finish(child: subprocess.Popen, timeout: float = 240) -> str:
    try:
        output, _ = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        child.kill()
        output, _ = child.communicate()
        pytest.fail(f"the run did not end within {timeout:.0f}s:\n{output[-3000:]}")
    return output


def test_a_normal_run_on_realnodes_leaves_nothing(tmp_path):
    child, run = start_run(tmp_path, ["--provider", "realnodes"])
    output = finish(child)
    assert child.returncode == 0, output[-3000:]
    assert "1 passed" in output
    assert_nothing_left(run, output)


def test_a_normal_run_on_a_given_cluster_leaves_nothing_in_it(tmp_path, plane, api):
    child, run = start_run(tmp_path, ["--kubeconfig", str(plane.kubeconfig), "--pod-lifecycle", "harness"])
    output = finish(child)
    assert child.returncode == 0, output[-3000:]
    assert "1 passed" in output
    assert_nothing_left(run, output)
    assert run_labelled(api, "Node") == set()
    wait_for(lambda: not run_labelled(api, "Namespace"), "the run's namespaces to go", timeout=180)  # pods of a stopped kwok go with PodGC: can pass 60 s


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_run_interrupted_on_realnodes_leaves_nothing(tmp_path, signum):
    child, run = start_run(tmp_path, ["--provider", "realnodes"])
    try:
        wait_for(lambda: harness_up(run) or child.poll() is not None, "the harness's kwok", timeout=120)
        assert child.poll() is None, finish(child)[-3000:]
        time.sleep(2)  # into the case
        child.send_signal(signum)
        output = finish(child, timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode != 0
    assert_nothing_left(run, output)


def test_a_run_interrupted_on_a_given_cluster_leaves_nothing_in_it(tmp_path, plane, api):
    child, run = start_run(tmp_path, ["--kubeconfig", str(plane.kubeconfig), "--pod-lifecycle", "harness"])
    try:
        wait_for(lambda: harness_up(run) or child.poll() is not None, "the harness's kwok", timeout=120)
        assert child.poll() is None, finish(child)[-3000:]
        wait_for(lambda: run_labelled(api, "Namespace") - {n for n in run_labelled(api, "Namespace")
                                                           if n.endswith("-steering-probe")},
                 "the case's namespace", timeout=60)
        child.send_signal(signal.SIGINT)
        output = finish(child, timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode != 0
    assert_nothing_left(run, output)
    assert run_labelled(api, "Node") == set()
    wait_for(lambda: not run_labelled(api, "Namespace"), "the run's namespaces to go", timeout=180)
