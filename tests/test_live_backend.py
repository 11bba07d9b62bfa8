"""The live backend and the reference operator on a real control plane (``make test-live``).

Tests marked ``live`` start the local control plane once for the module (or use the cluster in
``TC_LIVE_KUBECONFIG``) and run trainer rows live: the normalized live outcome must equal the
render golden text, and the row's own expectations must hold. Rows where the two are known to
differ are strict xfails naming the reason - when the cause is fixed they pass, and the strict
xfail turns that into a failure until the mark goes. The unmarked tests check the backend's pure
parts (error parsing, namespace translation, platform fields, key order) without a cluster.
"""

from __future__ import annotations

import difflib
import hashlib
import time
from pathlib import Path

import pytest

from conformance import expectations
from conformance.golden import golden_text, relative_path
from conformance.live import keyorder, platform, rejections
from conformance.live.isolation import NamespaceMap

ROOT = Path(__file__).resolve().parents[1]
live = pytest.mark.live

# Rows chosen to cover each kind of output: webhook denials, schema/CEL 422s (1.35 wording),
# rendered JobSets with pods (JOB_COMPLETION_INDEX from the completion-index label), and a Job that
# kube-apiserver refuses for a GPU request without an equal limit. A third element would name a
# known render/live difference (strict xfail); there is none at present.
ROWS = [
    ("trainer-v2.3", "admission/missing-cluster-runtime", None),
    ("trainer-v2.3", "admission/ancestor-two-errors-one-denial", None),
    ("trainer-v2.3", "admission/mpi-reserved-env-sorted", None),
    ("trainer-v2.3", "admission/runtimeref-name-empty", None),
    ("trainer-v2.3", "admission/duplicate-replicated-job-names", None),
    ("trainer-v2.3", "admission/suspend-true", None),
    ("trainer-v2.3", "admission/torch-and-mpi-cluster-runtime", None),
    ("trainer-v2.3", "admission/runtimeref-missing-entirely", None),
    ("trainer-v2.3", "mpi-render/core-vector-openmpi-values-from-trainjob", None),
    ("trainer-v2.3", "torch-nproc/res-requests-cpu-4", None),
    ("trainer-v2.0", "admission/missing-cluster-runtime", None),
    ("trainer-v2.0", "mpi-topology/both-numnodes-2", None),
    ("trainer-v2.0", "mpi-topology/launcher-only-numnodes-2", None),
    ("trainer-v2.3", "admission/runtimeref-name-missing-blocks-cel", None),
    ("trainer-v2.3", "admission/managed-by-other-controller", None),
    ("trainer-v2.3", "torch-nproc/lim-requests-gpu-0-limits-gpu-2", None),
]


# ---------------------------------------------------------------------- without a cluster

def test_webhook_aggregate_splits_at_top_level_only():
    message = ('admission webhook "validator.trainjob.trainer.kubeflow.org" denied the request: '
               '[spec.trainer.env: Invalid value: [{"name":"a, b"}]: must not have reserved envs, '
               'spec.trainer.numNodes: Invalid value: 2: must have 1 when ...]')
    errors = rejections.field_errors({"message": message})
    assert errors == [
        {"type": "Invalid value", "field": "spec.trainer.env", "value": [{"name": "a, b"}],
         "detail": "must not have reserved envs"},
        {"type": "Invalid value", "field": "spec.trainer.numNodes", "value": 2, "detail": "must have 1 when ..."},
    ]


def test_details_with_commas_and_go_printed_values():
    message = ('admission webhook "v" denied the request: [spec.trainer.numProcPerNode: Invalid value: '
               'intstr.IntOrString{Type:1, IntVal:0, StrVal:"npu"}: must have an int value or [auto cpu gpu], '
               'spec.trainer.env: Invalid value: [{"name":"PET_NNODES","value":"2"}]: must not have reserved envs, '
               'invalid envs configured: [PET_NNODES]]')
    assert rejections.field_errors({"message": message}) == [
        {"type": "Invalid value", "field": "spec.trainer.numProcPerNode", "value": "npu",
         "detail": "must have an int value or [auto cpu gpu]"},
        {"type": "Invalid value", "field": "spec.trainer.env", "value": [{"name": "PET_NNODES", "value": "2"}],
         "detail": "must not have reserved envs, invalid envs configured: [PET_NNODES]"},
    ]


