"""Conformance reports: result rules, exit codes, Markdown, JUnit, log, and one real run."""

import argparse
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest
import yaml

from conformance.report import cli as report_cli
from conformance.report import markdown
from conformance.report.model import API_VERSION, CaseResult, Implementation, build_report, exit_code
from conformance.report.writers import junit_xml, log_text
from conformance.yamlio import dump
from conftest import BASES, ROOT

DIFF = "cases/x.yaml, row 2 (id 'bad') [trainer-v2.3]: wrong\nexpected 2 Pod(s), found 1\n  - a | b"


def result(case_id, outcome="passed", level="core", profile="trainer-v2.3", text=""):
    return CaseResult(profile=profile, case_id=case_id, table=case_id.split("/")[0], level=level,
                      outcome=outcome, text=text, duration=0.25)


def report_of(results, errors=None):
    return build_report(results, implementation=Implementation("acme", "op", "1.2", "https://acme.example"),
                        date="2025-01-02T03:04:05Z", kubernetes_version="v1.33.1", harness_version="0.1.0",
                        backend="render", operator="reference", selection={"profiles": [], "levels": []},
                        extra_errors=errors)


def profile(report, name="trainer-v2.3"):
    return next(p for p in report["profiles"] if p["name"] == name)


# ---------------------------------------------------------------- result rules and exit code

def test_all_passed_is_success_and_exit_0():
    report = report_of([result("t/a"), result("t/b"), result("t/c", level="extended")])
    p = profile(report)
    assert (p["result"], p["core"]["result"], p["extended"]["result"]) == ("success", "success", "success")
    assert p["core"]["statistics"] == {"Passed": 2, "Failed": 0, "Skipped": 0}
    assert report["apiVersion"] == API_VERSION and report["kind"] == "ConformanceReport"
    assert exit_code(report) == 0


def test_a_core_skip_is_partial_and_still_exit_0():
    report = report_of([result("t/a"), result("t/b", "skipped", text="needs GPUs")])
    p = profile(report)
    assert p["core"]["result"] == "partial" and p["result"] == "partial"
    assert p["core"]["skippedTests"] == ["t/b"] and p["core"]["statistics"]["Skipped"] == 1
    assert exit_code(report) == 0


def test_a_core_failure_fails_the_profile_and_the_run():
    report = report_of([result("t/a"), result("t/b", "failed", text=DIFF), result("t/c", "skipped")])
    p = profile(report)
    assert p["core"]["result"] == "failure" and p["result"] == "failure"  # failure outranks the skip
    assert p["core"]["failedTests"] == ["t/b"]
    assert p["core"]["statistics"] == {"Passed": 1, "Failed": 1, "Skipped": 1}
    assert exit_code(report) == 1


def test_an_extended_failure_makes_the_profile_partial_but_exit_0():
    report = report_of([result("t/a"), result("t/x", "failed", level="extended", text=DIFF)])
    p = profile(report)
    assert (p["core"]["result"], p["extended"]["result"], p["result"]) == ("success", "failure", "partial")
    assert p["summary"].startswith("partial: core succeeded (1 passed); extended failed (1 failed")
    assert exit_code(report) == 0


def test_a_level_with_no_case_is_left_out():
    p = profile(report_of([result("t/a")]))
    assert "extended" not in p and p["result"] == "success"


def test_broken_cases_have_no_profile_are_errors_and_exit_1():
    report = report_of([result("t/a"), result("t/broken", "error", profile="-", text="bad row")])
    assert [p["name"] for p in report["profiles"]] == ["trainer-v2.3"]
    assert profile(report)["result"] == "success"
    assert report["errors"] == [{"id": "-:t/broken", "level": "core", "message": "bad row"}]
    assert exit_code(report) == 1


