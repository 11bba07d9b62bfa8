"""The conformance table as pytest tests: one test per case row and profile."""

from __future__ import annotations

import difflib

import pytest

from conformance.cases import BrokenCase
from conformance.execute import run_case
from conformance.suite.goldens import YamlGolden


def test_case(conformance_case, conformance_profile, conformance_backend, snapshot):
    case = conformance_case
    if isinstance(case, BrokenCase):
        pytest.fail(case.error, pytrace=False)
    if conformance_profile == "-":
        pytest.fail(f"{case.source}: version range {case.versions!r} covers no implemented "
                    f"{case.suite} profile", pytrace=False)
    run = run_case(case, conformance_profile, conformance_backend)
    failures, golden = run.failures, run.golden
    snapshot = snapshot.use_extension(YamlGolden)
    golden_matches = snapshot == golden  # records the golden as used; writes it under --snapshot-update
    if failures:
        pytest.fail(f"{case.source} [{conformance_profile}]: {case.title}\n" + "\n".join(failures), pytrace=False)
    if not golden_matches:
        pytest.fail(_golden_diff(YamlGolden.location_of(snapshot), golden), pytrace=False)


def _golden_diff(path, new_text: str) -> str:
    if not path.exists():
        return f"no golden at {path}; run `make snapshots-update` to create it"
    diff = difflib.unified_diff(path.read_text().splitlines(), new_text.splitlines(),
                                f"golden {path}", "this run", lineterm="")
    return "output differs from its golden (run `make snapshots-update` if the change is intended):\n" + "\n".join(diff)
