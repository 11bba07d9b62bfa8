"""Dry-run requests that show each upstream webhook is called by the apiserver and answers.

A manager's ``/readyz`` only says its webhook server listens. What a conformance run needs is
the whole path: the apiserver has picked up the webhook configuration, reaches the URL, trusts
the CA, and the manager serves that path. Success of a dry-run create is not enough evidence on
its own - a configuration the apiserver has not loaded yet is simply not called - so every probe
looks for something only the webhook produces:

* a denial whose message names the webhook (``admission webhook "<name>" denied the request``),
  for an object that is valid for the CRD schema and invalid only for the webhook's own checks;
* or a field only the mutating webhook sets, in the object the dry run returns.

Webhook names are unique only within a configuration (JobSet and LWS both have ``mpod.kb.io`` and
``vpod.kb.io``), so a probe belongs to a project and is chosen for that project's webhooks.

Dry runs leave nothing behind (every webhook here declares ``sideEffects: None``); the one real
object, the ClusterTrainingRuntime the Trainer defaulter probe needs, is deleted again at once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Callable

PROBE_NAME = "tc-webhook-probe"
PROBE_NAMESPACE = "default"
TRAINER_ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"
JOBSET_NAME_KEY = "jobset.sigs.k8s.io/jobset-name"  # the pod webhooks' objectSelector label
JOBSET_JOB_KEY = "jobset.sigs.k8s.io/job-key"
JOBSET_EXCLUSIVE_KEY = "alpha.jobset.sigs.k8s.io/exclusive-topology"
PROBE_TOPOLOGY_KEY = "kubernetes.io/hostname"


@dataclass(frozen=True)
class Probe:
    project: str  # conformance.upstream.projects name whose webhooks these are
    webhooks: tuple[str, ...]  # the webhook names this probe shows to be working
    description: str
    run: Callable[[object], str | None]  # ApiClient -> None when shown, else what is still missing


def api_message(exc) -> str:
    """The ``message`` of the Status in an ``ApiException`` body."""
    try:
        return json.loads(exc.body).get("message", "")
    except (TypeError, ValueError, AttributeError):
        return str(exc.body)


def _denied_by(exc, webhook: str) -> str | None:
    """None if ``webhook`` denied the request; otherwise what happened instead. (The status code
    is the webhook's choice: Trainer answers 403, JobSet 422 with an Invalid status.)"""
    message = api_message(exc)
    if f'admission webhook "{webhook}" denied the request' in message:
        return None
    return f"HTTP {exc.status}: {message}"


def _dry_run_denied(api, plural: str, body: dict, webhook: str, namespaced: bool = True) -> str | None:
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    custom = client.CustomObjectsApi(api)
    group, version = body["apiVersion"].split("/")
    try:
        if namespaced:
            custom.create_namespaced_custom_object(group, version, PROBE_NAMESPACE, plural, body, dry_run="All")
        else:
            custom.create_cluster_custom_object(group, version, plural, body, dry_run="All")
    except ApiException as exc:
        return _denied_by(exc, webhook)
    return f"dry-run create of {body['kind']} was admitted (webhook {webhook} not called yet)"


def _pod_template(container: str) -> dict:
    return {"spec": {"containers": [{"name": container, "image": "tc-probe"}]}}


def _jobset(name: str, **spec) -> dict:
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": name},
        "spec": {"replicatedJobs": [{"name": "probe", "template": {"spec": {"template": _pod_template("probe")}}}],
                 **spec},
    }


def jobset_validator(api) -> str | None:
    # Only the webhook checks that successPolicy targets name existing replicatedJobs.
    body = _jobset(PROBE_NAME, successPolicy={"operator": "All", "targetReplicatedJobs": ["tc-missing"]})
    return _dry_run_denied(api, "jobsets", body, "vjobset.kb.io")


