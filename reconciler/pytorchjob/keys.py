"""Names and values of Kubeflow Training Operator v1's PyTorchJob, identical in v1.8.1 and v1.9.2
(shared/reference/kubeflow-v1-mpi-operator.md A.0, A.2; pkg/apis/kubeflow.org/v1/pytorch_types.go,
common_types.go, pkg/config/config.go)."""

from __future__ import annotations

GROUP = "kubeflow.org"
API_VERSION = "kubeflow.org/v1"
KIND = "PyTorchJob"
#: The validating webhook (pkg/webhooks/pytorch, path /validate-kubeflow-org-v1-pytorchjob); there is
#: no mutating webhook: defaults are applied by the controller, in memory.
WEBHOOK = "validator.pytorchjob.training-operator.kubeflow.org"
CONTROLLER_NAME = "pytorchjob-controller"

MASTER, WORKER = "Master", "Worker"
REPLICA_TYPES = (MASTER, WORKER)
DEFAULT_CONTAINER = "pytorch"
DEFAULT_PORT_NAME = "pytorchjob-port"
DEFAULT_PORT = 23456
DEFAULT_NPROC_PER_NODE = "auto"
DEFAULT_RDZV_BACKEND = "c10d"  # BackendC10D

# ReplicaSpec.restartPolicy values (common_types.go); ExitCode becomes a pod restartPolicy Never.
ALWAYS, ON_FAILURE, NEVER, EXIT_CODE = "Always", "OnFailure", "Never", "ExitCode"
DEFAULT_RESTART_POLICY = ON_FAILURE
# RunPolicy.cleanPodPolicy values.
CLEAN_ALL, CLEAN_RUNNING, CLEAN_NONE = "All", "Running", "None"

# runPolicy.managedBy (v1.9): the only two values the webhook accepts.
KUBEFLOW_JOBS_CONTROLLER = "kubeflow.org/training-operator"
MULTIKUEUE_CONTROLLER = "kueue.x-k8s.io/multikueue"

# Labels on pods and Services (common_types.go; GenLabels, createNewPod).
OPERATOR_NAME_LABEL = "training.kubeflow.org/operator-name"
JOB_NAME_LABEL = "training.kubeflow.org/job-name"
REPLICA_TYPE_LABEL = "training.kubeflow.org/replica-type"
REPLICA_INDEX_LABEL = "training.kubeflow.org/replica-index"
JOB_ROLE_LABEL = "training.kubeflow.org/job-role"

# The worker init container (initcontainer.go; defaults of --pytorch-init-container-image and
# --pytorch-init-container-max-tries, pkg/config).
INIT_CONTAINER_NAME = "init-pytorch"
INIT_CONTAINER_IMAGE = "alpine:3.10"
INIT_CONTAINER_MAX_TRIES = 100

# Job condition types (common_types.go) and reason suffixes (pkg/util/status.go): reason = Kind + suffix.
CREATED, RUNNING, RESTARTING, SUCCEEDED, SUSPENDED, FAILED = (
    "Created", "Running", "Restarting", "Succeeded", "Suspended", "Failed")
RESUMED = "Resumed"


def reason(suffix: str) -> str:
    """``commonutil.NewReason(PyTorchJobKind, suffix)``: ``PyTorchJobRunning`` and so on."""
    return KIND + suffix
