"""Built-in Kubernetes kinds the reconciler creates, and the few apiserver defaults they get.

Only defaults that carry meaning for training workloads are applied (Job ``backoffLimit`` 6, the
generated Job selector and its pod labels, Secret ``type``, a pod failure policy's ``onPodConditions[].status``,
a new Pod's ``status.phase: Pending``, a StatefulSet's spec defaults), plus the one Job validation
group restart depends on and the StatefulSet validation that LeaderWorkerSet's StatefulSets meet.
The long tail of Pod/container
defaults (``dnsPolicy``, ``terminationMessagePath`` …) is left out here and dropped from live
objects by the normalizer, so goldens show what an operator wrote, not kube-apiserver's defaults.
"""

from __future__ import annotations

from . import gotypes, k8s_schemas, meta, quantity
from .errors import NOT_SUPPORTED, REQUIRED, FieldError, Rejection, invalid, plain
from .objectmeta import DecodeError  # the same 400 BadRequest as an undecodable ObjectMeta

BUILTIN = {
    ("v1", "ConfigMap"), ("v1", "Secret"), ("v1", "Service"), ("v1", "Pod"), ("v1", "Namespace"),
    ("batch/v1", "Job"), ("networking.k8s.io/v1", "NetworkPolicy"),
    ("apps/v1", "StatefulSet"), ("apps/v1", "ControllerRevision"),
}


def is_builtin(api_version: str, kind: str) -> bool:
    return (api_version, kind) in BUILTIN


#: apps/v1 StatefulSet fields the StatefulSet stand-in reads, with their Go types (for decode errors).
_STATEFULSET_TYPES = {
    **gotypes.POD_TYPES,
    "StatefulSet": {"metadata": ("object", "v1.ObjectMeta", "ObjectMeta"), "spec": ("object", "v1.StatefulSetSpec", "StatefulSetSpec")},
    "StatefulSetSpec": {
        "replicas": ("int", "int32", None), "selector": ("object", "v1.LabelSelector", "LabelSelector"),
        "template": ("object", "v1.PodTemplateSpec", "PodTemplateSpec"), "serviceName": ("string", "string", None),
        "podManagementPolicy": ("string", "v1.PodManagementPolicyType", None),
        "updateStrategy": ("object", "v1.StatefulSetUpdateStrategy", "StatefulSetUpdateStrategy"),
        "revisionHistoryLimit": ("int", "int32", None), "minReadySeconds": ("int", "int32", None),
        "ordinals": ("object", "v1.StatefulSetOrdinals", "StatefulSetOrdinals"),
        "persistentVolumeClaimRetentionPolicy": ("object", "v1.StatefulSetPersistentVolumeClaimRetentionPolicy",
                                                 "StatefulSetPersistentVolumeClaimRetentionPolicy")},
    "LabelSelector": {"matchLabels": ("map", "map[string]string", None)},
    "StatefulSetUpdateStrategy": {"type": ("string", "v1.StatefulSetUpdateStrategyType", None),
                                  "rollingUpdate": ("object", "v1.RollingUpdateStatefulSetStrategy",
                                                    "RollingUpdateStatefulSetStrategy")},
    "RollingUpdateStatefulSetStrategy": {"partition": ("int", "int32", None)},
    "StatefulSetOrdinals": {"start": ("int", "int32", None)},
    "StatefulSetPersistentVolumeClaimRetentionPolicy": {"whenDeleted": ("string", "string", None),
                                                        "whenScaled": ("string", "string", None)},
}


#: kind -> (field, Kubernetes type of its value) decoded with the types of kube-apiserver v1.35.8
#: (reconciler/k8s_schemas.py); a StatefulSet's spec is read with _STATEFULSET_TYPES, its template so.
_DECODED = {
    "Pod": ("spec", "io.k8s.api.core.v1.PodSpec"), "Job": ("spec", "io.k8s.api.batch.v1.JobSpec"),
    "Service": ("spec", "io.k8s.api.core.v1.ServiceSpec"),
}


