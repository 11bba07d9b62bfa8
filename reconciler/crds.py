"""The CRD files this repo ships, per profile. The live backend installs these same files."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import yaml

from . import schema

CRD_ROOT = Path(__file__).parent / "crds"


def files(crd_dirs: tuple[str, ...]) -> list[Path]:
    paths = []
    for directory in crd_dirs:
        paths.extend(sorted((CRD_ROOT / directory).glob("*.yaml")))
    return paths


@lru_cache(maxsize=None)
def load(crd_dirs: tuple[str, ...]) -> tuple[dict, ...]:
    """Every CustomResourceDefinition of a profile (``kind: List`` files are expanded)."""
    crds = []
    for path in files(crd_dirs):
        for doc in yaml.safe_load_all(path.read_text()):
            items = doc.get("items", []) if doc.get("kind") == "List" else [doc]
            for crd in items:
                for version in crd["spec"]["versions"]:
                    schema.check_keywords(version["schema"]["openAPIV3Schema"], f"{path.name}:{crd['metadata']['name']}")
                crds.append(crd)
    return tuple(crds)


@lru_cache(maxsize=None)
def schemas(crd_dirs: tuple[str, ...]) -> dict[tuple[str, str, str], tuple[dict, str]]:
    """(group, version, kind) → (openAPIV3Schema, scope)."""
    table = {}
    for crd in load(crd_dirs):
        spec = crd["spec"]
        for version in spec["versions"]:
            table[(spec["group"], version["name"], spec["names"]["kind"])] = (
                version["schema"]["openAPIV3Schema"], spec["scope"])
    return table


@lru_cache(maxsize=None)
def scale_paths(crd_dirs: tuple[str, ...]) -> dict[tuple[str, str, str], str]:
    """(group, version, kind) → the ``specReplicasPath`` of the version's scale subresource, if it has one."""
    table = {}
    for crd in load(crd_dirs):
        spec = crd["spec"]
        for version in spec["versions"]:
            path = ((version.get("subresources") or {}).get("scale") or {}).get("specReplicasPath")
            if path:
                table[(spec["group"], version["name"], spec["names"]["kind"])] = path
    return table
