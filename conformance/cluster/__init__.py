"""A local control plane for the live backend: etcd, kube-apiserver, kube-controller-manager,
kube-scheduler and kwok on 127.0.0.1, built from source by ``make control-plane``.

:class:`LocalControlPlane` (:mod:`.local`) starts and stops it; :mod:`.certs` makes its PKI;
:mod:`.cli` adds ``conformance cluster up|down|status``.
"""

from .binaries import KUBERNETES_VERSION, MissingBinaryError, bin_dir
from .local import ClusterStartError, FakeNode, LocalControlPlane, default_nodes

__all__ = [
    "KUBERNETES_VERSION",
    "ClusterStartError",
    "FakeNode",
    "LocalControlPlane",
    "MissingBinaryError",
    "bin_dir",
    "default_nodes",
]
