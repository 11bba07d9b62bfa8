"""JobSet (jobset.x-k8s.io/v1alpha2): defaulting webhook and controller."""

from __future__ import annotations

from ..cluster import Cluster
from .controller import GROUP, JobSetController
from .defaults import default_jobset
from .pod_webhook import label_priority


def install(cluster: Cluster) -> None:
    cluster.mutators.setdefault((GROUP, "JobSet"), []).append(default_jobset)
    cluster.mutators.setdefault(("", "Pod"), []).append(label_priority)
    cluster.controllers.append(JobSetController())
