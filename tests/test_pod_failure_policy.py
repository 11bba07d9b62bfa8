"""Job podFailurePolicy matching against kubernetes' matchPodFailurePolicy vectors
(pkg/controller/job/pod_failure_policy_test.go, quoted in shared/reference/volcano-jobset-restart.md §2.3)."""

import pytest

from reconciler.batch import match_pod_failure_policy


def pod(exits: dict[str, int] | None = None, conditions: list[dict] | None = None) -> dict:
    statuses = [{"name": name, "state": {"terminated": {"exitCode": code}}} for name, code in (exits or {}).items()]
    return {"metadata": {"name": "mypod", "namespace": "default"},
            "status": {"phase": "Failed", "containerStatuses": statuses, "conditions": conditions or []}}


def exit_rule(action: str, operator: str, values: list[int], **extra) -> dict:
    return {"action": action, "onExitCodes": {"operator": operator, "values": values, **extra}}


def condition_rule(action: str, status: str = "True") -> dict:
    return {"action": action, "onPodConditions": [{"type": "DisruptionTarget", "status": status}]}


DISRUPTED = [{"type": "DisruptionTarget", "status": "True"}]


def msg(code: int, index: int) -> str:
    return (f"Container main-container for pod default/mypod failed with exit code {code} "
            f"matching FailJob rule at index {index}")


@pytest.mark.parametrize("rules, failed_pod, expected", [
    # unknown action is skipped, the second rule matches
    ([exit_rule("UnknownAction", "In", [1, 2]), exit_rule("FailJob", "In", [2, 3])],
     pod({"main-container": 2}), (msg(2, 1), True, "FailJob")),
    ([condition_rule("UnknownAction"), condition_rule("Ignore")], pod(conditions=DISRUPTED), (None, False, "Ignore")),
    (None, pod({"main-container": 2}), (None, True, None)),
    ([exit_rule("Ignore", "In", [1, 2, 3])], pod({"main-container": 2}), (None, False, "Ignore")),
    ([exit_rule("FailJob", "In", [1, 2, 3])], pod({"main-container": 2}), (msg(2, 0), True, "FailJob")),
    ([exit_rule("FailJob", "NotIn", [111])], pod({"main-container": 111, "support": 0}), (None, True, None)),
    ([exit_rule("FailJob", "NotIn", [0])], pod({"main-container": 1, "support": 0}), (msg(1, 0), True, "FailJob")),
    ([exit_rule("Count", "In", [1, 2, 3]), exit_rule("FailJob", "In", [4, 5, 6])],
     pod({"main-container": 6}), (msg(6, 1), True, "FailJob")),
    # FailIndex needs backoffLimitPerIndex (not modelled): skipped like an unknown action
    ([exit_rule("FailIndex", "In", [1, 2, 3])], pod({"main-container": 2}), (None, True, None)),
    ([condition_rule("Ignore", "False")], pod(conditions=[{"type": "DisruptionTarget", "status": "False"}]),
     (None, False, "Ignore")),
    ([condition_rule("Ignore", "Unknown")], pod(conditions=[{"type": "DisruptionTarget", "status": "Unknown"}]),
     (None, False, "Ignore")),
    ([condition_rule("Ignore", "False")], pod(conditions=DISRUPTED), (None, True, None)),
    ([condition_rule("Ignore", "True")], pod(conditions=[{"type": "DisruptionTarget", "status": "False"}]),
     (None, True, None)),
    ([condition_rule("FailJob")], pod(conditions=DISRUPTED),
     ("Pod default/mypod has condition DisruptionTarget matching FailJob rule at index 0", True, "FailJob")),
    ([condition_rule("Count")], pod(conditions=DISRUPTED), (None, True, "Count")),
    # "no rule matched" vector: the first rule Count NotIn{8} matches exit 32
    ([exit_rule("Count", "NotIn", [8]), exit_rule("Ignore", "In", [1, 2, 3]), exit_rule("FailJob", "In", [5, 6, 7]),
      condition_rule("Ignore"), condition_rule("FailJob")], pod({"main-container": 32}), (None, True, "Count")),
])
def test_match_pod_failure_policy(rules, failed_pod, expected):
    policy = {"rules": rules} if rules is not None else None
    assert match_pod_failure_policy(policy, failed_pod) == expected


def test_container_name_restricts_the_rule():
    rules = {"rules": [exit_rule("FailJob", "In", [2], containerName="sidecar")]}
    assert match_pod_failure_policy(rules, pod({"main": 2, "sidecar": 0})) == (None, True, None)
    assert match_pod_failure_policy(rules, pod({"main": 0, "sidecar": 2}))[2] == "FailJob"


def test_a_pod_ended_by_deletion_has_no_exit_code_to_match():
    stopped = {"metadata": {"name": "p", "namespace": "default"},
               "status": {"phase": "Failed", "containerStatuses": [{"name": "main", "state": {"running": {}}}]}}
    assert match_pod_failure_policy({"rules": [exit_rule("FailJob", "NotIn", [0])]}, stopped) == (None, True, None)
