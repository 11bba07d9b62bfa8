"""LeaderWorkerSet's webhooks (v0.7.0 ``pkg/webhooks``; shared/reference/lws-volcano-upstream.md A.1, A.4).

* ``mleaderworkerset.kb.io`` (CREATE, UPDATE) - :func:`default_lws`. controller-runtime first decodes
  the object into LWS's Go types: a value of the wrong JSON type is answered with HTTP 400 and Go's
  ``encoding/json`` error, before the CRD schema is checked. Then: ``restartPolicy`` ``""`` →
  ``RecreateGroupOnPodRestart`` and the deprecated ``Default`` → ``None``; ``rolloutStrategy.type``
  ``""`` → ``RollingUpdate``, and a RollingUpdate without ``rollingUpdateConfiguration`` gets
  ``{partition: 0, maxUnavailable: 1, maxSurge: 0}``; ``networkConfig`` (or its ``subdomainPolicy``)
  missing → ``Shared``. ``replicas``, ``size`` and ``startupPolicy`` are the CRD's defaults. The
  patch is the difference to the decoded object re-encoded, so a missing ``workerTemplate`` (a
  non-pointer struct) comes back as its Go zero value with ``containers: null``, which the schema
  then refuses as not an array - the CRD's ``required`` never sees it missing.
* ``vleaderworkerset.kb.io`` (CREATE, UPDATE) - :func:`validate_lws`, :func:`validate_lws_update`:
  denials (403) with upstream's messages and paths verbatim, typos included (``grater``, the
  capital ``SubGroupPolicy`` path segment). A ``subGroupPolicy`` without ``subGroupSize`` makes
  upstream's validator dereference a nil pointer; controller-runtime recovers the panic and answers
  500 (:class:`Panic`).
* ``mpod.kb.io`` (CREATE, pods labelled ``leaderworkerset.sigs.k8s.io/name``) - :func:`default_pod`:
  group/worker index labels from the pod name's ordinal, the group key, ``spec.subdomain`` of a
  UniquePerReplica leader, subgroup labels, then ``LWS_LEADER_ADDRESS``, ``LWS_GROUP_SIZE`` and
  ``LWS_WORKER_INDEX`` first in every container and init container (a user's variable of the same
  name is replaced). Its errors are denials (403).

Not modelled: exclusive-placement affinities, TPU env, gang-scheduling PodGroups.
"""

from __future__ import annotations

import hashlib
import math
import re

from .. import crds
from ..errors import FieldError, Rejection, invalid, plain
from ..gotypes import POD_TYPES, IntOrString, unmarshal_error
from ..jobset.validation import dns1035_label
from ..statefulset import parent_and_ordinal
from ..trainer.defaulter import BadRequest, decode_error
from . import keys

MAX_INT32 = 2**31 - 1
#: JSON path of each LeaderWorkerSet struct → its Go type name, for Go's decode errors.
GO_STRUCTS = {
    "": "LeaderWorkerSet", "spec": "LeaderWorkerSetSpec", "spec.leaderWorkerTemplate": "LeaderWorkerTemplate",
    "spec.leaderWorkerTemplate.subGroupPolicy": "SubGroupPolicy", "spec.rolloutStrategy": "RolloutStrategy",
    "spec.rolloutStrategy.rollingUpdateConfiguration": "RollingUpdateConfiguration",
    "spec.networkConfig": "NetworkConfig",
}
_PERCENT = re.compile(r"[0-9]+%")
_PERCENT_MSG = ("a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', "
                "regex used for validation is '[0-9]+%')")
_SUBGROUP_PATH = "spec.leaderWorkerTemplate.SubGroupPolicy.subGroupSize"  # capital S as upstream writes it
_NIL_POINTER = "panic: runtime error: invalid memory address or nil pointer dereference [recovered]"


class Panic(Rejection):
    """A webhook handler that panicked: controller-runtime recovers it and answers 500 (``Errored``)."""

    @property
    def code(self) -> int:
        return 500

    @property
    def reason(self) -> str:
        return ""


# ---------------------------------------------------------------------- LeaderWorkerSet defaulting

