from __future__ import annotations

from pathlib import Path

import os

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
BASES = ROOT / "cases" / "trainer" / "_bases"


def load_base(name: str) -> dict:
    return yaml.safe_load((BASES / name).read_text())


@pytest.fixture
def torch_runtime() -> dict:
    return load_base("torch-runtime.yaml")


@pytest.fixture
def torch_trainjob() -> dict:
    return load_base("torch-trainjob.yaml")


@pytest.fixture
def mpi_runtime() -> dict:
    return load_base("mpi-runtime.yaml")


@pytest.fixture
def mpi_trainjob() -> dict:
    return load_base("mpi-trainjob.yaml")


# ---------------------------------------------------------------------- live tests' fixtures

@pytest.fixture(scope="module")
def live_session():
    """The live backend's session on TC_LIVE_KUBECONFIG, or on a local control plane of its own."""
    from conformance.live import session

    plane = None
    if not os.environ.get("TC_LIVE_KUBECONFIG"):
        from conformance.cluster import LocalControlPlane
        plane = LocalControlPlane(start_timeout=90).up()
        os.environ["TC_LIVE_KUBECONFIG"] = str(plane.kubeconfig)
    session.close()
    session.configure(os.environ["TC_LIVE_KUBECONFIG"])
    try:
        yield session.get()
    finally:
        session.close()
        if plane is not None:
            del os.environ["TC_LIVE_KUBECONFIG"]
            plane.down()


@pytest.fixture(scope="module")
def table():
    """The case table's rows (not the templates) by full id."""
    from conformance import cases as case_loader

    return {c.full_id: c for c in case_loader.load_all(ROOT / "cases") if isinstance(c, case_loader.Case)}


@pytest.fixture(scope="module")
def api(plane):
    """This project's REST client (reconciler.live.rest) on the test module's ``plane`` fixture (a
    module whose cluster fixture is named otherwise defines its own ``api``)."""
    from reconciler.live.rest import Api

    client = Api.from_kubeconfig(str(plane.kubeconfig))
    yield client
    client.close()
