"""The operators' own CRDs and webhook configurations, rendered from the release's source in
the Go module cache, with every webhook pointed at a manager process on 127.0.0.1.

The projects keep their install manifests as kustomizations whose patches matter here (JobSet's
pod webhooks get their ``objectSelector`` from a patch; Trainer's and the Training Operator's
webhook configurations get their names from one), so they are rendered with kustomize itself - the
version JobSet's Makefile pins, built by ``make upstream-kit`` - rather than read as raw files.
Which kustomizations, and which of the CRDs and webhooks they render are installed, is each
project's entry (:mod:`.projects`); everything else they render (Deployments, RBAC, ...) is dropped.

In-cluster, the webhooks reach the manager through a Service; here the manager is a local
process, so each ``clientConfig.service`` (webhook configurations, and the JobSet CRD's conversion
webhook) becomes ``url: https://127.0.0.1:<port><the same path>`` with our CA as ``caBundle``.
"""

from __future__ import annotations

import base64
import copy
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import yaml

WEBHOOK_KINDS = ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration")


class ManifestError(RuntimeError):
    """A kustomization did not render, or rendered something this kit cannot point at loopback."""


@dataclass
class OperatorManifests:
    crds: list[dict] = field(default_factory=list)
    webhook_configurations: list[dict] = field(default_factory=list)

    def webhook_names(self) -> list[str]:
        return [w["name"] for c in self.webhook_configurations for w in c.get("webhooks", [])]


def render(kustomize: Path, directory: Path) -> list[dict]:
    """``kustomize build directory`` as a list of objects."""
    result = subprocess.run(
        [str(kustomize), "build", str(directory)], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise ManifestError(f"kustomize build {directory} failed ({result.returncode}):\n{result.stderr.strip()}")
    # The CRDs embed full pod templates (hundreds of KB each): libyaml parses them ~10x faster.
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return [obj for obj in yaml.load_all(result.stdout, Loader=loader) if obj]


def load(kustomize: Path, project, module_dir: Path) -> OperatorManifests:
    """The CRDs and webhook configurations of ``project`` (a :class:`~.projects.Project`) in its
    release source at ``module_dir``, as far as the project installs them."""
    manifests = OperatorManifests()
    for relative in project.kustomizations:
        directory = module_dir / relative
        if not (directory / "kustomization.yaml").is_file():
            raise ManifestError(f"{directory} has no kustomization.yaml (layout changed in this release?)")
        for obj in render(kustomize, directory):
            if obj.get("kind") == "CustomResourceDefinition":
                manifests.crds.append(obj)
            elif obj.get("kind") in WEBHOOK_KINDS:
                manifests.webhook_configurations.append(obj)
    if not manifests.crds:
        raise ManifestError(f"no CustomResourceDefinition rendered from {module_dir} ({', '.join(project.kustomizations)})")
    return select(manifests, project.crds, project.webhooks, where=str(module_dir))


def select(manifests: OperatorManifests, crds: tuple[str, ...] | None, webhooks: tuple[str, ...] | None,
           where: str = "") -> OperatorManifests:
    """Only the CRDs named in ``crds`` and the webhooks named in ``webhooks`` (``None``: all); a
    webhook configuration left without webhooks is dropped. A name that is not there is an error
    (the release's layout changed)."""
    out = copy.deepcopy(manifests)
    if crds is not None:
        out.crds = [c for c in out.crds if c["metadata"]["name"] in crds]
        missing = set(crds) - {c["metadata"]["name"] for c in out.crds}
        if missing:
            raise ManifestError(f"{where}: no CRD {', '.join(sorted(missing))} rendered")
    if webhooks is not None:
        kept = []
        for config in out.webhook_configurations:
            config["webhooks"] = [w for w in config.get("webhooks", []) if w.get("name") in webhooks]
            if config["webhooks"]:
                kept.append(config)
        out.webhook_configurations = kept
        missing = set(webhooks) - set(out.webhook_names())
        if missing:
            raise ManifestError(f"{where}: no webhook {', '.join(sorted(missing))} rendered")
    return out


def _loopback_client_config(client_config: dict, base_url: str, ca_bundle: bytes, where: str) -> dict:
    service = client_config.get("service")
    if not service or not service.get("path"):
        raise ManifestError(f"{where}: clientConfig has no service path to point at {base_url}: {client_config}")
    return {"url": base_url.rstrip("/") + service["path"], "caBundle": base64.b64encode(ca_bundle).decode()}


def point_at(manifests: OperatorManifests, base_url: str, ca_bundle: bytes) -> OperatorManifests:
    """A copy of ``manifests`` whose webhooks call ``base_url`` (``https://127.0.0.1:<port>``)."""
    out = copy.deepcopy(manifests)
    for config in out.webhook_configurations:
        for webhook in config.get("webhooks", []):
            where = f"{config['kind']} {config['metadata']['name']} webhook {webhook.get('name')}"
            webhook["clientConfig"] = _loopback_client_config(webhook["clientConfig"], base_url, ca_bundle, where)
    for crd in out.crds:
        conversion = crd.get("spec", {}).get("conversion") or {}
        if conversion.get("strategy") == "Webhook":
            where = f"CustomResourceDefinition {crd['metadata']['name']} conversion webhook"
            hook = conversion["webhook"]
            hook["clientConfig"] = _loopback_client_config(hook["clientConfig"], base_url, ca_bundle, where)
    return out
