"""``make upstream-conformance``: the conformance table against the real upstream operators.

For each Trainer release: a fresh local control plane, the release's Trainer and the JobSet it
pins installed by :func:`conformance.upstream.install`, then ``conformance run --backend live
--operator external`` once for the Trainer profile and once for the JobSet profile, each writing
its report under ``docs/results/<project>-<version>/``; then everything is torn down.

    python -m conformance.upstream.run [--results DIR] [--only v2.3.0] [-k EXPR]

Exit code: 0 when every run wrote its report (core failures are results, read them in the
reports), 1 otherwise.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

from ..cluster import LocalControlPlane
from . import install

TRAINER_URL = "https://github.com/kubeflow/trainer"
JOBSET_URL = "https://github.com/kubernetes-sigs/jobset"

#: Trainer release -> (its profile, the JobSet profile of the JobSet release it pins).
RELEASES = {
    "v2.3.0": ("trainer-v2.3", "jobset-v0.12"),
    "v2.1.0": ("trainer-v2.1", "jobset-v0.10"),
}


def conformance_run(kubeconfig: Path, profile: str, implementation: str, version: str, url: str,
                    report_dir: Path, keyword: str | None) -> int:
    command = [sys.executable, "-m", "conformance.cli", "run", "--backend", "live", "--kubeconfig", str(kubeconfig),
               "--operator", "external", "--profile", profile, "--report-dir", str(report_dir),
               "--implementation", implementation, "--implementation-version", version,
               "--implementation-url", url]
    if keyword:
        command += ["-k", keyword]
    print("+ " + " ".join(command), flush=True)
    return subprocess.call(command)


def run_release(trainer_version: str, results: Path, keyword: str | None) -> list[tuple[Path, int]]:
    trainer_profile, jobset_profile = RELEASES[trainer_version]
    done = []
    started = time.monotonic()
    with LocalControlPlane() as plane, install(plane.kubeconfig, trainer_version, remove_crds=False) as kit:
        print(f"upstream: Trainer {trainer_version} + JobSet {kit.jobset_version} up in "
              f"{time.monotonic() - started:.1f}s: {kit.describe()}", flush=True)
        for profile, project, version, url in (
                (trainer_profile, "kubeflow/trainer", trainer_version, TRAINER_URL),
                (jobset_profile, "kubernetes-sigs/jobset", kit.jobset_version, JOBSET_URL)):
            report_dir = results / f"{project.split('/')[1]}-{version}"
            code = conformance_run(plane.kubeconfig, profile, project, version, url, report_dir, keyword)
            done.append((report_dir, code))
    return done


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.upstream.run", description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=Path("docs/results"))
    parser.add_argument("--only", action="append", choices=sorted(RELEASES), help="these Trainer releases only")
    parser.add_argument("-k", dest="keyword", help="only cases matching this pytest -k expression")
    args = parser.parse_args(argv)
    done = []
    for trainer_version in args.only or list(RELEASES):
        done += run_release(trainer_version, args.results, args.keyword)
    missing = [d for d, _ in done if not (d / "report.yaml").is_file()]
    for report_dir, code in done:
        print(f"{report_dir}: exit {code}{' (no report written)' if report_dir in missing else ''}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
