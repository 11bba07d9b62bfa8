"""Volcano's Job admission: the mutating webhook ``mutatejob.volcano.sh`` and the validating webhook
``validatejob.volcano.sh`` (pkg/webhooks/admission/jobs at v1.12.0; shared/reference/
volcano-jobset-restart.md §1.4, §2.4).

Mutation, in upstream's order: queue ``default``; schedulerName ``volcano``; maxRetry 0 → 3; per task:
empty name → ``default<index>``, hostNetwork without dnsPolicy → ``ClusterFirstWithHostNet``,
minAvailable nil → replicas, maxRetry 0 → 3; job minAvailable 0 → the sum of task minAvailable;
``svc`` added when ``pytorch``, ``tensorflow`` or ``mpi`` is present (``ssh`` too with ``mpi``). The
plugins map is rewritten as a Go map marshals, i.e. with sorted keys.

Validation returns one message, the concatenation of upstream's ``msg +=`` parts, trimmed; the
apiserver shows it after ``admission webhook "validatejob.volcano.sh" denied the request:``.
Both webhooks deny with a ``Status`` that has a message and no code (``AdmitJobs``,
``util.ToAdmissionResponse``), and kube-apiserver answers such a denial with **400** and no reason
(``ToStatusErr`` in ``apiserver/pkg/admission/plugin/webhook/errors``: "don't return < 400 status
codes along with a rejection"; the same in every Kubernetes release Volcano builds against) - seen
against the real vc-webhook-manager v1.10.0 (docs/results/README.md), where 403 was assumed before. Not
modelled: Kubernetes' own PodTemplate validation of each task template, volumes, dependsOn cycles.
Queues: only ``default`` exists and is open (a fresh Volcano install).
"""

from __future__ import annotations

import re

from ..decoding import decoding, field, items
from ..errors import FieldError, plain
from ..k8s_schemas import go_structs
from ..trainer.defaulter import BadRequest
from .. import meta
from . import keys, plugins

MUTATING_WEBHOOK = "mutatejob.volcano.sh"
VALIDATING_WEBHOOK = "validatejob.volcano.sh"
DEFAULT_QUEUE = "default"
DEFAULT_SCHEDULER = "volcano"
DEFAULT_MAX_RETRY = 3
KNOWN_QUEUES = {"default"}

#: validatePolicies' tables, in upstream's declaration order (Go prints the allowed ones in map
#: order, which is random; the reference reconciler prints them in this order).
POLICY_EVENTS = {"*": True, "PodFailed": True, "PodEvicted": True, "PodPending": True, "Unknown": True,
                 "TaskCompleted": True, "TaskFailed": True, "JobUpdated": True, "OutOfSync": False,
                 "CommandIssued": False, "PodRunning": False}
POLICY_ACTIONS = {"AbortJob": True, "RestartJob": True, "RestartTask": True, "RestartPod": True,
                  "TerminateJob": True, "CompleteJob": True, "ResumeJob": True, "SyncJob": False,
                  "EnqueueJob": False, "SyncQueue": False, "OpenQueue": False, "CloseQueue": False}

_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_DNS1123_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                          "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
                          "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS1123_LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
                      "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used "
                      "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
_QUALIFIED_NAME_MSG = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
                       "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
                       "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")


# ------------------------------------------------------------------ mutation

MUTATING_WEBHOOK = "mutatejob.volcano.sh"
#: JSON path of each Volcano Job struct (pkg/apis/batch/v1alpha1/job.go, core/v1) → its Go name.
GO_STRUCTS = {
    "": "Job", "spec": "JobSpec", "spec.tasks": "TaskSpec", "spec.policies": "LifecyclePolicy",
    "spec.tasks.policies": "LifecyclePolicy", "spec.tasks.dependsOn": "DependsOn",
    **go_structs("spec.tasks.template", "io.k8s.api.core.v1.PodTemplateSpec"),
}


# Volcano's handler decodes with schema.DecodeJob and answers an error with util.ToAdmissionResponse:
# a denial without a code (the apiserver makes it 400, no reason) carrying Go's error.
def _templates(job: dict):
    for task in items(field(job, "spec", "tasks")):
        yield field(task, "template"), "spec.tasks.template", "TaskSpec"


