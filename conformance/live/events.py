"""Which Events are reconcile errors, and the error strings they hold.

The reference operator reports a failed reconcile as a Warning Event with reason
``ReconcileError`` from its own component; its message is the error as render records it. An
operator we did not write reports the same failures its own way, so in external mode these count
too (Warning Events only; reasons and wording from the upstream sources):

==================================  ============  =================================================
reason                              on            message
==================================  ============  =================================================
``JobCreationFailed``               JobSet        kubernetes-sigs/jobset ``createJobs``: one
                                                  ``job "<name>" creation failed with error: <err>``
                                                  per Job it could not create, joined by newlines
                                                  (Go's ``errors.Join``) - render's wording per Job.
                                                  The creates run in parallel (``ParallelizeUntil``)
                                                  and join in the order they finish, so the lines
                                                  are put in Job name order, numbers as numbers
                                                  (render creates ``-0``, ``-1``, ... ``-10``)
``TrainJobResourcesCreationFailed`` TrainJob      kubeflow/trainer: ``TrainJob resources
                                                  reconciliation failed: <err>`` (``<err>`` cut at
                                                  950 characters and `` ...`` appended): one error,
                                                  even over several lines (a JobSet v0.10 webhook
                                                  denial is Go's ``errors.Join``), as render's
``ValidationError``,                MPIJob        kubeflow/mpi-operator v0.6.0: ``Found validation
``ErrResourceExists``,                            errors: <aggregate>``, ``Resource "<name>" of Kind
``SetPodTemplateRestartPolicy``                   "" already exists and is not managed by MPIJob``,
                                                  ``Restart policy in pod template overridden by
                                                  restart policy in replica spec`` - as render's
``MPIJobFailed``                    MPIJob        only ``worker pod created failed: <err>`` and
                                                  ``launcher pod created failed: <err>`` (the reason
                                                  also names a failed launcher, a condition)
``SetPodTemplateRestartPolicy``,    PyTorchJob    kubeflow/training-operator v1.8.1/v1.9.2
``PyTorchJobRestarting``,                         (common/pod.go, pytorchjob_controller.go
``PyTorchJobFailed``,                             UpdateJobStatus, control/{pod,service}_control.go):
``FailedCreatePod``,                              ``Restart policy in pod template will be
``FailedCreateService``                           overwritten by restart policy in replica spec``,
                                                  both Restarting messages, ExitCode's ``job "<name>"
                                                  is failing because "<Type>" replica(s) failed.``
                                                  (the other PyTorchJobFailed Events are Normal),
                                                  ``Error creating: <err>`` - as render's
any reason                          PyTorchJob    core/job.go RecordAbnormalPods: the reason is the
                                                  container's own (``Error`` for kwok's non-zero
                                                  exits); only messages ``Error pod <pod> container
                                                  <c> exitCode: <n> terminated message: <m>`` and
                                                  ``... waiting message: <m>``
``FailedCreate``                    Job (Volcano) volcano.sh/volcano v1.10.0 syncJob
                                                  (job_controller_actions.go L424-427): ``Error
                                                  creating pods: [failed to create pod <name>, err:
                                                  <%#v of the StatusError>, ...]`` - each refused
                                                  pod's ``Message:"..."``, in pod name order (the
                                                  creates run side by side), as render's
==================================  ============  =================================================

A line whose error is a stale cache the controller retries at once is left out: the apiserver's
AlreadyExists (``jobs.batch "js-leader-0" already exists`` - JobSet recreating a restarted Job
before its cache has seen the old one go, recorded live against JobSet v0.12.0) and its optimistic
lock Conflict (``the object has been modified; please apply your changes to the latest version
and try again``). Render has no cache, so these never happen there.

client-go's core/v1 recorder (Trainer v2.1) aggregates: from the 11th similar Event in ten minutes
on (similar: same object and reason, other message - here the pointer changes every time) it writes
``(combined from similar events): <message>``, recorded live against Trainer v2.1.0; the prefix is
client-go's, not the operator's, and goes.

What is compared is the error itself: one entry per line of a joined message (per Event for Trainer's), without Trainer's
``TrainJob resources reconciliation failed:`` prefix, and with a Go pointer printed by ``%v``
(``0xc000a1b2c0``: an address, different in every run) written ``<pointer>`` as render writes it.
The involved object is named ``<Kind> <namespace>/<name>: `` in front, as for the reference operator.
"""

from __future__ import annotations

import json
import re

from reconciler.live.facade import EVENT_COMPONENT, EVENT_REASON

#: (reason, kind of the involved object) -> a function from the Event's message to its errors.
_TRAINER_PREFIX = "TrainJob resources reconciliation failed: "
_GO_POINTER = re.compile(r"\b0x[0-9a-f]{8,16}\b")
_COMBINED = "(combined from similar events): "  # client-go's EventAggregator


_STALE_CACHE = re.compile(r'(: [a-z0-9.]+ "[^"]*" already exists|: the object has been modified; please apply your '
                          r'changes to the latest version and try again)$')


def _joined(message: str) -> list[str]:
    return [line for line in message.split("\n") if line.strip() and not _STALE_CACHE.search(line)]


def _jobs(message: str) -> list[str]:
    return sorted(_joined(message), key=_natural)


def _natural(text: str) -> list:
    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", text)]


def _trainer(message: str) -> list[str]:
    kept = _joined(message.removeprefix(_TRAINER_PREFIX))
    return [_GO_POINTER.sub("<pointer>", "\n".join(kept))] if kept else []


