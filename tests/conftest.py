from __future__ import annotations

from pathlib import Path

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
