"""The ``env`` plugin: ``VK_TASK_INDEX`` and ``VC_TASK_INDEX`` = the pod's index in its task.

Upstream (shared/reference/volcano-jobset-restart.md §1.4, §1.7): both names are appended to every
container and init container, the value being the last ``-`` segment of the pod name.
"""

from __future__ import annotations

from .base import Plugin, containers, pod_index

VK_TASK_INDEX, VC_TASK_INDEX = "VK_TASK_INDEX", "VC_TASK_INDEX"


class EnvPlugin(Plugin):
    name = "env"

    def on_pod_create(self, pod: dict, job: dict) -> None:
        index = pod_index(pod)
        for container in containers(pod):
            container.setdefault("env", []).extend(
                [{"name": VK_TASK_INDEX, "value": index}, {"name": VC_TASK_INDEX, "value": index}])
