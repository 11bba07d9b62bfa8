"""The reference webhooks over HTTPS, registered with the apiserver by URL.

Render mode calls a suite's validators and mutators inside :meth:`Cluster.admit`; here the same
functions answer ``AdmissionReview`` requests from kube-apiserver:

* a validator's field errors become ``allowed: false`` with ``status {code: 403, reason:
  Forbidden, message}`` - what controller-runtime's ``admission.Denied`` sends for an error that is
  not an API status - and ``message`` is the aggregate of the errors (one as is, several as
  ``[a, b]``). The apiserver prefixes ``admission webhook "<name>" denied the request: ``, which
  gives render's :attr:`Rejection.message` character for character;
* mutators (JobSet's and Volcano's defaulting) answer with a JSON Patch from the object the
  apiserver sent (CRD defaults already applied, as in render) to the mutated one.

Webhooks are registered for CREATE; those render also runs on a client's update
(:meth:`Cluster.admit_update`: a validator with ``validate_update``, a mutator marked
``on_update``) for UPDATE too, and a validator then gets the ``oldObject`` of the review. Paths
follow kubebuilder's
``/validate-<group with dashes>-<version>-<kind>``; upstream names are kept
(``validator.trainjob.trainer.kubeflow.org`` ...). There are no Services, so ``clientConfig`` is
a URL on 127.0.0.1 and ``caBundle`` is this process's throw-away CA.

Readiness: the apiserver loads webhook configurations from a watch, so a create right after
registering may still skip them. Each configuration therefore carries a canary webhook, selected
by a per-start token label on ConfigMaps; :meth:`WebhookServer.register` dry-run-creates such a
ConfigMap until both canaries have seen it.
"""

from __future__ import annotations

import base64
import json
import logging
import secrets
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jsonpatch

from .. import builtin, crds as crd_files, meta
from ..errors import CAUSE_TYPES, Rejection
from .rest import Api, ApiError
from .tls import serving_pair

log = logging.getLogger(__name__)

CONFIGURATION_NAME = "training-conformance-reference"
FIELD_MANAGER = "training-conformance-reference"
CANARY_LABEL = "training-conformance.io/webhook-canary"
CANARY_ANNOTATION = "training-conformance.io/mutated-by"
TIMEOUT_SECONDS = 10


@dataclass
class Route:
    kind: str  # "validate" | "mutate" | "canary-validate" | "canary-mutate"
    name: str
    group: str
    versions: tuple[str, ...]
    resource_kind: str
    handlers: list
    #: Which objects the apiserver sends (a hook's ``object_selector``, as upstream registers it).
    selector: dict = field(default_factory=dict)
    #: Admission operations the webhook is registered for.
    operations: tuple[str, ...] = ("CREATE",)


def _path_part(group: str) -> str:
    return group.replace(".", "-") if group else "core"