def _created_failed(message: str) -> list[str]:
    return [message] if message.startswith(("worker pod created failed: ", "launcher pod created failed: ")) else []


def _abnormal_pod(message: str) -> list[str]:
    return [message] if message.startswith("Error pod ") else []


def _verbatim(message: str) -> list[str]:
    return [message]


_GO_MESSAGE = re.compile(r'Message:"((?:[^"\\]|\\.)*)"')


def _volcano_failed_create(message: str) -> list[str]:
    """Each refused pod's apiserver message out of Volcano's ``Error creating pods: [...]`` (Go's
    ``%#v`` of a StatusError holds it as ``Message:"<Go-quoted>"``), by pod name."""
    if not message.startswith("Error creating pods: "):
        return []
    found = []
    for quoted in _GO_MESSAGE.findall(message):
        try:
            found.append(json.loads(f'"{quoted}"'))
        except ValueError:
            found.append(quoted)
    return sorted(found)


UPSTREAM_REASONS = {
    ("JobCreationFailed", "JobSet"): _jobs,
    ("TrainJobResourcesCreationFailed", "TrainJob"): _trainer,
    ("ValidationError", "MPIJob"): lambda message: [message],
    ("ErrResourceExists", "MPIJob"): lambda message: [message],
    ("SetPodTemplateRestartPolicy", "MPIJob"): lambda message: [message],
    ("MPIJobFailed", "MPIJob"): _created_failed,
    ("SetPodTemplateRestartPolicy", "PyTorchJob"): _verbatim,
    ("PyTorchJobRestarting", "PyTorchJob"): _verbatim,
    ("PyTorchJobFailed", "PyTorchJob"): _verbatim,
    ("FailedCreatePod", "PyTorchJob"): _verbatim,
    ("FailedCreateService", "PyTorchJob"): _verbatim,
    ("FailedCreate", "Job"): _volcano_failed_create,  # kcm's batch/v1 ones say "Error creating: ..."
}
#: kind of the involved object -> errors from a Warning Event of any other reason (the reason is
#: not the operator's own, e.g. a container's terminated reason).
UPSTREAM_ANY_REASON = {
    "PyTorchJob": _abnormal_pod,
}


def errors_of(event: dict, external: bool) -> list[str]:
    """The reconcile errors ``event`` reports (none for any other Event), each named after its object."""
    involved = event.get("involvedObject") or {}
    if event.get("reason") == EVENT_REASON and (event.get("source") or {}).get("component") == EVENT_COMPONENT:
        messages = [event.get("message") or ""]
    elif external and event.get("type") == "Warning" and (
            (event.get("reason"), involved.get("kind")) in UPSTREAM_REASONS or involved.get("kind") in UPSTREAM_ANY_REASON):
        message = (event.get("message") or "").removeprefix(_COMBINED)
        parse = UPSTREAM_REASONS.get((event.get("reason"), involved.get("kind"))) or UPSTREAM_ANY_REASON[involved["kind"]]
        messages = parse(message)
    else:
        return []
    namespace = involved.get("namespace")
    prefix = f"{involved.get('kind')} {namespace + '/' if namespace else ''}{involved.get('name')}: "
    return [prefix + message for message in messages]


def order_key(event: dict) -> tuple:
    """First seen first: core/v1 Events have ``firstTimestamp``, events.k8s.io ones (controller-runtime's
    new recorder) ``eventTime``; the resourceVersion breaks ties."""
    when = event.get("firstTimestamp") or event.get("eventTime") or ""
    return (when[:19], int((event.get("metadata") or {}).get("resourceVersion", "0") or 0))


def reconcile_errors(events: list[dict], external: bool) -> list[str]:
    found: list[str] = []
    for event in sorted(events, key=order_key):
        for error in errors_of(event, external):
            if error not in found:
                found.append(error)
    return found


# ------------------------------------------------------------------ Events as a case's outcome

def emissions(event: dict) -> int:
    """How many times the Event was recorded: client-go's recorder folds a repeat into the same Event
    and counts it (``count``; ``series.count`` for an events.k8s.io Event), the reference operator
    writes one Event per emission (count 1)."""
    series = (event.get("series") or {}).get("count")
    return max(int(event.get("count") or series or 1), 1)


def recorded(events: list[dict], seen: dict[str, int] | None = None) -> list[dict]:
    """The Events of ``events`` as render records them (``Cluster.record_event``): one entry per
    emission, ``{type, reason, kind, namespace, name, message}`` of the involved object, first seen
    first. The reference operator's reconcile errors are not Events render records (they are
    :func:`reconcile_errors`). ``seen`` (uid -> emissions already reported) keeps a scenario step to
    its own: an Event counted before reports only its new emissions, and is updated."""
    out = []
    for event in sorted(events, key=order_key):
        if event.get("reason") == EVENT_REASON and (event.get("source") or {}).get("component") == EVENT_COMPONENT:
            continue
        uid = (event.get("metadata") or {}).get("uid", "")
        count = emissions(event)
        before = seen.get(uid, 0) if seen is not None else 0
        if seen is not None:
            seen[uid] = max(count, before)
        involved = event.get("involvedObject") or {}
        entry = {"type": event.get("type", ""), "reason": event.get("reason", ""), "kind": involved.get("kind", ""),
                 "namespace": involved.get("namespace", ""), "name": involved.get("name", ""),
                 "message": event.get("message", "")}
        out += [dict(entry) for _ in range(count - before)]
    return out
