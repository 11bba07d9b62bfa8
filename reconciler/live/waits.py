"""Wait for a condition over one resource's objects by watching it (list once, then react to
events), never by sleeping and re-reading."""

from __future__ import annotations

import time
from typing import Callable

from .. import meta
from .rest import Api, ApiError, Resource


def wait_until(api: Api, resource: Resource, check: Callable[[list[dict]], bool], timeout: float,
               namespace: str | None = None, what: str = "") -> list[dict]:
    """Return the objects once ``check(objects)`` holds; TimeoutError names ``what`` otherwise."""
    deadline = time.monotonic() + timeout
    while True:
        listing = api.list(resource, namespace)
        objects = {meta.key(_typed(o, resource)): o for o in listing.get("items", [])}
        if check(list(objects.values())):
            return list(objects.values())
        rv = listing["metadata"]["resourceVersion"]
        try:
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {what or resource.plural}")
                for event in api.watch(resource, rv, namespace, timeout_seconds=max(1, int(remaining + 0.999))):
                    obj = _typed(event["object"], resource)
                    rv = obj["metadata"].get("resourceVersion", rv)
                    if event["type"] == "BOOKMARK":
                        continue
                    if event["type"] == "DELETED":
                        objects.pop(meta.key(obj), None)
                    else:
                        objects[meta.key(obj)] = obj
                    if check(list(objects.values())):
                        return list(objects.values())
                    if time.monotonic() > deadline:
                        break
        except ApiError as exc:
            if exc.code != 410:
                raise
            # The watch expired: list again.


def _typed(obj: dict, resource: Resource) -> dict:
    obj.setdefault("apiVersion", resource.api_version)
    obj.setdefault("kind", resource.kind)
    return obj


def condition_true(obj: dict, type_: str) -> bool:
    return any(c.get("type") == type_ and c.get("status") == "True" for c in (obj.get("status") or {}).get("conditions") or [])
