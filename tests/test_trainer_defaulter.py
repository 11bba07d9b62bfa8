"""Trainer's mutating webhook (v2.2+) refuses TrainJobs its Go types cannot decode, before the schema.

Expected messages are what Go's encoding/json returns for the same JSON decoded into structs with
Trainer's field types (checked with Go 1.26), and what Trainer v2.3.0 returned live.
"""

import pytest

from reconciler import crds, render
from reconciler.trainer.defaulter import decode_error

SCHEMA = crds.schemas(("trainer-v2.3", "jobset"))[("trainer.kubeflow.org", "v1alpha1", "TrainJob")][0]


@pytest.mark.parametrize("obj, message", [
    ({"spec": {"trainer": {"env": [{"name": "A", "value": 5}], "numNodes": "two"}}},
     "json: cannot unmarshal number into Go struct field EnvVar.spec.trainer.env.value of type string"),
    ({"spec": {"trainer": {"numNodes": 2.5}}},
     "json: cannot unmarshal number 2.5 into Go struct field Trainer.spec.trainer.numNodes of type int32"),
    ({"spec": {"suspend": "yes"}}, "json: cannot unmarshal string into Go struct field TrainJobSpec.spec.suspend of type bool"),
    ({"spec": {"trainer": {"numNodes": {"a": 1}}}},
     "json: cannot unmarshal object into Go struct field Trainer.spec.trainer.numNodes of type int32"),
    ({"spec": {"trainer": {"numNodes": 2, "resourcesPerNode": {"requests": {"cpu": "2"}}}}}, None),
])
def test_decode_errors_read_like_go(obj, message):
    assert decode_error(obj, SCHEMA) == message


def test_v23_answers_400_before_the_schema_and_v21_leaves_it_to_the_schema(torch_runtime, torch_trainjob):
    torch_trainjob["spec"]["trainer"]["numNodes"] = "two"
    (v23,) = render([torch_runtime, torch_trainjob], profile="trainer-v2.3").rejections
    assert (v23.error.code, v23.error.reason) == (400, "")
    assert v23.error.message == ('admission webhook "defaulter.trainjob.trainer.kubeflow.org" denied the request: json: '
                                 "cannot unmarshal string into Go struct field Trainer.spec.trainer.numNodes of type int32")
    (v21,) = render([torch_runtime, torch_trainjob], profile="trainer-v2.1").rejections
    assert v21.error.code == 422
