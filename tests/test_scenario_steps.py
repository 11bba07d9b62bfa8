"""Scenario rows (``steps``): loading, schema errors that name the row and step, and the render
backend running steps - including a ``never`` that must catch what it forbids."""

import textwrap
from pathlib import Path

import pytest

from conformance import expectations
from conformance.backends import render
from conformance.cases import BrokenCase, Case, load_all

JOBSET = """\
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js}
spec:
  failurePolicy: {maxRestarts: 1}
  replicatedJobs:
    - name: w
      replicas: 2
      template:
        spec:
          parallelism: 1
          completions: 1
          backoffLimit: 0
          template:
            spec:
              restartPolicy: Never
              containers: [{name: main, image: busybox}]
"""


@pytest.fixture
def cases_root(tmp_path):
    root = tmp_path / "cases"
    (root / "js" / "_bases").mkdir(parents=True)
    (root / "js" / "_bases" / "js.yaml").write_text(JOBSET)
    return root


def load(cases_root, rows: str):
    header = "table: demo\nsuite: jobset\nbases: {js: _bases/js.yaml}\ndefaults: {inputs: [{base: js}]}\nrows:\n"
    (cases_root / "js" / "demo.yaml").write_text(header + textwrap.dedent(rows))
    return load_all(cases_root)


GOOD = """\
- id: good
  title: a scenario that loads
  patch: {js: [{op: replace, path: /spec/failurePolicy/maxRestarts, value: 2}]}
  steps:
    - apply: inputs
    - {fault: podExit, replicatedJob: w, jobIndex: 1, pod: 0, exitCode: 3, repeat: 2}
    - name: look
      expect: {counts: [{apiVersion: batch/v1, kind: Job, count: 2}]}
      never: [{coexist: [{apiVersion: v1, kind: Pod}, {apiVersion: batch/v1, kind: Job}]}]
"""


def test_scenario_row_loads_with_resolved_steps(cases_root):
    [case] = load(cases_root, GOOD)
    assert isinstance(case, Case) and case.inputs == [] and case.expect == {}
    apply, fault, check = case.steps
    assert apply.apply[0]["spec"]["failurePolicy"]["maxRestarts"] == 2  # the row's patch applies to step inputs
    assert fault.fault == {"fault": "podExit", "replicatedJob": "w", "jobIndex": 1, "pod": 0, "exitCode": 3}
    assert fault.repeat == 2 and fault.name == "podExit replicatedJob=w jobIndex=1 pod=0 exitCode=3 repeat=2"
    assert (check.name, check.label) == ("look", "step 3 (look)")
    assert case.profiles() == ["jobset-v0.10", "jobset-v0.12"]


@pytest.mark.parametrize("step, message", [
    ("{apply: inputs, fault: podSucceed, pod: all}", "a step has at most one action: `apply`, `update`, `delete` or `fault` (at steps/0)"),
    ("{apply: inputs, update: {apiVersion: v1, kind: Pod, name: p, patch: [{op: remove, path: /spec}]}}",
     "a step has at most one action: `apply`, `update`, `delete` or `fault` (at steps/0)"),
    ("{update: {apiVersion: v1, kind: Pod, name: p, patch: [{op: remove, path: /spec}]}, delete: {apiVersion: v1, kind: Pod, name: p}}",
     "a step has at most one action: `apply`, `update`, `delete` or `fault` (at steps/0)"),
    ("{delete: {apiVersion: batch/v1, kind: Job, name: j, propagationPolicy: Orphan}}",
     "'Orphan' is not one of ['Background', 'Foreground'] (at steps/0/delete/propagationPolicy)"),
    ("{delete: {kind: Job, name: j}}", "'apiVersion' is a required property (at steps/0/delete)"),
    ("{name: nothing}", "a step needs `apply`, `update`, `delete`, `fault`, `expect` or `never` (at steps/0)"),
    ("{fault: podSucceed, pod: all, exitCode: 1}", "`exitCode` belongs to fault podExit (at steps/0)"),
    ("{fault: podExit, pod: 0}", "'exitCode' is a required property (at steps/0)"),
    ("{fault: podExit, exitCode: 1}", "'pod' is a dependency of 'fault' (at steps/0)"),
    ("{fault: podEvicted, pod: 0, job: a, replicatedJob: w}", "give `job` or `replicatedJob`, not both (at steps/0)"),
    ("{fault: meteorStrike, pod: 0}", "'meteorStrike' is not one of"),
    ("{never: [{coexist: [{apiVersion: v1, kind: Pod}]}]}", "(at steps/0/never/0)"),
])
def test_bad_step_names_row_and_step(cases_root, step, message):
    [case] = load(cases_root, f"- id: bad\n  title: a broken scenario step\n  steps: [{step}]\n")
    assert isinstance(case, BrokenCase)
    assert case.error.startswith("cases/js/demo.yaml, row 1 (id 'bad'): ") and message in case.error


