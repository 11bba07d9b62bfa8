"""The reference reconciler as a live operator: render's controllers, driven by watches.

:func:`reconciler.new_cluster` wires every suite (Trainer, JobSet, Volcano) into a render
``Cluster``; :class:`Operator` takes the controllers, webhooks and mutators from there, so
render and live run the same objects. It runs only the controllers of the profile's own kinds
(:func:`runs_live`): not those that stand in for Kubernetes itself - those that watch only built-in
kinds (render's Job controller and fake kubelet): on a real cluster kube-controller-manager runs
Jobs and kwok (or a kubelet) runs Pods - nor those of operators the profile does not install (an
MPIJob or LeaderWorkerSet controller in a JobSet cluster: both watch Pods, so each woke for every
pod event of a JobSet case to do nothing - 21,000 reconciles and copies of pods in the 1,024-pod
restart; render's whole table gives the same goldens without them, 1,574 rows checked).

Its informers watch the profile's own kinds and the built-in kinds its controllers watch or read
(``reads``, :func:`informed_kinds`), as controller-runtime's cache informs only what a manager's
controllers use: a JobSet operator reads Jobs and Services, never Pods, and decoding every pod
event of a group restart was most of what its watches cost. A read of a kind without an informer
goes to the API (:class:`~.facade.LiveCluster`).

Events flow as in controller-runtime: an object's change enqueues it for the controllers that
watch its kind (``For``) and enqueues its owners for theirs (``Owns``, for any owner reference).
One worker reconciles one item at a time, as render's ``settle`` does, on copies from the cache.
A stale write (409 Conflict) is retried at once; any other error is logged and retried with
exponential backoff.
"""

from __future__ import annotations

import logging
import threading
import time

from .. import builtin, crds as crd_files, meta, new_cluster, profiles
from ..errors import Rejection
from ..profiles import Profile
from . import crds
from .facade import Conflict, LiveCluster
from .informer import Cache, Informer, wait_synced
from .rest import Api, ApiError
from .webhook import WebhookServer
from .workqueue import WorkQueue

log = logging.getLogger(__name__)

def builtin_kinds() -> list[tuple[str, str]]:
    """The built-in kinds render models (children controllers own), without Namespace."""
    return sorted(k for k in builtin.BUILTIN if k != ("v1", "Namespace"))


def served_kinds(profile: Profile) -> set[tuple[str, str]]:
    """(group, kind) of every custom resource the profile's CRDs serve."""
    return {(group, kind) for group, _, kind in crd_files.schemas(profile.crd_dirs)}


def stands_in_for_kubernetes(controller) -> bool:
    """Render's stand-ins for Kubernetes' own controllers: they watch built-in kinds only."""
    built_in = {(meta.group_of(api_version), kind) for api_version, kind in builtin.BUILTIN}
    return all(tuple(gk) in built_in for gk in controller.watches)


def runs_live(controller, served: set[tuple[str, str]]) -> bool:
    """Whether the live operator of a profile serving ``served`` runs ``controller``: it watches one
    of those kinds (never a stand-in, which watches built-in kinds only)."""
    return any(tuple(gk) in served for gk in controller.watches)


def informed_kinds(profile: Profile, controllers) -> list[tuple[str, str]]:
    """(apiVersion, kind) the operator lists and watches: the profile's own kinds, and the built-in
    kinds ``controllers`` watch or read (their ``reads``)."""
    used = {tuple(gk) for c in controllers for gk in (*c.watches, *getattr(c, "reads", ()))}
    return [(f"{g}/{v}", k) for g, v, k in crd_files.schemas(profile.crd_dirs)] + [
        (api_version, kind) for api_version, kind in builtin_kinds() if (meta.group_of(api_version), kind) in used]


def field_manager(controller) -> str:
    """``reconciler.trainer.controller`` → ``trainer``: one manager name per suite."""
    parts = type(controller).__module__.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


