"""pytest plugin for ``make mutation`` only: the case table is read once per mutmut process.

mutmut 3 runs ``pytest.main`` once per mutant in a child forked from its main process. Without
this, every child spends about a second re-reading and validating the ~850 case rows (``load_all``)
before it runs a single case. With it, the main process reads the table in its first run (the stats
or clean-test run) and every forked child inherits the parsed rows. A normal session also loads the
table once and shares the rows across all its tests, so the rows a mutant's tests see are the ones a
plain ``pytest conformance/suite`` would give them.

Loaded through ``[tool.mutmut] pytest_add_cli_args`` in pyproject.toml; nothing else uses it.
"""

from __future__ import annotations

from pathlib import Path

from conformance import cases as _cases

_original_load_all = _cases.load_all
_memo: dict[Path, list] = {}


def _load_all_once(root: Path):
    key = Path(root).resolve()
    if key not in _memo:
        _memo[key] = _original_load_all(root)
    return _memo[key]


_cases.load_all = _load_all_once
