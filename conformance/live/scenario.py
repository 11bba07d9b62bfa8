"""A scenario row (steps of apply / update / delete / fault / wait) against the live cluster, with render's semantics.

Per step, as ``conformance.backends.render.run_steps``: do the action (create the inputs, send
the update's JSON Patch or the DELETE, or replay the fault ``repeat`` times, settling after each), settle,
collect everything *with status*. ``never`` patterns are checked against every watch event in
the case's namespaces while the step runs (from just before its action until it is collected):
a single-object pattern is matched against the object of each event, a ``coexist`` item against
the whole cache whenever an event's object matches one of its patterns. Reconcile errors and
Events are the step's new ones.

Objects are keyed like render's outcome of the same step (render's step outcomes are computed
once for that), so golden text compares key order and all.
"""

from __future__ import annotations

import copy
import threading
import time

import jsonpatch

from reconciler import faults as model
from reconciler.live.rest import ApiError

from .. import expectations
from ..backends import render
from ..outcome import Outcome
from . import faults
from .case import FIELD_MANAGER, CaseRun


class ScenarioRun(CaseRun):
    def __init__(self, session, profile: str, steps: list, label: str = ""):
        inputs = [obj for step in steps if step.apply for obj in step.apply]
        super().__init__(session, profile, inputs, label=label)
        self.steps = steps
        self._errors_seen: set[str] = set()
        self.events_seen = {}  # each step's outcome has its own Events

    def run_steps(self) -> list[Outcome]:
        outcomes: list[Outcome] = []
        reference = render.run_steps(copy.deepcopy(self.steps), self.profile.name)
        try:
            prepared = Outcome(objects=[])
            self._timed("prepare", self._prepare, prepared)
            for number, step in enumerate(self.steps):
                outcome = Outcome(objects=[], input_errors=list(prepared.input_errors) if number == 0 else [])
                watcher = _NeverWatch(step.never, self, outcome) if step.never else None
                if watcher:
                    self.session.activity.listeners.append(watcher)
                try:
                    self._step(step, outcome)
                    if watcher:
                        watcher.check_all()  # the state the step settled in
                    self._timed(f"collect {number + 1}", self._collect_step, outcome, reference[number].objects)
                finally:
                    if watcher:
                        self.session.activity.listeners.remove(watcher)
                outcomes.append(outcome)
                if self.skip_reason:
                    break
        finally:
            self._timed("cleanup", self._cleanup)
        return outcomes

    # ------------------------------------------------------------------ one step
    def _step(self, step, outcome: Outcome) -> None:
        label = f"step {step.number}"
        self.settle_timeout = step.live_timeout or self.session.settings.steady_timeout
        if step.wait_before:
            time.sleep(step.wait_before)
        if step.apply is not None:
            self.manifests = step.apply
            self._timed(f"apply {label}", self._apply, outcome)
            self._timed(f"settle {label}", self._settle, outcome)
        elif step.update is not None:
            self._timed(f"update {label}", self._update, step.update, outcome)
            self._applied_at = time.monotonic()
            self._timed(f"settle {label}", self._settle, outcome)
        elif step.delete is not None:
            self._timed(f"delete {label}", self._delete, step.delete, outcome)
            self._applied_at = time.monotonic()
            self._timed(f"settle {label}", self._settle, outcome)
        elif step.fault is not None:
            self.quiet = max(self.session.settings.quiet, self.session.fault_quiet)
            for attempt in range(step.repeat):
                fault = step.fault
                try:
                    self._timed(f"fault {label}.{attempt + 1}", faults.inject, self.api, fault,
                                self.names.live(fault.get("namespace", "default")))
                except model.FaultError as exc:
                    outcome.input_errors.append(str(exc))
                    break
                self._applied_at = time.monotonic()
                self._timed(f"settle {label}.{attempt + 1}", self._settle, outcome)
        else:
            self._applied_at = time.monotonic()
            self._timed(f"settle {label}", self._settle, outcome)
        self.quiet = self.session.settings.quiet

    def _update(self, update: dict, outcome: Outcome) -> None:
        """A client's JSON Patch of a stored object (``kubectl patch --type json``): one PATCH request
        (``application/json-patch+json``) the apiserver applies and admits as an UPDATE. As render's
        ``_update``: a missing object or a patch that does not apply is an error of the case (checked
        on the object as it is stored, before the request), a refusal a rejection like an apply's."""
        namespace = update.get("namespace", "default")
        where = f"{update['kind']} {namespace}/{update['name']}"
        resource = self.api.resource(update["apiVersion"], update["kind"])
        live_namespace = self.names.live(namespace) if resource is not None and resource.namespaced else None
        stored = self.api.get(resource, live_namespace, update["name"]) if resource is not None else None
        if stored is None:
            outcome.input_errors.append(f"update: {where} does not exist")
            return
        try:
            patched = jsonpatch.apply_patch(stored, update["patch"])
        except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as exc:
            outcome.input_errors.append(f"update: JSON Patch on {update['kind']} {update['name']} failed: {exc}")
            return
        try:
            self.api.request("PATCH", resource.path(live_namespace, update["name"]),
                             [("fieldManager", FIELD_MANAGER)], update["patch"],
                             content_type="application/json-patch+json")
        except ApiError as exc:
            patched.setdefault("apiVersion", update["apiVersion"])
            patched.setdefault("kind", update["kind"])
            outcome.rejections.append(self._rejection(self.names.back(patched), exc))

    def _delete(self, delete: dict, outcome: Outcome) -> None:
        """A client's DELETE (``kubectl delete``) with the step's propagation policy (Background, as
        kubectl's default). As render's ``_delete``: a missing object is an error of the case; a
        refusal (a webhook on DELETE) is a rejection."""
        namespace = delete.get("namespace", "default")
        resource = self.api.resource(delete["apiVersion"], delete["kind"])
        live_namespace = self.names.live(namespace) if resource is not None and resource.namespaced else None
        stored = self.api.get(resource, live_namespace, delete["name"]) if resource is not None else None
        if stored is None:
            outcome.input_errors.append(f"delete: {delete['kind']} {namespace}/{delete['name']} does not exist")
            return
        try:
            self.api.delete(resource, live_namespace, delete["name"],
                            propagation=delete.get("propagationPolicy", "Background"))
        except ApiError as exc:
            stored.setdefault("apiVersion", delete["apiVersion"])
            stored.setdefault("kind", delete["kind"])
            outcome.rejections.append(self._rejection(self.names.back(stored), exc))

    def _not_steady(self, objects: list[dict], first: bool = False) -> list[str]:
        # The case's rules (the Trainer runtime in-use finalizer too), and no pod exit still to land.
        reasons = super()._not_steady(objects, first)
        if reasons and first:
            return reasons
        return reasons + faults.pending_exits([o for o in objects if o.get("kind") == "Pod"])

    def _collect_step(self, outcome: Outcome, rendered: list[dict]) -> None:
        self._collect(outcome, rendered)
        errors = outcome.reconcile_errors
        outcome.reconcile_errors = [e for e in errors if e not in self._errors_seen]
        self._errors_seen.update(errors)