def test_a_go_set_listed_in_random_order_is_read_in_render_order():
    """training-operator v1.9 lists the managedBy values with sets.UnsortedList: random per request."""
    prefix = 'admission webhook "validator.pytorchjob.training-operator.kubeflow.org" denied the request: '
    render_order = 'supported values: "kueue.x-k8s.io/multikueue", "kubeflow.org/training-operator"'
    other_order = 'supported values: "kubeflow.org/training-operator", "kueue.x-k8s.io/multikueue"'
    message = prefix + 'spec.runPolicy.managedBy: Unsupported value: "x": ' + other_order
    fixed, errors = rejections.in_render_order("kubeflow.org", "PyTorchJob", message,
                                               rejections.field_errors({"message": message}))
    assert fixed == message.replace(other_order, render_order)
    assert errors == [{"type": "Unsupported value", "field": "spec.runPolicy.managedBy", "value": "x",
                       "detail": render_order}]
    # Another set of values (a real difference), or another field or kind: as it came.
    changed = message.replace('"kueue.x-k8s.io/multikueue"', '"kueue.x-k8s.io/other"')
    assert rejections.in_render_order("kubeflow.org", "PyTorchJob", changed,
                                      rejections.field_errors({"message": changed}))[0] == changed
    assert rejections.in_render_order("kubeflow.org", "MPIJob", message,
                                      rejections.field_errors({"message": message}))[0] == message


def test_plain_webhook_error_has_no_field():
    errors = rejections.field_errors({"message": 'admission webhook "x" denied the request: unsupported runtime: Foo.bar'})
    assert errors == [{"type": "", "field": "", "detail": "unsupported runtime: Foo.bar"}]


def test_status_causes_become_field_errors():
    status = {"message": "ignored", "details": {"causes": [
        {"reason": "FieldValueRequired", "message": "Required value", "field": "spec.runtimeRef"},
        {"reason": "FieldValueNotSupported", "field": "spec.x",
         "message": 'Unsupported value: "MPICH": supported values: "OpenMPI", ""'},
        {"reason": "FieldValueInvalid", "field": "spec.mlPolicy", "message": "Invalid value: Only one of the policy"},
        {"reason": "FieldValueTooLong", "field": "spec.n", "message": "Too long: may not be more than 253 bytes"},
    ]}}
    assert rejections.field_errors(status) == [
        {"type": "Required value", "field": "spec.runtimeRef", "detail": ""},
        {"type": "Unsupported value", "field": "spec.x", "value": "MPICH", "detail": 'supported values: "OpenMPI", ""'},
        {"type": "Invalid value", "field": "spec.mlPolicy", "detail": "Invalid value: Only one of the policy"
         .removeprefix("Invalid value: ")},
        {"type": "Too long", "field": "spec.n", "detail": "may not be more than 253 bytes"},
    ]


def test_namespaces_and_job_keys_translate_back():
    names = NamespaceMap("t0")
    live_ns = names.live("default")
    other = names.live("default-b")
    key = hashlib.sha1(f"{live_ns}/tj-node-0".encode()).hexdigest()
    obj = {"metadata": {"namespace": live_ns, "labels": {"jobset.sigs.k8s.io/job-key": key}},
           "spec": {"note": f"{other} and {live_ns}"}}
    back = names.back(obj, [(live_ns, "tj-node-0")])
    assert back["metadata"] == {"namespace": "default", "labels": {
        "jobset.sigs.k8s.io/job-key": hashlib.sha1(b"default/tj-node-0").hexdigest()}}
    assert back["spec"]["note"] == "default-b and default"


