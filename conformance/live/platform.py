"""Remove what Kubernetes itself adds to built-in objects, so a live object reads like a rendered one.

Render models the defaults that carry meaning for training workloads (see
``reconciler/builtin.py``) and leaves out the long tail. The apiserver's defaulting, admission
plugins and scheduler add that tail to every Job, Pod and Service. Each field below is removed
only when it has exactly the value Kubernetes puts there *and* the template it was made from does
not set it itself - so an operator that writes such a field on purpose still shows it. The template
of a Pod or Job is, first, render's own output for the same object when there is one (what the
reference operator writes: a PyTorchJob worker's ``init-pytorch`` container with ``imagePullPolicy:
IfNotPresent``, an MPIJob's pods and launcher Job from its replica templates); else the JobSet's
replicatedJob or the input manifest. A field render writes with the very value Kubernetes would
default it to reads the same live whether the operator wrote it or the apiserver did, so keeping it
hides nothing:

=================================  ==========================================================
pod spec                           ``dnsPolicy: ClusterFirst``, ``schedulerName:
                                   default-scheduler``, ``securityContext: {}``,
                                   ``terminationGracePeriodSeconds: 30`` (defaulting);
                                   ``priority: 0``, ``enableServiceLinks: true``,
                                   ``preemptionPolicy: PreemptLowerPriority`` (Pods only);
                                   ``restartPolicy: Always`` of a Pod whose template is known
                                   (an input, a Job's, a LeaderWorkerSet's)
ServiceAccount admission           ``serviceAccountName``/``serviceAccount: default``, the
                                   ``kube-api-access-*`` projected volume and its mounts
DefaultTolerationSeconds           the ``not-ready``/``unreachable`` NoExecute tolerations, 300 s
PodTolerationRestriction           the ``memory-pressure`` NoSchedule toleration it gives every
                                   Pod that is not BestEffort
kube-scheduler                     ``nodeName``
the harness's steering             a Pod's ``nodeSelector`` and toleration keyed
                                   ``training-conformance.io/run`` (PodNodeSelector and
                                   PodTolerationRestriction, see conformance/cluster/podlife.py)
resources                          ``requests`` copied from ``limits`` (defaulting), and a
                                   quantity's spelling: the apiserver re-serializes built-in
                                   objects' quantities canonically (``2.5`` → ``2500m``); the
                                   template's spelling is kept when the values are equal
quantities elsewhere               ``emptyDir.sizeLimit`` and ``resourceFieldRef.divisor``
                                   re-spelled the same way; ``divisor: '0'`` (a non-pointer
                                   Quantity) dropped where the template has none
container                          ``terminationMessagePath: /dev/termination-log``,
                                   ``terminationMessagePolicy: File``, ``resources: {}``,
                                   ``imagePullPolicy`` (``Always`` for the tag ``latest`` or
                                   neither tag nor digest, else - an unparsable reference too -
                                   ``IfNotPresent``), ports' ``protocol: TCP``,
                                   ``fieldRef.apiVersion: v1``, a probe's ``timeoutSeconds: 1``,
                                   ``periodSeconds: 10``, ``successThreshold: 1``,
                                   ``failureThreshold: 3``
volumes                            ``defaultMode: 420`` of secret/configMap/projected/downwardAPI
                                   sources; ``emptyDir: {}`` on a volume the manifest gave no
                                   source (``SetDefaults_Volume``)
StatefulSet pod template           the pod-spec and container defaults above, and
(the set's, the template in its    ``restartPolicy: Always``, judged against the
ControllerRevisions' ``data``,     LeaderWorkerSet template they come from
and its pods')                     (``leaderTemplate`` for the leader's, else
                                   ``workerTemplate``); kube-controller-manager keeps the
                                   template in ``data`` as the apiserver defaulted it
Job spec                           ``manualSelector: false``
Service spec                       ``clusterIPs`` (= ``[clusterIP]``), ``ipFamilies``,
                                   ``ipFamilyPolicy``, ``internalTrafficPolicy: Cluster``;
                                   ``status: {loadBalancer: {}}``
=================================  ==========================================================

Every object: ``metadata.deletionGracePeriodSeconds`` (render models deletion by
``deletionTimestamp`` alone).

Objects Kubernetes makes in every namespace (the ``kube-root-ca.crt`` ConfigMap) are dropped.

Custom resources are not defaulted by the apiserver; what Go controllers write into them (empty
structs, ``protocol: TCP``, canonical quantities) is :mod:`.gozero`'s, which runs first - so the
JobSet template a Pod is compared with here no longer carries them.
"""