class WebhookServer:
    """Serves ``cluster``'s webhooks and mutators; ``cluster`` is what they read (API reads)."""

    def __init__(self, api: Api, cluster, host: str = "127.0.0.1"):
        self.api, self.cluster, self.host = api, cluster, host
        self.token = secrets.token_hex(6)
        self.pair = serving_pair(host)
        self.routes: dict[str, Route] = {}
        self._build_routes()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):  # noqa: N802 (http.server's naming)
                length = int(self.headers.get("Content-Length") or 0)
                review = json.loads(self.rfile.read(length) or b"{}")
                answer = server.answer(self.path, review)
                body = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, fmt, *args):
                log.debug("webhook: " + fmt, *args)

        self.httpd = ThreadingHTTPServer((host, 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.socket = self.pair.server_context().wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="webhook-server", daemon=True)

    # ------------------------------------------------------------------ routes
    def _versions(self, group: str, kind: str) -> tuple[str, ...]:
        served = sorted(v for g, v, k in crd_files.schemas(self.cluster.profile.crd_dirs) if (g, k) == (group, kind))
        return tuple(served) or ("v1",)

    def _served(self, group: str, kind: str) -> bool:
        # Render wires every suite into every cluster; a hook for a kind the profile does not
        # serve can never fire there, and here it could not even be registered.
        return any((g, k) == (group, kind) for g, _, k in crd_files.schemas(self.cluster.profile.crd_dirs))

    def _build_routes(self) -> None:
        seen: set[str] = set()
        for hook in self.cluster.webhooks:
            if not self._served(hook.group, hook.kind):
                continue
            versions = self._versions(hook.group, hook.kind)
            path = f"/validate-{_path_part(hook.group)}-{versions[0]}-{hook.kind.lower()}"
            while path in seen:
                path += "-x"
            seen.add(path)
            operations = ("CREATE", "UPDATE") if hook.validate_update is not None else ("CREATE",)
            self.routes[path] = Route("validate", hook.name, hook.group, versions, hook.kind, [hook],
                                      operations=operations)
        for (group, kind), mutators in self.cluster.mutators.items():
            builtin_kind = builtin.is_builtin(f"{group}/v1" if group else "v1", kind)
            if not mutators or not (builtin_kind or self._served(group, kind)):
                continue
            named = [m for m in mutators if getattr(m, "webhook_name", None)]
            if builtin_kind or named:
                # A mutator with an upstream name (JobSet's or LWS's pod webhook, LWS's defaulter) is
                # registered as upstream registers it - its name, object selector and operations - so
                # only its objects reach it, and a denial names it.
                for mutator in named:
                    self._add_mutate_route(group, self._versions(group, kind) if not builtin_kind else ("v1",), kind,
                                           [mutator], mutator.webhook_name, getattr(mutator, "object_selector", {}),
                                           _operations(mutator))
                rest = [m for m in mutators if m not in named]
                if rest and not builtin_kind:
                    self._add_mutate_route(group, self._versions(group, kind), kind, rest, None, {},
                                           _operations(*rest))
            else:
                self._add_mutate_route(group, self._versions(group, kind), kind, list(mutators), None, {},
                                       _operations(*mutators))
        names = [r.name for r in self.routes.values()]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            # The apiserver refuses a configuration with two webhooks of one name: two suites' hooks
            # with upstream's name (kubebuilder's mpod.kb.io: JobSet and LWS) installed for one profile.
            raise ValueError(f"profile {self.cluster.profile.name}: webhooks named {', '.join(twice)} more than once")
        self.routes[f"/canary-mutate/{self.token}"] = Route("canary-mutate", "canary-mutate.training-conformance.io",
                                                            "", ("v1",), "ConfigMap", [])
        self.routes[f"/canary-validate/{self.token}"] = Route("canary-validate",
                                                              "canary-validate.training-conformance.io",
                                                              "", ("v1",), "ConfigMap", [])

    def _add_mutate_route(self, group: str, versions: tuple[str, ...], kind: str, handlers: list,
                          name: str | None, selector: dict, operations: tuple[str, ...] = ("CREATE",)) -> None:
        path = f"/mutate-{_path_part(group)}-{versions[0]}-{kind.lower()}"
        while path in self.routes:
            path += "-x"
        self.routes[path] = Route("mutate", name or f"defaulter.{kind.lower()}.{group}", group, versions, kind,
                                  handlers, selector, operations)

    # ------------------------------------------------------------------ admission
    def answer(self, path: str, review: dict) -> dict:
        request = review.get("request") or {}
        response = {"uid": request.get("uid", "")}
        route = self.routes.get(path.split("?")[0])
        try:
            if route is None:
                response.update(allowed=False, status={"code": 404, "message": f"no webhook at {path}"})
            elif route.kind == "validate":
                response.update(self._validate(route, request))
            elif route.kind == "mutate":
                response.update(self._mutate(route, request))
            elif route.kind == "canary-mutate":
                response.update(_patch_response(request["object"], _with_annotation(request["object"], self.token)))
            else:
                seen = (request["object"].get("metadata", {}).get("annotations") or {}).get(CANARY_ANNOTATION)
                state = "both" if seen == self.token else "validating-only"
                response.update(allowed=False, status={"code": 403, "reason": "Forbidden",
                                                       "message": f"canary {self.token} {state}"})
        except Exception as exc:  # controller-runtime answers a handler error with 500
            log.exception("webhook %s failed", path)
            response.update(allowed=False, status={"code": 500, "message": str(exc)})
        return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response}

    def _validate(self, route: Route, request: dict) -> dict:
        obj, old = request["object"], request.get("oldObject")
        for hook in route.handlers:
            try:
                if request.get("operation") == "UPDATE" and old is not None and hook.validate_update is not None:
                    errors = hook.validate_update(meta.clone(obj), meta.clone(old), self.cluster)
                else:
                    errors = hook.validate(meta.clone(obj), self.cluster)
            except Rejection as refused:  # a validator that answers with its own code (JobSet v0.12: 422)
                return _refusal(refused)
            if errors:
                denial = Rejection("webhook", "", errors, webhook=hook.name).message
                prefix = f'admission webhook "{hook.name}" denied the request: '
                return {"allowed": False, "status": {"code": 403, "reason": "Forbidden",
                                                     "message": denial.removeprefix(prefix)}}
        return {"allowed": True}

    def _mutate(self, route: Route, request: dict) -> dict:
        original = request["object"]
        mutated = meta.clone(original)
        try:
            for mutate in route.handlers:
                mutate(mutated, self.cluster)
        except Rejection as refused:  # a mutator may refuse (Trainer's defaulter: 400, undecodable object)
            return _refusal(refused)
        return _patch_response(original, mutated)

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def _webhook(self, path: str, route: Route) -> dict:
        if route.kind.startswith("canary"):
            rules = [{"apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"],
                      "operations": ["CREATE"], "scope": "*"}]
            selector = {"matchLabels": {CANARY_LABEL: self.token}}
        else:
            resources = sorted({self.api.must_resource(f"{route.group}/{v}" if route.group else v,
                                                       route.resource_kind).plural for v in route.versions})
            rules = [{"apiGroups": [route.group], "apiVersions": list(route.versions), "resources": resources,
                      "operations": list(route.operations), "scope": "*"}]
            selector = route.selector
        webhook = {
            "name": route.name,
            "clientConfig": {"url": f"https://{self.host}:{self.port}{path}",
                             "caBundle": base64.b64encode(self.pair.ca_pem).decode()},
            "rules": rules, "objectSelector": selector,
            "admissionReviewVersions": ["v1"], "sideEffects": "None", "failurePolicy": "Fail",
            "matchPolicy": "Equivalent", "timeoutSeconds": TIMEOUT_SECONDS,
        }
        if route.kind in ("mutate", "canary-mutate"):
            webhook["reinvocationPolicy"] = "Never"
        return webhook

    def configurations(self) -> list[dict]:
        validating = [self._webhook(p, r) for p, r in self.routes.items() if r.kind in ("validate", "canary-validate")]
        mutating = [self._webhook(p, r) for p, r in self.routes.items() if r.kind in ("mutate", "canary-mutate")]
        return [
            {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
             "metadata": {"name": CONFIGURATION_NAME}, "webhooks": validating},
            {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
             "metadata": {"name": CONFIGURATION_NAME}, "webhooks": mutating},
        ]

    def register(self, timeout: float = 30.0) -> float:
        """Apply both configurations and wait until the apiserver calls them; returns seconds."""
        started = time.monotonic()
        for configuration in self.configurations():
            self.api.apply(configuration, FIELD_MANAGER)
        probe = {"apiVersion": "v1", "kind": "ConfigMap",
                 "metadata": {"generateName": "webhook-canary-", "namespace": "default",
                              "labels": {CANARY_LABEL: self.token}}}
        deadline = started + timeout
        last = ""
        while time.monotonic() < deadline:
            try:
                self.api.create(probe, FIELD_MANAGER, dry_run=True)
                last = "admitted (no webhook configuration loaded yet)"
            except ApiError as exc:
                last = exc.message
                if f"canary {self.token} both" in exc.message:
                    return time.monotonic() - started
            time.sleep(0.05)
        raise TimeoutError(f"webhook configuration not in effect after {timeout:.0f}s (last probe: {last})")

    def unregister(self) -> None:
        for configuration in self.configurations():
            resource = self.api.resource_of(configuration)
            try:
                self.api.delete(resource, None, CONFIGURATION_NAME)
            except ApiError as exc:
                log.info("could not remove %s: %s", configuration["kind"], exc)


