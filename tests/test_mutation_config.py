"""The mutation pass (make mutation, docs/mutation/) mutates every behaviour module of the reference
reconciler: every .py under a suite folder reconciler/<suite>/ and the stand-ins for Kubernetes'
own controllers. A new suite folder, or a new file in a folder the globs do not cover, fails here
until ``[tool.mutmut] only_mutate`` in pyproject.toml names it. This does not run the pass."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"_mutation_{name}", ROOT / "hack" / "mutation" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


config = _load("config")


def test_every_behaviour_module_is_mutated():
    assert config.missing_modules() == []


def test_every_suite_installed_by_new_cluster_has_a_folder_the_pass_mutates():
    """What new_cluster installs (controllers, webhooks, mutators) comes from mutated modules, so a new
    suite or stand-in wired in without a config line is caught even outside reconciler/<suite>/."""
    from reconciler import new_cluster
    from reconciler.profiles import PROFILES

    only = config.mutmut_config()["only_mutate"]
    unmutated = set()
    for profile in PROFILES:
        cluster = new_cluster(profile)
        modules = [type(c).__module__ for c in cluster.controllers]
        modules += [fn.__module__ for hook in cluster.webhooks for fn in (hook.validate, hook.validate_update) if fn]
        modules += [fn.__module__ for fns in cluster.mutators.values() for fn in fns]
        assert modules, "new_cluster installed nothing: this check would prove nothing"
        for module in modules:
                path = module.replace(".", "/") + ".py"
                if not (ROOT / path).is_file():
                    path = module.replace(".", "/") + "/__init__.py"
                if not config.is_mutated(path, only):
                    unmutated.add(path)
    assert sorted(unmutated) == []


def test_every_glob_matches_a_file():
    """A stale glob (a renamed folder) would silently mutate nothing."""
    files = config.mutated_modules()
    for pattern in config.mutmut_config()["only_mutate"]:
        assert any(config.is_mutated(f, [pattern]) for f in files), f"{pattern} matches no module"


def test_the_pass_judges_mutants_by_the_render_table_only():
    cfg = config.mutmut_config()
    assert cfg["pytest_add_cli_args_test_selection"] == ["conformance/suite"]
    assert cfg["source_paths"] == ["reconciler"]


@pytest.fixture
def fake_checkout(tmp_path):
    """A copy of this checkout's reconciler/ layout (empty files) and its pyproject.toml."""
    for path in (ROOT / "reconciler").rglob("*.py"):
        if "__pycache__" in path.parts:
            continue
        target = tmp_path / path.relative_to(ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.touch()
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def test_check_fails_for_a_new_suite_folder(fake_checkout):
    assert config.missing_modules(fake_checkout) == []
    (fake_checkout / "reconciler" / "kuberay").mkdir()
    (fake_checkout / "reconciler" / "kuberay" / "controller.py").touch()
    assert config.missing_modules(fake_checkout) == ["reconciler/kuberay/controller.py"]


def test_check_fails_when_a_stand_in_is_dropped(fake_checkout):
    pyproject = fake_checkout / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('    "reconciler/kubelet.py",\n', ""))
    assert config.missing_modules(fake_checkout) == ["reconciler/kubelet.py"]


def test_live_plumbing_is_left_out_on_purpose():
    assert "live" in config.NOT_BEHAVIOUR
    assert not any(m.startswith("reconciler/live/") for m in config.behaviour_modules())


def test_reviewed_equivalents_load_and_each_sits_in_its_suites_file(monkeypatch):
    """docs/mutation/equivalent/<area>.yaml: every entry has a reason, none is listed twice, and each
    sits in the file of its suite folder or stand-in (the report refuses the lists otherwise)."""
    monkeypatch.syspath_prepend(str(ROOT))  # report.py imports hack.mutation.config
    report = _load("report")
    entries = report.load_equivalent()
    assert entries, "no reviewed equivalents found: the report would count every one as a survivor"
    areas = {Path(p).stem for p in (ROOT / "docs" / "mutation" / "equivalent").glob("*.yaml")}
    assert areas <= {report.area_of(m) for m in entries}, "an empty file under docs/mutation/equivalent/"


@pytest.mark.parametrize("text, complaint", [
    ("- mutant: reconciler.volcano.x_f__mutmut_1\n  reason: r\n", "belongs in volcano.yaml"),
    ("- mutant: reconciler.jobset.x_f__mutmut_1\n", "one-line `reason`"),
    ("- {mutant: reconciler.jobset.x_f__mutmut_1, reason: r}\n- {mutant: reconciler.jobset.x_f__mutmut_1, reason: s}\n",
     "listed twice"),
])
def test_a_bad_equivalent_entry_is_refused_naming_its_file(tmp_path, monkeypatch, text, complaint):
    monkeypatch.syspath_prepend(str(ROOT))
    report = _load("report")
    (tmp_path / "jobset.yaml").write_text(text)
    with pytest.raises(SystemExit, match=complaint) as refused:
        report.load_equivalent(tmp_path)
    assert "jobset.yaml" in str(refused.value)