from __future__ import annotations

import copy

from reconciler import meta, statefulset

from ..cluster.podlife import RUN_LABEL
from .gozero import respell
from .keyorder import Partners

_POD_SPEC_DEFAULTS = {"dnsPolicy": "ClusterFirst", "schedulerName": "default-scheduler", "securityContext": {},
                      "terminationGracePeriodSeconds": 30}
_POD_ONLY_DEFAULTS = {"priority": 0, "enableServiceLinks": True, "preemptionPolicy": "PreemptLowerPriority",
                      "serviceAccountName": "default", "serviceAccount": "default"}
#: SetDefaults_Probe (k8s v1.35 pkg/apis/core/v1/defaults.go).
_PROBE_DEFAULTS = {"timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3}
_CONTAINER_DEFAULTS = {"terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
                       "resources": {}}
_DEFAULT_TOLERATIONS = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
]
_SA_VOLUME_PREFIX = "kube-api-access-"
_PLATFORM_OBJECTS = {("", "ConfigMap", "kube-root-ca.crt")}
_JOBSET_NAME = "jobset.sigs.k8s.io/jobset-name"
_REPLICATED_JOB = "jobset.sigs.k8s.io/replicatedjob-name"
_LWS_NAME = "leaderworkerset.sigs.k8s.io/name"
_LWS_WORKER_INDEX = "leaderworkerset.sigs.k8s.io/worker-index"
#: ``SetDefaults_PodSpec``: a template's restartPolicy; a StatefulSet's may only be Always.
_RESTART_DEFAULT = {"restartPolicy": "Always"}


def strip(objects: list[dict], inputs: list[dict], rendered: list[dict] = ()) -> list[dict]:
    """Copies of ``objects`` without platform objects and platform-added fields; ``rendered`` is
    render's outcome of the same case (or step), whose Pods and Jobs are their templates."""
    by_key = {meta.key(o): o for o in objects}
    renders = Partners(rendered)
    out = []
    for obj in objects:
        k = meta.key(obj)
        if (k[0], k[1], k[3]) in _PLATFORM_OBJECTS:
            continue
        obj = copy.deepcopy(obj)
        # Set by the apiserver next to deletionTimestamp (the grace of the delete request); render
        # models deletion by the timestamp alone.
        (obj.get("metadata") or {}).pop("deletionGracePeriodSeconds", None)
        kind, group = k[1], k[0]
        if (group, kind) == ("batch", "Job"):
            spec = obj.get("spec") or {}
            if spec.get("manualSelector") is False and "manualSelector" not in (_input(inputs, obj).get("spec") or {}):
                del spec["manualSelector"]
            _strip_pod_spec((spec.get("template") or {}).get("spec"), _rendered_spec(obj, renders)
                            or _source(obj, by_key, inputs) or {}, pod=False)
        elif (group, kind) == ("", "Pod"):
            source = _rendered_spec(obj, renders)
            if source is None:
                source = _lws_source(obj["metadata"].get("labels"), obj, by_key)
            if source is None:
                source = _source(obj, by_key, inputs)
            # restartPolicy only where the pod's template is known: an operator may write Always itself.
            _strip_pod_spec(obj.get("spec"), source or {}, pod=True, extra=_RESTART_DEFAULT if source is not None else None)
        elif (group, kind) == ("apps", "StatefulSet"):
            template = (obj.get("spec") or {}).get("template") or {}
            source = _lws_source((template.get("metadata") or {}).get("labels"), obj, by_key) \
                or _statefulset_input(inputs, obj)
            _strip_pod_spec(template.get("spec"), source, pod=False, extra=_RESTART_DEFAULT)
        elif (group, kind) == ("apps", "ControllerRevision"):
            template = (((obj.get("data") or {}).get("spec") or {}).get("template") or {})
            if isinstance(template, dict) and isinstance(template.get("spec"), dict):
                owner = next((r for r in obj["metadata"].get("ownerReferences") or [] if r.get("kind") == "StatefulSet"), {})
                source = _lws_source((template.get("metadata") or {}).get("labels"), obj, by_key) or _statefulset_input(
                    inputs, {"apiVersion": "apps/v1", "kind": "StatefulSet",
                             "metadata": {"name": owner.get("name"), "namespace": obj["metadata"].get("namespace")}})
                _strip_pod_spec(template["spec"], source, pod=False, extra=_RESTART_DEFAULT)
        elif (group, kind) == ("", "Service"):
            _strip_service(obj.get("spec") or {}, (_input(inputs, obj).get("spec") or {}))
            if obj.get("status") == {"loadBalancer": {}}:  # every non-LoadBalancer Service has it
                del obj["status"]
        out.append(obj)
    return out


