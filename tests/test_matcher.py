from conformance.matcher import explain, match

ACTUAL = {
    "metadata": {"name": "js", "labels": {"a": "1", "b": "2"}},
    "spec": {"containers": [
        {"name": "sidecar", "image": "s"},
        {"name": "node", "image": "n", "command": ["torchrun", "x.py"],
         "env": [{"name": "A", "value": "1"}, {"name": "PET_NNODES", "value": "2"}],
         "ports": [{"containerPort": 29500}]},
    ]},
}


def test_maps_are_subsets():
    assert match({"metadata": {"labels": {"a": "1"}}}, ACTUAL) == []


def test_missing_key_and_wrong_value_are_reported_with_paths():
    problems = match({"metadata": {"labels": {"a": "2", "c": "3"}}}, ACTUAL)
    assert [str(p) for p in problems] == ["metadata.labels.a: expected '2', got '1'", "metadata.labels.c: missing"]


def test_named_lists_match_by_name_in_any_position():
    want = {"spec": {"containers": [{"name": "node", "env": [{"name": "PET_NNODES", "value": "2"}]}]}}
    assert match(want, ACTUAL) == []


def test_named_list_item_missing_lists_what_is_there():
    problems = match({"spec": {"containers": [{"name": "launcher"}]}}, ACTUAL)
    assert str(problems[0]) == "spec.containers[name=launcher]: missing (present: ['sidecar', 'node'])"


def test_absent_marker():
    want = {"spec": {"containers": [{"name": "node", "env": [{"name": "A", "$absent": True}]}]}}
    assert "must be absent" in str(match(want, ACTUAL)[0])
    want = {"spec": {"containers": [{"name": "node", "env": [{"name": "Z", "$absent": True}]}]}}
    assert match(want, ACTUAL) == []


def test_ports_match_by_container_port_when_unnamed():
    assert match({"spec": {"containers": [{"name": "node", "ports": [{"containerPort": 29500}]}]}}, ACTUAL) == []
    assert match({"spec": {"containers": [{"name": "node", "ports": [{"containerPort": 23456}]}]}}, ACTUAL)


def test_other_lists_are_positional_and_exact_length():
    assert match({"spec": {"containers": [{"name": "node", "command": ["torchrun", "x.py"]}]}}, ACTUAL) == []
    problems = match({"spec": {"containers": [{"name": "node", "command": ["torchrun"]}]}}, ACTUAL)
    assert "list length 2, expected 1" in str(problems[0])


def test_scalars_do_not_coerce_types():
    problems = match({"spec": {"containers": [{"name": "node", "env": [{"name": "PET_NNODES", "value": 2}]}]}}, ACTUAL)
    assert str(problems[0]) == "spec.containers[name=node].env[name=PET_NNODES].value: expected 2, got '2'"


def test_explain_has_problem_lines_and_a_unified_diff():
    want = {"metadata": {"name": "other"}}
    text = explain(want, ACTUAL, match(want, ACTUAL))
    assert "* metadata.name: expected other, got js" in text
    assert "--- expected" in text and "+++ actual" in text and "-  name: other" in text


def test_absent_map_key():
    assert match({"metadata": {"labels": {"c": {"$absent": True}}}}, ACTUAL) == []
    assert str(match({"metadata": {"labels": {"a": {"$absent": True}}}}, ACTUAL)[0]) == "metadata.labels.a: must be absent, found '1'"


def test_absent_items_of_a_missing_list_are_absent():
    assert match({"spec": {"containers": [{"name": "sidecar", "env": [{"name": "A", "$absent": True}]}]}}, ACTUAL) == []
    assert match({"spec": {"containers": [{"name": "sidecar", "env": [{"name": "A"}]}]}}, ACTUAL)


def test_present_map_key_is_set_and_not_null():
    assert match({"status": {"startTime": {"$present": True}}}, {"status": {"startTime": "2026-01-01T00:00:00Z"}}) == []
    assert str(match({"status": {"startTime": {"$present": True}}}, {"status": {}})[0]) == \
        "status.startTime: missing (expected to be present)"
    # A null is Kubernetes' "unset": the apiserver drops it from a field that is not nullable.
    assert str(match({"status": {"startTime": {"$present": True}}}, {"status": {"startTime": None}})[0]) == \
        "status.startTime: null (expected to be set)"
