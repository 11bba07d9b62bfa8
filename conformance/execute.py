"""Run one case row on one profile and backend: the single place that knows how rows execute.

Used by the pytest suite (which adds the golden comparison) and by the bug zoo (which does not)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from . import expectations
from .cases import Case
from .golden import golden_doc, golden_steps_doc
from .yamlio import dump


@dataclass
class CaseRun:
    #: Explicit-expectation failures, each a readable line (prefixed by the step for scenarios).
    failures: list[str]
    #: The normalized output as data, in golden order (what the golden file holds, parsed).
    doc: dict

    @cached_property
    def golden(self) -> str:
        """The normalized output as golden text."""
        return dump(self.doc)


def run_case(case: Case, profile: str, backend) -> CaseRun:
    if case.steps:
        outcomes = backend.run_steps(case.steps, profile)
        failures = [f"{step.label}: {failure}" for step, outcome in zip(case.steps, outcomes)
                    for failure in expectations.check(step.expect, outcome)]
        doc = golden_steps_doc(case.full_id, case.title, profile, case.steps, outcomes,
                               summary=case.golden == "summary")
    else:
        outcome = backend.run(case.inputs, profile)
        failures = expectations.check(case.expect, outcome)
        doc = golden_doc(case.full_id, case.title, profile, outcome)
    return CaseRun(failures, doc)