def _rendered_spec(obj: dict, renders: Partners) -> dict | None:
    """The pod spec of render's counterpart of ``obj`` (a Pod, or a Job's template), if render made one."""
    counterpart = renders.get(obj)
    if counterpart is None:
        return None
    spec = counterpart.get("spec") or {}
    if obj.get("kind") == "Job":
        spec = (spec.get("template") or {}).get("spec") or {}
    return spec or None


def _input(inputs: list[dict], obj: dict) -> dict:
    k = meta.key(obj)
    for candidate in inputs:
        ck = meta.key(candidate)
        if ck[:2] == k[:2] and ck[3] == k[3]:
            return candidate
    return {}


def _statefulset_input(inputs: list[dict], statefulset: dict) -> dict:
    """The pod spec of a StatefulSet the case applied itself (``{}`` for one an operator made)."""
    return (((_input(inputs, statefulset).get("spec") or {}).get("template") or {}).get("spec")) or {}


def _source(obj: dict, by_key: dict, inputs: list[dict]) -> dict | None:
    """The pod spec ``obj`` (a Job or a Pod) was made from, as far as the outcome tells (None: unknown)."""
    labels = obj["metadata"].get("labels") or {}
    namespace = obj["metadata"].get("namespace", "")
    if labels.get(_JOBSET_NAME) and labels.get(_REPLICATED_JOB):
        jobset = next((o for k, o in by_key.items() if k[1] == "JobSet" and k[2] == namespace
                       and k[3] == labels[_JOBSET_NAME]), None)
        rj = meta.find_named(((jobset or {}).get("spec") or {}).get("replicatedJobs"), labels[_REPLICATED_JOB])
        if rj is not None:
            return (((rj.get("template") or {}).get("spec") or {}).get("template") or {}).get("spec") or {}
    given = _input(inputs, obj)
    if given:
        spec = given.get("spec") or {}
        return (spec.get("template") or {}).get("spec") or {} if obj["kind"] == "Job" else spec
    for ref in obj["metadata"].get("ownerReferences", []):
        if ref.get("kind") == "Job":
            owner = _input(inputs, {"apiVersion": ref.get("apiVersion"), "kind": "Job",
                                    "metadata": {"name": ref.get("name"), "namespace": namespace}})
            if owner:
                return ((owner.get("spec") or {}).get("template") or {}).get("spec") or {}
    return None


