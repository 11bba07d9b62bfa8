"""Built-in Kubernetes kinds the reconciler creates, and the few apiserver defaults they get.

Only defaults that carry meaning for training workloads are applied (Job ``backoffLimit`` 6, the
generated Job selector and its pod labels, Secret ``type``, a pod failure policy's ``onPodConditions[].status``), plus the one Job validation
group restart depends on. The long tail of Pod/container
defaults (``dnsPolicy``, ``terminationMessagePath`` …) is left out here and dropped from live
objects by the normalizer, so goldens show what an operator wrote, not kube-apiserver's defaults.
"""

from __future__ import annotations

from .errors import FieldError, invalid

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
    return obj


def _default_job(job: dict) -> None:
    spec = job.setdefault("spec", {})
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
        return _validate_job(obj)
    return []


def _validate_job(job: dict) -> list[FieldError]:
    spec = job.get("spec") or {}
    restart_policy = ((spec.get("template") or {}).get("spec") or {}).get("restartPolicy")
    if spec.get("podFailurePolicy") and restart_policy != "Never":
        # Wording: shared/reference/volcano-jobset-restart.md §2.3 (pkg/apis/batch/validation).
        return [invalid("spec.template.spec.restartPolicy", restart_policy,
                        'only "Never" is supported when podFailurePolicy is specified')]
    return []
