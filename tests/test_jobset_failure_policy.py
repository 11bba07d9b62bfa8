"""JobSet failure policy against upstream's unit-test vectors (pkg/controllers/failure_policy_test.go,
quoted in shared/reference/volcano-jobset-restart.md §2.2) and the condition update rules."""

import pytest

from reconciler.jobset import conditions, failure_policy

R1, R2 = "BackoffLimitExceeded", "DeadlineExceeded"
NOW = "2026-01-01T10:00:00Z"


def failed_job(name: str, rjob: str | None = "rj1", reason: str = R1, message: str = "", at: str = NOW) -> dict:
    labels = {failure_policy.REPLICATED_JOB_NAME: rjob} if rjob else {}
    return {"metadata": {"name": name, "labels": labels},
            "status": {"conditions": [{"type": "Failed", "status": "True", "reason": reason, "message": message,
                                       "lastTransitionTime": at}]}}


# TestFailurePolicyRuleIsApplicable
@pytest.mark.parametrize("rule, job, expected", [
    ({}, failed_job("j", "rj1", R1), True),
    ({"onJobFailureReasons": [R1]}, failed_job("j", "rj1", R1), True),
    ({"onJobFailureReasons": [R1]}, failed_job("j", "rj1", R2), False),
    ({"targetReplicatedJobs": ["rj1"]}, failed_job("j", "rj1", R1), True),
    ({"onJobFailureReasons": [R1], "targetReplicatedJobs": ["rj1"]}, failed_job("j", "rj1", R1), True),
    ({"onJobFailureReasons": [R1], "targetReplicatedJobs": ["rj1"]}, failed_job("j", "rj1", R2), False),
    ({"targetReplicatedJobs": ["rj1"]}, failed_job("j", "rj2", R1), False),
    ({"onJobFailureReasons": [R1], "targetReplicatedJobs": ["rj1"]}, failed_job("j", "rj2", R1), False),
    ({"onJobFailureReasons": [R1], "targetReplicatedJobs": ["rj1"]}, failed_job("j", "rj2", R2), False),
    ({"onJobFailureMessagePatterns": ["^job failed because.*"]},
     failed_job("j", message="job failed because of a bug"), True),
    ({"onJobFailureMessagePatterns": ["^job failed because.*"]}, failed_job("j", message="another error message"), False),
    ({"onJobFailureReasons": [R1], "onJobFailureMessagePatterns": [".*bug.*"]},
     failed_job("j", reason=R1, message="job failed because of a bug"), True),
    ({"onJobFailureReasons": [R1], "onJobFailureMessagePatterns": [".*bug.*"]},
     failed_job("j", reason=R1, message="job failed due to something else"), False),
    # A Job without the replicatedjob-name label never matches.
    ({}, failed_job("j", rjob=None), False),
])
def test_rule_is_applicable(rule, job, expected):
    assert failure_policy.rule_applies(rule, job) is expected


def test_invalid_and_non_re2_patterns_are_skipped():
    job = failed_job("j", message="Job has reached the specified backoff limit")
    assert not failure_policy.rule_applies({"onJobFailureMessagePatterns": ["(reached"]}, job)
    assert not failure_policy.rule_applies({"onJobFailureMessagePatterns": ["Job(?= has)"]}, job)
    assert failure_policy.rule_applies({"onJobFailureMessagePatterns": ["(", "backoff"]}, job)


# TestFindFirstFailedPolicyRuleAndJob: job1 -6h, job1Dup -12h (same reason), job2 -3h, job3 -1h.
JOB1 = failed_job("job1", "rj", "BackoffLimitExceeded", at="2026-01-01T04:00:00Z")
JOB1_DUP = failed_job("job1Dup", "rj", "BackoffLimitExceeded", at="2026-01-01T00:00:00Z")
JOB2 = failed_job("job2", "rj", "DeadlineExceeded", at="2026-01-01T07:00:00Z")
JOB3 = failed_job("job3", "rj", "FailedIndexes", at="2026-01-01T09:00:00Z")
RULE1 = {"name": "r1", "action": "FailJobSet", "onJobFailureReasons": ["BackoffLimitExceeded"]}
RULE2 = {"name": "r2", "action": "FailJobSet", "onJobFailureReasons": ["DeadlineExceeded"]}
RULE3 = {"name": "r3", "action": "FailJobSet", "onJobFailureReasons": ["FailedIndexes"]}
UNMATCHED = {"name": "unmatched", "action": "FailJobSet", "targetReplicatedJobs": ["fake"]}


@pytest.mark.parametrize("rules, jobs, expected", [
    ([], [], (None, None)),
    ([], [JOB1], (None, None)),
    ([RULE2], [JOB1], (None, None)),
    ([RULE1, RULE2, RULE3], [JOB1], ("r1", "job1")),
    ([RULE1, RULE2, RULE3], [JOB2], ("r2", "job2")),
    ([RULE1, RULE2, RULE3], [JOB3], ("r3", "job3")),
    ([], [JOB1, JOB2], (None, None)),
    ([RULE2], [JOB1, JOB1_DUP], (None, None)),
    ([RULE1], [JOB1, JOB1_DUP], ("r1", "job1Dup")),
    ([UNMATCHED, RULE1], [JOB1, JOB1_DUP], ("r1", "job1Dup")),
])
def test_find_first_failed_rule_and_job(rules, jobs, expected):
    rule, job = failure_policy.find_rule_and_job(rules, jobs)
    assert ((rule or {}).get("name"), (job or {}).get("metadata", {}).get("name")) == expected


