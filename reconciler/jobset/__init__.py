"""JobSet (jobset.x-k8s.io/v1alpha2): defaulting and validating webhooks, pod webhook and controller."""

from __future__ import annotations

from .. import crds
from ..cluster import Cluster, Webhook
from .controller import GROUP, JobSetController
from .defaults import default_jobset
from .pod_webhook import label_priority
from .validation import WEBHOOK, validate_jobset


def install(cluster: Cluster) -> None:
    cluster.mutators.setdefault((GROUP, "JobSet"), []).append(default_jobset)
    if any((g, k) == (GROUP, "JobSet") for g, _, k in crds.schemas(cluster.profile.crd_dirs)):
        # Installed with JobSet only: its pod webhook has LWS's name (both are kubebuilder's mpod.kb.io),
        # and a profile without JobSet's CRD does not run JobSet (render: a no-op there anyway).
        cluster.mutators.setdefault(("", "Pod"), []).append(label_priority)
    cluster.webhooks.append(Webhook(WEBHOOK, GROUP, "JobSet", validate_jobset))
    cluster.controllers.append(JobSetController())
