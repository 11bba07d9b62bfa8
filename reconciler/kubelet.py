"""A stand-in for kwok's fast pod stages: every new pod becomes Running and Ready.

Nothing completes on its own; a pod only exits when a case injects that (the live backend does the
same with kwok stages), so a rendered steady state is "everything running".
"""

from __future__ import annotations


class FakeKubelet:
    watches = (("", "Pod"),)

    def reconcile(self, cluster, pod: dict) -> None:
        if pod.get("status", {}).get("phase"):
            return
        pod["status"] = {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": cluster.now()}],
        }
        cluster.update(pod)