def test_platform_defaults_go_unless_the_template_sets_them():
    jobset = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "tj", "namespace": "d"},
              "spec": {"replicatedJobs": [{"name": "node", "template": {"spec": {"template": {"spec": {
                  "dnsPolicy": "ClusterFirst", "containers": [{"name": "node", "image": "img:1",
                                                                 "imagePullPolicy": "IfNotPresent"}]}}}}}]}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "tj-node-0-0-abc", "namespace": "d", "labels": {
        "jobset.sigs.k8s.io/jobset-name": "tj", "jobset.sigs.k8s.io/replicatedjob-name": "node"}},
           "spec": {"dnsPolicy": "ClusterFirst", "schedulerName": "default-scheduler", "nodeName": "kwok-node-0",
                    "serviceAccountName": "default", "priority": 0, "enableServiceLinks": True,
                    "volumes": [{"name": "kube-api-access-x1", "projected": {"sources": []}}],
                    "containers": [{"name": "node", "image": "img:1", "imagePullPolicy": "IfNotPresent",
                                    "terminationMessagePath": "/dev/termination-log", "resources": {},
                                    "volumeMounts": [{"name": "kube-api-access-x1", "mountPath": "/var/run"}]}]}}
    pod["spec"]["containers"][0]["resources"] = {"limits": {"nvidia.com/gpu": "2", "cpu": "2500m"},
                                                 "requests": {"nvidia.com/gpu": "2", "cpu": "2500m"}}
    jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]["resources"] = {
        "limits": {"nvidia.com/gpu": "2", "cpu": "2.5"}}
    stripped = platform.strip([jobset, pod], [])
    assert stripped[1]["spec"] == {"dnsPolicy": "ClusterFirst", "containers": [
        {"name": "node", "image": "img:1", "imagePullPolicy": "IfNotPresent",
         "resources": {"limits": {"nvidia.com/gpu": "2", "cpu": "2.5"}}}]}


def test_probe_defaults_go_unless_the_template_sets_them():
    # SetDefaults_Probe (k8s v1.35): timeoutSeconds 1, periodSeconds 10, successThreshold 1, failureThreshold 3.
    template = {"name": "w", "image": "img:1", "readinessProbe": {"tcpSocket": {"port": 80}, "periodSeconds": 10}}
    live_pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "d"},
                "spec": {"containers": [{"name": "w", "image": "img:1", "readinessProbe": {
                    "tcpSocket": {"port": 80}, "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1,
                    "failureThreshold": 5}}]}}
    rendered = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "d"},
                "spec": {"containers": [template]}}
    [stripped] = platform.strip([live_pod], [], [rendered])
    # periodSeconds is the template's own; failureThreshold 5 is no default: both stay.
    assert stripped["spec"]["containers"][0]["readinessProbe"] == {"tcpSocket": {"port": 80}, "periodSeconds": 10,
                                                                   "failureThreshold": 5}


def test_platform_defaults_render_writes_itself_are_kept():
    """A PyTorchJob worker's init container is the operator's, not the template's: render writes its
    imagePullPolicy IfNotPresent (the image has a tag, so the apiserver would default the same); a
    default render does not write goes."""
    init = {"name": "init-pytorch", "image": "alpine:3.10", "imagePullPolicy": "IfNotPresent",
            "terminationMessagePolicy": "File"}
    live_pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pt-worker-0", "namespace": "d"},
                "spec": {"initContainers": [dict(init)], "containers": [{"name": "pytorch", "image": "img:1",
                                                                        "imagePullPolicy": "IfNotPresent"}]}}
    rendered = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pt-worker-0", "namespace": "d"},
                "spec": {"initContainers": [{"name": "init-pytorch", "image": "alpine:3.10",
                                             "imagePullPolicy": "IfNotPresent"}],
                         "containers": [{"name": "pytorch", "image": "img:1"}]}}
    [stripped] = platform.strip([live_pod], [], [rendered])
    assert stripped["spec"] == {"initContainers": [{"name": "init-pytorch", "image": "alpine:3.10",
                                                    "imagePullPolicy": "IfNotPresent"}],
                                "containers": [{"name": "pytorch", "image": "img:1"}]}
    [without_render] = platform.strip([live_pod], [])
    assert "imagePullPolicy" not in without_render["spec"]["initContainers"][0]


