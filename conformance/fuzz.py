"""Damaged manifests for fuzzing ``conformance render`` (issue: bad input never crashes).

A *seed* is a set of manifests a case of the table applies (its inputs, or a scenario's first
``apply``) with the profiles the case runs on. A *damage* replaces one value anywhere in one of the
manifests - or deletes it - with what a careless edit makes of it: null, a number of any size or
sign, a string (with a NUL, empty, long), a boolean, a list, a map. Rendering a damaged seed must
keep ``render``'s contract (see :mod:`conformance.cli`): exit 0, 1 or 2, never a traceback.

Used by the property-based tests (``tests/test_fuzz_render.py``, hypothesis draws the choices)
and by ``bench/fuzz_render.py`` (a seeded ``random.Random`` draws them, N inputs per run).
"""

from __future__ import annotations

import contextlib
import io
import traceback
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

from . import cases as case_loader
from . import table as table_dirs

#: Replacement values; ``delete`` removes the key (or list item) instead.
DAMAGES: dict[str, object] = {
    "delete": None,
    "null": None,
    "zero": 0,
    "int": 7,
    "negative": -1,
    "huge": 2**63,
    "bignum": 10**30,
    "float": 2.5,
    "true": True,
    "string": "damaged",
    "empty": "",
    "nul": "a\x00b",
    "long": "x" * 300,
    "upper": "Not_A-DNS.Name",
    "list": ["damaged"],
    "empty-list": [],
    "map": {"damaged": "yes"},
    "empty-map": {},
}


@dataclass(frozen=True)
class Seed:
    source: str
    profiles: tuple[str, ...]
    manifests: tuple[dict, ...]


@lru_cache(maxsize=None)
def seeds(cases_dir: str | None = None) -> tuple[Seed, ...]:
    """One seed per distinct input set of the table, with every profile that renders it."""
    root = Path(cases_dir) if cases_dir else table_dirs.locate(None).cases
    by_text: dict[str, Seed] = {}
    for case in case_loader.load_all(root):
        if not isinstance(case, case_loader.Case):
            continue
        manifests = case.inputs if not case.steps else (case.steps[0].apply or [])
        if not manifests:
            continue
        text = yaml.safe_dump(manifests, sort_keys=True)
        seen = by_text.get(text)
        profiles = tuple(case.profiles())
        if seen is None:
            by_text[text] = Seed(case.full_id, profiles, tuple(manifests))
        else:
            by_text[text] = Seed(seen.source, tuple(dict.fromkeys(seen.profiles + profiles)), seen.manifests)
    return tuple(s for s in by_text.values() if s.profiles)


def paths(value, prefix: tuple = ()) -> list[tuple]:
    """Every path into ``value`` (dict keys, list indexes), the root excluded."""
    found = []
    if isinstance(value, dict):
        for key, item in value.items():
            found.append(prefix + (key,))
            found.extend(paths(item, prefix + (key,)))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found.append(prefix + (i,))
            found.extend(paths(item, prefix + (i,)))
    return found


def damage(manifests: tuple[dict, ...] | list[dict], doc: int, path: tuple, how: str) -> list[dict]:
    """A copy of ``manifests`` with the value at ``path`` of document ``doc`` damaged ``how``."""
    docs = yaml.safe_load(yaml.safe_dump(list(manifests)))
    parent = docs[doc]
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1]
    if how == "delete":
        del parent[last]
    else:
        parent[last] = yaml.safe_load(yaml.safe_dump(DAMAGES[how]))
    return docs


def describe(doc: int, path: tuple, how: str) -> str:
    return f"document {doc + 1} at /{'/'.join(str(p) for p in path)}: {how}"


@dataclass
class Outcome:
    code: int | None
    stdout: str
    stderr: str
    #: The traceback of an exception that escaped ``render`` (a crash), else None.
    crash: str | None = None


class Timeout(Exception):
    """An input rendered for longer than the fuzzer's limit (a hang counts as a crash)."""


def _alarm(signum, frame):
    raise Timeout("render took longer than the limit")


def render(manifests: list[dict], profile: str | None, limit: float = 10.0) -> Outcome:
    """``conformance render -f - --debug [--profile P]`` in-process on the YAML text of ``manifests``
    (``--debug``: an internal error escapes with its traceback, which is what a fuzzer wants);
    a render that outlives ``limit`` seconds is stopped and reported as a crash."""
    import signal

    from . import cli

    text = yaml.safe_dump_all(manifests, sort_keys=False)
    out, err = io.StringIO(), io.StringIO()
    argv = ["render", "-f", "-", "--debug"] + (["--profile", profile] if profile else [])
    stdin = io.StringIO(text)
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), _stdin(stdin):
            try:
                code = cli.main(argv)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 2
            except Exception:  # noqa: BLE001 - that is what a fuzzer is for
                return Outcome(None, out.getvalue(), err.getvalue(), traceback.format_exc())
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    crash = None if code in (0, 1, 2) else f"exit code {code}\n{err.getvalue()}"
    return Outcome(code, out.getvalue(), err.getvalue(), crash)


@contextlib.contextmanager
def _stdin(stream):
    import sys
    saved = sys.stdin
    sys.stdin = stream
    try:
        yield
    finally:
        sys.stdin = saved
