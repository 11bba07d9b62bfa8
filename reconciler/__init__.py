"""Reference reconciler for distributed-training operators: the public facade.

>>> from reconciler import render
>>> result = render(manifests, profile="trainer-v2.3")
>>> result.objects      # inputs after admission, then everything created, down to Pods
>>> result.rejections   # admission failures, one per rejected input

Private layers: :mod:`reconciler.cluster` (in-memory API + admission), :mod:`reconciler.schema`
(CRD structural schemas), :mod:`reconciler.trainer` / :mod:`reconciler.jobset` /
:mod:`reconciler.batch` / :mod:`reconciler.lws` / :mod:`reconciler.statefulset` (controllers and
webhooks, one plugin per policy).

PYTEST_DONT_REWRITE: the package is a pytest plugin's (entry point ``pytest11``) and ``conformance
run`` has imported it before pytest starts; it holds no asserts for pytest to rewrite.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import batch, jobset, lws, meta, mpijob, profiles, pytorchjob, statefulset, trainer, volcano
from .cluster import AlreadyExists, Cluster, UnknownKind
from .errors import FieldError, Rejection
from .kubelet import FakeKubelet
from .profiles import DEFAULT_PROFILE, PROFILES, Profile

__all__ = ["render", "new_cluster", "RenderResult", "Rejection", "FieldError", "UnknownKind",
           "Profile", "PROFILES", "DEFAULT_PROFILE", "apply_order"]

#: Inputs are admitted in this order (then in file order): what is referenced comes first, as
#: with ``kubectl apply`` of a well-ordered bundle.
_APPLY_ORDER = ["Namespace", "CustomResourceDefinition", "ClusterTrainingRuntime", "TrainingRuntime",
                "ConfigMap", "Secret", "Service"]


def apply_order(obj: dict) -> int:
    kind = obj.get("kind", "")
    return _APPLY_ORDER.index(kind) if kind in _APPLY_ORDER else len(_APPLY_ORDER)


def new_cluster(profile: str | Profile | None = None) -> Cluster:
    """An empty in-memory cluster with every reference controller and webhook installed."""
    prof = profile if isinstance(profile, Profile) else profiles.get(profile)
    cluster = Cluster(prof)
    trainer.install(cluster)
    jobset.install(cluster)
    volcano.install(cluster)
    mpijob.install(cluster)
    pytorchjob.install(cluster)
    cluster.controllers += [batch.JobController(), statefulset.StatefulSetController()]
    # After the StatefulSet stand-in, before the kubelet: LWS sees a new leader pod before it runs,
    # as a live LWS does (startupPolicy LeaderReady waits for it to be Ready).
    lws.install(cluster)
    cluster.controllers.append(FakeKubelet())
    return cluster


@dataclass
class Rejected:
    obj: dict
    error: Rejection | UnknownKind | AlreadyExists


@dataclass
class RenderResult:
    cluster: Cluster
    rejections: list[Rejected] = field(default_factory=list)

    @property
    def objects(self) -> list[dict]:
        """Every stored object, in creation order."""
        return sorted(self.cluster.all_objects(), key=lambda o: o["metadata"]["uid"])


def render(manifests: list[dict], profile: str | Profile | None = None, cluster: Cluster | None = None,
           observe=None) -> RenderResult:
    """Admit ``manifests`` and reconcile to a steady state, in memory (``observe``: see Cluster.settle)."""
    cluster = cluster or new_cluster(profile)
    result = RenderResult(cluster)
    for obj in sorted(manifests, key=apply_order):
        try:
            cluster.create(obj)
        except (Rejection, UnknownKind, AlreadyExists) as exc:
            result.rejections.append(Rejected(obj, exc))
    cluster.settle(observe=observe)
    return result
