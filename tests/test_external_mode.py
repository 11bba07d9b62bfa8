"""External-operator mode: the API check (fake discovery), the harness-ownership test for
cluster-scoped names, and the `conformance run --operator external` argument contract."""

import copy
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
    # ...and the Command (bus.volcano.sh), which rows create to suspend and resume a Job.
    assert missing_apis(FakeDiscovery(TRAINER_KINDS | JOBSET_KINDS), ["volcano-v1.12"]) == [
        "batch.volcano.sh/v1alpha1 Job (needed by volcano-v1.12)",
        "bus.volcano.sh/v1alpha1 Command (needed by volcano-v1.12)"]


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


# ---------------------------------------------------------------- Go serialization in custom resources

def _jobset(container: dict, job_template_extra: dict | None = None, rules=None) -> dict:
    """A JobSet with one replicatedJob ``node`` whose pod template has ``container``."""
    job_spec = {"template": {"spec": {"containers": [container]}}}
    if rules is not None:
        job_spec["podFailurePolicy"] = {"rules": rules}
    template = {"spec": job_spec, **(job_template_extra or {})}
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "tj", "namespace": "d"},
            "spec": {"replicatedJobs": [{"name": "node", "replicas": 1, "template": template}]}}


def _container(jobset: dict) -> dict:
    return jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]


