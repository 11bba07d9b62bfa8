"""Built-in Kubernetes kinds the reconciler creates, and the few apiserver defaults they get.

Only defaults that carry meaning for training workloads are applied (Job ``backoffLimit`` 6, the
generated Job selector and its pod labels, Secret ``type``, a pod failure policy's ``onPodConditions[].status``,
a new Pod's ``status.phase: Pending``), plus the one Job validation
group restart depends on. The long tail of Pod/container
defaults (``dnsPolicy``, ``terminationMessagePath`` …) is left out here and dropped from live
objects by the normalizer, so goldens show what an operator wrote, not kube-apiserver's defaults.
"""

from __future__ import annotations

from . import quantity
from .errors import NOT_SUPPORTED, REQUIRED, FieldError, invalid

BUILTIN = {
    ("v1", "ConfigMap"), ("v1", "Secret"), ("v1", "Service"), ("v1", "Pod"), ("v1", "Namespace"),
    ("batch/v1", "Job"), ("networking.k8s.io/v1", "NetworkPolicy"),
}


def is_builtin(api_version: str, kind: str) -> bool:
    return (api_version, kind) in BUILTIN


def default(obj: dict) -> dict:
    kind = obj.get("kind")
    if kind == "Secret":
        obj.setdefault("type", "Opaque")
    elif kind == "Service":
        spec = obj.setdefault("spec", {})
        spec.setdefault("type", "ClusterIP")
        spec.setdefault("sessionAffinity", "None")
        for port in spec.get("ports", []):
            port.setdefault("protocol", "TCP")
            port.setdefault("targetPort", port.get("port"))
    elif kind == "Job":
        _default_job(obj)
    elif kind == "Pod":
        # The pod strategy's PrepareForCreate: a new Pod's status is phase Pending, whatever was sent.
        obj["status"] = {"phase": "Pending"}
    return obj


def _default_job(job: dict) -> None:
    spec = job.setdefault("spec", {})
    # SetDefaults_Job (pkg/apis/batch/v1/defaults.go): both unset means a non-parallel Job, and
    # both become 1; otherwise only parallelism is defaulted.
    if "completions" not in spec and "parallelism" not in spec:
        spec["completions"] = 1
    spec.setdefault("parallelism", 1)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    if "backoffLimitPerIndex" not in spec:
        spec.setdefault("backoffLimit", 6)
    spec.setdefault("podReplacementPolicy", "Failed" if spec.get("podFailurePolicy") else "TerminatingOrFailed")
    for rule in (spec.get("podFailurePolicy") or {}).get("rules") or []:
        for pattern in rule.get("onPodConditions") or []:
            pattern.setdefault("status", "True")
    if spec["completionMode"] == "Indexed":
        spec.setdefault("completions", spec["parallelism"])
    # The generated selector: the apiserver keys it on the Job's own UID.
    uid = job["metadata"].get("uid")
    name = job["metadata"].get("name")
    if uid and not spec.get("manualSelector"):
        spec["selector"] = {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
        labels = spec.setdefault("template", {}).setdefault("metadata", {}).setdefault("labels", {})
        labels.update({
            "batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": name,
            "controller-uid": uid, "job-name": name,
        })


def validate(obj: dict) -> list[FieldError]:
    """kube-apiserver's own validation of a built-in kind (a 422 Invalid, like a CRD schema error)."""
    if obj.get("kind") == "Job":
        pod_spec = ((obj.get("spec") or {}).get("template") or {}).get("spec") or {}
        return _validate_job(obj) + _validate_resources(pod_spec, "spec.template.spec")
    if obj.get("kind") == "Pod":
        return _validate_restart_policy(obj.get("spec") or {}) + _validate_resources(obj.get("spec") or {}, "spec")
    return []


def _validate_restart_policy(pod_spec: dict) -> list[FieldError]:
    """validateRestartPolicy (pkg/apis/core/validation): after defaulting ("" → Always), only Always,
    OnFailure and Never. A controller that copies an unchecked value (PyTorchJob's replica
    restartPolicy) gets its pod refused."""
    policy = pod_spec.get("restartPolicy")
    if not policy or policy in ("Always", "OnFailure", "Never"):
        return []
    return [FieldError(NOT_SUPPORTED, "spec.restartPolicy", 'supported values: "Always", "OnFailure", "Never"', policy)]


def _overcommit_allowed(resource: str) -> bool:
    # helper.IsOvercommitAllowed: native resources (no domain, or *kubernetes.io/) except hugepages.
    native = "/" not in resource or "kubernetes.io/" in resource
    return native and not resource.startswith("hugepages-")


def _validate_resources(pod_spec: dict, path: str) -> list[FieldError]:
    """ValidateResourceRequirements: an extended resource (``nvidia.com/gpu``) needs a limit equal to
    its request, and no request may exceed its limit. A Job whose template breaks this is refused,
    so a TrainJob that requests GPUs without limits never gets pods on a real cluster."""
    errors = []
    for field in ("initContainers", "containers"):
        for i, container in enumerate(pod_spec.get(field) or []):
            resources = container.get("resources") or {}
            requests, limits = resources.get("requests") or {}, resources.get("limits") or {}
            base = f"{path}.{field}[{i}].resources"
            for name, requested in requests.items():
                if name not in limits:
                    if not _overcommit_allowed(name):
                        errors.append(FieldError(REQUIRED, f"{base}.limits", "Limit must be set for non overcommitable resources"))
                    continue
                req, lim = quantity.parse(requested), quantity.parse(limits[name])
                if req != lim and not _overcommit_allowed(name):
                    errors.append(invalid(f"{base}.requests", str(requested), f"must be equal to {name} limit of {limits[name]}"))
                elif req > lim:
                    errors.append(invalid(f"{base}.requests", str(requested), f"must be less than or equal to {name} limit of {limits[name]}"))
    return errors


def _validate_job(job: dict) -> list[FieldError]:
    spec = job.get("spec") or {}
    restart_policy = ((spec.get("template") or {}).get("spec") or {}).get("restartPolicy")
    if spec.get("podFailurePolicy") and restart_policy != "Never":
        # Wording: shared/reference/volcano-jobset-restart.md §2.3 (pkg/apis/batch/validation).
        return [invalid("spec.template.spec.restartPolicy", restart_policy,
                        'only "Never" is supported when podFailurePolicy is specified')]
    return []
