"""The local control plane (conformance.cluster).

Tests marked ``live`` start real etcd / kube-* / kwok processes from ``make control-plane`` and are
left out of the default run (``make test-live`` runs them). A missing binary is an error naming
the binary and the build command, never a skip. The rest check certificates, the version pin
and the missing-binary error without starting anything.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from conformance.cluster import KUBERNETES_VERSION, FakeNode, LocalControlPlane, MissingBinaryError, certs

ROOT = Path(__file__).resolve().parents[1]
EXIT_CODE_LABEL = "training-conformance.io/exit-code"  # kwok-stages.yaml's convention
#: What a cluster runs (local.py's docstring): the five binaries, and the Python stand-in for
#: the Volcano scheduler.
COMPONENTS = {"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok", "volcano-binder"}


def pinned_kubernetes_version() -> str:
    """The k8s.io/kubernetes release tools/kube/go.mod builds - the source of truth."""
    match = re.search(r"^\s*(?:require\s+)?k8s\.io/kubernetes\s+(v\S+)", (ROOT / "tools/kube/go.mod").read_text(), re.M)
    assert match, "tools/kube/go.mod does not require k8s.io/kubernetes"
    return match.group(1)


def processes_mentioning(state_dir: str | Path) -> list[tuple[int, str]]:
    """Live processes whose command line names a file in ``state_dir`` - every component of
    that cluster does (data dir, certificates, kubeconfig), and no other process."""
    text = f"{state_dir}/"
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rpartition(")")[2].split()[0]
        except OSError:
            continue
        if text in cmdline and state != "Z":
            found.append((int(entry.name), cmdline[:200]))
    return found


def wait_for(predicate, what: str, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(0.2)


# ---------------------------------------------------------------------- without binaries

def test_python_pin_matches_the_go_module():
    assert KUBERNETES_VERSION == pinned_kubernetes_version()


def test_missing_binary_names_it_and_the_build_command(tmp_path):
    for name in ("etcd", "kube-apiserver", "kube-controller-manager", "kwok"):
        (tmp_path / name).write_text("#!/bin/sh\n")
        (tmp_path / name).chmod(0o755)
    plane = LocalControlPlane(tmp_path / "state", bin_dir=tmp_path)
    with pytest.raises(MissingBinaryError) as error:
        plane.up()
    message = str(error.value)
    assert f"not found in {tmp_path}: kube-scheduler." in message  # only the missing one is listed
    assert "make control-plane" in message
    assert not (tmp_path / "state").exists()  # nothing started, nothing written


def test_certificates_chain_to_the_ca_and_carry_the_right_names(tmp_path):
    paths = certs.generate().write(tmp_path)
    ca = x509.load_pem_x509_certificate(paths.ca_cert.read_bytes())
    serving = x509.load_pem_x509_certificate(paths.serving_cert.read_bytes())
    admin = x509.load_pem_x509_certificate(paths.admin_cert.read_bytes())
    serving.verify_directly_issued_by(ca)
    admin.verify_directly_issued_by(ca)

    san = serving.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert ipaddress.ip_address("127.0.0.1") in san.get_values_for_type(x509.IPAddress)
    assert "localhost" in san.get_values_for_type(x509.DNSName)
    assert ExtendedKeyUsageOID.SERVER_AUTH in serving.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    # The apiserver maps a client certificate's O to groups; system:masters is cluster-admin.
    assert admin.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)[0].value == "system:masters"
    assert ExtendedKeyUsageOID.CLIENT_AUTH in admin.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value

    sa_private = serialization.load_pem_private_key(paths.sa_key.read_bytes(), password=None)
    sa_public = serialization.load_pem_public_key(paths.sa_pub.read_bytes())
    assert sa_private.public_key().public_numbers() == sa_public.public_numbers()
    assert oct(paths.ca_key.stat().st_mode & 0o777) == "0o600"


# ---------------------------------------------------------------------- live

live = pytest.mark.live


@pytest.fixture(scope="module")
def cluster():
    with LocalControlPlane(nodes=(FakeNode("kwok-node-0"), FakeNode("kwok-node-1", gpus=0))) as plane:
        yield plane


@pytest.fixture(scope="module")
def api(cluster):
    with cluster.api_client() as client:
        yield client


def core(api):
    from kubernetes import client

    return client.CoreV1Api(api)


def pod_manifest(name: str, labels: dict | None = None, node: str | None = None) -> dict:
    spec = {"containers": [{"name": "main", "image": "registry.invalid/never-pulled:1"}]}
    if node:
        spec["nodeSelector"] = {"kubernetes.io/hostname": node}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels or {}}, "spec": spec}


def job_manifest(name: str, exit_code: str, *, completions: int = 1, backoff_limit: int = 6) -> dict:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "completions": completions,
            "parallelism": completions,
            "backoffLimit": backoff_limit,
            "template": {
                "metadata": {"labels": {EXIT_CODE_LABEL: exit_code},
                             "annotations": {"training-conformance.io/exit-after": "500ms"}},
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "train", "image": "registry.invalid/trainer:1",
                                    "resources": {"limits": {"nvidia.com/gpu": "1"}}}],
                },
            },
        },
    }


def job_condition(api, name: str, kind: str):
    from kubernetes import client

    job = client.BatchV1Api(api).read_namespaced_job(name, "default")
    return next((c for c in job.status.conditions or [] if c.type == kind and c.status == "True"), None) and job


@live
def test_every_component_is_healthy_and_nodes_are_ready(cluster, api):
    status = cluster.status()
    assert set(status) == COMPONENTS
    assert all(s["running"] and s["healthy"] for s in status.values()), status
    nodes = {n.metadata.name: n for n in core(api).list_node().items}
    assert set(nodes) == {"kwok-node-0", "kwok-node-1"}
    for node in nodes.values():
        assert {c.type: c.status for c in node.status.conditions}["Ready"] == "True"
    # What the Node was registered with survives kwok's node-initialize stage.
    assert nodes["kwok-node-0"].status.allocatable["nvidia.com/gpu"] == "8"
    assert "nvidia.com/gpu" not in nodes["kwok-node-1"].status.allocatable
    assert cluster.server.startswith("https://127.0.0.1:")


@live
def test_version_endpoint_reports_the_pinned_release(api):
    from kubernetes import client

    info = client.VersionApi(api).get_code()
    # Without the build's -X ldflags this reads v0.0.0-master+$Format:%H$.
    assert info.git_version == pinned_kubernetes_version()
    assert (info.major, info.minor) == tuple(pinned_kubernetes_version()[1:].split(".")[:2])


@live
def test_pod_on_a_fake_node_runs_and_stays_running(api):
    pods = core(api)
    pods.create_namespaced_pod("default", pod_manifest("runner", node="kwok-node-1"))
    pod = wait_for(lambda: (p := pods.read_namespaced_pod("runner", "default")).status.phase == "Running" and p,
                   "pod runner to be Running")
    assert pod.spec.node_name == "kwok-node-1"  # placed by kube-scheduler
    assert ipaddress.ip_address(pod.status.pod_ip) in ipaddress.ip_network("10.244.0.0/16")
    assert pod.status.container_statuses[0].state.running is not None
    # No exit-code label: nothing completes on its own (the render backend's convention too).
    time.sleep(3)
    assert pods.read_namespaced_pod("runner", "default").status.phase == "Running"


@live
def test_job_whose_pods_exit_zero_completes(api):
    from kubernetes import client

    client.BatchV1Api(api).create_namespaced_job("default", job_manifest("completes", "0", completions=2))
    job = wait_for(lambda: job_condition(api, "completes", "Complete"), "Job completes to be Complete", timeout=60)
    assert job.status.succeeded == 2
    pods = core(api).list_namespaced_pod("default", label_selector="job-name=completes").items
    # One GPU each, so the scheduler could only use the node that has GPUs.
    assert {p.spec.node_name for p in pods} == {"kwok-node-0"}
    assert all(p.status.phase == "Succeeded" for p in pods)


@live
def test_job_whose_pod_exits_nonzero_fails_with_that_exit_code(api):
    from kubernetes import client

    client.BatchV1Api(api).create_namespaced_job("default", job_manifest("fails", "3", backoff_limit=0))
    wait_for(lambda: job_condition(api, "fails", "Failed"), "Job fails to be Failed", timeout=60)
    (pod,) = core(api).list_namespaced_pod("default", label_selector="job-name=fails").items
    assert pod.status.phase == "Failed"
    assert pod.status.container_statuses[0].state.terminated.exit_code == 3


@live
def test_nonzero_exit_under_onfailure_restarts_the_container_in_place_once(api):
    pods = core(api)
    manifest = pod_manifest("crasher", labels={EXIT_CODE_LABEL: "137"})
    manifest["metadata"]["annotations"] = {"training-conformance.io/exit-after": "200ms"}
    manifest["spec"]["restartPolicy"] = "OnFailure"
    pods.create_namespaced_pod("default", manifest)

    def restarted():
        pod = pods.read_namespaced_pod("crasher", "default")
        statuses = pod.status.container_statuses or []
        return statuses and statuses[0].restart_count == 1 and pod

    pod = wait_for(restarted, "container of pod crasher to restart")
    status = pod.status.container_statuses[0]
    assert status.last_state.terminated.exit_code == 137
    assert status.state.running is not None and pod.status.phase == "Running"
    time.sleep(2)  # ten times exit-after: a second exit would have happened by now
    assert pods.read_namespaced_pod("crasher", "default").status.container_statuses[0].restart_count == 1


@live
def test_deleted_pod_goes_away_without_waiting_out_its_grace_period(api):
    from kubernetes.client.exceptions import ApiException

    pods = core(api)
    pods.create_namespaced_pod("default", pod_manifest("doomed"))
    wait_for(lambda: pods.read_namespaced_pod("doomed", "default").status.phase == "Running", "pod doomed to run")
    pods.delete_namespaced_pod("doomed", "default")  # default grace period: 30 s

    def gone():
        try:
            pods.read_namespaced_pod("doomed", "default")
        except ApiException as exc:
            return exc.status == 404
        return False

    # Without kwok's stop and delete stages the pod would stay Terminating for good (no kubelet).
    wait_for(gone, "pod doomed to be deleted", timeout=10)


@live
def test_apiserver_restart_mid_run(cluster, api):
    from kubernetes import client

    pid_before = cluster.components["kube-apiserver"].pid
    cluster.restart("kube-apiserver")
    assert cluster.components["kube-apiserver"].pid != pid_before
    # Data survived in etcd, and the controller manager, scheduler and kwok reconnected: a new
    # Job still goes through every one of them.
    assert core(api).read_namespaced_pod("runner", "default").status.phase == "Running"
    client.BatchV1Api(api).create_namespaced_job("default", job_manifest("after-restart", "0"))
    wait_for(lambda: job_condition(api, "after-restart", "Complete"), "Job after-restart to complete", timeout=90)


@live
def test_teardown_leaves_no_process_and_no_state():
    plane = LocalControlPlane(nodes=(FakeNode("n0"),))
    plane.up()
    try:
        state_dir = str(plane.state_dir)
        pids = [c.pid for c in plane.components.values()]
        assert len(processes_mentioning(state_dir)) == len(COMPONENTS)
    finally:
        plane.down()
    assert processes_mentioning(state_dir) == []
    assert all(not Path(f"/proc/{pid}").exists() for pid in pids)  # reaped, not zombies
    assert not Path(state_dir).exists()


@live
def test_exception_inside_the_with_block_tears_down():
    with pytest.raises(RuntimeError, match="boom"):
        with LocalControlPlane(nodes=(FakeNode("n0"),)) as plane:
            state_dir = str(plane.state_dir)
            raise RuntimeError("boom")
    assert processes_mentioning(state_dir) == []


@live
def test_component_that_dies_at_start_fails_up_with_its_log_and_leaves_nothing(tmp_path):
    from conformance.cluster import ClusterStartError, bin_dir

    bins = tmp_path / "bin"
    bins.mkdir()
    for name in ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"):
        (bins / name).symlink_to(bin_dir() / name)
    (bins / "kwok").write_text("#!/bin/sh\necho 'kwok: cannot start (test)' >&2\nexit 3\n")
    (bins / "kwok").chmod(0o755)
    plane = LocalControlPlane(tmp_path / "state", bin_dir=bins, nodes=(FakeNode("n0"),))
    with pytest.raises(ClusterStartError) as error:
        plane.up()
    assert "kwok exited (code 3)" in str(error.value)
    assert "kwok: cannot start (test)" in str(error.value)
    assert processes_mentioning(tmp_path / "state") == []


SCRIPT = """
import json, sys, time
from conformance.cluster import FakeNode, LocalControlPlane
plane = LocalControlPlane(nodes=(FakeNode("n0"),))
plane.up()
print(json.dumps({"state_dir": str(plane.state_dir)}), flush=True)
with plane:  # Ctrl-C (KeyboardInterrupt) leaves the with block; SIGTERM is handled by the plane
    time.sleep(600)
