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


#: JSON kinds of a YAML document that is not a mapping (a timestamp goes to JSON as a string).
_JSON_KIND = {list: "array", bool: "bool", int: "number", float: "number"}


def _runtime_type(ref: dict) -> str:
    """The Go type the snapshot is decoded into: the runtime registered for the runtimeRef's kind."""
    return "ClusterTrainingRuntime" if ref.get("kind") == "ClusterTrainingRuntime" else "TrainingRuntime"


def _syntax_error(exc: yaml.MarkedYAMLError) -> str:
    """sigs.k8s.io/yaml's error for a YAML syntax error: "error converting YAML to JSON: " + go-yaml v2's
    (decode.go parser.fail): "yaml: line N: <problem>". go-yaml is a port of libyaml, whose problem texts
    and marks PyYAML's C loader hands over as they are; N is the problem mark's line, counted from 0
    (a scanner error adds 1), and no "line N: " is written when that is 0. (go-yaml falls back to the
    context mark then, but a context never comes after its problem, so it is 0 too.)"""
    line = exc.problem_mark.line + (1 if isinstance(exc, yaml.scanner.ScannerError) else 0)
    where = f"line {line}: " if exc.problem_mark.line else ""
    return f"error converting YAML to JSON: yaml: {where}{exc.problem}"


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
    ref = trainjob["spec"]["runtimeRef"]
    try:
        runtime = yaml.load(text, Loader=yaml.CSafeLoader)  # libyaml's parser, as go-yaml's: see _syntax_error
    except (yaml.scanner.ScannerError, yaml.parser.ParserError) as exc:
        raise SnapshotError(f"invalid runtime snapshot: unable to unmarshal the snapshot: {_syntax_error(exc)}") from None
    except yaml.YAMLError as exc:  # (other errors - an undefined alias, a tag - keep PyYAML's wording: not modelled)
        raise SnapshotError(f"invalid runtime snapshot: unable to unmarshal the snapshot: {exc}") from None
    if runtime is None:
        runtime = {}  # an empty or null document decodes to the zero runtime, which the checks below refuse
    if not isinstance(runtime, dict):
        # encoding/json's UnmarshalTypeError for the top-level value (sigs.k8s.io/yaml wraps it twice).
        raise SnapshotError("invalid runtime snapshot: unable to unmarshal the snapshot: error unmarshaling JSON: while "
                            f"decoding JSON: json: cannot unmarshal {_JSON_KIND.get(type(runtime), 'string')} into Go "
                            f"value of type v1alpha1.{_runtime_type(ref)}")
    # schema.ParseGroupVersion: "<group>/<version>", or a version alone; anything else leaves the group empty.
    parts = (runtime.get("apiVersion") or "").split("/")
    group = parts[0] if len(parts) == 2 else ""
    kind, name = runtime.get("kind", ""), (runtime.get("metadata") or {}).get("name", "")
    if ((ref.get("kind") is not None and kind != ref["kind"]) or (ref.get("apiGroup") is not None and group != ref["apiGroup"])
            or name != ref["name"]):
        want = [ref["name"], ref.get("apiGroup") or "<any>", ref.get("kind") or "<any>"]
        raise SnapshotError(
            "invalid runtime snapshot: the snapshot refers to the wrong runtime: expecting a runtime with name, "
            'api group and kind of "%s", "%s", "%s" but found runtime with name, api group and kind of "%s", "%s", "%s"'
            % (*want, name, group, kind))
    return runtime