def test_find_first_failed_job():
    assert failure_policy.first_failed([]) is None
    assert failure_policy.first_failed([JOB2])["metadata"]["name"] == "job2"
    assert failure_policy.first_failed([JOB2, JOB1, JOB3])["metadata"]["name"] == "job1"
    not_failed = {"metadata": {"name": "ok"}, "status": {"conditions": [{"type": "Complete", "status": "True"}]}}
    assert failure_policy.first_failed([not_failed, JOB3])["metadata"]["name"] == "job3"


# TestApplyFailurePolicyRuleAction (the vectors without the RestartJob gate).
def jobset(max_restarts: int, rules: list[dict]) -> dict:
    return {"spec": {"failurePolicy": {"maxRestarts": max_restarts, "rules": rules}}}


def reasons(status: dict) -> dict:
    return {c["type"]: (c["status"], c["reason"]) for c in status.get("conditions", [])}


def test_fail_jobset_action():
    status = {"restarts": 0}
    failure_policy.execute(jobset(0, [{"name": "r", "action": "FailJobSet"}]), status, [JOB1], NOW, True)
    assert status["terminalState"] == "Failed"
    assert reasons(status) == {"Failed": ("True", "FailJobSetFailurePolicyAction")}


def test_restart_below_max_default_rule():
    status = {"restarts": 1, "restartsCountTowardsMax": 1}
    failure_policy.execute(jobset(5, []), status, [JOB1], NOW, True)
    assert (status["restarts"], status["restartsCountTowardsMax"]) == (2, 2)
    assert reasons(status) == {"RestartingJobSet": ("True", "DefaultFailurePolicy")}


def test_restart_with_matching_rule():
    status = {"restarts": 1, "restartsCountTowardsMax": 1}
    failure_policy.execute(jobset(5, [{"name": "Rule1", "action": "RestartJobSet"}]), status, [JOB1], NOW, True)
    assert (status["restarts"], status["restartsCountTowardsMax"]) == (2, 2)
    assert reasons(status) == {"RestartingJobSet": ("True", "FailurePolicy_Rule1")}


def test_restart_at_max_fails():
    status = {"restarts": 2, "restartsCountTowardsMax": 2}
    failure_policy.execute(jobset(2, []), status, [JOB1], NOW, True)
    assert (status["restarts"], status["restartsCountTowardsMax"], status["terminalState"]) == (2, 2, "Failed")
    assert reasons(status) == {"Failed": ("True", "ReachedMaxRestarts")}
    assert status["conditions"][0]["message"] == \
        "jobset failed due to reaching max number of restarts (first failed job: job1)"


def test_restart_ignoring_max():
    status = {"restarts": 1, "restartsCountTowardsMax": 1}
    failure_policy.execute(jobset(1, [{"name": "r", "action": "RestartJobSetAndIgnoreMaxRestarts"}]),
                           status, [JOB1], NOW, True)
    assert (status["restarts"], status["restartsCountTowardsMax"]) == (2, 1)


def test_no_policy_fails_with_first_failed_job():
    status = {"restarts": 0}
    failure_policy.execute({"spec": {}}, status, [JOB2, JOB1], NOW, True)
    assert status["conditions"][0]["message"] == \
        "jobset failed due to one or more job failures (first failed job: job1)"


def test_restarting_condition_only_when_the_profile_has_it():
    status = {"restarts": 0}
    failure_policy.execute(jobset(1, []), status, [JOB1], NOW, restarting_condition=False)
    assert status["restarts"] == 1 and "conditions" not in status


def test_restart_job_actions_need_the_gate():
    status = {"restarts": 0}
    error = failure_policy.execute(jobset(1, [{"name": "r", "action": "RestartJob"}]), status, [JOB1], NOW, True)
    assert "feature gate RestartJob is disabled" in error and status == {"restarts": 0}


# updateCondition semantics.
def test_false_condition_is_not_added():
    status = {}
    assert not conditions.set_condition(status, "RestartingJobSet", False, "JobsReady", "all jobs are ready", NOW)
    assert status == {}


def test_reason_change_keeps_transition_time():
    status = {"conditions": [{"type": "RestartingJobSet", "status": "False", "reason": "JobsReady",
                              "message": "all jobs are ready", "lastTransitionTime": "t0"}]}
    assert conditions.set_condition(status, "RestartingJobSet", False, "JobSetFailed", "jobset failed", "t1")
    assert status["conditions"][0]["lastTransitionTime"] == "t0"
    assert conditions.set_condition(status, "RestartingJobSet", True, "DefaultFailurePolicy", "m", "t2")
    assert status["conditions"][0]["lastTransitionTime"] == "t2"
    assert not conditions.set_condition(status, "RestartingJobSet", True, "DefaultFailurePolicy", "m", "t3")


def test_startup_conditions_exclude_each_other():
    status = {"conditions": [{"type": "StartupPolicyInProgress", "status": "True", "reason": "a", "message": "b"}]}
    conditions.set_condition(status, "StartupPolicyCompleted", True, "c", "d", NOW)
    assert [c["status"] for c in status["conditions"]] == ["False", "True"]


def test_delete_jobs_skips_jobs_already_being_deleted_and_waits_for_their_pods():
    # Upstream deleteJobs (pkg/controllers/jobset_controller.go): "Skip deleting jobs with deletion
    # timestamp already set", and every delete is Foreground - a Job goes only after its pods.
    from reconciler.jobset.controller import _delete_jobs

    class Recorder:
        def __init__(self):
            self.calls = []

        def delete_all(self, objs, propagation="Background"):
            self.calls.append(([o["metadata"]["name"] for o in objs], propagation))

    deleting = {"metadata": {"name": "old-0", "deletionTimestamp": NOW}}
    standing = {"metadata": {"name": "old-1"}}
    cluster = Recorder()
    _delete_jobs(cluster, [deleting, standing])
    assert cluster.calls == [(["old-1"], "Foreground")]
