"""pytest plugin that records every conformance case and writes the report directory.

Activate with ``-p conformance.report.collector --report-dir DIR``; without ``--report-dir`` it
does nothing. It reads ``--backend``, ``--profile`` and ``--level`` from conformance.pytest_plugin.

Options: ``--implementation ORG/PROJECT`` and ``--implementation-version`` (both required for
``--operator external``; for ``reference`` they default to this project's reconciler and the
harness version), ``--implementation-url``, ``--operator reference|external`` (default: reference
on the render backend, external on any other; the render backend always runs the reference
reconciler, so ``external`` with it is a usage error).

At session end it writes report.yaml, junit.xml, conformance.log and submission/ (see
:mod:`.writers`) and sets the exit status to :func:`.model.exit_code` of the report: extended
failures do not fail the run, core failures and errors do. pytest's own non-test statuses
(usage error, interrupted, nothing collected, internal error) are kept, and so is a failure of
any non-conformance test in the same session.

Result and exit-code rules: see :mod:`conformance.report.model`.
"""

from __future__ import annotations

import importlib
import shlex
import sys
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

import pytest

from ..cases import BrokenCase
from ..pytest_plugin import _STATE_KEY as _SUITE_STATE_KEY
from ..pytest_plugin import _SUITE_TEST
from .model import NO_PROFILE, CaseResult, Implementation, build_report, exit_code
from .writers import KUBECONFIG_PLACEHOLDER, write_all

PACKAGE = "training-conformance"
REFERENCE_IMPLEMENTATION = ("training-conformance", "reference-reconciler")
_KEY = pytest.StashKey["Collector"]()


def pytest_addoption(parser):
    group = parser.getgroup("conformance report")
    group.addoption("--report-dir", default=None, metavar="DIR",
                    help="write report.yaml, junit.xml, conformance.log and submission/ here")
    group.addoption("--implementation", default=None, metavar="ORG/PROJECT", help="the operator under test")
    group.addoption("--implementation-version", default=None, metavar="VERSION")
    group.addoption("--implementation-url", default="", metavar="URL")
    group.addoption("--operator", default=None, choices=["reference", "external"],
                    help="reference = this project's reconciler; external = a vendor operator "
                         "(default: reference on the render backend, external otherwise)")


def harness_version() -> str:
    try:
        return metadata.version(PACKAGE)
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


def backend_kubernetes_version(backend: str) -> str:
    """What the backend module's optional ``kubernetes_version()`` hook says."""
    try:
        module = importlib.import_module(f"conformance.backends.{backend}")
    except ImportError as exc:
        return f"unknown (backend module not importable: {exc})"
    hook = getattr(module, "kubernetes_version", None)
    if hook is None:
        return f"unknown (backend {backend} has no kubernetes_version())"
    try:
        return str(hook())
    except Exception as exc:  # noqa: BLE001 - the report is still worth writing
        return f"unknown ({type(exc).__name__}: {exc})"


def _implementation(config, operator: str) -> Implementation:
    slug = config.getoption("--implementation")
    version = config.getoption("--implementation-version")
    url = config.getoption("--implementation-url") or ""
    if slug is None:
        if operator == "external":
            raise pytest.UsageError("--operator external needs --implementation ORG/PROJECT and "
                                    "--implementation-version")
        if version is not None:
            raise pytest.UsageError("--implementation-version needs --implementation ORG/PROJECT")
        return Implementation(*REFERENCE_IMPLEMENTATION, version=harness_version(), url=url)
    if not version:
        raise pytest.UsageError(f"--implementation {slug} needs --implementation-version")
    try:
        return Implementation.parse(slug, version, url)
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None