@decoding(MUTATING_WEBHOOK, GO_STRUCTS, status=400, templates=_templates)
def default_job(job: dict, cluster) -> None:
    spec = job.setdefault("spec", {})
    if not spec.get("queue"):
        spec["queue"] = DEFAULT_QUEUE
    if not spec.get("schedulerName"):
        spec["schedulerName"] = DEFAULT_SCHEDULER
    if not spec.get("maxRetry"):
        spec["maxRetry"] = DEFAULT_MAX_RETRY
    tasks_patched = False
    for index, task in enumerate(spec.get("tasks") or []):
        tasks_patched = tasks_patched or not task.get("name") or task.get("minAvailable") is None or not task.get(
            "maxRetry") or bool(((task.get("template") or {}).get("spec") or {}).get("hostNetwork")
                                and not ((task.get("template") or {}).get("spec") or {}).get("dnsPolicy"))
        if not task.get("name"):
            task["name"] = f"{keys.DEFAULT_TASK_SPEC}{index}"
        pod_spec = (task.get("template") or {}).get("spec") or {}
        if pod_spec.get("hostNetwork") and not pod_spec.get("dnsPolicy"):
            pod_spec["dnsPolicy"] = "ClusterFirstWithHostNet"
        if task.get("minAvailable") is None:
            task["minAvailable"] = task.get("replicas", 0)
        if not task.get("maxRetry"):
            task["maxRetry"] = DEFAULT_MAX_RETRY
    if tasks_patched:
        # mutateSpec replaces /spec/tasks with the tasks as Go marshals them (mutate_job.go L218-222 in
        # v1.10.0): TaskSpec.replicas is omitempty, so a task's replicas 0 is gone (seen on the real v1.10.0).
        for task in spec.get("tasks") or []:
            if task.get("replicas") == 0:
                del task["replicas"]
    if not spec.get("minAvailable"):
        spec["minAvailable"] = sum(t["minAvailable"] for t in spec.get("tasks") or [])
    if spec.get("plugins") is not None:
        found = dict(spec["plugins"])
        if {"tensorflow", "mpi", "pytorch"} & set(found):
            found.setdefault("svc", [])
        if "mpi" in found:
            found.setdefault("ssh", [])
        spec["plugins"] = {name: found[name] for name in sorted(found)}


# ------------------------------------------------------------------ validation

def validate_job(job: dict, cluster) -> list[FieldError]:
    """No error, or the denial: 400 without a reason (see the module docstring)."""
    message = _create_message(job, cluster.profile).strip()
    if message:
        raise BadRequest("webhook", meta.ref(job), [plain(message)], webhook=VALIDATING_WEBHOOK)
    return []


def validate_job_update(job: dict, old: dict, cluster) -> list[FieldError]:
    """AdmitJobs on UPDATE: validateJobUpdate's error, the same 400 without a reason as on create."""
    message = _update_message(job, old, cluster.profile)
    if message:
        raise BadRequest("webhook", meta.ref(job), [plain(message)], webhook=VALIDATING_WEBHOOK)
    return []


def _update_message(job: dict, old: dict, profile) -> str:
    """validateJobUpdate (admit_job.go, the same in v1.10.0 and v1.12.0 but for the last text): the first
    error, or "". Only minAvailable, each task's replicas and minAvailable and priorityClassName may change."""
    spec, old_spec = job.get("spec") or {}, old.get("spec") or {}
    tasks, total = spec.get("tasks") or [], 0
    for task in tasks:
        task_name, replicas = task.get("name", ""), task.get("replicas", 0)
        if replicas < 0:
            return f"'replicas' must be >= 0 in task: {task_name}"
        if task.get("minAvailable") is not None:
            if task["minAvailable"] < 0:
                return f"'minAvailable' must be >= 0 in task: {task_name}"
            if task["minAvailable"] > replicas:
                return f"'minAvailable' must be <= 'replicas' in task: {task_name}"
        total += replicas
    if spec.get("minAvailable", 0) > total:
        return "job 'minAvailable' must not be greater than total replicas"
    if spec.get("minAvailable", 0) < 0:
        return "job 'minAvailable' must be >= 0"
    old_tasks = old_spec.get("tasks") or []
    if len(old_tasks) != len(tasks):
        return "job updates may not add or remove tasks"
    if _frozen(spec, old_tasks) != _frozen(old_spec, old_tasks):
        return ("job updates may not change fields other than `minAvailable`, `tasks[*].replicas under spec`"
                + (" and `PriorityClassName`" if profile.volcano_update_names_priority_class else ""))
    return ""


