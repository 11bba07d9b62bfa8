"""Names, labels, env and reasons of the MPI Operator v0.6.0 (kubeflow.org/v2beta1).

Facts: shared/reference/kubeflow-v1-mpi-operator.md B.0 (pkg/controller/mpi_job_controller.go:70-117,
pkg/apis/kubeflow/v2beta1/constants.go, types.go) and B.4 (mpi_job_controller_status.go:24-39).
"""

from __future__ import annotations

GROUP = "kubeflow.org"
API_VERSION = "kubeflow.org/v2beta1"
KIND = "MPIJob"

LAUNCHER = "Launcher"  # MPIReplicaType
WORKER = "Worker"

# Label keys (v2beta1/constants.go) and values. v0.6.0 sets no replica-type label.
OPERATOR_NAME_LABEL = "training.kubeflow.org/operator-name"
JOB_NAME_LABEL = "training.kubeflow.org/job-name"
JOB_ROLE_LABEL = "training.kubeflow.org/job-role"
REPLICA_INDEX_LABEL = "training.kubeflow.org/replica-index"
OPERATOR_NAME = "mpi-operator"
ROLE_LAUNCHER = "launcher"
ROLE_WORKER = "worker"

# Name suffixes, volumes, paths.
CONFIG_SUFFIX = "-config"
SSH_SUFFIX = "-ssh"
LAUNCHER_SUFFIX = "-launcher"
WORKER_SUFFIX = "-worker"
CONFIG_VOLUME = "mpi-job-config"
CONFIG_MOUNT_PATH = "/etc/mpi"
HOSTFILE = "hostfile"
DISCOVER_HOSTS = "discover_hosts.sh"
SSH_VOLUME = "ssh-auth"
ROOT_SSH_PATH = "/root/.ssh"
SSH_PRIVATE_KEY = "ssh-privatekey"  # corev1.SSHAuthPrivateKey
SSH_PUBLIC_KEY = "ssh-publickey"

# spec values.
OPENMPI, INTEL, MPICH = "OpenMPI", "Intel", "MPICH"
AT_STARTUP = "AtStartup"
CLEAN_ALL, CLEAN_RUNNING, CLEAN_NONE = "All", "Running", "None"
KUBEFLOW_CONTROLLER = "kubeflow.org/mpi-operator"  # RunPolicy.managedBy
MULTIKUEUE_CONTROLLER = "kueue.x-k8s.io/multikueue"

# Env appended to the launcher's first container (mpi_job_controller.go:159-214).
HOSTFILE_PATH = f"{CONFIG_MOUNT_PATH}/{HOSTFILE}"
SSH_ARGS = "-o ConnectionAttempts=10"
IMPLEMENTATION_ENV = {
    OPENMPI: [("OMPI_MCA_orte_keep_fqdn_hostnames", "true"), ("OMPI_MCA_orte_default_hostfile", HOSTFILE_PATH),
              ("OMPI_MCA_plm_rsh_args", SSH_ARGS)],
    INTEL: [("I_MPI_HYDRA_HOST_FILE", HOSTFILE_PATH), ("I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS", SSH_ARGS)],
    MPICH: [("HYDRA_HOST_FILE", HOSTFILE_PATH), ("HYDRA_LAUNCH_EXTRA_ARGS", SSH_ARGS)],
}
#: The slots env var per implementation (MPICH has none): openMPISlotsEnv, intelMPISlotsEnv.
SLOTS_ENV = {OPENMPI: "OMPI_MCA_orte_set_default_slots", INTEL: "I_MPI_PERHOST"}
#: Blanked on the launcher unless it runs as a worker (#628): names only, no value.
NVIDIA_ENV = ("NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES")
ROLE_ENV = "K_MPI_JOB_ROLE"

# Condition reasons (mpi_job_controller_status.go) and types (v2beta1 JobConditionType).
CREATED, RUNNING, RESTARTING, SUCCEEDED, SUSPENDED, FAILED = (
    "Created", "Running", "Restarting", "Succeeded", "Suspended", "Failed")
REASON_CREATED = "MPIJobCreated"
REASON_SUCCEEDED = "MPIJobSucceeded"
REASON_RUNNING = "MPIJobRunning"
REASON_SUSPENDED = "MPIJobSuspended"
REASON_RESUMED = "MPIJobResumed"
REASON_FAILED = "MPIJobFailed"
REASON_EVICTED = "MPIJobEvicted"

# Warning Events that report a failed or refused sync (reason -> what upstream writes).
VALIDATION_ERROR = "ValidationError"
ERR_RESOURCE_EXISTS = "ErrResourceExists"
RESOURCE_EXISTS_MESSAGE = 'Resource "{name}" of Kind "{kind}" already exists and is not managed by MPIJob'
POD_TEMPLATE_RESTART_POLICY = "SetPodTemplateRestartPolicy"
POD_TEMPLATE_RESTART_POLICY_MESSAGE = "Restart policy in pod template overridden by restart policy in replica spec"
#: k8s.io/kubernetes/pkg/apis/core/validation/events.go: an Event message is cut at 1024 characters.
EVENT_MESSAGE_LIMIT = 1024
