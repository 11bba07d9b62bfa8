"""The mutation pass judges each mutant with hack/mutation/run.py's ``judge`` instead of pytest: it must
give the suite test's verdict - pass on the unmutated reference, fail on an unmet expectation, on a
golden that differs or is missing, and on a crash inside the reference."""

from __future__ import annotations

import importlib.util
import io
import shutil
from pathlib import Path

import pytest

from conformance import cases as case_loader
from conformance.golden import relative_path
from conformance.zoo.variants import VARIANTS

ROOT = Path(__file__).resolve().parents[1]
CASES, SNAPSHOTS = ROOT / "cases", ROOT / "snapshots"
SUITE = "conformance/suite/test_conformance.py::test_case"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"_mutation_{name}", ROOT / "hack" / "mutation" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


run = _load("run")


def _rows() -> list[tuple[case_loader.Case, str]]:
    return [(case, profile) for case in case_loader.load_all(CASES) if isinstance(case, case_loader.Case)
            for profile in case.profiles()]


def _test_id(case, profile) -> str:
    return f"{SUITE}[{profile}:{case.full_id}]"


def _first_row_of_each_table_and_profile() -> list[str]:
    seen, ids = set(), []
    for case, profile in _rows():
        if (case.suite, case.table, profile) not in seen:
            seen.add((case.suite, case.table, profile))
            ids.append(_test_id(case, profile))
    return ids


def test_key_order_counts_as_in_the_golden_text(tmp_path):
    """Goldens keep Kubernetes' key order, so the data comparison must see order too."""
    import yaml

    case, profile = _rows()[0]
    golden = _copy_golden(tmp_path, case, profile)
    data = yaml.safe_load(golden.read_text())
    reordered = {k: data[k] for k in reversed(list(data))}
    golden.write_text(yaml.safe_dump(reordered, sort_keys=False))
    assert run.judge([_test_id(case, profile)], CASES, tmp_path) == 1


def test_unmutated_rows_pass():
    ids = _first_row_of_each_table_and_profile()
    assert len(ids) > 30, "the sample covers too few tables to mean anything"
    out = io.StringIO()
    assert run.judge(ids, CASES, SNAPSHOTS, out) == 0, out.getvalue()


def _copy_golden(tmp_path: Path, case, profile) -> Path:
    path = relative_path(profile, case.table, case.id)
    (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(SNAPSHOTS / path, tmp_path / path)
    return tmp_path / path


def test_a_golden_that_differs_or_is_missing_fails(tmp_path):
    """The golden is compared as data (run.py explains why that is the text comparison for a golden
    render wrote): a changed value fails, as does a missing file."""
    case, profile = _rows()[0]
    golden = _copy_golden(tmp_path, case, profile)
    assert run.judge([_test_id(case, profile)], CASES, tmp_path) == 0
    text = golden.read_text()
    assert f"profile: {profile}\n" in text
    golden.write_text(text.replace(f"profile: {profile}\n", "profile: another\n", 1))
    out = io.StringIO()
    assert run.judge([_test_id(case, profile)], CASES, tmp_path, out) == 1
    assert f"differs from its golden {golden}" in out.getvalue()
    golden.unlink()
    assert run.judge([_test_id(case, profile)], CASES, tmp_path) == 1


def test_an_unmet_expectation_fails_before_the_golden_is_read(tmp_path):
    """A zoo variant is a known-bad reference caught by explicit expectations (make zoo)."""
    from conformance.zoo.runner import _fails

    variant = next(v for v in VARIANTS if v.name == "mpijob-hostfile-omits-launcher")
    with variant.applied():
        catching = next(_test_id(c, p) for c, p in _rows() if c.suite == variant.suite and _fails(c, p))
        out = io.StringIO()
        assert run.judge([catching], CASES, tmp_path / "no-goldens", out) == 1
    assert out.getvalue().startswith(catching + ": ")
    assert "golden" not in out.getvalue()
    assert run.judge([catching], CASES, SNAPSHOTS) == 0, "the row passes once the variant is gone"


def test_a_crash_in_the_reference_fails(monkeypatch):
    from reconciler import batch

    def broken(self, cluster, job):
        raise ZeroDivisionError("a mutant divided by zero")

    monkeypatch.setattr(batch.JobController, "_sync", broken)
    case, profile = next((c, p) for c, p in _rows() if c.suite == "jobset" and c.table == "group-restart")
    out = io.StringIO()
    assert run.judge([_test_id(case, profile)], CASES, SNAPSHOTS, out) == 1
    assert "ZeroDivisionError: a mutant divided by zero" in out.getvalue()


def test_a_test_id_that_names_no_row_is_refused():
    with pytest.raises(run.UnknownTest, match="no such row"):
        run.judge([f"{SUITE}[trainer-v2.3:mpi-topology/no-such-row]"], CASES, SNAPSHOTS)
    with pytest.raises(run.UnknownTest):
        run.judge(["tests/test_other.py::test_something"], CASES, SNAPSHOTS)


def test_a_row_id_shared_by_two_suites_is_told_apart_by_the_profile():
    """Every suite has an ``admission`` table, so ``admission/<row>`` alone can name two rows."""
    rows = run.row_index(CASES)
    shared = next(full_id for full_id, same in rows.items() if len({c.suite for c in same}) > 1)
    for case in rows[shared]:
        for profile in case.profiles():
            assert run.find_row(rows, shared, profile) is case
