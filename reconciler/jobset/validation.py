"""JobSet's validating webhook ``vjobset.kb.io`` on create (pkg/webhooks/jobset_webhook.go,
``ValidateCreate``), after the mutating webhook's defaults.

Rules, in upstream's order: the InPlaceRestart strategy needs its alpha gate (off; v0.11+); the first
replicatedJob has no dependsOn; ``network.subdomain`` is a DNS-1123 subdomain and a DNS-1035 label;
per replicatedJob: replicas × parallelism fits int32, ``groupName`` is a DNS-1035 label, the longest
Job name ``<js>-<rj>-<replicas-1>`` and (Indexed with completions) the longest pod name
``<js>-<rj>-<replicas-1>-<completions-1>-abcde`` are DNS-1035 labels, dependsOn names an earlier
replicatedJob; successPolicy targets exist; failurePolicy: RestartJob* actions need their alpha gate
(off; v0.12, which then checks nothing else of the policy), rule names 1-128 characters matching
``^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`` and unique, targets exist, onJobFailureReasons are Job
failure reasons. Not modelled: managedBy, coordinator, volumeClaimPolicies. JobSet v0.8 (Trainer v2.0)
has no groupName check and reports the name checks as plain errors (switches ``jobset_group_labels``,
``jobset_webhook_field_paths``, both v0.9).

How a denial looks (profile switch ``jobset_webhook_invalid_status``): v0.12 (PR #1207) answers
``apierrors.NewInvalid`` - HTTP 422, reason Invalid, ``JobSet.jobset.x-k8s.io "<name>" is invalid:
<aggregate>``, a plain error wrapped as ``field.InternalError(nil, err)`` (``<nil>: Internal error:
<err>``); before, ``errors.Join`` - controller-runtime's 403 Forbidden with the errors one per line.
Either way the apiserver prefixes ``admission webhook "vjobset.kb.io" denied the request: ``.
"""

from __future__ import annotations

import re

from .. import meta
from ..errors import FieldError, Rejection, _aggregate, invalid, plain

WEBHOOK = "vjobset.kb.io"
MAX_INT32 = 2**31 - 1
INTERNAL = "Internal error"

_DNS1035 = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_DNS1123_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN = re.compile(rf"{_DNS1123_LABEL}(\.{_DNS1123_LABEL})*")
_RULE_NAME = re.compile(r"[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?")
_MAX_LEN_63 = "must be no more than 63 characters"
_DNS1035_MSG = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
                "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
                "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")
_DNS1123_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                          "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
                          "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
GROUP_NAME_TOO_LONG = ".spec.replicatedJob[].groupName is too long, must be less than 63 characters"
JOB_NAME_TOO_LONG = "JobSet name is too long, job names generated for this JobSet will exceed 63 characters"
POD_NAME_TOO_LONG = "JobSet name is too long, pod names generated for this JobSet will exceed 63 characters"
SUBDOMAIN_TOO_LONG = ".spec.network.subdomain is too long, must be less than 63 characters"
#: batchv1.JobReason* values a failure policy rule may name.
JOB_FAILURE_REASONS = ("BackoffLimitExceeded", "DeadlineExceeded", "FailedIndexes", "MaxFailedIndexesExceeded",
                       "PodFailurePolicy")


class InvalidDenial(Rejection):
    """v0.12: the webhook's ``apierrors.NewInvalid`` (422 Invalid), passed on by the apiserver."""

    @property
    def code(self) -> int:
        return 422

    @property
    def reason(self) -> str:
        return "Invalid"

    @property
    def message(self) -> str:
        return (f'admission webhook "{self.webhook}" denied the request: '
                f'{self.obj_ref} is invalid: {_aggregate([str(e) for e in self.errors])}')


class JoinedDenial(Rejection):
    """Before v0.12: ``errors.Join`` - a 403 whose message lists every error on its own line."""

    @property
    def message(self) -> str:
        return f'admission webhook "{self.webhook}" denied the request: ' + "\n".join(str(e) for e in self.errors)


def validate_jobset(jobset: dict, cluster) -> list[FieldError]:
    errors = jobset_errors(jobset, cluster.profile)
    if not errors:
        return []
    if cluster.profile.jobset_webhook_invalid_status:
        wrapped = [e if e.type else FieldError(INTERNAL, "", e.detail) for e in errors]
        raise InvalidDenial("webhook", meta.ref(jobset), wrapped, webhook=WEBHOOK)
    raise JoinedDenial("webhook", meta.ref(jobset), errors, webhook=WEBHOOK)


def jobset_errors(jobset: dict, profile) -> list[FieldError]:
    spec = jobset.get("spec") or {}
    name = (jobset.get("metadata") or {}).get("name", "")
    rjobs = spec.get("replicatedJobs") or []
    policy = spec.get("failurePolicy")
    errors: list[FieldError] = []
    if profile.jobset_in_place_restart_gate and (policy or {}).get("restartStrategy") == "InPlaceRestart":
        errors.append(plain("InPlaceRestart restart strategy cannot be set when InPlaceRestart feature gate is disabled"))
    if rjobs and rjobs[0].get("dependsOn") is not None:
        errors.append(plain("DependsOn can't be set for the first ReplicatedJob"))
    subdomain = (spec.get("network") or {}).get("subdomain")
    if subdomain:
        path = "spec.network.subdomain"
        errors += [invalid(path, subdomain, m) for m in dns1123_subdomain(subdomain)]
        errors += [invalid(path, subdomain, SUBDOMAIN_TOO_LONG if m == _MAX_LEN_63 else m) for m in dns1035_label(subdomain)]
    names: set[str] = set()
    for i, rj in enumerate(rjobs):
        errors += _replicated_job_errors(name, rj, f"spec.replicatedJobs[{i}]", names, profile)
    for target in (spec.get("successPolicy") or {}).get("targetReplicatedJobs") or []:
        if target not in names:
            errors.append(plain(f"invalid replicatedJob name '{target}' does not appear in .spec.ReplicatedJobs"))
    if policy is not None:
        errors += _failure_policy_errors(policy, names, profile)
    return errors