def check_decodable(obj: dict) -> None:
    """The apiserver's typed decoding of a built-in object: a value of the wrong JSON type (anywhere
    in a Pod's, Job's or Service's spec, a ConfigMap's data, the fields of a StatefulSet the stand-in
    reads and its pod template) is refused before anything else runs, worded ``<Kind> in version "v1"
    cannot be handled as a <Kind>: json: cannot unmarshal ...`` (400)."""
    kind = obj.get("kind")
    found = None
    if kind == "StatefulSet":
        found = gotypes.unmarshal_error(obj, _STATEFULSET_TYPES, "StatefulSet", "")
        spec = obj.get("spec")
        if not found and isinstance(spec, dict):
            found = k8s_schemas.decode_error(spec.get("template"), "io.k8s.api.core.v1.PodTemplateSpec",
                                             "spec.template", "StatefulSetSpec")
    elif kind in _DECODED:
        field, type_name = _DECODED[kind]
        found = k8s_schemas.decode_error(obj.get(field), type_name, field, kind)
    elif kind == "ConfigMap":
        data = obj.get("data")
        if data is not None and not isinstance(data, dict):
            found = f"json: cannot unmarshal {gotypes.json_kind(data)} into Go struct field ConfigMap.data of type map[string]string"
        elif data:
            bad = next((v for v in data.values() if v is not None and not isinstance(v, str)), None)
            if bad is not None:
                found = f"json: cannot unmarshal {gotypes.json_kind(bad)} into Go struct field ConfigMap.data of type string"
    if found:
        version = obj.get("apiVersion", "").split("/")[-1]
        raise DecodeError("decode", meta.ref(obj), [plain(f'{kind} in version "{version}" cannot be handled as a '
                                                          f"{kind}: {found}")])


def meta_ref(obj: dict) -> str:
    return f'StatefulSet.apps "{(obj.get("metadata") or {}).get("name", "")}"'


def default(obj: dict) -> dict:
    kind = obj.get("kind")
    if kind == "Secret":
        obj.setdefault("type", "Opaque")
    elif kind == "Service":
        if obj.get("spec") is None:  # absent or JSON null: Go decodes either into the zero ServiceSpec
            obj["spec"] = {}
        spec = obj["spec"]
        spec.setdefault("type", "ClusterIP")
        spec.setdefault("sessionAffinity", "None")
        for port in spec.get("ports") or []:
            port.setdefault("protocol", "TCP")
            port.setdefault("targetPort", port.get("port"))
    elif kind == "Job":
        _default_job(obj)
    elif kind == "Pod":
        # The pod strategy's PrepareForCreate: a new Pod's status is phase Pending, whatever was sent.
        obj["status"] = {"phase": "Pending"}
        _admit_priority(obj.get("spec"))
        _default_host_network_ports(obj.get("spec"))
    elif kind == "StatefulSet":
        _default_statefulset(obj)
    return obj


def _default_host_network_ports(spec) -> None:
    """SetDefaults_Pod (pkg/apis/core/v1/defaults.go, defaultHostNetworkPorts): in a hostNetwork Pod every
    container and init container port without a hostPort gets its containerPort as hostPort."""
    if not isinstance(spec, dict) or not spec.get("hostNetwork"):
        return
    for container in list(spec.get("containers") or []) + list(spec.get("initContainers") or []):
        for port in (container.get("ports") or []) if isinstance(container, dict) else []:
            if isinstance(port, dict) and not port.get("hostPort"):
                port["hostPort"] = port.get("containerPort")


#: The two PriorityClasses every cluster has (pkg/apis/scheduling/types.go: SystemCriticalPriority
#: 2000000000, node-critical = that + 1000); render's cluster has no other.
SYSTEM_PRIORITY_CLASSES = {"system-cluster-critical": 2000000000, "system-node-critical": 2000001000}


def _admit_priority(spec) -> None:
    """The Priority admission plugin (before any webhook): ``spec.priority`` = the value of the
    Pod's ``priorityClassName``. Render writes it only for a built-in class: every other Pod gets 0
    (no global default class), which render leaves out as live normalisation drops it
    (conformance/live/platform.py). A class the cluster does not have makes the apiserver refuse
    the Pod: :func:`admit_create`."""
    if isinstance(spec, dict) and spec.get("priorityClassName") in SYSTEM_PRIORITY_CLASSES:
        spec["priority"] = SYSTEM_PRIORITY_CLASSES[spec["priorityClassName"]]


class AdmissionForbidden(Rejection):
    """An admission plugin's refusal: HTTP 403 Forbidden, ``<resource> "<name>" is forbidden: <why>``
    (apiserver ``admission.NewForbidden``)."""

    @property
    def code(self) -> int:
        return 403

    @property
    def reason(self) -> str:
        return "Forbidden"

    @property
    def message(self) -> str:
        return str(self.errors[0])


def prepare_for_create(obj: dict) -> None:
    """The registry strategies' ``PrepareForCreate`` where render's stand-ins read what it clears: a
    StatefulSet's status is reset (k8s v1.35 pkg/registry/apps/statefulset/strategy.go: "create cannot
    set status"), so a client cannot hand kube-controller-manager a ``collisionCount`` or counters."""
    if obj.get("kind") == "StatefulSet" and meta.group_of(obj.get("apiVersion", "")) == "apps":
        obj.pop("status", None)


