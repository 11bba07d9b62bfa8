"""PlainML: a runtime without an ML policy still honours the TrainJob's numNodes and env."""

from __future__ import annotations

from ...profiles import Profile
from ..framework import Plugin
from ..info import TRAINER, RuntimeInfo
from . import common

NAME = "PlainML"


def enforce(info: RuntimeInfo, trainjob: dict, profile: Profile) -> None:
    if "torch" in info.ml_policy or "mpi" in info.ml_policy:
        return
    trainer = common.trainer_spec(trainjob)
    pod_set = info.by_ancestor(TRAINER)
    if pod_set is not None and trainer.get("numNodes") is not None:
        pod_set.count = trainer["numNodes"]
    common.apply_trainer_env(common.trainer_container(info), trainjob)


PLUGIN = Plugin(NAME, enforce=enforce)