def test_go_zero_values_go_where_render_has_none():
    from conformance.live import gozero

    rendered = _jobset({"name": "node", "image": "img:1", "ports": [{"containerPort": 29500}]},
                       rules=[{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}])
    # As Trainer + JobSet's webhook wrote it (docs/results/*/conformance.log).
    live = _jobset({"name": "node", "image": "img:1", "ports": [{"containerPort": 29500, "protocol": "TCP"}],
                    "resources": {}},
                   rules=[{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": ""}]}])
    live["spec"]["replicatedJobs"][0]["template"]["metadata"] = {}
    live["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["metadata"] = {}
    [stripped] = gozero.strip([live], [rendered])
    assert stripped == rendered
    assert live["spec"]["replicatedJobs"][0]["template"]["metadata"] == {}  # the input is not changed


def test_go_zero_values_stay_where_render_has_them_and_real_values_always_stay():
    from conformance.live import gozero

    rendered = _jobset({"name": "node", "image": "img:1", "resources": {}, "ports": [{"containerPort": 1}]},
                       job_template_extra={"metadata": {}})
    live = _jobset({"name": "node", "image": "img:1", "resources": {},
                    "ports": [{"containerPort": 1, "protocol": "UDP"}]},
                   job_template_extra={"metadata": {}},
                   rules=[{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "False"}]}])
    live["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["metadata"] = {"labels": {"a": "b"}}
    [stripped] = gozero.strip([live], [rendered])
    assert stripped == live  # render writes resources {} and metadata {} too; UDP, False and labels are values


def test_go_zero_values_go_only_from_custom_resources():
    from conformance.live import gozero

    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "d"},
           "spec": {"template": {"metadata": {}, "spec": {"containers": [{"name": "c", "resources": {}}]}}}}
    assert gozero.strip([job], []) == [job]  # built-in kinds: the apiserver's defaults (platform.py)


def test_quantities_take_render_spelling_only_for_the_same_amount():
    from conformance.live import gozero

    rendered = _jobset({"name": "node", "resources": {"limits": {"cpu": "2.5", "memory": "1Gi"},
                                                        "requests": {"cpu": "0.7"}}})
    live = _jobset({"name": "node", "resources": {"limits": {"cpu": "2500m", "memory": "2Gi"},
                                                    "requests": {"cpu": "700m", "nvidia.com/gpu": "1"}}})
    [stripped] = gozero.strip([live], [rendered])
    assert _container(stripped)["resources"] == {"limits": {"cpu": "2.5", "memory": "2Gi"},
                                                 "requests": {"cpu": "0.7", "nvidia.com/gpu": "1"}}


def test_containers_pair_by_name_not_position():
    from conformance.live import gozero

    rendered = _jobset({"name": "a"})
    rendered_spec = rendered["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    rendered_spec["containers"] = [{"name": "a"}, {"name": "b", "resources": {}}]
    live = copy.deepcopy(rendered)
    live_spec = live["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    live_spec["containers"] = [{"name": "b", "resources": {}}, {"name": "a", "resources": {}}]
    [stripped] = gozero.strip([live], [rendered])
    assert stripped["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"] == [
        {"name": "b", "resources": {}}, {"name": "a"}]


def test_runtime_template_updated_by_the_operator_reads_like_the_input():
    """Trainer v2.1 adds its finalizer with an Update: the runtime comes back with Go's zeros."""
    from conformance.live import gozero

    given = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime",
             "metadata": {"name": "torch-distributed"},
             "spec": {"mlPolicy": {"numNodes": 1, "torch": {}}, "template": {"spec": {"replicatedJobs": [
                 {"name": "node", "template": {"spec": {"template": {"spec": {"containers": [{"name": "node"}]}}}}}]}}}}
    live = copy.deepcopy(given)
    live["metadata"]["finalizers"] = ["trainer.kubeflow.org/resource-in-use"]
    live["spec"]["template"]["metadata"] = {}
    rj = live["spec"]["template"]["spec"]["replicatedJobs"][0]
    rj["template"]["spec"]["template"]["metadata"] = {}
    rj["template"]["spec"]["template"]["spec"]["containers"][0]["resources"] = {}
    [stripped] = gozero.strip([live], [given])
    assert stripped["spec"] == given["spec"]  # `torch: {}` is a value render has: kept
    assert stripped["metadata"]["finalizers"] == ["trainer.kubeflow.org/resource-in-use"]  # not a Go zero: shows


def test_pods_follow_the_jobset_template_once_its_go_zeros_are_gone():
    """The Pod's `resources: {}` / `protocol: TCP` are the apiserver's; platform.py keeps them when the
    template sets them - and the live JobSet's template does, as Go wrote it. Stripped first, it does not."""
    from conformance.live import gozero, platform

    rendered = _jobset({"name": "node", "image": "img:1", "ports": [{"containerPort": 29500}],
                        "resources": {"limits": {"cpu": "2.5"}}})
    live = _jobset({"name": "node", "image": "img:1", "ports": [{"containerPort": 29500, "protocol": "TCP"}],
                    "resources": {"limits": {"cpu": "2500m"}}})
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "tj-node-0-0-x", "namespace": "d", "labels": {
        "jobset.sigs.k8s.io/jobset-name": "tj", "jobset.sigs.k8s.io/replicatedjob-name": "node"}},
           "spec": {"containers": [{"name": "node", "image": "img:1", "imagePullPolicy": "IfNotPresent",
                                    "ports": [{"containerPort": 29500, "protocol": "TCP"}],
                                    "resources": {"limits": {"cpu": "2500m"}, "requests": {"cpu": "2500m"}}}]}}
    _jobset_out, pod_out = platform.strip(gozero.strip([live, pod], [rendered]), [])
    assert pod_out["spec"]["containers"] == [{"name": "node", "image": "img:1", "ports": [{"containerPort": 29500}],
                                              "resources": {"limits": {"cpu": "2.5"}}}]


# ---------------------------------------------------------------- reconcile errors from upstream Events

def _event(reason, kind, message, *, type_="Warning", rv="1", when="2026-11-22T08:51:20.492846Z", component=None):
    event = {"metadata": {"resourceVersion": rv}, "type": type_, "reason": reason, "message": message,
             "involvedObject": {"kind": kind, "namespace": "default", "name": "test-job"},
             "eventTime": when, "reportingComponent": component or "", "source": {}}
    if component:
        event["source"] = {"component": component}
    return event


LIMIT = ('Job.batch "test-job-node-0" is invalid: spec.template.spec.containers[0].resources.limits: '
         'Required value: Limit must be set for non overcommitable resources')


