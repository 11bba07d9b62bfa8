"""A stand-in for the Volcano scheduler on the local control plane: binds, and nothing else.

The local control plane runs kube-scheduler, which leaves Pods with ``schedulerName: volcano``
alone, so without this they would stay Pending for good. This binder is part of the *platform*
(like kwok standing in for kubelets), not of the operator under test: it only runs in the local
control plane; on a vendor's cluster the real Volcano scheduler does this job.

What it does: every Pod whose ``spec.schedulerName`` is ``volcano`` and that has no node yet is
bound (``pods/binding``, as any scheduler binds) to a Ready Node whose labels match the pod's
``nodeSelector`` and whose ``NoSchedule`` taints the pod tolerates, round robin - so a pod the
harness steers onto its own Nodes (conformance/cluster/podlife.py) lands there.

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
import logging
import signal
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

from reconciler.live.rest import Api, ApiError

SCHEDULER_NAME = "volcano"
#: What the binder lists and watches: unbound Pods for this scheduler, selected by the apiserver.
#: Watching every Pod made the apiserver send, and this process decode, every change of every Pod
#: in the cluster (a 1,024-pod group restart: ~8,000 events) to bind none of them.
UNBOUND_OF_OURS = f"spec.schedulerName={SCHEDULER_NAME},spec.nodeName="
log = logging.getLogger("volcano-binder")


def fits(pod: dict, node: dict) -> bool:
    """The pod's nodeSelector matches the Node's labels and it tolerates the Node's NoSchedule taints."""
    spec = pod.get("spec") or {}
    labels = node["metadata"].get("labels") or {}
    if any(labels.get(k) != v for k, v in (spec.get("nodeSelector") or {}).items()):
        return False
    tolerations = spec.get("tolerations") or []
    for taint in (node.get("spec") or {}).get("taints") or []:
        if taint.get("effect") not in ("NoSchedule", "NoExecute"):
            continue
        if not any(_tolerates(t, taint) for t in tolerations):
            return False
    return True


def _tolerates(toleration: dict, taint: dict) -> bool:
    if toleration.get("effect") and toleration["effect"] != taint.get("effect"):
        return False
    if toleration.get("operator") == "Exists":
        return not toleration.get("key") or toleration["key"] == taint.get("key")
    return toleration.get("key") == taint.get("key") and toleration.get("value", "") == taint.get("value", "")


class Binder:
    def __init__(self, api: Api, workers: int = 8):
        self.api = api
        self.pods = api.must_resource("v1", "Pod")
        self.nodes_resource = api.must_resource("v1", "Node")
        self.ready = threading.Event()
        self._known: list[dict] | None = None
        self._turn = -1
        self._pool = ThreadPoolExecutor(workers)
        self._pending: set[tuple[str, str]] = set()
        self._lock = threading.Lock()

    def _nodes(self) -> list[dict]:
        return sorted((n for n in self.api.list(self.nodes_resource).get("items", [])
                       if any(c.get("type") == "Ready" and c.get("status") == "True"
                              for c in (n.get("status") or {}).get("conditions") or [])),
                      key=lambda n: n["metadata"]["name"])

    def _node(self, pod: dict) -> str:
        """The next Node (round robin) that may take ``pod``; the Node list is read again when none
        of the known ones may (Nodes come and go: a run's own ones)."""
        for fresh in (False, True):
            if fresh or self._known is None:
                self._known = self._nodes()
            fitting = [n["metadata"]["name"] for n in self._known if fits(pod, n)]
            if fitting:
                self._turn += 1
                return fitting[self._turn % len(fitting)]
        raise RuntimeError(f"no Ready Node matches the node selector and taints of pod "
                           f"{pod['metadata'].get('namespace')}/{pod['metadata'].get('name')}")

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
            try:
                node = self._node(pod)
            except RuntimeError as exc:  # the pod stays unbound, as with a real scheduler
                log.warning("%s", exc)
                self._pending.discard(key)
                return
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
            listing = self.api.list(self.pods, field_selector=UNBOUND_OF_OURS)
            for pod in listing.get("items", []):
                self.offer(pod)
            self.ready.set()
            version = listing["metadata"]["resourceVersion"]
            try:
                while True:
                    for event in self.api.watch(self.pods, version, timeout_seconds=300,
                                                field_selector=UNBOUND_OF_OURS):
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
    # The plane stops us with SIGTERM: exit through SystemExit so that atexit runs - the kubernetes
    # client removes there the temporary file it wrote the kubeconfig's CA data to.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    binder = Binder(Api.from_kubeconfig(args.kubeconfig, user_agent="training-conformance-volcano-binder"))
    _serve_health(args.health_port, binder.ready)
    binder.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