def test_an_extended_error_counts_as_failed_and_exits_1():
    report = report_of([result("t/a"), result("t/x", "error", level="extended", text="[setup] boom")])
    assert profile(report)["extended"]["failedTests"] == ["t/x"]
    assert exit_code(report) == 1  # an error means something could not be judged, at any level


def test_run_level_errors_exit_1_and_profiles_are_sorted():
    report = report_of([result("t/a", profile="trainer-v2.3"), result("t/a", profile="trainer-v2.0")],
                       errors=[{"id": "golden:x.yaml", "message": "unused"}])
    assert [p["name"] for p in report["profiles"]] == ["trainer-v2.0", "trainer-v2.3"]
    assert exit_code(report) == 1


def test_exit_code_reads_a_report_back_from_yaml():
    report = report_of([result("t/b", "failed", text=DIFF)])
    assert exit_code(yaml.safe_load(dump(report))) == 1


@pytest.mark.parametrize("slug", ["acme", "/op", "acme/", "a/b/c"])
def test_implementation_must_be_org_slash_project(slug):
    with pytest.raises(ValueError, match="ORG/PROJECT"):
        Implementation.parse(slug, "1.0")


# ---------------------------------------------------------------- Markdown, JUnit, log

def test_markdown_has_one_row_per_profile_and_level():
    report = report_of([result("t/a"), result("t/b", "failed", text=DIFF), result("t|x/c", "skipped", level="extended"),
                        result("t/broken", "error", profile="-", text="cases/t.yaml, row 3: bad key\nmore")])
    text = markdown.render(report)
    assert "# Conformance report: acme/op 1.2" in text and "| Goldens | checked |" in text
    assert "| trainer-v2.3 | core | **failure** | 1 | 1 | 0 | `t/b` |  |" in text
    assert "| trainer-v2.3 | extended | **partial** | 0 | 0 | 1 |  | `t\\|x/c` |" in text  # a pipe cannot break the table
    assert "- `-:t/broken`: cases/t.yaml, row 3: bad key" in text
    assert "Exit code: **1**" in text


def test_junit_one_testcase_per_case_with_the_full_failure_text():
    results = [result("t/a"), result("t/b", "failed", text=DIFF + "\x1b[31m"),
               result("t/c", "skipped", level="extended", text="needs GPUs"),
               result("t/broken", "error", profile="-", text="bad row")]
    root = ET.fromstring(junit_xml(results, report_of(results)))
    suite = root.find("testsuite")
    assert suite.get("name") == "render"
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped")) == ("4", "1", "1", "1")
    cases = suite.findall("testcase")
    # The profile's own dot would read as a package boundary (trainer-v2 > 3.t); its name is a property.
    assert [(c.get("classname"), c.get("name")) for c in cases] == [
        ("render.trainer-v2_3.t", "a"), ("render.trainer-v2_3.t", "b"), ("render.trainer-v2_3.t", "c"),
        ("render.-.t", "broken")]
    failure = cases[1].find("failure")
    assert failure.text == DIFF + "\\x1b[31m"  # whole text; the control character is escaped, not dropped
    assert failure.get("message") == "cases/x.yaml, row 2 (id 'bad') [trainer-v2.3]: wrong"
    assert cases[2].find("skipped").get("message") == "needs GPUs"
    assert cases[3].find("error").text == "bad row"
    assert cases[0].find("failure") is None and cases[0].find("skipped") is None
    props = {p.get("name"): p.get("value") for p in cases[2].find("properties")}
    assert props == {"profile": "trainer-v2.3", "level": "extended", "case": "t/c"}
    suite_props = {p.get("name"): p.get("value") for p in suite.find("properties")}
    assert suite_props["kubernetesVersion"] == "v1.33.1" and suite_props["implementationVersion"] == "1.2"


