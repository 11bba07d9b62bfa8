"""Volcano Job (batch.volcano.sh/v1alpha1): admission webhooks, the Job controller and its plugins.

Facts: shared/reference/volcano-jobset-restart.md Part 1 (plugins) and §2.4 (lifecycle policies).
"""

from __future__ import annotations

from ..cluster import Cluster, Webhook
from . import keys, webhooks
from .controller import JobController


def install(cluster: Cluster) -> None:
    cluster.mutators.setdefault((keys.GROUP, "Job"), []).append(webhooks.default_job)
    cluster.webhooks.append(Webhook(webhooks.VALIDATING_WEBHOOK, keys.GROUP, "Job", webhooks.validate_job,
                                    validate_update=webhooks.validate_job_update))
    cluster.controllers.append(JobController())
