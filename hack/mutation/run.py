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
    python -m hack.mutation.run check NAME|GLOB... [--survivors]      # a survivor against today's rows

``check`` is for reviewing survivors: it judges mutants of an existing ``mutants/`` against the rows
of the working tree's table - the rows mutmut mapped to the mutated function plus every row it has
not seen yet (a row you just wrote) - and prints which row kills each, without recording anything
(``run NAME...`` records). It reads ``reconciler/`` from ``mutants/`` and the harness from the working
tree: after editing the reference itself, let ``make mutation MODULE=...`` regenerate that module first.
"""

from __future__ import annotations

import functools
import re
import sys
from pathlib import Path

#: A suite test id as mutmut records it (from the ``mutants/`` directory).
_TEST_ID = re.compile(r"^conformance/suite/test_conformance\.py::test_case\[(?P<profile>[^:\]]+):(?P<case>.+)\]$")


class UnknownTest(LookupError):
    """A test id mutmut recorded that is no row of the table any more (the runner cannot judge it)."""


@functools.lru_cache(maxsize=4)
def row_index(cases_dir: Path) -> dict[str, list]:
    """Every row of the table by its full id (``<table>/<row id>``), as the pytest plugin loads it.
    Read once per process (about a second): a forked child inherits its parent's."""
    from conformance import cases as case_loader
    rows: dict[str, list] = {}
    for case in case_loader.load_all(cases_dir):
        rows.setdefault(case.full_id, []).append(case)
    return rows


def find_row(rows: dict[str, list], full_id: str, profile: str):
    """The row a test id names: ``<table>/<row id>`` alone can name rows of several suites (each suite
    has an ``admission`` table); the profile tells them apart, as the test's parameters do."""
    found = [c for c in rows.get(full_id, []) if profile in getattr(c, "profiles", lambda: [])()]
    return found[0] if len(found) == 1 else None


def judge(test_ids: list[str], cases_dir: Path, snapshots_dir: Path, out=None) -> int:
    """Run the rows named by ``test_ids`` on the render backend, in order; 1 at the first failing row
    (an unmet expectation, a golden that differs, a crash), 0 when all pass.

    Exit codes follow pytest's, as mutmut reads them: 1 = some test failed (killed), 0 = all passed
    (survived).

    The golden is compared as data, not text: the row's output document (:attr:`CaseRun.doc`) as
    JSON against the golden file parsed and written as JSON - key order, types and values included.
    That is the text comparison the suite makes, without YAML's slow pure-Python representer (a
    third of a row's time): a golden is ``dump(doc)`` of the unmutated output (mutmut's clean run
    checks every mapped golden first), YAML loads what ``dump`` writes back to the same data, and
    ``dump`` is a function of that data. Output JSON cannot hold goes the text way."""
    from conformance.backends import render
    from conformance.cases import BrokenCase
    from conformance.execute import run_case
    from conformance.golden import relative_path

    rows = row_index(cases_dir)
    for test_id in test_ids:
        match = _TEST_ID.match(test_id)
        case = find_row(rows, match["case"], match["profile"]) if match else None
        if case is None or isinstance(case, BrokenCase):
            raise UnknownTest(f"{test_id}: no such row in {cases_dir}")
        profile = match["profile"]
        try:
            run = run_case(case, profile, render)
            if run.failures:
                _say(out, f"{test_id}: " + "; ".join(run.failures))
                return 1
            golden = snapshots_dir / relative_path(profile, case.table, case.id)
            same = _same_as_golden(run, golden)
        except Exception as exc:  # a mutant that crashes the reference is caught, as pytest's error would be
            _say(out, f"{test_id}: {type(exc).__name__}: {exc}")
            return 1
        if not same:
            _say(out, f"{test_id}: output differs from its golden {golden}")
            return 1
    return 0


def _same_as_golden(run, golden: Path) -> bool:
    import json

    from conformance.yamlio import load

    try:
        stored = golden.read_text(encoding="utf-8")
    except FileNotFoundError:
        return False
    try:
        return json.dumps(run.doc, ensure_ascii=False) == json.dumps(load(stored), ensure_ascii=False)
    except (TypeError, ValueError):
        return run.golden == stored


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