def test_jobset_job_creation_failed_is_a_reconcile_error_in_external_mode_only():
    from conformance.live import events

    # The message JobSet v0.12.0 recorded live (JobSet default/test-job, reason JobCreationFailed).
    event = _event("JobCreationFailed", "JobSet", f'job "test-job-node-0" creation failed with error: {LIMIT}')
    expected = [f'JobSet default/test-job: job "test-job-node-0" creation failed with error: {LIMIT}']
    assert events.reconcile_errors([event], external=True) == expected  # the golden's string
    assert events.reconcile_errors([event], external=False) == []


def test_joined_job_errors_become_one_error_each():
    from conformance.live import events

    message = 'job "a-0" creation failed with error: x\njob "a-1" creation failed with error: y'
    assert events.reconcile_errors([_event("JobCreationFailed", "JobSet", message)], external=True) == [
        'JobSet default/test-job: job "a-0" creation failed with error: x',
        'JobSet default/test-job: job "a-1" creation failed with error: y']


def test_trainer_resources_creation_failed_loses_its_prefix_and_pointer():
    from conformance.live import events

    event = _event("TrainJobResourcesCreationFailed", "TrainJob",
                   "TrainJob resources reconciliation failed: MPI implementation for 0xc000a1b2c0 doesn't supported")
    # cases/trainer/mpi-render.yaml mpi-implementation-empty-fails-build: render's string.
    assert events.reconcile_errors([event], external=True) == [
        "TrainJob default/test-job: MPI implementation for <pointer> doesn't supported"]


def test_a_trainer_event_over_several_lines_is_one_error():
    from conformance.live import events

    # JobSet v0.10.1's webhook denies with errors.Join (one error per line); Trainer v2.1.0 reports
    # the apiserver's answer in one Event - one failed reconcile, as render records it.
    denial = ('admission webhook "vjobset.kb.io" denied the request: spec.replicatedJobs[0].name: bad\n'
              'spec.replicatedJobs[0].name: bad')
    event = _event("TrainJobResourcesCreationFailed", "TrainJob", "TrainJob resources reconciliation failed: " + denial)
    assert events.reconcile_errors([event], external=True) == ["TrainJob default/test-job: " + denial]


def test_mpi_operator_warning_events_are_reconcile_errors_as_render_words_them():
    from conformance.live import events

    # kubeflow/mpi-operator v0.6.0 syncHandler / getOrCreate* / newLauncherPodTemplate wording (reconciler/mpijob).
    validation = "Found validation errors: spec.slotsPerWorker: Invalid value: -1: must be greater than or equal to 0"
    exists = 'Resource "test-job-config" of Kind "" already exists and is not managed by MPIJob'
    created = 'worker pod created failed: Pod "test-job-worker-0" is invalid: x'
    found = events.reconcile_errors([
        _event("ValidationError", "MPIJob", validation, rv="1"), _event("ErrResourceExists", "MPIJob", exists, rv="2"),
        _event("MPIJobFailed", "MPIJob", created, rv="3"),
        _event("MPIJobFailed", "MPIJob", "MPIJob default/test-job has failed", rv="4"),  # a condition's restatement
        _event("BackoffLimitExceeded/", "MPIJob", "Job has reached the specified backoff limit: ", rv="5"),
    ], external=True)
    assert found == [f"MPIJob default/test-job: {m}" for m in (validation, exists, created)]


