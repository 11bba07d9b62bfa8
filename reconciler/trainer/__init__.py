"""Kubeflow Trainer v2 (trainer.kubeflow.org/v1alpha1): webhooks and the TrainJob controller."""

from __future__ import annotations

from ..cluster import Cluster, Webhook
from . import defaulter, webhooks
from .controller import TrainJobController
from .runtime_finalizer import RuntimeInUseController

GROUP = "trainer.kubeflow.org"


def install(cluster: Cluster) -> None:
    cluster.webhooks += [
        Webhook(webhooks.TRAINJOB_WEBHOOK, GROUP, "TrainJob", webhooks.validate_trainjob),
        Webhook(webhooks.TRAININGRUNTIME_WEBHOOK, GROUP, "TrainingRuntime", webhooks.validate_runtime),
        Webhook(webhooks.CLUSTERTRAININGRUNTIME_WEBHOOK, GROUP, "ClusterTrainingRuntime", webhooks.validate_runtime),
    ]
    cluster.controllers += [TrainJobController(), RuntimeInUseController()]
    if cluster.profile.trainjob_defaulter:
        cluster.mutators.setdefault((GROUP, "TrainJob"), []).append(defaulter.default_trainjob)