def default_lws(lws: dict, cluster) -> None:
    """``mleaderworkerset.kb.io``: Go's decode, then ``LeaderWorkerSetWebhook.Default``."""
    served = crds.schemas(cluster.profile.crd_dirs).get((keys.GROUP, "v1", keys.KIND))
    if served is not None:
        message = decode_error(lws, served[0], GO_STRUCTS) or pod_template_decode_error(lws)
        if message:
            raise BadRequest("webhook", _ref(lws), [FieldError("", "", message)], webhook=keys.LWS_DEFAULTER)
    spec = lws.get("spec")
    if not isinstance(spec, dict):
        return
    template = spec.get("leaderWorkerTemplate")
    if isinstance(template, dict) and "workerTemplate" not in template:
        # WorkerTemplate is a non-pointer corev1.PodTemplateSpec: the decoded LWS has its zero value,
        # which the patch writes back as apimachinery v0.33 marshals it (containers has no omitempty).
        template["workerTemplate"] = {"metadata": {"creationTimestamp": None}, "spec": {"containers": None}}
    for key in ("leaderTemplate", "workerTemplate"):
        if isinstance(template, dict) and isinstance(template.get(key), dict):
            _null_items_to_zero(template[key])
    if isinstance(template, dict):
        if not template.get("restartPolicy"):
            template["restartPolicy"] = keys.RECREATE_GROUP
        if template["restartPolicy"] == keys.DEPRECATED_DEFAULT:
            template["restartPolicy"] = keys.NONE
    rollout = spec.setdefault("rolloutStrategy", {})
    if isinstance(rollout, dict):
        if not rollout.get("type"):
            rollout["type"] = "RollingUpdate"
        if rollout["type"] == "RollingUpdate" and rollout.get("rollingUpdateConfiguration") is None:
            rollout["rollingUpdateConfiguration"] = {"partition": 0, "maxUnavailable": 1, "maxSurge": 0}
    network = spec.get("networkConfig")
    if network is None:
        spec["networkConfig"] = {"subdomainPolicy": keys.SHARED}
    elif isinstance(network, dict) and network.get("subdomainPolicy") is None:
        network["subdomainPolicy"] = keys.SHARED


default_lws.on_update = True
default_lws.webhook_name = keys.LWS_DEFAULTER


def pod_template_decode_error(lws: dict) -> str | None:
    """Go's decode error for a pod template of the wrong shape, in the fields LWS reads or writes."""
    spec = lws.get("spec") if isinstance(lws.get("spec"), dict) else {}
    lwt = spec.get("leaderWorkerTemplate")
    if not isinstance(lwt, dict):
        return None
    for key in sorted(k for k in ("leaderTemplate", "workerTemplate") if isinstance(lwt.get(k), dict)):
        found = unmarshal_error(lwt[key], POD_TYPES, "PodTemplateSpec", f"spec.leaderWorkerTemplate.{key}")
        if found:
            return found
    return None


def _null_items_to_zero(template: dict) -> None:
    """A null list item decodes to Go's zero struct, which the defaulter's patch writes back: ``{}``."""
    spec = template.get("spec")
    if not isinstance(spec, dict):
        return
    for field in ("containers", "initContainers"):
        items = spec.get(field)
        if isinstance(items, list):
            spec[field] = [{} if c is None else c for c in items]
            for container in spec[field]:
                if isinstance(container.get("env"), list):
                    container["env"] = [{} if e is None else e for e in container["env"]]


# ---------------------------------------------------------------------- LeaderWorkerSet validation

def validate_lws(lws: dict, cluster) -> list[FieldError]:
    """``ValidateCreate`` = ``generalValidate``."""
    return _general(lws)


