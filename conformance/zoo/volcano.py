"""Volcano pytorch-plugin bugs: WORLD_SIZE over every task, PyTorch env on extra tasks' pods."""

from __future__ import annotations

from functools import partial

from reconciler.volcano import plugins
from reconciler.volcano.plugins import pytorch

from .variants import Variant, patched


class _WorldSizeAllTasks(pytorch.PytorchPlugin):
    """WORLD_SIZE sums the replicas of every task, extra tasks included, whatever the version."""

    def world_size(self, job: dict) -> int:
        return sum(t.get("replicas", 0) for t in job["spec"].get("tasks") or [])


class _EnvOnEveryPod(pytorch.PytorchPlugin):
    """Pods of tasks that are neither master nor worker still get MASTER_ADDR, MASTER_PORT,
    WORLD_SIZE and the port (upstream's behaviour; the suite's extended level forbids it)."""

    def on_pod_create(self, pod: dict, job: dict) -> None:
        if self.rank(pod) is not None:
            return super().on_pod_create(pod, job)
        master_task = next((t for t in job["spec"].get("tasks") or [] if t.get("name") == self.master), None)
        if master_task is None:
            return
        for container in pod["spec"].get("containers") or []:
            self._open_port(container)
            container.setdefault("env", []).extend([
                {"name": pytorch.MASTER_ADDR, "value": pytorch.master_addr(job, master_task)},
                {"name": pytorch.MASTER_PORT, "value": str(self.port)},
                {"name": pytorch.WORLD_SIZE, "value": str(self.world_size(job))},
            ])


def _with_builder(cls):
    return partial(patched, plugins, "BUILDERS", {**plugins.BUILDERS, "pytorch": cls})


VARIANTS = [
    Variant("volcano-world-size-counts-every-task", "volcano",
            bug="WORLD_SIZE sums the replicas of all tasks, so an extra task (e.g. a parameter server) inflates it",
            seed="volcano-sh/volcano#4166, #4238 (fixed by #4281, v1.12)",
            applied=_with_builder(_WorldSizeAllTasks)),
    Variant("volcano-pytorch-env-on-extra-tasks", "volcano",
            bug="pods of extra tasks get MASTER_ADDR/MASTER_PORT/WORLD_SIZE and the pytorchjob port",
            seed="volcano-sh/volcano#4238 (extended level: env only on master/worker)",
            applied=_with_builder(_EnvOnEveryPod)),
]
