"""One case against the live cluster: isolate, apply, wait until steady, collect, clean up.

Step by step (each bounded by a timeout):

1. every namespace the case uses gets a fresh live namespace (:mod:`.isolation`), and the case
   waits for its ``default`` ServiceAccount in the informers' cache - Pods are refused without it;
   cluster-scoped inputs left over by an interrupted run are deleted first;
2. inputs are created one by one in render's order (:func:`reconciler.apply_order`), as
   ``kubectl create`` would; a refusal becomes a rejection with the apiserver's code, reason and
   message, its field errors read from the Status (:mod:`.rejections`) - in external mode after
   retrying a TrainJob the operator's stale runtime cache denied (:mod:`.runtime_cache`);
3. wait until steady (:mod:`.steady`);
4. list every kind the profile serves plus the built-in kinds render models in the namespaces,
   and the cluster-scoped inputs by name; Warning Events that report a failed reconcile become
   reconcile errors, the other Events the outcome's ``events`` (:mod:`.events`); namespaces are
   translated back, Go's zero values in custom
   resources (:mod:`.gozero`) and platform fields (:mod:`.platform`) dropped, keys ordered like
   render's (:mod:`.keyorder`);
5. namespaces are deleted in the background; cluster-scoped inputs are deleted and waited for,
   since the next case may create the same names (both read in the informers' cache where it has them).
"""

from __future__ import annotations

import copy
import re
import time

import reconciler
from reconciler import crds as crd_files, meta, profiles
from reconciler.live.operator import builtin_kinds
from reconciler.live.rest import ApiError
from reconciler.live.waits import wait_until

from ..outcome import Outcome, RejectionRecord
from . import events, external, gozero, keyorder, platform, rejections, runtime_cache
from .isolation import NamespaceMap
from .session import LiveSession
from .steady import FirstReason, cluster_runtimes_not_released, reasons_not_steady, runtimes_not_marked_in_use

FIELD_MANAGER = "training-conformance"
CASE_LABEL = "training-conformance.io/case"


