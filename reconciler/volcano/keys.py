"""Names Volcano puts on objects (batch/v1alpha1 labels.go, bus/v1alpha1 events and actions)."""

from __future__ import annotations

GROUP = "batch.volcano.sh"
API_VERSION = "batch.volcano.sh/v1alpha1"
#: bus.volcano.sh/v1alpha1 Command (what `vcctl job suspend` / `vcctl job resume` create).
BUS_GROUP = "bus.volcano.sh"
COMMAND = "Command"

# Pod labels and annotations (shared/reference/volcano-jobset-restart.md §1.4).
TASK_SPEC = "volcano.sh/task-spec"
TASK_INDEX = "volcano.sh/task-index"
JOB_NAME = "volcano.sh/job-name"
JOB_NAMESPACE = "volcano.sh/job-namespace"
QUEUE_NAME = "volcano.sh/queue-name"
JOB_VERSION = "volcano.sh/job-version"
JOB_RETRY_COUNT = "volcano.sh/job-retry-count"
TEMPLATE_UID = "volcano.sh/template-uid"
POD_GROUP = "scheduling.k8s.io/group-name"
NUMA_POLICY = "volcano.sh/numa-topology-policy"
DEFAULT_TASK_SPEC = "default"

# Lifecycle events (bus/v1alpha1 Event).
ANY_EVENT = "*"
POD_FAILED = "PodFailed"
POD_EVICTED = "PodEvicted"
POD_PENDING = "PodPending"
POD_RUNNING = "PodRunning"
TASK_COMPLETED = "TaskCompleted"
TASK_FAILED = "TaskFailed"
JOB_UNKNOWN = "Unknown"
OUT_OF_SYNC = "OutOfSync"
COMMAND_ISSUED = "CommandIssued"
JOB_UPDATED = "JobUpdated"
#: Events whose requests never run a policy (applyPolicies returns SyncJob for them).
INTERNAL_EVENTS = {OUT_OF_SYNC, COMMAND_ISSUED, POD_RUNNING}

# Lifecycle actions (bus/v1alpha1 Action).
ABORT_JOB = "AbortJob"
RESTART_JOB = "RestartJob"
RESTART_TASK = "RestartTask"
RESTART_POD = "RestartPod"
TERMINATE_JOB = "TerminateJob"
COMPLETE_JOB = "CompleteJob"
RESUME_JOB = "ResumeJob"
SYNC_JOB = "SyncJob"

# Job phases.
PENDING, RUNNING, RESTARTING = "Pending", "Running", "Restarting"
ABORTING, ABORTED = "Aborting", "Aborted"
COMPLETING, COMPLETED = "Completing", "Completed"
TERMINATING, TERMINATED = "Terminating", "Terminated"
FAILED = "Failed"
