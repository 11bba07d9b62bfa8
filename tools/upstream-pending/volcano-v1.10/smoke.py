"""Smoke check of the real Volcano v1.10.0 controller manager and scheduler on a local control plane.

    .venv/bin/python tools/upstream-pending/volcano-v1.10/smoke.py --bin DIR   # DIR: vc-controller-manager, vc-scheduler

Installs the release's five CRDs (config/crd/volcano/bases/ of the module in the Go module cache),
starts vc-controller-manager (job, pg, queue and gc controllers: the flow CRDs are not installed; an
explicit list, since "-name" alone disables every controller, isControllerEnabled) and vc-scheduler
(which creates the queue "default" itself), both with --leader-elect=false and health on loopback, and
creates a pytorch Job with tasks master x1, worker x2, extra x2. Prints the PodGroup phase (Inqueue comes
from the scheduler's enqueue action) and each pod's MASTER_ADDR, WORLD_SIZE, RANK. v1.10.0 sums every
task's replicas (WORLD_SIZE=5; volcano#4281, fixed in v1.12.0: 3). No webhooks run (the Job sets what
/jobs/mutate would default). The local plane's gang-less binder stand-in also runs.
"""

from __future__ import annotations

import argparse
import glob
import subprocess
import time
import urllib.request
from pathlib import Path

import yaml
from kubernetes import client

from conformance.cluster import LocalControlPlane
from conformance.cluster.local import free_ports

MODULE = Path.home() / "go/pkg/mod/volcano.sh/volcano@v1.10.0"


def wait(predicate, what: str, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.5)
    return value


def healthy(port: int) -> bool:
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2)
        return True
    except OSError:
        return False


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", type=Path, required=True)
    bindir = parser.parse_args().bin
    with LocalControlPlane() as plane, plane.api_client() as api:
        ext = client.ApiextensionsV1Api(api)
        for path in sorted(glob.glob(str(MODULE / "config/crd/volcano/bases/*.yaml"))):
            for doc in yaml.safe_load_all(open(path)):
                if doc:
                    ext.create_custom_resource_definition(doc)
        time.sleep(3)
        cm_port, sched_port = free_ports(2)
        common = [f"--kubeconfig={plane.kubeconfig}", "--leader-elect=false", "--enable-healthz"]
        procs = [
            subprocess.Popen([str(bindir / "vc-controller-manager"), *common, f"--healthz-address=127.0.0.1:{cm_port}",
                              "--controllers=job-controller,pg-controller,queue-controller,gc-controller"],
                             stdout=open("vc-controller-manager.log", "wb"), stderr=subprocess.STDOUT),
            subprocess.Popen([str(bindir / "vc-scheduler"), *common, f"--healthz-address=127.0.0.1:{sched_port}",
                              "--cache-dumper=false"], stdout=open("vc-scheduler.log", "wb"), stderr=subprocess.STDOUT),
        ]
        try:
            wait(lambda: healthy(cm_port) and healthy(sched_port), "both healthz")
            custom, core = client.CustomObjectsApi(api), client.CoreV1Api(api)
            wait(lambda: any(q["metadata"]["name"] == "default" for q in custom.list_cluster_custom_object(
                "scheduling.volcano.sh", "v1beta1", "queues")["items"]), "queue default (made by vc-scheduler)")
            container = {"name": "c", "image": "registry.invalid/x:1"}

            def task(name: str, replicas: int) -> dict:
                return {"name": name, "replicas": replicas,
                        "template": {"spec": {"containers": [container], "restartPolicy": "OnFailure"}}}

            custom.create_namespaced_custom_object("batch.volcano.sh", "v1alpha1", "default", "jobs", {
                "apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "pt"},
                "spec": {"minAvailable": 5, "schedulerName": "volcano", "queue": "default", "maxRetry": 3,
                         "plugins": {"pytorch": [], "svc": []},
                         "tasks": [task("master", 1), task("worker", 2), task("extra", 2)]}})
            pods = wait(lambda: len(core.list_namespaced_pod("default").items) >= 5 and core.list_namespaced_pod("default").items,
                        "five pods")
            [group] = custom.list_namespaced_custom_object("scheduling.volcano.sh", "v1beta1", "default", "podgroups")["items"]
            print("PodGroup", group["metadata"]["name"], "minMember", group["spec"].get("minMember"),
                  "phase", (group.get("status") or {}).get("phase"))
            for pod in sorted(pods, key=lambda p: p.metadata.name):
                env = {e.name: e.value for e in pod.spec.containers[0].env or []}
                print(pod.metadata.name, {k: env.get(k) for k in ("MASTER_ADDR", "WORLD_SIZE", "RANK")})
        finally:
            for proc in procs:
                proc.terminate()
                proc.wait(10)


if __name__ == "__main__":
    main()
