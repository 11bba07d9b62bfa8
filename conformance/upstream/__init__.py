"""The upstream kit: the real Kubeflow Trainer and JobSet controller managers, built from their
Go modules (``make upstream-kit``) and run as local processes against a cluster, with their own
CRDs and webhook configurations read from the release sources and webhooks served on 127.0.0.1.

    from conformance.upstream import install
    with install(cluster.kubeconfig, "v2.3.0") as kit:   # + JobSet v0.12.0, the one it pins
        ...

:mod:`.builds` finds the binaries and module sources, :mod:`.manifests` renders and rewrites the
manifests, :mod:`.managers` holds the manager flags, :mod:`.probes` the webhook readiness checks,
and :mod:`.kit` puts them together.
"""

from .builds import MissingUpstreamBuildError, known_versions
from .kit import UpstreamKit, UpstreamStartError, install
from .manifests import ManifestError

__all__ = [
    "ManifestError",
    "MissingUpstreamBuildError",
    "UpstreamKit",
    "UpstreamStartError",
    "install",
    "known_versions",
]
