"""The case loader: every broken file or row becomes its own failure naming file and row."""

import textwrap

import pytest

from conformance.cases import BrokenCase, Case, load_all, version_in_range

BASE = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: t}
spec: {runtimeRef: {name: r}, trainer: {}}
"""


def write(root, rel, text):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


@pytest.fixture
def cases_root(tmp_path):
    root = tmp_path / "cases"
    write(root, "t/_bases/tj.yaml", BASE)
    return root


def table(rows: str, extra: str = "") -> str:
    return "table: demo\nsuite: trainer\nbases: {tj: _bases/tj.yaml}\ndefaults: {inputs: [{base: tj}]}\n" + extra + "rows:\n" + rows


GOOD_ROW = """\
  - id: good
    title: a row that loads fine
    patch: {tj: [{op: add, path: /spec/trainer/numNodes, value: 2}]}
    expect: {counts: [{apiVersion: v1, kind: Pod, count: 0}]}
"""


def test_good_row_loads_with_patch_applied(cases_root):
    write(cases_root, "t/demo.yaml", table(GOOD_ROW))
    [case] = load_all(cases_root)
    assert isinstance(case, Case) and case.full_id == "demo/good"
    assert case.inputs[0]["spec"]["trainer"]["numNodes"] == 2
    assert case.level == "core" and case.profiles() == ["trainer-v2.0", "trainer-v2.1", "trainer-v2.3"]


def test_malformed_yaml_names_the_file(cases_root):
    write(cases_root, "t/demo.yaml", "table: [unclosed\n")
    [case] = load_all(cases_root)
    assert isinstance(case, BrokenCase) and case.error.startswith("cases/t/demo.yaml: malformed YAML")


def test_table_level_schema_error_names_the_file(cases_root):
    write(cases_root, "t/demo.yaml", "table: demo\nsuite: nosuch\nrows: [{}]\n")
    [case] = load_all(cases_root)
    assert "cases/t/demo.yaml: not a case table" in case.error and "nosuch" in case.error


def test_bad_row_fails_alone_and_names_file_and_row(cases_root):
    bad = "  - id: bad\n    title: no expectation here\n"
    write(cases_root, "t/demo.yaml", table(GOOD_ROW + bad + GOOD_ROW.replace("id: good", "id: good2")))
    loaded = load_all(cases_root)
    assert [type(c).__name__ for c in loaded] == ["Case", "BrokenCase", "Case"]
    assert loaded[1].error.startswith("cases/t/demo.yaml, row 2 (id 'bad'): 'expect' is a required property")


def test_unknown_base_and_failing_patch_are_row_errors(cases_root):
    rows = """\
  - id: unknown-base
    title: refers to a base that does not exist
    inputs: [{base: nope}]
    expect: {counts: [{apiVersion: v1, kind: Pod, count: 0}]}
  - id: bad-patch
    title: removes a path that is not there
    patch: {tj: [{op: remove, path: /spec/nothing}]}
    expect: {counts: [{apiVersion: v1, kind: Pod, count: 0}]}
"""
    write(cases_root, "t/demo.yaml", table(rows))
    unknown, bad_patch = load_all(cases_root)
    assert "row 1 (id 'unknown-base'): unknown base 'nope'" in unknown.error
    assert "row 2 (id 'bad-patch'): JSON Patch on base 'tj' failed" in bad_patch.error


def test_patch_for_a_base_no_input_uses_is_an_error(cases_root):
    rows = "  - id: r\n    title: patches a base nobody uses\n    patch: {other: []}\n    expect: {counts: [{apiVersion: v1, kind: Pod, count: 0}]}\n"
    write(cases_root, "t/demo.yaml", table(rows))
    [case] = load_all(cases_root)
    assert "`patch` names base(s) ['other'] that no input uses" in case.error


def test_duplicate_ids_across_files(cases_root):
    write(cases_root, "t/demo.yaml", table(GOOD_ROW))
    write(cases_root, "t/demo2.yaml", table(GOOD_ROW))
    loaded = load_all(cases_root)
    assert isinstance(loaded[1], BrokenCase) and "duplicate case id 'demo/good' in suite 'trainer'" in loaded[1].error


def test_the_same_table_and_row_id_in_two_suites_are_two_cases(cases_root):
    # Profiles belong to one suite, so test ids (<profile>:<table>/<id>) and goldens stay apart.
    write(cases_root, "t/demo.yaml", table(GOOD_ROW))
    write(cases_root, "j/demo.yaml", table(GOOD_ROW).replace("suite: trainer", "suite: jobset").replace(
        "_bases/tj.yaml", "../t/_bases/tj.yaml"))
    loaded = load_all(cases_root)
    assert [type(c) for c in loaded] == [Case, Case] and {c.suite for c in loaded} == {"trainer", "jobset"}


def test_bases_folders_are_not_tables(cases_root):
    assert load_all(cases_root) == []


@pytest.mark.parametrize("version, spec, ok", [
    ((2, 3), ">=2.1", True), ((2, 0), ">=2.1", False), ((2, 1), ">=2.1,<2.3", True),
    ((2, 3), ">=2.1,<2.3", False), ((2, 1), "==2.1", True), ((2, 1), "!=2.1", False), ((2, 3), "<3", True),
])
def test_version_ranges(version, spec, ok):
    assert version_in_range(version, spec) is ok


def test_unquoted_null_key_in_a_manifest_is_an_error_of_its_row(cases_root):
    # YAML reads an unquoted `null:` key as None; a Kubernetes object is JSON, whose keys are strings.
    bad = """\
  - id: null-key
    title: an annotation key written null, unquoted
    patch: {tj: [{op: add, path: /metadata/annotations, value: {null: x}}]}
    expect: {counts: [{apiVersion: v1, kind: Pod, count: 0}]}
"""
    write(cases_root, "t/demo.yaml", table(GOOD_ROW + bad))
    loaded = load_all(cases_root)
    assert [type(c).__name__ for c in loaded] == ["Case", "BrokenCase"]
    assert loaded[1].error.startswith("cases/t/demo.yaml, row 2 (id 'null-key'): base 'tj': the key 'null' at "
                                      "/metadata/annotations is not a string")
