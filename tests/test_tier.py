"""Row selection for a pull request: rows marked ``slow`` (with why) and ``conformance run --tier pr``,
which leaves them out as skips that carry the reason - into the terminal, JUnit and the report."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import BASES, ROOT
from conformance import cases as case_loader

TABLE = """\
table: scratch
suite: trainer
bases: {runtime: _bases/rt.yaml, trainjob: _bases/tj.yaml}
defaults: {versions: ">=2.3", inputs: [{base: runtime}, {base: trainjob}]}
rows:
  - id: three-pods
    title: numNodes 3 on a torch runtime gives three pods
    slow: pretend this takes ten minutes on a real cluster
    patch: {trainjob: [{op: add, path: /spec/trainer/numNodes, value: 3}]}
    expect: {counts: [{apiVersion: v1, kind: Pod, count: 3}]}
  - id: one-pod
    title: numNodes unset gives mlPolicy.numNodes = 1 pod
    expect: {counts: [{apiVersion: v1, kind: Pod, count: 1}]}
"""


def conformance(*args, cwd):
    return subprocess.run([sys.executable, "-m", "conformance.cli", *args], capture_output=True, text=True, cwd=cwd)


@pytest.fixture
def scratch(tmp_path):
    cases = tmp_path / "cases"
    (cases / "_bases").mkdir(parents=True)
    (cases / "_bases" / "rt.yaml").write_text((BASES / "torch-runtime.yaml").read_text())
    (cases / "_bases" / "tj.yaml").write_text((BASES / "torch-trainjob.yaml").read_text())
    (cases / "scratch.yaml").write_text(TABLE)
    assert conformance("run", "--cases-dir", "cases", "--snapshot-update", cwd=tmp_path).returncode == 0
    return tmp_path


def test_slow_is_loaded_and_must_say_why(tmp_path):
    table = tmp_path / "t.yaml"
    (tmp_path / "_bases").mkdir()
    (tmp_path / "_bases" / "rt.yaml").write_text((BASES / "torch-runtime.yaml").read_text())
    (tmp_path / "_bases" / "tj.yaml").write_text((BASES / "torch-trainjob.yaml").read_text())
    table.write_text(TABLE + "  - id: terse\n    title: a slow row without a reason\n    slow: slow\n")
    loaded = {c.id: c for c in case_loader.load_all(tmp_path)}
    assert loaded["three-pods"].slow == "pretend this takes ten minutes on a real cluster"
    assert loaded["one-pod"].slow is None
    assert isinstance(loaded["terse"], case_loader.BrokenCase) and "slow" in loaded["terse"].error


def test_tier_pr_skips_slow_rows_with_their_reason(scratch):
    run = conformance("run", "--cases-dir", "cases", "--tier", "pr", "-rs", "--junitxml", "junit.xml",
                      "--report-dir", "out", cwd=scratch)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "conformance: 1 passed, 0 failed, 1 skipped" in run.stdout
    reason = "--tier pr leaves out slow rows: pretend this takes ten minutes on a real cluster"
    assert reason in run.stdout
    assert reason in (scratch / "junit.xml").read_text()
    assert f"SKIPPED trainer-v2.3:scratch/three-pods - {reason}" in (scratch / "out" / "conformance.log").read_text()
    report = yaml.safe_load((scratch / "out" / "report.yaml").read_text())
    assert report["selection"]["tier"] == "pr"
    [profile] = report["profiles"]
    assert profile["core"]["skippedTests"] == ["scratch/three-pods"]
    assert "--tier pr" in (scratch / "out" / "submission" / "README.md").read_text()


def test_tier_full_is_the_default_and_runs_slow_rows(scratch):
    run = conformance("run", "--cases-dir", "cases", cwd=scratch)
    assert run.returncode == 0 and "conformance: 2 passed, 0 failed, 0 skipped" in run.stdout
    full = conformance("run", "--cases-dir", "cases", "--tier", "full", cwd=scratch)
    assert "conformance: 2 passed, 0 failed, 0 skipped" in full.stdout


def test_tier_pr_cannot_write_goldens(scratch):
    run = conformance("run", "--cases-dir", "cases", "--tier", "pr", "--snapshot-update", cwd=scratch)
    assert run.returncode == 2 and "--snapshot-update writes every golden" in run.stderr


def test_the_table_marks_the_rows_that_take_minutes_on_a_real_cluster():
    slow = {c.full_id for c in case_loader.load_all(ROOT / "cases") if getattr(c, "slow", None)}
    assert slow == {"group-restart/group-1024-pods", "group-restart/default-backoff-limit-6",
                    "render/statefulset-parallel-slow-start-batch-size-capped-at-500"}  # 1,010 pods