"""


@live
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL], ids=["SIGTERM", "SIGINT", "SIGKILL"])
def test_signal_to_the_owning_process_tears_down(signum):
    # SIGINT as Ctrl-C gives it, even when this test runs in a background job (SIGINT ignored there).
    child = subprocess.Popen([sys.executable, "-c", SCRIPT], stdout=subprocess.PIPE, text=True, cwd=ROOT,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        line = child.stdout.readline()
        assert line, f"the child exited with {child.wait()} before the cluster came up"
        state_dir = json.loads(line)["state_dir"]
        assert len(processes_mentioning(state_dir)) == len(COMPONENTS)
        child.send_signal(signum)
        child.wait(timeout=60)
        # SIGKILL runs no Python at all: the kernel's parent-death signal stops the components.
        wait_for(lambda: not processes_mentioning(state_dir), f"components of {state_dir} to exit", timeout=20)
        if signum != signal.SIGKILL:
            assert not Path(state_dir).exists()
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        if "state_dir" in locals():  # after SIGKILL (or a failure above) nobody else removes it
            shutil.rmtree(state_dir, ignore_errors=True)


@live
def test_cli_up_status_down(tmp_path):
    cli = [sys.executable, "-m", "conformance.cli", "cluster"]
    state = tmp_path / "cluster"
    up = subprocess.run([*cli, "up", "--dir", str(state), "--nodes", "1"], capture_output=True, text=True, timeout=180)
    try:
        assert up.returncode == 0, up.stderr
        kubeconfig = Path(up.stdout.strip())
        assert kubeconfig == state / "kubeconfig" and kubeconfig.exists()
        # The command has exited; the cluster is still there.
        assert len(processes_mentioning(str(state))) == len(COMPONENTS)
        status = subprocess.run([*cli, "status", "--dir", str(state)], capture_output=True, text=True, timeout=60)
        assert status.returncode == 0, status.stdout + status.stderr
        assert status.stdout.count("healthy") == len(COMPONENTS)
        again = subprocess.run([*cli, "up", "--dir", str(state)], capture_output=True, text=True, timeout=60)
        assert again.returncode == 2 and "already running" in again.stderr
    finally:
        down = subprocess.run([*cli, "down", "--dir", str(state)], capture_output=True, text=True, timeout=60)
    assert down.returncode == 0, down.stderr
    assert processes_mentioning(str(state)) == []
    assert not state.exists()
    gone = subprocess.run([*cli, "status", "--dir", str(state)], capture_output=True, text=True, timeout=60)
    assert gone.returncode == 2
