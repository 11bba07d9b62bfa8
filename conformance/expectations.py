"""Check a case's explicit expectation against a backend's outcome.

Every check returns human-readable failures; an empty list means the case passed.
"""

from __future__ import annotations

from typing import Callable

from . import matcher
from .outcome import Outcome, RejectionRecord


def check(expect: dict, outcome: Outcome) -> list[str]:
    failures = list(outcome.input_errors) + list(outcome.never_violations)
    failures += _check_rejections(expect.get("rejected") or [], outcome.rejections)
    for want in expect.get("objects") or []:
        failures += _check_present(want, outcome.objects)
    for want in expect.get("absent") or []:
        failures += _check_absent(want, outcome.objects)
    for want in expect.get("counts") or []:
        failures += _check_count(want, outcome.objects)
    failures += _check_reconcile_errors(expect.get("reconcileErrors"), outcome.reconcile_errors)
    for want in expect.get("events") or []:
        failures += _check_event(want, outcome.events)
    return failures


def _check_reconcile_errors(wanted: list[str] | None, reported: list[str]) -> list[str]:
    """Each wanted error verbatim among those reported; ``[]`` asks that none was reported."""
    if wanted is None:
        return []
    shown = "; ".join(repr(e) for e in reported) or "none"
    if not wanted:
        return [f"expected no reconcile error; reported: {shown}"] if reported else []
    return [f"expected the reconcile error {want!r}; reported: {shown}" for want in wanted if want not in reported]


# ------------------------------------------------------------------ never (scenario steps)

def never_seen(never: list[dict], objects_of: Callable[[str, str], list[dict]]) -> list[str]:
    """The ``never`` items that match right now; ``objects_of(apiVersion, kind)`` lists the objects.

    An object pattern matches like an ``absent`` entry; ``coexist`` matches when every one of its
    patterns matches some object at the same moment.
    """
    seen = []
    for item in never:
        patterns = item.get("coexist") or [item]
        found = [[o for o in candidates(p, objects_of(p["apiVersion"], p["kind"])) if not matcher.match(p, o)]
                 for p in patterns]
        if all(found):
            names = "; ".join(f"{_label(p)}: {', '.join(o['metadata'].get('name', '') for o in objs)}"
                              for p, objs in zip(patterns, found))
            what = "together" if "coexist" in item else "appeared"
            seen.append(f"never {what}: {names}")
    return seen


# ------------------------------------------------------------------ rejections

def _check_rejections(wanted: list[dict], actual: list[RejectionRecord]) -> list[str]:
    failures = []
    unmatched = list(actual)
    for want in wanted:
        candidates = [r for r in unmatched if r.kind == want["kind"] and want.get("name") in (None, r.name)]
        if not candidates:
            failures.append(f"expected {want['kind']}{' ' + want['name'] if want.get('name') else ''} to be rejected "
                            f"with {want['code']}, but it was admitted")
            continue
        got = candidates[0]
        unmatched.remove(got)
        if got.code != want["code"]:
            failures.append(f"{got.kind} {got.name}: expected HTTP {want['code']}, got {got.code} {got.reason}: {got.message}")
        if "message" in want and got.message != want["message"]:
            failures.append(f"{got.kind} {got.name}: message differs\n  expected: {want['message']}\n  actual:   {got.message}")
        for error in want.get("errors") or []:
            if not any(_error_matches(error, e) for e in got.errors):
                failures.append(f"{got.kind} {got.name}: no error {_describe_error(error)}\n  actual errors: "
                                + ("; ".join(_describe_error(e) for e in got.errors) or got.message))
        if want.get("exactErrors") and len(got.errors) != len(want.get("errors") or []):
            failures.append(f"{got.kind} {got.name}: expected exactly {len(want.get('errors') or [])} error(s), got "
                            f"{len(got.errors)}: {got.message}")
    for extra in unmatched:
        failures.append(f"unexpected rejection: {extra.describe()}")
    return failures


def _error_matches(want: dict, got: dict) -> bool:
    if want["field"] != got.get("field") or want["detail"] != got.get("detail"):
        return False
    if "type" in want and want["type"] != got.get("type"):
        return False
    return "value" not in want or want["value"] == got.get("value")


