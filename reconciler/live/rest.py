"""A thin JSON REST layer over the official ``kubernetes`` client, for any kind the server serves.

The typed API classes turn objects into models (datetimes, snake_case) and back, which loses
exactly what the harness compares; everything here stays plain JSON dicts. Paths come from API
discovery (``/api/v1``, ``/apis/<group>/<version>``), so CRD kinds and built-in kinds go through
the same code. Watches use :class:`kubernetes.watch.Watch` over a raw streaming request, its events
decoded by orjson (:class:`_Watch`).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from pathlib import Path

import orjson
from kubernetes import client, config, watch

#: The User-Agent of a client that does not name itself (kube-apiserver's audit log shows it).
USER_AGENT = "training-conformance"
#: (connect, read) seconds for ordinary requests; watches set their own server-side timeout.
REQUEST_TIMEOUT = (5, 60)


class ApiError(Exception):
    """A non-2xx answer; ``status`` is the apiserver's ``Status`` object when it sent one."""

    def __init__(self, code: int, status: dict | None, text: str = ""):
        self.code = code
        self.status = status or {}
        self.reason = self.status.get("reason", "")
        self.message = self.status.get("message") or text
        super().__init__(f"{code} {self.reason}: {self.message}")


@dataclass(frozen=True)
class Resource:
    """One served resource: where its objects live and whether it has a status subresource."""

    api_version: str
    kind: str
    plural: str
    namespaced: bool
    has_status: bool

    @property
    def group(self) -> str:
        return self.api_version.split("/")[0] if "/" in self.api_version else ""

    def path(self, namespace: str | None = None, name: str | None = None, subresource: str | None = None) -> str:
        base = f"/apis/{self.api_version}" if "/" in self.api_version else f"/api/{self.api_version}"
        if self.namespaced and namespace:
            base += f"/namespaces/{namespace}"
        base += f"/{self.plural}"
        if name:
            base += f"/{name}"
        if subresource:
            base += f"/{subresource}"
        return base


