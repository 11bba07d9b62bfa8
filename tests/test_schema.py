"""The structural schema engine: what kube-apiserver does to a custom resource on create."""

from reconciler import crds, schema
from reconciler.errors import Rejection

SCHEMAS = crds.schemas(("trainer-v2.3", "jobset"))
TRAINJOB = SCHEMAS[("trainer.kubeflow.org", "v1alpha1", "TrainJob")][0]
RUNTIME = SCHEMAS[("trainer.kubeflow.org", "v1alpha1", "ClusterTrainingRuntime")][0]
RUNTIME_V21 = crds.schemas(("trainer-v2.1", "jobset"))[("trainer.kubeflow.org", "v1alpha1", "ClusterTrainingRuntime")][0]


def runtime(ml_policy: dict) -> dict:
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime",
            "metadata": {"name": "r"}, "spec": {"mlPolicy": ml_policy, "template": {
                "spec": {"replicatedJobs": [{"name": "node", "template": {}}]}}}}


def test_defaults_apply_recursively_into_defaulted_objects():
    obj, pruned = schema.prune_and_default(runtime({"mpi": {}}), RUNTIME)
    assert obj["spec"]["mlPolicy"]["mpi"] == {"numProcPerNode": 1, "mpiImplementation": "OpenMPI",
                                              "sshAuthMountPath": "/root/.ssh", "runLauncherAsNode": False}
    assert obj["spec"]["template"]["spec"]["replicatedJobs"][0]["replicas"] == 1
    assert obj["spec"]["template"]["spec"]["replicatedJobs"][0]["groupName"] == "default"
    assert pruned == []


def test_explicit_values_are_not_overwritten_by_defaults():
    obj, _ = schema.prune_and_default(runtime({"mpi": {"numProcPerNode": 4, "runLauncherAsNode": True}}), RUNTIME)
    assert obj["spec"]["mlPolicy"]["mpi"]["numProcPerNode"] == 4
    assert obj["spec"]["mlPolicy"]["mpi"]["runLauncherAsNode"] is True


def test_unknown_fields_are_pruned_and_reported_but_preserved_subtrees_kept():
    obj = runtime({"mpi": {}, "bogus": 1})
    obj["spec"]["template"]["spec"]["replicatedJobs"][0]["template"] = {"spec": {"template": {"spec": {"anything": 1}}}}
    out, pruned = schema.prune_and_default(obj, RUNTIME)
    assert pruned == ["spec.mlPolicy.bogus"]
    assert "bogus" not in out["spec"]["mlPolicy"]
    assert out["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"] == {"anything": 1}


def test_type_error_is_worded_like_the_apiserver_and_blocks_cel():
    obj = {"spec": {"runtimeRef": {"name": "r"}, "trainer": {"numNodes": "two"}}}
    errors = schema.validate(obj, TRAINJOB)
    assert [str(e) for e in errors] == [
        'spec.trainer.numNodes: Invalid value: "string": spec.trainer.numNodes in body must be of type integer: "string"',
        '<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; '
        'correct the existing errors to complete validation',
    ]


def test_enum_error_lists_supported_values():
    obj, _ = schema.prune_and_default(runtime({"mpi": {"mpiImplementation": "MPICH"}}), RUNTIME)
    errors = schema.validate(obj, RUNTIME)
    assert str(errors[0]) == 'spec.mlPolicy.mpi.mpiImplementation: Unsupported value: "MPICH": supported values: "OpenMPI", ""'


def test_cel_rule_message_on_the_object_path():
    obj, _ = schema.prune_and_default(runtime({"mpi": {}, "torch": {}}), RUNTIME)
    assert [str(e) for e in schema.validate(obj, RUNTIME)] == [
        'spec.mlPolicy: Invalid value: Only one of the policy can be configured']


def test_int_or_string_cel_rule_accepts_keywords_and_positive_ints():
    for good in ("auto", "cpu", "gpu", 3):
        obj, _ = schema.prune_and_default(runtime({"torch": {"numProcPerNode": good}}), RUNTIME_V21)
        assert schema.validate(obj, RUNTIME_V21) == [], good
    obj, _ = schema.prune_and_default(runtime({"torch": {}}), RUNTIME_V21)
    assert obj["spec"]["mlPolicy"]["torch"]["numProcPerNode"] == "auto"


