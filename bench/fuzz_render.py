"""Fuzz benchmark: N damaged manifests through ``conformance render``; prints the crashes found.

Each input is one seed of the case table (a case's manifests, on one of its profiles) with one value
damaged (``conformance/fuzz.py``: deleted, null, a number of any size or sign, a string with a NUL,
a list, a map, ...). Profiles take turns, so every profile gets N/len(profiles) inputs. A crash is
an exception escaping ``render`` or an exit code other than 0, 1, 2. Target: 0 crashes in 10,000.

    python bench/fuzz_render.py [-n 10000] [--seed 1] [--profile P ...] [--show 5]

The choices come from ``random.Random(seed)``: a run is repeatable, and another ``--seed`` explores
other inputs. Each distinct crash (exception type + innermost frame) is printed once, with the input
that found it.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from conformance import fuzz  # noqa: E402
from reconciler.profiles import PROFILES  # noqa: E402


def signature(crash: str) -> str:
    lines = [line for line in crash.strip().splitlines() if line.strip()]
    frames = [line.strip() for line in lines if line.strip().startswith("File ")]
    return f"{lines[-1][:160]} @ {frames[-1] if frames else '?'}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=10_000, help="damaged inputs (default 10000)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--profile", action="append", default=[], choices=sorted(PROFILES))
    parser.add_argument("--show", type=int, default=3, help="inputs printed per distinct crash")
    parser.add_argument("--cases-dir", default=str(ROOT / "cases"))
    args = parser.parse_args()

    rng = random.Random(args.seed)
    seeds = fuzz.seeds(args.cases_dir)
    profiles = args.profile or sorted({p for s in seeds for p in s.profiles})
    by_profile = {p: [s for s in seeds if p in s.profiles] for p in profiles}
    runs, crashes, codes = Counter(), Counter(), defaultdict(Counter)
    found: dict[str, list[str]] = defaultdict(list)
    started = time.perf_counter()
    for i in range(args.n):
        profile = profiles[i % len(profiles)]
        seed = rng.choice(by_profile[profile])
        doc = rng.randrange(len(seed.manifests))
        path = rng.choice(fuzz.paths(seed.manifests[doc]))
        how = rng.choice(list(fuzz.DAMAGES))
        outcome = fuzz.render(fuzz.damage(seed.manifests, doc, path, how), profile)
        runs[profile] += 1
        codes[profile][outcome.code] += 1
        if outcome.crash:
            crashes[profile] += 1
            sig = signature(outcome.crash)
            if len(found[sig]) < args.show:
                found[sig].append(f"{profile} {seed.source} {fuzz.describe(doc, path, how)}")
    elapsed = time.perf_counter() - started

    print(f"{args.n} damaged inputs (seed {args.seed}, {len(seeds)} seeds from the table) in {elapsed:.0f} s "
          f"({1000 * elapsed / max(args.n, 1):.1f} ms each)")
    print(f"{'profile':24} {'inputs':>7} {'exit 0':>7} {'exit 1':>7} {'exit 2':>7} {'crashes':>8}")
    for profile in profiles:
        c = codes[profile]
        print(f"{profile:24} {runs[profile]:7} {c[0]:7} {c[1]:7} {c[2]:7} {crashes[profile]:8}")
    total = sum(crashes.values())
    print(f"{'total':24} {sum(runs.values()):7} {'':7} {'':7} {'':7} {total:8}")
    for sig, examples in sorted(found.items()):
        print(f"\nCRASH {sig}")
        for example in examples:
            print(f"  {example}")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