def validate_lws_update(lws: dict, old: dict, cluster) -> list[FieldError]:
    """``ValidateUpdate``: ``generalValidate``, then the subgroup policy may not come, go or change."""
    errors = _general(lws)
    new_policy, old_policy = _subgroup(lws), _subgroup(old)
    if new_policy is not None and old_policy is not None:
        if new_policy.get("subGroupSize") != old_policy.get("subGroupSize"):
            errors.append(invalid(_SUBGROUP_PATH, new_policy.get("subGroupSize"), "field is immutable"))
    if new_policy is not None and old_policy is None:
        errors.append(invalid(_SUBGROUP_PATH, new_policy.get("subGroupSize"),
                              "cannot enable subGroupSize after the lws is already created"))
    if new_policy is None and old_policy is not None:
        errors.append(invalid(_SUBGROUP_PATH, old_policy.get("subGroupSize"), "cannot remove subGroupSize after enabled"))
    network = _spec(lws).get("networkConfig")
    if isinstance(network, dict) and network.get("subdomainPolicy") is None:
        # Unreachable after the defaulter; upstream prints the old object's policy.
        errors.append(invalid("spec.networkConfig.subdomainPolicy",
                              (_spec(old).get("networkConfig") or {}).get("subdomainPolicy"),
                              "cannot set subdomainPolicy as null"))
    return errors


def _general(lws: dict) -> list[FieldError]:
    name = (lws.get("metadata") or {}).get("name", "")
    errors = [invalid("metadata.name", name, m) for m in dns1035_label(name)]
    spec = _spec(lws)
    template = spec.get("leaderWorkerTemplate") or {}
    replicas, size = spec.get("replicas", 1), template.get("size", 1)
    if replicas < 0:
        errors.append(invalid("spec.replicas", replicas, "replicas must be equal or greater than 0"))
    if size < 1:
        errors.append(invalid("spec.leaderWorkerTemplate.size", size, "size must be equal or greater than 1"))
    if replicas * size > MAX_INT32:
        errors.append(invalid("spec.replicas", replicas,
                              f"the product of replicas and worker replicas must not exceed {MAX_INT32}"))
    config = (spec.get("rolloutStrategy") or {}).get("rollingUpdateConfiguration")
    max_unavailable = (config or {}).get("maxUnavailable", 0)
    max_surge = (config or {}).get("maxSurge", 0)
    unavailable_path = "spec.rolloutStrategy.rollingUpdateConfiguration.maxUnavailable"
    surge_path = "spec.rolloutStrategy.rollingUpdateConfiguration.maxSurge"
    if config is not None:
        errors += _int_or_percent(max_unavailable, unavailable_path) + _int_or_percent(max_surge, surge_path)
    unavailable_value = scaled_value(max_unavailable, replicas, round_up=False)
    if unavailable_value is None:
        errors.append(invalid(unavailable_path, IntOrString(max_unavailable), "invalid value"))
    surge_value = scaled_value(max_surge, replicas, round_up=True)
    if surge_value is None:
        errors.append(invalid(surge_path, IntOrString(max_surge), "invalid value"))
    if not unavailable_value and not surge_value and replicas != 0:
        errors.append(invalid(unavailable_path, IntOrString(max_unavailable), "must not be 0 when `maxSurge` is 0"))
    policy = _subgroup(lws)
    if policy is not None:
        errors += _subgroup_errors(size, policy, lws)
    elif keys.SUBGROUP_EXCLUSIVE in ((lws.get("metadata") or {}).get("annotations") or {}):
        value = lws["metadata"]["annotations"][keys.SUBGROUP_EXCLUSIVE]
        errors.append(invalid(f"metadata.annotations.{keys.SUBGROUP_EXCLUSIVE}", value,
                              "cannot have subgroup-exclusive-topology without subGroupSize set"))
    return errors


def _int_or_percent(value, path: str) -> list[FieldError]:
    """``validatePositiveIntOrPercent`` then ``isNotMoreThan100Percent`` (an int prints as int64,
    a string as the IntOrString struct, ``%#v``)."""
    if isinstance(value, str):
        if not _PERCENT.fullmatch(value):
            return [invalid(path, IntOrString(value), _PERCENT_MSG)]
        if int(value[:-1]) > 100:
            return [invalid(path, IntOrString(value), "must not be greater than 100%")]
        return []
    if value < 0:
        return [invalid(path, value, "must be grater than or equal to 0")]
    return []


