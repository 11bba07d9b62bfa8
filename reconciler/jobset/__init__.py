"""JobSet (jobset.x-k8s.io/v1alpha2): defaulting and validating webhooks, pod webhook and controller."""

from __future__ import annotations

from ..cluster import Cluster, Webhook
from .controller import GROUP, JobSetController
from .defaults import default_jobset
from .pod_webhook import label_priority
from .validation import WEBHOOK, validate_jobset


def install(cluster: Cluster) -> None:
    cluster.mutators.setdefault((GROUP, "JobSet"), []).append(default_jobset)
    cluster.mutators.setdefault(("", "Pod"), []).append(label_priority)
    cluster.webhooks.append(Webhook(WEBHOOK, GROUP, "JobSet", validate_jobset))
    cluster.controllers.append(JobSetController())
