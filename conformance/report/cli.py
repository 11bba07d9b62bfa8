"""``conformance report FILE`` and the report options of ``conformance run``.

``run_options(p_run)`` adds ``--report-dir``, ``--implementation``, ``--implementation-version``,
``--implementation-url`` and ``--operator`` to the run parser; ``pytest_args(args)`` turns them
into the collector plugin's pytest arguments (nothing without ``--report-dir``).
``add_report_command(subparsers)`` adds ``report``, which prints a report as Markdown (exit 0; with
``--check``, the report's exit code; 2 if the file is not a readable ConformanceReport).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

from . import markdown
from .model import ReportError, check_report, exit_code

_PLUGIN = "conformance.report.collector"
_IMPLEMENTATION_OPTIONS = ("implementation", "implementation_version", "implementation_url", "operator")


def run_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("report")
    group.add_argument("--report-dir", metavar="DIR",
                       help="write report.yaml, junit.xml, conformance.log and submission/ here; the exit code "
                            "then counts only core failures and errors")
    group.add_argument("--implementation", metavar="ORG/PROJECT", help="the operator under test")
    group.add_argument("--implementation-version", metavar="VERSION")
    group.add_argument("--implementation-url", metavar="URL")
    group.add_argument("--operator", choices=["reference", "external"],
                       help="reference = this project's reconciler, external = a vendor operator "
                            "(default: reference on the render backend)")


def pytest_args(args: argparse.Namespace) -> list[str]:
    if not getattr(args, "report_dir", None):
        given = [f"--{name.replace('_', '-')}" for name in _IMPLEMENTATION_OPTIONS if getattr(args, name, None)]
        if given:
            raise SystemExit(f"conformance run: {', '.join(given)} only make sense with --report-dir")
        return []
    out = ["-p", _PLUGIN, "--report-dir", args.report_dir]
    for name in _IMPLEMENTATION_OPTIONS:
        value = getattr(args, name, None)
        if value:
            out += [f"--{name.replace('_', '-')}", value]
    return out


def add_report_command(subparsers) -> None:
    p = subparsers.add_parser("report", help="print a ConformanceReport (report.yaml) as Markdown")
    p.add_argument("file", metavar="FILE", help="report.yaml written by `conformance run --report-dir`")
    p.add_argument("--check", action="store_true",
                   help="exit with the report's exit code (1 if a core case failed or a case errored)")
    p.set_defaults(report_command=report_command)


def load(path: Path) -> dict:
    try:
        data = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise ReportError(f"{path}: cannot read: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise ReportError(f"{path}: malformed YAML: {' '.join(str(exc).split())}") from None
    return check_report(data, str(path))


def report_command(args: argparse.Namespace, extra: list[str]) -> int:
    if extra:
        print(f"conformance report: unrecognized arguments: {' '.join(extra)}", file=sys.stderr)
        return 2
    try:
        report = load(Path(args.file))
    except ReportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(markdown.render(report))
    return exit_code(report) if args.check else 0
