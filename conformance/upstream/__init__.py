"""The upstream kit: the real controller managers - Kubeflow Trainer and JobSet, the Kubeflow
Training Operator (v1), the MPI Operator, LeaderWorkerSet, Volcano (its webhook manager, controller
manager and scheduler) - built from their Go modules (``make upstream-kit``) and
run as local processes against a cluster, with their own CRDs and webhook configurations read from
the release sources and webhooks served on 127.0.0.1.

    from conformance.upstream import install
    with install(cluster.kubeconfig, "v2.3.0") as kit:   # Trainer + JobSet v0.12.0, the one it pins
        ...
    with install(cluster.kubeconfig, "v1.9.2", project="training-operator") as kit:
        ...
    with install(cluster.kubeconfig, "v1.10.0", project="volcano") as kit:  # LocalControlPlane(volcano_binder=False)
        ...

:mod:`.projects` has one entry per upstream project, :mod:`.builds` finds the binaries and module
sources, :mod:`.manifests` renders and rewrites the manifests, :mod:`.managers` holds the manager
flags, :mod:`.pki` the certificate, :mod:`.probes` the webhook readiness checks, and :mod:`.kit`
puts them together.
"""

from .builds import MissingUpstreamBuildError, known_versions
from .kit import UpstreamKit, UpstreamStartError, install
from .manifests import ManifestError
from .projects import PROJECTS, Project

__all__ = [
    "ManifestError",
    "MissingUpstreamBuildError",
    "PROJECTS",
    "Project",
    "UpstreamKit",
    "UpstreamStartError",
    "install",
    "known_versions",
]
