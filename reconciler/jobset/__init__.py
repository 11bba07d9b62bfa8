"""JobSet (jobset.x-k8s.io/v1alpha2): defaulting webhook and controller."""

from __future__ import annotations

from ..cluster import Cluster
from .controller import GROUP, JobSetController
from .defaults import default_jobset


def install(cluster: Cluster) -> None:
    cluster.mutators.setdefault((GROUP, "JobSet"), []).append(default_jobset)
    cluster.controllers.append(JobSetController())
