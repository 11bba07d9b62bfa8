"""List + watch into a shared cache, as client-go's informers do.

One :class:`Informer` thread per resource lists every object, then watches from the list's
resourceVersion; a 410 Gone or a broken stream means list again. Every event goes to a handler
(the operator's work queue); the :class:`Cache` keeps the newest copy of each object, indexed by
kind, UID and owner UID, so that controllers read without a request - as controller-runtime's
cached client does.
"""

from __future__ import annotations

import logging
import threading
import time

from .. import meta
from .rest import Api, ApiError, Resource

log = logging.getLogger(__name__)

Key = tuple[str, str, str, str]
#: Seconds a watch stays open before the server ends it and we re-watch from the last version.
WATCH_SECONDS = 55


def _rv(obj: dict) -> int | None:
    text = (obj.get("metadata") or {}).get("resourceVersion", "")
    return int(text) if text.isdigit() else None


class Cache:
    """The newest known copy of every watched object. Thread-safe; hands out the stored dicts,
    which callers must not change (the facade copies them). Indexed by kind and namespace, so a
    lookup costs what it returns, not what the cache holds (a live run keeps thousands of objects).
    A key enters the kind and namespace indexes when it is first seen and leaves them when it is
    forgotten, so each index lists its keys in the order first seen: reading one needs no sort."""

    def __init__(self):
        self._lock = threading.RLock()
        self._objects: dict[Key, dict] = {}
        self._by_kind: dict[tuple[str, str], dict[Key, None]] = {}
        self._by_namespace: dict[str, dict[Key, None]] = {}
        self._seq: dict[Key, int] = {}
        self._by_uid: dict[str, Key] = {}
        self._owner_uids: dict[Key, tuple[str, ...]] = {}
        self._dependents: dict[str, dict[Key, None]] = {}
        self._counter = 0
        #: (group, kind) an informer keeps here (listed at least once, see :meth:`replace_kind`).
        self._kinds: set[tuple[str, str]] = set()

    def put(self, obj: dict) -> bool:
        """Store ``obj`` unless a newer version is already there (a write-through can be ahead
        of the watch). resourceVersions are etcd revisions here, so they compare as integers."""
        k = meta.key(obj)
        with self._lock:
            current = self._objects.get(k)
            if current is not None:
                old, new = _rv(current), _rv(obj)
                if old is not None and new is not None and new < old:
                    return False
                if current["metadata"].get("uid") != obj["metadata"].get("uid"):
                    self._forget(k, current)  # same name, new object
            if k not in self._seq:
                self._counter += 1
                self._seq[k] = self._counter
                self._by_kind.setdefault(k[:2], {})[k] = None
                self._by_namespace.setdefault(k[2], {})[k] = None
            self._objects[k] = obj
            self._by_uid[obj["metadata"].get("uid", "")] = k
            self._index_owners(k, obj)
            return True

    def refresh(self, obj: dict) -> bool:
        """:meth:`put`, but only over the same object already cached: a write's answer may arrive after
        the watch has seen the object go (a pod deleted gracefully and removed at once), and must not
        bring it back."""
        with self._lock:
            current = self._objects.get(meta.key(obj))
            if current is None or current["metadata"].get("uid") != obj["metadata"].get("uid"):
                return False
            return self.put(obj)

    def remove(self, obj: dict) -> None:
        k = meta.key(obj)
        with self._lock:
            current = self._objects.get(k)
            if current is None or current["metadata"].get("uid") != obj["metadata"].get("uid"):
                return
            old, new = _rv(current), _rv(obj)
            if old is not None and new is not None and old > new:
                return
            self._forget(k, current)

    def _forget(self, k: Key, obj: dict) -> None:
        self._objects.pop(k, None)
        self._seq.pop(k, None)
        self._by_kind.get(k[:2], {}).pop(k, None)
        self._by_namespace.get(k[2], {}).pop(k, None)
        self._by_uid.pop(obj["metadata"].get("uid", ""), None)
        for uid in self._owner_uids.pop(k, ()):
            self._dependents.get(uid, {}).pop(k, None)

    def _index_owners(self, k: Key, obj: dict) -> None:
        uids = tuple(r.get("uid") for r in obj["metadata"].get("ownerReferences", []) if r.get("uid"))
        for uid in self._owner_uids.get(k, ()):
            self._dependents.get(uid, {}).pop(k, None)
        for uid in uids:
            self._dependents.setdefault(uid, {})[k] = None
        self._owner_uids[k] = uids

    def replace_kind(self, group: str, kind: str, objects: list[dict]) -> list[dict]:
        """After a (re)list: store ``objects`` and drop the kind's others; returns the dropped ones."""
        keep = {meta.key(o) for o in objects}
        with self._lock:
            self._kinds.add((group, kind))
            gone = [self._objects[k] for k in self._by_kind.get((group, kind), {}) if k not in keep]
            for obj in gone:
                self._forget(meta.key(obj), obj)
            for obj in objects:
                self.put(obj)
        return gone

    def holds(self, group: str, kind: str) -> bool:
        """Whether an informer keeps this kind here (what is not here is then not on the server either)."""
        return (group, kind) in self._kinds

    def get(self, k: Key) -> dict | None:
        with self._lock:
            return self._objects.get(k)

    def by_uid(self, uid: str) -> dict | None:
        with self._lock:
            k = self._by_uid.get(uid)
            return self._objects.get(k) if k else None

    def list(self, group: str, kind: str, namespace: str | None = None) -> list[dict]:
        """In the order first seen (creation order, as far as a watch can tell)."""
        with self._lock:
            return [self._objects[k] for k in self._by_kind.get((group, kind), {})
                    if namespace is None or k[2] == namespace]

    def in_namespaces(self, namespaces) -> list[dict]:
        """Every object in these namespaces, in the order first seen."""
        with self._lock:
            indexes = [self._by_namespace[ns] for ns in dict.fromkeys(namespaces) if ns in self._by_namespace]
            if len(indexes) == 1:
                return [self._objects[k] for k in indexes[0]]
            keys = sorted((k for index in indexes for k in index), key=self._seq.__getitem__)
            return [self._objects[k] for k in keys]

    def dependents(self, uid: str) -> list[dict]:
        with self._lock:
            keys = sorted(self._dependents.get(uid, {}), key=lambda k: self._seq.get(k, 0))
            return [self._objects[k] for k in keys if k in self._objects]

    def all(self) -> list[dict]:
        with self._lock:
            return [o for _, o in sorted(((self._seq[k], o) for k, o in self._objects.items()), key=lambda p: p[0])]


