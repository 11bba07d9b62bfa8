"""What every Volcano job plugin shares: its name, its parsed flags and its notices."""

from __future__ import annotations

from ...profiles import Profile
from ..goflag import FlagError, FlagSet
from ..keys import DEFAULT_TASK_SPEC, TASK_SPEC


class PluginError(Exception):
    """A hook failed; upstream returns the error and the sync of the Job fails."""


class Plugin:
    name = ""

    def __init__(self, args: list[str] | None, profile: Profile):
        self.args = list(args or [])
        self.profile = profile
        self.notices: list[str] = []
        self.flags = FlagSet(self.name)
        self.declare_flags(self.flags)
        try:
            self.flags.parse(self.args)
        except FlagError as exc:
            # Upstream: klog.Errorf("plugin %s flagset parse failed, err: %v"); the flags parsed so far stay.
            self.notices.append(f"plugin {self.name} flagset parse failed, err: {exc}")

    def declare_flags(self, flags: FlagSet) -> None:
        """Declare the plugin's flags with their defaults (none by default)."""

    # Hooks; each plugin overrides the ones it needs.
    def on_pod_create(self, pod: dict, job: dict) -> None:
        pass

    def on_job_add(self, job: dict, cluster) -> None:
        self._mark_controlled(job)

    def on_job_update(self, job: dict, cluster) -> None:
        pass

    def on_job_delete(self, job: dict, cluster) -> None:
        self._unmark_controlled(job)

    # status.controlledResources["plugin-<name>"] = <name> while the plugin owns resources of the Job.
    def _controlled(self, job: dict) -> bool:
        return (job.get("status") or {}).get("controlledResources", {}).get(f"plugin-{self.name}") == self.name

    def _mark_controlled(self, job: dict) -> None:
        job.setdefault("status", {}).setdefault("controlledResources", {})[f"plugin-{self.name}"] = self.name

    def _unmark_controlled(self, job: dict) -> None:
        (job.get("status") or {}).get("controlledResources", {}).pop(f"plugin-{self.name}", None)


def pod_index(pod: dict) -> str:
    """GetPodIndexUnderTask: the last ``-`` segment of the pod name when there are at least three."""
    parts = pod["metadata"]["name"].split("-")
    return parts[-1] if len(parts) >= 3 else ""


def task_type(pod: dict) -> str:
    """GetTaskKey: the ``volcano.sh/task-spec`` annotation, or ``default``."""
    return ((pod["metadata"].get("annotations") or {}).get(TASK_SPEC)) or DEFAULT_TASK_SPEC


def containers(pod: dict, init: bool = True) -> list[dict]:
    spec = pod.setdefault("spec", {})
    return list(spec.get("containers") or []) + (list(spec.get("initContainers") or []) if init else [])
