"""``conformance doctor --kubeconfig K [--profile P ...]``: can a live run on this cluster judge anything?

Before a run on a cluster the harness did not start, it answers - each in a line or two - what
the run would otherwise find out case by case:

* **server**: reachable, with which credentials, which Kubernetes version;
* **apis**: for each claimed profile, whether the cluster serves its kinds (the same discovery
  check as ``--operator external``, :func:`conformance.live.external.missing_apis`); with the
  reference operator the harness installs them itself;
* **pods**: who will run the cases' pods - the harness's own kwok on its own Nodes
  (``--pod-lifecycle harness``, :mod:`conformance.cluster.podlife`), the cluster's kubelets
  (``cluster``), or a kwok the cluster already has (a local plane's Nodes are kwok's);
* **rights**: whether the account may do what the run does (SelfSubjectAccessReviews through the
  official client): namespaces and what a case writes in them, Nodes and what kwok writes for them
  (harness lifecycle), CRDs and webhook configurations (reference operator);
* **steering**: whether PodNodeSelector and PodTolerationRestriction steer pods onto the harness's
  Nodes (:func:`conformance.cluster.podlife.steering_problem`, a dry run in a throw-away namespace);
* **skipped**: which rows the run would skip, and why.

Exit codes: 0 a run can be judged (warnings are printed, e.g. rows that will be skipped); 1 it
cannot (a ``FAIL`` line says why); 2 the cluster cannot be used at all (one line: no such
kubeconfig, unreachable server, rejected credentials, forbidden).
"""

from __future__ import annotations

import secrets
import sys
from dataclasses import dataclass
from pathlib import Path

from reconciler.live.rest import ApiError

from .access import AccessError, connect, explain

OK, WARN, FAIL, INFO = "ok", "WARN", "FAIL", "info"


@dataclass
class Finding:
    topic: str
    status: str  # OK, WARN, FAIL or INFO
    text: str


# (group, resource, verb, namespaced, why) the run needs whatever runs the pods or the operator.
ALWAYS = [
    ("", "namespaces", "create", False, "a fresh namespace per case"),
    ("", "namespaces", "delete", False, "removing it when the case ends"),
    ("", "pods", "list", True, "reading what the operator created"),
    ("", "pods", "watch", True, "waiting for a steady state"),
    ("", "pods", "delete", True, "scenario faults that delete pods"),
    ("", "events", "watch", True, "the Events a case expects"),
]
HARNESS = [
    ("", "nodes", "create", False, "the harness's own Nodes tc-<run>-node-<i>"),
    ("", "nodes", "delete", False, "removing them at the end"),
    ("", "nodes", "patch", False, "kwok keeping them Ready (and nodeLost faults)"),
    ("", "pods", "patch", True, "kwok playing the pods' lifecycle (status)"),
    ("coordination.k8s.io", "leases", "create", True, "kwok's node Leases in kube-node-lease"),
]
REFERENCE = [
    ("apiextensions.k8s.io", "customresourcedefinitions", "create", False, "installing the profile's CRDs"),
    ("apiextensions.k8s.io", "customresourcedefinitions", "delete", False, "switching profiles"),
    ("admissionregistration.k8s.io", "validatingwebhookconfigurations", "create", False,
     "the reference operator's webhooks"),
    ("admissionregistration.k8s.io", "mutatingwebhookconfigurations", "create", False,
     "the reference operator's webhooks"),
]


def may(api, group: str, resource: str, verb: str, namespace: str | None) -> tuple[bool, str]:
    """A SelfSubjectAccessReview: whether this account may ``verb`` ``resource`` (and why not)."""
    from kubernetes import client

    attributes = client.V1ResourceAttributes(group=group, resource=resource, verb=verb, namespace=namespace)
    review = client.AuthorizationV1Api(api.client).create_self_subject_access_review(
        client.V1SelfSubjectAccessReview(spec=client.V1SelfSubjectAccessReviewSpec(resource_attributes=attributes)))
    return bool(review.status.allowed), review.status.reason or ""


