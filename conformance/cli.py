"""``conformance``: render manifests, run the table, list the cases.

Exit codes of ``render``: 0 everything admitted; 1 an object was rejected by admission (stderr
names it and gives each error in the apiserver's wording); 2 the input itself is unusable
(unreadable file, malformed YAML, a document that is not an object with a string apiVersion and
kind, unknown kind, or an input beyond render's own limits: 10,000 objects, 100 reconcile rounds).
Any manifest gets one of these - never a traceback: an exception inside the
reference reconciler is a bug in this suite, reported as such (exit 3; ``--debug`` shows the
traceback). ``bench/fuzz_render.py`` and ``tests/test_fuzz_render.py`` hold render to this.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import yaml

import reconciler
from reconciler import builtin, meta
from reconciler.cluster import RenderLimit
from reconciler.errors import Rejection
from reconciler.profiles import DEFAULT_PROFILE, PROFILES

from . import cases as case_loader
from . import table as table_dirs
from .cluster.cli import add_cluster_commands
from .cluster.doctor import add_doctor_command
from .report.cli import add_report_command, pytest_args as report_pytest_args, run_options as report_run_options
from .zoo.cli import add_zoo_command
from .yamlio import dump

SUITE_DIR = Path(__file__).parent / "suite"


class InputError(Exception):
    """The manifests cannot be used at all (exit 2)."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="conformance", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p_render = sub.add_parser("render", help="run the reference reconciler on manifests and print every object")
    p_render.add_argument("-f", "--filename", action="append", required=True, metavar="FILE",
                          help="multi-document YAML file, '-' for stdin (repeatable)")
    p_render.add_argument("--profile", default=None, choices=sorted(PROFILES),
                          help="default: the newest profile that serves every kind in the input")
    p_render.add_argument("--debug", action="store_true",
                          help="on an internal error (a bug in the reference reconciler), show the Python traceback")

    p_run = sub.add_parser("run", help="run the case table (pytest underneath)")
    p_run.add_argument("--profile", action="append", default=[], choices=sorted(PROFILES))
    p_run.add_argument("--level", action="append", default=[], choices=["core", "extended"])
    p_run.add_argument("--tier", default="full", choices=["full", "pr"],
                       help="pr: leave out rows marked slow (minutes on a real cluster; reported as skipped with the "
                            "reason) - a pull request's run; full: every row (default)")
    p_run.add_argument("--backend", default="render", choices=["render", "live"])
    p_run.add_argument("--provider", choices=["local", "realnodes", "kind", "k3s", "existing"], default=None,
                       help="live backend: where the cluster comes from (default: local, or existing with --kubeconfig); "
                            "realnodes = local planes whose stand-in kubelets never run the cases' images, as kind's; "
                            "kind and k3s need Docker")
    p_run.add_argument("--pod-lifecycle", choices=["harness", "cluster"], default=None,
                       help="live backend: who runs the cases' pods - the harness's own Nodes and kwok (default on any "
                            "cluster but the local plane, whose kwok runs them) or the cluster's kubelets")
    p_run.add_argument("--kubeconfig", help="live backend: the cluster (default: a local control plane for the run); "
                                            "with --operator external, the cluster where that operator runs")
    p_run.add_argument("-k", dest="keyword", help="only cases matching this pytest -k expression")
    p_run.add_argument("--live-workers", type=int, default=None,
                       help="live backend: cases in flight at once (default: $TC_LIVE_WORKERS or 4; 1 = serial)")
    p_run.add_argument("--junitxml", help="write a JUnit XML report")
    p_run.add_argument("--cases-dir", default=None,
                       help="the case tables (default: the checkout you are in, else the table installed with the package)")
    p_run.add_argument("--snapshots-dir", default=None,
                       help="the goldens (default: the snapshots folder beside the cases folder)")
    p_run.add_argument("--snapshot-update", action="store_true", help="rewrite goldens (and delete unused ones)")
    report_run_options(p_run)

    p_list = sub.add_parser("list", help="list the cases: id, table, level, profiles")
    p_list.add_argument("--cases-dir", default=None, help="as for run")
    p_list.add_argument("--profile", action="append", default=[], choices=sorted(PROFILES))

    add_cluster_commands(sub)
    add_doctor_command(sub)
    add_zoo_command(sub)
    add_report_command(sub)

    args, extra = parser.parse_known_args(argv)
    if getattr(args, "cluster_command", None):
        return args.cluster_command(args, extra)
    if getattr(args, "doctor_command", None):
        return args.doctor_command(args, extra)
    if getattr(args, "zoo_command", None):
        return args.zoo_command(args, extra)
    if getattr(args, "report_command", None):
        return args.report_command(args, extra)
    if args.command == "render":
        if extra:
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        return render(args.filename, args.profile, debug=args.debug)
    if args.command == "run":
        return run(args, extra)
    if extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    return list_cases(args.cases_dir, args.profile)