class _NeverWatch:
    """Called by the session's :class:`~.steady.Activity` for every event; records the first
    sighting of each ``never`` item (as render does)."""

    def __init__(self, never: list[dict], run: ScenarioRun, outcome: Outcome):
        self.never, self.run, self.outcome = never, run, outcome
        self.reported: set[int] = set()
        self.namespaces = set(run.names.live_namespaces)
        self._lock = threading.Lock()
        # A coexistence is sighted on the cache, but each kind is its own watch stream: an update of
        # one kind (a leader pod turning Ready) may reach the cache after an object of another kind
        # made because of it (the worker StatefulSet). So a sighting is only noted, with the
        # resourceVersion of the event that showed it, and judged when the step has settled (every
        # stream caught up) on each object as it was at that revision: the versions of the kinds
        # the coexist patterns name are kept for the step (references, no copies). Revisions are
        # etcd's, ordered, on the local plane and on an etcd-backed cluster.
        self._coexist_kinds = {(p.get("apiVersion"), p.get("kind"))
                               for item in never if "coexist" in item for p in item["coexist"]}
        self._history: dict[str, list[tuple[int, dict | None]]] = {}
        self._sightings: dict[int, list[int]] = {}
        if self._coexist_kinds:
            for obj in run.session.cache.in_namespaces(self.namespaces):
                self._remember(obj, deleted=False)

    def _remember(self, obj: dict, deleted: bool) -> None:
        if (obj.get("apiVersion"), obj.get("kind")) not in self._coexist_kinds:
            return
        md = obj.get("metadata") or {}
        revision = _revision(obj)
        if revision is None or not md.get("uid"):
            return
        with self._lock:
            self._history.setdefault(md["uid"], []).append((revision, None if deleted else obj))

    def __call__(self, event_type: str, obj: dict) -> None:
        if (obj.get("metadata") or {}).get("namespace") not in self.namespaces:
            return
        if self._coexist_kinds:
            self._remember(obj, deleted=event_type == "DELETED")
        if event_type == "DELETED":
            return
        mine = names = None
        for i, item in enumerate(self.never):
            if i in self.reported:
                continue
            patterns = item.get("coexist") or [item]
            if not any(p.get("kind") == obj.get("kind") and p.get("apiVersion") == obj.get("apiVersion") for p in patterns):
                continue
            if names is None:
                # Name and labels first (the candidates test, cheap): translating a whole object back
                # for each of a restart's thousands of pod events cost more than the rest of the watch.
                md = obj.get("metadata") or {}
                names = {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"), "metadata": self.run.names.back(
                    {k: md[k] for k in ("name", "generateName", "namespace", "labels") if k in md})}
            if not any(expectations.candidates(p, [names]) for p in patterns):
                continue
            mine = mine if mine is not None else self.run.names.back(obj)
            if not any(expectations.never_seen([p], lambda a, k: [mine]) for p in patterns):
                continue
            if "coexist" in item:
                self._sighted(i, item, obj)
            else:
                self._report(i, expectations.never_seen([item], lambda a, k: [mine]))

    def _sighted(self, i: int, item: dict, obj: dict) -> None:
        if not self._seen_now(item):
            return
        revision = _revision(obj)
        if revision is None:
            self._check(i, item)  # no revision to judge it at: as sighted
            return
        with self._lock:
            self._sightings.setdefault(i, []).append(revision)

    def _seen_now(self, item: dict) -> list[str]:
        def objects_of(api_version: str, kind: str) -> list[dict]:
            return [o for o in self.run.session.cache.in_namespaces(self.namespaces)
                    if o.get("kind") == kind and o.get("apiVersion") == api_version]
        return expectations.never_seen([item], lambda a, k: self.run.names.back(objects_of(a, k)))

    def _at(self, revision: int) -> list[dict]:
        """The objects of the coexist kinds as they were at ``revision``."""
        with self._lock:
            histories = [list(h) for h in self._history.values()]
        objects = []
        for versions in histories:
            then = None
            for rv, version in sorted(versions, key=lambda v: v[0]):
                if rv > revision:
                    break
                then = version
            if then is not None:
                objects.append(then)
        return objects

    def check_all(self) -> None:
        """Once the step has settled: each noted sighting at its revision, then the settled state."""
        for i, item in enumerate(self.never):
            for revision in self._sightings.get(i, []):
                if i in self.reported:
                    break
                objects = self.run.names.back(self._at(revision))
                self._report(i, expectations.never_seen(
                    [item], lambda a, k: [o for o in objects if o.get("apiVersion") == a and o.get("kind") == k]))
            if i not in self.reported:
                self._check(i, item)

    def _check(self, i: int, item: dict) -> None:
        def objects_of(api_version: str, kind: str) -> list[dict]:
            found = [o for o in self.run.session.cache.in_namespaces(self.namespaces)
                     if o.get("kind") == kind and o.get("apiVersion") == api_version]
            return self.run.names.back(found)
        self._report(i, expectations.never_seen([item], objects_of))

    def _report(self, i: int, seen: list[str]) -> None:
        if seen:
            with self._lock:
                if i not in self.reported:
                    self.reported.add(i)
                    self.outcome.never_violations += seen


def _revision(obj: dict) -> int | None:
    text = (obj.get("metadata") or {}).get("resourceVersion", "")
    return int(text) if isinstance(text, str) and text.isdigit() else None