def jobset_defaulter(api) -> str | None:
    from kubernetes import client

    created = client.CustomObjectsApi(api).create_namespaced_custom_object(
        "jobset.x-k8s.io", "v1alpha2", PROBE_NAMESPACE, "jobsets", _jobset(PROBE_NAME), dry_run="All")
    # The pod restartPolicy default (OnFailure) comes from mjobset.kb.io, not from the CRD.
    policy = created["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"].get("restartPolicy")
    return None if policy == "OnFailure" else f"JobSet admitted without webhook defaults (restartPolicy {policy!r})"


def jobset_pod_webhooks(api) -> str | None:
    """A leader Pod (completion index 0) of a JobSet using exclusive placement: in every JobSet
    release mpod.kb.io gives it the exclusive pod (anti-)affinity terms on the topology key.
    vpod.kb.io lets leaders through without a visible change, but it is called for the same
    object and a failing call would have failed the request."""
    from kubernetes import client

    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": PROBE_NAME,
                     "labels": {JOBSET_NAME_KEY: PROBE_NAME, JOBSET_JOB_KEY: PROBE_NAME},
                     "annotations": {JOBSET_NAME_KEY: PROBE_NAME, JOBSET_EXCLUSIVE_KEY: PROBE_TOPOLOGY_KEY,
                                     "batch.kubernetes.io/job-completion-index": "0"}},
        **_pod_template("probe"),
    }
    created = client.CoreV1Api(api).create_namespaced_pod(PROBE_NAMESPACE, pod, dry_run="All")
    affinity = created.spec.affinity
    terms = (affinity.pod_anti_affinity.required_during_scheduling_ignored_during_execution or []) \
        if affinity and affinity.pod_anti_affinity else []
    if any(term.topology_key == PROBE_TOPOLOGY_KEY for term in terms):
        return None
    return "leader Pod admitted without the exclusive-placement anti-affinity (mpod.kb.io not called yet)"


def trainjob_validator(api) -> str | None:
    body = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": PROBE_NAME},
        "spec": {"runtimeRef": {"name": "tc-webhook-probe-missing"}},
    }
    return _dry_run_denied(api, "trainjobs", body, "validator.trainjob.trainer.kubeflow.org")


def _runtime(kind: str, node_container: str = "not-node") -> dict:
    # The trainer-ancestor replicatedJob must have a container named "node"; by default this
    # one has not, which only the runtime webhooks check.
    job = {"name": "node", "replicas": 1,
           "template": {"metadata": {"labels": {TRAINER_ANCESTOR_LABEL: "trainer"}},
                        "spec": {"template": _pod_template(node_container)}}}
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": kind, "metadata": {"name": PROBE_NAME},
            "spec": {"template": {"spec": {"replicatedJobs": [job]}}}}


def trainjob_defaulter(api) -> str | None:
    """v2.2+: ``defaulter.trainjob`` stamps ``runtimePatches[].time``. A TrainJob is only
    admitted when its runtime exists, so a valid ClusterTrainingRuntime is created for the dry
    run and deleted again (no TrainJob refers to it, so the controller adds no finalizer)."""
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    custom = client.CustomObjectsApi(api)
    group, version = "trainer.kubeflow.org", "v1alpha1"
    try:
        custom.create_cluster_custom_object(group, version, "clustertrainingruntimes",
                                            _runtime("ClusterTrainingRuntime", node_container="node"))
    except ApiException as exc:
        if exc.status != 409:
            return f"HTTP {exc.status}: {api_message(exc)}"
    try:
        body = {"apiVersion": f"{group}/{version}", "kind": "TrainJob", "metadata": {"name": PROBE_NAME},
                "spec": {"runtimeRef": {"name": PROBE_NAME},
                         "runtimePatches": [{"manager": "training-conformance.io/webhook-probe"}]}}
        try:
            created = custom.create_namespaced_custom_object(group, version, PROBE_NAMESPACE, "trainjobs", body,
                                                             dry_run="All")
        except ApiException as exc:
            return f"HTTP {exc.status}: {api_message(exc)}"
        stamped = created["spec"]["runtimePatches"][0].get("time")
        return None if stamped else "TrainJob admitted without runtimePatches[0].time (defaulter not called yet)"
    finally:
        try:
            custom.delete_cluster_custom_object(group, version, "clustertrainingruntimes", PROBE_NAME)
        except ApiException as exc:
            if exc.status != 404:
                raise


