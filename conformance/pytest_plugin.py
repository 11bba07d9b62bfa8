"""pytest plugin: turns every case row × profile into a test, and keeps goldens honest.

Options: ``--profile`` (repeatable), ``--backend`` (render|live), ``--kubeconfig`` (live backend),
``--level``, ``--cases-dir``, ``--snapshots-dir``. A full run fails when a golden belongs to no case (``make snapshots-update``
deletes it). The session ends with the line ``conformance: N passed, N failed, N skipped``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reconciler.profiles import PROFILES

from . import cases as case_loader
from .golden import YamlGolden, relative_path

_STATE_KEY = pytest.StashKey[dict]()
_SUITE_TEST = "test_conformance.py::test_case"


def pytest_addoption(parser):
    group = parser.getgroup("conformance")
    group.addoption("--profile", action="append", default=[], choices=sorted(PROFILES),
                    help="run only these profiles (repeatable); default: every profile each row's range covers")
    group.addoption("--backend", default="render", choices=["render", "live"], help="where cases run (default: render)")
    group.addoption("--kubeconfig", default=None,
                    help="live backend: the cluster to use (default: start a local control plane for the run)")
    group.addoption("--live-workers", type=int, default=None,
                    help="live backend: cases in flight at once (default: $TC_LIVE_WORKERS or 4; 1 = one after another)")
    group.addoption("--level", action="append", default=[], choices=["core", "extended"],
                    help="run only rows of this level (repeatable)")
    group.addoption("--cases-dir", default=None, help="case tables (default: <rootdir>/cases)")
    group.addoption("--snapshots-dir", default=None, help="goldens (default: <rootdir>/snapshots)")


def _dirs(config) -> tuple[Path, Path]:
    root = Path(str(config.rootpath))
    cases_dir = Path(config.getoption("--cases-dir") or root / "cases").resolve()
    snaps = Path(config.getoption("--snapshots-dir") or root / "snapshots").resolve()
    return cases_dir, snaps


def pytest_configure(config):
    if config.getoption("--backend", default="render") == "live":
        if config.getoption("--snapshot-update", default=False):
            raise pytest.UsageError("--snapshot-update writes goldens from the render backend only; "
                                    "a live run is compared with them, never the source of them")
        from .live import session
        session.configure(config.getoption("--kubeconfig"))
    _, snaps = _dirs(config)
    YamlGolden.root = snaps
    config.stash[_STATE_KEY] = {"expected_goldens": set(), "selected_everything": True, "counts": {}}


def pytest_generate_tests(metafunc):
    if "conformance_case" not in metafunc.fixturenames:
        return
    config = metafunc.config
    cases_dir, _ = _dirs(config)
    wanted_profiles = config.getoption("--profile")
    wanted_levels = config.getoption("--level")
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
    metafunc.parametrize(("conformance_case", "conformance_profile"), params, ids=ids)


def pytest_collection_modifyitems(session, config, items):
    if config.getoption("-k") or config.getoption("-m"):
        config.stash[_STATE_KEY]["selected_everything"] = False
    if config.getoption("--backend") == "live":
        # Grouped by profile (stable within one): a live profile switch restarts the operator.
        items.sort(key=lambda item: getattr(getattr(item, "callspec", None), "params", {}).get("conformance_profile", ""))


def pytest_collection_finish(session):
    """Live backend: start the selected cases in the background, side by side where they cannot
    disturb each other (:mod:`conformance.live.pool`); each test then waits for its own."""
    config = session.config
    if config.getoption("--backend") != "live" or config.getoption("--collect-only"):
        return
    workers = config.getoption("--live-workers") or int(os.environ.get("TC_LIVE_WORKERS", "4"))
    chosen = []
    for item in session.items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        case, profile = params.get("conformance_case"), params.get("conformance_profile")
        if isinstance(case, case_loader.Case) and profile not in (None, "-"):
            chosen.append((item.nodeid, case, profile))
    from .backends import live
    live.start_pool(chosen, workers)


def pytest_deselected(items):
    for item in items:
        item.config.stash[_STATE_KEY]["selected_everything"] = False


@pytest.fixture
def conformance_backend(request):
    if request.config.getoption("--backend") == "live":
        from .backends import live
        return live.for_test(request.node.nodeid)
    from .backends import render
    return render


def pytest_sessionfinish(session, exitstatus):
    config = session.config
    if config.getoption("--backend", default="render") == "live":
        from .backends import live
        from .live import session as live_session
        live.stop_pool()
        live_session.close()
    state = config.stash.get(_STATE_KEY, None)
    if state is None or not state["expected_goldens"]:
        return
    _, snaps = _dirs(config)
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
    if state is None or not state["expected_goldens"]:
        return
    if state.get("deleted"):
        terminalreporter.write_line(f"deleted {len(state['deleted'])} unused golden(s): "
                                    + ", ".join(map(str, state["deleted"])))
    elif state.get("unused") and state["selected_everything"]:
        terminalreporter.write_line(
            f"FAILED: {len(state['unused'])} golden(s) in {_dirs(config)[1]} belong to no case: "
            + ", ".join(map(str, state["unused"])) + " (run `make snapshots-update` to delete them)", red=True)
    counts = {outcome: len([r for r in terminalreporter.stats.get(outcome, [])
                            if _SUITE_TEST in getattr(r, "nodeid", "") and (r.when == "call" or r.outcome != "passed")])
              for outcome in ("passed", "failed", "skipped")}
    counts["failed"] += len([r for r in terminalreporter.stats.get("error", []) if _SUITE_TEST in getattr(r, "nodeid", "")])
    unused = len(state.get("unused") or []) if state["selected_everything"] and not state.get("deleted") else 0
    note = f" ({unused} unused golden(s) count as failed)" if unused else ""
    terminalreporter.write_line(
        f"conformance: {counts['passed']} passed, {counts['failed'] + unused} failed, {counts['skipped']} skipped{note}")
