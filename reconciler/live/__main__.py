"""``python -m reconciler.live --kubeconfig K --profile P``: run the reference operator.

It installs the profile's CRDs, registers its webhooks, starts its informers and then prints one
line ``ready {json}`` (timings, CRD actions) on stdout. It stops - removing its webhook
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

    api = Api.from_kubeconfig(args.kubeconfig)
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
    ready = {"profile": args.profile, "timings": {k: round(v, 3) for k, v in operator.timings.items()},
             "crds": operator.crd_report, "controllers": [type(c).__name__ for c in operator.cluster.controllers],
             "replacedByKubernetes": operator.replaced_by_kubernetes, "webhookPort": operator.webhooks.port}
    print("ready " + json.dumps(ready), flush=True)
    stop.wait()
    operator.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