class Api:
    """JSON requests, discovery and watches against one cluster."""

    def __init__(self, api_client: client.ApiClient):
        self.client = api_client
        self._discovery: dict[str, dict[str, Resource]] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_kubeconfig(cls, path: str, pool_size: int = 32, user_agent: str = USER_AGENT) -> "Api":
        """A client of its own (watches hold connections: the pool is sized for them), naming itself
        ``user_agent`` in every request, so a cluster's audit log tells the harness's requests from
        the reference operator's (and both from the cluster's own)."""
        configuration = client.Configuration()
        config.load_kube_config(config_file=str(path), client_configuration=configuration, persist_config=False)
        configuration.connection_pool_maxsize = pool_size
        if not _refreshing_credentials(path):
            # The client's refresh hook re-applies the whole configuration before every request, which
            # reads os.environ (proxies) - racing pytest, which sets PYTEST_CURRENT_TEST in the main
            # thread while cases run in others (KeyError mid-request, seen live). A static token or
            # certificate never needs refreshing; exec and auth-provider credentials keep the hook.
            configuration.refresh_api_key_hook = None
        api_client = client.ApiClient(configuration)
        api_client.user_agent = user_agent
        return cls(api_client)

    def close(self) -> None:
        self.client.close()

    # ------------------------------------------------------------------ requests
    def _send(self, method: str, path: str, query: list | None = None, body=None, content_type: str | None = None,
              timeout=REQUEST_TIMEOUT):
        headers = {"Accept": "application/json"}
        if content_type:
            headers["Content-Type"] = content_type
        method, url, headers, body, _ = self.client.param_serialize(
            method, path, query_params=query or [], header_params=headers, body=body, auth_settings=["BearerToken"])
        return self.client.call_api(method, url, headers, body, _request_timeout=timeout)

    def request(self, method: str, path: str, query: list | None = None, body=None,
                content_type: str | None = None) -> dict:
        response = self._send(method, path, query, body, content_type)
        data = response.read()
        text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else str(data or "")
        try:
            decoded = json.loads(text) if text else {}
        except json.JSONDecodeError:
            decoded = None
        if not 200 <= response.status <= 299:
            raise ApiError(response.status, decoded if isinstance(decoded, dict) and decoded.get("kind") == "Status"
                           else None, text.strip())
        return decoded if isinstance(decoded, dict) else {}

    # ------------------------------------------------------------------ discovery
    def resource(self, api_version: str, kind: str) -> Resource | None:
        """The resource serving ``kind`` in ``api_version``, or None (unknown group, version or kind)."""
        table = self._discovery.get(api_version)
        if table is None or kind not in table:
            table = self._discover(api_version)
        return table.get(kind)

    def forget(self, api_version: str | None = None) -> None:
        """Drop cached discovery (after installing or removing CRDs)."""
        with self._lock:
            if api_version is None:
                self._discovery.clear()
            else:
                self._discovery.pop(api_version, None)

    def _discover(self, api_version: str) -> dict[str, Resource]:
        path = f"/apis/{api_version}" if "/" in api_version else f"/api/{api_version}"
        try:
            listing = self.request("GET", path)
        except ApiError as exc:
            if exc.code == 404:
                return {}
            raise
        names = {r["name"] for r in listing.get("resources", [])}
        table = {}
        for r in listing.get("resources", []):
            if "/" in r["name"]:
                continue
            table[r["kind"]] = Resource(api_version, r["kind"], r["name"], r["namespaced"], f"{r['name']}/status" in names)
        with self._lock:
            self._discovery[api_version] = table
        return table

    def must_resource(self, api_version: str, kind: str) -> Resource:
        found = self.resource(api_version, kind)
        if found is None:
            raise ApiError(404, None, f"the server does not serve kind {kind!r} in {api_version!r}")
        return found

    def resource_of(self, obj: dict) -> Resource:
        return self.must_resource(obj.get("apiVersion", ""), obj.get("kind", ""))

    # ------------------------------------------------------------------ verbs on objects
    def get(self, resource: Resource, namespace: str | None, name: str) -> dict | None:
        try:
            return self.request("GET", resource.path(namespace, name))
        except ApiError as exc:
            if exc.code == 404:
                return None
            raise

    def list(self, resource: Resource, namespace: str | None = None, label_selector: str | None = None,
             field_selector: str | None = None) -> dict:
        query = [("labelSelector", label_selector)] if label_selector else []
        query += [("fieldSelector", field_selector)] if field_selector else []
        return self.request("GET", resource.path(namespace), query)

    def create(self, obj: dict, field_manager: str, dry_run: bool = False) -> dict:
        resource = self.resource_of(obj)
        query = [("fieldManager", field_manager)] + ([("dryRun", "All")] if dry_run else [])
        return self.request("POST", resource.path(obj["metadata"].get("namespace")), query, obj)

    def apply(self, obj: dict, field_manager: str, force: bool = True, subresource: str | None = None) -> dict:
        """Server-side apply (``application/apply-patch+yaml``; JSON is YAML)."""
        resource = self.resource_of(obj)
        md = obj["metadata"]
        query = [("fieldManager", field_manager)] + ([("force", "true")] if force else [])
        return self.request("PATCH", resource.path(md.get("namespace"), md["name"], subresource), query, obj,
                            content_type="application/apply-patch+yaml")

    def replace(self, obj: dict, field_manager: str, subresource: str | None = None) -> dict:
        """PUT with the object's resourceVersion: a stale write is a 409 Conflict, as in client-go."""
        resource = self.resource_of(obj)
        md = obj["metadata"]
        return self.request("PUT", resource.path(md.get("namespace"), md["name"], subresource),
                            [("fieldManager", field_manager)], obj)

    def delete(self, resource: Resource, namespace: str | None, name: str, propagation: str | None = None,
               grace_seconds: int | None = None) -> dict | None:
        body: dict = {"apiVersion": "v1", "kind": "DeleteOptions"}
        if propagation:
            body["propagationPolicy"] = propagation
        if grace_seconds is not None:
            body["gracePeriodSeconds"] = grace_seconds
        try:
            return self.request("DELETE", resource.path(namespace, name), body=body)
        except ApiError as exc:
            if exc.code == 404:
                return None
            raise

    # ------------------------------------------------------------------ watch
    def watch(self, resource: Resource, resource_version: str, namespace: str | None = None,
              timeout_seconds: int = 60, stopper: "list[watch.Watch] | None" = None,
              field_selector: str | None = None):
        """Events (``{"type", "object"}``, raw JSON) from ``resource_version`` on, until the server
        closes the stream after ``timeout_seconds``. A 410 Gone raises :class:`ApiError` (relist).

        ``stopper``, when given, receives the :class:`~kubernetes.watch.Watch` so that another
        thread can ``stop()`` it. ``field_selector`` filters on the server (an object leaving the
        selection arrives as DELETED).
        """
        w = _Watch()
        if stopper is not None:
            stopper.append(w)

        def call(path, **kwargs):
            query = [("watch", "true"), ("allowWatchBookmarks", "true")]
            if kwargs.get("resource_version"):
                query.append(("resourceVersion", kwargs["resource_version"]))
            if kwargs.get("timeout_seconds"):
                query.append(("timeoutSeconds", str(kwargs["timeout_seconds"])))
            if field_selector:
                query.append(("fieldSelector", field_selector))
            response = self._send("GET", path, query, timeout=(5, timeout_seconds + 30))
            if not 200 <= response.status <= 299:
                text = response.read().decode("utf-8", errors="replace")
                try:
                    status = json.loads(text)
                except json.JSONDecodeError:
                    status = None
                raise ApiError(response.status, status, text)
            return response.response  # the streaming urllib3 response

        try:
            # ``call`` declares no return type, so Watch hands back raw JSON (and raises on ERROR).
            for event in w.stream(call, resource.path(namespace), resource_version=resource_version,
                                  timeout_seconds=timeout_seconds):
                yield {"type": event["type"], "object": event["raw_object"]}
        except client.exceptions.ApiException as exc:  # raised by Watch for ERROR events it parses itself
            raise ApiError(exc.status or 500, None, str(exc.reason)) from None