def clustertrainingruntime_validator(api) -> str | None:
    return _dry_run_denied(api, "clustertrainingruntimes", _runtime("ClusterTrainingRuntime"),
                           "validator.clustertrainingruntime.trainer.kubeflow.org", namespaced=False)


def trainingruntime_validator(api) -> str | None:
    return _dry_run_denied(api, "trainingruntimes", _runtime("TrainingRuntime"),
                           "validator.trainingruntime.trainer.kubeflow.org")


def pytorchjob_validator(api) -> str | None:
    """A PyTorchJob whose Master has 2 replicas: valid for the CRD, refused by the Training
    Operator's webhook ("must be 1") in v1.8 and v1.9 alike."""
    container = {"name": "pytorch", "image": "tc-probe"}
    body = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": PROBE_NAME},
            "spec": {"pytorchReplicaSpecs": {"Master": {"replicas": 2, "template": {"spec": {"containers": [container]}}}}}}
    return _dry_run_denied(api, "pytorchjobs", body, "validator.pytorchjob.training-operator.kubeflow.org")


LWS_NAME_KEY = "leaderworkerset.sigs.k8s.io/name"  # the pod webhooks' objectSelector label


def _lws(name: str, annotations: dict | None = None) -> dict:
    return {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
            "metadata": {"name": name, **({"annotations": annotations} if annotations else {})},
            "spec": {"leaderWorkerTemplate": {"size": 1, "workerTemplate": _pod_template("probe")}}}


def lws_validator(api) -> str | None:
    """Only the webhook refuses a subgroup-exclusive-topology annotation without a subGroupPolicy."""
    body = _lws(PROBE_NAME, {"leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology": PROBE_TOPOLOGY_KEY})
    return _dry_run_denied(api, "leaderworkersets", body, "vleaderworkerset.kb.io")


def lws_defaulter(api) -> str | None:
    from kubernetes import client

    created = client.CustomObjectsApi(api).create_namespaced_custom_object(
        "leaderworkerset.x-k8s.io", "v1", PROBE_NAMESPACE, "leaderworkersets", _lws(PROBE_NAME), dry_run="All")
    # The CRD has no default for networkConfig; the defaulter sets subdomainPolicy Shared.
    policy = (created["spec"].get("networkConfig") or {}).get("subdomainPolicy")
    return None if policy == "Shared" else "LeaderWorkerSet admitted without networkConfig (defaulter not called yet)"


def lws_pod_webhooks(api) -> str | None:
    """A leader Pod (worker-index 0) of a LeaderWorkerSet: mpod.kb.io labels it with the group index
    parsed from its name and injects LWS_GROUP_SIZE (the size annotation). vpod.kb.io admits every
    Pod; a failing call would have failed the request."""
    from kubernetes import client

    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": f"{PROBE_NAME}-0",
                        "labels": {LWS_NAME_KEY: PROBE_NAME, "leaderworkerset.sigs.k8s.io/worker-index": "0"},
                        "annotations": {"leaderworkerset.sigs.k8s.io/size": "1"}},
           **_pod_template("probe")}
    created = client.CoreV1Api(api).create_namespaced_pod(PROBE_NAMESPACE, pod, dry_run="All")
    env = {e.name: e.value for e in created.spec.containers[0].env or []}
    if created.metadata.labels.get("leaderworkerset.sigs.k8s.io/group-index") == "0" and env.get("LWS_GROUP_SIZE") == "1":
        return None
    return "leader Pod admitted without its group-index label and LWS env (mpod.kb.io not called yet)"


