"""The zoo runner: a variant that changes nothing must be reported as not caught (the check can
fail), a real variant is caught by the rows that target it, and the real code is restored."""

from __future__ import annotations

import contextlib
from pathlib import Path

from conformance import zoo
from conformance.zoo.cli import add_zoo_command  # noqa: F401 - the CLI module imports cleanly
from conformance.zoo.runner import format_table
from conformance.zoo.variants import Variant
from reconciler.trainer import runtimes
from reconciler.trainer.plugins import mpi, torch

CASES = Path(__file__).resolve().parent.parent / "cases"


def _by_name(name: str) -> Variant:
    return next(v for v in zoo.VARIANTS if v.name == name)


def test_a_harmless_variant_is_not_caught():
    harmless = Variant("no-op", "trainer", bug="changes nothing", seed="-", applied=contextlib.nullcontext)
    results, baseline = zoo.run(CASES, [harmless])
    assert baseline == []
    assert not results[0].caught
    assert "NOT caught: no-op" in format_table(results, baseline)


def test_a_variant_that_only_crashes_is_not_caught():
    # A variant that no longer fits the code it patches (a changed signature) breaks every case of
    # its suite: that proves nothing about the table, so it must not count as caught.
    broken = Variant("unfit", "volcano", bug="crashes", seed="-", applied=_crashing_volcano)
    results, _ = zoo.run(CASES, [broken])
    assert results[0].crashed and not results[0].caught_by
    assert not results[0].caught
    assert "NOT caught: unfit" in format_table(results, [])


@contextlib.contextmanager
def _crashing_volcano():
    from reconciler.volcano import controller
    real = controller.JobController.reconcile
    controller.JobController.reconcile = lambda self, *a, **k: (_ for _ in ()).throw(TypeError("takes 3 arguments"))
    try:
        yield
    finally:
        controller.JobController.reconcile = real


def test_topology_variant_is_caught_by_the_topology_table():
    results, _ = zoo.run(CASES, [_by_name("mpi-no-topology-check")])
    caught = results[0].caught_by
    assert "trainer-v2.3:mpi-topology/node-only-numnodes-2" in caught
    assert all(":mpi-topology/" in c or ":mpi-render/" in c or ":admission/" in c for c in caught)


def test_variants_restore_the_real_code():
    import reconciler.jobset as jobset_pkg
    from reconciler.jobset import failure_policy
    from reconciler.mpijob import controller as mpijob_controller, resources as mpijob_resources
    from reconciler.pytorchjob import controller as pytorchjob_controller
    from reconciler.pytorchjob import env as pytorchjob_env
    from reconciler.lws import controller as lws_controller
    from reconciler.volcano import plugins as volcano_plugins

    def snapshot():
        return (list(runtimes.PLUGINS), torch.resolve_nproc, torch.cpu_count, jobset_pkg.JobSetController,
                failure_policy.execute, dict(volcano_plugins.BUILDERS), mpijob_resources.hostfile,
                mpijob_resources.launcher_env, mpijob_controller.MPIJobController._running_workers,
                pytorchjob_env.nproc_per_node_int, pytorchjob_env.node_rank, pytorchjob_controller.is_retryable_exit_code,
                lws_controller.handle_restart_policy, lws_controller.reconcile_pod)

    before = snapshot()
    for variant in zoo.VARIANTS:
        with variant.applied():
            assert snapshot() != before, f"{variant.name} swaps nothing"
    assert snapshot() == before and mpi.PLUGIN in runtimes.PLUGINS


def test_every_variant_names_its_seed_and_bug():
    names = [v.name for v in zoo.VARIANTS]
    assert len(names) == len(set(names))
    for v in zoo.VARIANTS:
        assert v.bug and v.seed and v.suite
