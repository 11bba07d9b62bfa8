"""Cluster providers. kind and k3s need Docker, which these machines lack, so their adapters are
tested against fakes: a `kind` executable on PATH that records its arguments, and a fake
testcontainers module. `existing` must never create or delete anything."""

from __future__ import annotations

import os
import stat
import sys
import tempfile
import types
from pathlib import Path

import pytest

from conformance.cluster import providers
from conformance.cluster.providers import ExistingProvider, K3sProvider, KindProvider, ProviderError


@pytest.fixture
def fake_kind(tmp_path, monkeypatch):
    log = tmp_path / "kind-calls.log"
    script = tmp_path / "bin" / "kind"
    script.parent.mkdir()
    # Records argv; `create` writes a kubeconfig where --kubeconfig points, like kind does.
    script.write_text(f"""#!/bin/sh
echo "$@" >> {log}
if [ "$1" = create ]; then
  while [ $# -gt 0 ]; do
    if [ "$1" = --kubeconfig ]; then echo "apiVersion: v1" > "$2"; fi
    shift
  done
fi
""")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{script.parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setitem(sys.modules, "pytest_kind", None)  # force the CLI path
    return log


def test_kind_uses_the_binary_on_path(fake_kind):
    provider = KindProvider(cluster_name="tc-test")
    kubeconfig = provider.up()
    assert kubeconfig.read_text().startswith("apiVersion: v1")
    provider.down()
    calls = fake_kind.read_text().splitlines()
    assert calls[0].startswith("create cluster --name tc-test --kubeconfig ") and calls[0].endswith("--wait 120s")
    assert calls[1] == "delete cluster --name tc-test"
    assert not kubeconfig.exists()  # its temp dir is gone


def test_kind_failure_is_a_clear_error(fake_kind, tmp_path, monkeypatch):
    failing = tmp_path / "bin" / "kind"
    failing.write_text("#!/bin/sh\necho 'Cannot connect to the Docker daemon' >&2\nexit 1\n")
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    with pytest.raises(ProviderError, match="kind create cluster failed .*Docker daemon"):
        KindProvider().up()
    assert not list(temp.iterdir())  # its temp dir went with the failure


def test_kind_without_tool_says_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setitem(sys.modules, "pytest_kind", None)
    with pytest.raises(ProviderError, match="pytest-kind .* or a `kind` binary"):
        KindProvider().up()


def test_kind_prefers_pytest_kind(monkeypatch):
    calls = []

    class FakeKindCluster:
        def __init__(self, name, kubeconfig):
            calls.append(("init", name, kubeconfig.name))

        def create(self):
            calls.append(("create",))

        def delete(self):
            calls.append(("delete",))

    monkeypatch.setitem(sys.modules, "pytest_kind", types.SimpleNamespace(KindCluster=FakeKindCluster))
    provider = KindProvider(cluster_name="c1")
    provider.up()
    provider.down()
    assert calls == [("init", "c1", "kubeconfig"), ("create",), ("delete",)]


def test_k3s_uses_testcontainers(monkeypatch):
    events = []

    class FakeK3s:
        def __init__(self, image):
            events.append(("image", image))

        def start(self):
            events.append(("start",))

        def config_yaml(self):
            return "apiVersion: v1\nkind: Config\n"

        def stop(self):
            events.append(("stop",))

    module = types.ModuleType("testcontainers.k3s")
    module.K3SContainer = FakeK3s
    monkeypatch.setitem(sys.modules, "testcontainers", types.ModuleType("testcontainers"))
    monkeypatch.setitem(sys.modules, "testcontainers.k3s", module)
    provider = K3sProvider()
    kubeconfig = provider.up()
    assert "kind: Config" in kubeconfig.read_text()
    provider.down()
    assert events[0][0] == "image" and events[1:] == [("start",), ("stop",)]
    assert not kubeconfig.exists()


def test_k3s_without_testcontainers(monkeypatch):
    monkeypatch.setitem(sys.modules, "testcontainers.k3s", None)
    with pytest.raises(ProviderError, match="testcontainers"):
        K3sProvider().up()


def test_existing_is_never_created_or_deleted(tmp_path):
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\n")
    provider = providers.make("existing", kubeconfig)
    assert isinstance(provider, ExistingProvider)
    assert provider.up() == kubeconfig
    provider.down()
    assert kubeconfig.read_text() == "apiVersion: v1\n"


def test_make_validates_combinations(tmp_path):
    with pytest.raises(ProviderError, match="needs --kubeconfig"):
        providers.make("existing")
    with pytest.raises(ProviderError, match="cannot be combined with provider kind"):
        providers.make("kind", tmp_path / "k")
    with pytest.raises(ProviderError, match="no such file"):
        providers.make("existing", tmp_path / "missing").up()
    with pytest.raises(ProviderError, match="unknown provider"):
        providers.make("minikube")
    assert providers.make("local").name == "local" and providers.make("kind").pod_lifecycle is False


def test_run_with_provider_kind_creates_and_deletes_the_cluster(fake_kind, tmp_path, monkeypatch):
    # The run itself fails fast (the fake cluster has no API server), but the provider must be torn
    # down whatever happens.
    from conformance import cli
    monkeypatch.setattr("pytest.main", lambda argv: 0)
    assert cli.main(["run", "--backend", "live", "--provider", "kind", "--profile", "trainer-v2.3"]) == 0
    calls = fake_kind.read_text().splitlines()
    assert calls[0].startswith("create cluster --name training-conformance")
    assert calls[-1] == "delete cluster --name training-conformance"


def test_run_with_provider_needs_live_backend(capsys):
    from conformance import cli
    assert cli.main(["run", "--provider", "kind"]) == 2
    assert "needs --backend live" in capsys.readouterr().err
