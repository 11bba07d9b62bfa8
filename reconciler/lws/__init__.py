"""LeaderWorkerSet (leaderworkerset.x-k8s.io/v1, LWS v0.7.0): webhooks and the controller.

Facts: shared/reference/lws-volcano-upstream.md Part A; semantics the reference leaves open were read
in sigs.k8s.io/lws v0.7.0 (pkg/controllers, pkg/webhooks, pkg/utils). Its StatefulSets become pods
through :mod:`reconciler.statefulset`, kube-controller-manager's StatefulSet controller in render.
"""

from __future__ import annotations

from .. import crds
from ..cluster import Cluster, Webhook
from . import keys, webhooks
from .controller import LeaderWorkerSetController


def install(cluster: Cluster) -> None:
    cluster.mutators.setdefault((keys.GROUP, keys.KIND), []).append(webhooks.default_lws)
    if (keys.GROUP, "v1", keys.KIND) in crds.schemas(cluster.profile.crd_dirs):
        # Installed with LWS only: its pod webhook has JobSet's name (both are kubebuilder's mpod.kb.io),
        # and it belongs to the LWS installation like the CRD.
        cluster.mutators.setdefault(("", "Pod"), []).append(webhooks.default_pod)
    cluster.webhooks.append(Webhook(keys.LWS_VALIDATOR, keys.GROUP, keys.KIND, webhooks.validate_lws,
                                    validate_update=webhooks.validate_lws_update))
    cluster.controllers.append(LeaderWorkerSetController())