def test_key_order_follows_render_and_changes_nothing_else():
    live_obj = {"kind": "Job", "apiVersion": "batch/v1", "metadata": {"name": "a", "labels": {"b": "1", "a": "2"}},
                "spec": {"x": 1, "extra": True}}
    rendered = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"labels": {"a": "2", "b": "1"}, "name": "a"},
                "spec": {"x": 1}}
    ordered = keyorder.reorder(live_obj, rendered)
    assert ordered == live_obj
    assert list(ordered) == ["apiVersion", "kind", "metadata", "spec"]
    assert list(ordered["metadata"]) == ["labels", "name"] and list(ordered["metadata"]["labels"]) == ["a", "b"]
    assert list(ordered["spec"]) == ["x", "extra"]


# ---------------------------------------------------------------------- on a cluster

def _params():
    for profile, row, known in ROWS:
        marks = [live]
        if known:
            marks.append(pytest.mark.xfail(reason=known, strict=True))
        yield pytest.param(profile, row, marks=marks, id=f"{profile}:{row}")


@pytest.mark.parametrize(("profile", "row"), list(_params()))
def test_row_live_equals_render_golden(live_session, table, profile, row, record_property):
    from conformance.backends import live as backend

    case = table[row]
    started = time.monotonic()
    outcome = backend.run(case.inputs, profile, label=f"{profile}:{row}")
    record_property("live_seconds", round(time.monotonic() - started, 3))
    failures = expectations.check(case.expect, outcome)
    text = golden_text(case.full_id, case.title, profile, outcome)
    golden = (ROOT / "snapshots" / relative_path(profile, case.table, case.id)).read_text()
    diff = "\n".join(difflib.unified_diff(golden.splitlines(), text.splitlines(), "render golden", "live", lineterm=""))
    assert not failures and text == golden, "\n".join(failures) + "\n" + diff


@live
def test_operator_runs_only_custom_controllers(live_session):
    live_session.ensure("trainer-v2.3")
    ready = live_session.operator.ready
    assert ready["controllers"] == ["TrainJobController", "RuntimeInUseController", "JobSetController"]
    assert sorted(ready["replacedByKubernetes"]) == ["FakeKubelet", "JobController", "StatefulSetController"]
    assert sorted(ready["notInstalled"]) == ["JobController", "LeaderWorkerSetController", "MPIJobController",
                                             "PyTorchJobController"]
    assert "v1 Pod" not in ready["informed"] and {"batch/v1 Job", "v1 ConfigMap"} <= set(ready["informed"])


@live
def test_pods_come_from_kubernetes_not_from_render(live_session, table):
    """A rendered row's Pods exist live, owned by Jobs, started by kwok (not by our fake kubelet)."""
    from conformance.backends import live as backend

    outcome = backend.run(table["admission/namespaced-runtime-found"].inputs, "trainer-v2.3", label="pods")
    pods = [o for o in outcome.objects if o["kind"] == "Pod"]
    assert pods, "no pods were created"
    for pod in pods:
        assert pod["metadata"]["ownerReferences"][0]["kind"] == "Job"
        assert pod["status"]["phase"] == "Running"
        assert any(c["type"] == "PodScheduled" for c in pod["status"]["conditions"])  # kube-scheduler did it


@live
def test_profile_switch_replaces_the_crds(live_session):
    from reconciler.live import crds

    live_session.ensure("trainer-v2.0")
    assert set(live_session.operator.ready["crds"].values()) <= {"kept", "created", "replaced"}
    live_session.ensure("trainer-v2.3")
    report = live_session.operator.ready["crds"]
    assert report["trainjobs.trainer.kubeflow.org"] == "replaced", report
    assert report["jobsets.jobset.x-k8s.io"] == "replaced", report  # JobSet v0.8.2's CRD -> v0.12.0's
    live_session.ensure("jobset-v0.12")  # the same JobSet CRD file as trainer-v2.3
    assert live_session.operator.ready["crds"]["jobsets.jobset.x-k8s.io"] == "kept", live_session.operator.ready
    live_session.ensure("trainer-v2.3")
    served = live_session.api.must_resource("apiextensions.k8s.io/v1", "CustomResourceDefinition")
    crd = live_session.api.get(served, None, "trainjobs.trainer.kubeflow.org")
    assert crd["metadata"]["labels"][crds.LABEL] == crds.LABEL_VALUE