def _volcano_job(name: str, tasks: list[dict], **spec) -> dict:
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": name},
            "spec": {"tasks": tasks, **spec}}


def _volcano_task(name: str) -> dict:
    return {"name": name, "replicas": 1, "template": _pod_template("probe")}


def volcano_job_validator(api) -> str | None:
    """maxRetry -1: the v1.10.0 CRD takes any int32 (and mutatejob.volcano.sh defaults only 0); only
    validatejob.volcano.sh refuses it ("'maxRetry' cannot be less than zero.")."""
    body = _volcano_job(PROBE_NAME, [_volcano_task("probe")], maxRetry=-1)
    return _dry_run_denied(api, "jobs", body, "validatejob.volcano.sh")


def volcano_job_defaulter(api) -> str | None:
    """A Job without maxRetry, queue or minAvailable: mutatejob.volcano.sh gives it maxRetry 3 (the
    v1.10.0 CRD has no default), queue ``default`` and minAvailable 1. Being admitted at all also
    shows validatejob.volcano.sh found the queue ``default`` Open - created by vc-scheduler, opened
    by vc-controller-manager's queue controller - which every Job of the table needs."""
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    try:
        created = client.CustomObjectsApi(api).create_namespaced_custom_object(
            "batch.volcano.sh", "v1alpha1", PROBE_NAMESPACE, "jobs",
            _volcano_job(PROBE_NAME, [_volcano_task("probe")]), dry_run="All")
    except ApiException as exc:
        return f"HTTP {exc.status}: {api_message(exc)}"
    spec = created["spec"]
    if (spec.get("maxRetry"), spec.get("queue")) == (3, "default"):
        return None
    return f"Job admitted without the webhook's defaults (maxRetry {spec.get('maxRetry')!r}, queue {spec.get('queue')!r})"


def volcano_podgroup_defaulter(api) -> str | None:
    """A PodGroup without a queue: mutatepodgroup.volcano.sh gives it ``default`` (the CRD has no default)."""
    from kubernetes import client

    body = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": {"name": PROBE_NAME},
            "spec": {"minMember": 1}}
    created = client.CustomObjectsApi(api).create_namespaced_custom_object(
        "scheduling.volcano.sh", "v1beta1", PROBE_NAMESPACE, "podgroups", body, dry_run="All")
    queue = created["spec"].get("queue")
    return None if queue == "default" else f"PodGroup admitted without a queue (mutatepodgroup.volcano.sh not called yet)"


def _queue(annotations: dict | None = None) -> dict:
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
            "metadata": {"name": PROBE_NAME, **({"annotations": annotations} if annotations else {})}, "spec": {}}


def volcano_queue_validator(api) -> str | None:
    """A hierarchy of two levels with one weight: validatequeue.volcano.sh wants as many weights as levels."""
    body = _queue({"volcano.sh/hierarchy": "root/tc-probe", "volcano.sh/hierarchy-weights": "1"})
    return _dry_run_denied(api, "queues", body, "validatequeue.volcano.sh", namespaced=False)


def volcano_queue_defaulter(api) -> str | None:
    """A Queue without weight or reclaimable: mutatequeue.volcano.sh sets weight 1 and reclaimable true."""
    from kubernetes import client

    created = client.CustomObjectsApi(api).create_cluster_custom_object(
        "scheduling.volcano.sh", "v1beta1", "queues", _queue(), dry_run="All")
    spec = created["spec"]
    if (spec.get("weight"), spec.get("reclaimable")) == (1, True):
        return None
    return "Queue admitted without weight 1 / reclaimable true (mutatequeue.volcano.sh not called yet)"


