"""Install a profile's CRDs - the very files render mode reads - into a real API server.

Each CRD is labelled as ours and annotated with a hash of its file content. A CRD already there
with the same hash is kept; one with another hash (a different Trainer generation defines the
same names differently) is deleted and created again, because after an in-place schema update
the apiserver may still serve the old schema for a moment, and "Established" would not tell.
CRDs of ours that the profile does not serve are removed, so that live serves what render serves.
The wait ends when every CRD is Established and discovery lists its kind.
"""

from __future__ import annotations

import copy
import hashlib
import json
import time

from .. import crds as crd_files
from ..profiles import Profile
from .rest import Api, ApiError
from .waits import condition_true, wait_until

LABEL = "training-conformance.io/installed-by"
LABEL_VALUE = "reference-operator"
HASH_ANNOTATION = "training-conformance.io/content-sha256"
FIELD_MANAGER = "training-conformance-reference"


def _digest(crd: dict) -> str:
    return hashlib.sha256(json.dumps(crd, sort_keys=True).encode()).hexdigest()


def install(api: Api, profile: Profile, timeout: float = 60.0) -> dict[str, str]:
    """Make the served CRDs exactly the profile's; returns ``{crd name: "kept"|"created"|"replaced"|"removed"}``."""
    resource = api.must_resource("apiextensions.k8s.io/v1", "CustomResourceDefinition")
    wanted = {}
    for crd in crd_files.load(profile.crd_dirs):
        body = copy.deepcopy(crd)
        md = body.setdefault("metadata", {})
        md.setdefault("labels", {})[LABEL] = LABEL_VALUE
        md.setdefault("annotations", {})[HASH_ANNOTATION] = _digest(crd)
        wanted[md["name"]] = body
    existing = {c["metadata"]["name"]: c for c in api.list(resource, label_selector=f"{LABEL}={LABEL_VALUE}")["items"]}
    report, stale = {}, []
    for name, current in existing.items():
        if name not in wanted:
            stale.append(name)
            report[name] = "removed"
        elif (current["metadata"].get("annotations") or {}).get(HASH_ANNOTATION) != wanted[name]["metadata"]["annotations"][HASH_ANNOTATION]:
            stale.append(name)
    for name in wanted:
        if name not in existing:
            # Not ours (or not labelled): take it over, since the profile decides what is served.
            current = api.get(resource, None, name)
            if current is not None:
                stale.append(name)
    for name in stale:
        api.delete(resource, None, name)
    if stale:
        wait_until(api, resource, lambda items: not ({i["metadata"]["name"] for i in items} & set(stale)), timeout,
                   what=f"CRDs {sorted(stale)} to be deleted")
    for name, body in wanted.items():
        if name in existing and name not in stale:
            report[name] = "kept"
            continue
        api.create(body, FIELD_MANAGER)
        report[name] = "replaced" if name in stale else "created"
    wait_until(api, resource, lambda items: _all_established(items, set(wanted)), timeout,
               what=f"CRDs {sorted(wanted)} to be Established")
    _wait_served(api, wanted.values(), timeout)
    return report


def _all_established(items: list[dict], names: set[str]) -> bool:
    established = {i["metadata"]["name"] for i in items if condition_true(i, "Established")}
    return names <= established


def _wait_served(api: Api, crds, timeout: float) -> None:
    """Discovery lists each kind and a LIST of it answers (the handler for a new CRD starts
    asynchronously; this is the one poll, and it normally succeeds at once)."""
    deadline = time.monotonic() + timeout
    for crd in crds:
        spec = crd["spec"]
        for version in spec["versions"]:
            if not version.get("served", True):
                continue
            api_version = f"{spec['group']}/{version['name']}"
            while True:
                api.forget(api_version)
                resource = api.resource(api_version, spec["names"]["kind"])
                try:
                    if resource is not None:
                        api.list(resource)
                        break
                except ApiError as exc:
                    if exc.code not in (404, 503):
                        raise
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{spec['names']['kind']} in {api_version} not served after {timeout:.0f}s")
                time.sleep(0.05)