def _frozen(spec: dict, old_tasks: list[dict]):
    """The spec as validateJobUpdate compares it: minAvailable, priorityClassName and each task's replicas and
    minAvailable taken from the old object, and apiequality.Semantic's nil == empty for lists and maps."""
    spec = {k: v for k, v in spec.items() if k not in ("minAvailable", "priorityClassName")}
    spec["tasks"] = [{**{k: v for k, v in task.items() if k not in ("replicas", "minAvailable")},
                      **{k: old[k] for k in ("replicas", "minAvailable") if k in old}}
                     for task, old in zip(spec.get("tasks") or [], old_tasks)]
    return _semantic(spec)


def _semantic(value):
    if isinstance(value, dict):
        return {k: _semantic(v) for k, v in value.items() if v is not None and v != [] and v != {}}
    if isinstance(value, list):
        return [_semantic(v) for v in value]
    return value


def _create_message(job: dict, profile) -> str:
    spec, name = job["spec"], job["metadata"]["name"]
    if spec.get("minAvailable", 0) < 0:
        return "job 'minAvailable' must be >= 0."
    if spec.get("maxRetry", 0) < 0:
        return "'maxRetry' cannot be less than zero."
    if spec.get("ttlSecondsAfterFinished") is not None and spec["ttlSecondsAfterFinished"] < 0:
        return "'ttlSecondsAfterFinished' cannot be less than zero."
    tasks = spec.get("tasks") or []
    if not tasks:
        return "No task specified in job spec"
    msg, seen, total = "", set(), 0
    for index, task in enumerate(tasks):
        task_name, replicas = task.get("name", ""), task.get("replicas", 0)
        if replicas < 0:
            msg += f" 'replicas' < 0 in task: {task_name}, job: {name};"
        if task.get("minAvailable") is not None:
            if task["minAvailable"] < 0:
                msg += f" 'minAvailable' < 0 in task: {task_name}, job: {name};"
            elif task["minAvailable"] > replicas:
                msg += f" 'minAvailable' is greater than 'replicas' in task: {task_name}, job: {name};"
        total += replicas
        label_errors = _dns1123_label(task_name)
        if label_errors:
            msg += f" [{' '.join(label_errors)}];"
        if task_name in seen:
            msg += f" duplicated task name {task_name};"
            break
        seen.add(task_name)
        policy_error = validate_policies(task.get("policies") or [], "spec.tasks.policies", profile)
        if policy_error:
            msg += policy_error + _valid_lists(profile)
        pod_name = f"{name}-{task_name}-{index}"  # upstream checks the *task* index here
        name_errors = _qualified_name(pod_name)
        if name_errors:
            msg += f"create pod with name {pod_name} validate failed [{' '.join(name_errors)}];"
        # validateTaskTemplate: Kubernetes' ValidatePodTemplate of a PodTemplate named after the task,
        # each error + ". " after "spec.task[<i>]." - of its checks only the name (a DNS-1123 subdomain)
        # is modelled (seen on the real v1.10.0: admit_job.go validateTaskTemplate).
        if not _DNS1123_SUBDOMAIN.match(task_name):
            msg += f'spec.task[{index}].metadata.name: Invalid value: "{task_name}": {_DNS1123_SUBDOMAIN_MSG}. '
    name_errors = _qualified_name(name)
    if name_errors:
        msg += f"create job with name {name} validate failed [{' '.join(name_errors)}]"
    if total < spec.get("minAvailable", 0):
        msg += " job 'minAvailable' should not be greater than total replicas in tasks;"
    policy_error = validate_policies(spec.get("policies") or [], "spec.policies", profile)
    if policy_error:
        msg += policy_error + _valid_lists(profile)
    for plugin in spec.get("plugins") or {}:
        if not plugins.known(plugin):
            msg += f" unable to find job plugin: {plugin};"
    queue = spec.get("queue", "")
    if queue not in KNOWN_QUEUES:
        # v1.11+ reads the lister (NotFound of Resource("queue")); v1.10 an API Get (kube-apiserver's NotFound
        # names the plural resource).
        resource = "queue" if profile.volcano_queue_lister else "queues"
        msg += f' unable to find job queue: {resource}.scheduling.volcano.sh "{queue}" not found;'
    return msg