def test_junit_classname_has_exactly_backend_profile_and_table_as_packages():
    results = [result("torch-nproc/a", profile="jobset-v0.10"), result("t.x/b", profile="trainer-v2.3")]
    suite = ET.fromstring(junit_xml(results, report_of(results))).find("testsuite")
    classnames = [c.get("classname") for c in suite.findall("testcase")]
    assert classnames == ["render.jobset-v0_10.torch-nproc", "render.trainer-v2_3.t_x"]
    assert all(len(name.split(".")) == 3 for name in classnames)


def test_log_lines_failure_texts_and_final_count():
    results = [result("t/a"), result("t/b", "failed", text=DIFF), result("t/c", "skipped"),
               result("t/broken", "error", profile="-", text="bad row")]
    lines = log_text(results, report_of(results, errors=[{"id": "golden:x.yaml", "message": "unused golden"}])).splitlines()
    assert lines[2:6] == ["PASSED trainer-v2.3:t/a", "FAILED trainer-v2.3:t/b", "SKIPPED trainer-v2.3:t/c",
                          "ERROR -:t/broken"]
    text = "\n".join(lines)
    assert f"--- FAILED trainer-v2.3:t/b\n{DIFF}" in text and "--- ERROR golden:x.yaml\nunused golden" in text
    assert lines[-1] == "1 passed, 3 failed, 1 skipped"  # errors, also run-level ones, count as failed


# ---------------------------------------------------------------- reproduction commands

class _Config:
    """The pytest options a Collector reads."""

    def __init__(self, **options):
        self.options = {"--backend": "render", "--profile": ["trainer-v2.3"], "--level": [], "keyword": "",
                        "--cases-dir": None, "--snapshots-dir": None, "--snapshot-update": False,
                        "--report-dir": "out", "--implementation": None, "--implementation-version": None,
                        "--implementation-url": "", "--operator": None, "--kubeconfig": None, **options}

    def getoption(self, name, default=None):
        # The suite plugin's options carry a --conformance- prefix in pytest; the table's short names here.
        return self.options.get(name.replace("--conformance-", "--"), default)


def _conformance_command(**options):
    from pathlib import Path

    from conformance.report.collector import Collector

    return Collector(_Config(**options), Path("out")).reproduce_with_conformance()


def test_live_external_command_asks_for_the_users_kubeconfig():
    command = _conformance_command(**{"--backend": "live", "--kubeconfig": "/tmp/tc-cluster-x/kubeconfig",
                                      "--implementation": "kubeflow/trainer", "--implementation-version": "v2.3.0"})
    assert command.startswith('conformance run --backend live --kubeconfig "$KUBECONFIG" --profile trainer-v2.3 ')
    assert "/tmp/tc-cluster-x" not in command  # the run's own, temporary cluster
    assert command.endswith("--operator external --implementation kubeflow/trainer --implementation-version v2.3.0")


@pytest.mark.parametrize("options", [{}, {"--backend": "live", "--operator": "reference"}])
def test_render_and_local_live_commands_need_no_kubeconfig(options):
    assert "--kubeconfig" not in _conformance_command(**options)


def test_submission_readme_explains_the_placeholder():
    from conformance.report.writers import submission_readme

    report = report_of([result("t/a")])
    readme = submission_readme(report, "python -m pytest x", 'conformance run --backend live --kubeconfig "$KUBECONFIG"',
                               "/w")
    assert 'conformance run --backend live --kubeconfig "$KUBECONFIG"\n```' in readme
    assert "`\"$KUBECONFIG\"`: the kubeconfig of the cluster the implementation runs in" in readme
    assert "$KUBECONFIG" not in submission_readme(report, "python -m pytest x", "conformance run --backend render", "/w")


# ---------------------------------------------------------------- CLI pieces

