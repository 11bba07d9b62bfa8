"""The CRD files this repo ships, per profile. The live backend installs these same files."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import yaml

from . import schema

CRD_ROOT = Path(__file__).parent / "crds"
#: CRDs every profile serves besides its own (the JobSet API that Trainer renders into).
COMMON_DIRS = ("jobset",)


def files(profile_dir: str) -> list[Path]:
    paths = []
    for directory in (profile_dir, *COMMON_DIRS):
        paths.extend(sorted((CRD_ROOT / directory).glob("*.yaml")))
    return paths


@lru_cache(maxsize=None)
def load(profile_dir: str) -> tuple[dict, ...]:
    """Every CustomResourceDefinition of a profile (``kind: List`` files are expanded)."""
    crds = []
    for path in files(profile_dir):
        for doc in yaml.safe_load_all(path.read_text()):
            items = doc.get("items", []) if doc.get("kind") == "List" else [doc]
            for crd in items:
                for version in crd["spec"]["versions"]:
                    schema.check_keywords(version["schema"]["openAPIV3Schema"], f"{path.name}:{crd['metadata']['name']}")
                crds.append(crd)
    return tuple(crds)


@lru_cache(maxsize=None)
def schemas(profile_dir: str) -> dict[tuple[str, str, str], tuple[dict, str]]:
    """(group, version, kind) → (openAPIV3Schema, scope)."""
    table = {}
    for crd in load(profile_dir):
        spec = crd["spec"]
        for version in spec["versions"]:
            table[(spec["group"], version["name"], spec["names"]["kind"])] = (
                version["schema"]["openAPIV3Schema"], spec["scope"])
    return table