def _operations(*mutators) -> tuple[str, ...]:
    """CREATE, and UPDATE when render runs one of ``mutators`` on updates too (``on_update``)."""
    return ("CREATE", "UPDATE") if any(getattr(m, "on_update", False) for m in mutators) else ("CREATE",)


def _refusal(refused: Rejection) -> dict:
    """A hook's own refusal as the apiserver should relay it: its code, reason and message (the
    apiserver adds the ``admission webhook "<name>" denied the request: `` prefix back)."""
    prefix = f'admission webhook "{refused.webhook}" denied the request: '
    status = {"code": refused.code, "message": refused.message.removeprefix(prefix)}
    if refused.reason:
        status["reason"] = refused.reason
    if refused.reason == "Invalid" and refused.errors:
        # apierrors.NewInvalid's Status carries one cause per field error, and controller-runtime
        # hands that Status to the apiserver as it is.
        status["details"] = {"causes": [{"reason": CAUSE_TYPES.get(e.type, e.type), "message": e.body(),
                                         "field": e.field or "<nil>"} for e in refused.errors]}
    return {"allowed": False, "status": status}




def _with_annotation(obj: dict, token: str) -> dict:
    mutated = meta.clone(obj)
    mutated.setdefault("metadata", {}).setdefault("annotations", {})[CANARY_ANNOTATION] = token
    return mutated


def _patch_response(original: dict, mutated: dict) -> dict:
    patch = jsonpatch.make_patch(original, mutated).patch
    if not patch:
        return {"allowed": True}
    return {"allowed": True, "patchType": "JSONPatch",
            "patch": base64.b64encode(json.dumps(patch).encode()).decode()}
