"""The `conformance` command-line contract."""

import subprocess
import sys
import textwrap

import pytest
import yaml

from conftest import BASES, ROOT


def conformance(*args, stdin=None, cwd=None):
    return subprocess.run([sys.executable, "-m", "conformance.cli", *args], input=stdin, capture_output=True,
                          text=True, cwd=cwd or ROOT)


def manifests(*names, **patches):
    docs = [yaml.safe_load((BASES / n).read_text()) for n in names]
    return docs


def dump(docs):
    return yaml.safe_dump_all(docs)


# ---------------------------------------------------------------- render

def test_render_prints_every_object_and_exits_0():
    run = conformance("render", "-f", str(BASES / "mpi-runtime.yaml"), "-f", str(BASES / "mpi-trainjob.yaml"))
    assert run.returncode == 0, run.stderr
    kinds = [d["kind"] for d in yaml.safe_load_all(run.stdout)]
    # ConfigMaps: the MPI hostfile and (default profile trainer-v2.3) the runtime snapshot.
    assert sorted(kinds) == sorted(["ClusterTrainingRuntime", "TrainJob", "ConfigMap", "ConfigMap", "Secret", "JobSet",
                                    "Service", "Job", "Job", "Pod", "Pod"])
    trainjob = next(d for d in yaml.safe_load_all(run.stdout) if d["kind"] == "TrainJob")
    assert trainjob["spec"]["runtimeRef"]["apiGroup"] == "trainer.kubeflow.org"  # inputs are shown defaulted


def test_render_reads_stdin_and_honours_profile():
    docs = manifests("torch-runtime.yaml", "torch-trainjob.yaml")
    docs[1]["spec"]["trainer"]["numProcPerNode"] = "cpu"
    v21 = conformance("render", "-f", "-", "--profile", "trainer-v2.1", stdin=dump(docs))
    assert v21.returncode == 0, v21.stderr
    v23 = conformance("render", "-f", "-", "--profile", "trainer-v2.3", stdin=dump(docs))
    assert v23.returncode == 1
    # v2.3's mutating webhook cannot decode the string into int32 and answers before the schema.
    assert "json: cannot unmarshal string into Go struct field Trainer.spec.trainer.numProcPerNode of type int32" in v23.stderr


def test_render_rejection_exit_1_names_object_and_errors():
    docs = manifests("mpi-runtime.yaml", "mpi-trainjob.yaml")
    del docs[0]["spec"]["template"]["spec"]["replicatedJobs"][0]
    docs[1]["spec"]["trainer"]["numNodes"] = 2
    run = conformance("render", "-f", "-", stdin=dump(docs))
    assert run.returncode == 1
    assert run.stderr.splitlines() == [
        "conformance render: profile trainer-v2.3 (picked for this input: the newest of the most specific profiles "
        "serving all its kinds; --profile picks another)",
        'error: TrainJob default/test-job was rejected by admission webhook "validator.trainjob.trainer.kubeflow.org" (403 Forbidden):',
        "  spec.trainer.numNodes: Invalid value: 2: must have 1 when MPI trainingRuntime with enabled runLauncherAsNode "
        "does not have either launcher and node",
    ]
    assert [d["kind"] for d in yaml.safe_load_all(run.stdout)] == ["ClusterTrainingRuntime"]


def test_render_schema_rejection_says_so():
    docs = manifests("mpi-runtime.yaml")
    docs[0]["spec"]["mlPolicy"]["torch"] = {}
    run = conformance("render", "-f", "-", stdin=dump(docs))
    assert run.returncode == 1
    assert "error: ClusterTrainingRuntime mpi-distributed was rejected by the CRD schema (422 Invalid):" in run.stderr
    assert 'spec.mlPolicy: Invalid value: Only one of the policy can be configured' in run.stderr


@pytest.mark.parametrize("text, message", [
    ("a: [unclosed\n", "error: <stdin>: malformed YAML:"),
    ("apiVersion: v1\nkind: Frobnicator\nmetadata: {name: x}\n", "error: <stdin>: document 1: unknown kind 'Frobnicator' in 'v1'"),
    ("- just\n- a list\n", "error: <stdin>: document 1 is not a Kubernetes object"),
])
def test_render_bad_input_exit_2_one_line(text, message):
    run = conformance("render", "-f", "-", "--profile", "trainer-v2.3", stdin=text)
    assert run.returncode == 2
    assert run.stderr.startswith(message) and len(run.stderr.strip().splitlines()) == 1
    assert run.stdout == ""


@pytest.mark.parametrize("bases, profile", [
    (["mpi-runtime.yaml", "mpi-trainjob.yaml"], "trainer-v2.3"),  # only trainer profiles serve TrainJobs
    ([ROOT / "cases/volcano/_bases/pytorch-job.yaml"], "volcano-v1.12"),
    ([ROOT / "cases/jobset/_bases/jobset.yaml"], "jobset-v0.12"),  # trainer-v2.3 serves JobSets too, but more
])
def test_render_without_profile_picks_the_newest_specific_one(bases, profile):
    docs = [yaml.safe_load((BASES / b).read_text()) for b in bases]
    run = conformance("render", "-f", "-", stdin=dump(docs))
    assert run.returncode == 0, run.stderr
    assert run.stderr.startswith(f"conformance render: profile {profile} (picked for this input")


