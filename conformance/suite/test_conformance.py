"""The conformance table as pytest tests: one test per case row and profile."""

from __future__ import annotations

import pytest

from conformance import expectations
from conformance.cases import BrokenCase
from conformance.golden import YamlGolden, golden_text


def test_case(conformance_case, conformance_profile, conformance_backend, snapshot):
    case = conformance_case
    if isinstance(case, BrokenCase):
        pytest.fail(case.error, pytrace=False)
    if conformance_profile == "-":
        pytest.fail(f"{case.source}: version range {case.versions!r} covers no implemented "
                    f"{case.suite} profile", pytrace=False)
    outcome = conformance_backend.run(case.inputs, conformance_profile)
    failures = expectations.check(case.expect, outcome)
    golden = golden_text(case.full_id, case.title, conformance_profile, outcome)
    golden_matches = snapshot.use_extension(YamlGolden) == golden
    if failures:
        pytest.fail(f"{case.source}: {case.title}\n" + "\n".join(failures), pytrace=False)
    assert golden_matches, f"{case.source}: output differs from its golden (run `make snapshots-update` if intended)"