def test_pytest_args_only_with_a_report_dir():
    parser = argparse.ArgumentParser()
    report_cli.run_options(parser)
    args = parser.parse_args(["--report-dir", "out", "--implementation", "acme/op", "--implementation-version", "1.2"])
    assert report_cli.pytest_args(args) == ["-p", "conformance.report.collector", "--report-dir", "out",
                                            "--implementation", "acme/op", "--implementation-version", "1.2"]
    assert report_cli.pytest_args(parser.parse_args([])) == []
    with pytest.raises(SystemExit, match="--implementation only make sense with --report-dir"):
        report_cli.pytest_args(parser.parse_args(["--implementation", "acme/op"]))


def run_report_command(argv, capsys):
    parser = argparse.ArgumentParser()
    report_cli.add_report_command(parser.add_subparsers(dest="command"))
    args, extra = parser.parse_known_args(argv)
    code = args.report_command(args, extra)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_report_command_prints_markdown_and_check_gives_the_exit_code(tmp_path, capsys):
    path = tmp_path / "report.yaml"
    path.write_text(dump(report_of([result("t/b", "failed", text=DIFF)])))
    code, out, _ = run_report_command(["report", str(path)], capsys)
    assert code == 0 and "| trainer-v2.3 | core | **failure** | 0 | 1 | 0 | `t/b` |" in out
    assert run_report_command(["report", str(path), "--check"], capsys)[0] == 1


@pytest.mark.parametrize("content, message", [
    (None, "cannot read"),
    ("a: [unclosed\n", "malformed YAML"),
    ("kind: Pod\n", "not a ConformanceReport"),
    (f"kind: ConformanceReport\napiVersion: other/v9\nprofiles: []\n", "apiVersion 'other/v9' is not"),
])
def test_report_command_rejects_what_it_cannot_read(tmp_path, capsys, content, message):
    path = tmp_path / "report.yaml"
    if content is not None:
        path.write_text(content)
    code, out, err = run_report_command(["report", str(path)], capsys)
    assert code == 2 and out == "" and err.startswith(f"error: {path}: ") and message in err


# ---------------------------------------------------------------- a real run on a scratch table

TABLE = """\
table: scratch
suite: trainer
bases: {runtime: _bases/rt.yaml, trainjob: _bases/tj.yaml}
defaults: {versions: ">=2.3", inputs: [{base: runtime}, {base: trainjob}]}
rows:
  - id: one-pod
    title: numNodes unset gives mlPolicy.numNodes = 1 pod
    expect: {counts: [{apiVersion: v1, kind: Pod, count: 1}]}
  - id: wrong-count
    title: deliberately wrong - numNodes unset gives one pod, not two
    level: LEVEL
    expect: {counts: [{apiVersion: v1, kind: Pod, count: 2}]}
"""


@pytest.fixture
def scratch(tmp_path):
    cases = tmp_path / "cases"
    (cases / "_bases").mkdir(parents=True)
    (cases / "_bases" / "rt.yaml").write_text((BASES / "torch-runtime.yaml").read_text())
    (cases / "_bases" / "tj.yaml").write_text((BASES / "torch-trainjob.yaml").read_text())
    return tmp_path


def run_suite(scratch, *extra, update=True):
    args = report_cli.pytest_args(argparse.Namespace(
        report_dir=str(scratch / "out"), implementation="acme/op", implementation_version="1.2",
        implementation_url="https://acme.example/op", operator=None))
    command = [sys.executable, "-m", "pytest", str(ROOT / "conformance" / "suite"), "-p", "conformance.pytest_plugin",
               "-o", "addopts=", "-p", "no:cacheprovider", "--rootdir", str(scratch), "--conformance-cases-dir", "cases",
               "--conformance-snapshots-dir", "snapshots", *(["--snapshot-update"] if update else []), "-q", *args, *extra]
    return subprocess.run(command, capture_output=True, text=True, cwd=scratch)


