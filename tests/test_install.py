"""The suite as users install it: a wheel in a fresh virtualenv, run from a directory that is not
a checkout - the table must come with it, an empty selection must fail, and any pytest can run it.

One wheel and one virtualenv for the module (building and installing take ~1 min, most of it pip
resolving the dependencies, which come from pip's cache after the first time)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import venv
from pathlib import Path

import pytest

from conftest import ROOT

from conformance.table import TableError, enclosing_checkout, locate


# ---------------------------------------------------------------- where the table comes from (no install)

def test_inside_a_checkout_its_table_is_used(tmp_path):
    deep = ROOT / "cases" / "volcano"
    found = locate(cwd=deep)
    assert (found.cases, found.snapshots, found.origin) == (ROOT / "cases", ROOT / "snapshots", "checkout")


def test_given_cases_dir_brings_its_sibling_snapshots(tmp_path):
    (tmp_path / "mine" / "cases").mkdir(parents=True)
    found = locate("mine/cases", cwd=tmp_path)
    assert (found.cases, found.snapshots, found.origin) == (
        tmp_path / "mine" / "cases", tmp_path / "mine" / "snapshots", "given")
    assert locate("mine/cases", "elsewhere", cwd=tmp_path).snapshots == tmp_path / "elsewhere"


def test_a_missing_cases_dir_is_an_error_not_an_empty_table(tmp_path):
    with pytest.raises(TableError, match="cases directory .*/nope does not exist"):
        locate("nope", cwd=tmp_path)


def test_a_folder_with_cases_is_not_a_checkout_without_our_pyproject(tmp_path):
    (tmp_path / "cases").mkdir()
    (tmp_path / "snapshots").mkdir()
    assert enclosing_checkout(tmp_path) is None
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "someone-else"\n')
    assert enclosing_checkout(tmp_path) is None
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "training-conformance"\n')
    assert enclosing_checkout(tmp_path / "cases") == tmp_path


# ---------------------------------------------------------------- the wheel in a fresh virtualenv

@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """A fresh virtualenv with the project installed from its wheel; returns (bin dir, empty dir)."""
    work = tmp_path_factory.mktemp("install")
    # Built from a copy: setuptools builds in the source tree, which must stay as it is.
    source = work / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".git", ".venv", "build", "*.egg-info", "__pycache__"))
    wheels = work / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(wheels), str(source)],
                   check=True, capture_output=True, text=True)
    [wheel] = wheels.glob("training_conformance-*.whl")
    env_dir = work / "venv"
    venv.create(env_dir, with_pip=True)
    bin_dir = env_dir / "bin"
    subprocess.run([bin_dir / "python", "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(wheel)],
                   check=True, capture_output=True, text=True)
    empty = work / "empty"
    empty.mkdir()
    return bin_dir, empty


def _run(installed, *argv, cwd=None):
    bin_dir, empty = installed
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{bin_dir}:{env.get('PATH', '')}"
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, cwd=cwd or empty, env=env)


def test_the_wheel_carries_the_table(installed):
    bin_dir, _ = installed
    found = _run(installed, bin_dir / "python", "-c",
                 "from conformance import table; d = table.locate(); print(d.origin, d.cases, d.snapshots)")
    origin, cases, snapshots = found.stdout.split()
    assert origin == "installed" and "site-packages" in cases, found.stderr
    for folder in ("cases", "snapshots"):
        ours = sorted(p.relative_to(ROOT / folder) for p in (ROOT / folder).rglob("*.yaml"))
        theirs = sorted(p.relative_to(Path(cases if folder == "cases" else snapshots)) for p in
                        Path(cases if folder == "cases" else snapshots).rglob("*.yaml"))
        assert theirs == ours


def test_run_from_an_empty_directory_runs_the_installed_table(installed):
    bin_dir, _ = installed
    run = _run(installed, bin_dir / "conformance", "run", "--profile", "volcano-v1.12")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr
    summary = [line for line in run.stdout.splitlines() if line.startswith("conformance: ")][-1]
    passed = int(summary.split()[1])
    expected = sum(1 for line in _run(installed, bin_dir / "conformance", "list", "--profile", "volcano-v1.12").stdout.splitlines()
                   if "volcano-v1.12" in line)
    assert passed == expected > 50 and summary.endswith("0 failed, 0 skipped")
    assert "; installed)" in run.stdout
    assert "warning" not in run.stdout + run.stderr  # e.g. PytestAssertRewriteWarning (syrupy, our packages)


def test_an_empty_selection_fails_with_a_reason(installed, tmp_path):
    bin_dir, _ = installed
    (tmp_path / "cases").mkdir()
    run = _run(installed, bin_dir / "conformance", "run", "--cases-dir", tmp_path / "cases")
    assert run.returncode == 1 and f"conformance: no case under {tmp_path / 'cases'}" in run.stdout
    nothing = _run(installed, bin_dir / "conformance", "run", "-k", "no-such-row-anywhere")
    assert nothing.returncode != 0
    missing = _run(installed, bin_dir / "conformance", "run", "--cases-dir", tmp_path / "nope")
    assert missing.returncode == 2 and "does not exist" in missing.stderr


def test_list_and_render_work_from_an_empty_directory(installed):
    bin_dir, _ = installed
    listed = _run(installed, bin_dir / "conformance", "list", "--profile", "jobset-v0.12")
    assert listed.returncode == 0 and "group-restart/" in listed.stdout
    job = textwrap.dedent("""\
        apiVersion: batch.volcano.sh/v1alpha1
        kind: Job
        metadata: {name: vj}
        spec:
          plugins: {pytorch: ["--master=master", "--worker=worker", "--port=23456"]}
          tasks:
          - {name: master, replicas: 1, template: {spec: {containers: [{name: c, image: i}]}}}
          - {name: worker, replicas: 2, template: {spec: {containers: [{name: c, image: i}]}}}
        """)
    _, empty = installed
    (empty / "vj.yaml").write_text(job)
    rendered = _run(installed, bin_dir / "conformance", "render", "-f", "vj.yaml")
    assert rendered.returncode == 0 and "profile volcano-v1.12" in rendered.stderr
    assert rendered.stdout.count("kind: Pod") == 3


def test_any_pytest_runs_the_table_through_the_entry_point(installed, tmp_path):
    """An operator repository runs the installed table, or its own table in the same format,
    under its own pytest; an unrelated pytest session is left alone."""
    bin_dir, empty = installed
    run = _run(installed, bin_dir / "python", "-m", "pytest", "--pyargs", "conformance.suite", "-q", "-p", "no:cacheprovider",
               "--conformance-profile", "volcano-v1.11")
    assert run.returncode == 0 and "conformance: " in run.stdout and " 0 failed" in run.stdout, run.stdout[-2000:]
    mine = tmp_path / "mine"
    (mine / "cases" / "v" / "_bases").mkdir(parents=True)
    (mine / "cases" / "v" / "_bases" / "job.yaml").write_text(
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: vj}\n"
        "spec: {tasks: [{name: t, replicas: 2, template: {spec: {containers: [{name: c, image: i}]}}}]}\n")
    (mine / "cases" / "v" / "mine.yaml").write_text(textwrap.dedent("""\
        table: mine
        suite: volcano
        bases: {job: _bases/job.yaml}
        defaults: {versions: ">=1.12", inputs: [{base: job}]}
        rows:
          - id: two-pods
            title: a task of 2 replicas gives 2 pods
            expect: {counts: [{apiVersion: v1, kind: Pod, count: 2}]}
        """))
    own = ["--pyargs", "conformance.suite", "-q", "-p", "no:cacheprovider", "--conformance-cases-dir", mine / "cases"]
    written = _run(installed, bin_dir / "python", "-m", "pytest", *own, "--snapshot-update", cwd=tmp_path)
    assert written.returncode == 0 and (mine / "snapshots" / "volcano-v1.12" / "mine" / "two-pods.yaml").is_file(), written.stdout
    assert _run(installed, bin_dir / "python", "-m", "pytest", *own, cwd=tmp_path).returncode == 0
    (tmp_path / "test_other.py").write_text("def test_other():\n    assert True\n")
    other = _run(installed, bin_dir / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_other.py", cwd=tmp_path)
    assert other.returncode == 0 and "conformance" not in other.stdout