def _lws_source(labels: dict | None, obj: dict, by_key: dict) -> dict | None:
    """The pod spec of the LeaderWorkerSet template a StatefulSet template or pod with these labels
    comes from (LWS v0.7.0: the leader's from ``leaderTemplate``, else ``workerTemplate``); None when
    they name no LeaderWorkerSet of the outcome."""
    labels = labels or {}
    name, namespace = labels.get(_LWS_NAME), obj["metadata"].get("namespace", "")
    if not name:
        return None
    lws = next((o for k, o in by_key.items() if k[1] == "LeaderWorkerSet" and k[2] == namespace and k[3] == name), None)
    if lws is None:
        return None
    lwt = (lws.get("spec") or {}).get("leaderWorkerTemplate") or {}
    template = lwt.get("leaderTemplate") if labels.get(_LWS_WORKER_INDEX) == "0" and lwt.get("leaderTemplate") else \
        lwt.get("workerTemplate")
    return ((template or {}).get("spec") or {}) if isinstance(template, dict) else {}


def _drop_default(target: dict, source: dict, key: str, value) -> None:
    if key in target and target[key] == value and key not in source:
        del target[key]


def _strip_pod_spec(spec: dict | None, source: dict, pod: bool, extra: dict | None = None) -> None:
    if not spec:
        return
    for key, value in {**_POD_SPEC_DEFAULTS, **(extra or {})}.items():
        _drop_default(spec, source, key, value)
    if pod:
        for key, value in _POD_ONLY_DEFAULTS.items():
            _drop_default(spec, source, key, value)
        _strip_steering(spec)
        if "nodeName" not in source:
            spec.pop("nodeName", None)
        if spec.get("tolerations"):
            own = source.get("tolerations") or []
            kept = [t for t in spec["tolerations"] if t not in _DEFAULT_TOLERATIONS or t in own]
            if kept:
                spec["tolerations"] = kept
            else:
                del spec["tolerations"]
    sa_volumes = {v.get("name") for v in spec.get("volumes", []) if v.get("name", "").startswith(_SA_VOLUME_PREFIX)
                  and "projected" in v}
    if sa_volumes:
        spec["volumes"] = [v for v in spec["volumes"] if v.get("name") not in sa_volumes]
        if not spec["volumes"]:
            del spec["volumes"]
    for volume in spec.get("volumes", []):
        source_volume = meta.find_named(source.get("volumes"), volume.get("name")) or {}
        for kind in ("secret", "configMap", "projected", "downwardAPI"):
            if kind in volume:
                _drop_default(volume[kind], source_volume.get(kind) or {}, "defaultMode", 420)
        _strip_downward_items(volume.get("downwardAPI"), source_volume.get("downwardAPI"))
        source_sources = (source_volume.get("projected") or {}).get("sources") or []
        for i, projected in enumerate((volume.get("projected") or {}).get("sources") or []):
            own = source_sources[i] if i < len(source_sources) else {}
            _strip_downward_items(projected.get("downwardAPI"), own.get("downwardAPI"))
        if volume.get("emptyDir") == {} and set(volume) == {"name", "emptyDir"} and set(source_volume) == {"name"}:
            del volume["emptyDir"]  # SetDefaults_Volume: a volume the manifest gave no source is an emptyDir
        if isinstance(volume.get("emptyDir"), dict):  # sizeLimit: a quantity, re-spelled canonically
            source_volume = meta.find_named(source.get("volumes"), volume.get("name")) or {}
            respell(volume["emptyDir"], {k: v for k, v in (source_volume.get("emptyDir") or {}).items() if k == "sizeLimit"})
    for key in ("initContainers", "containers"):
        for container in spec.get(key, []):
            source_container = meta.find_named(source.get(key), container.get("name")) or {}
            _strip_container(container, source_container, sa_volumes)


