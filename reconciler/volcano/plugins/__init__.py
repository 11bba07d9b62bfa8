"""Volcano job plugins (``spec.plugins``): one module per plugin, built fresh for every hook call.

As upstream (``pkg/controllers/job/plugins``), a plugin is constructed from its argument list each
time a hook runs, parses its flags then, and offers four hooks: ``on_pod_create(pod, job)`` while the
controller builds a pod, and ``on_job_add`` / ``on_job_update`` / ``on_job_delete(job, cluster)``
around the Job's lifetime. Upstream calls plugins in Go map order, which is random; the reference
reconciler uses the sorted names (the order in which the mutating webhook stores them).

``notices`` collects what upstream only logs (flag parse failures, a job without a master task) and
what the reference reconciler reports on its own (a template env var it kept); the controller records
them as reconcile errors, so goldens show them.
"""

from __future__ import annotations

from ...profiles import Profile
from .base import Plugin, PluginError
from .env import EnvPlugin
from .pytorch import PytorchPlugin
from .svc import SvcPlugin

BUILDERS: dict[str, type[Plugin]] = {p.name: p for p in (EnvPlugin, PytorchPlugin, SvcPlugin)}

#: Plugins upstream registers that the reference reconciler does not implement: the webhook admits
#: them, the controller reports them (shared/reference/volcano-jobset-restart.md §1.1).
UNIMPLEMENTED = {"ssh", "tensorflow", "mpi", "hcclrank", "ray"}


def known(name: str) -> bool:
    return name in BUILDERS or name in UNIMPLEMENTED


def build(job: dict, profile: Profile) -> list[Plugin]:
    """Every plugin of ``job`` in call order; an unknown or unimplemented one raises PluginError."""
    plugins = []
    for name in sorted(job["spec"].get("plugins") or {}):
        if name not in BUILDERS:
            raise PluginError(f"failed to get plugin {name}" if name not in UNIMPLEMENTED
                              else f"plugin {name} is not implemented by the reference reconciler")
        plugins.append(BUILDERS[name](job["spec"]["plugins"][name], profile))
    return plugins