def test_young_parents_wait_for_their_children():
    import datetime as dt

    from conformance.live import steady

    now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    old = "2020-01-01T00:00:00Z"

    def jobset(created, **spec):
        return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
                "metadata": {"name": "js", "namespace": "n", "creationTimestamp": created},
                "spec": {"replicatedJobs": [{"name": "w", "replicas": 2}], **spec}}

    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "js-w-0", "namespace": "n"}}
    assert steady._children_missing([jobset(now), job]) == ["JobSet n/js: Job js-w-1 not created yet"]
    assert steady._children_missing([jobset(old), job]) == []  # past the grace: absence is the answer
    assert steady._children_missing([jobset(now, suspend=True)]) == []
    trainjob = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
                "metadata": {"name": "tj", "namespace": "n", "creationTimestamp": now}, "spec": {}}
    assert steady._children_missing([trainjob]) == ["TrainJob n/tj: no JobSet yet"]
    suspended = {**trainjob, "spec": {"suspend": True}}  # still gets its (suspended) JobSet
    assert steady._children_missing([suspended]) == ["TrainJob n/tj: no JobSet yet"]


def _jobset_status(*names, api_version="jobset.x-k8s.io/v1alpha2"):
    return {"apiVersion": api_version, "kind": "JobSet", "metadata": {"name": "js", "namespace": "d"},
            "status": {"restarts": 0, "replicatedJobsStatus": [{"name": n, "ready": i} for i, n in enumerate(names)]}}


def test_replicated_jobs_status_follows_render_order_by_name():
    """JobSet builds status.replicatedJobsStatus from a Go map: its order means nothing."""
    live_obj = _jobset_status("workers", "extra", "leader")
    [ordered] = keyorder.reorder_like([live_obj], [_jobset_status("leader", "workers")])
    assert [s["name"] for s in ordered["status"]["replicatedJobsStatus"]] == ["leader", "workers", "extra"]
    assert {s["name"]: s["ready"] for s in ordered["status"]["replicatedJobsStatus"]} == {
        "workers": 0, "extra": 1, "leader": 2}  # elements unchanged, render's missing one last
    assert [s["name"] for s in live_obj["status"]["replicatedJobsStatus"]] == ["workers", "extra", "leader"]


def _volcano_pod(*env_names, labelled=True):
    labels = {"volcano.sh/job-name": "pt"} if labelled else {}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pt-worker-0", "namespace": "d", "labels": labels},
            "spec": {"containers": [{"name": "worker", "env": [{"name": n, "value": n.lower()} for n in env_names]}]}}


def test_volcano_plugin_env_runs_follow_render_order_each_run_kept():
    """The job controller runs a Volcano Job's plugins over a Go map: svc's and pytorch's env come
    in either order from pod to pod; each plugin's own entries keep theirs."""
    live_obj = _volcano_pod("USER", "VC_MASTER_HOSTS", "VC_MASTER_NUM", "MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE",
                            "RANK", "VK_TASK_INDEX", "VC_TASK_INDEX")
    rendered = _volcano_pod("USER", "MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK", "VC_TASK_INDEX", "VK_TASK_INDEX",
                            "VC_MASTER_HOSTS", "VC_MASTER_NUM")
    [ordered] = keyorder.reorder_like([live_obj], [rendered])
    assert [e["name"] for e in ordered["spec"]["containers"][0]["env"]] == [
        "USER", "MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK", "VK_TASK_INDEX", "VC_TASK_INDEX",
        "VC_MASTER_HOSTS", "VC_MASTER_NUM"]  # runs moved, VK_/VC_TASK_INDEX kept in their live order
    assert [e["name"] for e in live_obj["spec"]["containers"][0]["env"]][1] == "VC_MASTER_HOSTS"  # input unchanged
    # A run render does not have stays, last; a pod of no Volcano Job keeps its order.
    [extra] = keyorder.reorder_like([_volcano_pod("VC_A_NUM", "MASTER_ADDR")], [_volcano_pod("MASTER_ADDR")])
    assert [e["name"] for e in extra["spec"]["containers"][0]["env"]] == ["MASTER_ADDR", "VC_A_NUM"]
    [plain] = keyorder.reorder_like([_volcano_pod("VC_A_NUM", "MASTER_ADDR", labelled=False)],
                                    [_volcano_pod("MASTER_ADDR", "VC_A_NUM", labelled=False)])
    assert [e["name"] for e in plain["spec"]["containers"][0]["env"]] == ["VC_A_NUM", "MASTER_ADDR"]


