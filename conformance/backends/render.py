"""Render backend: the reference reconciler, in memory."""

from __future__ import annotations

import jsonpatch

import reconciler
from reconciler import faults, meta
from reconciler.cluster import AlreadyExists, Cluster, UnknownKind
from reconciler.errors import Rejection

from .. import expectations
from ..outcome import Outcome, RejectionRecord


def run(manifests: list[dict], profile: str) -> Outcome:
    result = reconciler.render(manifests, profile)
    outcome = Outcome(objects=result.objects, reconcile_errors=list(result.cluster.reconcile_errors),
                      events=list(result.cluster.events))
    _record_rejections(outcome, result.rejections)
    return outcome


def run_steps(steps: list, profile: str) -> list[Outcome]:
    """Run a scenario's steps on one cluster; one outcome per step, taken once it has settled.

    ``never`` patterns are looked for after the step's action and after every controller's turn
    while it settles; the first sighting of each is reported. Reconcile errors are the step's new ones.
    """
    cluster = reconciler.new_cluster(profile)
    outcomes = []
    for step in steps:
        outcome = Outcome(objects=[])
        errors_before, events_before = len(cluster.reconcile_errors), len(cluster.events)
        observe = _never_watch(step.never, outcome) if step.never else None
        if step.wait_before:
            cluster.tick(step.wait_before)
        if step.apply is not None:
            result = reconciler.render(step.apply, cluster=cluster, observe=observe)
            _record_rejections(outcome, result.rejections)
        elif step.update is not None:
            rejected = _update(cluster, step.update, outcome)
            if rejected is not None:
                _record_rejections(outcome, [rejected])
            cluster.settle(observe=observe)
        elif step.delete is not None:
            _delete(cluster, step.delete, outcome)
            if observe:
                observe(cluster)
            cluster.settle(observe=observe)
        elif step.fault is not None:
            for _ in range(step.repeat):
                try:
                    faults.inject(cluster, step.fault)
                except faults.FaultError as exc:
                    outcome.input_errors.append(str(exc))
                    break
                if observe:
                    observe(cluster)
                cluster.settle(observe=observe)
        else:
            cluster.settle(observe=observe)
        # A copy: later steps change the live objects.
        outcome.objects = meta.clone(sorted(cluster.all_objects(), key=lambda o: o["metadata"]["uid"]))
        outcome.reconcile_errors = cluster.reconcile_errors[errors_before:]
        outcome.events = cluster.events[events_before:]
        outcomes.append(outcome)
    return outcomes


def _update(cluster: Cluster, update: dict, outcome: Outcome):
    """A client's JSON Patch of a stored object, admitted as an UPDATE; a refusal comes back as a
    ``reconciler.Rejected`` (recorded like a create's), a missing object as an error of the case."""
    group = meta.group_of(update["apiVersion"])
    # A cluster-scoped kind is stored without a namespace (as the live backend's update finds it).
    stored = cluster.find(group, update["kind"], update.get("namespace", "default"), update["name"]) or cluster.find(
        group, update["kind"], "", update["name"])
    if stored is None:
        outcome.input_errors.append(f"update: {update['kind']} {update.get('namespace', 'default')}/"
                                    f"{update['name']} does not exist")
        return None
    try:
        patched = jsonpatch.apply_patch(meta.clone(stored), update["patch"])
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as exc:
        outcome.input_errors.append(f"update: JSON Patch on {update['kind']} {update['name']} failed: {exc}")
        return None
    try:
        cluster.replace(patched)
    except Rejection as exc:
        return reconciler.Rejected(patched, exc)
    return None


def _delete(cluster: Cluster, delete: dict, outcome: Outcome) -> None:
    """A client's DELETE of a stored object (``kubectl delete``); a missing one is an error of the case."""
    group = meta.group_of(delete["apiVersion"])
    namespace = delete.get("namespace", "default")
    # A cluster-scoped kind is stored without a namespace.
    stored = cluster.find(group, delete["kind"], namespace, delete["name"]) or cluster.find(
        group, delete["kind"], "", delete["name"])
    if stored is None:
        outcome.input_errors.append(f"delete: {delete['kind']} {namespace}/{delete['name']} does not exist")
        return
    cluster.delete(stored, propagation=delete.get("propagationPolicy", "Background"))


def _never_watch(never: list[dict], outcome: Outcome):
    def objects_of(api_version: str, kind: str, cluster: Cluster) -> list[dict]:
        return cluster.list(meta.group_of(api_version), kind)

    reported: set[int] = set()

    def observe(cluster: Cluster) -> None:
        for i, item in enumerate(never):
            if i not in reported:
                seen = expectations.never_seen([item], lambda a, k: objects_of(a, k, cluster))
                if seen:
                    reported.add(i)
                    outcome.never_violations += seen
    return observe


def _record_rejections(outcome: Outcome, rejections: list) -> None:
    for rejected in rejections:
        md = rejected.obj.get("metadata") or {}
        error = rejected.error
        if isinstance(error, Rejection):
            outcome.rejections.append(RejectionRecord(
                kind=rejected.obj.get("kind", ""), name=md.get("name", ""), namespace=md.get("namespace"),
                code=error.code, reason=error.reason, message=error.message,
                errors=[e.to_dict() for e in error.errors]))
        elif isinstance(error, AlreadyExists):
            outcome.rejections.append(RejectionRecord(
                kind=rejected.obj.get("kind", ""), name=md.get("name", ""), namespace=md.get("namespace"),
                code=409, reason="AlreadyExists", message=str(error)))
        elif isinstance(error, UnknownKind):
            outcome.input_errors.append(f"{meta.describe(rejected.obj)}: {error}")


def kubernetes_version() -> str:
    """For the report's kubernetesVersion: render runs no API server at all."""
    return "none (render backend)"