def _strip_downward_items(downward: dict | None, source: dict | None) -> None:
    """A downwardAPI item's defaults (``SetDefaults_ObjectFieldSelector``'s ``apiVersion: v1``, an
    unset ``divisor`` encoded as ``"0"``), matched to the manifest's item by ``path``."""
    for item in (downward or {}).get("items") or []:
        own = next((i for i in (source or {}).get("items") or [] if i.get("path") == item.get("path")), {})
        _strip_selectors(item, own)


def _strip_selectors(holder: dict, source: dict) -> None:
    """An env ``valueFrom`` or a downwardAPI item against the manifest's."""
    if isinstance(holder.get("fieldRef"), dict):
        _drop_default(holder["fieldRef"], source.get("fieldRef") or {}, "apiVersion", "v1")
    if isinstance(holder.get("resourceFieldRef"), dict):
        # divisor is a non-pointer Quantity: "0" when not set, and re-spelled canonically.
        own = source.get("resourceFieldRef") or {}
        _drop_default(holder["resourceFieldRef"], own, "divisor", "0")
        respell(holder["resourceFieldRef"], {k: v for k, v in own.items() if k == "divisor"})


def _strip_steering(spec: dict) -> None:
    """What the namespace annotations of the harness's pod lifecycle added (no case sets this key)."""
    selector = spec.get("nodeSelector") or {}
    if RUN_LABEL in selector:
        del selector[RUN_LABEL]
        if not selector:
            del spec["nodeSelector"]
    if spec.get("tolerations"):
        kept = [t for t in spec["tolerations"] if t.get("key") != RUN_LABEL]
        if kept:
            spec["tolerations"] = kept
        else:
            del spec["tolerations"]


def _strip_resources(container: dict, source: dict) -> None:
    resources = container.get("resources")
    if not isinstance(resources, dict):
        return
    wanted = source.get("resources") or {}
    limits, requests = resources.get("limits") or {}, resources.get("requests")
    if isinstance(requests, dict):
        for name in list(requests):
            if name in limits and requests[name] == limits[name] and name not in (wanted.get("requests") or {}):
                del requests[name]  # defaulted from the limit
        if not requests and "requests" not in wanted:
            del resources["requests"]
    for section in ("limits", "requests"):
        respell(resources.get(section) or {}, wanted.get(section) or {})


def _strip_container(container: dict, source: dict, sa_volumes: set[str]) -> None:
    _strip_resources(container, source)
    for key, value in _CONTAINER_DEFAULTS.items():
        _drop_default(container, source, key, value)
    _drop_default(container, source, "imagePullPolicy", _pull_policy(container.get("image", "")))
    if sa_volumes and container.get("volumeMounts"):
        container["volumeMounts"] = [m for m in container["volumeMounts"] if m.get("name") not in sa_volumes]
        if not container["volumeMounts"]:
            del container["volumeMounts"]
    for port in container.get("ports", []):
        source_port = next((p for p in source.get("ports", []) if p.get("containerPort") == port.get("containerPort")), {})
        _drop_default(port, source_port, "protocol", "TCP")
    for env in container.get("env", []):
        source_env = meta.find_named(source.get("env"), env.get("name")) or {}
        _strip_selectors(env.get("valueFrom") or {}, source_env.get("valueFrom") or {})
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        if isinstance(container.get(probe), dict):
            for key, value in _PROBE_DEFAULTS.items():
                _drop_default(container[probe], source.get(probe) or {}, key, value)


def _pull_policy(image: str) -> str:
    """kube-apiserver's default: Always for the tag ``latest`` or an image with neither tag nor digest,
    IfNotPresent otherwise - also for a reference that does not parse (:func:`reconciler.statefulset.pull_policy`)."""
    return statefulset.pull_policy(image)


def _strip_service(spec: dict, source: dict) -> None:
    if spec.get("clusterIPs") == [spec.get("clusterIP")] and "clusterIPs" not in source:
        del spec["clusterIPs"]
    for key in ("ipFamilies", "ipFamilyPolicy"):
        if key not in source:
            spec.pop(key, None)
    _drop_default(spec, source, "internalTrafficPolicy", "Cluster")