# ------------------------------------------------------------------ render

def read_manifests(filenames: list[str]) -> list[tuple[str, dict]]:
    """(where it came from, object) for every document; ``kind: List`` items are unpacked."""
    manifests = []
    for name in filenames:
        label = "<stdin>" if name == "-" else name
        try:
            text = sys.stdin.read() if name == "-" else Path(name).read_text()
        except OSError as exc:
            raise InputError(f"{label}: cannot read: {exc.strerror}") from None
        try:
            docs = list(yaml.safe_load_all(text))
        except yaml.YAMLError as exc:
            raise InputError(f"{label}: malformed YAML: {' '.join(str(exc).split())}") from None
        for number, doc in enumerate(docs, start=1):
            if doc is None:
                continue
            where = f"{label}: document {number}"
            if not _is_object(doc):
                raise InputError(f"{where} is not a Kubernetes object (needs apiVersion and kind, both strings)")
            if doc["kind"] != "List":
                manifests.append((where, doc))
                continue
            items = doc.get("items") or []
            if not isinstance(items, list):
                raise InputError(f"{where}: a List's items must be a list of objects")
            for index, obj in enumerate(items):
                if not _is_object(obj):
                    raise InputError(f"{where}, item {index} is not a Kubernetes object (needs apiVersion and kind, both strings)")
                manifests.append((f"{where}, item {index}", obj))
    return manifests


def _is_object(doc) -> bool:
    return isinstance(doc, dict) and all(isinstance(doc.get(k), str) and doc.get(k) for k in ("apiVersion", "kind"))


def pick_profile(manifests: list[tuple[str, dict]]) -> str:
    """The profile for an input given without ``--profile``: of those that serve every kind in it,
    the most specific (fewest kinds of its own: a bare JobSet goes to jobset-*, not to the trainer
    profiles that also serve JobSets), then the newest. Built-in kinds only: the default profile."""
    wanted = {(obj["apiVersion"], obj["kind"]) for _, obj in manifests}
    custom = {name: set(_custom_kinds(name)) for name in PROFILES}
    if not wanted & set().union(*custom.values()):
        return DEFAULT_PROFILE
    serving = [p for p in PROFILES.values() if all(reconciler.new_cluster(p.name).serves(*k) for k in wanted)]
    if serving:
        return min(serving, key=lambda p: (len(custom[p.name]), tuple(-v for v in p.version))).name
    kinds = sorted(f"{kind} ({api_version})" for api_version, kind in wanted)
    partial = sorted(name for name, served in custom.items() if served & wanted)
    raise InputError(f"no profile serves every kind of the input ({', '.join(kinds)})"
                     + (f"; {', '.join(partial)} serve some of them - render those apart" if partial else "")
                     + f"; profiles: {', '.join(sorted(PROFILES))}")


def _custom_kinds(profile: str) -> list[tuple[str, str]]:
    from reconciler import crds
    return [(f"{g}/{v}", k) for g, v, k in crds.schemas(PROFILES[profile].crd_dirs)]