#: Digits as "0", everything else as " ": a run of 19 digits is a number orjson may not keep exact.
_DIGITS = bytes(48 if 48 <= byte <= 57 else 32 for byte in range(256))
_LONG_NUMBER = b"0" * 19


class _Watch(watch.Watch):
    """:class:`kubernetes.watch.Watch` for raw JSON (no return type, as :meth:`Api.watch` calls it),
    each event decoded by orjson: decoding was more than half of what the harness's watches cost in a
    1,024-pod restart (~10,000 pod events of ~7 KB), and orjson takes about half the time of ``json``.
    ``json`` still decodes what orjson refuses (a lone surrogate) or would change: an integer beyond 64
    bits, which orjson turns into a float (a custom resource's 1e20 comes as 100000000000000000000),
    so any event with a run of 19 digits; the result is always what ``json`` gives."""

    def unmarshal_event(self, data, return_type):
        if return_type or not data or data.isspace() or _long_number(data):
            return super().unmarshal_event(data, return_type)
        try:
            event = orjson.loads(data)
        except orjson.JSONDecodeError:
            return super().unmarshal_event(data, return_type)
        event["raw_object"] = event["object"]
        return event


def _long_number(text: str) -> bool:
    return _LONG_NUMBER in text.encode("utf-8", "replace").translate(_DIGITS)


def _refreshing_credentials(path: str) -> bool:
    """Whether the kubeconfig's current user has credentials that expire (``exec`` or ``auth-provider``)."""
    import yaml

    try:
        kubeconfig = yaml.safe_load(Path(path).read_text()) or {}
        context = next(c["context"] for c in kubeconfig.get("contexts") or []
                       if c.get("name") == kubeconfig.get("current-context"))
        user = next(u.get("user") or {} for u in kubeconfig.get("users") or [] if u.get("name") == context.get("user"))
    except (OSError, StopIteration, KeyError, TypeError, AttributeError, yaml.YAMLError):
        return True  # unknown: keep the client's own behaviour
    return bool(user.get("exec") or user.get("auth-provider"))
