"""Golden normalization rules that are not about a single backend."""

import pytest

from conformance.normalize import VERSION_AFTER_FINISH, normalize


def _volcano_job(phase: str, version: int) -> dict:
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": "train", "namespace": "default"},
            "status": {"state": {"phase": phase}, "version": version}}


@pytest.mark.parametrize("phase", ["Aborted", "Completed", "Failed", "Terminated"])
def test_volcano_version_after_finish_is_masked(phase):
    [job] = normalize([_volcano_job(phase, 4)], status=True)
    assert job["status"]["version"] == VERSION_AFTER_FINISH


@pytest.mark.parametrize("phase", ["Pending", "Running", "Restarting", "Aborting"])
def test_volcano_version_before_finish_is_compared(phase):
    # Before the Job finished, each restart bumps the version exactly once: a real contract.
    [job] = normalize([_volcano_job(phase, 2)], status=True)
    assert job["status"]["version"] == 2


def test_batch_job_status_is_not_touched_by_the_volcano_rule():
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "default"},
           "status": {"failed": 1, "version": 3}}
    assert normalize([job], status=True)[0]["status"] == {"failed": 1, "version": 3}


def test_an_owner_reference_to_an_object_that_is_gone_names_it():
    # A held pod outlives its StatefulSet: render's counter UID and a live UUID must read the same.
    from conformance.normalize import normalize

    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": "web-1", "namespace": "default", "uid": "u-pod",
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "uid": "u-old"}]}}
    [out] = normalize([pod])
    assert out["metadata"]["ownerReferences"][0]["uid"] == "uid of StatefulSet default/web, gone"


def test_revisions_of_a_statefulset_being_deleted_are_left_out():
    # kube-controller-manager makes them again while the garbage collector deletes them: a race.
    from conformance.normalize import normalize

    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet",
           "metadata": {"name": "web", "namespace": "default", "uid": "u-sts", "deletionTimestamp": "t"}}
    revision = {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": {
        "name": "web-abc", "namespace": "default", "uid": "u-rev",
        "ownerReferences": [{"kind": "StatefulSet", "name": "web", "uid": "u-sts", "controller": True}]}}
    assert [o["kind"] for o in normalize([sts, revision])] == ["StatefulSet"]
    del sts["metadata"]["deletionTimestamp"]
    assert [o["kind"] for o in normalize([sts, revision])] == ["ControllerRevision", "StatefulSet"]


def test_a_pod_of_a_statefulset_that_is_gone_says_its_revision_is_gone_too():
    from conformance.normalize import normalize

    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": "web-1", "namespace": "default", "uid": "u-pod", "labels": {"controller-revision-hash": "web-abc"},
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "uid": "u-old",
                             "controller": True}]}}
    [out] = normalize([pod])
    assert out["metadata"]["labels"]["controller-revision-hash"] == "<a revision of StatefulSet default/web, gone>"


def test_a_finished_volcano_jobs_counters_are_timing_dependent():
    from conformance.normalize import COUNTERS_AFTER_FINISH, VERSION_AFTER_FINISH, normalize

    job = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "j", "namespace": "d", "uid": "u"},
           "status": {"state": {"phase": "Failed"}, "version": 2, "failed": 1, "taskStatusCount": {"w": {}}, "retryCount": 1}}
    [out] = normalize([job], status=True)
    assert out["status"] == {"state": {"phase": "Failed"}, "version": VERSION_AFTER_FINISH, "retryCount": 1,
                             "podCounters": COUNTERS_AFTER_FINISH}
    job["status"]["state"]["phase"] = "Running"
    [out] = normalize([job], status=True)
    assert out["status"]["failed"] == 1 and "podCounters" not in out["status"]


def test_a_name_generated_from_a_prefix_longer_than_58_characters_reads_as_its_generate_name():
    # The apiserver (names.SimpleNameGenerator) cuts a generateName to 63 - 5 = 58 characters before
    # adding its 5-character suffix: a long MPIJob's launcher Job gives its pod such a prefix.
    prefix = "abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghij-launcher-"
    assert len(prefix) > 58
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": prefix[:58] + "hslqg", "generateName": prefix, "namespace": "default"}}
    [out] = normalize([pod])
    assert out["metadata"]["name"] == prefix + "*"
    # a name that is not prefix[:58] + 5 suffix characters stays itself
    pod["metadata"]["name"] = prefix[:57] + "xhslqg"
    [out] = normalize([pod])
    assert out["metadata"]["name"] == prefix[:57] + "xhslqg"


def test_render_cuts_a_long_generate_name_as_the_apiserver_does():
    from reconciler.cluster import GENERATED_PREFIX_MAX
    from reconciler import new_cluster, profiles

    cluster = new_cluster(profiles.get("trainer-v2.3"))
    prefix = "x" * 70 + "-"
    made = cluster.create({"apiVersion": "v1", "kind": "ConfigMap",
                           "metadata": {"generateName": prefix, "namespace": "default"}})
    assert GENERATED_PREFIX_MAX == 58
    assert made["metadata"]["name"].startswith("x" * 58) and len(made["metadata"]["name"]) == 63


def test_a_condition_keeps_whether_it_has_a_transition_time_not_when():
    def jobset(*conditions):
        return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
                "metadata": {"name": "js", "namespace": "default"},
                "status": {"restarts": 1, "conditions": list(conditions)}}
    stamped = {"type": "Failed", "status": "True", "lastTransitionTime": "2026-01-01T10:00:00Z"}
    unstamped = {"type": "Failed", "status": "True", "lastTransitionTime": None}
    [a] = normalize([jobset(stamped)], status=True)
    [b] = normalize([jobset(dict(stamped, lastTransitionTime="2026-01-02T11:30:00Z"))], status=True)
    [c] = normalize([jobset(unstamped)], status=True)
    assert a == b  # when is timing...
    assert a["status"]["conditions"][0]["lastTransitionTime"] == "<set>"
    assert c != a  # ...that it is there is not
    assert c["status"]["conditions"][0]["lastTransitionTime"] is None


def test_pod_conditions_and_other_times_are_dropped():
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
           "status": {"phase": "Failed", "startTime": "2026-01-01T10:00:00Z", "conditions": [
               {"type": "DisruptionTarget", "status": "True", "lastTransitionTime": "2026-01-01T10:00:00Z"}]}}
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "default"},
           "status": {"startTime": "2026-01-01T10:00:00Z", "completionTime": "2026-01-01T10:01:00Z"}}
    [j, p] = sorted(normalize([pod, job], status=True), key=lambda o: o["kind"])
    assert j["status"] == {} and "startTime" not in p["status"]
    assert p["status"]["conditions"] == [{"type": "DisruptionTarget", "status": "True"}]
