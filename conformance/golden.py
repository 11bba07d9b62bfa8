"""YAML goldens: one file per case and profile, ``snapshots/<profile>/<table>/<row>.yaml``.

A small syrupy single-file extension stores the text; the text itself is the normalized outcome
(rejections, then every object) dumped as YAML with Kubernetes' own key order kept.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from .normalize import normalize
from .yamlio import dump
from .outcome import Outcome


def golden_text(case_id: str, title: str, profile: str, outcome: Outcome) -> str:
    doc = {"case": case_id, "profile": profile, "title": title}
    if outcome.rejections:
        doc["rejections"] = [r.to_golden() for r in outcome.rejections]
    if outcome.reconcile_errors:
        doc["reconcileErrors"] = outcome.reconcile_errors
    doc["objects"] = normalize(outcome.objects)
    return dump(doc)


def relative_path(profile: str, table: str, row: str) -> Path:
    return Path(profile) / table / f"{row}.yaml"


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
