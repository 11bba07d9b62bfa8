"""Where the locally built control-plane binaries live, and the error when one is missing.

``hack/build-control-plane.sh`` (``make control-plane``) builds them into
``${TC_CACHE_DIR:-${XDG_CACHE_HOME:-~/.cache}/training-conformance}/bin/<kubernetes version>/``;
``TC_BIN_DIR`` points somewhere else instead (a CI cache restored elsewhere, say).
"""

from __future__ import annotations

import os
from pathlib import Path

#: The k8s.io/kubernetes release tools/kube/go.mod pins (tests check the two agree).
KUBERNETES_VERSION = "v1.35.8"

#: Start order; each needs the ones before it.
COMPONENTS = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok")

BUILD_COMMAND = "make control-plane"


class MissingBinaryError(RuntimeError):
    """A control-plane binary has not been built (or ``TC_BIN_DIR`` points at the wrong place)."""


def cache_dir() -> Path:
    if os.environ.get("TC_CACHE_DIR"):
        return Path(os.environ["TC_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "training-conformance"


def bin_dir(version: str = KUBERNETES_VERSION) -> Path:
    if os.environ.get("TC_BIN_DIR"):
        return Path(os.environ["TC_BIN_DIR"])
    return cache_dir() / "bin" / version


def find_binaries(directory: Path, names: tuple[str, ...] = COMPONENTS) -> dict[str, Path]:
    """Path of every binary in ``names``; one error naming all that are missing."""
    found, missing = {}, []
    for name in names:
        path = directory / name
        if path.is_file() and os.access(path, os.X_OK):
            found[name] = path
        else:
            missing.append(name)
    if missing:
        raise MissingBinaryError(
            f"control-plane binar{'y' if len(missing) == 1 else 'ies'} not found in {directory}: "
            f"{', '.join(missing)}. Build {'it' if len(missing) == 1 else 'them'} with `{BUILD_COMMAND}` "
            f"(hack/build-control-plane.sh; Go >= 1.26 and the Go module proxy, about 10 min cold on 2 cores)"
            + (" or unset TC_BIN_DIR" if os.environ.get("TC_BIN_DIR") else "")
        )
    return found
