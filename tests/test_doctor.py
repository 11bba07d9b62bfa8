"""``conformance doctor`` (conformance/cluster/doctor.py): whether a live run on a cluster can be
judged, said before the run. Without a cluster: the one-line errors and the verdict logic over
fake answers; ``live``: a local control plane (which enables the two steering admission plugins)
seen by an admin and by an account without rights.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from conformance.cluster import doctor
from conformance.cluster.podlife import steering_problem

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "conformance.cli", "doctor"]


def run_doctor(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=120, cwd=ROOT)


def lines_of(stdout: str) -> dict[str, list[str]]:
    """topic -> ["status  text", ...]"""
    found: dict[str, list[str]] = {}
    for line in stdout.splitlines():
        topic, _, rest = line.partition("  ")
        found.setdefault(topic.strip(), []).append(" ".join(rest.split()))
    return found


# ---------------------------------------------------------------------- without a cluster

def test_missing_kubeconfig_is_one_line_and_exit_2(tmp_path):
    done = run_doctor("--kubeconfig", str(tmp_path / "missing"))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"error: kubeconfig {tmp_path / 'missing'}: no such file\n"


def test_unreachable_server_is_one_line_and_exit_2(tmp_path):
    from test_podlife import UNREACHABLE_KUBECONFIG, closed_port  # rootdir-relative: tests/ is on sys.path

    port = closed_port()
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(UNREACHABLE_KUBECONFIG % port)
    done = run_doctor("--kubeconfig", str(kubeconfig), "--profile", "jobset-v0.10")
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: cannot reach the API server https://127.0.0.1:{port} of {kubeconfig}")
    assert len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr


class FakeApi:
    """Answers a steering dry run with the pod as given (no admission plugin touched it)."""

    def __init__(self, returned_spec: dict):
        self.returned_spec = returned_spec
        self.deleted = []

    def must_resource(self, api_version, kind):
        return kind

    def create(self, obj, field_manager, dry_run=False):
        return {**obj, "spec": {**obj["spec"], **self.returned_spec}} if obj["kind"] == "Pod" else obj

    def delete(self, resource, namespace, name):
        self.deleted.append((resource, name))


def test_steering_names_the_missing_plugin_and_the_way_out():
    neither = steering_problem(FakeApi({}), "r1")
    assert "PodNodeSelector, PodTolerationRestriction" in neither and "--pod-lifecycle cluster" in neither
    only_selector = steering_problem(FakeApi({"nodeSelector": {"training-conformance.io/run": "r1"}}), "r1")
    assert "plugin(s) PodTolerationRestriction," in only_selector
    both = FakeApi({"nodeSelector": {"training-conformance.io/run": "r1"},
                    "tolerations": [{"key": "training-conformance.io/run", "value": "r1", "effect": "NoSchedule"}]})
    assert steering_problem(both, "r1") is None
    assert both.deleted == [("Namespace", "tc-r1-steering-probe")]  # the probe namespace goes again


def test_rights_fail_names_each_refused_verb_and_why(monkeypatch):
    refused = {("nodes", "create"), ("customresourcedefinitions", "create")}
    monkeypatch.setattr(doctor, "may", lambda api, group, resource, verb, ns: ((resource, verb) not in refused, ""))
    [finding] = doctor.rights(None, "harness", "reference")
    assert finding.status == doctor.FAIL
    assert finding.text == ("the account may not: create nodes (the harness's own Nodes tc-<run>-node-<i>); "
                            "create customresourcedefinitions.apiextensions.k8s.io (installing the profile's CRDs)")
    # Neither is needed when the cluster runs the pods and the vendor's operator is installed.
    [finding] = doctor.rights(None, "cluster", "external")
    assert finding.status == doctor.OK


# ---------------------------------------------------------------------- live

live = pytest.mark.live


@pytest.fixture(scope="module")
def plane():
    from conformance.cluster import FakeNode, LocalControlPlane

    with LocalControlPlane(nodes=(FakeNode("kwok-node-0"),)) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def rightless_kubeconfig(plane, api, tmp_path_factory) -> Path:
    """The plane's kubeconfig with the token of a ServiceAccount bound to nothing."""
    api.create({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "nobody", "namespace": "default"}},
               "test")
    token = api.request("POST", "/api/v1/namespaces/default/serviceaccounts/nobody/token",
                        body={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                              "spec": {"expirationSeconds": 3600}})["status"]["token"]
    config = yaml.safe_load(plane.kubeconfig.read_text())
    for user in config["users"]:
        user["user"] = {"token": token}
    path = tmp_path_factory.mktemp("nobody") / "kubeconfig"
    path.write_text(yaml.safe_dump(config))
    return path