def test_int_or_string_cel_rule_rejects_other_values():
    obj, _ = schema.prune_and_default(runtime({"torch": {"numProcPerNode": 0}}), RUNTIME_V21)
    errors = schema.validate(obj, RUNTIME_V21)
    assert [e.detail for e in errors] == ["NumProcPerNode must be equal to auto, cpu, gpu, or int value"]


BLOCKED = ("<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; "
           "correct the existing errors to complete validation")


def test_required_and_max_length_block_cel_like_kube_apiserver_1_35():
    # The v2.3 TrainJob CRD has a CEL rule (managedBy), so a blocking error is followed by the note.
    errors = schema.validate({"spec": {"runtimeRef": {"name": "x" * 254}}}, TRAINJOB)
    assert [str(e) for e in errors] == ["spec.runtimeRef.name: Too long: may not be more than 253 bytes", BLOCKED]
    errors = schema.validate({"spec": {"runtimeRef": {}}}, TRAINJOB)
    assert [str(e) for e in errors] == ["spec.runtimeRef.name: Required value", BLOCKED]


def test_no_cel_rules_no_blocked_note():
    # (Every Trainer release's TrainJob CRD has a CEL rule - managedBy - so a plain schema stands in.)
    no_cel = {"type": "object", "properties": {"spec": {"type": "object", "properties": {"runtimeRef": {
        "type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}}}}}
    errors = schema.validate({"spec": {"runtimeRef": {}}}, no_cel)
    assert [str(e) for e in errors] == ["spec.runtimeRef.name: Required value"]


def test_list_map_keys_must_be_unique():
    obj, _ = schema.prune_and_default(runtime({}), RUNTIME)
    obj["spec"]["template"]["spec"]["replicatedJobs"].append({"name": "node", "template": {}})
    errors = schema.validate(obj, RUNTIME)
    assert [str(e) for e in errors] == ['spec.template.spec.replicatedJobs[1]: Duplicate value: {"name":"node"}']


def test_rejection_messages_follow_status_conventions():
    from reconciler.errors import invalid
    one = Rejection("schema", 'TrainJob.trainer.kubeflow.org "a"', [invalid("spec.x", 2, "bad")])
    assert one.code == 422 and one.reason == "Invalid"
    assert one.message == 'TrainJob.trainer.kubeflow.org "a" is invalid: spec.x: Invalid value: 2: bad'
    two = Rejection("webhook", "x", [invalid("a", "v", "d1"), invalid("b", None, "d2"), invalid("a", "v", "d1")], webhook="w")
    assert two.code == 403
    assert two.message == 'admission webhook "w" denied the request: [a: Invalid value: "v": d1, b: Invalid value: null: d2]'


def test_unsupported_schema_keyword_fails_loudly():
    import pytest
    with pytest.raises(ValueError, match="oneOf"):
        schema.check_keywords({"type": "object", "properties": {"a": {"oneOf": []}}})


def test_scale_subresource_replicas_are_checked_as_apiextensions_does():
    from reconciler.schema import validate_scale_spec

    assert validate_scale_spec({"spec": {"replicas": 3}}, ".spec.replicas") == []
    assert validate_scale_spec({"spec": {}}, ".spec.replicas") == []  # absent reads as 0
    [negative] = validate_scale_spec({"spec": {"replicas": -1}}, ".spec.replicas")
    assert str(negative) == ".spec.replicas: Invalid value: -1: should be a non-negative integer"
    [big] = validate_scale_spec({"spec": {"replicas": 2**31}}, ".spec.replicas")
    assert str(big) == ".spec.replicas: Invalid value: 2147483648: should be less than or equal to 2147483647"
    # Recorded live (kube-apiserver v1.35.8, PyTorchJob with replicas "2").
    [typed] = validate_scale_spec({"spec": {"w": {"replicas": "2"}}}, ".spec.w.replicas")
    assert str(typed) == (".spec.w.replicas: Invalid value: 0: .spec.w.replicas accessor error: 2 is of the type "
                          "string, expected int64")
