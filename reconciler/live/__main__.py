"""``python -m reconciler.live --kubeconfig K --profile P``: run the reference operator.

It installs the profile's CRDs, registers its webhooks, starts its informers and then prints one
line ``ready {json}`` (timings, CRD actions, the controllers it runs and leaves out, the kinds it
watches, ``caughtUpUrl``) on stdout. ``caughtUpUrl`` is a plain
HTTP endpoint on 127.0.0.1: POST ``{"seen": [[group, kind, resourceVersion], ...]}`` answers
``{"behind": [...], "writes": N}``, ``behind`` empty once the operator has handled every event an
observer saw (:meth:`Operator.caught_up`) - how the harness knows this operator is done, not just
quiet; ``writes`` counts its API writes so far (benchmarks). It stops - removing its webhook
configurations - on SIGTERM/SIGINT, or when stdin closes if ``--exit-with-stdin`` is given (so
that it never outlives the harness that started it).
"""

from __future__ import annotations

import argparse
import json
import logging
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from ..profiles import PROFILES
from .operator import Operator
from .rest import Api


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m reconciler.live", description=__doc__.splitlines()[0])
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--profile", required=True, choices=sorted(PROFILES))
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds for each start-up step")
    parser.add_argument("--exit-with-stdin", action="store_true", help="stop when stdin reaches EOF")
    parser.add_argument("--log-level", default="WARNING")
    args = parser.parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")

    api = Api.from_kubeconfig(args.kubeconfig, user_agent=f"training-conformance-operator/{args.profile}")
    operator = Operator(api, args.profile)
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    if args.exit_with_stdin:
        threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    try:
        operator.start(timeout=args.timeout)
    except Exception as exc:
        print(f"error: operator start failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        operator.stop()
        return 1
    server = _caught_up_server(operator)
    ready = {"profile": args.profile, "caughtUpUrl": f"http://127.0.0.1:{server.server_port}/caught-up", "timings": {k: round(v, 3) for k, v in operator.timings.items()},
             "crds": operator.crd_report, "controllers": [type(c).__name__ for c in operator.cluster.controllers],
             "replacedByKubernetes": operator.replaced_by_kubernetes, "notInstalled": operator.not_installed,
             "informed": [f"{i.resource.api_version} {i.resource.kind}" for i in operator.informers],
             "webhookPort": operator.webhooks.port}
    print("ready " + json.dumps(ready), flush=True)
    stop.wait()
    server.shutdown()
    operator.stop()
    return 0


def _caught_up_server(operator: Operator) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - http.server's name
            try:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                seen = {(group, kind): int(rv) for group, kind, rv in body.get("seen", [])}
                answer, code = {"behind": operator.caught_up(seen), "writes": operator.writes()}, 200
            except (ValueError, TypeError) as exc:
                answer, code = {"error": str(exc)}, 400
            data = json.dumps(answer).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args) -> None:  # quiet
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="caught-up", daemon=True).start()
    return server


if __name__ == "__main__":
    sys.exit(main())