class CaseRun:
    def __init__(self, session: LiveSession, profile: str, manifests: list[dict], label: str = ""):
        self.session, self.profile, self.manifests = session, profiles.get(profile), manifests
        self.api = session.ensure(profile)
        self.names = NamespaceMap(session.run_token)
        self.label = label
        self.timings: dict[str, float] = {}
        self.cluster_scoped: list[dict] = []
        #: Keys of the cluster-scoped inputs this case uses (created by it or by a case in flight).
        self.holding: set[str] = set()
        #: runtime_cache.input_key of every input created so far (all steps).
        self.created: set[tuple] = set()
        #: ... and of every input the apiserver refused (never there: cleanup leaves it alone).
        self.refused: set[tuple] = set()
        self._applied_at = time.monotonic()
        #: Seconds without any event that end a settle (see steady.py), and the longest a settle may take.
        self.quiet = session.settings.quiet
        self.settle_timeout = session.settings.steady_timeout
        #: Set when Pods wait for a scheduler the cluster does not run: the case is skipped.
        self.skip_reason: str | None = None
        #: Event uid -> emissions already reported (a scenario reports each step's own; None: all).
        self.events_seen: dict[str, int] | None = None

    # ------------------------------------------------------------------ the steps
    def run(self) -> Outcome:
        outcome = Outcome(objects=[])
        try:
            self._timed("prepare", self._prepare, outcome)
            self._timed("apply", self._apply, outcome)
            self._timed("settle", self._settle, outcome)
            self._timed("collect", self._collect, outcome)
        finally:
            self._timed("cleanup", self._cleanup)
        return outcome

    def _timed(self, name: str, step, *args) -> None:
        started = time.monotonic()
        try:
            step(*args)
        finally:
            self.timings[name] = time.monotonic() - started

    def _namespaced(self, obj: dict) -> bool | None:
        resource = self.api.resource(obj.get("apiVersion", ""), obj.get("kind", ""))
        return None if resource is None else resource.namespaced

    def _prepare(self, outcome: Outcome) -> None:
        for obj in self.manifests:
            namespaced = self._namespaced(obj)
            if namespaced:
                self.names.live((obj.get("metadata") or {}).get("namespace") or "default")
            elif namespaced is False and obj.get("kind") != "Namespace":
                self.cluster_scoped.append(obj)
        self._delete_cluster_scoped()
        namespace_inputs = {(o.get("metadata") or {}).get("name") for o in self.manifests
                            if o.get("kind") == "Namespace" and o.get("apiVersion") == "v1"}
        labels, annotations = self.session.namespace_metadata()
        for original, live in list(self.names.forward.items()):
            if original in namespace_inputs:
                continue  # created from the case's own manifest in _apply
            metadata = {"name": live, "labels": {CASE_LABEL: _label_value(self.label), **labels}}
            if annotations:
                metadata["annotations"] = dict(annotations)
            self.api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": metadata}, FIELD_MANAGER)
        self._wait_service_accounts(exclude=namespace_inputs)

    def _wait_service_accounts(self, exclude: set) -> None:
        """Wait for each new namespace's ``default`` ServiceAccount, as the session's informer sees it
        (a LIST and a WATCH per namespace cost kube-apiserver a twentieth of a live table's requests)."""
        waiting = [live for original, live in self.names.forward.items() if original not in exclude]
        cache = self.session.cache

        def missing() -> list[str]:
            return [f"ServiceAccount default in {live} (kube-controller-manager creates it)" for live in waiting
                    if cache.get(("", "ServiceAccount", live, "default")) is None]

        left = self.session.activity.wait(waiting, missing, 0.0, self.session.settings.steady_timeout,
                                          since=time.monotonic())
        if left:
            raise TimeoutError(f"no {left[0]} after {self.session.settings.steady_timeout:.0f}s")

    def _apply(self, outcome: Outcome) -> None:
        for obj in sorted(self.manifests, key=reconciler.apply_order):
            namespaced = self._namespaced(obj)
            if namespaced is None:
                outcome.input_errors.append(
                    f"{meta.describe(obj)}: no kind {obj.get('kind')!r} is registered for version "
                    f"{obj.get('apiVersion')!r} (the cluster does not serve it)")
                continue
            body = self.names.rewrite_input(obj, namespaced)
            if obj.get("kind") == "Namespace" and obj.get("apiVersion") == "v1":
                labels, annotations = self.session.namespace_metadata()
                md = body.setdefault("metadata", {})
                md["labels"] = {**(md.get("labels") or {}), **labels}
                if annotations:
                    md["annotations"] = {**(md.get("annotations") or {}), **annotations}
            try:
                self._create(obj, body)
            except ApiError as exc:
                outcome.rejections.append(self._rejection(obj, exc))
                self.refused.add(runtime_cache.input_key(obj))
                continue
            self.created.add(runtime_cache.input_key(obj))
            if obj.get("kind") == "Namespace" and obj.get("apiVersion") == "v1":
                self._wait_service_accounts(exclude=set(self.names.forward) - {obj["metadata"]["name"]})
        self._applied_at = time.monotonic()

    def _create(self, obj: dict, body: dict) -> None:
        if any(obj is shared for shared in self.cluster_scoped):
            # Cases in flight together may share it (conformance.live.shared): the first creates it.
            key = _shared_key(obj)
            self.session.shared.create(key, lambda: self.api.create(body, FIELD_MANAGER))
            self.holding.add(key)
        elif self.session.settings.operator == "external" and obj.get("kind") == "TrainJob":
            # The operator's webhook may not have its cache updated with the runtime this case just created.
            runtime_cache.create(lambda: self.api.create(body, FIELD_MANAGER),
                                 lambda exc: runtime_cache.cache_miss(exc.message, obj, self.created))
        else:
            self.api.create(body, FIELD_MANAGER)

    def _rejection(self, obj: dict, exc: ApiError) -> RejectionRecord:
        md = obj.get("metadata") or {}
        status = self.names.back(exc.status) if exc.status else {"message": exc.message}
        message, errors = rejections.in_render_order(meta.group_of(obj.get("apiVersion", "")), obj.get("kind", ""),
                                                     self.names.back(exc.message), rejections.field_errors(status))
        return RejectionRecord(
            kind=obj.get("kind", ""), name=md.get("name", ""), namespace=md.get("namespace"),
            code=exc.code, reason=exc.reason or "", message=message, errors=errors)

    def _settle(self, outcome: Outcome) -> None:
        namespaces = self.names.live_namespaces
        cache = self.session.cache

        ready = FirstReason(cache, namespaces, lambda objects: self._not_steady(objects, first=True))

        def explain() -> list[str]:
            return self._not_steady(cache.in_namespaces(namespaces))

        reasons = self.session.activity.wait(namespaces, ready, self.quiet, self.settle_timeout, since=self._applied_at,
                                             settled=self.session.operator_behind, explain=explain)
        if reasons:
            outcome.input_errors.append(
                f"live: no steady state after {self.settle_timeout:.0f}s: " + "; ".join(
                    self.names.back(reasons[:5])))
            return

        def unscheduled() -> list[str]:
            return [f"{meta.describe(o)} (schedulerName {o['spec']['schedulerName']})" for o in cache.in_namespaces(namespaces)
                    if o.get("kind") == "Pod" and not _default_scheduler(o) and not (o.get("spec") or {}).get("nodeName")]

        if unscheduled():
            # Another scheduler may run in this cluster (a vendor's); give it a moment to bind.
            waiting = self.session.activity.wait(namespaces, unscheduled, 0.0, self.session.settings.scheduler_grace,
                                                 since=time.monotonic())
            if not waiting:  # bound meanwhile: wait for those Pods to start
                reasons = self.session.activity.wait(namespaces, ready, self.quiet, self.settle_timeout,
                                                     since=time.monotonic(), settled=self.session.operator_behind,
                                                     explain=explain)
                if reasons:
                    outcome.input_errors.append("live: no steady state after binding: " + "; ".join(
                        self.names.back(reasons[:5])))
            else:
                schedulers = sorted({p.rsplit("schedulerName ", 1)[1].rstrip(")") for p in waiting})
                self.skip_reason = (f"needs scheduler {', '.join(schedulers)}, which this cluster does not run: "
                                    f"{len(waiting)} pod(s) stayed unscheduled for "
                                    f"{self.session.settings.scheduler_grace:.0f}s")

    def _not_steady(self, objects: list[dict], first: bool = False) -> list[str]:
        """What is still to change (with ``first``: the first thing found, if any)."""
        reasons = reasons_not_steady(objects, status_too=True, first=first)
        if reasons and first:
            return reasons
        if self.profile.runtime_in_use_finalizer:
            trainjobs = [o for o in objects if o.get("kind") == "TrainJob"]
            reasons += runtimes_not_marked_in_use(trainjobs, self._runtime_of)
            runtimes = [self.session.cache.get(("trainer.kubeflow.org", "ClusterTrainingRuntime", "", o["metadata"]["name"]))
                        for o in self.cluster_scoped if o.get("kind") == "ClusterTrainingRuntime"]
            reasons += cluster_runtimes_not_released([r for r in runtimes if r is not None], trainjobs)
        return reasons

    def _runtime_of(self, trainjob: dict) -> dict | None:
        ref = (trainjob.get("spec") or {}).get("runtimeRef") or {}
        kind = ref.get("kind", "ClusterTrainingRuntime")
        namespace = "" if kind == "ClusterTrainingRuntime" else trainjob["metadata"].get("namespace", "")
        return self.session.cache.get((ref.get("apiGroup", "trainer.kubeflow.org"), kind, namespace, ref.get("name", "")))

    def _kinds(self) -> list[tuple[str, str]]:
        return [(f"{g}/{v}", k) for g, v, k in crd_files.schemas(self.profile.crd_dirs)] + builtin_kinds()

    def _collect(self, outcome: Outcome, rendered: list[dict] | None = None) -> None:
        """``rendered``: render's objects for the same state, for key order (default: render the inputs).

        Namespaced objects come from the session's informers: a case is collected once steady,
        i.e. once its namespaces were quiet for a while, so the cache holds what a LIST would
        return (which cost kube-apiserver a dozen requests per case)."""
        kinds = {(api_version, kind) for api_version, kind in self._kinds()}
        objects = [meta.clone(o) for o in self.session.cache.in_namespaces(self.names.live_namespaces)
                   if (o.get("apiVersion"), o.get("kind")) in kinds]
        for obj in self.cluster_scoped + [o for o in self.manifests if o.get("kind") == "Namespace"]:
            resource = self.api.resource(obj["apiVersion"], obj["kind"])
            name = obj["metadata"]["name"]
            if obj.get("kind") == "Namespace":
                name = self.names.live(name)
            found = self._read_cluster_scoped(obj, resource, name) if resource else None
            if found is not None:
                objects += _typed([found], resource)
        outcome.input_errors += self._unsteered(objects)
        # Every name of the outcome: a hash of "<namespace>/<name>" (JobSet's job-key, LWS's group-key)
        # is translated back with the namespace.
        named = [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in objects
                 if o["metadata"].get("namespace") and o["metadata"].get("name")]
        objects = self.names.back(objects, named)
        objects = [_without_namespace_platform(o, self.session.namespace_metadata()) for o in objects]
        if rendered is None:
            rendered = reconciler.render(copy.deepcopy(self.manifests), self.profile).objects
        # Go's zero values in custom resources first: platform.strip reads the JobSet's templates.
        objects = platform.strip(gozero.strip(objects, rendered), self.manifests, rendered)
        outcome.objects = keyorder.reorder_like(objects, rendered)
        found = self._events()
        outcome.reconcile_errors = self._reconcile_errors(found)
        outcome.events = self.names.back(events.recorded(found, self.events_seen), named)

    def _unsteered(self, objects: list[dict]) -> list[str]:
        """With the harness's pod lifecycle, a case pod on any other Node means steering failed:
        the case cannot be judged (its pod may never start), and it says so."""
        pods = self.session.pods
        if pods is None:
            return []
        return [f"live: Pod {self.names.back(o['metadata']['namespace'])}/{o['metadata']['name']} was bound to Node "
                f"{o['spec']['nodeName']}, not to one of the harness's own Nodes (steering failed)"
                for o in objects if o.get("kind") == "Pod" and (o.get("spec") or {}).get("nodeName")
                and not pods.owns_node(o["spec"]["nodeName"])]

    def _events(self) -> list[dict]:
        """The Events in the case's namespaces (from the informers' cache)."""
        return [meta.clone(o) for o in self.session.cache.in_namespaces(self.names.live_namespaces)
                if o.get("kind") == "Event" and o.get("apiVersion") == "v1"]

    def _reconcile_errors(self, found: list[dict]) -> list[str]:
        """Warning Events that report a failed reconcile (:mod:`.events`; upstream reasons in external mode)."""
        errors = []
        for error in events.reconcile_errors(found, external=self.session.settings.operator == "external"):
            error = self.names.back(error)
            if error not in errors:
                errors.append(error)
        return errors

    def _cleanup(self) -> None:
        """Delete the case's inputs, then its namespaces - except on a plane this run started and
        throws away: there the namespaces stay (their inputs deleted, so the garbage collector
        removes what came of them), since deleting a namespace costs kube-controller-manager's
        namespace controller a LIST and a DELETECOLLECTION of every resource type (two thirds of
        all API requests of a live table)."""
        # Custom-resource inputs first (a TrainJob): a runtime's in-use finalizer goes only once no
        # TrainJob refers to it, and waiting for the namespace controller to get to them took
        # seconds per case.
        keep_namespaces = self.session.owns_cluster
        for obj in self.manifests:
            resource = self.api.resource(obj.get("apiVersion", ""), obj.get("kind", ""))
            name = (obj.get("metadata") or {}).get("name")
            if resource is None or not resource.namespaced or not name:
                continue
            if not (gozero.is_custom(obj) or keep_namespaces):
                continue
            key = runtime_cache.input_key(obj)
            if key in self.refused and key not in self.created:
                continue  # refused at creation: nothing to delete (a DELETE would be a 404)
            try:
                self.api.delete(resource, self.names.live((obj.get("metadata") or {}).get("namespace") or "default"),
                                name, propagation="Background")
            except ApiError:
                pass
        ns_resource = self.api.must_resource("v1", "Namespace")
        for live in [] if keep_namespaces else self.names.live_namespaces:
            try:
                self.api.delete(ns_resource, None, live, propagation="Background")
            except ApiError:
                pass
        self._delete_cluster_scoped()

    def _delete_cluster_scoped(self) -> None:
        """Delete the case's cluster-scoped inputs (left over, or its own once no other case in
        flight uses them) and wait until gone; a same-named object this harness did not create is
        left alone and makes the case an error."""
        foreign: list[str] = []
        for obj in self.cluster_scoped:
            key = _shared_key(obj)
            if key in self.holding:
                self.holding.discard(key)
                self.session.shared.release(key, lambda o=obj: self._delete_input(o, foreign, ours=True))
            else:
                self.session.shared.when_unused(key, lambda o=obj: self._delete_input(o, foreign))
        if foreign:
            raise RuntimeError(f"{', '.join(foreign)} already exist(s) in the cluster, not created by this harness "
                               f"(field manager {FIELD_MANAGER}); the case needs the name(s) for its own inputs and "
                               f"never touches the cluster's objects - remove them or use another cluster")

    def _cached_key(self, resource, name: str) -> tuple | None:
        """The session cache's key of a cluster-scoped object, when an informer keeps its kind there."""
        key = (resource.group, resource.kind, "", name)
        return key if self.session.cache.holds(resource.group, resource.kind) else None

    def _read_cluster_scoped(self, obj: dict, resource, name: str) -> dict | None:
        """A cluster-scoped object as the informers last saw it (the case is steady, so the cache is
        what a GET would return); from the API when no informer keeps its kind, or when the cache
        has not seen an input this case created yet."""
        key = self._cached_key(resource, name)
        found = self.session.cache.get(key) if key else None
        if found is not None:
            return meta.clone(found)
        return self.api.get(resource, None, name)

    def _delete_input(self, obj: dict, foreign: list[str], ours: bool = False) -> None:
        """Delete one cluster-scoped input (``ours``: this case created it) and wait until it is
        gone - read from, and waited for in, the informers' cache when it holds the object (a GET,
        a LIST and a WATCH per case were a tenth of a trainer table's requests). A leftover is
        looked for in the cache only: the informers listed every object when the profile started,
        and saw every create since. One of ours the cache has not seen yet is read from the API,
        and its deletion waited for there."""
        resource = self.api.resource(obj["apiVersion"], obj["kind"])
        name = (obj.get("metadata") or {}).get("name")
        if resource is None or not name:
            return
        key = self._cached_key(resource, name)
        cache = self.session.cache
        existing = cache.get(key) if key else None
        if existing is None:
            key = None  # not in the cache: its deletion is waited for through the API
            if self._cached_key(resource, name) is None or ours:
                existing = self.api.get(resource, None, name)
        if existing is None:
            return
        if not external.created_by_harness(existing, FIELD_MANAGER):
            foreign.append(f"{obj['kind']} {name}")
            return
        if self.api.delete(resource, None, name, propagation="Background") is None:
            return
        what = f"{obj['kind']} {name} to be deleted"
        timeout = self.session.settings.steady_timeout
        if key is None:
            wait_until(self.api, resource, lambda items, n=name: all(i["metadata"]["name"] != n for i in items),
                       timeout, what=what)
            return
        left = self.session.activity.wait([""], lambda: [] if cache.get(key) is None else [what], 0.0, timeout,
                                          since=time.monotonic())
        if left:
            raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {what}")


