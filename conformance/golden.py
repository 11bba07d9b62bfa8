"""YAML goldens: one file per case and profile, ``snapshots/<profile>/<table>/<row>.yaml``.

A small syrupy single-file extension (:mod:`conformance.suite.goldens`) stores the text; the text itself is the normalized outcome
(rejections, then every object) dumped as YAML with Kubernetes' own key order kept. A scenario's
golden is one file too, with a section per step: that step's rejections, new reconcile errors and
every object *with* status (or, for ``golden: summary`` rows, the JobSets plus counts). An object
exactly as it was at the end of the previous step is written as one line,
``{kind, name, unchanged: true}``, so each section shows in full what the step changed.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from .normalize import normalize
from .yamlio import dump
from .outcome import Outcome


def golden_text(case_id: str, title: str, profile: str, outcome: Outcome) -> str:
    return dump(golden_doc(case_id, title, profile, outcome))


def golden_doc(case_id: str, title: str, profile: str, outcome: Outcome) -> dict:
    """What :func:`golden_text` dumps: plain data (str, int, float, bool, None, lists, dicts in output order)."""
    doc = {"case": case_id, "profile": profile, "title": title}
    if outcome.rejections:
        doc["rejections"] = [r.to_golden() for r in outcome.rejections]
    if outcome.reconcile_errors:
        doc["reconcileErrors"] = outcome.reconcile_errors
    doc["objects"] = normalize(outcome.objects)
    return doc


def golden_steps_text(case_id: str, title: str, profile: str, steps: list, outcomes: list[Outcome],
                      summary: bool = False) -> str:
    return dump(golden_steps_doc(case_id, title, profile, steps, outcomes, summary))


def golden_steps_doc(case_id: str, title: str, profile: str, steps: list, outcomes: list[Outcome],
                     summary: bool = False) -> dict:
    """What :func:`golden_steps_text` dumps."""
    doc = {"case": case_id, "profile": profile, "title": title, "steps": []}
    previous: Counter = Counter()
    for step, outcome in zip(steps, outcomes):
        section = {"step": f"{step.number}: {step.name}"}
        if outcome.rejections:
            section["rejections"] = [r.to_golden() for r in outcome.rejections]
        if outcome.reconcile_errors:
            section["reconcileErrors"] = outcome.reconcile_errors
        if summary:
            section["counts"] = _counts(outcome.objects)
            objects = normalize([o for o in outcome.objects if o.get("kind") not in _SUMMARIZED], status=True)
        else:
            objects = normalize(outcome.objects, status=True)
        section["objects"], previous = _abbreviated(objects, previous)
        doc["steps"].append(section)
    return doc


def _abbreviated(objects: list[dict], previous: Counter) -> tuple[list[dict], Counter]:
    """Objects identical to one of the previous step's become ``{kind, name, unchanged: true}``."""
    current = Counter(json.dumps(o, sort_keys=True) for o in objects)
    left = previous.copy()
    out = []
    for obj in objects:
        text = json.dumps(obj, sort_keys=True)
        if left[text] > 0:
            left[text] -= 1
            out.append({"kind": obj.get("kind"), "name": obj.get("metadata", {}).get("name"), "unchanged": True})
        else:
            out.append(obj)
    return out, current


#: Kinds a summary golden counts instead of listing.
_SUMMARIZED = ("Job", "Pod")
_ATTEMPT = "jobset.sigs.k8s.io/restart-attempt"


def _counts(objects: list[dict]) -> list[dict]:
    """Jobs and Pods by restart attempt and state: ``{kind, restartAttempt, state, count}``."""
    tally: dict[tuple, int] = {}
    for obj in objects:
        if obj.get("kind") not in _SUMMARIZED:
            continue
        status = obj.get("status") or {}
        if obj["kind"] == "Pod":
            state = status.get("phase", "Pending")
        else:
            state = next((c["type"] for c in status.get("conditions", [])
                          if c.get("type") in ("Complete", "Failed") and c.get("status") == "True"), "Active")
        if obj["metadata"].get("deletionTimestamp"):
            state += " (deleting)"  # raw objects: any timestamp means "being deleted"
        key = (obj["kind"], (obj["metadata"].get("labels") or {}).get(_ATTEMPT, ""), state)
        tally[key] = tally.get(key, 0) + 1
    return [{"kind": k, "restartAttempt": a, "state": s, "count": n} for (k, a, s), n in sorted(tally.items())]


def relative_path(profile: str, table: str, row: str) -> Path:
    return Path(profile) / table / f"{row}.yaml"
