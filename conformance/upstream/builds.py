"""Where ``hack/build-upstream.sh`` (``make upstream-kit``) put the upstream binaries, and which
release of a required project goes with which release.

Each build directory ``<cache>/upstream/<name>-<version>/`` holds the binaries (one per
project, three for Volcano) and a ``source.env`` naming the module, its version and commit, the
binaries (``BINARIES``, file names beside it) and the module-cache directory the release's
manifests are read from. A build of a project that requires another
(:attr:`conformance.upstream.projects.Project.requires`) also names, as ``<PROJECT>_VERSION``, the
version its go.mod pins (a Trainer build: ``JOBSET_VERSION``), which is the one the kit starts with it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from conformance.cluster.binaries import cache_dir

ROOT = Path(__file__).resolve().parents[2]
TOOLS_DIR = ROOT / "tools" / "upstream"
BUILD_COMMAND = "make upstream-kit"


class MissingUpstreamBuildError(RuntimeError):
    """An upstream binary (or the module it was built from) is not on this machine."""


@dataclass(frozen=True)
class Build:
    name: str  # trainer | jobset | kustomize | ...
    module: str
    version: str
    commit: str
    binary: Path  # the first (for most projects the only) binary
    module_dir: Path  # the release's source in the Go module cache (manifests live here)
    #: project name -> the release of it this release requires in its go.mod (source.env <PROJECT>_VERSION)
    requires: dict[str, str] = field(default_factory=dict)
    #: file name -> path of every binary the build made (``binary`` among them)
    binaries: dict[str, Path] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.binaries:
            object.__setattr__(self, "binaries", {self.binary.name: self.binary})

    def binary_named(self, name: str) -> Path:
        """The binary ``name`` of this build; an error naming the ones it has otherwise."""
        try:
            return self.binaries[name]
        except KeyError:
            raise MissingUpstreamBuildError(
                f"the {self.name} {self.version} build has no binary {name!r} (it has: {', '.join(self.binaries)}); "
                f"rebuild it with `{BUILD_COMMAND}`") from None

    @property
    def jobset_version(self) -> str | None:  # Trainer builds: the JobSet release it requires
        return self.requires.get("jobset")


def upstream_dir() -> Path:
    return cache_dir() / "upstream"


def _read_env(path: Path) -> dict[str, str]:
    values = {}
    for line in path.read_text().splitlines():
        key, sep, value = line.partition("=")
        if sep:
            values[key.strip()] = value.strip()
    return values


def find_build(name: str, version: str) -> Build:
    """The build of ``name`` at ``version``; one error naming what is missing and how to build it."""
    directory = upstream_dir() / f"{name}-{version}"
    env_file = directory / "source.env"
    if not env_file.is_file():
        raise MissingUpstreamBuildError(
            f"no {name} {version} build in {directory} (no source.env). Build it with `{BUILD_COMMAND}` "
            f"(hack/build-upstream.sh; Go >= 1.26 and the Go module proxy). "
            f"Versions with a wrapper module in tools/upstream/: {', '.join(known_versions(name)) or 'none'}"
        )
    env = _read_env(env_file)
    binary = Path(env["BINARY"])
    # BINARIES: every binary's file name, beside source.env (builds before it named only BINARY)
    names = env.get("BINARIES", "").split() or [binary.name]
    build = Build(
        name=name,
        module=env["MODULE"],
        version=env["VERSION"],
        commit=env.get("COMMIT", ""),
        binary=binary,
        module_dir=Path(env["MODULE_DIR"]),
        requires={project: env[version_key(project)] for project in _project_names() if env.get(version_key(project))},
        binaries={n: binary if n == binary.name else directory / n for n in names},
    )
    for path in build.binaries.values():
        if not path.is_file():
            raise MissingUpstreamBuildError(f"{path} is missing; rebuild it with `{BUILD_COMMAND}`")
    if not build.module_dir.is_dir():
        raise MissingUpstreamBuildError(
            f"{build.module}@{build.version} is no longer in the Go module cache ({build.module_dir}); "
            f"`{BUILD_COMMAND}` downloads it again")
    return build


KUSTOMIZE_MODULE = "sigs.k8s.io/kustomize/kustomize/v5"


def version_key(project: str) -> str:
    """source.env's key for the release of ``project`` a build requires: ``JOBSET_VERSION``."""
    return project.upper().replace("-", "_") + "_VERSION"


def _project_names() -> list[str]:
    from .projects import PROJECTS

    return list(PROJECTS)


def tool_module(name: str) -> str:
    """The Go module of project ``name`` (or of the kustomize tool)."""
    if name == "kustomize":
        return KUSTOMIZE_MODULE
    from .projects import get

    return get(name).module


def pinned_version(go_mod: Path, module: str) -> str | None:
    match = re.search(rf"^\s*(?:require\s+)?{re.escape(module)}\s+(v\S+)", go_mod.read_text(), re.M)
    return match.group(1) if match else None


def known_versions(name: str) -> list[str]:
    """Versions of ``name`` that have a wrapper module in tools/upstream/ (built or not)."""
    found = []
    for go_mod in sorted(TOOLS_DIR.glob(f"{name}-v*/go.mod")) + sorted(TOOLS_DIR.glob(f"{name}/go.mod")):
        version = pinned_version(go_mod, tool_module(name))
        if version:
            found.append(version)
    return found


def kustomize_version() -> str:
    versions = known_versions("kustomize")
    if len(versions) != 1:
        raise MissingUpstreamBuildError(f"expected one kustomize module in {TOOLS_DIR}, found {versions}")
    return versions[0]