def test_render_without_profile_and_no_profile_serving_everything_exit_2():
    docs = manifests("mpi-trainjob.yaml") + [yaml.safe_load((ROOT / "cases/volcano/_bases/pytorch-job.yaml").read_text())]
    run = conformance("render", "-f", "-", stdin=dump(docs))
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.startswith("error: no profile serves every kind of the input (Job (batch.volcano.sh/v1alpha1), "
                                 "TrainJob (trainer.kubeflow.org/v1alpha1)); trainer-v2.0, trainer-v2.1, trainer-v2.3, "
                                 "volcano-v1.10, volcano-v1.11, volcano-v1.12 serve some of them")


def test_render_missing_file_exit_2():
    run = conformance("render", "-f", "/nonexistent/x.yaml")
    assert run.returncode == 2 and "error: /nonexistent/x.yaml: cannot read" in run.stderr


# ---------------------------------------------------------------- run / list on a scratch table

TABLE = """\
table: scratch
suite: trainer
bases: {runtime: _bases/rt.yaml, trainjob: _bases/tj.yaml}
defaults: {versions: ">=2.3", inputs: [{base: runtime}, {base: trainjob}]}
rows:
  - id: three-pods
    title: numNodes 3 on a torch runtime gives three pods
    patch: {trainjob: [{op: add, path: /spec/trainer/numNodes, value: 3}]}
    expect: {counts: [{apiVersion: v1, kind: Pod, count: 3}]}
  - id: broken
    title: this row has a misspelt key
    expectt: {}
  - id: one-pod
    title: numNodes unset gives mlPolicy.numNodes = 1 pod
    expect: {counts: [{apiVersion: v1, kind: Pod, count: 1}]}
"""


@pytest.fixture
def scratch(tmp_path):
    cases = tmp_path / "cases"
    (cases / "_bases").mkdir(parents=True)
    (cases / "_bases" / "rt.yaml").write_text((BASES / "torch-runtime.yaml").read_text())
    (cases / "_bases" / "tj.yaml").write_text((BASES / "torch-trainjob.yaml").read_text())
    (cases / "scratch.yaml").write_text(TABLE)
    return tmp_path


def test_broken_row_fails_alone_and_the_rest_run(scratch):
    run = conformance("run", "--cases-dir", "cases", "--snapshot-update", cwd=scratch)
    assert run.returncode == 1
    assert "conformance: 2 passed, 1 failed, 0 skipped" in run.stdout
    assert "cases/scratch.yaml, row 2 (id 'broken'): Additional properties are not allowed ('expectt' was unexpected)" in run.stdout
    assert sorted(p.name for p in (scratch / "snapshots" / "trainer-v2.3" / "scratch").iterdir()) == ["one-pod.yaml", "three-pods.yaml"]


def test_goldens_catch_changes_and_unused_goldens_fail(scratch):
    (scratch / "cases" / "scratch.yaml").write_text(TABLE.replace("  - id: broken\n    title: this row has a misspelt key\n    expectt: {}\n", ""))
    assert conformance("run", "--cases-dir", "cases", "--snapshot-update", cwd=scratch).returncode == 0
    assert conformance("run", "--cases-dir", "cases", cwd=scratch).returncode == 0
    golden = scratch / "snapshots" / "trainer-v2.3" / "scratch" / "one-pod.yaml"
    golden.write_text(golden.read_text().replace("image: ghcr.io/example/torch:2.7", "image: ghcr.io/example/torch:2.6", 1))
    changed = conformance("run", "--cases-dir", "cases", cwd=scratch)
    assert changed.returncode == 1 and "output differs from its golden" in changed.stdout
    diff_lines = [line.strip() for line in changed.stdout.splitlines()]
    assert "- image: ghcr.io/example/torch:2.6".replace(" ", "") in [l.replace(" ", "") for l in diff_lines]
    assert conformance("run", "--cases-dir", "cases", "--snapshot-update", cwd=scratch).returncode == 0
    stale = scratch / "snapshots" / "trainer-v2.3" / "scratch" / "gone.yaml"
    stale.write_text("case: gone\n")
    unused = conformance("run", "--cases-dir", "cases", cwd=scratch)
    assert unused.returncode == 1 and "belong to no case: trainer-v2.3/scratch/gone.yaml" in unused.stdout
    assert conformance("run", "--cases-dir", "cases", "-k", "one-pod", cwd=scratch).returncode == 0  # a subset cannot judge unused goldens
    assert conformance("run", "--cases-dir", "cases", "--snapshot-update", cwd=scratch).returncode == 0 and not stale.exists()


def test_run_writes_junit(scratch):
    conformance("run", "--cases-dir", "cases", "--snapshot-update", cwd=scratch)
    run = conformance("run", "--cases-dir", "cases", "--junitxml", str(scratch / "junit.xml"), cwd=scratch)
    text = (scratch / "junit.xml").read_text()
    assert run.returncode == 1 and text.count("<testcase") == 3 and "scratch/broken" in text


def test_list(scratch):
    run = conformance("list", "--cases-dir", "cases", cwd=scratch)
    assert run.returncode == 0
    lines = run.stdout.splitlines()
    assert lines[0].split() == ["ID", "TABLE", "LEVEL", "PROFILES"]
    assert lines[1].split() == ["scratch/three-pods", "scratch", "core", "trainer-v2.3"]
    assert "BROKEN" in lines[2] and lines[-1] == "3 cases"