def test_volcano_job_conditions_of_one_phase_in_a_row_collapse():
    """v1.10.0 appends a condition on every status write; the runs depend on event batching."""
    def job(*phases, api_version="batch.volcano.sh/v1alpha1"):
        return {"apiVersion": api_version, "kind": "Job", "metadata": {"name": "pt", "namespace": "d"},
                "status": {"conditions": [{"status": p, "lastTransitionTime": f"t{i}"} for i, p in enumerate(phases)]}}

    [collapsed] = keyorder.reorder_like([job("Pending", "Pending", "Running", "Running", "Restarting", "Pending")], [])
    assert collapsed["status"]["conditions"] == [{"status": "Pending", "lastTransitionTime": "t1"},
                                                 {"status": "Running", "lastTransitionTime": "t3"},
                                                 {"status": "Restarting", "lastTransitionTime": "t4"},
                                                 {"status": "Pending", "lastTransitionTime": "t5"}]
    [batch_job] = keyorder.reorder_like([job("Pending", "Pending", api_version="batch/v1")], [])
    assert len(batch_job["status"]["conditions"]) == 2  # a Kubernetes Job's conditions are left alone


def test_other_lists_keep_their_live_order():
    live_obj = _jobset_status("workers", "leader")
    live_obj["spec"] = {"replicatedJobs": [{"name": "workers"}, {"name": "leader"}]}
    rendered = _jobset_status("leader", "workers")
    rendered["spec"] = {"replicatedJobs": [{"name": "leader"}, {"name": "workers"}]}
    [ordered] = keyorder.reorder_like([live_obj], [rendered])
    assert [r["name"] for r in ordered["spec"]["replicatedJobs"]] == ["workers", "leader"]  # spec order is meaningful
    other_group = _jobset_status("workers", "leader", api_version="example.com/v1")
    [kept] = keyorder.reorder_like([other_group], [_jobset_status("leader", "workers", api_version="example.com/v1")])
    assert [s["name"] for s in kept["status"]["replicatedJobsStatus"]] == ["workers", "leader"]


def test_lws_rolling_step_left_follows_rolling_update_partition():
    from conformance.live import steady

    ready_old, down, done = (True, False), (False, False), (True, True)
    # Group 0 down, group 1 ready on the old revision: the unavailable group holds the partition at 2.
    assert not steady._rolling_step_left({0: down, 1: ready_old}, 2, 2, 2, 0, 1)
    # Groups without a worker StatefulSet are missing from the states: every group down still moves 2 -> 1 ...
    assert steady._rolling_step_left({}, 2, 2, 2, 0, 1)
    # ... and no lower than rollingStepPartition.
    assert not steady._rolling_step_left({}, 1, 2, 2, 0, 1)
    # replicas 4, maxUnavailable 2, group 0 down: 4 -> 3, then 3 -> 2 once group 3 is done, then 2 -> 0.
    assert steady._rolling_step_left({0: down, 1: ready_old, 2: ready_old, 3: ready_old}, 4, 4, 4, 0, 2)
    assert not steady._rolling_step_left({0: down, 1: ready_old, 2: ready_old, 3: ready_old}, 3, 4, 4, 0, 2)
    assert steady._rolling_step_left({0: down, 1: ready_old, 2: ready_old, 3: done}, 3, 4, 4, 0, 2)
    assert steady._rolling_step_left({0: down, 1: ready_old, 2: done, 3: done}, 2, 4, 4, 0, 2)
    # The partition floor, and surge groups or a percentage: the coarser test (groups above all done).
    assert not steady._rolling_step_left({0: done, 1: done}, 1, 2, 2, 1, 1)
    assert steady._rolling_step_left({0: ready_old, 1: done, 2: done}, 1, 3, 2, 0, 1)
    assert not steady._rolling_step_left({0: ready_old, 1: down}, 1, 2, 2, 0, "50%")
