"""An in-memory API server with admission, plus a loop that runs controllers to a steady state.

This is the render backend's whole world: objects are plain dicts, writes go through the same
admission chain a real apiserver runs (CRD pruning/defaulting, mutating hooks, schema + CEL
validation, validating webhooks), and controllers are called until a full round writes nothing.
Everything is deterministic: UIDs come from a counter and time from a logical clock.

Deletion follows the apiserver and the garbage collector: an object with finalizers (or a Pod,
until its kubelet reports a terminal phase) only gets a ``deletionTimestamp``; it disappears once
nothing holds it. ``Foreground`` propagation keeps the owner until its blocking dependents are
gone (how JobSet deletes the Jobs of a previous restart; a dependent with dependents of its own is
deleted in ``Foreground`` too, as the garbage collector does); ``Background`` removes the owner first
and then its dependents.

Speed: objects are indexed by (group, kind) and by owner UID, and :meth:`Cluster.settle` only
reconciles what changed - an object whose own write or whose dependents' writes happened since its
last reconcile, as controller-runtime's ``For`` + ``Owns`` watches would enqueue it. Each settle
starts with one pass over everything, so controllers that read objects they do not own (a
TrainJob's runtime) see whatever a previous step applied.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Callable, Iterable, Protocol

from . import builtin, crds, meta, objectmeta, schema
from .errors import FieldError, Rejection
from .profiles import Profile

EPOCH = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
#: The finalizer the garbage collector puts on an owner deleted with ``Foreground`` propagation.
FOREGROUND_FINALIZER = "foregroundDeletion"
_TERMINAL_POD_PHASES = ("Succeeded", "Failed")

Key = tuple[str, str, str, str]


class UnknownKind(Exception):
    """The object's kind is neither built in nor served by a CRD of the profile."""


class NotFound(KeyError):
    pass


class RenderLimit(Exception):
    """The input cannot be rendered within render's own limits (objects, rounds): a limit of this
    tool, not an answer Kubernetes gives - a real cluster would go on creating."""


#: Render refuses to hold more objects than this (a 1,000,000-worker LeaderWorkerSet is valid).
MAX_OBJECTS = 10_000


class AlreadyExists(Exception):
    pass


Validator = Callable[[dict, "Cluster"], list[FieldError]]
Mutator = Callable[[dict, "Cluster"], None]


@dataclass
class Webhook:
    name: str
    group: str
    kind: str
    validate: Validator
    #: ``validate_update(new, old, cluster)`` for UPDATE requests (:meth:`Cluster.replace`); None:
    #: ``validate`` serves both, as for a webhook whose update checks are its create checks.
    validate_update: Callable[[dict, dict, "Cluster"], list[FieldError]] | None = None


class Controller(Protocol):
    #: (group, kind) pairs whose objects this controller reconciles.
    watches: tuple[tuple[str, str], ...]

    def reconcile(self, cluster: "Cluster", obj: dict) -> None: ...

    # Optional: ``related(obj) -> [Key]``, other objects to reconcile when ``obj`` changes or goes away;
    # ``owns``: the (group, kind) pairs whose writes enqueue their owner (default: every dependent);
    # ``reads``: the built-in (group, kind) pairs it reads or creates besides ``watches`` - render ignores
    # it (everything is in memory); the live operator watches only the built-in kinds its controllers
    # watch or read (reconciler/live/operator.py), as controller-runtime's cache informs only the kinds
    # a manager's controllers use.


#: The longest generateName prefix the apiserver keeps (maxNameLength 63 - randomLength 5).
GENERATED_PREFIX_MAX = 58


