"""JobSet's mutating webhook defaults (the CRD-level ones live in crds/jobset/jobset.yaml)."""

from __future__ import annotations


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
        rule.setdefault("name", f"failurePolicyRule{i}")
