"""The in-memory :class:`~reconciler.cluster.Cluster` interface, backed by a real API server.

Controllers and webhooks written for render mode call ``find/get/list/create/update/delete/now/
record_error`` and read ``profile``; :class:`LiveCluster` gives them the same calls over HTTP, so
the very same ``reconcile(cluster, obj)`` code runs live:

* reads come from the informer cache (a miss falls back to a GET, so an object created a moment
  ago by another client is never taken for absent) - of the kinds an informer keeps there; a kind
  without one (the operator informs only what its controllers declare they read) is read from the
  API; webhooks get ``reads="api"``, every read a request, because admission must see what was
  written just before (a runtime, then its TrainJob);
* ``create`` is a POST (render's create fails on an existing object, and so does this one),
  ``update`` a PUT carrying the object's resourceVersion - spec/metadata to the resource, status
  to its ``/status`` subresource when it has one - and ``delete`` passes the propagation policy
  and a zero grace period for a force delete; every write names a field manager;
* what the apiserver refuses comes back as render's exceptions: 422/403 as
  :class:`~reconciler.errors.Rejection` (message verbatim), 409 AlreadyExists as
  :class:`~reconciler.cluster.AlreadyExists`, a stale write as :class:`Conflict` (the worker
  retries it), a GET of nothing as :class:`~reconciler.cluster.NotFound`;
* ``record_error`` also emits a Warning Event (reason ``ReconcileError``), the only place a
  reconcile error becomes visible to someone watching the cluster.

Objects handed to controllers are copies; writes refresh the cache at once (write-through: a
delete too, when the object stays with a deletionTimestamp) and write the new resourceVersion
back into the caller's dict, as render's in-place update does.
"""

from __future__ import annotations

import copy
import datetime as dt
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from .. import meta
from ..cluster import AlreadyExists, NotFound
from ..errors import Rejection
from ..profiles import Profile
from .informer import Cache
from .rest import Api, ApiError

log = logging.getLogger(__name__)

EVENT_REASON = "ReconcileError"
#: Deletes :meth:`LiveCluster.delete_all` sends at once (JobSet's deleteJobs: constants.MaxParallelism).
PARALLEL_DELETES = 50
EVENT_COMPONENT = "training-conformance-reference"
#: Kinds read from the API for want of an informer, each logged once.
_UNINFORMED_LOGGED: set[tuple[str, str]] = set()


class Conflict(Exception):
    """A write carried a stale resourceVersion; the object is reconciled again."""


@dataclass
class LiveRejection(Rejection):
    """A 422/403 from the apiserver, with its own message (render composes one from errors)."""

    api_code: int = 422
    api_message: str = ""

    @property
    def code(self) -> int:
        return self.api_code

    @property
    def message(self) -> str:
        return self.api_message

    def __str__(self) -> str:
        return self.api_message


def translate(exc: ApiError, obj: dict) -> Exception:
    """Render's exception for an apiserver refusal of a write of ``obj``."""
    if exc.code == 409 and exc.reason == "AlreadyExists":
        return AlreadyExists(f"{meta.describe(obj)} already exists")
    if exc.code == 409:
        return Conflict(f"{meta.describe(obj)}: {exc.message}")
    if exc.code in (403, 422) and exc.reason in ("Forbidden", "Invalid"):
        kind = "webhook" if "admission webhook" in exc.message else "schema"
        return LiveRejection(kind, meta.ref(obj), [], api_code=exc.code, api_message=exc.message)
    return exc


