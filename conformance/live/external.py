"""External-operator mode (``--operator external``): a vendor's operator is already installed.

The harness then installs nothing of its own - no CRDs, no webhook configuration, no operator
process - and writes only inside the namespaces it creates for each case. The one exception is
a case's own cluster-scoped inputs (ClusterTrainingRuntimes): their names are part of what is
tested, so the case creates them under their names and deletes them when it ends; an object of
that name the harness did not create is never touched (the case errors instead, see
:func:`created_by_harness`).

Before anything runs, :func:`check_served` asks discovery for every kind the claimed profiles
serve (the profile's CRD kinds, e.g. ``trainer.kubeflow.org/v1alpha1`` TrainJob, TrainingRuntime,
ClusterTrainingRuntime and ``jobset.x-k8s.io/v1alpha2`` JobSet for a trainer profile) and fails
naming every one that is missing: a run against an operator that is not there would otherwise
"fail" every case for the wrong reason.
"""

from __future__ import annotations

from typing import Iterable, Protocol

from reconciler import crds as crd_files, profiles


class Discovery(Protocol):
    def resource(self, api_version: str, kind: str): ...  # None when not served


class MissingApisError(RuntimeError):
    """The cluster does not serve what a claimed profile needs."""


def required_apis(profile_names: Iterable[str]) -> dict[tuple[str, str], list[str]]:
    """(apiVersion, kind) -> the profiles that need it, for every CRD kind of the profiles."""
    needed: dict[tuple[str, str], list[str]] = {}
    for name in profile_names:
        for group, version, kind in crd_files.schemas(profiles.get(name).crd_dirs):
            needed.setdefault((f"{group}/{version}", kind), []).append(name)
    return dict(sorted(needed.items()))


def missing_apis(discovery: Discovery, profile_names: Iterable[str]) -> list[str]:
    """One line per kind the cluster does not serve, naming the profiles that need it."""
    return [f"{api_version} {kind} (needed by {', '.join(names)})"
            for (api_version, kind), names in required_apis(profile_names).items()
            if discovery.resource(api_version, kind) is None]


def check_served(discovery: Discovery, profile_names: Iterable[str], where: str = "the cluster") -> None:
    names = list(profile_names)
    missing = missing_apis(discovery, names)
    if missing:
        raise MissingApisError(
            f"--operator external: {where} does not serve {len(missing)} API(s) that profile(s) "
            f"{', '.join(names)} need - is the operator (and its CRDs) installed?\n  " + "\n  ".join(missing))


def created_by_harness(obj: dict, field_manager: str) -> bool:
    """Whether ``obj`` was created by this harness: its ``managedFields`` name our field manager
    (every harness write carries it). A same-named object of the cluster's own is not."""
    return any(entry.get("manager") == field_manager
               for entry in (obj.get("metadata") or {}).get("managedFields") or [])