def test_expect_and_steps_together_is_an_error(cases_root):
    rows = "- id: both\n  title: one situation or a scenario\n  expect: {counts: []}\n  steps: [{apply: inputs}]\n"
    [case] = load(cases_root, rows)
    assert "a row has `expect` (one situation) or `steps` (a scenario), not both" in case.error


def test_bad_base_in_a_step_names_the_step(cases_root):
    rows = "- id: b\n  title: applies a missing base\n  steps: [{apply: inputs}, {apply: [{base: nope}]}]\n"
    [case] = load(cases_root, rows)
    assert "row 1 (id 'b'): step 2 (apply): unknown base 'nope'" in case.error


def test_patch_for_a_base_no_step_applies(cases_root):
    rows = ("- id: p\n  title: patches what it never applies\n  patch: {other: []}\n"
            "  steps: [{apply: inputs}]\n")
    [case] = load(cases_root, rows)
    assert "`patch` names base(s) ['other'] that no step applies" in case.error


def hold_and_fail_steps(cases_root, strategy: str):
    rows = f"""\
    - id: s
      title: hold one old pod, then fail the other Job
      patch: {{js: [{{op: add, path: /spec/failurePolicy/restartStrategy, value: {strategy}}}]}}
      steps:
        - apply: inputs
        - {{fault: holdTermination, replicatedJob: w, jobIndex: 0, pod: 0}}
        - fault: podExit
          replicatedJob: w
          jobIndex: 1
          pod: 0
          exitCode: 1
          never:
            - coexist:
                - {{apiVersion: batch/v1, kind: Job, metadata: {{labels: {{jobset.sigs.k8s.io/restart-attempt: "0"}}}}}}
                - {{apiVersion: batch/v1, kind: Job, metadata: {{labels: {{jobset.sigs.k8s.io/restart-attempt: "1"}}}}}}
    """
    [case] = load(cases_root, rows)
    return case.steps


def test_never_catches_recreate_and_passes_blocking_recreate(cases_root):
    recreate = render.run_steps(hold_and_fail_steps(cases_root, "Recreate"), "jobset-v0.12")
    assert len(recreate[2].never_violations) == 1
    assert recreate[2].never_violations == [
        "never together: Job labels {'jobset.sigs.k8s.io/restart-attempt': '0'}: js-w-0; "
        "Job labels {'jobset.sigs.k8s.io/restart-attempt': '1'}: js-w-1"]
    assert expectations.check({}, recreate[2]) == recreate[2].never_violations
    blocking = render.run_steps(hold_and_fail_steps(cases_root, "BlockingRecreate"), "jobset-v0.12")
    assert blocking[2].never_violations == []


def test_step_outcomes_are_snapshots(cases_root):
    [case] = load(cases_root, GOOD)
    outcomes = render.run_steps(case.steps, "jobset-v0.12")
    restarts = [next(o for o in out.objects if o["kind"] == "JobSet")["status"]["restarts"] for out in outcomes]
    assert restarts == [0, 2, 2]


def test_fault_selecting_nothing_fails_the_step(cases_root):
    rows = "- id: f\n  title: fails a pod that is not there\n  steps: [{apply: inputs}, {fault: podExit, job: nope, pod: 0, exitCode: 1}]\n"
    [case] = load(cases_root, rows)
    outcomes = render.run_steps(case.steps, "jobset-v0.12")
    assert outcomes[1].input_errors == ["fault podExit job=nope pod=0 exitCode=1 selects no pod"]


def test_live_timeout_is_read_per_step_and_kept_out_of_the_fault():

    root = Path(__file__).resolve().parent.parent / "cases"
    [case] = [c for c in load_all(root / "jobset") if getattr(c, "id", "") == "default-backoff-limit-6"]
    timeouts = [step.live_timeout for step in case.steps]
    assert timeouts == [None, 400, None]
    assert "liveTimeout" not in case.steps[1].fault
    assert "liveTimeout" not in case.steps[1].name


