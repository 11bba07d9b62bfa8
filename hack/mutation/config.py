"""What ``make mutation`` mutates: the ``[tool.mutmut]`` table of pyproject.toml, read without mutmut.

Shared by the report (:mod:`hack.mutation.report`) and the unit test that keeps the list complete
(tests/test_mutation_config.py).
"""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: Folders under reconciler/ that are not behaviour: the live operator's plumbing (it runs the
#: mutated modules against a real apiserver; mutating it would test the transport, not the table)
#: and the CRD files (no Python).
NOT_BEHAVIOUR = {
    "live": "the live backend's operator plumbing (REST, informers, TLS); it calls the behaviour modules",
    "crds": "CRD YAML, no Python",
}

#: Top-level modules that stand in for Kubernetes' own controllers in the render backend; they
#: decide what the table's goldens say as much as a suite's controller does.
STAND_INS = ["reconciler/batch.py", "reconciler/kubelet.py", "reconciler/statefulset.py"]


def mutmut_config(root: Path = ROOT) -> dict:
    return tomllib.loads((root / "pyproject.toml").read_text())["tool"]["mutmut"]


def is_mutated(path: str, only_mutate: list[str]) -> bool:
    """The rule mutmut applies to a source path (``Config._should_include_for_mutation``)."""
    return any(fnmatch.fnmatch(path, pattern) for pattern in only_mutate)


def suite_folders(root: Path = ROOT) -> list[Path]:
    """Every folder directly under reconciler/ except the ones :data:`NOT_BEHAVIOUR` names."""
    base = root / "reconciler"
    return sorted(p for p in base.iterdir()
                  if p.is_dir() and not p.name.startswith((".", "_")) and p.name not in NOT_BEHAVIOUR)


def behaviour_modules(root: Path = ROOT) -> list[str]:
    """The files that should be mutated: every .py under a suite folder, and the stand-ins."""
    found = [str(p.relative_to(root)) for folder in suite_folders(root) for p in folder.rglob("*.py")
             if "__pycache__" not in p.parts]
    return sorted(found + [s for s in STAND_INS if (root / s).is_file()])


def missing_modules(root: Path = ROOT) -> list[str]:
    """Behaviour modules that the mutation configuration would not mutate."""
    only = mutmut_config(root).get("only_mutate", [])
    return [m for m in behaviour_modules(root) if not is_mutated(m, only)]


def mutated_modules(root: Path = ROOT) -> list[str]:
    """The .py files under the configured source paths that mutmut mutates, as paths from root."""
    cfg = mutmut_config(root)
    files = []
    for src in cfg.get("source_paths", []):
        files += [str(p.relative_to(root)) for p in (root / src).rglob("*.py") if "__pycache__" not in p.parts]
    return sorted(f for f in files if is_mutated(f, cfg.get("only_mutate", [])))