def _shared_key(obj: dict) -> str:
    return f"{obj.get('apiVersion')}/{obj.get('kind')}/{(obj.get('metadata') or {}).get('name')}"


def _default_scheduler(pod: dict) -> bool:
    return (pod.get("spec") or {}).get("schedulerName") in (None, "", "default-scheduler")


def _label_value(text: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9_.-]+", "-", text)[-63:].strip("-_.")
    return cleaned or "case"


def _typed(items: list[dict], resource) -> list[dict]:
    for item in items:
        item.setdefault("apiVersion", resource.api_version)
        item.setdefault("kind", resource.kind)
    return items


def _without_namespace_platform(obj: dict, ours: tuple[dict, dict] = ({}, {})) -> dict:
    """A Namespace input as the case wrote it: no ``kubernetes.io/metadata.name`` label, no
    ``kubernetes`` finalizer and no ``status: {phase: Active}``, added to every namespace by the
    apiserver and its namespace controller, and none of the
    labels and annotations this harness adds (``ours``: the run, the steering of its pods)."""
    if obj.get("kind") != "Namespace":
        return obj
    md = obj["metadata"]
    if obj.get("status") == {"phase": "Active"}:
        del obj["status"]  # the namespace controller's, kept only by a scenario's golden (it keeps status)
    labels = md.get("labels") or {}
    if labels.get("kubernetes.io/metadata.name") == md.get("name"):
        del labels["kubernetes.io/metadata.name"]
    for field, added in zip(("labels", "annotations"), ours):
        values = md.get(field) or {}
        for key, value in added.items():
            if values.get(key) == value:
                del values[key]
        if field in md and not values:
            md.pop(field)
    if (obj.get("spec") or {}).get("finalizers") == ["kubernetes"]:
        del obj["spec"]["finalizers"]
        if not obj["spec"]:
            del obj["spec"]
    return obj
