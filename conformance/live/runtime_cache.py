"""A TrainJob denied only because the operator's cache has not seen its runtime yet (external mode).

Trainer's TrainJob webhook reads runtimes through its manager's informer cache, which lags the
apiserver: a TrainJob created right after the case (re)created its ClusterTrainingRuntime can be
denied ``ClusterTrainingRuntime.trainer.kubeflow.org "<name>" not found: ...`` (``TrainingRuntime``
for the namespaced kind) although the runtime exists. Cases create runtimes first and the next
case may delete and recreate the same name, so this happens under load (7 rows of one upstream
run). The denial names the runtime; when the case itself created a runtime of exactly that kind
and name (a namespaced one in the TrainJob's namespace), the create is retried with backoff for at
most :data:`WAIT` seconds. Any other denial - among them a runtime the case never created, which
rows expect to be denied - is final at once, and so is this one after the wait.
"""

from __future__ import annotations

import re
import time
from typing import Callable

from reconciler.live.rest import ApiError

#: Seconds a TrainJob is retried while its runtime is missing from the operator's cache.
WAIT = 10.0
_FIRST_DELAY, _MAX_DELAY = 0.1, 1.0
_NOT_FOUND = re.compile(r'\b(ClusterTrainingRuntime|TrainingRuntime)\.trainer\.kubeflow\.org "([^"]*)" not found')
RUNTIME_KINDS = ("ClusterTrainingRuntime", "TrainingRuntime")


def input_key(obj: dict) -> tuple[str, str | None, str]:
    """(kind, namespace - None for a cluster-scoped runtime -, name) of a case input."""
    md = obj.get("metadata") or {}
    namespace = None if obj.get("kind") == "ClusterTrainingRuntime" else md.get("namespace") or "default"
    return obj.get("kind", ""), namespace, md.get("name", "")


def cache_miss(message: str, trainjob: dict, created: set) -> bool:
    """Whether ``message`` denies ``trainjob`` for a runtime the case has created (``created`` holds
    :func:`input_key` of every input created so far)."""
    found = _NOT_FOUND.search(message or "")
    if trainjob.get("kind") != "TrainJob" or found is None:
        return False
    kind, name = found.groups()
    namespace = None if kind == "ClusterTrainingRuntime" else (trainjob.get("metadata") or {}).get("namespace") or "default"
    return (kind, namespace, name) in created


def create(attempt: Callable[[], dict], retry_if: Callable[[ApiError], bool], wait: float | None = None,
           sleep: Callable[[float], None] | None = None, clock: Callable[[], float] | None = None) -> dict:
    """``attempt()``, repeated with doubling delays while it raises an ApiError ``retry_if`` accepts
    and ``wait`` seconds (default :data:`WAIT`) have not passed; the last error is raised."""
    sleep, clock = sleep or time.sleep, clock or time.monotonic
    deadline, delay = clock() + (WAIT if wait is None else wait), _FIRST_DELAY
    while True:
        try:
            return attempt()
        except ApiError as exc:
            if not retry_if(exc) or clock() + delay > deadline:
                raise
        sleep(delay)
        delay = min(delay * 2, _MAX_DELAY)