class Operator:
    def __init__(self, api: Api, profile: str | Profile | None = None):
        self.api = api
        self.profile = profile if isinstance(profile, Profile) else profiles.get(profile)
        wired = new_cluster(self.profile)
        self.cache = Cache()
        self.cluster = LiveCluster(api, self.profile, cache=self.cache)
        served = served_kinds(self.profile)
        self.cluster.controllers = [c for c in wired.controllers if runs_live(c, served)]
        self.cluster.webhooks, self.cluster.mutators = wired.webhooks, wired.mutators
        #: Controllers render runs that Kubernetes runs here instead.
        self.replaced_by_kubernetes = [type(c).__name__ for c in wired.controllers if stands_in_for_kubernetes(c)]
        #: Controllers of operators this profile does not install (none of their kinds is served).
        self.not_installed = [type(c).__name__ for c in wired.controllers
                              if not runs_live(c, served) and not stands_in_for_kubernetes(c)]
        self.webhook_cluster = LiveCluster(api, self.profile, cache=None, reads="api", field_manager="webhook",
                                           webhooks=wired.webhooks, mutators=wired.mutators)
        self._views = [self.cluster.for_manager(field_manager(c)) for c in self.cluster.controllers]
        self._watchers: dict[tuple[str, str], list[int]] = {}
        for i, controller in enumerate(self.cluster.controllers):
            for group_kind in controller.watches:
                self._watchers.setdefault(tuple(group_kind), []).append(i)
        self.queue = WorkQueue()
        self.informers: list[Informer] = []
        self.webhooks: WebhookServer | None = None
        self._worker = threading.Thread(target=self._work, name="reconcile-worker", daemon=True)
        self._failures: dict = {}
        self.timings: dict[str, float] = {}
        self.crd_report: dict[str, str] = {}

    # ------------------------------------------------------------------ lifecycle
    def start(self, install_crds: bool = True, timeout: float = 60.0) -> "Operator":
        started = time.monotonic()
        if install_crds:
            self.crd_report = crds.install(self.api, self.profile, timeout)
        self.timings["crds"] = time.monotonic() - started
        mark = time.monotonic()
        self.webhooks = WebhookServer(self.api, self.webhook_cluster)
        self.webhooks.start()
        self.webhooks.register(timeout)
        self.timings["webhooks"] = time.monotonic() - mark
        mark = time.monotonic()
        for resource in self._watched_resources():
            informer = Informer(self.api, resource, self.cache, self._on_event)
            self.informers.append(informer)
            informer.start()
        wait_synced(self.informers, timeout)
        self._worker.start()
        self.timings["informers"] = time.monotonic() - mark
        self.timings["total"] = time.monotonic() - started
        return self

    def stop(self, unregister: bool = True) -> None:
        self.queue.shutdown()
        for informer in self.informers:
            informer.stop()
        if self.webhooks is not None:
            if unregister:
                self.webhooks.unregister()
            self.webhooks.stop()

    def _watched_resources(self):
        for api_version, kind in informed_kinds(self.profile, self.cluster.controllers):
            yield self.api.must_resource(api_version, kind)

    # ------------------------------------------------------------------ events → queue
    def _on_event(self, _event_type: str, obj: dict) -> None:
        k = meta.key(obj)
        for i in self._watchers.get(k[:2], ()):
            self.queue.add((i, k))
            related = getattr(self.cluster.controllers[i], "related", None)  # see Cluster._touch
            for other in related(obj) if related is not None else ():
                self.queue.add((i, other))
        for ref in obj["metadata"].get("ownerReferences", []):
            owner_gk = (meta.group_of(ref.get("apiVersion", "")), ref.get("kind", ""))
            indexes = self._watchers.get(owner_gk)
            if not indexes:
                continue
            owner = self.cache.by_uid(ref.get("uid", ""))
            owner_key = meta.key(owner) if owner is not None else (*owner_gk, k[2], ref.get("name", ""))
            for i in indexes:
                self.queue.add((i, owner_key))

    # ------------------------------------------------------------------ caught up?
    #: Retries due later than this are an error's back-off, not work under way.
    RETRY_HORIZON = 1.0

    def caught_up(self, seen: dict[tuple[str, str], int]) -> list[str]:
        """Whether this operator has handled everything an observer saw: for each watched kind, its
        informer has read at least as far as ``seen[kind]`` (a list or watch delivers a kind's
        changes in resourceVersion order), and nothing is queued or being reconciled. Returns what
        is behind."""
        position = {(inf.resource.group, inf.resource.kind): inf.position for inf in self.informers}
        behind = [f"{kind} up to {rv}" for (group, kind), rv in sorted(seen.items())
                  if (group, kind) in position and position[(group, kind)] < rv]
        pending = self.queue.pending(self.RETRY_HORIZON)
        if pending:
            behind.append(f"{pending} item(s) queued or in progress")
        return behind

    def writes(self) -> int:
        """API writes so far (creates, updates, status updates, deletes; Events not counted)."""
        return sum(view.writes for view in (self.cluster, self.webhook_cluster, *self._views))

    # ------------------------------------------------------------------ worker
    def _work(self) -> None:
        while True:
            item = self.queue.get()
            if item is None:
                return
            index, key = item
            try:
                current = self.cache.get(key)
                if current is not None:
                    controller = self.cluster.controllers[index]
                    controller.reconcile(self._views[index], meta.clone(current))
                self._failures.pop(item, None)
            except Conflict as exc:
                log.debug("conflict, again: %s", exc)
                self.queue.add_after(item, 0.01)
            except Rejection as refused:
                # The apiserver refused the controller's own write (render's Cluster.run does the
                # same): controller-runtime logs the error Reconcile returned and requeues with
                # back-off; the reconcile error is also a Warning Event (record_error), once per text.
                self.cluster.record_error(current, str(refused))
                self._retry(item, index, key)
            except ApiError as exc:
                if exc.code == 404 and self._gone(key):
                    # The object itself is gone (controller-runtime's IgnoreNotFound): its delete event
                    # is on its way, or was missed - either way nothing is left to reconcile.
                    self._failures.pop(item, None)
                    log.debug("%s is gone: %s", "/".join(key[1:]), exc)
                else:
                    self._retry(item, index, key)
            except Exception:
                self._retry(item, index, key)
            finally:
                self.queue.done(item)

    def _gone(self, key) -> bool:
        """Whether the object of ``key`` no longer exists on the server (then it leaves the cache too)."""
        current = self.cache.get(key)
        if current is None:
            return True
        resource = self.api.resource_of(current)
        if self.api.get(resource, key[2] or None, key[3]) is not None:
            return False
        self.cache.remove(current)
        return True

    def _retry(self, item, index, key) -> None:
        """Called from an ``except`` block: log the failure and retry with a capped exponential back-off."""
        failures = self._failures[item] = self._failures.get(item, 0) + 1
        delay = min(0.05 * 2 ** min(failures, 8), 10.0)
        log.exception("reconcile %s %s failed (attempt %d); retry in %.2fs",
                      type(self.cluster.controllers[index]).__name__, "/".join(key[1:]), failures, delay)
        self.queue.add_after(item, delay)
