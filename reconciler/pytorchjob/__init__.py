"""Kubeflow Training Operator v1 PyTorchJob (kubeflow.org/v1): the validating webhook and the
controller that creates pods and Services itself.

Facts: shared/reference/kubeflow-v1-mpi-operator.md part A (training-operator v1.8.1 and v1.9.2);
semantics the reference leaves open were read in the training-operator sources (release-1.9 branch
and v1.8.1), named in each module's docstring. docs/pytorchjob.md says what is modelled.
"""

from __future__ import annotations

from ..cluster import Cluster, Webhook
from . import keys, webhook
from .controller import PyTorchJobController


def install(cluster: Cluster) -> None:
    cluster.webhooks.append(Webhook(keys.WEBHOOK, keys.GROUP, keys.KIND, webhook.validate))
    cluster.controllers.append(PyTorchJobController())
