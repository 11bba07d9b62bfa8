"""JobSet's mutating webhook defaults (the CRD-level ones live in crds/jobset/jobset.yaml).

The webhook (``mjobset.kb.io``) is controller-runtime's: an object JobSet's Go types cannot decode
is answered with 400 and Go's error before any default is applied (:mod:`reconciler.decoding`).
"""

from __future__ import annotations

from ..decoding import decoding, field, items
from ..k8s_schemas import go_structs

WEBHOOK = "mjobset.kb.io"
#: JSON path of each JobSet struct (api/jobset/v1alpha2/jobset_types.go, batch/v1, core/v1) → its Go name.
GO_STRUCTS = {
    "": "JobSet", "spec": "JobSetSpec", "spec.replicatedJobs": "ReplicatedJob",
    "spec.replicatedJobs.dependsOn": "DependsOn", "spec.replicatedJobs.template": "JobTemplateSpec",
    "spec.replicatedJobs.template.spec": "JobSpec", "spec.network": "Network", "spec.successPolicy": "SuccessPolicy",
    "spec.failurePolicy": "FailurePolicy", "spec.failurePolicy.rules": "FailurePolicyRule",
    "spec.startupPolicy": "StartupPolicy",
    **go_structs("spec.replicatedJobs.template.spec.template", "io.k8s.api.core.v1.PodTemplateSpec"),
}


def _templates(jobset: dict):
    for rj in items(field(jobset, "spec", "replicatedJobs")):
        yield field(rj, "template", "spec", "template"), "spec.replicatedJobs.template.spec.template", "JobSpec"


@decoding(WEBHOOK, GO_STRUCTS, templates=_templates)
def default_jobset(jobset: dict, cluster=None) -> None:
    spec = jobset.setdefault("spec", {})
    spec.setdefault("successPolicy", {"operator": "All"})
    spec.setdefault("startupPolicy", {"startupPolicyOrder": "AnyOrder"})
    network = spec.setdefault("network", {})
    network.setdefault("enableDNSHostnames", True)
    network.setdefault("publishNotReadyAddresses", True)
    for rj in spec.get("replicatedJobs", []):
        job_spec = rj.setdefault("template", {}).setdefault("spec", {})
        job_spec.setdefault("completionMode", "Indexed")
        pod_spec = job_spec.setdefault("template", {}).setdefault("spec", {})
        pod_spec.setdefault("restartPolicy", "OnFailure")
    for i, rule in enumerate((spec.get("failurePolicy") or {}).get("rules", [])):
        if not rule.get("name"):  # upstream: len(rule.Name) == 0, so an explicit "" is named too
            rule["name"] = f"failurePolicyRule{i}"