def test_training_operator_warning_events_are_reconcile_errors_as_render_words_them():
    from conformance.live import events

    # kubeflow/training-operator v1.9.2 common/pod.go, pytorchjob_controller.go, core/job.go (reconciler/pytorchjob).
    policy = "Restart policy in pod template will be overwritten by restart policy in replica spec"
    restarting = "PyTorchJob test-job is restarting because 1 Worker replica(s) failed."
    failing = 'job "test-job" is failing because "Worker" replica(s) failed.'
    create = 'Error creating: Pod "test-job-worker-0" is invalid: x'
    abnormal = "Error pod test-job-worker-0 container pytorch exitCode: 1 terminated message: "
    found = events.reconcile_errors([
        _event("SetPodTemplateRestartPolicy", "PyTorchJob", policy, rv="1"),
        _event("PyTorchJobRestarting", "PyTorchJob", restarting, rv="2"),
        _event("PyTorchJobFailed", "PyTorchJob", failing, rv="3"),
        _event("PyTorchJobFailed", "PyTorchJob", "PyTorchJob test-job is failed because 1 Worker replica(s) failed.",
               type_="Normal", rv="4"),  # the Never path's Event is Normal
        _event("FailedCreatePod", "PyTorchJob", create, rv="5"),
        _event("Error", "PyTorchJob", abnormal, rv="6"),  # RecordAbnormalPods: the container's reason
        _event("OOMKilled", "PyTorchJob", abnormal.replace("exitCode: 1", "exitCode: 137"), rv="7"),
        _event("SuccessfulCreatePod", "PyTorchJob", "Created pod: test-job-worker-0", type_="Normal", rv="8"),
        _event("ExitedWithCode", "PyTorchJob", "Pod: default.test-job-worker-0 exited with code 1", rv="9"),
    ], external=True)
    assert found == [f"PyTorchJob default/test-job: {m}" for m in (
        policy, restarting, failing, create, abnormal, abnormal.replace("exitCode: 1", "exitCode: 137"))]


@pytest.mark.parametrize("event", [
    _event("JobCreationFailed", "JobSet", "x", type_="Normal"),
    _event("JobCreationFailed", "TrainJob", "x"),  # the reason belongs to JobSet's controller
    _event("FailedCreate", "Job", "x"),  # kube-controller-manager's, not the operator's
    _event("ReconcileError", "JobSet", "x"),  # reference reason, but not from the reference component
])
def test_other_events_are_not_reconcile_errors(event):
    from conformance.live import events

    assert events.reconcile_errors([event], external=True) == []


def test_reference_operator_errors_count_in_both_modes_first_seen_first_once():
    from conformance.live import events
    from reconciler.live.facade import EVENT_COMPONENT

    later = _event("ReconcileError", "JobSet", "b", rv="9", when="2026-11-22T08:51:21Z", component=EVENT_COMPONENT)
    first = _event("ReconcileError", "JobSet", "a", rv="12", when="2026-11-22T08:51:20Z", component=EVENT_COMPONENT)
    again = _event("ReconcileError", "JobSet", "a", rv="15", when="2026-11-22T08:51:22Z", component=EVENT_COMPONENT)
    for external in (False, True):
        assert events.reconcile_errors([later, again, first], external=external) == [
            "JobSet default/test-job: a", "JobSet default/test-job: b"]


# ---------------------------------------------------------------- the operator's runtime cache lags

CTR_MISS = ('admission webhook "validator.trainjob.trainer.kubeflow.org" denied the request: spec.RuntimeRef: '
            'Invalid value: {"name":"torch-distributed","apiGroup":"trainer.kubeflow.org","kind":'
            '"ClusterTrainingRuntime"}: ClusterTrainingRuntime.trainer.kubeflow.org "torch-distributed" not found: '
            'specified clusterTrainingRuntime must be created before the TrainJob is created')
TR_MISS = CTR_MISS.replace("ClusterTrainingRuntime.", "TrainingRuntime.")
TRAINJOB = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
            "metadata": {"name": "test-job", "namespace": "default"}}