def render(filenames: list[str], profile: str | None, debug: bool = False) -> int:
    try:
        return _render(filenames, profile)
    except Exception as exc:  # noqa: BLE001 - the contract: no traceback for any input (see the docstring)
        if debug:
            raise
        print(f"internal error: {type(exc).__name__}: {exc}\n"
              "  This is a bug in the reference reconciler, not in your manifests: please report it with the input "
              "(--debug shows the traceback).", file=sys.stderr)
        return 3


def _render(filenames: list[str], profile: str | None) -> int:
    try:
        manifests = read_manifests(filenames)
        if profile is None:
            profile = pick_profile(manifests)
            print(f"conformance render: profile {profile} (picked for this input: the newest of the most specific profiles serving all its kinds; "
                  f"--profile picks another)", file=sys.stderr)
        cluster = reconciler.new_cluster(profile)
        for source, obj in manifests:
            if not cluster.serves(obj["apiVersion"], obj["kind"]):
                raise InputError(f"{source}: unknown kind {obj['kind']!r} in {obj['apiVersion']!r} "
                                 f"(profile {profile} serves: {', '.join(cluster.served_kinds())})")
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        result = reconciler.render([obj for _, obj in manifests], cluster=cluster)
    except RenderLimit as exc:
        print(f"error: cannot render this input: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write("---\n".join(dump(obj) for obj in result.objects))
    for rejected in result.rejections:
        error = rejected.error
        what = meta.describe(rejected.obj)
        if isinstance(error, Rejection):
            schema = "the CRD schema" if not builtin.is_builtin(rejected.obj.get("apiVersion"), rejected.obj.get("kind")) \
                else "the apiserver's validation"
            by = {"webhook": f'admission webhook "{error.webhook}"', "schema": schema}.get(error.kind, "the apiserver")
            print(f"error: {what} was rejected by {by} ({error.code} {error.reason}):", file=sys.stderr)
            for field_error in error.errors:
                print(f"  {field_error}", file=sys.stderr)
        else:
            print(f"error: {what}: {error}", file=sys.stderr)
    return 1 if result.rejections else 0


# ------------------------------------------------------------------ run / list

def run(args, extra: list[str]) -> int:
    import pytest

    try:
        table_dirs.locate(args.cases_dir, args.snapshots_dir)  # the plugin finds the same; fail early and plainly
    except table_dirs.TableError as exc:
        print(f"conformance run: {exc}", file=sys.stderr)
        return 2
    pytest_args = [str(SUITE_DIR), "-p", "conformance.pytest_plugin", "-o", "addopts=", "-p", "no:cacheprovider",
                   "--rootdir", str(Path.cwd()), "--conformance-backend", args.backend, "-q"]
    if args.backend == "live":
        from .cluster.process import handle_termination
        handle_termination()  # SIGTERM/SIGHUP unwind like Ctrl-C: nothing of the run is left behind
        # The pool's progress line comes from a thread while tests wait; pytest would capture it.
        pytest_args.append("--capture=no")
    if args.cases_dir:
        pytest_args += ["--conformance-cases-dir", args.cases_dir]
    if args.snapshots_dir:
        pytest_args += ["--conformance-snapshots-dir", args.snapshots_dir]
    for profile in args.profile:
        pytest_args += ["--conformance-profile", profile]
    for level in args.level:
        pytest_args += ["--conformance-level", level]
    if args.tier != "full":
        if args.snapshot_update:
            print("conformance run: --snapshot-update writes every golden: it runs --tier full", file=sys.stderr)
            return 2
        pytest_args += ["--conformance-tier", args.tier]
    if args.keyword:
        pytest_args += ["-k", args.keyword]
    if args.live_workers is not None:
        pytest_args += ["--conformance-live-workers", str(args.live_workers)]
    if args.junitxml:
        pytest_args += ["--junitxml", args.junitxml]
    if args.snapshot_update:
        pytest_args.append("--snapshot-update")
    provider = None
    if args.provider in ("local", "realnodes"):
        if args.backend != "live" or args.kubeconfig:
            print(f"conformance run: --provider {args.provider} needs --backend live and no --kubeconfig", file=sys.stderr)
            return 2
        os.environ["TC_LIVE_PROVIDER"] = args.provider
    if args.pod_lifecycle:
        if args.backend != "live":
            print("conformance run: --pod-lifecycle needs --backend live", file=sys.stderr)
            return 2
        os.environ["TC_LIVE_POD_LIFECYCLE"] = args.pod_lifecycle
    if args.provider in ("kind", "k3s"):
        if args.backend != "live" or args.kubeconfig:
            print(f"conformance run: --provider {args.provider} needs --backend live and no --kubeconfig", file=sys.stderr)
            return 2
        from .cluster.providers import ProviderError, make
        provider = make(args.provider)
        try:
            args.kubeconfig = str(provider.up())
        except ProviderError as exc:
            print(f"conformance run: {exc}", file=sys.stderr)
            return 2
    try:
        if args.kubeconfig:
            pytest_args += ["--conformance-kubeconfig", args.kubeconfig]
        problem = _select_operator(args)
        if problem:
            print(f"conformance run: {problem}", file=sys.stderr)
            return 2
        pytest_args += report_pytest_args(args)
        return int(pytest.main(pytest_args + extra))
    finally:
        if provider is not None:
            provider.down()


def _select_operator(args) -> str | None:
    """``--operator`` picks the live backend's operator (``TC_LIVE_OPERATOR``); for an external one,
    check up front that the cluster serves what the claimed profiles need. Returns a problem or None."""
    if args.backend != "live":
        return "--operator external needs --backend live" if args.operator == "external" else None
    operator = args.operator or os.environ.get("TC_LIVE_OPERATOR") or "reference"
    os.environ["TC_LIVE_OPERATOR"] = operator
    if args.report_dir:
        args.operator = operator  # the report records the operator that actually ran
    else:
        args.operator = None  # only a report option besides selecting the operator
    if operator != "external":
        return None
    kubeconfig = args.kubeconfig or os.environ.get("TC_LIVE_KUBECONFIG")
    if not kubeconfig:
        return "--operator external needs --kubeconfig (the cluster where the operator is installed)"
    if not args.profile:
        return "--operator external needs --profile (the profiles the implementation claims)"
    from reconciler.live.rest import Api

    from .live.external import MissingApisError, check_served
    try:
        api = Api.from_kubeconfig(kubeconfig)
        try:
            check_served(api, args.profile, where=f"the cluster of {kubeconfig}")
        finally:
            api.close()
    except MissingApisError as exc:
        return str(exc)
    except Exception as exc:  # noqa: BLE001 - unreachable cluster, bad kubeconfig: say which
        return f"--operator external: cannot read the API of {kubeconfig}: {type(exc).__name__}: {exc}"
    return None


def list_cases(cases_dir: str | None, profiles: list[str]) -> int:
    try:
        cases_dir = table_dirs.locate(cases_dir).cases
    except table_dirs.TableError as exc:
        print(f"conformance list: {exc}", file=sys.stderr)
        return 2
    rows = []
    for case in case_loader.load_all(cases_dir):
        case_profiles = [p for p in case.profiles() if not profiles or p in profiles]
        if profiles and not case_profiles:
            continue
        rows.append((case.full_id, case.table or "-", case.level, ",".join(case_profiles) or "-",
                     "BROKEN: " + case.error if isinstance(case, case_loader.BrokenCase) else ""))
    if not rows:
        print(f"no cases under {cases_dir}" + (f" for profile {', '.join(profiles)}" if profiles else ""), file=sys.stderr)
        return 1
    widths = [max(len(r[i]) for r in rows + [("ID", "TABLE", "LEVEL", "PROFILES", "")]) for i in range(4)]
    print("  ".join(h.ljust(w) for h, w in zip(("ID", "TABLE", "LEVEL", "PROFILES"), widths)))
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row[:4], widths)) + (f"  {row[4]}" if row[4] else ""))
    print(f"{len(rows)} cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