def scaled_value(value, total: int, round_up: bool) -> int | None:
    """``intstr.GetScaledValueFromIntOrPercent``; None where Go returns an error (a string that is
    not ``<int>%``)."""
    if isinstance(value, int):
        return value
    if not isinstance(value, str) or not value.endswith("%") or not re.fullmatch(r"[+-]?[0-9]+", value[:-1]):
        return None
    percent = int(value[:-1])
    exact = percent * total / 100
    return math.ceil(exact) if round_up else math.floor(exact)


def _subgroup_errors(size: int, policy: dict, lws: dict) -> list[FieldError]:
    group_size = policy.get("subGroupSize")
    if group_size is None:
        raise Panic("webhook", _ref(lws), [plain(_NIL_POINTER)], webhook=keys.LWS_VALIDATOR)
    errors = []
    if group_size < 1:
        errors.append(invalid(_SUBGROUP_PATH, group_size, "subGroupSize must be equal or greater than 1"))
    if group_size == 0:
        # size % 0 is Go's integer divide by zero: another recovered panic.
        raise Panic("webhook", _ref(lws), [plain("panic: runtime error: integer divide by zero [recovered]")],
                    webhook=keys.LWS_VALIDATOR)
    if size % group_size != 0 and (size - 1) % group_size != 0:
        errors.append(invalid(_SUBGROUP_PATH, group_size, "size or size - 1 must be divisible by subGroupSize"))
    if size < group_size:
        errors.append(invalid(_SUBGROUP_PATH, group_size, "subGroupSize cannot be larger than size"))
    if policy.get("subGroupPolicyType") == keys.LEADER_EXCLUDED and (size - 1) % group_size != 0:
        errors.append(invalid(_SUBGROUP_PATH, group_size, "size-1 must be divisible by subGroupSize when using LeaderExcluded"))
    return errors


def _spec(lws: dict) -> dict:
    spec = lws.get("spec")
    return spec if isinstance(spec, dict) else {}


def _subgroup(lws: dict) -> dict | None:
    policy = (_spec(lws).get("leaderWorkerTemplate") or {}).get("subGroupPolicy")
    return policy if isinstance(policy, dict) else None


def _ref(obj: dict) -> str:
    return f'{obj.get("kind", keys.KIND)}.{keys.GROUP} "{(obj.get("metadata") or {}).get("name", "")}"'


# ---------------------------------------------------------------------- the pod webhook

def default_pod(pod: dict, cluster) -> None:
    """``mpod.kb.io`` (``PodWebhook.Default``) for a pod being created."""
    md = pod.setdefault("metadata", {})
    labels = md.get("labels") or {}
    if keys.NAME not in labels:
        return
    error = _label_pod(pod)
    if error is None:
        error = add_lws_variables(pod)
    if error is not None:
        raise Rejection("webhook", f'Pod "{md.get("name", "")}"', [plain(error)], webhook=keys.POD_DEFAULTER)


default_pod.object_selector = {"matchExpressions": [{"key": keys.NAME, "operator": "Exists"}]}
default_pod.webhook_name = keys.POD_DEFAULTER


def _label_pod(pod: dict) -> str | None:
    md, spec = pod["metadata"], pod.setdefault("spec", {})
    labels, annotations = md.setdefault("labels", {}), md.get("annotations") or {}
    name = md.get("name", "")
    if keys.SIZE not in annotations:
        return f"size annotation is unexpectedly missing for pod {name}"
    size = _atoi(annotations[keys.SIZE])
    if isinstance(size, str):
        return size
    if labels.get(keys.WORKER_INDEX) == "0":
        if keys.GROUP_INDEX not in labels:
            group = parent_and_ordinal(name)[1]
            if group == -1:
                return f"parsing pod ordinal for pod {name}"
            labels[keys.GROUP_INDEX] = str(group)
        if annotations.get(keys.SUBDOMAIN_POLICY) == keys.UNIQUE_PER_REPLICA:
            spec["subdomain"] = name
        labels.setdefault(keys.GROUP_KEY, group_key(md.get("namespace", ""), name))
        if keys.SUBGROUP_SIZE in annotations and not labels.get(keys.SUBGROUP_INDEX) \
                and annotations.get(keys.SUBGROUP_POLICY_TYPE) != keys.LEADER_EXCLUDED:
            labels[keys.SUBGROUP_INDEX] = "0"
            labels[keys.SUBGROUP_KEY] = group_key(name, "0")
    else:
        worker = parent_and_ordinal(name)[1]
        if worker == -1:
            return f"parsing pod ordinal for pod {name}"
        labels[keys.WORKER_INDEX] = str(worker)
        if keys.SUBGROUP_SIZE in annotations and not labels.get(keys.SUBGROUP_INDEX):
            group_size = _atoi(annotations[keys.SUBGROUP_SIZE])
            if isinstance(group_size, str):
                return group_size
            index = subgroup_index(size, group_size, worker)
            labels[keys.SUBGROUP_INDEX] = index
            labels[keys.SUBGROUP_KEY] = group_key(annotations.get(keys.LEADER_NAME, ""), index)
    return None