@pytest.mark.parametrize("message, created, retried", [
    (CTR_MISS, {("ClusterTrainingRuntime", None, "torch-distributed")}, True),
    (CTR_MISS, set(), False),  # the case never created it: the denial rows like missing-cluster-runtime expect
    (CTR_MISS, {("TrainingRuntime", "default", "torch-distributed")}, False),  # other kind: the denial is real
    (TR_MISS, {("TrainingRuntime", "default", "torch-distributed")}, True),
    (TR_MISS, {("TrainingRuntime", "team-a", "torch-distributed")}, False),  # namespaced-runtime-other-namespace
    (CTR_MISS.replace("torch-distributed", "mpi-distributed"), {("ClusterTrainingRuntime", None, "torch-distributed")},
     False),
    # The apiserver's own NotFound spelling is not the cache reader's.
    (CTR_MISS.replace("ClusterTrainingRuntime.trainer", "clustertrainingruntimes.trainer"),
     {("ClusterTrainingRuntime", None, "torch-distributed")}, False),
])
def test_only_a_runtime_the_case_created_is_waited_for(message, created, retried):
    from conformance.live import runtime_cache

    assert runtime_cache.cache_miss(message, TRAINJOB, created) is retried


def test_input_keys_name_the_scope():
    from conformance.live import runtime_cache

    assert runtime_cache.input_key({"kind": "ClusterTrainingRuntime", "metadata": {"name": "r"}}) == (
        "ClusterTrainingRuntime", None, "r")
    assert runtime_cache.input_key({"kind": "TrainingRuntime", "metadata": {"name": "r"}}) == ("TrainingRuntime", "default", "r")


class _Clock:
    def __init__(self):
        self.now, self.sleeps = 0.0, []

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.now += seconds


def _denials(count, message=CTR_MISS):
    from reconciler.live.rest import ApiError

    calls = []

    def attempt():
        calls.append(1)
        if len(calls) <= count:
            raise ApiError(403, {"reason": "Forbidden", "message": message})
        return {"created": len(calls)}
    return attempt, calls


def test_cache_miss_is_retried_with_backoff_until_admitted():
    from conformance.live import runtime_cache

    clock = _Clock()
    attempt, calls = _denials(3)
    assert runtime_cache.create(attempt, lambda exc: True, wait=10, sleep=clock.sleep, clock=lambda: clock.now) == {
        "created": 4}
    assert clock.sleeps == [0.1, 0.2, 0.4]


def test_cache_miss_gives_up_after_the_wait_with_the_last_denial():
    from conformance.live import runtime_cache
    from reconciler.live.rest import ApiError

    clock = _Clock()
    attempt, calls = _denials(1000)
    with pytest.raises(ApiError, match="not found"):
        runtime_cache.create(attempt, lambda exc: True, wait=3, sleep=clock.sleep, clock=lambda: clock.now)
    assert clock.now <= 3 and clock.sleeps[:5] == [0.1, 0.2, 0.4, 0.8, 1.0] and max(clock.sleeps) == 1.0


def test_other_denials_are_final_at_once():
    from conformance.live import runtime_cache
    from reconciler.live.rest import ApiError

    clock = _Clock()
    attempt, calls = _denials(1)
    with pytest.raises(ApiError):
        runtime_cache.create(attempt, lambda exc: False, sleep=clock.sleep, clock=lambda: clock.now)
    assert len(calls) == 1 and clock.sleeps == []


class _ApplyApi:
    """Creates everything; denies the TrainJob `denials` times as Trainer's webhook with a stale cache does."""

    def __init__(self, denials):
        self.denials, self.created = denials, []

    def resource(self, api_version, kind):
        from types import SimpleNamespace
        return SimpleNamespace(namespaced=kind != "ClusterTrainingRuntime")

    def create(self, body, manager):
        from reconciler.live.rest import ApiError
        if body["kind"] == "TrainJob" and self.denials:
            self.denials -= 1
            raise ApiError(403, {"reason": "Forbidden", "message": CTR_MISS})
        self.created.append(body["kind"])
        return body


