"""JobSet's pod mutating webhook (``mpod.kb.io``), as far as the reference reconciler models it.

Since v0.11.0 (PR #1077) every pod carrying the ``jobset.sigs.k8s.io/jobset-name`` annotation gets
the label ``jobset.sigs.k8s.io/priority`` = its ``spec.priority``, unless its JobSet uses the
node-selector exclusive-placement strategy. Before, only exclusive-placement pods got it, and
exclusive placement (affinities, node selectors) is not modelled here.

``spec.priority`` is set by the apiserver's Priority admission plugin, which runs before webhooks:
the value of ``priorityClassName``, else 0 when there is no global default class - render leaves
that 0 out (reconciler/builtin.py ``_admit_priority``), so an absent ``spec.priority`` reads as 0.
"""

from __future__ import annotations

from .controller import JOBSET_NAME, PREFIX

PRIORITY = PREFIX + "priority"
NODE_SELECTOR_STRATEGY = "alpha.jobset.sigs.k8s.io/node-selector"
#: How upstream registers the pod webhook (config/components/webhook/patches/mutating-patch.yaml): only
#: pods labelled with a JobSet name are sent to it. A live backend registering this mutator uses the same.
OBJECT_SELECTOR = {"matchExpressions": [{"key": JOBSET_NAME, "operator": "Exists"}]}
WEBHOOK = "mpod.kb.io"


def label_priority(pod: dict, cluster) -> None:
    """Mutate a Pod being created (upstream ``mpod.kb.io``; see :data:`OBJECT_SELECTOR`)."""
    if not cluster.profile.jobset_priority_label:
        return
    md = pod.setdefault("metadata", {})
    annotations = md.get("annotations") or {}
    if JOBSET_NAME not in annotations or NODE_SELECTOR_STRATEGY in annotations:
        return
    priority = (pod.get("spec") or {}).get("priority", 0)
    md["labels"] = {**(md.get("labels") or {}), PRIORITY: str(priority)}


label_priority.object_selector = OBJECT_SELECTOR
label_priority.webhook_name = WEBHOOK