def test_reconcile_errors_expectation_needs_each_listed_error_verbatim():
    from conformance.outcome import Outcome

    outcome = Outcome(objects=[], reconcile_errors=["MPIJob default/pi: Found validation errors: x", "MPIJob default/pi: y"])
    assert expectations.check({"reconcileErrors": ["MPIJob default/pi: y"]}, outcome) == []
    [failure] = expectations.check({"reconcileErrors": ["MPIJob default/pi: Found validation errors"]}, outcome)
    assert failure.startswith("expected the reconcile error 'MPIJob default/pi: Found validation errors'; reported: ")
    assert expectations.check({"reconcileErrors": ["z"]}, Outcome(objects=[]))[0].endswith("reported: none")
    assert expectations.check({"reconcileErrors": []}, Outcome(objects=[])) == []
    assert expectations.check({"reconcileErrors": []}, outcome) == [
        "expected no reconcile error; reported: 'MPIJob default/pi: Found validation errors: x'; 'MPIJob default/pi: y'"]


def _run(cases_root, rows: str):
    [case] = load(cases_root, rows)
    assert isinstance(case, Case), case
    return case, render.run_steps(case.steps, "jobset-v0.12")


def _kinds(outcome) -> dict[str, int]:
    counts: dict[str, int] = {}
    for obj in outcome.objects:
        counts[obj["kind"]] = counts.get(obj["kind"], 0) + 1
    return counts


def test_a_delete_step_deletes_as_kubectl_and_the_garbage_collector_takes_the_dependents(cases_root):
    """Background (kubectl's default): the JobSet goes at once, then its Jobs, their pods and the Service."""
    case, (applied, deleted) = _run(cases_root, """\
        - id: delete-background
          title: a deleted JobSet takes its children with it
          steps:
            - apply: inputs
            - delete: {apiVersion: jobset.x-k8s.io/v1alpha2, kind: JobSet, name: js}
        """)
    assert _kinds(applied) == {"JobSet": 1, "Job": 2, "Pod": 2, "Service": 1}
    assert _kinds(deleted) == {} and not deleted.input_errors
    assert case.steps[1].name == "delete JobSet js"


def test_a_foreground_delete_waits_for_blocking_dependents(cases_root):
    """Foreground: the owner keeps a deletionTimestamp and the foregroundDeletion finalizer while a
    pod its Job owns is held by a finalizer (holdTermination), and goes once it is released."""
    _, (_, _, held, released) = _run(cases_root, """\
        - id: delete-foreground
          title: a JobSet deleted in Foreground waits for its Jobs' pods
          steps:
            - apply: inputs
            - {fault: holdTermination, replicatedJob: w, jobIndex: 0, pod: 0}
            - delete: {apiVersion: jobset.x-k8s.io/v1alpha2, kind: JobSet, name: js, propagationPolicy: Foreground}
            - {fault: releaseTermination, replicatedJob: w, jobIndex: 0, pod: 0}
        """)
    [jobset] = [o for o in held.objects if o["kind"] == "JobSet"]
    assert jobset["metadata"]["deletionTimestamp"] and "foregroundDeletion" in jobset["metadata"]["finalizers"]
    assert _kinds(released) == {}


def test_deleting_what_does_not_exist_is_an_error_of_the_case(cases_root):
    case, (_, deleted) = _run(cases_root, """\
        - id: delete-missing
          title: a typo in a delete step must not pass silently
          steps:
            - apply: inputs
            - delete: {apiVersion: batch/v1, kind: Job, name: no-such-job}
        """)
    assert deleted.input_errors == ["delete: Job default/no-such-job does not exist"]
    assert expectations.check({}, deleted) == deleted.input_errors


def test_wait_before_puts_seconds_between_two_steps_and_stays_out_of_the_fault(cases_root):
    """Render's logical clock moves on by `waitBefore` before the step's action: the pod failed after
    the wait carries a later time than one failed right after its step (live sleeps as long)."""
    case, (_, first, second) = _run(cases_root, """\
        - id: wait-before
          title: two failures 30 seconds apart
          steps:
            - apply: inputs
            - {fault: podExit, replicatedJob: w, jobIndex: 0, pod: 0, exitCode: 1}
            - {fault: podExit, replicatedJob: w, jobIndex: 1, pod: 0, exitCode: 1, waitBefore: 30}
        """)
    assert [s.wait_before for s in case.steps] == [0, 0, 30]
    assert "waitBefore" not in case.steps[2].fault and "waitBefore" not in case.steps[2].name

    import datetime as dt

    def latest(outcome) -> dt.datetime:
        """The newest time stamped on any object of the outcome (a creation, a condition)."""
        stamps, todo = [], list(outcome.objects)
        while todo:
            item = todo.pop()
            values = item.values() if isinstance(item, dict) else item if isinstance(item, list) else []
            for value in values:
                if isinstance(value, (dict, list)):
                    todo.append(value)
                elif isinstance(value, str) and len(value) == 20 and value.endswith("Z") and value[10:11] == "T":
                    stamps.append(dt.datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ"))
        return max(stamps)

    assert latest(second) - latest(first) >= dt.timedelta(seconds=30)