def _apply_with(operator, denials, monkeypatch):
    from types import SimpleNamespace

    from conformance.live import case, runtime_cache
    from conformance.outcome import Outcome

    monkeypatch.setattr(runtime_cache.time, "sleep", lambda seconds: None)
    api = _ApplyApi(denials)
    session = SimpleNamespace(ensure=lambda profile: api, run_token="t0",
                              settings=SimpleNamespace(operator=operator, quiet=0.3, steady_timeout=30.0))
    manifests = [dict(TRAINJOB), {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime",
                                  "metadata": {"name": "torch-distributed"}}]
    run = case.CaseRun(session, "trainer-v2.3", manifests)
    outcome = Outcome(objects=[])
    run._apply(outcome)
    return run, outcome


def test_apply_retries_the_stale_cache_denial_in_external_mode_only(monkeypatch):
    run, outcome = _apply_with("external", 2, monkeypatch)
    assert run.api.created == ["ClusterTrainingRuntime", "TrainJob"] and outcome.rejections == []
    run, outcome = _apply_with("reference", 2, monkeypatch)
    assert run.api.created == ["ClusterTrainingRuntime"]
    [rejection] = outcome.rejections
    assert rejection.kind == "TrainJob" and rejection.code == 403


@pytest.mark.parametrize("message", [
    # recorded live against JobSet v0.12.0 in group-restart/restart-below-max (the restart recreates the Job)
    'job "js-leader-0" creation failed with error: jobs.batch "js-leader-0" already exists',
    'job "js-leader-0" creation failed with error: Operation cannot be fulfilled on jobs.batch "js-leader-0": '
    'the object has been modified; please apply your changes to the latest version and try again',
])
def test_stale_cache_errors_the_operator_retries_are_not_reconcile_errors(message):
    from conformance.live import events

    joined = f'{message}\njob "js-workers-0" creation failed with error: {LIMIT}'
    assert events.reconcile_errors([_event("JobCreationFailed", "JobSet", joined)], external=True) == [
        f'JobSet default/test-job: job "js-workers-0" creation failed with error: {LIMIT}']


def test_client_go_aggregation_prefix_goes_and_the_same_error_counts_once():
    """Trainer v2.1 (client-go's core/v1 recorder): each reconcile prints another pointer, so after ten
    Events the aggregator writes "(combined from similar events): ..." - recorded live against v2.1.0."""
    from conformance.live import events

    failed = "TrainJob resources reconciliation failed: MPI implementation for {} doesn't supported"
    recorded = [_event("TrainJobResourcesCreationFailed", "TrainJob", failed.format("0x33cf138235d0"), rv="1"),
                _event("TrainJobResourcesCreationFailed", "TrainJob", failed.format("0x33cf13b8b440"), rv="2"),
                _event("TrainJobResourcesCreationFailed", "TrainJob",
                       "(combined from similar events): " + failed.format("0x33cf13eb9d80"), rv="3")]
    assert events.reconcile_errors(recorded, external=True) == [
        "TrainJob default/test-job: MPI implementation for <pointer> doesn't supported"]


def test_parallel_job_creates_are_listed_in_job_order():
    """JobSet creates a replicatedJob's Jobs in parallel and joins the errors as they finish
    (recorded live against v0.12.0: workers-1, workers-2, workers-0); render lists them by index."""
    from conformance.live import events

    err = 'creation failed with error: Job.batch "x" is invalid'
    message = "\n".join(f'job "js-workers-{i}" {err}' for i in (10, 1, 2, 0))
    assert events.reconcile_errors([_event("JobCreationFailed", "JobSet", message)], external=True) == [
        f'JobSet default/test-job: job "js-workers-{i}" {err}' for i in (0, 1, 2, 10)]


