"""A stand-in for the Volcano scheduler on the local control plane: binds, and nothing else.

The local control plane runs kube-scheduler, which leaves Pods with ``schedulerName: volcano``
alone, so without this they would stay Pending for good. This binder is part of the *platform*
(like kwok standing in for kubelets), not of the operator under test: it only runs in the local
control plane; on a vendor's cluster the real Volcano scheduler does this job.

What it does: every Pod whose ``spec.schedulerName`` is ``volcano`` and that has no node yet is
bound (``pods/binding``, as any scheduler binds) to a fake kwok Node, round robin.

What it does *not* do, on purpose - it is **gang-less**: no PodGroup is read or written (no
``minMember`` gang admission, PodGroup phase stays as the controller left it), no queue, no
resources or affinity or taints are checked, nothing is preempted. Cases that depend on the
scheduler's decisions (a gang held back because it does not fit) cannot be judged with it;
the lifecycle and environment rows only need their Pods to start.

Run: ``python -m conformance.cluster.volcano_binder --kubeconfig K --health-port P``;
``GET /readyz`` on 127.0.0.1:P answers 200 once the first list of Pods has been handled.
"""

from __future__ import annotations

import argparse
import http.server
import itertools
import logging
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

from reconciler.live.rest import Api, ApiError

SCHEDULER_NAME = "volcano"
KWOK_NODE_ANNOTATION = ("kwok.x-k8s.io/node", "fake")
log = logging.getLogger("volcano-binder")


class Binder:
    def __init__(self, api: Api, workers: int = 8):
        self.api = api
        self.pods = api.must_resource("v1", "Pod")
        self.nodes_resource = api.must_resource("v1", "Node")
        self.ready = threading.Event()
        self._next_node = None
        self._pool = ThreadPoolExecutor(workers)
        self._pending: set[tuple[str, str]] = set()
        self._lock = threading.Lock()

    def _nodes(self) -> list[str]:
        key, value = KWOK_NODE_ANNOTATION
        return sorted(n["metadata"]["name"] for n in self.api.list(self.nodes_resource).get("items", [])
                      if (n["metadata"].get("annotations") or {}).get(key) == value)

    def _node(self) -> str:
        if self._next_node is None:
            nodes = self._nodes()
            if not nodes:
                raise RuntimeError("no kwok Node to bind to")
            self._next_node = itertools.cycle(nodes)
        return next(self._next_node)

    def offer(self, pod: dict) -> None:
        """Bind ``pod`` (in the background) if it is ours and unbound."""
        spec, md = pod.get("spec") or {}, pod.get("metadata") or {}
        if spec.get("schedulerName") != SCHEDULER_NAME or spec.get("nodeName") or md.get("deletionTimestamp"):
            return
        key = (md["namespace"], md["name"])
        with self._lock:
            if key in self._pending:
                return
            self._pending.add(key)
            node = self._node()
        self._pool.submit(self._bind, key, md.get("uid"), node)

    def _bind(self, key: tuple[str, str], uid: str | None, node: str) -> None:
        namespace, name = key
        body = {"apiVersion": "v1", "kind": "Binding",
                "metadata": {"name": name, "namespace": namespace, **({"uid": uid} if uid else {})},
                "target": {"apiVersion": "v1", "kind": "Node", "name": node}}
        try:
            self.api.request("POST", self.pods.path(namespace, name, "binding"), body=body)
        except ApiError as exc:
            # 409: already bound (or a recreated pod of the same name: its own event offers it);
            # 404: deleted meanwhile. Anything else is logged; the next event retries.
            if exc.code not in (404, 409):
                log.warning("binding %s/%s to %s: %s", namespace, name, node, exc)
        except Exception as exc:  # keep binding others
            log.warning("binding %s/%s to %s: %s", namespace, name, node, exc)
        finally:
            with self._lock:
                self._pending.discard(key)

    def run(self) -> None:
        while True:
            listing = self.api.list(self.pods)
            for pod in listing.get("items", []):
                self.offer(pod)
            self.ready.set()
            version = listing["metadata"]["resourceVersion"]
            try:
                while True:
                    for event in self.api.watch(self.pods, version, timeout_seconds=300):
                        obj = event["object"]
                        version = (obj.get("metadata") or {}).get("resourceVersion", version)
                        if event["type"] in ("ADDED", "MODIFIED"):
                            self.offer(obj)
            except ApiError as exc:
                if exc.code != 410:
                    log.warning("watch ended: %s; listing again", exc)


def _serve_health(port: int, ready: threading.Event) -> None:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's name
            ok = self.path in ("/readyz", "/healthz") and ready.is_set()
            self.send_response(200 if ok else 503)
            self.end_headers()
            self.wfile.write(b"ok" if ok else b"not ready")

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--health-port", type=int, required=True)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s", stream=sys.stderr)
    binder = Binder(Api.from_kubeconfig(args.kubeconfig))
    _serve_health(args.health_port, binder.ready)
    binder.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
