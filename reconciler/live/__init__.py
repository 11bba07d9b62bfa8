"""The reference reconciler against a real API server (the live backend's operator under test).

Render mode runs :mod:`reconciler`'s controllers and webhooks on an in-memory cluster; this
package runs the *same* objects against kube-apiserver, so render and live differ only where
Kubernetes itself does:

* :mod:`.facade` - :class:`LiveCluster`, the ``Cluster`` calls controllers make, over HTTP;
* :mod:`.operator` - informers (list + watch), a work queue and one reconcile worker;
* :mod:`.webhook` - the validating/mutating webhooks over HTTPS, registered by URL;
* :mod:`.crds` - installs the profile's CRD files (the ones render reads);
* :mod:`.rest`, :mod:`.informer`, :mod:`.waits`, :mod:`.tls`, :mod:`.workqueue` - plumbing.

It lives under ``reconciler/`` rather than ``conformance/`` because it *is* the implementation
under test: the conformance harness talks to the cluster only, and a vendor's operator takes
this one's place. Run it with ``python -m reconciler.live --kubeconfig K --profile P``.
"""

from .facade import LiveCluster
from .operator import Operator
from .rest import Api, ApiError

__all__ = ["Api", "ApiError", "LiveCluster", "Operator"]
