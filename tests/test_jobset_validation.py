"""JobSet's validating webhook (pkg/webhooks/jobset_webhook.go ValidateCreate at v0.10.1 / v0.12.0):
rules, apimachinery's DNS checks, and how a denial is worded per version."""

import pytest

from reconciler import new_cluster
from reconciler.errors import Rejection
from reconciler.jobset.validation import dns1035_label, dns1123_subdomain

RJ = {"template": {"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "busybox"}]}}}}}


def jobset(name="js", **spec):
    rjobs = spec.pop("replicatedJobs", [{"name": "leader", **RJ}, {"name": "workers", "replicas": 2, **RJ}])
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": name},
            "spec": {"replicatedJobs": rjobs, **spec}}


def denial(profile: str, obj: dict) -> Rejection:
    with pytest.raises(Rejection) as info:
        new_cluster(profile).create(obj)
    return info.value


@pytest.mark.parametrize("value, errors", [
    ("my-name", 0), ("a" * 63, 0), ("a" * 64, 1), ("1abc", 1), ("abc-", 1), ("ABC", 1), ("", 1), ("a" * 64 + "-", 2),
])
def test_dns1035_label(value, errors):
    assert len(dns1035_label(value)) == errors


@pytest.mark.parametrize("value, ok", [("example.com", True), ("1abc", True), ("a..b", False), ("a_b", False),
                                       ("abc.", False)])
def test_dns1123_subdomain(value, ok):
    assert (dns1123_subdomain(value) == []) is ok


def test_v012_wraps_plain_errors_as_internal_and_aggregates():
    obj = jobset(successPolicy={"operator": "All", "targetReplicatedJobs": ["x"]},
                 failurePolicy={"rules": [{"name": "r", "action": "FailJobSet", "targetReplicatedJobs": ["y"]}]})
    err = denial("jobset-v0.12", obj)
    assert (err.code, err.reason) == (422, "Invalid")
    assert err.message == (
        'admission webhook "vjobset.kb.io" denied the request: JobSet.jobset.x-k8s.io "js" is invalid: '
        "[<nil>: Internal error: invalid replicatedJob name 'x' does not appear in .spec.ReplicatedJobs, "
        "<nil>: Internal error: invalid replicatedJob name 'y' in failure policy does not appear in .spec.ReplicatedJobs]")


def test_v010_joins_errors_one_per_line_with_403():
    obj = jobset(successPolicy={"operator": "All", "targetReplicatedJobs": ["x"]},
                 failurePolicy={"rules": [{"name": "r", "action": "FailJobSet", "targetReplicatedJobs": ["y"]}]})
    err = denial("jobset-v0.10", obj)
    assert (err.code, err.reason) == (403, "Forbidden")
    assert err.message == (
        'admission webhook "vjobset.kb.io" denied the request: '
        "invalid replicatedJob name 'x' does not appear in .spec.ReplicatedJobs\n"
        "invalid replicatedJob name 'y' in failure policy does not appear in .spec.ReplicatedJobs")


def test_restart_job_gate_stops_failure_policy_checks():
    obj = jobset(failurePolicy={"rules": [{"name": "1bad", "action": "RestartJob", "targetReplicatedJobs": ["y"]}]})
    err = denial("jobset-v0.12", obj)
    assert len(err.errors) == 1 and "RestartJob feature gate is disabled" in err.errors[0].detail


def test_job_name_too_long_replaces_the_max_length_message():
    err = denial("jobset-v0.12", jobset(name="a" * 60))
    details = [(e.field, e.detail) for e in err.errors]
    assert ("spec.replicatedJobs[0].name",
            "JobSet name is too long, job names generated for this JobSet will exceed 63 characters") in details
    assert all("must be no more than" not in d for _, d in details)


def test_unique_rule_names_and_valid_reasons_are_admitted():
    obj = jobset(failurePolicy={"rules": [{"name": "a:b,c_", "action": "FailJobSet",
                                           "onJobFailureReasons": ["PodFailurePolicy", "DeadlineExceeded"]},
                                          {"name": "b", "action": "RestartJobSet"}]})
    new_cluster("jobset-v0.12").create(obj)


def test_jobset_v08_trainer_v20_has_no_group_name_check_and_plain_name_errors():
    # Trainer v2.0 installs JobSet v0.8.2: no groupName in the CRD (so none defaulted, none checked), and
    # too-long generated names are plain errors (field paths came with PR #869, v0.9.0).
    err = denial("trainer-v2.0", jobset(name="a" * 60))
    assert err.code == 403
    assert [(e.field, e.detail) for e in err.errors][:1] == [
        ("", "JobSet name is too long, job names generated for this JobSet will exceed 63 characters")]
    assert all("groupName" not in e.field for e in err.errors)
