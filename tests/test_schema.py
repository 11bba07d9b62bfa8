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
    obj["spec"]["template"]["spec"]["replicatedJobs"][0]["template"] = {
        "metadata": {"labels": {"a": "b"}, "anything": 1},
        "spec": {"backoffLimit": 1, "anyJobField": 1, "template": {"spec": {"anything": 1, "containers": []}}}}
    out, pruned = schema.prune_and_default(obj, RUNTIME)
    # The job spec is preserved beyond its listed fields; its metadata is an embedded ObjectMeta and its pod
    # template core/v1 PodTemplateSpec in full (upstream's CRD), so unknown fields there are pruned.
    job_template = "spec.template.spec.replicatedJobs[0].template"
    assert pruned == ["spec.mlPolicy.bogus", f"{job_template}.metadata.anything", f"{job_template}.spec.template.spec.anything"]
    assert "bogus" not in out["spec"]["mlPolicy"]
    template = out["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]
    assert template["metadata"] == {"labels": {"a": "b"}}
    assert template["spec"] == {"backoffLimit": 1, "anyJobField": 1, "template": {"spec": {"containers": []}}}


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


# ---------------------------------------------------------------- scale subresource (apiextensions validator.go)

_SCALE = {"specReplicasPath": ".spec.workers.replicas", "statusReplicasPath": ".status.active",
          "labelSelectorPath": ".status.selector"}


def test_scale_paths_absent_or_in_range_are_fine():
    from reconciler.schema import validate_scale

    assert validate_scale({"spec": {}}, _SCALE) == []
    assert validate_scale({"spec": {"workers": {"replicas": 0}}, "status": {"active": 2, "selector": "a=b"}}, _SCALE) == []
    assert validate_scale({"spec": {"workers": {"replicas": -1}}}, None) == []


def test_scale_replicas_out_of_range_are_invalid_at_the_path_as_the_crd_spells_it():
    from reconciler.schema import validate_scale

    [negative] = validate_scale({"spec": {"workers": {"replicas": -1}}}, _SCALE)
    assert str(negative) == ".spec.workers.replicas: Invalid value: -1: should be a non-negative integer"
    assert not negative.blocking  # field.Invalid: CEL still runs
    [too_big] = validate_scale({"spec": {"workers": {"replicas": 2**31}}}, _SCALE)
    assert str(too_big) == ".spec.workers.replicas: Invalid value: 2147483648: should be less than or equal to 2147483647"


def test_scale_values_of_another_type_get_the_unstructured_accessor_error():
    """unstructured.NestedInt64 / NestedString / NestedFieldNoCopy wording, value 0 (or "")."""
    from reconciler.schema import validate_scale

    [string] = validate_scale({"spec": {"workers": {"replicas": "2"}}}, _SCALE)
    assert str(string) == (".spec.workers.replicas: Invalid value: 0: .spec.workers.replicas accessor error: "
                           "2 is of the type string, expected int64")
    [not_a_map] = validate_scale({"spec": {"workers": 3}}, _SCALE)
    assert not_a_map.detail == (".spec.workers.replicas accessor error: 3 is of the type int64, "
                                "expected map[string]interface{}")
    [selector] = validate_scale({"status": {"selector": 1.5}}, _SCALE)
    assert str(selector) == ('.status.selector: Invalid value: "": .status.selector accessor error: '
                             "1.5 is of the type float64, expected string")


def test_nulls_are_pruned_when_a_request_is_decoded_but_not_after_a_mutating_webhook():
    """apiextensions-apiserver: unstructuredSchemaCoercer (request decoding) prunes non-nullable nulls;
    the object a mutating webhook patched is only defaulted, so its nulls reach validation."""
    obj = runtime({"mpi": {}})
    obj["spec"]["template"]["spec"]["replicatedJobs"][0]["template"] = {
        "spec": {"template": {"spec": {"containers": None}}}}
    pod_spec = lambda o: o["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]  # noqa: E731
    decoded, _ = schema.prune_and_default(obj, RUNTIME)
    assert "containers" not in pod_spec(decoded)
    patched, _ = schema.prune_and_default(obj, RUNTIME, nulls=False)
    assert pod_spec(patched) == {"containers": None}
