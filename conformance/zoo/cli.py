"""``conformance zoo``: run the table against every known-bad variant (exit 1 if one slips through)."""

from __future__ import annotations

from pathlib import Path

from .runner import format_table, run
from .variants import VARIANTS


def add_zoo_command(subparsers) -> None:
    p = subparsers.add_parser("zoo", help="run the table against each known-bad reconciler variant")
    p.add_argument("--cases-dir", default="cases")
    p.add_argument("--variant", action="append", default=[], choices=[v.name for v in VARIANTS],
                   help="only these variants (repeatable)")
    p.add_argument("--list", action="store_true", help="list the variants and the bugs they reproduce")
    p.set_defaults(zoo_command=_zoo)


def _zoo(args, extra: list[str]) -> int:
    if extra:
        raise SystemExit(f"conformance zoo: unrecognized arguments: {' '.join(extra)}")
    variants = [v for v in VARIANTS if not args.variant or v.name in args.variant]
    if args.list:
        for v in variants:
            print(f"{v.name}  [{v.suite}]  {v.bug}  (seed: {v.seed})")
        return 0
    results, baseline_failures = run(Path(args.cases_dir), variants)
    print(format_table(results, baseline_failures))
    return 0 if all(r.caught for r in results) else 1
