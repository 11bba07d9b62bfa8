"""Render backend: the reference reconciler, in memory."""

from __future__ import annotations

import reconciler
from reconciler import meta
from reconciler.cluster import AlreadyExists, UnknownKind
from reconciler.errors import Rejection

from ..outcome import Outcome, RejectionRecord


def run(manifests: list[dict], profile: str) -> Outcome:
    result = reconciler.render(manifests, profile)
    outcome = Outcome(objects=result.objects, reconcile_errors=list(result.cluster.reconcile_errors))
    for rejected in result.rejections:
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
    return outcome


def kubernetes_version() -> str:
    """For the report's kubernetesVersion: render runs no API server at all."""
    return "none (render backend)"
