"""Case isolation on a shared cluster: a fresh namespace per case namespace, translated back after.

Every namespace a case uses (its inputs' ``metadata.namespace``, ``default`` when unset, and the
names of Namespace inputs) gets a live namespace of its own, ``tc-<run>-<n>-<name>``; the inputs
are rewritten into it and whatever comes back is rewritten out of it again, so the outcome names
the case's namespaces. Cluster-scoped inputs (ClusterTrainingRuntimes) keep their names - names
are part of what is tested (length rules, messages) - so cases run one at a time and delete them
before the next starts (:mod:`conformance.live.session`).

One value depends on the namespace in a way a rename cannot see: JobSet's
``jobset.sigs.k8s.io/job-key`` is ``sha1("<namespace>/<job name>")``. A hash equal to that of a
live namespace and a Job name of the outcome is replaced by the same hash of the case namespace.
"""

from __future__ import annotations

import copy
import hashlib
import itertools

_counter = itertools.count(1)
MAX_NAME = 63


class NamespaceMap:
    def __init__(self, run_token: str):
        self.case_no = next(_counter)
        self.prefix = f"tc-{run_token}-{self.case_no}-"
        self.forward: dict[str, str] = {}

    def live(self, namespace: str) -> str:
        if namespace not in self.forward:
            self.forward[namespace] = (self.prefix + namespace)[:MAX_NAME].rstrip("-")
        return self.forward[namespace]

    @property
    def live_namespaces(self) -> list[str]:
        return list(self.forward.values())

    def rewrite_input(self, obj: dict, namespaced: bool) -> dict:
        obj = copy.deepcopy(obj)
        md = obj.setdefault("metadata", {})
        if obj.get("kind") == "Namespace" and obj.get("apiVersion") == "v1":
            md["name"] = self.live(md.get("name", ""))
        elif namespaced:
            md["namespace"] = self.live(md.get("namespace") or "default")
        return obj

    # ------------------------------------------------------------------ back
    def back(self, value, job_names: list[tuple[str, str]] = ()):
        """``value`` with every live namespace name replaced by the case's (and job-keys re-hashed).

        ``job_names`` are (live namespace, Job name) pairs of the outcome.
        """
        hashes = {}
        backward = {v: k for k, v in self.forward.items()}
        for live_ns, name in job_names:
            if live_ns in backward:
                hashes[_job_key(live_ns, name)] = _job_key(backward[live_ns], name)
        # Longest first, so that "tc-x-1-team" never replaces part of "tc-x-1-team-b".
        renames = sorted(backward.items(), key=lambda kv: len(kv[0]), reverse=True)
        return _walk(value, renames, hashes)


def _job_key(namespace: str, name: str) -> str:
    return hashlib.sha1(f"{namespace}/{name}".encode()).hexdigest()


def _walk(value, renames, hashes):
    if isinstance(value, dict):
        return {_walk(k, renames, hashes): _walk(v, renames, hashes) for k, v in value.items()}
    if isinstance(value, list):
        return [_walk(v, renames, hashes) for v in value]
    if isinstance(value, str):
        if value in hashes:
            return hashes[value]
        for live, original in renames:
            if live in value:
                value = value.replace(live, original)
        return value
    return value
