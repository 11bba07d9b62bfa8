"""Where a live run gets its cluster: ``local`` (default), ``kind``, ``k3s`` or ``existing``.

=========  ================================================================================  ==========
provider   what it is                                                                        pods run?
=========  ================================================================================  ==========
local      :class:`LocalControlPlane`: real kube-apiserver/-controller-manager/-scheduler    kwok: yes,
           built from source + kwok fake nodes. Needs no Docker. The default.                no images
kind       a kind cluster (pytest-kind's ``KindCluster`` when installed, else the ``kind``   real kubelet:
           binary on PATH). Needs Docker.                                                     images pulled
k3s        a k3s container via testcontainers (``K3SContainer``). Needs Docker.              as kind
existing   ``--kubeconfig K``: someone else's cluster; never created or deleted by us.       depends
=========  ================================================================================  ==========

A provider only yields a kubeconfig; the live backend does the rest. On kind/k3s the kubelets are
real, so pods of cases whose images are placeholders do not start: the live backend reports such
rows as skipped (``needs pod lifecycle``) when ``pod_lifecycle`` is false, never as passed.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol


class ProviderError(RuntimeError):
    """The provider cannot give a cluster (tool missing, creation failed); the message says why."""


class Provider(Protocol):
    name: str
    #: Whether pods of the cases (placeholder images) reach Running here.
    pod_lifecycle: bool

    def up(self) -> Path: ...

    def down(self) -> None: ...


@dataclass
class LocalProvider:
    name: str = "local"
    pod_lifecycle: bool = True
    _plane: object = None

    def up(self) -> Path:
        from .local import LocalControlPlane
        self._plane = LocalControlPlane().up()
        return self._plane.kubeconfig

    def down(self) -> None:
        if self._plane is not None:
            self._plane.down()
            self._plane = None


@dataclass
class ExistingProvider:
    """A cluster we neither create nor delete."""

    kubeconfig: Path
    name: str = "existing"
    pod_lifecycle: bool = True  # a real cluster runs pods; whether images pull is the vendor's business

    def up(self) -> Path:
        if not Path(self.kubeconfig).is_file():
            raise ProviderError(f"--kubeconfig {self.kubeconfig}: no such file")
        return Path(self.kubeconfig)

    def down(self) -> None:
        pass  # never ours to delete


@dataclass
class KindProvider:
    """A kind cluster named ``cluster_name``; pytest-kind when importable, else the ``kind`` CLI."""

    cluster_name: str = "training-conformance"
    kind_binary: str = "kind"
    name: str = "kind"
    pod_lifecycle: bool = False
    _dir: Path | None = None
    _cluster: object = None

    def up(self) -> Path:
        try:
            from pytest_kind import KindCluster  # optional: pip install training-conformance[kind]
        except ImportError:
            KindCluster = None
        binary = shutil.which(self.kind_binary)
        if KindCluster is None and binary is None:
            raise ProviderError("provider kind needs pytest-kind (pip install 'training-conformance[kind]') "
                                f"or a `{self.kind_binary}` binary on PATH, and a Docker engine")
        self._dir = Path(tempfile.mkdtemp(prefix="tc-kind-"))
        kubeconfig = self._dir / "kubeconfig"
        try:
            if KindCluster is not None:
                self._cluster = KindCluster(self.cluster_name, kubeconfig=kubeconfig)
                self._cluster.create()
            else:
                _run([binary, "create", "cluster", "--name", self.cluster_name, "--kubeconfig", str(kubeconfig),
                      "--wait", "120s"], "kind create cluster")
        except BaseException:
            shutil.rmtree(self._dir, ignore_errors=True)  # a failed create leaves nothing behind
            self._dir = None
            raise
        return kubeconfig

    def down(self) -> None:
        if self._cluster is not None:
            self._cluster.delete()
        elif self._dir is not None and (binary := shutil.which(self.kind_binary)):
            _run([binary, "delete", "cluster", "--name", self.cluster_name], "kind delete cluster")
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None


@dataclass
class K3sProvider:
    """A k3s server in a container (testcontainers' ``K3SContainer``)."""

    image: str = "rancher/k3s:v1.35.0-k3s1"
    name: str = "k3s"
    pod_lifecycle: bool = False
    _container: object = None
    _dir: Path | None = None
    extra: dict = field(default_factory=dict)

    def up(self) -> Path:
        try:
            from testcontainers.k3s import K3SContainer  # optional: pip install training-conformance[k3s]
        except ImportError:
            raise ProviderError("provider k3s needs testcontainers (pip install 'training-conformance[k3s]') "
                                "and a Docker engine") from None
        self._container = K3SContainer(self.image)
        self._container.start()
        self._dir = Path(tempfile.mkdtemp(prefix="tc-k3s-"))
        kubeconfig = self._dir / "kubeconfig"
        kubeconfig.write_text(self._container.config_yaml())
        return kubeconfig

    def down(self) -> None:
        if self._container is not None:
            self._container.stop()
            self._container = None
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None


PROVIDERS = ("local", "kind", "k3s", "existing")


def make(name: str, kubeconfig: str | Path | None = None) -> Provider:
    if name == "existing" or (kubeconfig and name in ("existing", "local")):
        if not kubeconfig:
            raise ProviderError("provider existing needs --kubeconfig")
        return ExistingProvider(Path(kubeconfig))
    if kubeconfig:
        raise ProviderError(f"--kubeconfig names an existing cluster; it cannot be combined with provider {name}")
    if name == "local":
        return LocalProvider()
    if name == "kind":
        return KindProvider()
    if name == "k3s":
        return K3sProvider()
    raise ProviderError(f"unknown provider {name!r}; known: {', '.join(PROVIDERS)}")


def _run(argv: list[str], what: str) -> None:
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        raise ProviderError(f"{what} failed (exit {done.returncode}): {(done.stderr or done.stdout).strip()[-2000:]}")
