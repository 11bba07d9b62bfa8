"""The reference reconciler's admission webhook server, answered in memory (no apiserver)."""

from __future__ import annotations

import base64
import json

import jsonpatch

import reconciler
from reconciler.live.webhook import WebhookServer


def _server(profile: str) -> WebhookServer:
    server = WebhookServer(api=None, cluster=reconciler.new_cluster(profile))
    server.httpd.server_close()  # only answer() is exercised
    return server


def _route(server: WebhookServer, name: str):
    [(path, route)] = [(p, r) for p, r in server.routes.items() if r.name == name]
    return path, route


def _review(obj: dict) -> dict:
    return {"request": {"uid": "u1", "object": obj}}


def _jobset_pod() -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "js-w-0-0-abcde", "namespace": "ns",
                         "labels": {"jobset.sigs.k8s.io/jobset-name": "js"},
                         "annotations": {"jobset.sigs.k8s.io/jobset-name": "js"}},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]}}


def test_jobset_pod_webhook_is_registered_as_upstream_registers_it():
    path, route = _route(_server("jobset-v0.12"), "mpod.kb.io")
    assert (route.kind, route.group, route.versions, route.resource_kind) == ("mutate", "", ("v1",), "Pod")
    # Only pods with a JobSet name label reach it (upstream's objectSelector).
    assert route.selector == {"matchExpressions": [{"key": "jobset.sigs.k8s.io/jobset-name", "operator": "Exists"}]}


def test_jobset_pod_webhook_answers_with_the_priority_label_patch():
    server = _server("jobset-v0.12")
    path, _ = _route(server, "mpod.kb.io")
    response = server.answer(path, _review(_jobset_pod()))["response"]
    assert response["allowed"] is True
    patch = json.loads(base64.b64decode(response["patch"]))
    patched = jsonpatch.apply_patch(_jobset_pod(), patch)
    # spec.priority absent and no priorityClassName: the Priority admission plugin's 0 (pod_webhook.py).
    assert patched["metadata"]["labels"]["jobset.sigs.k8s.io/priority"] == "0"


def test_a_422_denial_carries_one_cause_per_field_error():
    server = _server("jobset-v0.12")
    path, _ = _route(server, "vjobset.kb.io")
    jobset = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "js", "namespace": "ns"},
              "spec": {"replicatedJobs": [{"name": "w", "groupName": "Group-A", "replicas": 1, "template": {
                  "spec": {"template": {"spec": {"restartPolicy": "Never",
                                                 "containers": [{"name": "c", "image": "busybox"}]}}}}}]}}
    status = server.answer(path, _review(jobset))["response"]["status"]
    assert (status["code"], status["reason"]) == (422, "Invalid")
    assert status["message"].startswith('JobSet.jobset.x-k8s.io "js" is invalid: spec.replicatedJobs[0].groupName')
    [cause] = status["details"]["causes"]
    assert cause["reason"] == "FieldValueInvalid"
    assert cause["field"] == "spec.replicatedJobs[0].groupName"
    assert cause["message"].startswith('Invalid value: "Group-A": a DNS-1035 label')


def _lws(size: int = 2, subgroup: int | None = None) -> dict:
    lwt = {"size": size, "workerTemplate": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}}
    if subgroup is not None:
        lwt["subGroupPolicy"] = {"subGroupSize": subgroup}
    return {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
            "metadata": {"name": "lws", "namespace": "ns"},
            "spec": {"replicas": 1, "leaderWorkerTemplate": lwt, "rolloutStrategy": {  # as the defaulter left it
                "type": "RollingUpdate", "rollingUpdateConfiguration": {"partition": 0, "maxUnavailable": 1, "maxSurge": 0}}}}


def test_lws_webhooks_are_registered_by_their_upstream_names_for_create_and_update():
    server = _server("lws-v0.7")
    assert _route(server, "mleaderworkerset.kb.io")[1].operations == ("CREATE", "UPDATE")
    assert _route(server, "vleaderworkerset.kb.io")[1].operations == ("CREATE", "UPDATE")
    # LWS's pod webhook only (JobSet's, of the same name, belongs to a JobSet installation), CREATE only.
    _, pod_route = _route(server, "mpod.kb.io")
    assert pod_route.operations == ("CREATE",)
    assert pod_route.selector == {"matchExpressions": [{"key": "leaderworkerset.sigs.k8s.io/name", "operator": "Exists"}]}
    assert "mpod.kb.io" not in [r.name for r in _server("volcano-v1.12").routes.values()]


def test_an_update_review_is_validated_against_the_old_object():
    server = _server("lws-v0.7")
    path, _ = _route(server, "vleaderworkerset.kb.io")
    review = {"request": {"uid": "u", "operation": "UPDATE", "object": _lws(4, subgroup=4), "oldObject": _lws(4, subgroup=2)}}
    status = server.answer(path, review)["response"]["status"]
    assert status["code"] == 403
    assert status["message"] == "spec.leaderWorkerTemplate.SubGroupPolicy.subGroupSize: Invalid value: 4: field is immutable"
    create = {"request": {"uid": "u", "operation": "CREATE", "object": _lws(4, subgroup=4)}}
    assert server.answer(path, create)["response"]["allowed"] is True