def rights(api, pod_lifecycle: str, operator: str) -> list[Finding]:
    needed = ALWAYS + (HARNESS if pod_lifecycle == "harness" else []) + (REFERENCE if operator == "reference" else [])
    missing = []
    for group, resource, verb, namespaced, why in needed:
        namespace = ("kube-node-lease" if resource == "leases" else "default") if namespaced else None
        allowed, _ = may(api, group, resource, verb, namespace)
        if not allowed:
            missing.append(f"{verb} {resource}{'.' + group if group else ''} ({why})")
    if missing:
        return [Finding("rights", FAIL, f"the account may not: {'; '.join(missing)}")]
    return [Finding("rights", OK, f"all {len(needed)} checked: namespaces, pods, events"
                    + (", Nodes and kwok's writes" if pod_lifecycle == "harness" else "")
                    + (", CRDs and webhook configurations" if operator == "reference" else ""))]


def apis(api, profile_names: list[str], operator: str, claimed: bool) -> list[Finding]:
    from ..live.external import missing_apis, required_apis

    findings = []
    for name in profile_names:
        missing = missing_apis(api, [name])
        kinds = len(required_apis([name]))
        if not missing:
            findings.append(Finding("apis", OK, f"{name}: all {kinds} kinds served"))
        elif operator == "reference":
            findings.append(Finding("apis", INFO, f"{name}: {len(missing)} of {kinds} kinds not served yet; "
                                                  "the reference operator installs them"))
        else:
            status = FAIL if claimed else INFO
            findings.append(Finding("apis", status, f"{name}: not served - is its operator installed? "
                                                    + "; ".join(missing)))
    return findings


def pods(api, pod_lifecycle: str) -> list[Finding]:
    from .podlife import KWOK_NODE_ANNOTATION, PodLifecycleError, kwok_binary

    nodes = api.list(api.must_resource("v1", "Node")).get("items", [])
    kwok_nodes = [n for n in nodes if KWOK_NODE_ANNOTATION in (n["metadata"].get("annotations") or {})]
    if pod_lifecycle == "harness":
        try:
            binary = kwok_binary()
        except PodLifecycleError as exc:
            return [Finding("pods", FAIL, str(exc))]
        return [Finding("pods", OK, f"the harness's own kwok ({binary}) on its own tainted Nodes tc-<run>-node-<i>; "
                                    "case pods are steered there and nowhere else")]
    ready = [n for n in nodes if any(c.get("type") == "Ready" and c.get("status") == "True"
                                     for c in (n.get("status") or {}).get("conditions") or [])]
    who = ("a kwok the cluster runs (its Nodes carry kwok's annotation)" if kwok_nodes and len(kwok_nodes) == len(nodes)
           else "the cluster's kubelets")
    return [Finding("pods", OK if ready else FAIL, f"{who}: {len(ready)} of {len(nodes)} Nodes Ready")]


def steering(api, pod_lifecycle: str) -> list[Finding]:
    from .podlife import steering_problem

    if pod_lifecycle != "harness":
        return [Finding("steering", INFO, "not needed: the cluster's own nodes run the pods")]
    problem = steering_problem(api, f"doctor{secrets.token_hex(2)}")
    if problem:
        return [Finding("steering", FAIL, problem)]
    return [Finding("steering", OK, "PodNodeSelector and PodTolerationRestriction steer a case namespace's pods "
                                    "(a dry-run pod came back with the node selector and toleration)")]


