"""Per-module figures of a mutation pass (``make mutation``), printed and written to docs/mutation/report.md.

Reads what mutmut 3 left under ``mutants/`` (one ``<module>.py.meta`` JSON per module: each mutant's
exit code and test time) and the reviewed lists of equivalent mutants, docs/mutation/equivalent/ (one
file per suite folder or stand-in: ``trainer.yaml`` holds ``reconciler.trainer.*``, ``batch.yaml``
``reconciler.batch.*``).

    python -m hack.mutation.report              # print the table, rewrite docs/mutation/report.md
    python -m hack.mutation.report --glob reconciler/trainer/plugins/torch.py ...
                                                # print mutmut's mutant-name globs for these modules

A mutant is *killed* when some table row failed against it (pytest exit 1, or 3 for an internal
error), *survived* when every row that calls the mutated function passed (exit 0), *equivalent*
when it survived (or no row reaches it) and equivalent/ lists it with a reason, *timeout* when the rows ran past
mutmut's CPU/wall limit, *no rows* when no table row calls the function at all, *not run* when the
pass has not reached it yet. The score is killed / (killed + survived + no rows), timeouts and
equivalents left out of both sides; a module is complete when nothing in it is *not run*.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

import yaml

from hack.mutation.config import ROOT, mutated_modules

MUTANTS = ROOT / "mutants"
EQUIVALENT = ROOT / "docs" / "mutation" / "equivalent"
REPORT = ROOT / "docs" / "mutation" / "report.md"
#: Extra lines for the report's head (timings of the pass, machine load), kept between rewrites.
NOTES = ROOT / "docs" / "mutation" / "notes.md"

COLUMNS = ["killed", "survived", "equivalent", "timeout", "no rows", "suspicious", "not run"]


def status(exit_code: int | None) -> str:
    """mutmut 3's exit-code meanings (mutmut/stats.py ``status_by_exit_code``), in this report's words."""
    if exit_code is None:
        return "not run"
    if exit_code in (1, 3):
        return "killed"
    if exit_code == 0:
        return "survived"
    if exit_code in (5, 33):
        return "no rows"
    if exit_code in (36, 24, -24, 152, 255):
        return "timeout"
    return "suspicious"


def mutant_glob(module: str) -> str:
    """mutmut names a mutant ``<dotted module>.x_<function>__mutmut_<n>`` (methods: ``xǁClassǁm``);
    a package's ``__init__`` functions go under the package's own name."""
    dotted = module.removesuffix(".py").replace("/", ".").removesuffix(".__init__")
    return f"{dotted}.x*"


def area_of(mutant: str) -> str:
    """The file of equivalent/ a mutant's entry belongs in: its suite folder or stand-in module."""
    parts = mutant.split(".")
    return parts[1] if len(parts) > 2 and parts[0] == "reconciler" else ""


def load_equivalent(folder: Path = EQUIVALENT) -> dict[str, str]:
    out: dict[str, str] = {}
    for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else []:
        for entry in yaml.safe_load(path.read_text()) or []:
            if not isinstance(entry, dict) or not entry.get("mutant") or not str(entry.get("reason", "")).strip():
                raise SystemExit(f"{path}: every entry needs `mutant` and a one-line `reason`: {entry!r}")
            name = entry["mutant"]
            if area_of(name) != path.stem:
                raise SystemExit(f"{path}: {name} belongs in {area_of(name) or '?'}.yaml")
            if name in out:
                raise SystemExit(f"{path}: {name} is listed twice")
            out[name] = str(entry["reason"]).strip()
    return out


def load_module(module: str) -> tuple[dict[str, int | None], dict[str, float]]:
    meta = MUTANTS / (module + ".meta")
    if not meta.is_file():
        return {}, {}
    for attempt in range(20):
        try:
            data = json.loads(meta.read_text())
            break
        except json.JSONDecodeError:
            # mutmut rewrites a module's .meta in place while a pass runs: read it again shortly.
            if attempt == 19:
                raise SystemExit(f"{meta}: not valid JSON (is a pass writing it?)")
            time.sleep(0.1)
    return data.get("exit_code_by_key", {}), data.get("durations_by_key", {})


def summarize(equivalent: dict[str, str]):
    rows, survivors, stale = [], {}, []
    for module in mutated_modules():
        codes, durations = load_module(module)
        counts = Counter()
        for name, code in codes.items():
            st = status(code)
            if name in equivalent:
                if st in ("survived", "no rows"):
                    st = "equivalent"
                elif st != "not run":
                    stale.append(f"{name} is listed as equivalent but was {st}")
            counts[st] += 1
            if st == "survived":
                survivors.setdefault(module, []).append(name)
        rows.append((module, len(codes), counts, sum(durations.values())))
    known = {n for m in mutated_modules() for n in load_module(m)[0]}
    stale += [f"{n} is listed as equivalent but no such mutant exists (renumbered?)" for n in equivalent
              if known and n not in known]
    return rows, survivors, stale


