"""MPIJob (kubeflow.org/v2beta1) as the MPI Operator v0.6.0 runs it: no admission webhook (the CRD's
schema and defaults only), one controller that validates, creates the Service, ConfigMap, SSH Secret,
worker Pods and launcher Job, and keeps the status.

Facts: shared/reference/kubeflow-v1-mpi-operator.md part B.
"""

from __future__ import annotations

from ..cluster import Cluster
from .controller import MPIJobController


def install(cluster: Cluster) -> None:
    cluster.controllers.append(MPIJobController())
