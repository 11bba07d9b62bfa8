"""``make mutation``'s entry point: mutmut 3 with a test runner that runs table rows without pytest.

mutmut generates the mutants, learns which rows call which function (one pytest run of the table
under its tracing), schedules, forks a child per mutant, enforces the time limits and keeps the
verdicts. Only the last step inside each forked child changes: mutmut's ``PytestRunner`` would call
``pytest.main`` there, which re-parametrizes all ~1,600 rows, loads plugins and sets up syrupy -
about 3 CPU-seconds per mutant, against ~12 ms for the median row. :class:`TableRunner` instead
runs the rows it is given exactly as ``conformance/suite/test_conformance.py::test_case`` does on
the render backend - :func:`conformance.execute.run_case`, its explicit expectations, then its
golden compared with the file - in the order mutmut chose, and stops at the first failing row.

The stats run, the clean run and the forced-fail run stay pytest's (mutmut's own checks that the
suite is sound before any mutant runs). ``tests/test_mutation_runner.py`` holds the direct runner to
pytest's verdicts: every row passes unmutated, and a changed golden or a failing expectation fails.

    python -m hack.mutation.run run [--max-children N] [NAMES...]     # what make mutation calls
    python -m hack.mutation.run results | show NAME | ...              # any other mutmut command
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

#: A suite test id as mutmut records it (from the ``mutants/`` directory).
_TEST_ID = re.compile(r"^conformance/suite/test_conformance\.py::test_case\[(?P<profile>[^:\]]+):(?P<case>.+)\]$")


class UnknownTest(LookupError):
    """A test id mutmut recorded that is no row of the table any more (the runner cannot judge it)."""


def row_index(cases_dir: Path) -> dict[str, object]:
    """Every row of the table by its full id (``<table>/<row id>``), as the pytest plugin loads it."""
    from conformance import cases as case_loader
    return {case.full_id: case for case in case_loader.load_all(cases_dir)}


def judge(test_ids: list[str], cases_dir: Path, snapshots_dir: Path, out=None) -> int:
    """Run the rows named by ``test_ids`` on the render backend, in order; 1 at the first failing row
    (an unmet expectation, a golden that differs, a crash), 0 when all pass.

    Exit codes follow pytest's, as mutmut reads them: 1 = some test failed (killed), 0 = all passed
    (survived)."""
    from conformance.backends import render
    from conformance.cases import BrokenCase
    from conformance.execute import run_case
    from conformance.golden import relative_path

    rows = row_index(cases_dir)
    for test_id in test_ids:
        match = _TEST_ID.match(test_id)
        case = rows.get(match["case"]) if match else None
        if case is None or isinstance(case, BrokenCase):
            raise UnknownTest(f"{test_id}: no such row in {cases_dir}")
        profile = match["profile"]
        try:
            run = run_case(case, profile, render)
        except Exception as exc:  # a mutant that crashes the reference is caught, as pytest's error would be
            _say(out, f"{test_id}: {type(exc).__name__}: {exc}")
            return 1
        if run.failures:
            _say(out, f"{test_id}: " + "; ".join(run.failures))
            return 1
        golden = snapshots_dir / relative_path(profile, case.table, case.id)
        try:
            stored = golden.read_text(encoding="utf-8")
        except FileNotFoundError:
            stored = None
        if stored != run.golden:
            _say(out, f"{test_id}: output differs from its golden {golden}")
            return 1
    return 0


def _say(out, line: str) -> None:
    if out is not None:
        print(line, file=out)


def _table_runner_class():
    from mutmut.runners.harness import PytestRunner

    class TableRunner(PytestRunner):
        """mutmut's pytest runner, except that a mutant's rows run directly (:func:`judge`)."""

        def run_tests(self, *, mutant_name, tests):
            tests = list(tests)
            if mutant_name is None or not tests:
                return super().run_tests(mutant_name=mutant_name, tests=tests)
            # The forked child runs inside mutants/ (mutmut's copy of the tree); the table is the
            # checkout's, as pyproject's --conformance-cases-dir=../cases gives pytest.
            root = Path.cwd().resolve()
            try:
                return judge(tests, root / "cases", root / "snapshots")
            except UnknownTest:
                return super().run_tests(mutant_name=mutant_name, tests=tests)

    return TableRunner


def main(argv: list[str] | None = None) -> None:
    import mutmut.workers.isolation as isolation
    from mutmut.__main__ import cli

    # get_mutant_runner() builds mutmut's fork runner around the PytestRunner of this module's
    # namespace; the fork-server isolation mode (not configured here) is left as it is.
    isolation.PytestRunner = _table_runner_class()
    cli.main(args=argv if argv is not None else sys.argv[1:], prog_name="mutmut")


if __name__ == "__main__":
    main()