def admit_create(obj: dict) -> None:
    """The built-in admission plugins' refusals on CREATE (after defaulting, before webhooks): the
    Priority plugin refuses a Pod whose ``priorityClassName`` names a class the cluster does not have
    - render's cluster has only the built-in two (k8s v1.35 plugin/pkg/admission/priority admitPod).
    Mutating admission runs before the name is generated, so the error names the ``generateName``
    (``extractResourceName``)."""
    if obj.get("kind") != "Pod":
        return
    wanted = (obj.get("spec") or {}).get("priorityClassName")
    if wanted and wanted not in SYSTEM_PRIORITY_CLASSES:
        md = obj["metadata"]
        name = md.get("generateName") or md.get("name")
        raise AdmissionForbidden("forbidden", f'pods "{name}"',
                                 [plain(f'pods "{name}" is forbidden: no PriorityClass with name {wanted} was found')])


def _default_statefulset(sts: dict) -> None:
    """``SetDefaults_StatefulSet`` (k8s v1.35 pkg/apis/apps/v1/defaults.go) and the registry's
    ``dropStatefulSetDisabledFields``: ``rollingUpdate.maxUnavailable`` is dropped while the
    MaxUnavailableStatefulSet gate is off (beta but off by default in v1.35), unless already in use."""
    # JSON null decodes as Go's zero value (an empty struct, a nil pointer, ""), which the defaults
    # then fill as if the field were absent; a value of the wrong type is left to validation.
    if sts.get("spec") is None:
        sts["spec"] = {}
    spec = sts["spec"]
    if not isinstance(spec, dict):
        return
    if not spec.get("podManagementPolicy"):
        spec["podManagementPolicy"] = "OrderedReady"
    if spec.get("updateStrategy") is None:
        spec["updateStrategy"] = {}
    strategy = spec["updateStrategy"]
    if isinstance(strategy, dict):
        if not strategy.get("type"):
            strategy["type"] = "RollingUpdate"
            if strategy.get("rollingUpdate") is None:
                strategy["rollingUpdate"] = {}
        rolling = strategy.get("rollingUpdate")
        if strategy["type"] == "RollingUpdate" and isinstance(rolling, dict):
            if rolling.get("partition") is None:
                rolling["partition"] = 0
            rolling.pop("maxUnavailable", None)
    if spec.get("persistentVolumeClaimRetentionPolicy") is None:
        spec["persistentVolumeClaimRetentionPolicy"] = {}
    retention = spec["persistentVolumeClaimRetentionPolicy"]
    if isinstance(retention, dict):
        for field in ("whenDeleted", "whenScaled"):
            if not retention.get(field):
                retention[field] = "Retain"
    for field, value in (("replicas", 1), ("revisionHistoryLimit", 10)):
        if spec.get(field) is None:
            spec[field] = value


