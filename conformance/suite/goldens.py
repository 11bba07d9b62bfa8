"""The syrupy extension that stores each case's golden text (:mod:`conformance.golden` makes the text).

Only the suite's test and the pytest plugin import this module, and only once pytest runs: pytest
must import syrupy itself first (as a plugin, for assertion rewriting).
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from ..golden import relative_path


class YamlGolden(SingleFileSnapshotExtension):
    """Stores each case's golden at ``<root>/<profile>/<table>/<row>.yaml``.

    ``root`` is set by the pytest plugin. Unused goldens are found by the plugin itself (syrupy's
    own unused detection keys on test-module file names, which this layout does not use), so
    syrupy's discovery is switched off here.
    """

    root: ClassVar[Path] = Path("snapshots")
    file_extension = "yaml"
    _write_mode = WriteMode.TEXT

    @classmethod
    def _target(cls, test_location) -> Path:
        case = test_location.item.callspec.params["conformance_case"]
        profile = test_location.item.callspec.params["conformance_profile"]
        return cls.root / relative_path(profile, case.table, case.id)

    @classmethod
    def location_of(cls, assertion) -> Path:
        """Where the golden of a syrupy ``snapshot`` fixture lives."""
        return cls._target(assertion.test_location).with_suffix(".yaml")

    @classmethod
    def dirname(cls, *, test_location) -> str:
        return str(cls._target(test_location).parent)

    @classmethod
    def discovery_dirname(cls, *, test_location) -> str:
        # syrupy >= 7 asks every collected test file (not only conformance cases) where its
        # snapshots live; all goldens share one root, and discovery is ours anyway.
        return str(cls.root)

    @classmethod
    def matches_test_location(cls, *, test_location, snapshot_location: str) -> bool:
        return Path(snapshot_location) == cls._target(test_location).with_suffix(".yaml")

    @classmethod
    def get_file_basename(cls, *, test_location, index) -> str:
        return cls._target(test_location).stem

    def discover_snapshots(self, *, test_location, ignore_extensions=None):
        from syrupy.data import SnapshotCollections
        return SnapshotCollections()