def check(argv: list[str]) -> int:
    """``check``: each mutant against its mapped rows and the rows mutmut has not mapped yet."""
    import argparse
    import fnmatch
    import json
    import os

    ap = argparse.ArgumentParser(prog="python -m hack.mutation.run check", description=check.__doc__)
    ap.add_argument("names", nargs="*", help="mutant names or globs (reconciler.jobset.controller.x_*)")
    ap.add_argument("--survivors", action="store_true", help="only mutants the pass recorded as survived")
    ap.add_argument("--recorded", type=Path, default=None,
                    help="read what the pass recorded from this mutants/ folder (default: ./mutants)")
    ap.add_argument("--list", action="store_true", help="only list the chosen mutants; judge nothing")
    ap.add_argument("-v", "--verbose", action="store_true", help="say why each killing row failed")
    args = ap.parse_args(argv)
    root = Path.cwd().resolve()
    mutants = root / "mutants"
    stats_file = mutants / "mutmut-stats.json"
    if not stats_file.is_file():
        raise SystemExit(f"{stats_file}: no mutation pass here yet (make mutation MODULE=...)")
    stats = json.loads(stats_file.read_text())
    recorded: dict[str, int | None] = {}
    for meta in (args.recorded or mutants).rglob("*.py.meta"):
        try:
            recorded.update(json.loads(meta.read_text()).get("exit_code_by_key", {}))
        except json.JSONDecodeError:  # a pass is rewriting it: its mutants are left out, said so
            print(f"warning: {meta} is being written; its mutants are left out", file=sys.stderr)
    chosen = sorted({n for n in recorded for pattern in args.names or ["*"] if fnmatch.fnmatchcase(n, pattern)
                     and (not args.survivors or recorded[n] == 0)})
    if not chosen:
        raise SystemExit("no mutant matches " + " ".join(args.names or ["*"]))
    if args.list:
        print("\n".join(chosen))
        return 0
    _import_mutated_reconciler(root, mutants)
    from conformance import cases as case_loader
    duration = stats["duration_by_test"]
    every_row = [f"conformance/suite/test_conformance.py::test_case[{p}:{c.full_id}]"
                 for same_id in row_index(root / "cases").values() for c in same_id if isinstance(c, case_loader.Case)
                 for p in c.profiles()]
    unmapped = [t for t in every_row if t not in duration]
    killed = 0
    for name in chosen:
        mapped = stats["tests_by_mangled_function_name"].get(name.replace("__init__.", "").partition("__mutmut_")[0], [])
        rows = sorted(set(mapped) & set(every_row), key=lambda t: duration.get(t, 0)) + unmapped
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read)
            from mutmut.mutation.trampoline import set_mutant_under_test
            set_mutant_under_test(name)
            import io
            out = io.StringIO()
            try:
                code = judge(rows, root / "cases", root / "snapshots", out)
            except Exception as exc:  # noqa: BLE001 - reported, never hidden
                code, out = 2, io.StringIO(f"{type(exc).__name__}: {exc}\n")
            os.write(write, out.getvalue().encode())
            os._exit(code)
        os.close(write)
        with os.fdopen(read) as pipe:
            said = pipe.read().strip()
        code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        killed += code == 1
        verdict = {0: f"survived ({len(rows)} rows)", 1: "killed by " + said.split(": ", 1)[0].rpartition("[")[2].rstrip("]")}
        print(f"{name}: {verdict.get(code, f'error ({said})')}" + (f"\n    {said}" if args.verbose and code == 1 else ""))
    print(f"{killed} of {len(chosen)} killed ({len(unmapped)} rows not mapped by the pass were tried on each)")
    return 0


def _import_mutated_reconciler(root: Path, mutants: Path) -> None:
    """``reconciler`` from mutants/ (the mutated copy), everything else - the harness, the table's
    loader - from the working tree, so a harness change or a merge needs no new pass."""
    import importlib.util

    sys.path.insert(0, str(mutants))
    for package in ("conformance",):
        spec = importlib.util.spec_from_file_location(package, root / package / "__init__.py",
                                                      submodule_search_locations=[str(root / package)])
        module = importlib.util.module_from_spec(spec)
        sys.modules[package] = module
        spec.loader.exec_module(module)
    import reconciler
    if Path(reconciler.__file__).resolve().parent != (mutants / "reconciler").resolve():
        raise SystemExit(f"reconciler was imported from {reconciler.__file__}, not from {mutants}")


def main(argv: list[str] | None = None) -> None:
    argv = list(argv if argv is not None else sys.argv[1:])
    if argv[:1] == ["check"]:
        sys.exit(check(argv[1:]))
    import mutmut.workers.isolation as isolation
    from mutmut.__main__ import cli

    # get_mutant_runner() builds mutmut's fork runner around the PytestRunner of this module's
    # namespace; the fork-server isolation mode (not configured here) is left as it is.
    isolation.PytestRunner = _table_runner_class()
    cli.main(args=argv, prog_name="mutmut")


if __name__ == "__main__":
    main()
