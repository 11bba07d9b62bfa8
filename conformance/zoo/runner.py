"""Run the case table against each zoo variant and collect which cases caught it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .. import cases as case_loader
from ..backends import render
from ..execute import run_case
from .variants import VARIANTS, Variant


@dataclass
class VariantResult:
    variant: Variant
    #: "<profile>:<table>/<row>" of every case whose explicit expectations failed.
    caught_by: list[str] = field(default_factory=list)
    #: Cases that crashed under the variant, reported apart: a crash is no catch (a variant that no
    #: longer fits the code it patches - a changed signature - crashes every case and proves nothing).
    crashed: list[str] = field(default_factory=list)

    @property
    def caught(self) -> bool:
        return bool(self.caught_by)


def _runnable(cases_dir: Path, suite: str) -> list[tuple[case_loader.Case, str]]:
    return [(case, profile)
            for case in case_loader.load_all(cases_dir)
            if isinstance(case, case_loader.Case) and case.suite == suite
            for profile in case.profiles()]


def _fails(case: case_loader.Case, profile: str) -> bool:
    return bool(run_case(case, profile, render).failures)


def run(cases_dir: Path, variants: list[Variant] | None = None) -> tuple[list[VariantResult], list[str]]:
    """Returns one result per variant, plus the cases that already fail on the *real* reconciler
    (those are left out of every variant's count: a case that always fails proves nothing)."""
    results, baseline_failures = [], []
    by_suite: dict[str, list[tuple[case_loader.Case, str]]] = {}
    for variant in variants if variants is not None else VARIANTS:
        if variant.suite not in by_suite:
            runnable = _runnable(cases_dir, variant.suite)
            broken = [f"{p}:{c.full_id}" for c, p in runnable if _fails(c, p)]
            baseline_failures += broken
            by_suite[variant.suite] = [(c, p) for c, p in runnable if f"{p}:{c.full_id}" not in broken]
        result = VariantResult(variant)
        with variant.applied():
            for case, profile in by_suite[variant.suite]:
                case_id = f"{profile}:{case.full_id}"
                try:
                    if _fails(case, profile):
                        result.caught_by.append(case_id)
                except Exception as exc:  # noqa: BLE001 - a crash under a buggy variant still counts
                    result.crashed.append(f"{case_id} ({type(exc).__name__}: {exc})")
        results.append(result)
    return results, baseline_failures


def format_table(results: list[VariantResult], baseline_failures: list[str], examples: int = 3) -> str:
    lines = []
    if baseline_failures:
        lines.append(f"warning: {len(baseline_failures)} case(s) fail on the real reconciler and were left out: "
                     + ", ".join(baseline_failures[:5]))
    width = max(len(r.variant.name) for r in results) if results else 10
    lines.append(f"{'variant':<{width}}  caught by  examples")
    for r in results:
        count = len(r.caught_by)
        if r.caught_by:
            shown = ", ".join(r.caught_by[:examples]) + (f" (and {len(r.crashed)} crashed)" if r.crashed else "")
        elif r.crashed:
            shown = f"NOT CAUGHT - only crashes of the variant itself, e.g. {r.crashed[0]}"
        else:
            shown = "NOT CAUGHT - " + r.variant.bug
        lines.append(f"{r.variant.name:<{width}}  {count:>9}  {shown}")
    missed = [r.variant.name for r in results if not r.caught]
    lines.append(f"zoo: {len(results) - len(missed)} of {len(results)} variants caught"
                 + (f"; NOT caught: {', '.join(missed)}" if missed else ""))
    return "\n".join(lines)