def _replicated_job_errors(js_name: str, rj: dict, path: str, names: set[str], profile) -> list[FieldError]:
    errors: list[FieldError] = []
    names.add(rj.get("name", ""))
    job_spec = (rj.get("template") or {}).get("spec") or {}
    replicas = rj.get("replicas", 1)
    if job_spec.get("parallelism", 1) * replicas > MAX_INT32:
        errors.append(plain(f"the product of replicas and parallelism must not exceed {MAX_INT32} "
                            f"for replicatedJob '{rj.get('name', '')}'"))
    if profile.jobset_group_labels:
        group = rj.get("groupName", "")
        errors += [invalid(f"{path}.groupName", group, GROUP_NAME_TOO_LONG if m == _MAX_LEN_63 else m)
                   for m in dns1035_label(group)]
    longest_job = f"{js_name}-{rj.get('name', '')}-{replicas - 1}"

    def name_error(message: str) -> FieldError:
        # Upstream reports the Job name as the value for the pod-name check too.
        return invalid(f"{path}.name", longest_job, message) if profile.jobset_webhook_field_paths else plain(message)
    errors += [name_error(JOB_NAME_TOO_LONG if m == _MAX_LEN_63 else m) for m in dns1035_label(longest_job)]
    if job_spec.get("completionMode") == "Indexed" and job_spec.get("completions") is not None:
        longest_pod = f"{longest_job}-{job_spec['completions'] - 1}-abcde"
        errors += [name_error(POD_NAME_TOO_LONG if m == _MAX_LEN_63 else m) for m in dns1035_label(longest_pod)]
    for dep in rj.get("dependsOn") or []:
        if dep.get("name") not in names:
            errors.append(plain(f"replicatedJob: {rj.get('name', '')} cannot depend on replicatedJob: {dep.get('name')}"))
    return errors


def _failure_policy_errors(policy: dict, names: set[str], profile) -> list[FieldError]:
    rules = policy.get("rules") or []
    if profile.jobset_restart_job_gate and any(r.get("action") in ("RestartJob", "RestartJobAndIgnoreMaxRestarts")
                                               for r in rules):
        # Upstream returns at once: nothing else of the policy is checked.
        return [plain("RestartJob and RestartJobAndIgnoreMaxRestarts failure policy actions are not allowed when "
                      "RestartJob feature gate is disabled")]
    errors: list[FieldError] = []
    by_name: dict[str, list[int]] = {}
    for index, rule in enumerate(rules):
        rule_name = rule.get("name", "")
        if not 1 <= len(rule_name) <= 128:
            errors.append(plain(f"invalid failure policy rule name of length {len(rule_name)}, the rule name must be "
                                "at least 1 characters long and at most 128 characters long"))
        by_name.setdefault(rule_name, []).append(index)
        if not _RULE_NAME.fullmatch(rule_name):
            errors.append(plain(f"invalid failure policy rule name '{rule_name}', a failure policy rule name must "
                                "start with an alphabetic character, optionally followed by a string of alphanumeric "
                                "characters or '_,:', and must end with an alphanumeric character or '_'"))
        for target in rule.get("targetReplicatedJobs") or []:
            if target not in names:
                errors.append(plain(f"invalid replicatedJob name '{target}' in failure policy does not appear in "
                                    ".spec.ReplicatedJobs"))
        for reason in rule.get("onJobFailureReasons") or []:
            if reason not in JOB_FAILURE_REASONS:
                errors.append(plain(f"invalid job failure reason '{reason}' in failure policy is not a recognized "
                                    "job failure reason"))
    # Upstream walks a Go map here, so the order of several such errors is not fixed.
    for rule_name, indexes in by_name.items():
        if len(indexes) > 1:
            listed = " ".join(str(i) for i in indexes)
            errors.append(plain(f"rule names are not unique, rules with indices [{listed}] all have the same name "
                                f"'{rule_name}'"))
    return errors


def dns1035_label(value: str) -> list[str]:
    """apimachinery ``validation.IsDNS1035Label``."""
    errors = [_MAX_LEN_63] if len(value) > 63 else []
    if not _DNS1035.fullmatch(value):
        errors.append(_DNS1035_MSG)
    return errors


def dns1123_subdomain(value: str) -> list[str]:
    """apimachinery ``validation.IsDNS1123Subdomain``."""
    errors = ["must be no more than 253 characters"] if len(value) > 253 else []
    if not _DNS1123_SUBDOMAIN.fullmatch(value):
        errors.append(_DNS1123_SUBDOMAIN_MSG)
    return errors