class Informer(threading.Thread):
    """Keeps ``cache`` in step with one resource and calls ``handler(event_type, obj)`` for every
    change (``SYNC`` for each object of a (re)list, then ``ADDED``/``MODIFIED``/``DELETED``)."""

    def __init__(self, api: Api, resource: Resource, cache: Cache, handler):
        super().__init__(name=f"informer-{resource.plural}.{resource.group or 'core'}", daemon=True)
        self.api, self.resource, self.cache, self.handler = api, resource, cache, handler
        self.synced = threading.Event()
        #: How far this informer has read the resource: the resourceVersion of its last list or
        #: event (an observer's later change to this resource has not been delivered yet).
        self.position = 0
        self._stopped = threading.Event()
        self._watches: list = []

    def stop(self) -> None:
        self._stopped.set()
        for w in list(self._watches):
            w.stop()

    def run(self) -> None:
        backoff = 0.2
        while not self._stopped.is_set():
            try:
                rv = self._relist()
                backoff = 0.2
                while not self._stopped.is_set():
                    self._watches.clear()
                    for event in self.api.watch(self.resource, rv, timeout_seconds=WATCH_SECONDS,
                                                stopper=self._watches):
                        rv = self._apply(event) or rv
                        if self._stopped.is_set():
                            break
            except ApiError as exc:
                if exc.code != 410:
                    log.warning("%s: %s; listing again", self.name, exc)
                    self._stopped.wait(backoff)
                    backoff = min(backoff * 2, 5)
            except Exception as exc:  # a dropped connection: list again after a pause
                if self._stopped.is_set():
                    return
                log.warning("%s: %s: %s; listing again", self.name, type(exc).__name__, exc)
                self._stopped.wait(backoff)
                backoff = min(backoff * 2, 5)

    def _relist(self) -> str:
        listing = self.api.list(self.resource)
        items = listing.get("items", [])
        for item in items:
            item.setdefault("apiVersion", self.resource.api_version)
            item.setdefault("kind", self.resource.kind)
        for gone in self.cache.replace_kind(self.resource.group, self.resource.kind, items):
            self.handler("DELETED", gone)
        for item in items:
            self.handler("SYNC", item)
        self._advance(listing["metadata"]["resourceVersion"])
        self.synced.set()
        return listing["metadata"]["resourceVersion"]

    def _advance(self, rv: str | None) -> None:
        if rv and rv.isdigit():
            self.position = max(self.position, int(rv))

    def _apply(self, event: dict) -> str | None:
        obj = event["object"]
        rv = (obj.get("metadata") or {}).get("resourceVersion")
        if event["type"] == "BOOKMARK":
            self._advance(rv)
            return rv
        obj.setdefault("apiVersion", self.resource.api_version)
        obj.setdefault("kind", self.resource.kind)
        if event["type"] == "DELETED":
            self.cache.remove(obj)
        else:
            self.cache.put(obj)
        self.handler(event["type"], obj)
        self._advance(rv)
        return rv


def wait_synced(informers: list[Informer], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    for informer in informers:
        if not informer.synced.wait(max(0.0, deadline - time.monotonic())):
            raise TimeoutError(f"{informer.name}: no initial list after {timeout:.0f}s")