@dataclass
class LiveCluster:
    api: Api
    profile: Profile
    cache: Cache | None = None
    #: "cache" (controllers) or "api" (webhooks: every read is a request).
    reads: str = "cache"
    field_manager: str = "training-conformance"
    # Filled by the suites' install() functions, exactly as on a render Cluster.
    controllers: list = field(default_factory=list)
    webhooks: list = field(default_factory=list)
    mutators: dict = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    reconcile_errors: list[str] = field(default_factory=list)
    writes: int = 0
    _reported: set = field(default_factory=set, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def for_manager(self, name: str) -> "LiveCluster":
        """The same cluster, writing as field manager ``name`` (one per controller)."""
        view = copy.copy(self)
        view.field_manager = name
        return view

    # ------------------------------------------------------------------ time
    def now(self) -> str:
        return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")

    def tick(self, seconds: int = 1) -> None:
        """Render's logical clock; real time passes on its own here."""

    # ------------------------------------------------------------------ reads
    def _cached(self, group: str, kind: str) -> bool:
        """Whether reads of this kind come from the cache (an informer keeps it there)."""
        if self.reads != "cache" or self.cache is None:
            return False
        if self.cache.holds(group, kind):
            return True
        if (group, kind) not in _UNINFORMED_LOGGED:
            _UNINFORMED_LOGGED.add((group, kind))
            log.warning("no informer for %s (group %r): read from the API - a controller that reads it "
                        "should name it in its reads", kind, group)
        return False

    def find(self, group: str, kind: str, namespace: str, name: str) -> dict | None:
        key = (group, kind, namespace or "", name)
        cached = self._cached(group, kind)
        if cached:
            found = self.cache.get(key)
            if found is not None:
                return meta.clone(found)
        resource = self._resource(group, kind)
        if resource is None:
            return None
        found = self.api.get(resource, namespace or None, name)
        if found is None:
            return None
        found.setdefault("apiVersion", resource.api_version)
        found.setdefault("kind", kind)
        if cached:
            self.cache.put(meta.clone(found))
        return found

    def get(self, group: str, kind: str, namespace: str, name: str) -> dict:
        found = self.find(group, kind, namespace, name)
        if found is None:
            raise NotFound(f"{kind} {namespace}/{name} not found")
        return found

    def find_uid(self, uid: str) -> dict | None:
        found = self.cache.by_uid(uid) if self.cache is not None else None
        return meta.clone(found) if found is not None else None

    def list(self, group: str, kind: str, namespace: str | None = None, owner: dict | None = None) -> list[dict]:
        if self._cached(group, kind):
            if owner is not None:
                found = [o for o in self.cache.dependents(owner["metadata"].get("uid", ""))
                         if meta.key(o)[:2] == (group, kind) and (namespace is None or meta.key(o)[2] == namespace)]
            else:
                found = self.cache.list(group, kind, namespace)
            return meta.clone(found)
        resource = self._resource(group, kind)
        if resource is None:
            return []
        items = self.api.list(resource, namespace).get("items", [])
        for item in items:
            item.setdefault("apiVersion", resource.api_version)
            item.setdefault("kind", kind)
        if owner is not None:
            items = [o for o in items if meta.is_owned_by(o, owner)]
        return items

    def list_dependents(self, owner: dict) -> list[dict]:
        return meta.clone(self.cache.dependents(owner["metadata"].get("uid", ""))) if self.cache else []

    def all_objects(self) -> list[dict]:
        return meta.clone(self.cache.all()) if self.cache else []

    def _resource(self, group: str, kind: str):
        for api_version in self._versions(group):
            resource = self.api.resource(api_version, kind)
            if resource is not None:
                return resource
        return None

    def _versions(self, group: str) -> list[str]:
        if group == "":
            return ["v1"]
        served = sorted({v for g, v, _ in _crd_kinds(self.profile) if g == group})
        return [f"{group}/{v}" for v in served] or [f"{group}/v1"]

    # ------------------------------------------------------------------ writes
    def create(self, obj: dict) -> dict:
        body = meta.clone(obj)
        body.setdefault("metadata", {})
        try:
            stored = self.api.create(body, self.field_manager)
        except ApiError as exc:
            raise translate(exc, body) from None
        return self._stored(stored)

    def update(self, obj: dict) -> dict:
        """PUT what changed: spec/metadata to the resource, status to ``/status``."""
        resource = self.api.resource_of(obj)
        before = self.cache.get(meta.key(obj)) if self.cache is not None else None
        main_changed = before is None or _without_status(before) != _without_status(obj)
        status_changed = resource.has_status and (before is None or before.get("status") != obj.get("status"))
        stored = None
        try:
            if main_changed or not resource.has_status:
                stored = self.api.replace(obj, self.field_manager)
                obj["metadata"]["resourceVersion"] = stored["metadata"]["resourceVersion"]
            if status_changed:
                stored = self.api.replace(obj, self.field_manager, subresource="status")
                obj["metadata"]["resourceVersion"] = stored["metadata"]["resourceVersion"]
        except ApiError as exc:
            raise translate(exc, obj) from None
        return self._stored(stored, update=True) if stored is not None else obj

    def delete(self, obj: dict, propagation: str = "Background", grace: bool = True) -> None:
        self._delete(obj, propagation, grace)
        self.writes += 1

    def delete_all(self, objs: list[dict], propagation: str = "Background") -> None:
        """Delete ``objs`` side by side (up to :data:`PARALLEL_DELETES` at once), as a controller that
        spreads its deletes over workers does; once all are done, the first error is raised."""
        if len(objs) < 2:
            for obj in objs:
                self.delete(obj, propagation)
            return
        with ThreadPoolExecutor(min(len(objs), PARALLEL_DELETES)) as pool:
            futures = [pool.submit(self._delete, obj, propagation, True) for obj in objs]
        errors = [f.exception() for f in futures if f.exception() is not None]
        self.writes += len(futures) - len(errors)
        if errors:
            raise errors[0]

    def _delete(self, obj: dict, propagation: str, grace: bool) -> None:
        resource = self.api.resource_of(obj)
        md = obj["metadata"]
        try:
            answer = self.api.delete(resource, md.get("namespace"), md["name"], propagation=propagation,
                                     grace_seconds=None if grace else 0)
        except ApiError as exc:
            raise translate(exc, obj) from None
        if self.cache is not None and isinstance(answer, dict) and answer.get("kind") == obj.get("kind") \
                and self.cache.holds(meta.group_of(obj.get("apiVersion", "")), obj.get("kind", "")) \
                and (answer.get("metadata") or {}).get("deletionTimestamp"):
            # Still there, being deleted (graceful, or waiting for finalizers): the next reconcile sees it
            # so - as render's in-place delete - and does not delete it a second time.
            answer.setdefault("apiVersion", obj.get("apiVersion"))
            self.cache.refresh(meta.clone(answer))

    def _stored(self, stored: dict, update: bool = False) -> dict:
        """Write-through: the answer goes into the cache - an update's only over the object still
        cached, since the watch may have seen it deleted before the answer arrived, and putting it
        back left a ghost the controllers reconciled for ever (each status write a 404)."""
        self.writes += 1
        if self.cache is not None and self.cache.holds(meta.group_of(stored.get("apiVersion", "")),
                                                       stored.get("kind", "")):
            if update:
                self.cache.refresh(meta.clone(stored))
            else:
                self.cache.put(meta.clone(stored))
        return stored

    # ------------------------------------------------------------------ errors
    def record_error(self, obj: dict, message: str) -> None:
        entry = f"{meta.describe(obj)}: {message}"
        with self._lock:
            if entry in self.reconcile_errors:
                return
            self.reconcile_errors.append(entry)
        log.warning("reconcile error: %s", entry)
        self._emit_event(obj, message)

    def record_event(self, obj: dict, type_: str, reason: str, message: str) -> None:
        """An Event a controller records (render's ``Cluster.record_event``), written as a real Event."""
        self._emit_event(obj, message, type_=type_, reason=reason)

    def _emit_event(self, obj: dict, message: str, type_: str = "Warning", reason: str = EVENT_REASON) -> None:
        md = obj.get("metadata") or {}
        now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        event = {
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"generateName": f"{md.get('name', 'object')}.", "namespace": md.get("namespace") or "default"},
            "involvedObject": {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"), "name": md.get("name"),
                               "namespace": md.get("namespace"), "uid": md.get("uid")},
            "reason": reason, "message": message, "type": type_,
            "source": {"component": EVENT_COMPONENT}, "reportingComponent": EVENT_COMPONENT,
            "firstTimestamp": now, "lastTimestamp": now, "count": 1,
        }
        try:
            self.api.create(event, self.field_manager)
        except ApiError as exc:  # the namespace may be going away; the error is logged above
            log.info("event for %s not recorded: %s", meta.describe(obj), exc)


def _without_status(obj: dict) -> dict:
    out = {k: v for k, v in obj.items() if k != "status"}
    out["metadata"] = {k: v for k, v in (obj.get("metadata") or {}).items()
                       if k not in ("resourceVersion", "managedFields")}
    return out


def _crd_kinds(profile: Profile):
    from .. import crds
    return crds.schemas(profile.crd_dirs).keys()
