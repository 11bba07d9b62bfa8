"""pytest plugin: turns every case row × profile into a test, and keeps goldens honest.

Installed as a ``pytest11`` entry point, so any pytest can run the table:
``pytest --pyargs conformance.suite --conformance-profile trainer-v2.3``. Its options carry the
``--conformance-`` prefix so they cannot clash with other plugins' (``conformance run`` maps its
short ones onto them): ``-profile`` (repeatable), ``-backend`` (render|live), ``-kubeconfig``
(live backend), ``-level``, ``-tier``, ``-live-workers``, ``-cases-dir``, ``-snapshots-dir`` (the table:
:mod:`conformance.table`). It does nothing to a session that does not collect the suite's test.

A full run fails when a golden belongs to no case (``make snapshots-update`` deletes it); a run
that selects no case fails too, saying so. The session ends with the line
``conformance: N passed, N failed, N skipped``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reconciler.profiles import PROFILES

from . import cases as case_loader
from .table import TableDirs, TableError, locate

_STATE_KEY = pytest.StashKey[dict]()
_DIRS_KEY = pytest.StashKey[TableDirs]()
_SUITE_TEST = "test_conformance.py::test_case"
#: Row selections: ``full`` runs every row; ``pr`` (a pull request's run) leaves out rows marked
#: ``slow`` - skipped with the row's reason, never silently.
TIERS = ("full", "pr")
#: The placeholder test of a run that selected no case: it fails, saying what was asked for.
NOTHING_SELECTED = "nothing-selected"


def pytest_addoption(parser):
    group = parser.getgroup("conformance")
    group.addoption("--conformance-profile", action="append", default=[], choices=sorted(PROFILES),
                    help="run only these profiles (repeatable); default: every profile each row's range covers")
    group.addoption("--conformance-backend", default="render", choices=["render", "live"],
                    help="where cases run (default: render)")
    group.addoption("--conformance-kubeconfig", default=None,
                    help="live backend: the cluster to use (default: start a local control plane for the run)")
    group.addoption("--conformance-live-workers", type=int, default=None,
                    help="live backend: cases in flight at once (default: $TC_LIVE_WORKERS or 4; 1 = one after another)")
    group.addoption("--conformance-level", action="append", default=[], choices=["core", "extended"],
                    help="run only rows of this level (repeatable)")
    group.addoption("--conformance-tier", default="full", choices=list(TIERS),
                    help="pr: leave out rows marked slow (each reported as skipped with its reason); full: every row")
    group.addoption("--conformance-cases-dir", default=None,
                    help="case tables (default: the checkout you are in, else the installed table)")
    group.addoption("--conformance-snapshots-dir", default=None,
                    help="goldens (default: the snapshots folder beside the cases folder)")


def table_dirs(config) -> TableDirs:
    found = config.stash.get(_DIRS_KEY, None)
    if found is None:
        try:
            found = locate(config.getoption("--conformance-cases-dir"), config.getoption("--conformance-snapshots-dir"),
                           cwd=Path(str(config.invocation_params.dir)))
        except TableError as exc:
            raise pytest.UsageError(f"conformance: {exc}") from None
        config.stash[_DIRS_KEY] = found
    return found


def pytest_configure(config):
    config.stash[_STATE_KEY] = {"expected_goldens": set(), "selected_everything": True, "counts": {}}


def _configure_suite(config) -> None:
    """Set-up that only a session running the suite needs (the plugin is loaded in every pytest)."""
    state = config.stash[_STATE_KEY]
    if state.get("configured"):
        return
    state["configured"] = True
    if config.getoption("--conformance-backend") == "live":
        if config.getoption("--snapshot-update", default=False):
            raise pytest.UsageError("--snapshot-update writes goldens from the render backend only; "
                                    "a live run is compared with them, never the source of them")
        from .live import session
        session.configure(config.getoption("--conformance-kubeconfig"))
    from .suite.goldens import YamlGolden  # not at import: syrupy must be imported by pytest first (assertion rewriting)
    YamlGolden.root = table_dirs(config).snapshots


def pytest_generate_tests(metafunc):
    if "conformance_case" not in metafunc.fixturenames:
        return
    from .golden import relative_path
    config = metafunc.config
    _configure_suite(config)
    cases_dir = table_dirs(config).cases
    wanted_profiles = config.getoption("--conformance-profile")
    wanted_levels = config.getoption("--conformance-level")
    state = config.stash[_STATE_KEY]
    if wanted_profiles or wanted_levels:
        state["selected_everything"] = False
    params, ids = [], []
    for case in case_loader.load_all(cases_dir):
        if wanted_levels and case.level not in wanted_levels:
            continue
        profiles = case.profiles()
        if isinstance(case, case_loader.Case) and not profiles:
            params.append((case, "-"))  # fails: the range covers no profile we implement
            ids.append(f"-:{case.full_id}")
            continue
        for profile in profiles:
            if wanted_profiles and profile != "-" and profile not in wanted_profiles:
                continue
            params.append((case, profile))
            ids.append(f"{profile}:{case.full_id}")
            if isinstance(case, case_loader.Case):
                state["expected_goldens"].add(relative_path(profile, case.table, case.id))
    if not params:  # an empty run must not pass: one failing test says what selected nothing
        asked = [f"profile {', '.join(wanted_profiles)}" if wanted_profiles else "",
                 f"level {', '.join(wanted_levels)}" if wanted_levels else ""]
        reason = f"no case under {cases_dir}" + (f" for {' and '.join(a for a in asked if a)}" if any(asked) else "")
        params, ids = [(case_loader.BrokenCase(NOTHING_SELECTED, f"conformance: {reason}", cases_dir), "-")], [
            f"-:{NOTHING_SELECTED}"]
    metafunc.parametrize(("conformance_case", "conformance_profile"), params, ids=ids)


def tier_skip(config, case) -> str | None:
    """The skip reason of a row the ``--conformance-tier`` leaves out, or None."""
    if config.getoption("--conformance-tier") == "pr" and getattr(case, "slow", None):
        return f"--tier pr leaves out slow rows: {case.slow}"
    return None


def pytest_collection_modifyitems(session, config, items):
    if config.getoption("-k") or config.getoption("-m") or config.getoption("--conformance-tier") != "full":
        config.stash[_STATE_KEY]["selected_everything"] = False
    for item in items:
        reason = tier_skip(config, getattr(getattr(item, "callspec", None), "params", {}).get("conformance_case"))
        if reason:
            item.add_marker(pytest.mark.skip(reason=reason))
    if config.getoption("--conformance-backend") == "live":
        # Grouped by profile (stable within one): a live profile switch restarts the operator.
        items.sort(key=lambda item: getattr(getattr(item, "callspec", None), "params", {}).get("conformance_profile", ""))


def pytest_collection_finish(session):
    """Live backend: start the selected cases in the background, side by side where they cannot
    disturb each other (:mod:`conformance.live.pool`); each test then waits for its own."""
    config = session.config
    if config.getoption("--conformance-backend") != "live" or config.getoption("--collect-only"):
        return
    workers = config.getoption("--conformance-live-workers") or int(os.environ.get("TC_LIVE_WORKERS", "4"))
    chosen = []
    for item in session.items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        case, profile = params.get("conformance_case"), params.get("conformance_profile")
        if isinstance(case, case_loader.Case) and profile not in (None, "-") and not tier_skip(config, case):
            chosen.append((item.nodeid, case, profile))
    from .backends import live
    live.start_pool(chosen, workers)


def pytest_deselected(items):
    for item in items:
        item.config.stash[_STATE_KEY]["selected_everything"] = False


def pytest_report_teststatus(report, config):
    """Live: no progress letter per case. Cases finish in the pool's order, not pytest's, so the
    pool's own progress line (:mod:`conformance.live.progress`) says where the run is."""
    if (config.getoption("--conformance-backend") == "live" and _SUITE_TEST in report.nodeid
            and report.when == "call"):
        return report.outcome, "", report.outcome.upper()
    return None


