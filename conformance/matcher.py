"""Partial matching of expected objects against actual ones.

* maps: the expected keys must be present and match; other actual keys are ignored;
* lists of named items (``containers``, ``env``, ``volumes`` … see :data:`KEYED_LISTS`): each
  expected item is found by its key, wherever it sits, and must be the only item with that key
  (a duplicate env name is a mismatch); ``{name: X, $absent: true}`` asserts that no item ``X``
  exists; in a map, ``key: {$absent: true}`` asserts the key is not there and ``key: {$present: true}``
  that it is, whatever its value but null (``metadata.deletionTimestamp`` of a pod being deleted) - a
  null is Kubernetes' "unset" (the apiserver drops it from a field whose schema is not nullable);
* every other list: positional, and the lengths must be equal (as in kuttl/Chainsaw);
* scalars: equal, with no type coercion (``"2"`` is not ``2``).

A failure names the field path, the expected and actual values, and comes with a unified YAML
diff of the object (:func:`explain`).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

import yaml

ABSENT = "$absent"
PRESENT = "$present"
#: List field name → key fields, tried in order (the first one the expected item sets is used).
KEYED_LISTS: dict[str, tuple[str, ...]] = {
    "containers": ("name",), "initContainers": ("name",), "env": ("name",), "volumes": ("name",),
    "volumeMounts": ("name", "mountPath"), "ports": ("name", "containerPort"),
    "replicatedJobs": ("name",), "replicatedJobsStatus": ("name",), "jobsStatus": ("name",),
    "tasks": ("name",), "dependsOn": ("name",), "conditions": ("type",),
}


@dataclass(frozen=True)
class Mismatch:
    path: str
    expected: object
    actual: object
    reason: str = ""

    def __str__(self) -> str:
        if self.reason:
            return f"{self.path}: {self.reason}"
        return f"{self.path}: expected {_short(self.expected)}, got {_short(self.actual)}"


_MISSING = object()


def match(expected, actual, path: str = "") -> list[Mismatch]:
    """Every way in which ``actual`` fails to contain ``expected``."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [Mismatch(path or "<root>", expected, _shown(actual), "" if actual is not _MISSING else "missing")]
        problems = []
        for key, want in expected.items():
            sub = f"{path}.{key}" if path else key
            if want == {ABSENT: True}:
                if key in actual:
                    problems.append(Mismatch(sub, None, actual[key], f"must be absent, found {_short(actual[key])}"))
                continue
            if want == {PRESENT: True}:
                if actual.get(key) is None:
                    problems.append(Mismatch(sub, None, None, "missing (expected to be present)" if key not in actual
                                             else "null (expected to be set)"))
                continue
            if key not in actual:
                if isinstance(want, list) and want and all(isinstance(w, dict) and w.get(ABSENT) for w in want):
                    continue  # no list at all: every item asked to be absent is absent
                problems.append(Mismatch(sub, want, None, "missing"))
            elif isinstance(want, list) and key in KEYED_LISTS and isinstance(actual[key], list):
                problems.extend(_match_keyed(want, actual[key], sub, KEYED_LISTS[key]))
            else:
                problems.extend(match(want, actual[key], sub))
        return problems
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return [Mismatch(path, expected, _shown(actual))]
        if len(expected) != len(actual):
            return [Mismatch(path, expected, actual, f"list length {len(actual)}, expected {len(expected)}: "
                             f"expected {_short(expected)}, got {_short(actual)}")]
        problems = []
        for i, (want, have) in enumerate(zip(expected, actual)):
            problems.extend(match(want, have, f"{path}[{i}]"))
        return problems
    if type(expected) is not type(actual) or expected != actual:
        # int vs float of the same value is the only coercion allowed (YAML 1 vs 1.0).
        if isinstance(expected, (int, float)) and isinstance(actual, (int, float)) and not isinstance(expected, bool) \
                and not isinstance(actual, bool) and expected == actual:
            return []
        return [Mismatch(path, expected, _shown(actual))]
    return []


def _match_keyed(expected: list, actual: list, path: str, keys: tuple[str, ...]) -> list[Mismatch]:
    problems = []
    for want in expected:
        if not isinstance(want, dict):
            problems.append(Mismatch(path, want, None, f"items of {path.split('.')[-1]} are matched by "
                                     f"{'/'.join(keys)} and must be maps"))
            continue
        key = next((k for k in keys if k in want), None)
        if key is None:
            problems.append(Mismatch(path, want, None, f"expected item has none of the key fields {list(keys)}"))
            continue
        found = [item for item in actual if isinstance(item, dict) and item.get(key) == want[key]]
        sub = f"{path}[{key}={want[key]}]"
        if want.get(ABSENT):
            if found:
                problems.append(Mismatch(sub, None, found[0], f"must be absent, found {_short(found[0])}"))
            continue
        if not found:
            names = [item.get(key) for item in actual if isinstance(item, dict)]
            problems.append(Mismatch(sub, want, None, f"missing (present: {names})"))
            continue
        if len(found) > 1:
            # Two items with one key: the kubelet (env) or the apiserver (ports, volumes) keeps only one,
            # so an expectation on that key is ambiguous - and usually a bug in the object.
            problems.append(Mismatch(sub, want, found, f"{len(found)} items have {key}={want[key]!r}, "
                                     f"expected one: {_short(found)}"))
            continue
        problems.extend(match(want, found[0], sub))
    return problems


def explain(expected: dict, actual: dict, problems: list[Mismatch]) -> str:
    """Field-level problems plus a unified diff of the expected part against the actual object."""
    lines = [f"  * {p}" for p in problems]
    want = yaml.safe_dump(expected, sort_keys=False).splitlines()
    have = yaml.safe_dump(actual, sort_keys=False).splitlines()
    diff = difflib.unified_diff(want, have, "expected", "actual", lineterm="", n=3)
    return "\n".join(lines + ["", *diff])


def _shown(value):
    return None if value is _MISSING else value


def _short(value) -> str:
    text = yaml.safe_dump(value, default_flow_style=True, width=10**6).strip()
    text = text[:-4] if text.endswith("\n...") else text
    if text.endswith("..."):
        text = text[:-3].strip()
    return text if len(text) <= 160 else text[:157] + "..."