def score(c: Counter) -> str:
    judged = c["killed"] + c["survived"] + c["no rows"]
    if not judged:
        return "not run" if c["not run"] else "-"
    return f"{100 * c['killed'] / judged:.1f}%" + (" (partial)" if c["not run"] else "")


def one_line_diff(name: str, module: str) -> str:
    """The mutated line(s) of a mutant, from mutmut's own diff."""
    try:
        from mutmut.mutation.diff_apply import get_diff_for_mutant
        import os
        cwd = os.getcwd()
        os.chdir(ROOT)
        try:
            diff = get_diff_for_mutant(name, path=module)
        finally:
            os.chdir(cwd)
    except Exception as exc:  # the report must not fail on a diff it cannot draw
        return f"(no diff: {exc.__class__.__name__})"
    minus = [l[1:].strip() for l in diff.splitlines() if l.startswith("-") and not l.startswith("---")]
    plus = [l[1:].strip() for l in diff.splitlines() if l.startswith("+") and not l.startswith("+++")]
    return f"`{' / '.join(minus)}` → `{' / '.join(plus)}`"


def render(rows, survivors, stale, equivalent) -> str:
    total = Counter()
    lines = ["| module | mutants | " + " | ".join(COLUMNS) + " | score | test time (s) |",
             "|---" * (len(COLUMNS) + 4) + "|"]
    for module, n, c, seconds in rows:
        if not n:
            continue
        total += c
        lines.append(f"| `{module}` | {n} | " + " | ".join(str(c[k]) for k in COLUMNS)
                     + f" | {score(c)} | {seconds:.0f} |")
    n_all = sum(r[1] for r in rows)
    lines.append(f"| **all (run so far)** | {n_all} | " + " | ".join(str(total[k]) for k in COLUMNS)
                 + f" | {score(total)} | {sum(r[3] for r in rows):.0f} |")
    out = ["# Mutation report", "",
           "Written by `python -m hack.mutation.report` (`make mutation` runs it) from `mutants/`; "
           "how to read it: [README.md](README.md).", ""]
    if NOTES.is_file():
        out += [NOTES.read_text().rstrip(), ""]
    out += ["## Per module", ""] + lines + [""]
    complete = [r[0] for r in rows if r[1] and not r[2]["not run"]]
    out += [f"Complete modules: {len(complete)} of {sum(1 for r in rows if r[1])} with mutants. "
            "Score = killed / (killed + survived + no rows); *test time* is the sum of the table's run "
            "time over the module's mutants that ran.", ""]
    if survivors:
        out += ["## Surviving mutants (open)", "",
                "Each is a change to the reference reconciler that no table row notices. `mutmut show NAME` "
                "prints the full diff.", ""]
        for module, names in survivors.items():
            out.append(f"### `{module}`")
            out.append("")
            for name in sorted(names, key=_natural):
                out.append(f"- `{name.rsplit('.', 1)[1]}`: {one_line_diff(name, module)}")
            out.append("")
    if equivalent:
        out += ["## Equivalent (reviewed, docs/mutation/equivalent/)", ""]
        out += [f"- `{n}`: {r}" for n, r in sorted(equivalent.items())] + [""]
    if stale:
        out += ["## Stale entries in equivalent/", ""] + [f"- {s}" for s in stale] + [""]
    return "\n".join(out)


def _natural(name: str):
    head, _, n = name.rpartition("__mutmut_")
    return (head, int(n) if n.isdigit() else 0)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--glob", nargs="*", metavar="MODULE",
                    help="print the mutmut mutant-name glob of each module path and exit")
    ap.add_argument("--no-write", action="store_true", help="print only; leave docs/mutation/report.md")
    args = ap.parse_args(argv)
    if args.glob is not None:
        known = set(mutated_modules())
        bad = [m for m in args.glob if m not in known]
        if bad:
            print(f"not a mutated module: {', '.join(bad)} (see [tool.mutmut] only_mutate)", file=sys.stderr)
            return 2
        print(" ".join(mutant_glob(m) for m in args.glob))
        return 0
    equivalent = load_equivalent()
    rows, survivors, stale = summarize(equivalent)
    print(f"{'module':50} {'mutants':>7} " + " ".join(f"{k:>10}" for k in COLUMNS) + f" {'score':>8}")
    for module, n, c, _ in rows:
        if n:
            print(f"{module:50} {n:7} " + " ".join(f"{c[k]:10}" for k in COLUMNS) + f" {score(c):>8}")
    for s in stale:
        print("warning:", s, file=sys.stderr)
    if not args.no_write:
        REPORT.write_text(render(rows, survivors, stale, equivalent) + "\n")
        print(f"wrote {REPORT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
