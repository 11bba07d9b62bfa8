"""The runtime framework: an ordered list of plugins, each with optional hooks.

Like upstream's ``pkg/runtime/framework``, a plugin owns one policy and may implement:

* ``validate(info, trainjob, profile) -> [FieldError]`` - run by the TrainJob webhook;
* ``enforce(info, trainjob, profile)`` - change counts, env, volumes in the runtime info;
* ``build(info, trainjob, profile, lookup) -> [objects]`` - produce child objects.

Hooks are pure functions over plain dicts; ``lookup(group, kind, namespace, name)`` is the only
window onto the cluster (upstream's MPI builder needs it to avoid re-creating an SSH Secret).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..errors import FieldError
from ..profiles import Profile
from .info import RuntimeInfo

Lookup = Callable[[str, str, str, str], dict | None]


class BuildError(Exception):
    """A plugin refused to build; upstream returns the error from Reconcile and creates nothing."""


@dataclass(frozen=True)
class Plugin:
    name: str
    validate: Callable[[RuntimeInfo, dict, Profile], list[FieldError]] | None = None
    enforce: Callable[[RuntimeInfo, dict, Profile], None] | None = None
    build: Callable[[RuntimeInfo, dict, Profile, Lookup], list[dict]] | None = None


def run_validate(plugins: list[Plugin], info: RuntimeInfo, trainjob: dict, profile: Profile) -> list[FieldError]:
    errors: list[FieldError] = []
    for plugin in plugins:
        if plugin.validate:
            errors.extend(plugin.validate(info, trainjob, profile))
    return errors


def run_build(plugins: list[Plugin], info: RuntimeInfo, trainjob: dict, profile: Profile, lookup: Lookup) -> list[dict]:
    for plugin in plugins:
        if plugin.enforce:
            plugin.enforce(info, trainjob, profile)
    objects: list[dict] = []
    for plugin in plugins:
        if plugin.build:
            objects.extend(plugin.build(info, trainjob, profile, lookup))
    return objects