def skipped(api, profile_names: list[str], pod_lifecycle: str) -> list[Finding]:
    """Rows the run would skip: all rows whose pods must run when the cluster's kubelets run them
    (placeholder images never start), and Volcano rows when no volcano scheduler is seen."""
    findings = []
    if pod_lifecycle == "cluster":
        findings.append(Finding("skipped", WARN, "every row whose pods must start (or play faults) is skipped "
                                                 "('needs pod lifecycle'): the cases' placeholder images never run on "
                                                 "real kubelets; --pod-lifecycle harness brings the harness's own"))
    from .local import KWOK_NODE_ANNOTATION, KWOK_NODE_ANNOTATION_VALUE, REAL_NODE_KWOK

    volcano = [p for p in profile_names if p.startswith("volcano")]
    if volcano:
        pods_resource = api.must_resource("v1", "Pod")
        seen = any("volcano-scheduler" in p["metadata"]["name"]
                   for p in api.list(pods_resource, None, label_selector="app=volcano-scheduler").get("items", []))
        nodes = api.list(api.must_resource("v1", "Node")).get("items", [])
        local = any((n["metadata"].get("annotations") or {}).get(KWOK_NODE_ANNOTATION) in (KWOK_NODE_ANNOTATION_VALUE, REAL_NODE_KWOK)
                    for n in nodes)
        if seen or local:
            findings.append(Finding("skipped", OK, f"{', '.join(volcano)}: a volcano scheduler is there "
                                                   f"({'its pod runs' if seen else 'the local plane binds for it'})"))
        else:
            findings.append(Finding("skipped", WARN, f"{', '.join(volcano)}: no volcano-scheduler pod found "
                                                     "(label app=volcano-scheduler): rows whose pods use schedulerName "
                                                     "volcano are skipped ('needs scheduler volcano')"))
    if not findings:
        findings.append(Finding("skipped", OK, "nothing for want of this cluster (rows may still skip for capacity)"))
    return findings


def diagnose(kubeconfig: Path, profile_names: list[str], pod_lifecycle: str, operator: str) -> tuple[list[Finding], int]:
    """Every finding, and the exit code (see the module docstring)."""
    from reconciler.profiles import PROFILES

    try:
        api, version = connect(kubeconfig)
    except AccessError as exc:
        return [Finding("server", FAIL, str(exc))], 2
    claimed = bool(profile_names)
    names = profile_names or sorted(PROFILES)
    findings = [Finding("server", OK, f"{api.client.configuration.host}: kubernetes {version.get('gitVersion', '?')}")]
    try:
        findings += rights(api, pod_lifecycle, operator)
        for topic, check in (("apis", lambda: apis(api, names, operator, claimed)),
                             ("pods", lambda: pods(api, pod_lifecycle)),
                             ("steering", lambda: steering(api, pod_lifecycle)),
                             ("skipped", lambda: skipped(api, names, pod_lifecycle))):
            try:
                findings += check()
            except ApiError as exc:  # 403 and the like: this check fails, the others still tell
                findings.append(Finding(topic, FAIL, explain(exc, kubeconfig, f"do what the {topic} check does")))
    except Exception as exc:  # noqa: BLE001 - unreachable mid-way: one line
        findings.append(Finding("server", FAIL, explain(exc, kubeconfig, "read what the doctor checks")))
        return findings, 2
    finally:
        api.close()
    return findings, 1 if any(f.status == FAIL for f in findings) else 0


def add_doctor_command(subparsers) -> None:
    from ..live.session import POD_LIFECYCLES
    from reconciler.profiles import PROFILES

    p = subparsers.add_parser("doctor", help="check that a live run on a cluster can judge anything (APIs, pods, "
                                             "rights, steering) before running it")
    p.add_argument("--kubeconfig", required=True, type=Path, help="the cluster")
    p.add_argument("--profile", action="append", default=[], choices=sorted(PROFILES),
                   help="the profiles the run claims (repeatable; default: report on all, fail on none's APIs)")
    p.add_argument("--pod-lifecycle", choices=[c for c in POD_LIFECYCLES if c != "plane"], default="harness",
                   help="who will run the cases' pods, as for `conformance run` (default: %(default)s)")
    p.add_argument("--operator", choices=["reference", "external"], default="reference",
                   help="the operator under test, as for `conformance run` (default: %(default)s)")
    p.set_defaults(doctor_command=doctor_command)


def doctor_command(args, extra: list[str]) -> int:
    if extra:
        print(f"conformance doctor: unrecognized arguments: {' '.join(extra)}", file=sys.stderr)
        return 2
    findings, code = diagnose(args.kubeconfig, args.profile, args.pod_lifecycle, args.operator)
    if code == 2:
        print(f"error: {findings[-1].text}", file=sys.stderr)
        return 2
    width = max(len(f.topic) for f in findings)
    for f in findings:
        print(f"{f.topic.ljust(width)}  {f.status:<4}  {f.text}")
    print("verdict" .ljust(width) + ("  a run on this cluster can be judged" if code == 0 else
                                    "  a run on this cluster could not be judged: fix the FAIL lines first"))
    return code