def volcano_pod_webhooks(api) -> str | None:
    """A volcano Pod with both disruption-budget annotations: validatepod.volcano.sh refuses the
    pair ("not allow configure multiple annotations ..."). mutatepod.volcano.sh runs before it and,
    without an --admission-conf, changes nothing; a failing call would have failed the request."""
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": PROBE_NAME, "annotations": {"volcano.sh/jdb-min-available": "1",
                                                            "volcano.sh/jdb-max-unavailable": "1"}},
           "spec": {"schedulerName": "volcano", **_pod_template("probe")["spec"]}}
    try:
        client.CoreV1Api(api).create_namespaced_pod(PROBE_NAMESPACE, pod, dry_run="All")
    except ApiException as exc:
        return _denied_by(exc, "validatepod.volcano.sh")
    return "volcano Pod with both budget annotations admitted (validatepod.volcano.sh not called yet)"


PROBES = (
    Probe("jobset", ("vjobset.kb.io",), "JobSet denied by its validating webhook", jobset_validator),
    Probe("jobset", ("mjobset.kb.io",), "JobSet defaulted by its mutating webhook", jobset_defaulter),
    Probe("jobset", ("mpod.kb.io", "vpod.kb.io"), "JobSet pod webhooks called for a labelled Pod", jobset_pod_webhooks),
    Probe("trainer", ("validator.trainjob.trainer.kubeflow.org",),
          "TrainJob with a missing runtime denied by the Trainer webhook", trainjob_validator),
    Probe("trainer", ("defaulter.trainjob.trainer.kubeflow.org",),
          "TrainJob runtimePatches time stamped by the Trainer defaulter", trainjob_defaulter),
    Probe("trainer", ("validator.clustertrainingruntime.trainer.kubeflow.org",),
          "ClusterTrainingRuntime without a node container denied", clustertrainingruntime_validator),
    Probe("trainer", ("validator.trainingruntime.trainer.kubeflow.org",),
          "TrainingRuntime without a node container denied", trainingruntime_validator),
    Probe("training-operator", ("validator.pytorchjob.training-operator.kubeflow.org",),
          "PyTorchJob with 2 Master replicas denied by the Training Operator webhook", pytorchjob_validator),
    Probe("lws", ("vleaderworkerset.kb.io",),
          "LeaderWorkerSet with a subgroup-exclusive annotation and no subGroupPolicy denied", lws_validator),
    Probe("lws", ("mleaderworkerset.kb.io",), "LeaderWorkerSet given networkConfig by the LWS defaulter", lws_defaulter),
    Probe("lws", ("mpod.kb.io", "vpod.kb.io"), "LWS pod webhooks called for a labelled leader Pod", lws_pod_webhooks),
    Probe("volcano", ("validatejob.volcano.sh",), "Volcano Job with maxRetry -1 denied", volcano_job_validator),
    Probe("volcano", ("mutatejob.volcano.sh",), "Volcano Job given maxRetry 3 and queue default (open)",
          volcano_job_defaulter),
    Probe("volcano", ("mutatepodgroup.volcano.sh",), "PodGroup given queue default", volcano_podgroup_defaulter),
    Probe("volcano", ("validatequeue.volcano.sh",), "Queue with a hierarchy and too few weights denied",
          volcano_queue_validator),
    Probe("volcano", ("mutatequeue.volcano.sh",), "Queue given weight 1 and reclaimable", volcano_queue_defaulter),
    Probe("volcano", ("mutatepod.volcano.sh", "validatepod.volcano.sh"),
          "volcano Pod with two budget annotations denied", volcano_pod_webhooks),
)


def probes_for(webhook_names: list[str], project: str) -> tuple[list[Probe], list[str]]:
    """The probes of ``project`` covering ``webhook_names`` (its webhooks), and the names no probe covers."""
    wanted = set(webhook_names)
    chosen = [p for p in PROBES if p.project == project and wanted & set(p.webhooks)]
    covered = {name for p in chosen for name in p.webhooks}
    return chosen, sorted(wanted - covered)
