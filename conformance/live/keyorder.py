"""Put a live object's keys in the order the rendered object has them.

Goldens are YAML text and keep each object's key order; kube-apiserver serializes Go struct
fields in its own order (and map keys sorted), render writes them in the order its code builds
them. Key order means nothing in JSON, so the live backend re-keys each object after the render
of the same case - only the order: no key is added, dropped or changed, and list order is kept -
so that the golden diff shows nothing but real differences. Keys render does not have come last,
in the apiserver's order.

List order is kept, except in list-maps an operator builds by iterating a Go map, whose order is
random from one reconcile to the next (:data:`UNORDERED_LISTS`, e.g. JobSet's
``status.replicatedJobsStatus``, keyed by ``name``): there the elements follow render's order by
key, elements render does not have last in the live order. Nothing is added or dropped.

The same goes for the env a Volcano Job's plugins append to each container of its pods: the job
controller runs the plugins over ``spec.plugins``, a Go map (``pluginOnPodCreate``,
``pkg/controllers/job/job_controller_plugins.go`` L32 in v1.10.0), so whether ``svc``'s
``VC_<TASK>_HOSTS``/``_NUM``, ``pytorch``'s MASTER_ADDR/MASTER_PORT/WORLD_SIZE/RANK or ``env``'s
VK_TASK_INDEX/VC_TASK_INDEX come first differs from pod to pod. Each plugin's entries keep their
order; the runs of them follow render's order of runs (:func:`volcano_env_like`).

One more, which drops entries: a Volcano Job's ``status.conditions`` in v1.10.0 get a condition
appended on every status write (``job_controller_actions.go`` L310-311, L487-488, L831-832), so
how many consecutive entries share a phase depends on how the pod events were batched; later
releases keep one per phase. Consecutive entries of one phase are collapsed to the last of them
(:func:`collapse_volcano_conditions`) - a no-op where a release never writes such runs.
"""

from __future__ import annotations

import re

from reconciler import meta


#: (apiVersion group, kind) -> paths of list-maps keyed by ``name`` that have no order.
UNORDERED_LISTS = {
    # kubernetes-sigs/jobset calculateReplicatedJobStatuses: ranges over a Go map of replicatedJob name -> counts.
    ("jobset.x-k8s.io", "JobSet"): [("status", "replicatedJobsStatus")],
}


def reorder(value, template):
    if isinstance(value, dict) and isinstance(template, dict):
        ordered = {k: reorder(value[k], template[k]) for k in template if k in value}
        ordered.update({k: v for k, v in value.items() if k not in template})
        return ordered
    if isinstance(value, list) and isinstance(template, list):
        return [reorder(item, _partner(item, i, template)) for i, item in enumerate(value)]
    return value


def _partner(item, index: int, template: list):
    """The template element an element corresponds to: same ``name`` if it has one, else same position."""
    if isinstance(item, dict) and "name" in item:
        found = meta.find_named([t for t in template if isinstance(t, dict)], item["name"])
        if found is not None:
            return found
    return template[index] if index < len(template) else None


def identity(obj: dict) -> tuple:
    """An object's kind, namespace and generateName (its name when it has none): the same for the
    live and the rendered copy of an object whose name ends in a random suffix."""
    md = obj.get("metadata") or {}
    return (obj.get("apiVersion"), obj.get("kind"), md.get("namespace", ""), md.get("generateName") or md.get("name"))


class Partners:
    """Render's object for a live one: the one of the same name, else (a generated name) the one of
    the same generateName. A StatefulSet's pods have both a fixed name and ``generateName: <set>-``
    (kube-controller-manager's ``GetPodFromTemplate``), so by generateName alone they would collide."""

    def __init__(self, rendered: list[dict]):
        self.by_name = {_named(o): o for o in rendered}
        self.by_identity = {identity(o): o for o in rendered}

    def get(self, obj: dict) -> dict | None:
        found = self.by_name.get(_named(obj))
        return found if found is not None else self.by_identity.get(identity(obj))


def _named(obj: dict) -> tuple:
    md = obj.get("metadata") or {}
    return (obj.get("apiVersion"), obj.get("kind"), md.get("namespace", ""), md.get("name"))


def reorder_like(objects: list[dict], rendered: list[dict]) -> list[dict]:
    templates = Partners(rendered)
    out = []
    for obj in objects:
        obj = collapse_volcano_conditions(obj)
        template = templates.get(obj)
        if template is not None:
            obj = reorder(volcano_env_like(_unordered_like(obj, template), template), template)
        out.append(obj)
    return out


