"""An in-memory API server with admission, plus a loop that runs controllers to a steady state.

This is the render backend's whole world: objects are plain dicts, writes go through the same
admission chain a real apiserver runs (CRD pruning/defaulting, mutating hooks, schema + CEL
validation, validating webhooks), and controllers are called until a full round writes nothing.
Everything is deterministic: UIDs come from a counter and time from a logical clock.
"""

from __future__ import annotations

import copy
import datetime as dt
from dataclasses import dataclass, field
from typing import Callable, Iterable, Protocol

from . import builtin, crds, meta, schema
from .errors import FieldError, Rejection
from .profiles import Profile

EPOCH = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)


class UnknownKind(Exception):
    """The object's kind is neither built in nor served by a CRD of the profile."""


class NotFound(KeyError):
    pass


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


class Controller(Protocol):
    #: (group, kind) pairs whose objects this controller reconciles.
    watches: tuple[tuple[str, str], ...]

    def reconcile(self, cluster: "Cluster", obj: dict) -> None: ...


@dataclass
class Cluster:
    profile: Profile
    controllers: list[Controller] = field(default_factory=list)
    webhooks: list[Webhook] = field(default_factory=list)
    mutators: dict[tuple[str, str], list[Mutator]] = field(default_factory=dict)
    objects: dict[tuple[str, str, str, str], dict] = field(default_factory=dict)
    #: Warnings the apiserver would return (pruned fields), per object.
    warnings: list[str] = field(default_factory=list)
    #: Every write (create/update/delete), in order: the basis of "API writes per pod" figures.
    writes: int = 0
    #: Errors controllers returned (upstream logs and requeues them), as "Kind ns/name: message".
    reconcile_errors: list[str] = field(default_factory=list)
    _uid_counter: int = 0
    _rv_counter: int = 0
    clock: int = 0

    # ------------------------------------------------------------------ time and identity
    def now(self) -> str:
        return (EPOCH + dt.timedelta(seconds=self.clock)).strftime("%Y-%m-%dT%H:%M:%SZ")

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
        group, version = meta.group_of(api_version), api_version.split("/")[-1]
        return (group, version, kind) in crds.schemas(self.profile.crd_dirs) or builtin.is_builtin(api_version, kind)

    def served_kinds(self) -> list[str]:
        custom = [f"{g}/{v} {k}" for g, v, k in crds.schemas(self.profile.crd_dirs)]
        return sorted(custom + [f"{a} {k}" for a, k in builtin.BUILTIN])

    def admit(self, obj: dict) -> dict:
        """Run the create-time admission chain and return the object as it would be stored."""
        api_version, kind = obj.get("apiVersion", ""), obj.get("kind", "")
        group = meta.group_of(api_version)
        version = api_version.split("/")[-1]
        served = crds.schemas(self.profile.crd_dirs).get((group, version, kind))
        if served is not None:
            crd_schema, scope = served
            obj, pruned = schema.prune_and_default(obj, crd_schema)
            self.warnings.extend(f"{meta.describe(obj)}: unknown field \"{p}\"" for p in pruned)
            namespaced = scope == "Namespaced"
        elif builtin.is_builtin(api_version, kind):
            namespaced = kind != "Namespace"
            obj = builtin.default(copy.deepcopy(obj))
        else:
            raise UnknownKind(f"{meta.describe(obj)}: no kind {kind!r} is registered for version {api_version!r}")
        if namespaced:
            obj["metadata"].setdefault("namespace", "default")
        else:
            obj["metadata"].pop("namespace", None)
        for mutate in self.mutators.get((group, kind), []):
            mutate(obj, self)
        if served is not None:
            errors = schema.validate(obj, served[0])
            if errors:
                raise Rejection("schema", meta.ref(obj), errors)
        for hook in self.webhooks:
            if (hook.group, hook.kind) == (group, kind):
                errors = hook.validate(obj, self)
                if errors:
                    raise Rejection("webhook", meta.ref(obj), errors, webhook=hook.name)
        return obj

    # ------------------------------------------------------------------ store
    def create(self, obj: dict) -> dict:
        obj = copy.deepcopy(obj)
        obj.setdefault("metadata", {})
        if "name" not in obj["metadata"] and obj["metadata"].get("generateName"):
            obj["metadata"]["name"] = obj["metadata"]["generateName"] + self._suffix()
        # The UID exists before admission so that built-in defaulting can key a Job's selector on it.
        obj["metadata"]["uid"] = self._next_uid()
        obj = self.admit(obj)
        k = meta.key(obj)
        if k in self.objects:
            raise AlreadyExists(f"{meta.describe(obj)} already exists")
        md = obj["metadata"]
        md["resourceVersion"] = self._next_rv()
        md["creationTimestamp"] = self.now()
        md.setdefault("generation", 1)
        self.objects[k] = obj
        self.writes += 1
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

    def list(self, group: str, kind: str, namespace: str | None = None,
             owner: dict | None = None) -> list[dict]:
        found = [o for (g, k, ns, _), o in self.objects.items()
                 if g == group and k == kind and (namespace is None or ns == namespace)]
        if owner is not None:
            found = [o for o in found if meta.is_owned_by(o, owner)]
        return found

    def update(self, obj: dict) -> dict:
        """Write back a changed object (spec, metadata or status)."""
        k = meta.key(obj)
        if k not in self.objects:
            raise NotFound(f"{meta.describe(obj)} not found")
        obj["metadata"]["resourceVersion"] = self._next_rv()
        self.objects[k] = obj
        self.writes += 1
        return obj

    def delete(self, obj: dict) -> None:
        """Delete now, cascading to dependents (foreground/background GC collapsed into one step)."""
        k = meta.key(obj)
        if self.objects.pop(k, None) is None:
            return
        self.writes += 1
        uid = obj["metadata"].get("uid")
        for dependent in [o for o in self.objects.values()
                          if any(r.get("uid") == uid for r in o["metadata"].get("ownerReferences", []))]:
            self.delete(dependent)

    def all_objects(self) -> Iterable[dict]:
        return self.objects.values()

    def record_error(self, obj: dict, message: str) -> None:
        entry = f"{meta.describe(obj)}: {message}"
        if entry not in self.reconcile_errors:
            self.reconcile_errors.append(entry)

    # ------------------------------------------------------------------ reconcile loop
    def settle(self, max_rounds: int = 100) -> int:
        """Run every controller over every watched object until a whole round writes nothing."""
        for round_no in range(1, max_rounds + 1):
            before = self.writes
            for controller in self.controllers:
                for group_kind in controller.watches:
                    for obj in list(self.list(*group_kind)):
                        current = self.objects.get(meta.key(obj))
                        if current is not None:
                            controller.reconcile(self, current)
            if self.writes == before:
                return round_no
            self.tick()
        raise RuntimeError(f"no steady state after {max_rounds} rounds")
