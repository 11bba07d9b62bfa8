"""JobSet's pod mutating webhook (``mpod.kb.io``), as far as the reference reconciler models it.

Since v0.11.0 (PR #1077) every pod carrying the ``jobset.sigs.k8s.io/jobset-name`` annotation gets
the label ``jobset.sigs.k8s.io/priority`` = its ``spec.priority``, unless its JobSet uses the
node-selector exclusive-placement strategy. Before, only exclusive-placement pods got it, and
exclusive placement (affinities, node selectors) is not modelled here.

``spec.priority`` is set by the apiserver's Priority admission plugin, which runs before webhooks:
the value of ``priorityClassName`` (the two built-in system classes are the only PriorityClasses a
fresh cluster has), else 0 when there is no global default class.
"""

from __future__ import annotations

from .controller import JOBSET_NAME, PREFIX

PRIORITY = PREFIX + "priority"
NODE_SELECTOR_STRATEGY = "alpha.jobset.sigs.k8s.io/node-selector"
#: How upstream registers the pod webhook (config/components/webhook/patches/mutating-patch.yaml): only
#: pods labelled with a JobSet name are sent to it. A live backend registering this mutator uses the same.
OBJECT_SELECTOR = {"matchExpressions": [{"key": JOBSET_NAME, "operator": "Exists"}]}
WEBHOOK = "mpod.kb.io"
# scheduling/types.go: SystemCriticalPriority (2000000000) and node-critical = that + 1000.
_SYSTEM_CLASSES = {"system-cluster-critical": 2000000000, "system-node-critical": 2000001000}


def label_priority(pod: dict, cluster) -> None:
    """Mutate a Pod being created (upstream ``mpod.kb.io``; see :data:`OBJECT_SELECTOR`)."""
    if not cluster.profile.jobset_priority_label:
        return
    md = pod.setdefault("metadata", {})
    annotations = md.get("annotations") or {}
    if JOBSET_NAME not in annotations or NODE_SELECTOR_STRATEGY in annotations:
        return
    priority = _priority(pod.get("spec") or {})
    if priority is not None:
        md["labels"] = {**(md.get("labels") or {}), PRIORITY: str(priority)}


label_priority.object_selector = OBJECT_SELECTOR
label_priority.webhook_name = WEBHOOK


def _priority(spec: dict) -> int | None:
    if "priority" in spec:
        return spec["priority"]
    name = spec.get("priorityClassName")
    if not name:
        return 0
    # Another class would have to exist in the cluster; none does in render.
    return _SYSTEM_CLASSES.get(name)
