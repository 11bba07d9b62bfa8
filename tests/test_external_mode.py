"""External-operator mode: the API check (fake discovery), the harness-ownership test for
cluster-scoped names, and the `conformance run --operator external` argument contract."""

import subprocess
import sys

import pytest

from conftest import ROOT
from conformance.live.external import MissingApisError, check_served, created_by_harness, missing_apis

TRAINER_KINDS = {("trainer.kubeflow.org/v1alpha1", k) for k in ("TrainJob", "TrainingRuntime", "ClusterTrainingRuntime")}
JOBSET_KINDS = {("jobset.x-k8s.io/v1alpha2", "JobSet")}


class FakeDiscovery:
    """Serves exactly the given (apiVersion, kind) pairs, as Api.resource answers: None otherwise."""

    def __init__(self, served):
        self.served = set(served)
        self.asked = []

    def resource(self, api_version, kind):
        self.asked.append((api_version, kind))
        return object() if (api_version, kind) in self.served else None


def test_everything_served_passes_and_every_needed_kind_was_asked():
    discovery = FakeDiscovery(TRAINER_KINDS | JOBSET_KINDS)
    check_served(discovery, ["trainer-v2.3"])
    # The trainer profiles need the three Trainer kinds and JobSet (trainer-v2.md: TrainJob -> JobSet).
    assert set(discovery.asked) == TRAINER_KINDS | JOBSET_KINDS


def test_missing_jobset_is_named_with_the_profile_that_needs_it():
    assert missing_apis(FakeDiscovery(TRAINER_KINDS), ["trainer-v2.3"]) == [
        "jobset.x-k8s.io/v1alpha2 JobSet (needed by trainer-v2.3)"]


def test_empty_cluster_names_every_kind_and_says_what_to_do():
    with pytest.raises(MissingApisError) as err:
        check_served(FakeDiscovery(()), ["trainer-v2.1", "jobset-v0.10"], where="cluster K")
    text = str(err.value)
    assert "cluster K does not serve 4 API(s)" in text
    assert "is the operator (and its CRDs) installed?" in text
    assert "jobset.x-k8s.io/v1alpha2 JobSet (needed by trainer-v2.1, jobset-v0.10)" in text
    for kind in ("TrainJob", "TrainingRuntime", "ClusterTrainingRuntime"):
        assert f"trainer.kubeflow.org/v1alpha1 {kind} (needed by trainer-v2.1)" in text


def test_jobset_profile_needs_only_jobset():
    assert missing_apis(FakeDiscovery(JOBSET_KINDS), ["jobset-v0.12"]) == []
    assert missing_apis(FakeDiscovery(TRAINER_KINDS), ["jobset-v0.12"]) == [
        "jobset.x-k8s.io/v1alpha2 JobSet (needed by jobset-v0.12)"]


def test_volcano_profile_needs_the_volcano_job():
    assert missing_apis(FakeDiscovery(TRAINER_KINDS | JOBSET_KINDS), ["volcano-v1.12"]) == [
        "batch.volcano.sh/v1alpha1 Job (needed by volcano-v1.12)"]


@pytest.mark.parametrize("managed_fields, ours", [
    ([{"manager": "training-conformance", "operation": "Update"}], True),
    ([{"manager": "kubectl-client-side-apply", "operation": "Update"},
      {"manager": "training-conformance", "operation": "Update"}], True),
    ([{"manager": "kubectl-client-side-apply", "operation": "Update"}], False),
    (None, False),  # managedFields dropped: cannot prove it is ours, so it is not touched
])
def test_only_objects_the_harness_created_count_as_its_own(managed_fields, ours):
    obj = {"metadata": {"name": "torch-distributed", "managedFields": managed_fields}}
    assert created_by_harness(obj, "training-conformance") is ours


def conformance_run(*args, env=None):
    return subprocess.run([sys.executable, "-m", "conformance.cli", "run", *args], capture_output=True, text=True,
                          cwd=ROOT, env=env)


def test_external_needs_the_live_backend():
    run = conformance_run("--operator", "external", "--profile", "trainer-v2.3")
    assert run.returncode == 2
    assert "--operator external needs --backend live" in run.stderr


def test_external_needs_a_kubeconfig_and_profiles(tmp_path):
    env = {"PATH": "/usr/bin:/bin"}
    run = conformance_run("--backend", "live", "--operator", "external", "--profile", "trainer-v2.3", env=env)
    assert run.returncode == 2 and "needs --kubeconfig" in run.stderr
    run = conformance_run("--backend", "live", "--operator", "external", "--kubeconfig", str(tmp_path / "k"), env=env)
    assert run.returncode == 2 and "needs --profile" in run.stderr


def test_external_with_an_unreadable_kubeconfig_names_it(tmp_path):
    kubeconfig = tmp_path / "missing-kubeconfig"
    run = conformance_run("--backend", "live", "--operator", "external", "--kubeconfig", str(kubeconfig),
                          "--profile", "trainer-v2.3", env={"PATH": "/usr/bin:/bin"})
    assert run.returncode == 2
    assert f"cannot read the API of {kubeconfig}" in run.stderr


class FakeApi(FakeDiscovery):
    def forget(self, api_version=None):
        pass


def test_external_session_starts_no_operator_and_checks_discovery_per_profile(monkeypatch):
    from conformance.live import session

    monkeypatch.setenv("TC_LIVE_OPERATOR", "external")
    monkeypatch.setattr(session, "OperatorProcess", lambda *a, **k: pytest.fail("external mode started an operator"))
    monkeypatch.setattr(session.LiveSession, "_start_informers", lambda self, profile: None)
    live = session.LiveSession()
    live.kubeconfig = "K"
    live.api = FakeApi(JOBSET_KINDS)
    with pytest.raises(MissingApisError, match="trainer.kubeflow.org/v1alpha1 TrainJob"):
        live._switch("trainer-v2.3")
    live._switch("jobset-v0.12")
    assert live.operator is None and live.profile == "jobset-v0.12"


def test_unknown_operator_setting_is_refused(monkeypatch):
    from conformance.live import session

    monkeypatch.setenv("TC_LIVE_OPERATOR", "vendor")
    with pytest.raises(ValueError, match="TC_LIVE_OPERATOR='vendor'"):
        session.Settings()
