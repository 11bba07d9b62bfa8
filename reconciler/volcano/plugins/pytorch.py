"""The ``pytorch`` plugin: torch.distributed env (MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK) and a port.

Upstream facts: shared/reference/volcano-jobset-restart.md §1.2-§1.3 (flags ``--master=master
--worker=worker --port=23456``; MASTER_ADDR = ``<hostname or job-master-0>.<subdomain or job>`` from
the master task's template; RANK 0 on master pods and ``pod index + 1`` on worker pods; WORLD_SIZE =
master + worker replicas from v1.12 (#4281), every task's replicas before; nothing at all when the job
has no master task; port ``pytorchjob-port`` unless a container already has that containerPort).

Where the reference reconciler is stricter than upstream (the suite's ``extended`` level):

* only master and worker pods get the env and the port; upstream also gives pods of every other
  task MASTER_ADDR, MASTER_PORT, WORLD_SIZE and the port (only RANK is left out);
* an env var the task template already sets is kept, not appended a second time (upstream appends,
  so the plugin's later duplicate wins in the kubelet), and the kept value is logged as a notice.

Profiles with ``volcano_plugins_as_upstream`` (volcano-v1.10, volcano-v1.11: their tables have no
extended rows) do what upstream does instead: every pod of every task gets MASTER_ADDR, MASTER_PORT,
WORLD_SIZE and the port, RANK only master and worker pods, each appended after what the template
has (``OnPodCreate``, ``pkg/controllers/job/plugins/distributed-framework/pytorch/pytorch.go``
L94-115 in v1.10.0, the same in v1.12.4). In every profile, what the plugins only log (a flag
that fails to parse, no master task) is logged, not reported (the controller's ``_report``).
"""

from __future__ import annotations

from ..goflag import FlagSet
from .base import Plugin, PluginError, containers, pod_index, task_type

DEFAULT_MASTER, DEFAULT_WORKER, DEFAULT_PORT = "master", "worker", 23456
PORT_NAME = "pytorchjob-port"
MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK = "MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK"


def master_addr(job: dict, master_task: dict) -> str:
    """``<hostname>.<subdomain>`` of the master task's first pod (generateMasterAddr)."""
    spec = (master_task.get("template") or {}).get("spec") or {}
    job_name = job["metadata"]["name"]
    hostname = spec.get("hostname") or f"{job_name}-{master_task['name']}-0"
    return f"{hostname}.{spec.get('subdomain') or job_name}"


class PytorchPlugin(Plugin):
    name = "pytorch"

    def declare_flags(self, flags: FlagSet) -> None:
        flags.string("master", DEFAULT_MASTER)
        flags.string("worker", DEFAULT_WORKER)
        flags.int("port", DEFAULT_PORT)

    @property
    def master(self) -> str:
        return self.flags.values["master"]

    @property
    def worker(self) -> str:
        return self.flags.values["worker"]

    @property
    def port(self) -> int:
        return self.flags.values["port"]

    def world_size(self, job: dict) -> int:
        tasks = job["spec"].get("tasks") or []
        if self.profile.pytorch_world_size_master_worker_only:
            tasks = [t for t in tasks if t.get("name") in (self.master, self.worker)]
        return sum(t.get("replicas", 0) for t in tasks)

    def rank(self, pod: dict) -> int | None:
        kind = task_type(pod)
        if kind == self.worker:  # checked first upstream: with --master == --worker every pod is a "worker"
            index = pod_index(pod)
            if not index.lstrip("+-").isdigit():
                raise PluginError(f'strconv.Atoi: parsing "{index}": invalid syntax')
            return int(index) + 1
        if kind == self.master:
            return 0
        return None

    def on_pod_create(self, pod: dict, job: dict) -> None:
        master_task = next((t for t in job["spec"].get("tasks") or [] if t.get("name") == self.master), None)
        if master_task is None:
            self.notices.append(f"job {job['metadata']['name']} doesn't have task {self.master}")
            return
        rank = self.rank(pod)
        upstream = self.profile.volcano_plugins_as_upstream
        if rank is None and not upstream:
            return  # extended: pods of other tasks get neither env nor port
        wanted = [(MASTER_ADDR, master_addr(job, master_task)), (MASTER_PORT, str(self.port)),
                  (WORLD_SIZE, str(self.world_size(job)))] + ([(RANK, str(rank))] if rank is not None else [])
        if upstream:
            for container in containers(pod, init=False):
                self._open_port(container)
                container.setdefault("env", []).extend({"name": name, "value": value} for name, value in wanted)
            return
        for container in containers(pod, init=False):
            self._open_port(container)
            env = container.setdefault("env", [])
            for name, value in wanted:
                user = next((e for e in env if e.get("name") == name), None)
                if user is None:
                    env.append({"name": name, "value": value})
                elif user.get("value") != value or "valueFrom" in user:
                    self.notices.append(
                        f"pytorch plugin: pod {pod['metadata']['name']} container {container.get('name')!r} sets "
                        f"{name} in its template; kept it instead of the plugin's value {value!r}")

    def _open_port(self, container: dict) -> None:
        ports = container.setdefault("ports", [])
        # containerPort is an int32 upstream (int32(pp.port)); Go wraps larger values.
        port = (self.port + 2**31) % 2**32 - 2**31
        if not any(p.get("containerPort") == port for p in ports):
            ports.append({"name": PORT_NAME, "containerPort": port})
