"""Runtime snapshots (KEP-2599, kubeflow/trainer#3580, v2.3): a TrainJob keeps the runtime it started with.

On its first build the TrainJob controller writes ConfigMap ``<trainjob>-runtime-snapshot``
(controller ownerReference to the TrainJob, so it goes with it) whose ``data.runtime`` is the
runtime it read, as ``sigs.k8s.io/yaml.Marshal`` of the typed Go object - metadata included.
Every later build reads the runtime from there, so editing or deleting the (Cluster)TrainingRuntime
no longer changes a TrainJob that already started.

A snapshot that is not the TrainJob's (no controller reference with its UID), lacks the key, does
not parse, or names another runtime than ``spec.runtimeRef`` is an error: the build stops (upstream
records a TrainJobResourcesCreationFailed event and retries) and the snapshot is left as it is.
"""

from __future__ import annotations

import yaml

from . import goyaml, gotyped

SUFFIX = "-runtime-snapshot"
DATA_KEY = "runtime"


class SnapshotError(Exception):
    pass


def name_for(trainjob: dict) -> str:
    return trainjob["metadata"]["name"] + SUFFIX


def configmap(trainjob: dict, runtime: dict) -> dict:
    md = trainjob["metadata"]
    return {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name_for(trainjob), "namespace": md.get("namespace"),
                     "ownerReferences": [{"apiVersion": trainjob["apiVersion"], "kind": trainjob["kind"],
                                          "name": md["name"], "uid": md["uid"],
                                          "controller": True, "blockOwnerDeletion": True}]},
        "data": {DATA_KEY: goyaml.dump(gotyped.runtime(runtime))},
    }


def read(cm: dict, trainjob: dict) -> dict:
    """The runtime stored in ``cm``, checked against ``trainjob`` (messages as upstream words them)."""
    uid = trainjob["metadata"].get("uid")
    owner = next((r for r in cm["metadata"].get("ownerReferences", []) if r.get("controller")), None)
    if owner is None or owner.get("uid") != uid:
        raise SnapshotError("invalid runtime snapshot: a snapshot configmap exists but is owned by another object")
    text = (cm.get("data") or {}).get(DATA_KEY)
    if text is None:
        raise SnapshotError(f'invalid runtime snapshot: snapshot ConfigMap missing "{DATA_KEY}" data key')
    try:
        runtime = yaml.safe_load(text)
        if not isinstance(runtime, dict):
            raise ValueError(f"not an object: {type(runtime).__name__}")
    except (yaml.YAMLError, ValueError) as exc:
        raise SnapshotError(f"invalid runtime snapshot: unable to unmarshal the snapshot: {exc}") from None
    ref = trainjob["spec"]["runtimeRef"]
    group = (runtime.get("apiVersion") or "").split("/")[0] if "/" in (runtime.get("apiVersion") or "") else ""
    kind, name = runtime.get("kind", ""), (runtime.get("metadata") or {}).get("name", "")
    if ((ref.get("kind") is not None and kind != ref["kind"]) or (ref.get("apiGroup") is not None and group != ref["apiGroup"])
            or name != ref["name"]):
        want = [ref["name"], ref.get("apiGroup") or "<any>", ref.get("kind") or "<any>"]
        raise SnapshotError(
            "invalid runtime snapshot: the snapshot refers to the wrong runtime: expecting a runtime with name, "
            'api group and kind of "%s", "%s", "%s" but found runtime with name, api group and kind of "%s", "%s", "%s"'
            % (*want, name, group, kind))
    return runtime
