"""Live backend: the case table against a real API server (``--backend live``).

Same interface as :mod:`.render` - ``run(manifests, profile) -> Outcome`` - so the same
expectations and the same goldens apply. The cluster is ``--kubeconfig`` / ``TC_LIVE_KUBECONFIG``
or, without one, a local control plane started for the run; the operator is the reference
reconciler in its own process unless ``TC_LIVE_OPERATOR=external``. Cases run one after another,
each in fresh namespaces (see :mod:`conformance.live.case`).

Scenario rows (steps, faults, ``never`` windows) are replayed on the cluster
(:mod:`conformance.live.scenario`, :mod:`conformance.live.faults`). What a live run cannot do is
skipped with the reason, never passed: a case whose Pods wait for a scheduler the cluster does
not run cannot finish.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from ..live import session
from ..live.case import CaseRun
from ..live.scenario import ScenarioRun
from ..outcome import Outcome

#: Per-case step timings of this process's run, for benchmarks: [(label, {step: seconds})].
TIMINGS: list[tuple[str, dict[str, float]]] = []


def run(manifests: list[dict], profile: str, label: str = "") -> Outcome:
    case = CaseRun(session.get(), profile, manifests, label=label)
    return _finished(case, case.run(), label)


def _finished(runner, result, label: str):
    """Record a case's or scenario's step timings; a case the provider cannot run is a skip."""
    TIMINGS.append((label, dict(runner.timings)))
    if runner.skip_reason:
        pytest.skip(f"live backend: {runner.skip_reason}")
    return result


def for_test(label: str):
    """The backend as the pytest plugin hands it to a test: runs carry the test id as their label
    (namespace label, timings)."""
    return SimpleNamespace(run=lambda manifests, profile: run(manifests, profile, label=label),
                           run_steps=lambda steps, profile: run_steps(steps, profile, label=label),
                           kubernetes_version=kubernetes_version)


def run_steps(steps: list, profile: str, label: str = "") -> list[Outcome]:
    scenario = ScenarioRun(session.get(), profile, steps, label=label)
    return _finished(scenario, scenario.run_steps(), label)


def kubernetes_version() -> str:
    return session.get().kubernetes_version()
