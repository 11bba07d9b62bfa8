"""MPI Operator bugs from its history: the hostfile, the launcher's env, discover_hosts.sh."""

from __future__ import annotations

from functools import partial

from reconciler.mpijob import controller, keys, resources

from .variants import Variant, patched

_real_hostfile = resources.hostfile
_real_launcher_env = resources.launcher_env


def _hostfile_without_launcher(job: dict) -> str:
    """runLauncherAsWorker is ignored when writing the hostfile: only worker lines, as before #612."""
    return _real_hostfile({**job, "spec": {**job["spec"], "runLauncherAsWorker": False}})


def _hostfile_without_slots(job: dict) -> str:
    """One bare ``<host>`` per line, the v2 hostfile before #523 (Horovod and mpirun then assume 1 slot)."""
    return "".join(line.split(" slots=")[0].rsplit(":", 1)[0] + "\n" for line in _real_hostfile(job).splitlines())


def _launcher_env_always_blanks_gpus(job: dict) -> list[dict]:
    """The NVIDIA_* blanking env is added even when the launcher runs as a worker (#612, fixed by #628)."""
    env = _real_launcher_env(job)
    if resources.run_launcher_as_worker(job):
        env += [{"name": n} for n in keys.NVIDIA_ENV]
    return env


def _running_workers_every_namespace(self, cluster, job: dict) -> list[dict]:
    """getRunningWorkerPods with the cluster-wide pod lister: same-named MPIJobs' workers in other namespaces
    land in discover_hosts.sh (before #622)."""
    wanted = resources.default_labels(job, keys.ROLE_WORKER)
    return [p for p in cluster.list("", "Pod")
            if all((p["metadata"].get("labels") or {}).get(k) == v for k, v in wanted.items())
            and (p.get("status") or {}).get("phase") == "Running"]


VARIANTS = [
    Variant("mpijob-hostfile-omits-launcher", "mpijob",
            bug="with runLauncherAsWorker the hostfile still lists only the workers, so mpirun never starts a rank "
                "on the launcher",
            seed="kubeflow/mpi-operator#612 (run worker process in launcher pod, v0.5.0)",
            applied=partial(patched, resources, "hostfile", _hostfile_without_launcher)),
    Variant("mpijob-hostfile-without-slots", "mpijob",
            bug="hostfile lines carry no slots (`<host>` alone), so slotsPerWorker is ignored",
            seed="kubeflow/mpi-operator#445, fixed by #523 (add slots to hostfile)",
            applied=partial(patched, resources, "hostfile", _hostfile_without_slots)),
    Variant("mpijob-launcher-as-worker-gpus-hidden", "mpijob",
            bug="a launcher that runs as a worker still gets NVIDIA_VISIBLE_DEVICES/NVIDIA_DRIVER_CAPABILITIES "
                "blanked, so its ranks see no GPU",
            seed="kubeflow/mpi-operator#612, fixed by #628 (no overwrite when run launcher as worker)",
            applied=partial(patched, resources, "launcher_env", _launcher_env_always_blanks_gpus)),
    Variant("mpijob-discover-hosts-every-namespace", "mpijob",
            bug="discover_hosts.sh echoes the Running workers of same-named MPIJobs in every namespace",
            seed="kubeflow/mpi-operator#622 (add ns filter to podLister, v0.5.0)",
            applied=partial(patched, controller.MPIJobController, "_running_workers", _running_workers_every_namespace)),
]
