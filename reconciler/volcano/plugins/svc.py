"""The ``svc`` plugin: pod DNS names, a headless Service, a NetworkPolicy and a hosts ConfigMap.

Upstream facts (shared/reference/volcano-jobset-restart.md §1.4; pkg/controllers/job/plugins/svc at
v1.12.0):

* every pod gets ``hostname = <pod name>`` and ``subdomain = <job name>`` unless its template sets them,
  env ``VC_<TASK>_HOSTS`` / ``VC_<TASK>_NUM`` for every task from ConfigMap ``<job>-svc`` (containers
  and init containers) and that ConfigMap mounted at ``/etc/volcano``;
* on job add: ConfigMap ``<job>-svc`` with ``<task>.host`` (newline-separated), ``VC_<TASK>_HOSTS``
  (comma-separated) and ``VC_<TASK>_NUM`` per task (``<TASK>`` = name with ``-`` → ``_``, upper-cased
  in env keys only); a task whose template sets a hostname lists that one host only; headless Service
  ``<job>`` selecting ``volcano.sh/job-name`` + ``volcano.sh/job-namespace``; a NetworkPolicy
  ``<job>`` admitting ingress from the job's own pods, unless ``--disable-network-policy``;
* flags ``--publish-not-ready-addresses`` and ``--disable-network-policy`` (bools, default false);
  ``--inject-hosts-env`` only exists from v1.16, so v1.12 always injects the env.
"""

from __future__ import annotations

from ... import meta
from ..goflag import FlagSet
from ..keys import JOB_NAME, JOB_NAMESPACE
from .base import Plugin, containers

MOUNT_PATH = "/etc/volcano"


def env_key(task_name: str) -> str:
    return task_name.replace("-", "_")


def generate_hosts(job: dict) -> dict[str, str]:
    """GenerateHosts: the ConfigMap data."""
    job_name = job["metadata"]["name"]
    data = {}
    for task in job["spec"].get("tasks") or []:
        spec = (task.get("template") or {}).get("spec") or {}
        hosts = []
        for index in range(task.get("replicas", 0)):
            hostname = spec.get("hostname") or f"{job_name}-{task['name']}-{index}"
            hosts.append(f"{hostname}.{spec.get('subdomain') or job_name}")
            if spec.get("hostname"):
                break  # every replica shares the template's hostname
        key = env_key(task["name"])
        data[f"{key}.host"] = "\n".join(hosts)
        data[f"VC_{key.upper()}_HOSTS"] = ",".join(hosts)
        data[f"VC_{key.upper()}_NUM"] = str(len(hosts))
    return data


class SvcPlugin(Plugin):
    name = "svc"

    def declare_flags(self, flags: FlagSet) -> None:
        flags.bool("publish-not-ready-addresses", False)
        flags.bool("disable-network-policy", False)

    @staticmethod
    def cm_name(job: dict) -> str:
        return f"{job['metadata']['name']}-svc"

    def on_pod_create(self, pod: dict, job: dict) -> None:
        spec = pod.setdefault("spec", {})
        if not spec.get("hostname"):
            spec["hostname"] = pod["metadata"]["name"]
        if not spec.get("subdomain"):
            spec["subdomain"] = job["metadata"]["name"]
        names = []
        for task in job["spec"].get("tasks") or []:
            key = env_key(task["name"]).upper()
            names += [f"VC_{key}_HOSTS", f"VC_{key}_NUM"]
        cm = self.cm_name(job)
        for container in containers(pod):
            container.setdefault("env", []).extend(
                {"name": n, "valueFrom": {"configMapKeyRef": {"name": cm, "key": n}}} for n in names)
        spec.setdefault("volumes", []).append({"name": cm, "configMap": {"name": cm}})
        for container in containers(pod):
            container.setdefault("volumeMounts", []).append({"name": cm, "mountPath": MOUNT_PATH})

    def on_job_add(self, job: dict, cluster) -> None:
        if self._controlled(job):
            return
        self._apply_config_map(job, cluster)
        self._create_if_missing(cluster, self._service(job))
        if not self.flags.values["disable-network-policy"]:
            self._create_if_missing(cluster, self._network_policy(job))
        self._mark_controlled(job)

    def on_job_update(self, job: dict, cluster) -> None:
        self._apply_config_map(job, cluster)

    def on_job_delete(self, job: dict, cluster) -> None:
        if not self._controlled(job):
            return
        ns, name = job["metadata"].get("namespace", ""), job["metadata"]["name"]
        kinds = [("", "ConfigMap", self.cm_name(job)), ("", "Service", name)]
        if not self.flags.values["disable-network-policy"]:
            kinds.append(("networking.k8s.io", "NetworkPolicy", name))
        for group, kind, obj_name in kinds:
            existing = cluster.find(group, kind, ns, obj_name)
            if existing is not None:
                cluster.delete(existing)
        self._unmark_controlled(job)

    # ------------------------------------------------------------------ objects
    def _apply_config_map(self, job: dict, cluster) -> None:
        """CreateOrUpdateConfigMap: create, or rewrite ``data`` when it differs."""
        data = generate_hosts(job)
        existing = cluster.find("", "ConfigMap", job["metadata"].get("namespace", ""), self.cm_name(job))
        if existing is None:
            cluster.create({"apiVersion": "v1", "kind": "ConfigMap",
                            "metadata": self._owned_meta(job, self.cm_name(job)), "data": data})
        elif existing.get("data") != data:
            existing["data"] = data
            cluster.update(existing)

    def _service(self, job: dict) -> dict:
        spec = {"clusterIP": "None", "selector": self._selector(job)}
        if self.flags.values["publish-not-ready-addresses"]:
            spec["publishNotReadyAddresses"] = True  # a Go bool with omitempty: false is not written
        return {"apiVersion": "v1", "kind": "Service", "metadata": self._owned_meta(job, job["metadata"]["name"]),
                "spec": spec}

    def _network_policy(self, job: dict) -> dict:
        return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                "metadata": self._owned_meta(job, job["metadata"]["name"]),
                "spec": {"podSelector": {"matchLabels": self._selector(job)},
                         "ingress": [{"from": [{"podSelector": {"matchLabels": self._selector(job)}}]}],
                         "policyTypes": ["Ingress"]}}

    @staticmethod
    def _selector(job: dict) -> dict:
        return {JOB_NAME: job["metadata"]["name"], JOB_NAMESPACE: job["metadata"].get("namespace", "")}

    @staticmethod
    def _owned_meta(job: dict, name: str) -> dict:
        return {"name": name, "namespace": job["metadata"].get("namespace"),
                "ownerReferences": [meta.controller_ref(job)]}

    @staticmethod
    def _create_if_missing(cluster, obj: dict) -> None:
        if cluster.find(meta.group_of(obj["apiVersion"]), obj["kind"], obj["metadata"].get("namespace", ""),
                        obj["metadata"]["name"]) is None:
            cluster.create(obj)
