"""The operators' own CRDs and webhook configurations, rendered from the release's source in
the Go module cache, with every webhook pointed at a manager process on 127.0.0.1.

The projects keep their install manifests as kustomizations whose patches matter here (JobSet's
pod webhooks get their ``objectSelector`` from a patch; Trainer's and the Training Operator's
webhook configurations get their names from one), so they are rendered with kustomize itself - the
version JobSet's Makefile pins, built by ``make upstream-kit`` - rather than read as raw files.
Which kustomizations, and which of the CRDs and webhooks they render are installed, is each
project's entry (:mod:`.projects`); everything else they render (Deployments, RBAC, ...) is dropped.

Some releases ship their CRDs only as plain YAML files and their webhook configurations only as a
Helm template (Volcano v1.10.0: ``config/crd/volcano/bases/``, ``installer/helm/chart/volcano/
templates/webhooks.yaml``): a project then names the directories of plain files
(:attr:`~.projects.Project.manifest_dirs`, read as they are) and the kit writes the configurations
itself from the template's facts (:attr:`~.projects.Project.webhook_configurations`,
:func:`volcano_webhook_configurations`).

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


def read_plain(directory: Path) -> list[dict]:
    """The objects of every ``*.yaml`` file in ``directory`` (sorted by name), read as they are."""
    if not directory.is_dir():
        raise ManifestError(f"{directory} is not a directory (layout changed in this release?)")
    files = sorted(directory.glob("*.yaml"))
    if not files:
        raise ManifestError(f"{directory} has no *.yaml files (layout changed in this release?)")
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    objects = []
    for path in files:
        try:
            objects += [obj for obj in yaml.load_all(path.read_text(), Loader=loader) if obj]
        except yaml.YAMLError as exc:
            raise ManifestError(f"{path}: not YAML: {exc}") from exc
    return objects


def load(kustomize: Path | None, project, module_dir: Path) -> OperatorManifests:
    """The CRDs and webhook configurations of ``project`` (a :class:`~.projects.Project`) in its
    release source at ``module_dir`` - kustomizations rendered, plain directories read, and the
    configurations the kit writes for it - as far as the project installs them."""
    manifests = OperatorManifests()
    objects = []
    for relative in project.kustomizations:
        directory = module_dir / relative
        if not (directory / "kustomization.yaml").is_file():
            raise ManifestError(f"{directory} has no kustomization.yaml (layout changed in this release?)")
        if kustomize is None:
            raise ManifestError(f"{project.name} renders kustomizations, but no kustomize was given")
        objects += render(kustomize, directory)
    for relative in project.manifest_dirs:
        objects += read_plain(module_dir / relative)
    if project.webhook_configurations is not None:
        objects += project.webhook_configurations(project)
    for obj in objects:
        if obj.get("kind") == "CustomResourceDefinition":
            manifests.crds.append(obj)
        elif obj.get("kind") in WEBHOOK_KINDS:
            manifests.webhook_configurations.append(obj)
    if not manifests.crds:
        sources = ", ".join((*project.kustomizations, *project.manifest_dirs)) or "no kustomization or directory named"
        raise ManifestError(f"no CustomResourceDefinition rendered from {module_dir} ({sources})")
    return select(manifests, project.crds, project.webhooks, where=str(module_dir))


#: Volcano v1.10.0's admission paths and their webhooks, as the Helm chart's templates/webhooks.yaml
#: registers them (the configuration is named ``volcano-admission-service`` + the path with ``-``
#: for ``/``, which is the name vc-webhook-manager waits for): path -> (kind, webhook name,
#: (apiGroup, apiVersion, resource), operations). Paths of vc-webhook-manager's default
#: ``--enabled-admission``; the chart lists them in this order.
VOLCANO_ADMISSIONS = {
    "/pods/mutate": ("MutatingWebhookConfiguration", "mutatepod.volcano.sh", ("", "v1", "pods"), ("CREATE",)),
    "/queues/mutate": ("MutatingWebhookConfiguration", "mutatequeue.volcano.sh",
                       ("scheduling.volcano.sh", "v1beta1", "queues"), ("CREATE",)),
    "/podgroups/mutate": ("MutatingWebhookConfiguration", "mutatepodgroup.volcano.sh",
                          ("scheduling.volcano.sh", "v1beta1", "podgroups"), ("CREATE",)),
    "/jobs/mutate": ("MutatingWebhookConfiguration", "mutatejob.volcano.sh",
                     ("batch.volcano.sh", "v1alpha1", "jobs"), ("CREATE",)),
    "/jobs/validate": ("ValidatingWebhookConfiguration", "validatejob.volcano.sh",
                       ("batch.volcano.sh", "v1alpha1", "jobs"), ("CREATE", "UPDATE")),
    "/pods/validate": ("ValidatingWebhookConfiguration", "validatepod.volcano.sh", ("", "v1", "pods"), ("CREATE",)),
    "/queues/validate": ("ValidatingWebhookConfiguration", "validatequeue.volcano.sh",
                         ("scheduling.volcano.sh", "v1beta1", "queues"), ("CREATE", "UPDATE", "DELETE")),
}
VOLCANO_CONFIGURATION_PREFIX = "volcano-admission-service"


def volcano_webhook_configurations(project) -> list[dict]:
    """The seven configurations vc-webhook-manager waits for, with the chart's settings: every
    webhook ``failurePolicy: Fail``, ``matchPolicy: Equivalent``, ``sideEffects: NoneOnDryRun``,
    ``timeoutSeconds: 10``, admission review v1, and a ``namespaceSelector`` leaving out the release
    namespace (``project.namespace``) and ``kube-system``; mutating ones ``reinvocationPolicy:
    Never``. The service reference is the chart's ``<release>-admission-service`` on 443 at the path
    (:func:`point_at` turns it into the loopback URL)."""
    namespace = project.namespace or "volcano-system"
    configurations = []
    for path, (kind, name, (group, version, resource), operations) in VOLCANO_ADMISSIONS.items():
        webhook = {
            "name": name,
            "admissionReviewVersions": ["v1"],
            "clientConfig": {"service": {"name": f"{project.name}-admission-service", "namespace": namespace,
                                         "path": path, "port": 443}},
            "failurePolicy": "Fail",
            "matchPolicy": "Equivalent",
            "namespaceSelector": {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "NotIn",
                                                        "values": [namespace, "kube-system"]}]},
            "objectSelector": {},
            "rules": [{"apiGroups": [group], "apiVersions": [version], "operations": list(operations),
                       "resources": [resource], "scope": "*"}],
            "sideEffects": "NoneOnDryRun",
            "timeoutSeconds": 10,
        }
        if kind == "MutatingWebhookConfiguration":
            webhook["reinvocationPolicy"] = "Never"
        configurations.append({
            "apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
            "metadata": {"name": VOLCANO_CONFIGURATION_PREFIX + path.replace("/", "-")},
            "webhooks": [webhook]})
    return configurations


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