@pytest.fixture
def conformance_backend(request):
    if request.config.getoption("--conformance-backend") == "live":
        from .backends import live
        return live.for_test(request.node.nodeid)
    from .backends import render
    return render


def pytest_sessionfinish(session, exitstatus):
    config = session.config
    state = config.stash.get(_STATE_KEY, None)
    if state is None or not state.get("configured"):
        return  # this session did not run the suite
    if config.getoption("--conformance-backend") == "live":
        from .backends import live
        from .live import session as live_session
        live.stop_pool()
        live_session.close()
    if not state["expected_goldens"]:
        return
    snaps = table_dirs(config).snapshots
    unused = _unused_goldens(snaps, state["expected_goldens"])
    state["unused"] = unused
    if not unused or not state["selected_everything"]:
        return
    if config.getoption("--snapshot-update", default=False):
        for path in unused:
            (snaps / path).unlink()
        state["deleted"] = unused
    else:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _unused_goldens(snaps: Path, expected: set[Path]) -> list[Path]:
    if not snaps.is_dir():
        return []
    return sorted(p.relative_to(snaps) for p in snaps.rglob("*.yaml") if p.relative_to(snaps) not in expected)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    state = config.stash.get(_STATE_KEY, None)
    if state is None or not state.get("configured"):
        return
    terminalreporter.write_line(f"conformance table: {table_dirs(config).describe()}")
    if state.get("deleted"):
        terminalreporter.write_line(f"deleted {len(state['deleted'])} unused golden(s): "
                                    + ", ".join(map(str, state["deleted"])))
    elif state.get("unused") and state["selected_everything"]:
        terminalreporter.write_line(
            f"FAILED: {len(state['unused'])} golden(s) in {table_dirs(config).snapshots} belong to no case: "
            + ", ".join(map(str, state["unused"])) + " (run `make snapshots-update` to delete them)", red=True)
    counts = {outcome: len([r for r in terminalreporter.stats.get(outcome, [])
                            if _SUITE_TEST in getattr(r, "nodeid", "") and (r.when == "call" or r.outcome != "passed")])
              for outcome in ("passed", "failed", "skipped")}
    counts["failed"] += len([r for r in terminalreporter.stats.get("error", []) if _SUITE_TEST in getattr(r, "nodeid", "")])
    unused = len(state.get("unused") or []) if state["selected_everything"] and not state.get("deleted") else 0
    note = f" ({unused} unused golden(s) count as failed)" if unused else ""
    terminalreporter.write_line(
        f"conformance: {counts['passed']} passed, {counts['failed'] + unused} failed, {counts['skipped']} skipped{note}")
