"""Where the case table and its goldens are: given, the checkout you are in, or the installed one.

``conformance run`` / ``list`` and the pytest plugin resolve the table the same way:

1. ``--cases-dir`` (and ``--snapshots-dir``; without it, the ``snapshots`` folder beside the cases
   folder, which is how this repository and an operator's own table are laid out);
2. else a checkout of this project that contains the current directory (its ``cases/`` and
   ``snapshots/``), so a clone runs the table it holds;
3. else the table installed with the package: a wheel carries it under ``conformance/data/``
   (see ``setup.py``); an editable install reads the source tree's.

A missing folder is not an empty table: :func:`locate` raises :class:`TableError` naming it.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

PROJECT = "training-conformance"
_PACKAGE_DIR = Path(__file__).resolve().parent
#: Where ``setup.py`` puts the table inside a built wheel.
PACKAGED = _PACKAGE_DIR / "data"


class TableError(Exception):
    """The table cannot be found or read (a usage error: nothing can be judged)."""


@dataclass(frozen=True)
class TableDirs:
    cases: Path
    snapshots: Path
    #: "given", "checkout" or "installed": said in the run's header.
    origin: str

    def describe(self) -> str:
        return f"{self.cases} (goldens {self.snapshots}; {self.origin})"


def is_checkout(directory: Path) -> bool:
    """A source tree of this project: its pyproject names it and it has the table's folders."""
    pyproject = directory / "pyproject.toml"
    if not ((directory / "cases").is_dir() and (directory / "snapshots").is_dir() and pyproject.is_file()):
        return False
    try:
        return tomllib.loads(pyproject.read_text()).get("project", {}).get("name") == PROJECT
    except (OSError, tomllib.TOMLDecodeError):
        return False


def enclosing_checkout(start: Path) -> Path | None:
    for directory in (start, *start.parents):
        if is_checkout(directory):
            return directory
    return None


def installed() -> Path | None:
    """The folder holding ``cases/`` and ``snapshots/`` that came with the package, if any."""
    if (PACKAGED / "cases").is_dir():
        return PACKAGED
    source_tree = _PACKAGE_DIR.parent  # editable install, or run from the source tree
    return source_tree if is_checkout(source_tree) else None


def locate(cases_dir: str | Path | None = None, snapshots_dir: str | Path | None = None,
           cwd: Path | None = None) -> TableDirs:
    cwd = Path.cwd() if cwd is None else cwd
    if cases_dir is not None:
        cases = (cwd / cases_dir).resolve()
        snapshots = (cwd / snapshots_dir).resolve() if snapshots_dir is not None else cases.parent / "snapshots"
        origin = "given"
    else:
        root = enclosing_checkout(cwd.resolve())
        origin = "checkout"
        if root is None:
            root, origin = installed(), "installed"
        if root is None:
            raise TableError("no case table: this installation carries none and the current directory is not "
                             f"inside a {PROJECT} checkout; give --cases-dir (and --snapshots-dir)")
        cases = root / "cases"
        snapshots = (cwd / snapshots_dir).resolve() if snapshots_dir is not None else root / "snapshots"
    if not cases.is_dir():
        raise TableError(f"cases directory {cases} does not exist")
    return TableDirs(cases, snapshots, origin)
