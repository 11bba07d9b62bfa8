"""How the upstream JobSet and Trainer controller managers are started on 127.0.0.1.

Both read a ``Configuration`` file (``--config``); the fields used here exist, with the same
meaning, in every release the kit pins (Trainer v2.1/v2.3, JobSet v0.10/v0.12). Both decode it
strictly, so an unknown field is a start-up error rather than silently ignored.

* Webhook server on ``127.0.0.1:<port>``, serving our certificate (``tls.crt``/``tls.key``).
  JobSet takes the directory as ``webhook.certDir``. Trainer's configuration has no cert
  directory, so its webhook server uses controller-runtime's default,
  ``$TMPDIR/k8s-webhook-server/serving-certs`` (``os.TempDir()``), and the kit sets ``TMPDIR``.
* Internal certificate management off (``certManagement.enable: false`` /
  ``internalCertManagement.enable: false``). Both would otherwise generate a CA into a Secret and
  patch the caBundle of webhook configurations with their in-cluster names, and wait for that
  before registering controllers and webhooks.
* Leader election off (``leaderElect: false``, and JobSet's ``--leader-elect=false``, which its
  main gives precedence over the file): one replica, no Lease, and no exit when a lease renewal
  misses during an apiserver restart.
* Health probes and metrics on free loopback ports; Trainer's metrics in plain HTTP (the default
  is HTTPS with a self-signed certificate), JobSet's are always HTTPS (its main hard-codes it),
  served with our certificate (``metrics.certDir``) so that nothing is written to ``/tmp``.
* Both talk to the apiserver with the kubeconfig they are given (``--kubeconfig``, registered by
  controller-runtime).
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from .builds import Build


@dataclass
class Manager:
    name: str  # jobset | trainer
    build: Build
    argv: list[str]
    env: dict[str, str]
    log: Path
    webhook_port: int
    health_port: int
    metrics_port: int
    popen: subprocess.Popen | None = field(default=None, repr=False)

    @property
    def webhook_url(self) -> str:
        return f"https://127.0.0.1:{self.webhook_port}"

    @property
    def readyz_url(self) -> str:
        return f"http://127.0.0.1:{self.health_port}/readyz"

    @property
    def healthz_url(self) -> str:
        return f"http://127.0.0.1:{self.health_port}/healthz"

    def running(self) -> bool:
        return self.popen is not None and self.popen.poll() is None


def _write_config(path: Path, config: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def _write_cert(directory: Path, cert: bytes, key: bytes) -> None:
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    (directory / "tls.crt").write_bytes(cert)
    (directory / "tls.key").write_bytes(key)
    (directory / "tls.key").chmod(0o600)


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("KUBECONFIG", None)  # --kubeconfig is the only source
    env.update(extra)
    return env


def jobset_manager(build: Build, kubeconfig: Path, workdir: Path, cert: bytes, key: bytes,
                   ports: tuple[int, int, int]) -> Manager:
    webhook_port, health_port, metrics_port = ports
    cert_dir = workdir / "certs"
    _write_cert(cert_dir, cert, key)
    config = _write_config(workdir / "config.yaml", {
        "apiVersion": "config.jobset.x-k8s.io/v1alpha1",
        "kind": "Configuration",
        "webhook": {"port": webhook_port, "host": "127.0.0.1", "certDir": str(cert_dir)},
        "metrics": {"bindAddress": f"127.0.0.1:{metrics_port}", "certDir": str(cert_dir)},
        "health": {"healthProbeBindAddress": f"127.0.0.1:{health_port}"},
        "leaderElection": {"leaderElect": False},
        "internalCertManagement": {"enable": False},
    })
    argv = [str(build.binary), f"--config={config}", f"--kubeconfig={kubeconfig}", "--leader-elect=false"]
    return Manager("jobset", build, argv, _env(), workdir / "jobset.log", webhook_port, health_port, metrics_port)


def trainer_manager(build: Build, kubeconfig: Path, workdir: Path, cert: bytes, key: bytes,
                    ports: tuple[int, int, int]) -> Manager:
    webhook_port, health_port, metrics_port = ports
    tmpdir = workdir / "tmp"
    _write_cert(tmpdir / "k8s-webhook-server" / "serving-certs", cert, key)
    config = _write_config(workdir / "config.yaml", {
        "apiVersion": "config.trainer.kubeflow.org/v1alpha1",
        "kind": "Configuration",
        "webhook": {"port": webhook_port, "host": "127.0.0.1"},
        "metrics": {"bindAddress": f"127.0.0.1:{metrics_port}", "secureServing": False},
        "health": {"healthProbeBindAddress": f"127.0.0.1:{health_port}"},
        "leaderElection": {"leaderElect": False},
        "certManagement": {"enable": False},
    })
    argv = [str(build.binary), f"--config={config}", f"--kubeconfig={kubeconfig}"]
    return Manager("trainer", build, argv, _env(TMPDIR=str(tmpdir)), workdir / "trainer.log",
                   webhook_port, health_port, metrics_port)
