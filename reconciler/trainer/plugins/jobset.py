"""JobSet plugin: pod network endpoints, then the JobSet that runs the TrainJob.

Facts (shared/reference/trainer-v2.md §4.2): name/namespace of the TrainJob, controller
ownerReference, template labels/annotations, suspend, parallelism = completions = PodSet count for
every replicatedJob, replicas forced to 1 for initializer and trainer jobs, trainer image/command/
args/resources on container ``node`` of the trainer job.
"""

from __future__ import annotations

import copy

from ... import meta
from ...profiles import Profile
from ..framework import Lookup, Plugin
from ..info import (ANCESTOR_CONTAINERS, ANCESTOR_LABEL, DATASET_INITIALIZER, MODEL_INITIALIZER, NODE, TRAINER,
                    TRAINER_CONTAINER, RuntimeInfo)
from . import common

NAME = "JobSet"


def subdomain(info: RuntimeInfo, trainjob: dict) -> str:
    return (info.jobset_spec.get("network") or {}).get("subdomain") or trainjob["metadata"]["name"]


def enforce(info: RuntimeInfo, trainjob: dict, profile: Profile) -> None:
    """``syncPodNetwork``: ``<tj>-<rjob>-<replica>-<pod>.<subdomain>`` per pod."""
    name = trainjob["metadata"]["name"]
    domain = subdomain(info, trainjob)
    for ps in info.pod_sets:
        replicas = range(ps.replicas) if profile.endpoints_loop_replicas else range(1)
        ps.endpoints = [f"{name}-{ps.name}-{r}-{p}.{domain}" for r in replicas for p in range(ps.count)]


def _apply_initializers(info: RuntimeInfo, trainjob: dict) -> None:
    initializer = trainjob.get("spec", {}).get("initializer") or {}
    for step, section in ((DATASET_INITIALIZER, "dataset"), (MODEL_INITIALIZER, "model")):
        source = initializer.get(section)
        ps = info.by_ancestor(step)
        if not source or ps is None:
            continue
        container = info.container(ps.name, ANCESTOR_CONTAINERS[step])
        if container is None:
            continue
        env = []
        if source.get("storageUri"):
            env.append({"name": "STORAGE_URI", "value": source["storageUri"]})
        env.extend(source.get("env") or [])
        common.upsert_env(container, env)
        if source.get("secretRef"):
            container.setdefault("envFrom", []).append({"secretRef": copy.deepcopy(source["secretRef"])})


def build(info: RuntimeInfo, trainjob: dict, profile: Profile, lookup: Lookup) -> list[dict]:
    md = trainjob["metadata"]
    trainer = common.trainer_spec(trainjob)
    container = common.trainer_container(info)
    if container is not None:
        for field in ("image", "command", "args"):
            if trainer.get(field) is not None:
                container[field] = copy.deepcopy(trainer[field])
        common.apply_resources(container, trainjob, profile)
    # Builder.Trainer: the TrainJob's env goes (again) into container node of the trainer job and,
    # with MPI runLauncherAsNode, of the job named node - after every ML policy's env. Torch and
    # plain ML already put it first, so for them this changes nothing; for MPI it lands after OMPI_*.
    launcher_as_node = ((info.ml_policy.get("mpi") or {}).get("runLauncherAsNode") is True)
    for ps in info.pod_sets:
        if ps.ancestor == TRAINER or (launcher_as_node and ps.name == NODE):
            common.apply_trainer_env(info.container(ps.name, TRAINER_CONTAINER), trainjob)
    _apply_initializers(info, trainjob)

    spec = info.jobset_spec
    spec["suspend"] = bool(trainjob.get("spec", {}).get("suspend", False))
    for rj in spec.get("replicatedJobs", []):
        ps = info.pod_set(rj["name"])
        job_spec = rj.setdefault("template", {}).setdefault("spec", {})
        job_spec["parallelism"] = ps.count
        job_spec["completions"] = ps.count
        ancestor = ((rj["template"].get("metadata") or {}).get("labels") or {}).get(ANCESTOR_LABEL)
        if ancestor in (DATASET_INITIALIZER, MODEL_INITIALIZER, TRAINER):
            rj["replicas"] = 1

    metadata = {"name": md["name"], "namespace": md.get("namespace"),
                "ownerReferences": [meta.controller_ref(trainjob)]}
    labels = dict(info.template_metadata.get("labels") or {})
    annotations = dict(info.template_metadata.get("annotations") or {})
    # v2.0/v2.1 TrainJobs carried spec.labels/annotations that override the template's.
    labels.update(trainjob.get("spec", {}).get("labels") or {})
    annotations.update(trainjob.get("spec", {}).get("annotations") or {})
    if labels:
        metadata["labels"] = labels
    if annotations:
        metadata["annotations"] = annotations
    return [{"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": metadata, "spec": spec}]


PLUGIN = Plugin(NAME, enforce=enforce, build=build)
