"""Run one case row on one profile and backend: the single place that knows how rows execute.

Used by the pytest suite (which adds the golden comparison) and by the bug zoo (which does not)."""

from __future__ import annotations

from dataclasses import dataclass

from . import expectations
from .cases import Case
from .golden import golden_steps_text, golden_text


@dataclass
class CaseRun:
    #: Explicit-expectation failures, each a readable line (prefixed by the step for scenarios).
    failures: list[str]
    #: The normalized output as golden text.
    golden: str


def run_case(case: Case, profile: str, backend) -> CaseRun:
    if case.steps:
        outcomes = backend.run_steps(case.steps, profile)
        failures = [f"{step.label}: {failure}" for step, outcome in zip(case.steps, outcomes)
                    for failure in expectations.check(step.expect, outcome)]
        golden = golden_steps_text(case.full_id, case.title, profile, case.steps, outcomes,
                                   summary=case.golden == "summary")
    else:
        outcome = backend.run(case.inputs, profile)
        failures = expectations.check(case.expect, outcome)
        golden = golden_text(case.full_id, case.title, profile, outcome)
    return CaseRun(failures, golden)
