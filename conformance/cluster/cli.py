"""``conformance cluster up|down|status``: a local control plane that outlives the command;
``conformance cluster clean --kubeconfig K``: what killed runs left in any cluster.

``up`` starts one (detached) under ``<cache>/clusters/<name>/`` and prints the kubeconfig path;
``down`` stops it by the PIDs recorded in ``state.json`` and removes that directory; ``status``
reports each component. Exit codes: 0 ok; 1 a component is down or start-up failed; 2 no such
cluster (``down``/``status``) or one is already running (``up``); 3 binaries missing.

``clean`` (:func:`conformance.cluster.podlife.clean`) removes the harness Nodes, run-labelled
namespaces and recorded kwok processes of runs that did not end normally, printing a line per
thing removed. Exit codes: 0 done (also when there was nothing); 1 something is still
terminating after ``--timeout``; 2 the cluster cannot be used (one line says why: no such
kubeconfig, unreachable server, rejected credentials, forbidden).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from .binaries import MissingBinaryError, cache_dir
from .local import STATE_FILE, ClusterStartError, LocalControlPlane, default_nodes


def add_cluster_commands(subparsers) -> None:
    """Register ``cluster up|down|status`` on the ``conformance`` command's subparsers; the
    parsed namespace's ``cluster_command(args, unparsed_args)`` runs the command."""
    p_cluster = subparsers.add_parser("cluster", help="run a local control plane (etcd, kube-*, kwok) on 127.0.0.1")
    sub = p_cluster.add_subparsers(dest="cluster_action", required=True)

    def command(function):
        def run(args, extra: list[str]) -> int:
            if extra:
                p_cluster.error(f"unrecognized arguments: {' '.join(extra)}")
            return function(args)
        return run

    def common(parser):
        parser.add_argument("--name", default="default", help="cluster name (default: %(default)s)")
        parser.add_argument("--dir", type=Path, help="state directory (default: <cache>/clusters/<name>)")

    p_up = sub.add_parser("up", help="start a cluster and leave it running; prints the kubeconfig path")
    common(p_up)
    p_up.add_argument("--nodes", type=int, default=3, help="fake kwok nodes to register (default: %(default)s)")
    p_up.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for each component")
    p_up.set_defaults(cluster_command=command(cluster_up))

    p_down = sub.add_parser("down", help="stop the cluster and delete its state directory")
    common(p_down)
    p_down.set_defaults(cluster_command=command(cluster_down))

    p_status = sub.add_parser("status", help="show each component's PID and health")
    common(p_status)
    p_status.set_defaults(cluster_command=command(cluster_status))

    p_clean = sub.add_parser("clean", help="remove what killed runs left in a cluster: harness Nodes, run-labelled "
                                           "namespaces, their kwok processes (found by the run label; nothing else)")
    p_clean.add_argument("--kubeconfig", required=True, type=Path, help="the cluster the runs used")
    p_clean.add_argument("--run", action="append", default=None, metavar="RUN_ID",
                         help="only this run (the value of the training-conformance.io/run label; repeatable)")
    p_clean.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for deletions (default: %(default)s)")
    p_clean.set_defaults(cluster_command=command(cluster_clean))


def state_dir(args) -> Path:
    return args.dir if args.dir else cache_dir() / "clusters" / args.name


def cluster_up(args) -> int:
    directory = state_dir(args)
    if (directory / STATE_FILE).exists():
        plane = LocalControlPlane.attach(directory)
        if any(s["running"] for s in plane.status().values()):
            print(f"error: cluster {args.name!r} is already running ({directory}); "
                  f"`conformance cluster down --name {args.name}` first", file=sys.stderr)
            return 2
    # Leftovers of a cluster that died: fresh certificates and an empty etcd each time.
    shutil.rmtree(directory, ignore_errors=True)
    plane = LocalControlPlane(directory, nodes=default_nodes(args.nodes), start_timeout=args.timeout,
                              detach=True, keep_state=True)
    try:
        plane.up()
    except MissingBinaryError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 3
    except ClusterStartError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"cluster {args.name!r} up in {plane.startup_seconds:.1f}s: {plane.server} "
          f"(kubernetes {plane.version}, {len(plane.nodes)} kwok nodes)", file=sys.stderr)
    print(f"  export KUBECONFIG={plane.kubeconfig}", file=sys.stderr)
    print(plane.kubeconfig)
    return 0


def cluster_down(args) -> int:
    directory = state_dir(args)
    if not (directory / STATE_FILE).exists():
        print(f"no cluster {args.name!r} recorded in {directory}", file=sys.stderr)
        return 2
    plane = LocalControlPlane.attach(directory)
    plane.down()
    shutil.rmtree(directory, ignore_errors=True)
    print(f"cluster {args.name!r} stopped in {plane.teardown_seconds:.1f}s; removed {directory}", file=sys.stderr)
    return 0


def cluster_status(args) -> int:
    directory = state_dir(args)
    if not (directory / STATE_FILE).exists():
        print(f"no cluster {args.name!r} recorded in {directory}", file=sys.stderr)
        return 2
    plane = LocalControlPlane.attach(directory)
    report = plane.status()
    print(f"cluster {args.name!r}: {plane.server} (kubernetes {plane.version})")
    print(f"kubeconfig: {plane.kubeconfig}")
    width = max(len(name) for name in report)
    for name, s in report.items():
        state = "healthy" if s["healthy"] else "running, not healthy" if s["running"] else "NOT RUNNING"
        print(f"  {name.ljust(width)}  pid {s['pid'] or '-':<8} {state}  ({s['log']})")
    return 0 if all(s["healthy"] for s in report.values()) else 1


def cluster_clean(args) -> int:
    from .access import AccessError, connect, explain
    from .podlife import clean

    try:
        api, _ = connect(args.kubeconfig)
    except AccessError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        lines = clean(api, args.kubeconfig, runs=args.run, timeout=args.timeout)
    except Exception as exc:  # noqa: BLE001 - forbidden, unreachable mid-way: one line
        print(f"error: {explain(exc, args.kubeconfig, 'list and delete run-labelled Nodes and namespaces')}",
              file=sys.stderr)
        return 2
    finally:
        api.close()
    for line in lines:
        print(("" if line.startswith(("skipped", "still")) else "removed ") + line)
    if not lines:
        print(f"nothing to clean in the cluster of {args.kubeconfig}")
    return 1 if any(line.startswith("still") for line in lines) else 0