def group_key(first: str, second: str) -> str:
    """``genGroupUniqueKey``: sha1 hex of ``<first>/<second>`` (namespace/pod for a group)."""
    return hashlib.sha1(f"{first}/{second}".encode()).hexdigest()


def subgroup_index(size: int, group_size: int, worker: int) -> str:
    """``getSubGroupIndex``: the leader counts in subgroup 0 when size-1 divides into subgroups. Go's
    integer ``/`` and ``%`` truncate toward zero (a worker pod named with ordinal 0 is in subgroup
    (0-1)/n = 0), and a subgroup-size annotation "0" is Go's integer divide by zero: a recovered panic."""
    if group_size == 0:
        raise Panic("webhook", "", [plain("panic: runtime error: integer divide by zero [recovered]")],
                    webhook=keys.POD_DEFAULTER)
    if _go_rem(size - 1, group_size) == 0:
        return str(_go_div(worker - 1, group_size))
    return str(_go_div(worker, group_size))


def _go_div(a: int, b: int) -> int:
    """Go's integer division, truncated toward zero."""
    quotient = abs(a) // abs(b)
    return quotient if (a < 0) == (b < 0) else -quotient


def _go_rem(a: int, b: int) -> int:
    """Go's ``%``: the remainder takes the dividend's sign."""
    return a - b * _go_div(a, b)


def add_lws_variables(pod: dict) -> str | None:
    """``AddLWSVariables``: the three LWS variables first in every container and init container."""
    md = pod["metadata"]
    labels, annotations = md.get("labels") or {}, md.get("annotations") or {}
    who = f"{md.get('namespace', '')}/{md.get('name', '')}"
    if keys.NAME not in labels:
        return f"Failure constructing environment variables, no name label found for pod {who}"
    if keys.GROUP_INDEX not in labels:
        return f"Failure constructing environment variables, no group index label found for pod {who}"
    if keys.SIZE not in annotations:
        return f"Failure constructing environment variables, no size annotation found for pod {who}"
    if keys.WORKER_INDEX not in labels:
        return f"Failure constructing environment variables, no worker index label found for pod {who}"
    spec = pod.get("spec") or {}
    address = f"{labels[keys.NAME]}-{labels[keys.GROUP_INDEX]}.{spec.get('subdomain', '')}.{md.get('namespace', '')}"
    first = [{"name": keys.LEADER_ADDRESS, "value": address}, {"name": keys.GROUP_SIZE, "value": annotations[keys.SIZE]},
             {"name": keys.WORKER_INDEX_ENV, "value": labels[keys.WORKER_INDEX]}]
    for container in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        if not isinstance(container, dict):
            continue
        taken = {e["name"] for e in first}
        container["env"] = [dict(e) for e in first] + [e for e in container.get("env") or []
                                                       if not (isinstance(e, dict) and e.get("name") in taken)]
    return None


def _atoi(text: str) -> int | str:
    """``strconv.Atoi``: the number, or Go's error text."""
    if isinstance(text, str) and re.fullmatch(r"[+-]?[0-9]+", text):
        value = int(text)
        if -2**63 <= value < 2**63:
            return value
        return f'strconv.Atoi: parsing "{text}": value out of range'
    return f'strconv.Atoi: parsing "{text}": invalid syntax'