VOLCANO_GROUP = "batch.volcano.sh"
VOLCANO_JOB_LABEL = "volcano.sh/job-name"
#: The env names each Volcano plugin appends (svc's are VC_<TASK>_HOSTS / VC_<TASK>_NUM).
_PYTORCH_ENV = {"MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK"}
_ENV_PLUGIN_ENV = {"VK_TASK_INDEX", "VC_TASK_INDEX"}
_SVC_ENV = re.compile(r"^VC_.+_(HOSTS|NUM)$")


def _plugin_of(entry) -> str:
    name = entry.get("name", "") if isinstance(entry, dict) else ""
    if name in _PYTORCH_ENV:
        return "pytorch"
    if name in _ENV_PLUGIN_ENV:
        return "env"
    return "svc" if _SVC_ENV.match(name) else ""


def _runs(env: list) -> list[tuple[str, list]]:
    """``env`` cut into maximal runs of entries of one plugin ("" for the template's own)."""
    runs: list[tuple[str, list]] = []
    for entry in env:
        plugin = _plugin_of(entry)
        if runs and runs[-1][0] == plugin:
            runs[-1][1].append(entry)
        else:
            runs.append((plugin, [entry]))
    return runs


def _env_like(env, template_env):
    """``env`` with its plugin runs in the order of ``template_env``'s: the leading run of the
    template's own entries stays first; each plugin's run keeps its entries' order."""
    if not isinstance(env, list) or not isinstance(template_env, list):
        return env
    live, wanted = _runs(env), _runs(template_env)
    head = [live.pop(0)] if live and live[0][0] == "" else []
    ordered = []
    for plugin, _ in wanted:
        match = next((run for run in live if run[0] == plugin), None)
        if match is not None and plugin:
            live.remove(match)
            ordered.append(match)
    return [entry for _, entries in head + ordered + live for entry in entries]


def volcano_env_like(obj: dict, template: dict) -> dict:
    """A Pod of a Volcano Job with each container's plugin env runs in ``template``'s order (a copy
    along the path; nothing added or dropped)."""
    if obj.get("kind") != "Pod" or VOLCANO_JOB_LABEL not in ((obj.get("metadata") or {}).get("labels") or {}):
        return obj
    spec, template_spec = obj.get("spec") or {}, template.get("spec") or {}
    out_spec = dict(spec)
    for key in ("containers", "initContainers"):
        containers, wanted = spec.get(key), template_spec.get(key)
        if not isinstance(containers, list) or not isinstance(wanted, list):
            continue
        out_spec[key] = [{**c, "env": _env_like(c.get("env"), (_partner(c, i, wanted) or {}).get("env"))}
                         if isinstance(c, dict) and "env" in c else c for i, c in enumerate(containers)]
    return {**obj, "spec": out_spec}


def collapse_volcano_conditions(obj: dict) -> dict:
    """A Volcano Job whose ``status.conditions`` has runs of one phase: each run as its last entry."""
    if obj.get("kind") != "Job" or meta.group_of(obj.get("apiVersion", "")) != VOLCANO_GROUP:
        return obj
    status = obj.get("status")
    conditions = status.get("conditions") if isinstance(status, dict) else None
    if not isinstance(conditions, list):
        return obj
    kept = [c for i, c in enumerate(conditions)
            if i + 1 == len(conditions) or not isinstance(c, dict) or not isinstance(conditions[i + 1], dict)
            or conditions[i + 1].get("status") != c.get("status")]
    return obj if len(kept) == len(conditions) else {**obj, "status": {**status, "conditions": kept}}


def _unordered_like(obj: dict, template: dict) -> dict:
    """``obj`` with each of its :data:`UNORDERED_LISTS` in ``template``'s order by name (a shallow copy
    along the path; the elements themselves are the same)."""
    paths = UNORDERED_LISTS.get((meta.group_of(obj.get("apiVersion", "")), obj.get("kind")), [])
    for path in paths:
        obj = _with_list_sorted(obj, template, path)
    return obj


def _with_list_sorted(node, template, path):
    if not isinstance(node, dict) or not isinstance(template, dict) or path[0] not in node:
        return node
    if len(path) > 1:
        return {**node, path[0]: _with_list_sorted(node[path[0]], template.get(path[0]), path[1:])}
    items, wanted = node[path[0]], template.get(path[0])
    if not isinstance(items, list) or not isinstance(wanted, list):
        return node
    rank = {w.get("name"): i for i, w in enumerate(wanted) if isinstance(w, dict) and "name" in w}
    late = len(rank)
    ordered = sorted(enumerate(items), key=lambda p: (rank.get(p[1].get("name"), late) if isinstance(p[1], dict)
                                                       else late, p[0]))
    return {**node, path[0]: [item for _, item in ordered]}
