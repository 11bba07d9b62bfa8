"""Runtime info: what a (Cluster)TrainingRuntime says, as the plugins see and change it.

Mirrors upstream's ``runtime.Info``: one :class:`PodSet` per replicatedJob of the runtime template
(keyed by the replicatedJob *name*), with a pod count, plus the ML policy. Plugins edit the
JobSet spec copy held here (``jobset_spec``); the JobSet plugin turns it into the JobSet at the end.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from .. import meta, quantity

ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"
DATASET_INITIALIZER = "dataset-initializer"
MODEL_INITIALIZER = "model-initializer"
TRAINER = "trainer"
NODE = "node"
LAUNCHER = "launcher"
TRAINER_CONTAINER = "node"
#: Required container name per ancestor step (runtime webhook).
ANCESTOR_CONTAINERS = {DATASET_INITIALIZER: "dataset-initializer", MODEL_INITIALIZER: "model-initializer", TRAINER: "node"}


@dataclass
class PodSet:
    name: str
    ancestor: str | None
    count: int
    replicas: int
    endpoints: list[str] = field(default_factory=list)


@dataclass
class RuntimeInfo:
    ml_policy: dict
    template_metadata: dict
    jobset_spec: dict
    pod_sets: list[PodSet]

    def pod_set(self, name: str) -> PodSet | None:
        return next((ps for ps in self.pod_sets if ps.name == name), None)

    def by_ancestor(self, ancestor: str) -> PodSet | None:
        return next((ps for ps in self.pod_sets if ps.ancestor == ancestor), None)

    def replicated_job(self, name: str) -> dict | None:
        return meta.find_named(self.jobset_spec.get("replicatedJobs"), name)

    def pod_spec(self, name: str) -> dict | None:
        rj = self.replicated_job(name)
        if rj is None:
            return None
        node = rj
        for key in ("template", "spec", "template", "spec"):  # a null level decodes to Go's zero struct
            if not isinstance(node.get(key), dict):
                node[key] = {}
            node = node[key]
        return node

    def container(self, pod_set: str, container: str) -> dict | None:
        spec = self.pod_spec(pod_set)
        return meta.find_named(spec.get("containers"), container) if spec else None


def new_runtime_info(runtime: dict) -> RuntimeInfo:
    """Build the info from a defaulted runtime (upstream ``newRuntimeInfo``).

    A trainer-ancestor job counts ``mlPolicy.numNodes`` (nil → 1) pods; any other job counts its
    ``parallelism`` (nil → 1). Counts are clamped to at least 1, as ``WithPodSet`` does.
    """
    spec = runtime.get("spec", {})
    ml_policy = copy.deepcopy(spec.get("mlPolicy") or {})
    template = spec.get("template") or {}
    jobset_spec = copy.deepcopy(template.get("spec") or {})
    pod_sets = []
    for rj in jobset_spec.get("replicatedJobs") or []:
        job_template = rj.get("template") or {}
        ancestor = ((job_template.get("metadata") or {}).get("labels") or {}).get(ANCESTOR_LABEL)
        if ancestor == TRAINER:
            count = ml_policy.get("numNodes", 1)
        else:
            count = (job_template.get("spec") or {}).get("parallelism", 1)
        pod_sets.append(PodSet(
            name=rj["name"], ancestor=ancestor, count=max(count if count is not None else 1, 1),
            replicas=rj.get("replicas", 1),
        ))
    return RuntimeInfo(ml_policy=ml_policy,
                       template_metadata=copy.deepcopy(template.get("metadata") or {}),
                       jobset_spec=jobset_spec, pod_sets=pod_sets)


# ---------------------------------------------------------------------- resources

def runtime_node_resources(info: RuntimeInfo) -> dict | None:
    """``ExtractResourcePerNodeFromRuntime``: resources of container ``node`` in the first
    replicatedJob named ``node`` or labelled ancestor trainer that has such a container.

    Upstream skips a container whose resources are nil, but it reads apply configurations made from
    the typed runtime, in which every container has (possibly empty) resources - so the first
    container found wins even without resources (seen live on v2.1.0 and v2.3.0)."""
    for ps in info.pod_sets:
        if ps.name == NODE or ps.ancestor == TRAINER:
            container = info.container(ps.name, TRAINER_CONTAINER)
            if container is not None:
                return container.get("resources") or {}
    return None


def resources_per_node(info: RuntimeInfo, trainjob: dict) -> dict | None:
    """TrainJob ``resourcesPerNode`` when set, else the runtime's node container resources."""
    trainer = trainjob.get("spec", {}).get("trainer") or {}
    if trainer.get("resourcesPerNode") is not None:
        return trainer["resourcesPerNode"]
    return runtime_node_resources(info)


def gpu_count(resources: dict | None) -> int:
    """``GetNumGPUPerNode``: first resource whose name contains "gpu" (any case); requests first,
    limits when requests give 0; ``Quantity.Value()`` rounds up."""
    if not resources:
        return 0
    for section in ("requests", "limits"):
        for name, qty in (resources.get(section) or {}).items():
            if "gpu" in name.lower():
                count = quantity.value(qty)
                if count:
                    return count
                break
    return 0


def cpu_count(resources: dict | None, prefer: tuple[str, ...] = ("requests", "limits")) -> int:
    """CPU per node, rounded up: the first of ``prefer`` that sets a non-zero cpu, else 0."""
    for section in prefer:
        qty = ((resources or {}).get(section) or {}).get("cpu")
        if qty is not None and quantity.parse(qty) != 0:
            return quantity.value(qty)
    return 0