@pytest.mark.parametrize("level, code, verdict", [("core", 1, "failure"), ("extended", 0, "partial")])
def test_end_to_end_one_passing_one_failing_row(scratch, level, code, verdict):
    (scratch / "cases" / "scratch.yaml").write_text(TABLE.replace("LEVEL", level))
    run = run_suite(scratch)
    assert run.returncode == code, run.stdout + run.stderr
    out = scratch / "out"
    report = yaml.safe_load((out / "report.yaml").read_text())
    assert report["implementation"] == {"organization": "acme", "project": "op", "version": "1.2",
                                        "url": "https://acme.example/op"}
    assert report["kubernetesVersion"] == "none (render backend)"
    assert (report["backend"], report["operator"], report["errors"]) == ("render", "reference", [])
    assert report["goldens"] == "rewritten"  # --snapshot-update: this run judged no golden
    [p] = report["profiles"]
    assert p["name"] == "trainer-v2.3" and p["result"] == verdict
    assert p[level]["failedTests"] == ["scratch/wrong-count"]
    assert p["core"]["statistics"]["Passed"] == 1

    failure = ET.parse(out / "junit.xml").getroot().find(".//testcase[@name='wrong-count']/failure")
    assert "expected 2 Pod(s), found 1" in failure.text and "deliberately wrong" in failure.text

    log = (out / "conformance.log").read_text().splitlines()
    assert "PASSED trainer-v2.3:scratch/one-pod" in log and "FAILED trainer-v2.3:scratch/wrong-count" in log
    assert log[-1] == "1 passed, 1 failed, 0 skipped"
    assert "conformance: 1 passed, 1 failed, 0 skipped" in run.stdout  # the suite plugin counts the same

    submission = out / "submission"
    assert sorted(p.name for p in submission.iterdir()) == [
        "PRODUCT.yaml", "README.md", "conformance.log", "junit.xml", "report.yaml"]
    assert yaml.safe_load((submission / "PRODUCT.yaml").read_text())["vendor"] == "acme"
    readme = (submission / "README.md").read_text()
    assert f"cd {scratch}\n" in readme and "--report-dir" in readme and "--cases-dir cases" in readme
    assert "conformance run --backend render --cases-dir cases --snapshots-dir snapshots --snapshot-update" in readme


def test_end_to_end_broken_row_is_an_error(scratch):
    (scratch / "cases" / "scratch.yaml").write_text(TABLE.replace("level: LEVEL", "levle: core"))
    run = run_suite(scratch)
    assert run.returncode == 1
    report = yaml.safe_load((scratch / "out" / "report.yaml").read_text())
    [error] = report["errors"]
    assert error["id"] == "-:scratch/wrong-count" and "'levle' was unexpected" in error["message"]
    assert profile(report)["result"] == "success"  # the broken row belongs to no profile


def test_end_to_end_unused_golden_is_a_run_error(scratch):
    (scratch / "cases" / "scratch.yaml").write_text(TABLE.split("  - id: wrong-count")[0])
    assert run_suite(scratch).returncode == 0
    stale = scratch / "snapshots" / "trainer-v2.3" / "scratch" / "gone.yaml"
    stale.write_text("case: gone\n")
    run = run_suite(scratch, update=False)
    assert run.returncode == 1, run.stdout
    report = yaml.safe_load((scratch / "out" / "report.yaml").read_text())
    assert report["goldens"] == "checked" and profile(report)["result"] == "success"
    assert [e["id"] for e in report["errors"]] == ["golden:trainer-v2.3/scratch/gone.yaml"]
    assert (scratch / "out" / "conformance.log").read_text().splitlines()[-1] == "1 passed, 1 failed, 0 skipped"


@pytest.mark.parametrize("extra, message", [
    (["--operator", "external"], "the render backend runs the reference reconciler"),
    (["--implementation", "acme"], "--implementation must be ORG/PROJECT, got 'acme'"),
])
def test_end_to_end_usage_errors(scratch, extra, message):
    (scratch / "cases" / "scratch.yaml").write_text(TABLE.replace("LEVEL", "core"))
    run = run_suite(scratch, *extra)
    assert run.returncode == 4 and message in run.stderr
