"""Steps several ML-policy plugins share: where the TrainJob's trainer settings land."""

from __future__ import annotations

import copy

from ... import meta
from ...gotypes import IntOrString
from ...profiles import Profile
from ..info import TRAINER, TRAINER_CONTAINER, RuntimeInfo


def trainer_spec(trainjob: dict) -> dict:
    return trainjob.get("spec", {}).get("trainer") or {}


def trainer_container(info: RuntimeInfo) -> dict | None:
    """Container ``node`` of the job labelled ancestor ``trainer``."""
    ps = info.by_ancestor(TRAINER)
    return info.container(ps.name, TRAINER_CONTAINER) if ps else None


def nproc_value(nproc, profile: Profile):
    """The bad numProcPerNode as field.Error prints it: apimachinery v0.34+ (Trainer v2.1+) prints a
    non-primitive value as JSON ("npu"); before, IntOrString printed with %#v."""
    return nproc if profile.field_values_json else IntOrString(nproc)


def upsert_env(container: dict, env: list[dict]) -> None:
    entries = container.setdefault("env", [])
    for item in env:
        meta.upsert_named(entries, copy.deepcopy(item))


def apply_trainer_env(container: dict | None, trainjob: dict) -> None:
    """Upsert the TrainJob's ``spec.trainer.env`` (a name already present keeps its place)."""
    if container is not None and trainer_spec(trainjob).get("env"):
        upsert_env(container, trainer_spec(trainjob)["env"])


def apply_resources(container: dict | None, trainjob: dict, profile: Profile) -> None:
    """``resourcesPerNode``: merged per key since v2.3 (#3602), a wholesale replacement before."""
    wanted = trainer_spec(trainjob).get("resourcesPerNode")
    if container is None or not wanted:
        return
    if not profile.merge_resources_per_node:
        if wanted.get("limits") or wanted.get("requests"):
            container["resources"] = copy.deepcopy(wanted)
        return
    resources = container.setdefault("resources", {})
    for section in ("limits", "requests"):
        if wanted.get(section):
            resources.setdefault(section, {}).update(copy.deepcopy(wanted[section]))