def validate_policies(policies: list[dict], path: str, profile=None) -> str:
    """validatePolicies; returns go-multierror's text ("1 error occurred:\\n\\t* …\\n\\n") or "". The event
    and action tables are ``profile``'s (:func:`policy_tables`; default: v1.11's and later)."""
    policy_events, policy_actions = policy_tables(profile) if profile is not None else (POLICY_EVENTS, POLICY_ACTIONS)
    errors: list[str] = []
    events_seen: set[str] = set()
    exit_codes: set[int] = set()
    for policy in policies:
        events = _event_list(policy)
        if events and policy.get("exitCode") is not None:
            errors.append("must not specify event and exitCode simultaneously")
            break
        if not events and policy.get("exitCode") is None:
            errors.append("either event and exitCode should be specified")
            break
        if events:
            failed = False
            for event in events:
                action = policy.get("action", "")
                if not policy_events.get(event):
                    errors.append(f'{path}: Invalid value: "{event}": invalid policy event')
                elif not policy_actions.get(action):
                    errors.append(f'{path}: Invalid value: "{action}": invalid policy action')
                elif event in events_seen:
                    errors.append(f"duplicate event {event}  across different policy")
                else:
                    events_seen.add(event)
                    continue
                failed = True
                break
            if failed:
                break
        else:
            code = policy["exitCode"]
            if code == 0:
                errors.append("0 is not a valid error code")
                break
            if code in exit_codes:
                errors.append(f"duplicate exitCode {code}")
                break
            exit_codes.add(code)
    if keys.ANY_EVENT in events_seen and len(events_seen) > 1:
        errors.append("if there's * here, no other policy should be here")
    if not errors:
        return ""
    if len(errors) == 1:
        return f"1 error occurred:\n\t* {errors[0]}\n\n"
    return f"{len(errors)} errors occurred:\n\t" + "\n\t".join(f"* {e}" for e in errors) + "\n\n"


def _event_list(policy: dict) -> list[str]:
    """Events then event, duplicates removed (getEventList)."""
    events = list(policy.get("events") or []) + ([policy["event"]] if policy.get("event") else [])
    return list(dict.fromkeys(events))


def policy_tables(profile) -> tuple[dict[str, bool], dict[str, bool]]:
    """validatePolicies' event and action tables for ``profile``: before volcano#3813 (v1.10) neither
    PodPending nor RestartPod (nor the internal PodRunning) is in them."""
    if profile.volcano_pod_pending_policies:
        return POLICY_EVENTS, POLICY_ACTIONS
    return ({e: a for e, a in POLICY_EVENTS.items() if e not in ("PodPending", "PodRunning")},
            {a: ok for a, ok in POLICY_ACTIONS.items() if a != "RestartPod"})


def _valid_lists(profile) -> str:
    events_table, actions_table = policy_tables(profile)
    events = " ".join(e for e, allowed in events_table.items() if allowed)
    actions = " ".join(a for a, allowed in actions_table.items() if allowed)
    return f" valid events are [{events}], valid actions are [{actions}];"


def _dns1123_label(value: str) -> list[str]:
    errors = []
    if len(value) > 63:
        errors.append("must be no more than 63 characters")
    if not _DNS1123_LABEL.match(value):
        errors.append(_DNS1123_LABEL_MSG)
    return errors


def _qualified_name(value: str) -> list[str]:
    """IsQualifiedName for a name without a prefix."""
    errors = []
    if not value:
        errors.append("name part must be non-empty")
    elif len(value) > 63:
        errors.append("name part must be no more than 63 characters")
    if not _QUALIFIED_NAME.match(value):
        errors.append(_QUALIFIED_NAME_MSG)
    return errors