def test_a_selector_go_map_order_leaves_out_goes_where_render_has_none():
    """training-operator UpdateJobStatus ranges over the replica specs (a Go map) and returns at the
    Master's success: the Worker's selector is there or not at random; render leaves it out."""
    from conformance.live import gozero

    selector = "training.kubeflow.org/job-name=j,training.kubeflow.org/operator-name=pytorchjob-controller"
    live = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "j", "namespace": "d"},
            "spec": {"pytorchReplicaSpecs": {"Master": {}, "Worker": {}}},
            "status": {"conditions": [{"type": "Succeeded", "status": "True"}],
                       "replicaStatuses": {"Master": {"succeeded": 1, "selector": selector + "-m"},
                                           "Worker": {"succeeded": 2, "selector": selector + "-w"}}}}
    rendered = copy.deepcopy(live)
    del rendered["status"]["replicaStatuses"]["Worker"]["selector"]
    [stripped] = gozero.strip([live], [rendered])
    assert stripped["status"]["replicaStatuses"] == rendered["status"]["replicaStatuses"]
    [kept] = gozero.strip([live], [live])  # render has it: compared
    assert kept["status"]["replicaStatuses"]["Worker"]["selector"] == selector + "-w"
    running = copy.deepcopy(live)
    running["status"]["conditions"] = [{"type": "Running", "status": "True"}]
    [not_finished] = gozero.strip([running], [rendered])  # before the end every type is visited
    assert "selector" in not_finished["status"]["replicaStatuses"]["Worker"]


def test_lws_revision_data_loses_the_null_creation_timestamp_of_apimachinery_v0_33():
    """LWS v0.7.0 (apimachinery v0.33.3, no omitzero) writes its revision's pod templates with
    ``metadata: {creationTimestamp: null}``; render has no such field. A real timestamp, or one render
    writes too, stays."""
    from conformance.live import gozero

    def revision(worker_metadata: dict | None) -> dict:
        worker = {"spec": {"containers": [{"name": "worker", "image": "x"}]}}
        if worker_metadata is not None:
            worker["metadata"] = worker_metadata
        return {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": {"name": "lws-abc-1"},
                "data": {"spec": {"leaderWorkerTemplate": {"size": 2, "workerTemplate": worker}}}, "revision": 1}

    def worker(obj: dict) -> dict:
        return obj["data"]["spec"]["leaderWorkerTemplate"]["workerTemplate"]

    [stripped] = gozero.strip([revision({"creationTimestamp": None})], [revision(None)])
    assert "metadata" not in worker(stripped)
    [stripped] = gozero.strip([revision({"creationTimestamp": None, "labels": {"a": "b"}})], [revision({"labels": {"a": "b"}})])
    assert worker(stripped)["metadata"] == {"labels": {"a": "b"}}
    [stripped] = gozero.strip([revision({"creationTimestamp": "2026-01-01T00:00:00Z"})], [revision(None)])
    assert worker(stripped)["metadata"] == {"creationTimestamp": "2026-01-01T00:00:00Z"}


def test_volcano_failed_create_is_one_error_per_refused_pod_in_pod_name_order():
    from conformance.live import events

    def status_error(pod: str, detail: str) -> str:  # Go's %#v of a *errors.StatusError, shortened
        return (f'failed to create pod {pod}, err: &errors.StatusError{{ErrStatus:v1.Status{{TypeMeta:v1.TypeMeta'
                f'{{Kind:"", APIVersion:""}}, Status:"Failure", Message:"Pod \\"{pod}\\" is invalid: {detail}", '
                f'Reason:"Invalid", Details:(*v1.StatusDetails)(0xc0012ab340), Code:422}}}}')

    required = "spec.containers[0].ports[0].containerPort: Required value"
    # volcano v1.10.0 syncJob: the creates run side by side, so the list is in the order they failed.
    message = f"Error creating pods: [{status_error('j-worker-0', required)} {status_error('j-master-0', required)}]"
    event = _event("FailedCreate", "Job", message)
    assert events.reconcile_errors([event], external=True) == [
        f'Job default/test-job: Pod "j-master-0" is invalid: {required}',
        f'Job default/test-job: Pod "j-worker-0" is invalid: {required}']
    # kube-controller-manager's Job controller words its FailedCreate otherwise: not one of these.
    assert events.reconcile_errors([_event("FailedCreate", "Job", "Error creating: pods is forbidden")],
                                   external=True) == []
