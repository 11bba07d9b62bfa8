"""The upstream projects the kit knows, one :class:`Project` entry each.

An entry says everything the kit needs beyond the build itself (``tools/upstream/<name>-v<x.y>/``,
built by ``make upstream-kit`` into ``<cache>/upstream/<name>-<version>/``):

* its Go **module** and where it lives (for reports), and the **profiles** each release is judged
  against by ``make upstream-conformance`` (one, or several: Volcano v1.10.0 by volcano-v1.10,
  -v1.11 and -v1.12);
* which **kustomizations** of the release source (in the Go module cache) hold its CRDs and webhook
  configurations, or which directories of plain YAML files (**manifest_dirs**), the **webhook
  configurations** the kit writes itself where a release ships them only as a Helm template, and
  which of those to install (``crds``/``webhooks``: ``None`` = all);
* its **manager**: a builder in :mod:`.managers` (flags, configuration, readiness) and how many free
  loopback ports it takes - or several managers, started in the order the builder lists them, each
  once the one before is ready (Volcano's webhook manager, controller manager, scheduler); whether
  its webhook configurations must exist before its managers start (**webhooks_first**: Volcano's
  webhook manager waits for them), and which components of the local control plane its managers
  take the place of (**replaces**: vc-scheduler, the plane's volcano-binder stand-in); a **namespace** of its own, objects to create there first
  (``bootstrap``), files it only checks for (``placeholders``), and the DNS names its own certificate
  checks want (:mod:`.pki`);
* the **kinds it owns**, deleted while its manager still runs at teardown (finalizers), in order;
* a project whose release it pins in its go.mod (**requires**): started with it, CRDs and manager
  first (Trainer watches JobSets);
* rows of its table that take a release's manager down (**isolated**): ``make upstream-conformance``
  runs each of them alone, after the others, so that the crash costs no other row anything.

Adding a project = a wrapper module in ``tools/upstream/`` (go.mod + build.env) and one entry here
(plus a webhook probe in :mod:`.probes` if it has webhooks).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from conformance.cluster.local import VOLCANO_BINDER

from . import managers, manifests
from .managers import Context, Manager
from .pki import Pki

OwnedKind = tuple[str, str, str, bool]  # group, version, plural, namespaced


@dataclass(frozen=True)
class Project:
    name: str  # tools/upstream/<name>-v<x.y>/ and <cache>/upstream/<name>-<version>/
    module: str
    url: str
    #: release -> the profile its table is judged with (make upstream-conformance), or several
    #: (the first is the release's own: its report directory is <name>-<release>).
    profiles: dict[str, str | tuple[str, ...]]
    kustomizations: tuple[str, ...]
    #: its manager, or its managers in start order (each started once the one before is ready)
    manager: Callable[[Context], "Manager | list[Manager]"]
    ports: int  # free loopback ports the manager builder gets
    owned_kinds: tuple[OwnedKind, ...]
    #: directories of the release source whose *.yaml files are read as they are (no kustomization)
    manifest_dirs: tuple[str, ...] = ()
    #: webhook configurations the kit writes itself (the release ships them only as a Helm template)
    webhook_configurations: "Callable[[Project], list[dict]] | None" = None
    #: create the webhook configurations before the managers start (a manager waits for them)
    webhooks_first: bool = False
    #: components of the local control plane its managers take the place of (left out of the plane)
    replaces: tuple[str, ...] = ()
    crds: tuple[str, ...] | None = None  # CRD names to install; None: every one rendered
    webhooks: tuple[str, ...] | None = None  # webhook names to keep; None: every one rendered
    requires: str | None = None
    namespace: str | None = None
    bootstrap: Callable[[Pki, str], list[dict]] | None = None
    placeholders: tuple[Path, ...] = ()
    ca_dns_names: tuple[str, ...] = ()
    serving_dns_names: tuple[str, ...] = field(default=())
    #: release -> ``<table>/<row>`` ids whose input crashes that release's manager.
    isolated: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def profiles_for(self, version: str) -> tuple[str, ...]:
        """The profiles release ``version`` is judged with, its own first; () when none."""
        judged = self.profiles.get(version, ())
        return (judged,) if isinstance(judged, str) else tuple(judged)

    @property
    def implementation(self) -> str:
        """``owner/name`` on GitHub, as reports name it."""
        return self.url.removeprefix("https://github.com/")


TRAINER = Project(
    name="trainer",
    module="github.com/kubeflow/trainer/v2",
    url="https://github.com/kubeflow/trainer",
    profiles={"v2.3.0": "trainer-v2.3", "v2.1.0": "trainer-v2.1"},
    # The deployable overlay (manifests/overlays/manager) also pulls JobSet's release manifests from
    # a GitHub URL this machine cannot reach, and adds only the namespace and the Deployment on top.
    kustomizations=("manifests/base/crds", "manifests/base/webhook"),
    manager=managers.trainer_manager,
    ports=3,
    # TrainJobs first: deleting them releases the runtimes' in-use finalizer (v2.0/v2.1).
    owned_kinds=(("trainer.kubeflow.org", "v1alpha1", "trainjobs", True),
                 ("trainer.kubeflow.org", "v1alpha1", "trainingruntimes", True),
                 ("trainer.kubeflow.org", "v1alpha1", "clustertrainingruntimes", False)),
    requires="jobset",
)

JOBSET = Project(
    name="jobset",
    module="sigs.k8s.io/jobset",
    url="https://github.com/kubernetes-sigs/jobset",
    profiles={"v0.12.0": "jobset-v0.12", "v0.10.1": "jobset-v0.10"},
    # What its release manifests are built from (the `jobset-` name prefix comes from there); the
    # Deployment, Service, RBAC and Secret it also renders are dropped.
    kustomizations=("config/default",),
    manager=managers.jobset_manager,
    ports=3,
    owned_kinds=(("jobset.x-k8s.io", "v1alpha2", "jobsets", True),),
)

TRAINING_OPERATOR = Project(
    name="training-operator",
    module="github.com/kubeflow/training-operator",
    url="https://github.com/kubeflow/training-operator",
    profiles={"v1.9.2": "training-operator-v1.9", "v1.8.1": "training-operator-v1.8"},
    kustomizations=("manifests/base/crds", "manifests/base/webhook"),
    # Only the PyTorchJob controller runs (--enable-scheme=pytorchjob). Its kubeflow.org/v1 MPIJob
    # CRD would also take the name mpijobs.kubeflow.org from the MPI Operator's v2beta1 one.
    crds=("pytorchjobs.kubeflow.org",),
    webhooks=("validator.pytorchjob.training-operator.kubeflow.org",),
    manager=managers.training_operator_manager,
    ports=3,
    owned_kinds=(("kubeflow.org", "v1", "pytorchjobs", True),),
    # cert.ManageCerts: the Secret in $MY_POD_NAMESPACE (default kubeflow), checked for the CA name
    # training-operator-ca and <--webhook-service-name>.<namespace>.svc.
    namespace="kubeflow",
    bootstrap=lambda pki, namespace: [managers.training_operator_secret(pki, namespace)],
    placeholders=(managers.TRAINING_OPERATOR_CERT_DIR / "tls.crt",),
    ca_dns_names=("training-operator-ca",),
    serving_dns_names=("training-operator.kubeflow.svc",),
    # v1.8.1 builds with controller-runtime v0.17.2, whose controllers do not recover a panic in
    # Reconcile ("[recovered, repanicked]"): the process exits. v1.9.2's v0.19.1 recovers it by default
    # and retries the reconcile. Both rows expect (and get) nothing created.
    # The create-event predicate's defaulting (onOwnerCreateFunc → Scheme.Default) panics in an informer
    # handler, which nothing recovers in either release - but v1.9's webhook refuses that input (#2320).
    isolated={"v1.8.1": ("env/elastic-rdzv-conf-empty-list",  # elastic.go generateEnvRDZVConf val[:len(val)-1]
                         "env/elastic-master-only-no-bounds-v1.8",  # pytorch_defaults.go setElasticPolicy: nil Worker
                         "admission/elastic-without-worker-admitted-v1.8")},  # the same
)

MPI_OPERATOR = Project(
    name="mpi-operator",
    module="github.com/kubeflow/mpi-operator",
    url="https://github.com/kubeflow/mpi-operator",
    profiles={"v0.6.0": "mpi-operator-v0.6"},
    # The release's base: the CRD (with its kustomize labels) next to the Deployment and RBAC, dropped.
    kustomizations=("manifests/base",),
    crds=("mpijobs.kubeflow.org",),
    manager=managers.mpi_operator_manager,
    ports=0,
    owned_kinds=(("kubeflow.org", "v2beta1", "mpijobs", True),),
    namespace="mpi-operator",  # --lock-namespace: its leader-election Lease
)

LWS = Project(
    name="lws",
    module="sigs.k8s.io/lws",
    url="https://github.com/kubernetes-sigs/lws",
    profiles={"v0.7.0": "lws-v0.7"},
    # What its release manifests are built from (the `lws-` name prefix comes from there): the CRD
    # with its conversion webhook (/convert; one version, so never called) and both webhook
    # configurations; the Deployment, Services, RBAC and the internal-cert Secret are dropped.
    kustomizations=("config/default",),
    manager=managers.lws_manager,
    ports=3,
    owned_kinds=(("leaderworkerset.x-k8s.io", "v1", "leaderworkersets", True),),
)

VOLCANO = Project(
    name="volcano",
    module="volcano.sh/volcano",
    url="https://github.com/volcano-sh/volcano",
    # v1.10.0 is the module proxy's only v1.10 release. It is judged by its own profile and by the two
    # later ones: their rows that pin later behaviour (v1.11's #3813 restarts, v1.12's #4281 WORLD_SIZE)
    # must fail against it, which shows the rows tell the releases apart.
    profiles={"v1.10.0": ("volcano-v1.10", "volcano-v1.11", "volcano-v1.12")},
    kustomizations=(),
    # The five CRDs (jobs, commands, podgroups, queues, numatopologies: vc-scheduler's ResourceTopology
    # gate, on by default, watches the last); the flow CRDs are left out, and so are their controllers.
    manifest_dirs=("config/crd/volcano/bases",),
    webhook_configurations=manifests.volcano_webhook_configurations,
    webhooks_first=True,
    manager=managers.volcano_managers,
    ports=3,
    # Jobs first (the job controller cleans up after them), then any PodGroup left.
    owned_kinds=(("batch.volcano.sh", "v1alpha1", "jobs", True),
                 ("scheduling.volcano.sh", "v1beta1", "podgroups", True)),
    namespace="volcano-system",  # the chart's release namespace: the webhooks' namespaceSelector leaves it out
    replaces=(VOLCANO_BINDER,),
)

PROJECTS = {p.name: p for p in (TRAINER, JOBSET, TRAINING_OPERATOR, MPI_OPERATOR, LWS, VOLCANO)}


def get(name: str) -> Project:
    try:
        return PROJECTS[name]
    except KeyError:
        raise KeyError(f"unknown upstream project {name!r} (one of: {', '.join(PROJECTS)})") from None


def with_requirements(name: str) -> list[Project]:
    """``name`` and what it requires, required ones first (CRDs and managers start in this order)."""
    chain, project = [], get(name)
    while project is not None:
        if project in chain:
            raise ValueError(f"upstream projects require each other: {[p.name for p in chain]}")
        chain.append(project)
        project = get(project.requires) if project.requires else None
    return list(reversed(chain))