@live
def test_an_admin_on_the_local_plane_can_judge_a_run(plane, api):
    done = run_doctor("--kubeconfig", str(plane.kubeconfig), "--profile", "volcano-v1.12")
    assert done.returncode == 0, done.stdout + done.stderr
    found = lines_of(done.stdout)
    assert found["server"] == [f"ok {plane.server}: kubernetes v1.35.8"]
    assert found["rights"][0].startswith("ok all 15 checked")
    assert found["steering"][0].startswith("ok PodNodeSelector and PodTolerationRestriction steer")
    assert found["pods"][0].startswith("ok the harness's own kwok")
    assert found["apis"] == ["info volcano-v1.12: 2 of 2 kinds not served yet; the reference operator installs them"]
    assert found["skipped"] == ["ok volcano-v1.12: a volcano scheduler is there (the local plane binds for it)"]
    assert found["verdict"] == ["a run on this cluster can be judged"]
    # The steering probe leaves no namespace (deleted at once; gone shortly after).
    namespaces = api.must_resource("v1", "Namespace")
    deadline = time.monotonic() + 30
    while any(n["metadata"]["name"].endswith("-steering-probe") for n in api.list(namespaces).get("items", [])):
        assert time.monotonic() < deadline, "the steering probe namespace stays"
        time.sleep(0.5)


@live
def test_an_external_operator_that_is_not_installed_cannot_be_judged(plane):
    done = run_doctor("--kubeconfig", str(plane.kubeconfig), "--profile", "volcano-v1.12", "--operator", "external",
                      "--pod-lifecycle", "cluster")
    assert done.returncode == 1, done.stdout + done.stderr
    found = lines_of(done.stdout)
    assert found["apis"] == ["FAIL volcano-v1.12: not served - is its operator installed? "
                             "batch.volcano.sh/v1alpha1 Job (needed by volcano-v1.12); "
                             "bus.volcano.sh/v1alpha1 Command (needed by volcano-v1.12)"]
    assert found["rights"][0].startswith("ok all 6 checked")
    assert found["steering"] == ["info not needed: the cluster's own nodes run the pods"]
    assert found["skipped"][0].startswith("WARN every row whose pods must start")
    assert found["verdict"] == ["a run on this cluster could not be judged: fix the FAIL lines first"]


@live
def test_an_account_without_rights_is_told_what_it_may_not_do(rightless_kubeconfig):
    done = run_doctor("--kubeconfig", str(rightless_kubeconfig), "--profile", "jobset-v0.10")
    assert done.returncode == 1, done.stdout + done.stderr
    found = lines_of(done.stdout)
    assert found["rights"][0].startswith("FAIL the account may not: create namespaces (a fresh namespace per case); ")
    assert "create nodes (the harness's own Nodes" in found["rights"][0]
    assert found["steering"][0].startswith(f"FAIL forbidden: the account of {rightless_kubeconfig} may not ")
    assert found["verdict"] == ["a run on this cluster could not be judged: fix the FAIL lines first"]


@live
def test_clean_by_an_account_without_rights_is_one_forbidden_line(rightless_kubeconfig):
    done = subprocess.run([sys.executable, "-m", "conformance.cli", "cluster", "clean", "--kubeconfig",
                           str(rightless_kubeconfig)], capture_output=True, text=True, timeout=120, cwd=ROOT,
                          env={**os.environ, "TC_CACHE_DIR": str(rightless_kubeconfig.parent)})
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: forbidden: the account of {rightless_kubeconfig} may not list and delete "
                                  "run-labelled Nodes and namespaces (403): ")
    assert len(done.stderr.splitlines()) == 1