@dataclass
class Cluster:
    profile: Profile
    controllers: list[Controller] = field(default_factory=list)
    webhooks: list[Webhook] = field(default_factory=list)
    mutators: dict[tuple[str, str], list[Mutator]] = field(default_factory=dict)
    objects: dict[Key, dict] = field(default_factory=dict)
    #: Warnings the apiserver would return (pruned fields), per object.
    warnings: list[str] = field(default_factory=list)
    #: Every write (create/update/delete), in order: the basis of "API writes per pod" figures.
    writes: int = 0
    #: Errors controllers returned (upstream logs and requeues them), as "Kind ns/name: message".
    reconcile_errors: list[str] = field(default_factory=list)
    #: Events controllers recorded (client-go's EventRecorder), in order: dicts with type, reason,
    #: kind, namespace, name (the involved object) and message. See :meth:`record_event`.
    events: list[dict] = field(default_factory=list)
    _uid_counter: int = 0
    _rv_counter: int = 0
    clock: int = 0
    # Indexes, kept in step with ``objects`` by every write (insertion order = creation order).
    _by_kind: dict[tuple[str, str], dict[Key, dict]] = field(default_factory=dict, repr=False)
    _by_uid: dict[str, Key] = field(default_factory=dict, repr=False)
    _dependents: dict[str, dict[Key, None]] = field(default_factory=dict, repr=False)
    _owner_uids: dict[Key, tuple[str, ...]] = field(default_factory=dict, repr=False)
    _seq: dict[Key, int] = field(default_factory=dict, repr=False)
    #: Keys each controller (by position) has to reconcile; see :meth:`settle`.
    _pending: list[set[Key]] = field(default_factory=list, repr=False)
    _watchers: dict[tuple[str, str], list[int]] | None = field(default=None, repr=False)
    #: Pods deleted with grace period 0 (PodGC): no kubelet confirmation awaited.
    _forced: set[Key] = field(default_factory=set, repr=False)
    _now_cache: tuple[int, str] = field(default=(-1, ""), repr=False)

    # ------------------------------------------------------------------ time and identity
    def now(self) -> str:
        if self._now_cache[0] != self.clock:
            self._now_cache = (self.clock, (EPOCH + dt.timedelta(seconds=self.clock)).strftime("%Y-%m-%dT%H:%M:%SZ"))
        return self._now_cache[1]

    def tick(self, seconds: int = 1) -> None:
        self.clock += seconds

    def _next_uid(self) -> str:
        self._uid_counter += 1
        return f"00000000-0000-4000-8000-{self._uid_counter:012d}"

    def _next_rv(self) -> str:
        self._rv_counter += 1
        return str(self._rv_counter)

    # ------------------------------------------------------------------ admission
    def serves(self, api_version: str, kind: str) -> bool:
        if not isinstance(api_version, str) or not isinstance(kind, str):
            return False
        group, version = meta.group_of(api_version), api_version.split("/")[-1]
        return (group, version, kind) in crds.schemas(self.profile.crd_dirs) or builtin.is_builtin(api_version, kind)

    def served_kinds(self) -> list[str]:
        custom = [f"{g}/{v} {k}" for g, v, k in crds.schemas(self.profile.crd_dirs)]
        return sorted(custom + [f"{a} {k}" for a, k in builtin.BUILTIN])

    def admit(self, obj: dict) -> dict:
        """Run the create-time admission chain and return the object as it would be stored.

        ``obj`` may be changed in place: :meth:`create` hands over its own copy.
        """
        api_version, kind = obj.get("apiVersion", ""), obj.get("kind", "")
        group = meta.group_of(api_version)
        version = api_version.split("/")[-1]
        served = crds.schemas(self.profile.crd_dirs).get((group, version, kind))
        if served is None and not builtin.is_builtin(api_version, kind):
            raise UnknownKind(f"{meta.describe(obj)}: no kind {kind!r} is registered for version {api_version!r}")
        objectmeta.check(obj, custom=served is not None)  # 400 / 404 before anything else
        # A null decodes to Go's zero value: metadata.name null is no name.
        obj["metadata"] = {k: v for k, v in (obj.get("metadata") or {}).items() if v is not None}
        if served is not None:
            crd_schema, scope = served
            obj, pruned = schema.prune_and_default(obj, crd_schema)
            self.warnings.extend(f"{meta.describe(obj)}: unknown field \"{p}\"" for p in pruned)
            namespaced = scope == "Namespaced"
        else:
            namespaced = kind != "Namespace"
            builtin.check_decodable(obj)
            obj = builtin.default(obj)
            builtin.prepare_for_create(obj)
            builtin.admit_create(obj)
        if namespaced:
            if not obj["metadata"].get("namespace"):
                obj["metadata"]["namespace"] = "default"
        else:
            obj["metadata"].pop("namespace", None)
        mutators = self.mutators.get((group, kind), [])
        for mutate in mutators:
            mutate(obj, self)
        if served is not None and mutators:
            # The apiserver prunes and defaults a custom resource again after mutating webhooks
            # patched it (apiextensions-apiserver: defaulting "after mutating admission plugins");
            # nulls a webhook wrote stay (the coercer that prunes them runs at request decoding).
            obj, _ = schema.prune_and_default(obj, served[0], nulls=False)
        # ValidateObjectMetaAccessor first, then the CRD schema or the kind's own validation.
        errors = objectmeta.validate(obj)
        if served is not None:
            errors = schema.validate(obj, served[0], errors, crds.scales(self.profile.crd_dirs).get((group, version, kind)))
        else:
            errors += builtin.validate(obj)
        if errors:
            raise Rejection("schema", meta.ref(obj), errors)
        for hook in self.webhooks:
            if (hook.group, hook.kind) == (group, kind):
                errors = hook.validate(obj, self)
                if errors:
                    raise Rejection("webhook", meta.ref(obj), errors, webhook=hook.name)
        return obj

    def admit_update(self, obj: dict, old: dict) -> dict:
        """The UPDATE admission chain for a client's write of ``obj`` over the stored ``old``: what
        :meth:`admit` runs, except that only mutators marked ``on_update`` run (a webhook registered
        for CREATE only, like a pod webhook, does not see updates) and a webhook's ``validate_update``
        gets the old object. Server-set metadata and ``status`` are kept from ``old``, as with a
        PUT to the main resource of a kind with a status subresource."""
        api_version, kind = obj.get("apiVersion", ""), obj.get("kind", "")
        group = meta.group_of(api_version)
        served = crds.schemas(self.profile.crd_dirs).get((group, api_version.split("/")[-1], kind))
        md = obj.setdefault("metadata", {})
        for key in ("uid", "creationTimestamp", "generation", "resourceVersion", "namespace", "deletionTimestamp"):
            if key in old["metadata"] and key not in md:
                md[key] = old["metadata"][key]
        if "status" in old:
            obj["status"] = meta.clone(old["status"])
        else:
            obj.pop("status", None)
        if served is not None:
            obj, pruned = schema.prune_and_default(obj, served[0])
            self.warnings.extend(f"{meta.describe(obj)}: unknown field \"{p}\"" for p in pruned)
        else:
            obj = builtin.default(obj)
        for mutate in self.mutators.get((group, kind), []):
            if getattr(mutate, "on_update", False):
                mutate(obj, self)
        if served is not None:
            version = api_version.split("/")[-1]
            errors = schema.validate(obj, served[0], scale=crds.scales(self.profile.crd_dirs).get((group, version, kind)))
        else:
            errors = builtin.validate(obj)
        if errors:
            raise Rejection("schema", meta.ref(obj), errors)
        for hook in self.webhooks:
            if (hook.group, hook.kind) == (group, kind):
                errors = hook.validate_update(obj, old, self) if hook.validate_update else hook.validate(obj, self)
                if errors:
                    raise Rejection("webhook", meta.ref(obj), errors, webhook=hook.name)
        return obj

    # ------------------------------------------------------------------ store
    def replace(self, obj: dict) -> dict:
        """A client's update of an existing object (``kubectl replace``, or a JSON patch applied by the
        apiserver): admitted as an UPDATE, ``metadata.generation`` + 1 when the spec changed."""
        obj = meta.clone(obj)
        k = meta.key(obj)
        old = self.objects.get(k)
        if old is None:
            raise NotFound(f"{meta.describe(obj)} not found")
        obj = self.admit_update(obj, old)
        if obj.get("spec") != old.get("spec"):
            obj["metadata"]["generation"] = old["metadata"].get("generation", 1) + 1
        return self.update(obj)

    def create(self, obj: dict) -> dict:
        obj = meta.clone(obj)
        api_version = obj.get("apiVersion", "")
        if self.serves(api_version, obj.get("kind", "")):  # else admit() says UnknownKind
            objectmeta.check(obj, custom=not builtin.is_builtin(api_version, obj.get("kind", "")))
        md = obj.get("metadata")
        if isinstance(md, dict):
            generate = md.get("generateName")
            if not md.get("name") and isinstance(generate, str) and generate:
                # names.SimpleNameGenerator: the prefix is cut to 63 - 5 = 58 characters first.
                md["name"] = generate[:GENERATED_PREFIX_MAX] + self._suffix()
            # The UID exists before admission so that built-in defaulting can key a Job's selector on it.
            md["uid"] = self._next_uid()
        elif md is None:
            obj["metadata"] = {"uid": self._next_uid()}
        obj = self.admit(obj)
        k = meta.key(obj)
        if k in self.objects:
            raise AlreadyExists(f"{meta.describe(obj)} already exists")
        if len(self.objects) >= MAX_OBJECTS:
            raise RenderLimit(f"more than {MAX_OBJECTS} objects (creating {meta.describe(obj)}): render holds at most "
                              f"{MAX_OBJECTS}; a real cluster would go on creating")
        md = obj["metadata"]
        md["resourceVersion"] = self._next_rv()
        md["creationTimestamp"] = self.now()
        md.setdefault("generation", 1)
        self.objects[k] = obj
        self._by_kind.setdefault(k[:2], {})[k] = obj
        self._by_uid[md["uid"]] = k
        self._seq[k] = self._uid_counter
        self._index_owners(k, obj)
        self.writes += 1
        self._touch(k, obj)
        return obj

    def _suffix(self) -> str:
        # Random-looking, deterministic five-character suffix (like the apiserver's generateName).
        alphabet = "bcdfghjklmnpqrstvwxz2456789"
        n, out = self._uid_counter * 7919 + len(self.objects), ""
        for _ in range(5):
            n, r = divmod(n, len(alphabet))
            out += alphabet[r]
        return out

    def get(self, group: str, kind: str, namespace: str, name: str) -> dict:
        try:
            return self.objects[(group, kind, namespace or "", name)]
        except KeyError:
            raise NotFound(f"{kind} {namespace}/{name} not found") from None

    def find(self, group: str, kind: str, namespace: str, name: str) -> dict | None:
        return self.objects.get((group, kind, namespace or "", name))

    def find_uid(self, uid: str) -> dict | None:
        k = self._by_uid.get(uid)
        return self.objects.get(k) if k else None

    def list(self, group: str, kind: str, namespace: str | None = None,
             owner: dict | None = None) -> list[dict]:
        """Objects of a kind, in creation order; ``owner`` keeps those with an ownerReference to it."""
        if owner is not None:
            keys = self._dependents.get(owner["metadata"].get("uid"), {})
            return [self.objects[k] for k in keys
                    if k[0] == group and k[1] == kind and (namespace is None or k[2] == namespace)]
        bucket = self._by_kind.get((group, kind), {})
        if namespace is None:
            return list(bucket.values())
        return [o for k, o in bucket.items() if k[2] == namespace]

    def update(self, obj: dict) -> dict:
        """Write back a changed object (spec, metadata or status)."""
        k = meta.key(obj)
        if k not in self.objects:
            raise NotFound(f"{meta.describe(obj)} not found")
        obj["metadata"]["resourceVersion"] = self._next_rv()
        self.objects[k] = obj
        self._by_kind[k[:2]][k] = obj
        self._index_owners(k, obj)
        self.writes += 1
        self._touch(k, obj)
        if obj["metadata"].get("deletionTimestamp"):
            self._remove_if_released(k, obj)
        return obj

    def delete_all(self, objs: list[dict], propagation: str = "Background") -> None:
        """Delete each of ``objs``: what a controller deletes side by side (the live facade sends
        them at once) is deleted here in the order given."""
        for obj in objs:
            self.delete(obj, propagation)

    def delete(self, obj: dict, propagation: str = "Background", grace: bool = True) -> None:
        """Delete as the apiserver does; see the module docstring.

        ``grace=False`` is a force delete (grace period 0): a Pod does not wait for its kubelet.
        Deleting an object that is already being deleted changes nothing (upstream skips it too).
        """
        k = meta.key(obj)
        current = self.objects.get(k)
        if current is None:
            return
        if current["metadata"].get("deletionTimestamp"):
            if not grace:  # a force delete overrides a pending graceful one
                self._forced.add(k)
                self._remove_if_released(k, current)
            return
        md = current["metadata"]
        md["deletionTimestamp"] = self.now()
        if not grace:
            self._forced.add(k)
        if propagation == "Foreground" and self._dependents.get(md.get("uid")):
            md["finalizers"] = [*md.get("finalizers", []), FOREGROUND_FINALIZER]
        md["resourceVersion"] = self._next_rv()
        self.writes += 1
        self._touch(k, current)
        if propagation == "Foreground":
            # The garbage collector deletes the dependents of an owner waiting for them; a dependent
            # that has dependents of its own is deleted in Foreground too (attemptToDeleteItem), so
            # the owner waits for the whole tree (a leader pod for its worker StatefulSet's pods).
            for dependent in self.list_dependents(current):
                self.delete(dependent, propagation="Foreground" if self.list_dependents(dependent) else "Background")
        self._remove_if_released(k, current)

    def list_dependents(self, owner: dict) -> list[dict]:
        return [self.objects[k] for k in self._dependents.get(owner["metadata"].get("uid"), {})]

    def _remove_if_released(self, k: Key, obj: dict) -> None:
        """Remove a deleting object once no finalizer holds it and (Pods) its kubelet let go."""
        if k not in self.objects or obj["metadata"].get("finalizers"):
            return
        if k[1] == "Pod" and k[0] == "" and k not in self._forced \
                and (obj.get("status") or {}).get("phase") not in _TERMINAL_POD_PHASES:
            return
        self._remove(k, obj)

    def _remove(self, k: Key, obj: dict) -> None:
        del self.objects[k]
        del self._by_kind[k[:2]][k]
        uid = obj["metadata"].get("uid")
        self._by_uid.pop(uid, None)
        self._forced.discard(k)
        self.writes += 1
        self._touch(k, obj)
        for owner_uid in self._owner_uids.pop(k, ()):
            self._dependents.get(owner_uid, {}).pop(k, None)
        # Background garbage collection of what it owned, then owners waiting in Foreground.
        for dependent in [self.objects[d] for d in self._dependents.pop(uid, {}) if d in self.objects]:
            self.delete(dependent)
        for owner_uid in {r.get("uid") for r in obj["metadata"].get("ownerReferences", [])}:
            owner = self.find_uid(owner_uid)
            if owner is not None:
                self._release_foreground_owner(owner)
        self._seq.pop(k, None)

    def _release_foreground_owner(self, owner: dict) -> None:
        md = owner["metadata"]
        if not md.get("deletionTimestamp") or FOREGROUND_FINALIZER not in md.get("finalizers", []):
            return
        uid = md["uid"]
        blocked = any(r.get("uid") == uid and r.get("blockOwnerDeletion")
                      for d in self.list_dependents(owner) for r in d["metadata"].get("ownerReferences", []))
        if not blocked:
            md["finalizers"] = [f for f in md["finalizers"] if f != FOREGROUND_FINALIZER]
            if not md["finalizers"]:
                del md["finalizers"]
            self.update(owner)

    def _index_owners(self, k: Key, obj: dict) -> None:
        uids = tuple(r.get("uid") for r in obj["metadata"].get("ownerReferences", []) if r.get("uid"))
        old = self._owner_uids.get(k, ())
        if uids == old:
            return
        for uid in old:
            self._dependents.get(uid, {}).pop(k, None)
        for uid in uids:
            self._dependents.setdefault(uid, {})[k] = None
        self._owner_uids[k] = uids

    def all_objects(self) -> Iterable[dict]:
        return self.objects.values()

    def record_error(self, obj: dict, message: str) -> None:
        entry = f"{meta.describe(obj)}: {message}"
        if entry not in self.reconcile_errors:
            self.reconcile_errors.append(entry)

    def record_event(self, obj: dict, type_: str, reason: str, message: str) -> None:
        """An Event about ``obj`` (``Record.Eventf``): ``type_`` Normal or Warning. Each emission is
        kept; client-go's recorder would fold repeats into one Event with a count."""
        md = obj.get("metadata") or {}
        self.events.append({"type": type_, "reason": reason, "kind": obj.get("kind", ""),
                            "namespace": md.get("namespace", ""), "name": md.get("name", ""), "message": message})

    # ------------------------------------------------------------------ reconcile loop
    def _watcher_table(self) -> dict[tuple[str, str], list[int]]:
        if self._watchers is None or len(self._pending) != len(self.controllers):
            self._watchers = {}
            for i, controller in enumerate(self.controllers):
                for group_kind in controller.watches:
                    self._watchers.setdefault(tuple(group_kind), []).append(i)
            self._pending = (self._pending + [set() for _ in self.controllers])[:len(self.controllers)]
        return self._watchers

    def _touch(self, k: Key, obj: dict) -> None:
        """Enqueue ``k`` for its own controllers and its owners for theirs (For + Owns)."""
        watchers = self._watcher_table()
        for i in watchers.get(k[:2], ()):
            self._pending[i].add(k)
            # A controller's ``related(obj)`` names other objects to reconcile (controller-runtime's
            # Watches with a map function) - also when ``obj`` is gone.
            related = getattr(self.controllers[i], "related", None)
            if related is not None:
                self._pending[i].update(related(obj))
        for uid in self._owner_uids.get(k, ()):
            owner_key = self._by_uid.get(uid)
            if owner_key is not None:
                for i in watchers.get(owner_key[:2], ()):
                    # A controller may name the kinds whose writes wake their owner (controller-runtime's
                    # Owns); without ``owns``, any dependent does.
                    owns = getattr(self.controllers[i], "owns", None)
                    if owns is None or k[:2] in owns:
                        self._pending[i].add(owner_key)

    def settle(self, max_rounds: int = 100, observe: Callable[["Cluster"], None] | None = None) -> int:
        """Run controllers until a whole round writes nothing.

        A round gives every controller, in order, the objects enqueued for it (oldest first);
        what a write enqueues for a controller that already ran this round waits for the next
        round, exactly as if every object were visited every round. ``observe`` is called after
        each controller's turn (the ``never`` checks of scenario steps).
        """
        watchers = self._watcher_table()
        for group_kind, indexes in watchers.items():
            for i in indexes:
                self._pending[i].update(self._by_kind.get(group_kind, {}))
        for round_no in range(1, max_rounds + 1):
            before = self.writes
            for i, controller in enumerate(self.controllers):
                due, self._pending[i] = self._pending[i], set()
                for k in sorted(due, key=lambda key: self._seq.get(key, 0)):
                    current = self.objects.get(k)
                    if current is not None:
                        try:
                            controller.reconcile(self, current)
                        except (Rejection, AlreadyExists, NotFound) as refused:
                            # The apiserver refused a controller's own write: controller-runtime logs the
                            # error Reconcile returned and requeues; what the controller recorded before
                            # (an Event, a condition) is its own code's business.
                            self.record_error(current, str(refused))
                if observe is not None:
                    observe(self)
            if self.writes == before:
                return round_no
            self.tick()
        raise RenderLimit(f"no steady state after {max_rounds} rounds of reconciling")