class Collector:
    def __init__(self, config, report_dir: Path):
        self.config = config
        self.report_dir = report_dir
        self.backend = config.getoption("--conformance-backend")
        self.operator = config.getoption("--operator") or ("reference" if self.backend == "render" else "external")
        if self.backend == "render" and self.operator == "external":
            raise pytest.UsageError("--operator external: the render backend runs the reference reconciler; "
                                    "an external operator needs a live backend")
        self.implementation = _implementation(config, self.operator)
        self.cases: dict[str, tuple] = {}  # nodeid -> (case, profile)
        self.results: dict[str, CaseResult] = {}  # nodeid -> result, in run order
        self.other_failures = 0
        self.report: dict | None = None

    # ---------------------------------------------------------------- recording

    def pytest_itemcollected(self, item) -> None:
        if _SUITE_TEST in item.nodeid and hasattr(item, "callspec"):
            params = item.callspec.params
            self.cases[item.nodeid] = (params["conformance_case"], params["conformance_profile"])

    def pytest_runtest_logreport(self, report) -> None:
        if report.nodeid not in self.cases:
            self.other_failures += report.failed
            return
        case, profile = self.cases[report.nodeid]
        result = self.results.get(report.nodeid)
        if result is None:
            result = self.results[report.nodeid] = CaseResult(
                profile=profile, case_id=case.full_id, table=case.table or NO_PROFILE,
                level=case.level, outcome="passed")
        result.duration += report.duration
        text = _text(report)
        if report.when == "call":
            result.outcome, result.text = report.outcome, text
            if report.failed and (isinstance(case, BrokenCase) or profile == NO_PROFILE):
                result.outcome = "error"  # the case itself is unusable: nothing was judged
        elif report.skipped:  # a skip in setup (pytest.skip in a fixture)
            result.outcome, result.text = "skipped", text
        elif report.failed:  # setup or teardown raised: the harness, not the operator, broke
            result.text = (result.text + "\n\n" if result.text else "") + f"[{report.when}] " + text
            result.outcome = "error"

    # ---------------------------------------------------------------- finishing

    @pytest.hookimpl(trylast=True)  # after conformance.pytest_plugin has judged unused goldens
    def pytest_sessionfinish(self, session) -> None:
        config = self.config
        report = build_report(
            list(self.results.values()), implementation=self.implementation,
            date=datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z"),
            kubernetes_version=backend_kubernetes_version(self.backend), harness_version=harness_version(),
            backend=self.backend, operator=self.operator,
            selection={"profiles": config.getoption("--conformance-profile"), "levels": config.getoption("--conformance-level"),
                       "keyword": config.getoption("keyword") or "",
                       # only when not every row: --tier pr leaves out the rows marked slow
                       **({"tier": tier} if (tier := config.getoption("--conformance-tier", default="full")) != "full" else {})},
            goldens="rewritten" if self.snapshot_update() else "checked",
            extra_errors=_unused_golden_errors(config))
        write_all(self.report_dir, list(self.results.values()), report,
                  pytest_command=self.reproduce_with_pytest(), conformance_command=self.reproduce_with_conformance(),
                  cwd=str(config.invocation_params.dir))
        self.report = report
        if session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED) and not self.other_failures:
            session.exitstatus = exit_code(report)

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if self.report is None:
            return
        report = self.report
        verdicts = ", ".join(f"{p['name']} {p['result']}" for p in report["profiles"]) or "no case ran"
        errors = f", {len(report['errors'])} error(s)" if report["errors"] else ""
        terminalreporter.write_line(f"conformance report: {self.report_dir} ({verdicts}{errors}); "
                                    f"exit code {exit_code(report)}")

    def snapshot_update(self) -> bool:
        return bool(self.config.getoption("--snapshot-update", default=False))

    def reproduce_with_pytest(self) -> str:
        return shlex.join([Path(sys.executable).name, "-m", "pytest", *self.config.invocation_params.args])

    def reproduce_with_conformance(self) -> str:
        config = self.config
        args = ["conformance", "run", "--backend", self.backend]
        if self.backend == "live" and (config.getoption("--conformance-kubeconfig", default=None) or self.operator == "external"):
            args += ["--kubeconfig", KUBECONFIG_PLACEHOLDER]  # the user's cluster, not this run's temporary one
        for profile in config.getoption("--conformance-profile"):
            args += ["--profile", profile]
        for level in config.getoption("--conformance-level"):
            args += ["--level", level]
        if config.getoption("keyword"):
            args += ["-k", config.getoption("keyword")]
        if config.getoption("--conformance-tier", default="full") != "full":
            args += ["--tier", config.getoption("--conformance-tier")]
        for option in ("--cases-dir", "--snapshots-dir"):
            if config.getoption(f"--conformance-{option[2:]}"):
                args += [option, config.getoption(f"--conformance-{option[2:]}")]
        if self.snapshot_update():
            args.append("--snapshot-update")
        args += ["--report-dir", config.getoption("--report-dir"), "--operator", self.operator]
        if config.getoption("--implementation"):
            args += ["--implementation", config.getoption("--implementation"),
                     "--implementation-version", config.getoption("--implementation-version")]
        if config.getoption("--implementation-url"):
            args += ["--implementation-url", config.getoption("--implementation-url")]
        return " ".join(a if a == KUBECONFIG_PLACEHOLDER else shlex.quote(a) for a in args)


def _text(report) -> str:
    if report.passed:
        return ""
    if report.skipped and isinstance(report.longrepr, tuple):
        return str(report.longrepr[2]).removeprefix("Skipped: ")
    return report.longreprtext


def _unused_golden_errors(config) -> list[dict]:
    """The suite plugin fails a full run when a golden belongs to no case; the report says so too."""
    state = config.stash.get(_SUITE_STATE_KEY, None) or {}
    if not state.get("unused") or not state.get("selected_everything") or state.get("deleted"):
        return []
    return [{"id": f"golden:{path}", "level": "core",
             "message": f"golden {path} belongs to no case (run `make snapshots-update` to delete it)"}
            for path in state["unused"]]


# -------------------------------------------------------------------- hooks

def pytest_configure(config):
    report_dir = config.getoption("--report-dir")
    if report_dir:
        # Registered as a plugin object, so its hook methods see this run's state (junitxml does the same).
        config.stash[_KEY] = collector = Collector(config, Path(report_dir))
        config.pluginmanager.register(collector, "conformance-report-collector")


def pytest_unconfigure(config):
    collector = config.stash.get(_KEY, None)
    if collector:
        del config.stash[_KEY]
        config.pluginmanager.unregister(collector)