def _describe_error(error: dict) -> str:
    parts = [f"field={error.get('field')!r}"]
    if error.get("type"):
        parts.append(f"type={error['type']!r}")
    if "value" in error:
        parts.append(f"value={error['value']!r}")
    parts.append(f"detail={error.get('detail')!r}")
    return "{" + ", ".join(parts) + "}"


# ------------------------------------------------------------------ objects

def candidates(want: dict, objects: list[dict]) -> list[dict]:
    md = want.get("metadata") or {}
    found = [o for o in objects if o.get("apiVersion") == want["apiVersion"] and o.get("kind") == want["kind"]]
    for key in ("name", "generateName", "namespace"):
        if key in md:
            found = [o for o in found if o["metadata"].get(key) == md[key]]
    labels = md.get("labels")
    if isinstance(labels, dict) and all(isinstance(v, str) for v in labels.values()):
        # The matcher would reject these too; filtering first keeps large scenarios fast.
        found = [o for o in found if all((o["metadata"].get("labels") or {}).get(k) == v for k, v in labels.items())]
    return found


def _label(want: dict) -> str:
    md = want.get("metadata") or {}
    name = md.get("name") or md.get("generateName") or (f"labels {md['labels']}" if md.get("labels") else "(any)")
    return f"{want['kind']} {name}"


def _check_present(want: dict, objects: list[dict]) -> list[str]:
    found = candidates(want, objects)
    if not found:
        present = sorted(o["metadata"].get("name", "") for o in objects if o.get("kind") == want["kind"])
        return [f"{_label(want)}: not found (existing {want['kind']}s: {present or 'none'})"]
    results = [(matcher.match(want, c), c) for c in found]
    if any(not problems for problems, _ in results):
        return []
    problems, closest = min(results, key=lambda r: len(r[0]))
    which = "" if len(found) == 1 else f" (closest of {len(found)} candidates: {closest['metadata'].get('name')})"
    return [f"{_label(want)} does not match{which}:\n" + matcher.explain(want, closest, problems)]


def _check_absent(want: dict, objects: list[dict]) -> list[str]:
    found = [c for c in candidates(want, objects) if not matcher.match(want, c)]
    if found:
        return [f"{_label(want)} must not exist, found: {', '.join(o['metadata'].get('name', '') for o in found)}"]
    return []


def _check_count(want: dict, objects: list[dict]) -> list[str]:
    labels = want.get("labels") or {}
    found = [o for o in objects if o.get("apiVersion") == want["apiVersion"] and o.get("kind") == want["kind"]
             and all((o["metadata"].get("labels") or {}).get(k) == v for k, v in labels.items())]
    if len(found) != want["count"]:
        names = sorted(o["metadata"].get("name", "") for o in found)
        return [f"expected {want['count']} {want['kind']}(s){' with labels ' + str(labels) if labels else ''}, "
                f"found {len(found)}: {names}"]
    return []


# ------------------------------------------------------------------ events

_EVENT_FIELDS = ("type", "reason", "kind", "name", "message")


def _check_event(want: dict, events: list[dict]) -> list[str]:
    """An Event with every field ``want`` gives: at least one, or exactly ``count`` of them."""
    found = [e for e in events if all(e.get(k) == want[k] for k in _EVENT_FIELDS if k in want)]
    described = ", ".join(f"{k}={want[k]!r}" for k in _EVENT_FIELDS if k in want)
    if "count" in want and len(found) != want["count"]:
        return [f"expected {want['count']} Event(s) with {described}, found {len(found)}"
                + "".join(f"\n  - {_event_line(e)}" for e in found)]
    if "count" not in want and not found:
        same_reason = [e for e in events if e.get("reason") == want["reason"]]
        shown = same_reason or events
        return [f"no Event with {described}; " + ("recorded:" if shown else "none recorded")
                + "".join(f"\n  - {_event_line(e)}" for e in shown[:10])]
    return []


def _event_line(event: dict) -> str:
    return f"{event.get('type')} {event.get('reason')} {event.get('kind')} {event.get('name')}: {event.get('message')}"
