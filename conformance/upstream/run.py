"""``make upstream-conformance``: the conformance table against the real upstream operators.

For each install in :data:`RUNS` (a project at a release): a fresh local control plane, the release
and what it requires installed by :func:`conformance.upstream.install`, then ``conformance run
--backend live --operator external`` once per installed project and profile its release is judged
with (:attr:`~conformance.upstream.projects.Project.profiles`; Trainer v2.3.0 is judged with
trainer-v2.3 and the JobSet v0.12.0 it pins with jobset-v0.12), each writing its report under
``docs/results/<project>-<version>/`` - a release judged by several profiles (Volcano v1.10.0 by
volcano-v1.10, -v1.11 and -v1.12) writes its own profile's there and each other one's under
``<project>-<version>-<profile>/``; then everything is torn down. The plane leaves out the
components the installed projects' managers replace (vc-scheduler: the volcano-binder stand-in). Rows that crash a release's
manager (:attr:`~conformance.upstream.projects.Project.isolated`) are left out of that run and run
afterwards one by one, each once the kit has its managers serving again, with their reports under
``<project>-<version>/isolated/<row>/``. The kit restarts a manager that exits; the restarts seen in
each run are printed.

    python -m conformance.upstream.run [--results DIR] [--only trainer-v2.3.0 | --only v2.3.0] [-k EXPR]
                                       [--provider local|realnodes] [--profile PROFILE]

Exit code: 0 when every run wrote its report (core failures are results, read them in the
reports), 1 otherwise.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from ..cluster import LocalControlPlane
from ..cluster.local import real_nodes
from . import install, projects

#: (project, release) installed one after the other, each on a fresh control plane.
RUNS = (
    ("trainer", "v2.3.0"),
    ("trainer", "v2.1.0"),
    ("training-operator", "v1.9.2"),
    ("training-operator", "v1.8.1"),
    ("mpi-operator", "v0.6.0"),
    ("lws", "v0.7.0"),
    ("volcano", "v1.10.0"),
)


def run_id(project: str, version: str) -> str:
    return f"{project}-{version}"


def report_dirs(results: Path, project: projects.Project, version: str) -> list[tuple[str, Path]]:
    """(profile, report directory) for each profile ``version`` of ``project`` is judged with: the
    release's own profile (the first) in ``<project>-<version>/``, any other in ``<project>-<version>-<profile>/``."""
    judged = project.profiles_for(version)
    return [(profile, results / (run_id(project.name, version) + ("" if i == 0 else f"-{profile}")))
            for i, profile in enumerate(judged)]


def plane_options(project: str) -> dict:
    """LocalControlPlane options for installing ``project`` (and what it requires)."""
    from ..cluster.local import VOLCANO_BINDER

    replaced = {c for p in projects.with_requirements(project) for c in p.replaces}
    unknown = replaced - {VOLCANO_BINDER}
    if unknown:
        raise ValueError(f"{project}: the local plane has no optional component {', '.join(sorted(unknown))}")
    return {"volcano_binder": VOLCANO_BINDER not in replaced}


#: Seconds a case gives Pods of a non-default scheduler to be bound when the real one runs (vc-scheduler
#: binds on its 1 s schedule period, after its enqueue action; 4 cases at a time on 2 busy cores), instead
#: of the harness's 2 s meant for clusters that may not run that scheduler at all.
REAL_SCHEDULER_GRACE = 30


def conformance_run(kubeconfig: Path, profile: str, implementation: str, version: str, url: str,
                    report_dir: Path, keyword: str | None, workers: int | None = None,
                    env: dict[str, str] | None = None) -> int:
    command = [sys.executable, "-m", "conformance.cli", "run", "--backend", "live", "--kubeconfig", str(kubeconfig),
               "--operator", "external", "--profile", profile, "--report-dir", str(report_dir),
               "--implementation", implementation, "--implementation-version", version,
               "--implementation-url", url]
    if keyword:
        command += ["-k", keyword]
    if workers:
        command += ["--live-workers", str(workers)]
    print("+ " + " ".join([*(f"{k}={v}" for k, v in (env or {}).items()), *command]), flush=True)
    return subprocess.call(command, env={**os.environ, **env} if env else None)