def _default_job(job: dict) -> None:
    spec = job.setdefault("spec", {})
    # SetDefaults_Job (pkg/apis/batch/v1/defaults.go): both unset means a non-parallel Job, and
    # both become 1; otherwise only parallelism is defaulted.
    if "completions" not in spec and "parallelism" not in spec:
        spec["completions"] = 1
    spec.setdefault("parallelism", 1)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    if "backoffLimit" not in spec:
        # With a per-index limit, the Job-wide one defaults to MaxInt32: the per-index limit governs.
        spec["backoffLimit"] = 2**31 - 1 if spec.get("backoffLimitPerIndex") is not None else 6
    spec.setdefault("podReplacementPolicy", "Failed" if spec.get("podFailurePolicy") else "TerminatingOrFailed")
    for rule in (spec.get("podFailurePolicy") or {}).get("rules") or []:
        # A null rule or pattern decodes to Go's zero struct, which validation then refuses.
        for pattern in (rule.get("onPodConditions") or [] if isinstance(rule, dict) else []):
            if isinstance(pattern, dict):
                pattern.setdefault("status", "True")
    if spec["completionMode"] == "Indexed":
        spec.setdefault("completions", spec["parallelism"])
    # A Job without labels takes its pod template's label map - the same Go map, not a copy, so the
    # labels the strategy generates into the template below (generateSelector) land on the Job too.
    template_labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels")
    shares_labels = template_labels is not None and not job["metadata"].get("labels")
    # The generated selector: the apiserver keys it on the Job's own UID.
    uid = job["metadata"].get("uid")
    name = job["metadata"].get("name")
    if uid and not spec.get("manualSelector"):
        spec["selector"] = {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
        labels = spec.setdefault("template", {}).setdefault("metadata", {}).setdefault("labels", {})
        labels.update({
            "batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": name,
            "controller-uid": uid, "job-name": name,
        })
    if shares_labels:
        job["metadata"]["labels"] = dict(spec["template"]["metadata"]["labels"])


def validate(obj: dict) -> list[FieldError]:
    """kube-apiserver's own validation of a built-in kind (a 422 Invalid, like a CRD schema error)."""
    if obj.get("kind") == "Job":
        pod_spec = ((obj.get("spec") or {}).get("template") or {}).get("spec") or {}
        return (_validate_containers(pod_spec, "spec.template.spec") + _validate_job(obj)
                + _validate_resources(pod_spec, "spec.template.spec"))
    if obj.get("kind") == "Pod":
        return (_validate_containers(obj.get("spec") or {}, "spec") + _validate_restart_policy(obj.get("spec") or {})
                + _validate_resources(obj.get("spec") or {}, "spec"))
    if obj.get("kind") == "StatefulSet":
        pod_spec = ((obj.get("spec") or {}).get("template") or {}).get("spec") or {}
        return _validate_statefulset(obj) + _validate_resources(pod_spec, "spec.template.spec")
    return []


def _validate_statefulset(sts: dict) -> list[FieldError]:
    """The part of ``ValidateStatefulSetSpec`` (k8s v1.35 pkg/apis/apps/validation) a StatefulSet made
    from a pod template meets: policies, counts, the selector and its match with the template's
    labels, and the template's ``restartPolicy`` (only ``Always``); wording verbatim."""
    spec = sts.get("spec") or {}
    errors = []
    policy = spec.get("podManagementPolicy")
    if policy not in ("OrderedReady", "Parallel"):
        errors.append(invalid("spec.podManagementPolicy", policy, "must be 'OrderedReady' or 'Parallel'"))
    strategy = spec.get("updateStrategy") or {}
    if strategy.get("type") not in ("RollingUpdate", "OnDelete"):
        errors.append(invalid("spec.updateStrategy", strategy, "must be 'RollingUpdate' or 'OnDelete'"))
    elif strategy["type"] == "OnDelete" and strategy.get("rollingUpdate") is not None:
        errors.append(invalid("spec.updateStrategy.rollingUpdate", strategy["rollingUpdate"],
                              "only allowed for updateStrategy 'RollingUpdate'"))
    for path, value in (("spec.replicas", spec.get("replicas", 0)), ("spec.minReadySeconds", spec.get("minReadySeconds", 0)),
                        ("spec.ordinals.start", (spec.get("ordinals") or {}).get("start", 0))):
        if isinstance(value, int) and value < 0:
            errors.append(invalid(path, value, "must be greater than or equal to 0"))
    selector = spec.get("selector")
    template = spec.get("template") or {}
    labels = (template.get("metadata") or {}).get("labels") or {}
    if not isinstance(selector, dict):
        errors.append(FieldError(REQUIRED, "spec.selector"))
    elif not selector.get("matchLabels") and not selector.get("matchExpressions"):
        errors.append(invalid("spec.selector", selector, "empty selector is invalid for statefulset"))
    elif any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        errors.append(invalid("spec.template.metadata.labels", labels, "`selector` does not match template `labels`"))
    for i, container in enumerate((template.get("spec") or {}).get("containers") or []):
        if not isinstance(container, dict) or not container.get("name"):  # ValidateContainers
            errors.append(FieldError(REQUIRED, f"spec.template.spec.containers[{i}].name"))
        if not isinstance(container, dict) or not container.get("image"):  # validateContainerCommon, templates too
            errors.append(FieldError(REQUIRED, f"spec.template.spec.containers[{i}].image"))
    for i, container in enumerate((template.get("spec") or {}).get("initContainers") or []):
        if not isinstance(container, dict) or not container.get("image"):
            errors.append(FieldError(REQUIRED, f"spec.template.spec.initContainers[{i}].image"))
    restart_policy = (template.get("spec") or {}).get("restartPolicy", "Always")
    if restart_policy != "Always":
        errors.append(FieldError(NOT_SUPPORTED, "spec.template.spec.restartPolicy",
                                 'supported values: "Always"', restart_policy, blocking=True))
    return errors


def _validate_containers(pod_spec: dict, path: str) -> list[FieldError]:
    """validateContainers (pkg/apis/core/validation), its name rule: every container has a name (a null
    item decodes to Go's zero Container, which has none). Its other rules are not modelled."""
    errors = []
    if not pod_spec.get("containers"):  # "if len(containers) == 0": absent, null or []
        errors.append(FieldError(REQUIRED, f"{path}.containers"))
    for i, container in enumerate(pod_spec.get("containers") or []):
        if not (container if isinstance(container, dict) else {}).get("name"):
            errors.append(FieldError(REQUIRED, f"{path}.containers[{i}].name"))
    for field in ("initContainers", "containers"):
        for i, container in enumerate(pod_spec.get(field) or []):
            ports = (container.get("ports") or []) if isinstance(container, dict) else []
            errors += _validate_ports(ports, f"{path}.{field}[{i}].ports")
    return errors


def _validate_ports(ports: list, path: str) -> list[FieldError]:
    """validateContainerPorts (pkg/apis/core/validation, k8s v1.35), its port-number rules: a
    containerPort of 0 (or none) is required, any other outside 1-65535 invalid, and so is a hostPort
    outside that range. (A Volcano plugin whose ``--port`` failed to parse opens port 0, and every pod
    create is refused here.) Port names and protocols are not modelled."""
    errors = []
    for i, port in enumerate(ports):
        port = port if isinstance(port, dict) else {}
        container_port, host_port = port.get("containerPort") or 0, port.get("hostPort") or 0
        if container_port == 0:
            errors.append(FieldError(REQUIRED, f"{path}[{i}].containerPort"))
        elif isinstance(container_port, int) and not 1 <= container_port <= 65535:
            errors.append(invalid(f"{path}[{i}].containerPort", container_port, "must be between 1 and 65535, inclusive"))
        if isinstance(host_port, int) and host_port != 0 and not 1 <= host_port <= 65535:
            errors.append(invalid(f"{path}[{i}].hostPort", host_port, "must be between 1 and 65535, inclusive"))
    return errors


def _validate_restart_policy(pod_spec: dict) -> list[FieldError]:
    """validateRestartPolicy (pkg/apis/core/validation): after defaulting ("" → Always), only Always,
    OnFailure and Never. A controller that copies an unchecked value (PyTorchJob's replica
    restartPolicy) gets its pod refused."""
    policy = pod_spec.get("restartPolicy")
    if not policy or policy in ("Always", "OnFailure", "Never"):
        return []
    return [FieldError(NOT_SUPPORTED, "spec.restartPolicy", 'supported values: "Always", "OnFailure", "Never"', policy)]


def _overcommit_allowed(resource: str) -> bool:
    # helper.IsOvercommitAllowed: native resources (no domain, or *kubernetes.io/) except hugepages.
    native = "/" not in resource or "kubernetes.io/" in resource
    return native and not resource.startswith("hugepages-")


def _validate_resources(pod_spec: dict, path: str) -> list[FieldError]:
    """ValidateResourceRequirements: an extended resource (``nvidia.com/gpu``) needs a limit equal to
    its request, and no request may exceed its limit. A Job whose template breaks this is refused,
    so a TrainJob that requests GPUs without limits never gets pods on a real cluster."""
    errors = []
    for field in ("initContainers", "containers"):
        for i, container in enumerate(pod_spec.get(field) or []):
            resources = (container.get("resources") or {}) if isinstance(container, dict) else {}
            requests, limits = resources.get("requests") or {}, resources.get("limits") or {}
            base = f"{path}.{field}[{i}].resources"
            for name, requested in requests.items():
                if name not in limits:
                    if not _overcommit_allowed(name):
                        errors.append(FieldError(REQUIRED, f"{base}.limits", "Limit must be set for non overcommitable resources"))
                    continue
                req, lim = quantity.parse(requested), quantity.parse(limits[name])
                if req != lim and not _overcommit_allowed(name):
                    errors.append(invalid(f"{base}.requests", str(requested), f"must be equal to {name} limit of {limits[name]}"))
                elif req > lim:
                    errors.append(invalid(f"{base}.requests", str(requested), f"must be less than or equal to {name} limit of {limits[name]}"))
    return errors


def _validate_job(job: dict) -> list[FieldError]:
    spec = job.get("spec") or {}
    restart_policy = ((spec.get("template") or {}).get("spec") or {}).get("restartPolicy")
    if spec.get("podFailurePolicy") and restart_policy != "Never":
        # Wording: shared/reference/volcano-jobset-restart.md §2.3 (pkg/apis/batch/validation).
        return [invalid("spec.template.spec.restartPolicy", restart_policy,
                        'only "Never" is supported when podFailurePolicy is specified')]
    return []
