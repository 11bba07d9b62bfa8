"""The CI template and its kind configuration: kind's apiserver must run the two admission plugins
that steer the cases' pods (as the local plane's does), and a pull request runs ``--tier pr``."""

from __future__ import annotations

import re

import yaml

from conftest import ROOT

CI = ROOT / "docs" / "ci"


def plugins_of(flag_value: str) -> set[str]:
    return set(flag_value.split(","))


def test_kind_config_enables_the_steering_plugins_and_keeps_node_restriction():
    config = yaml.safe_load((CI / "kind-config.yaml").read_text())
    assert (config["kind"], config["apiVersion"]) == ("Cluster", "kind.x-k8s.io/v1alpha4")
    [control_plane] = [n for n in config["nodes"] if n["role"] == "control-plane"]
    [patch] = [yaml.safe_load(p) for p in control_plane["kubeadmConfigPatches"]]
    assert patch["kind"] == "ClusterConfiguration"
    value = patch["apiServer"]["extraArgs"]["enable-admission-plugins"]
    assert plugins_of(value) == {"NodeRestriction", "PodNodeSelector", "PodTolerationRestriction"}


def test_the_local_plane_enables_the_same_steering_plugins():
    text = (ROOT / "conformance" / "cluster" / "local.py").read_text()
    [value] = re.findall(r"--enable-admission-plugins=([A-Za-z,]+)", text)
    assert {"PodNodeSelector", "PodTolerationRestriction"} <= plugins_of(value)


def test_ci_template_uses_the_kind_config_doctor_and_tier_pr_on_pull_requests():
    workflow = yaml.safe_load((CI / "operator-conformance.yaml").read_text())
    steps = workflow["jobs"]["conformance"]["steps"]
    [kind] = [s for s in steps if "kind-action" in s.get("uses", "")]
    assert kind["with"]["config"] == ".github/kind-config.yaml"
    runs = "\n".join(s.get("run", "") for s in steps)
    assert "conformance doctor --kubeconfig" in runs
    assert "--pod-lifecycle harness" in runs
    assert "--tier \"${{ github.event_name == 'pull_request' && 'pr' || 'full' }}\"" in runs
    assert "kwok/releases/download/v0.8.0/kwok-linux-amd64" in runs  # podlife.KWOK_VERSION
    from conformance.cluster.podlife import KWOK_VERSION
    assert KWOK_VERSION == "v0.8.0"