def run_release(project: str, version: str, results: Path, keyword: str | None,
                provider: str = "local", only_profiles: list[str] | None = None) -> list[tuple[Path, int]]:
    """``provider`` realnodes: the plane also has stand-in kubelets that never run the cases' images
    (as kind's), so the run shows that the harness's own pod lifecycle steers every case pod."""
    done = []
    started = time.monotonic()
    nodes = real_nodes() if provider == "realnodes" else None
    with LocalControlPlane(nodes=nodes, **plane_options(project)) as plane, \
            install(plane.kubeconfig, version, project=project, remove_crds=False) as kit:
        print(f"upstream: {project} {version} up in {time.monotonic() - started:.1f}s: {kit.describe()}", flush=True)
        for installed in reversed(kit.projects):  # the one asked for first
            build = kit.builds[installed.name]
            judged = [(p, d) for p, d in report_dirs(results, installed, build.version)
                      if not only_profiles or p in only_profiles]
            if not judged:
                print(f"upstream: no profile judges {installed.name} {build.version}; not run", flush=True)
            env = run_env(project)
            for profile, report_dir in judged:
                done += _judge(kit, plane, installed, build.version, profile, report_dir, keyword, env)
    return done


def run_env(project: str) -> dict[str, str]:
    """Environment of the conformance runs against ``project``: a longer scheduler grace where its own
    scheduler replaces the plane's stand-in binder."""
    return {} if plane_options(project)["volcano_binder"] else {"TC_LIVE_SCHEDULER_GRACE": str(REAL_SCHEDULER_GRACE)}


def _judge(kit, plane, installed: projects.Project, version: str, profile: str, report_dir: Path,
           keyword: str | None, env: dict[str, str] | None = None) -> list[tuple[Path, int]]:
    """One profile's run against the installed release, then its isolated rows one by one."""
    done = []
    isolated = installed.isolated.get(version, ())
    started = time.monotonic()
    code = conformance_run(plane.kubeconfig, profile, installed.implementation, version, installed.url,
                           report_dir, _without(keyword, isolated), env=env)
    done.append((report_dir, code))
    print(f"upstream: {profile} against {installed.name} {version} in {time.monotonic() - started:.1f}s; "
          f"manager restarts: {kit.restarts()}", flush=True)
    for row in isolated:
        if keyword and not _selected(row, keyword):
            continue
        kit.wait_ready()
        row_dir = report_dir / "isolated" / row.split("/")[-1]
        code = conformance_run(plane.kubeconfig, profile, installed.implementation, version,
                               installed.url, row_dir, row.split("/")[-1], workers=1, env=env)
        done.append((row_dir, code))
        print(f"upstream: manager restarts after {row}: {kit.restarts()}", flush=True)
    return done


def _without(keyword: str | None, rows: tuple[str, ...]) -> str | None:
    """``keyword`` (a pytest -k expression, or None) with ``rows`` (``<table>/<row>``) left out."""
    if not rows:
        return keyword
    excluded = " and ".join(f"not {row.split('/')[-1]}" for row in rows)
    return f"({keyword}) and {excluded}" if keyword else excluded


def _selected(row: str, keyword: str) -> bool:
    """Whether a plain -k substring (the usual rerun) names ``row``; an expression runs every isolated row."""
    simple = keyword.replace("-", "").replace("_", "").replace("/", "").isalnum()
    return not simple or keyword in row


def select(only: list[str] | None) -> list[tuple[str, str]]:
    """RUNS named by ``<project>-<version>`` or, where one project has it, by ``<version>``."""
    if not only:
        return list(RUNS)
    chosen = []
    for name in only:
        matches = [r for r in RUNS if run_id(*r) == name] or [r for r in RUNS if r[1] == name]
        if len(matches) != 1:
            known = ", ".join(run_id(*r) for r in RUNS)
            raise SystemExit(f"--only {name}: {'ambiguous' if matches else 'unknown'} (one of: {known})")
        chosen += matches
    return chosen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.upstream.run", description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=Path("docs/results"))
    parser.add_argument("--only", action="append", metavar="PROJECT-VERSION",
                        help=f"these installs only (of: {', '.join(run_id(*r) for r in RUNS)}; a version alone "
                             "where one project has it)")
    parser.add_argument("-k", dest="keyword", help="only cases matching this pytest -k expression")
    parser.add_argument("--provider", choices=["local", "realnodes"], default="local",
                        help="realnodes: planes with stand-in kubelets that never run the cases' images, as kind's "
                             "(the harness's pod lifecycle runs the pods either way)")
    parser.add_argument("--profile", action="append", dest="profiles", metavar="PROFILE",
                        help="judge with these profiles only (e.g. volcano-v1.12; default: every profile of the release)")
    args = parser.parse_args(argv)
    for project, version in RUNS:
        projects.get(project)  # a typo in RUNS fails before any control plane starts
    done = []
    for project, version in select(args.only):
        done += run_release(project, version, args.results, args.keyword, args.provider, args.profiles)
    missing = [d for d, _ in done if not (d / "report.yaml").is_file()]
    for report_dir, code in done:
        print(f"{report_dir}: exit {code}{' (no report written)' if report_dir in missing else ''}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
