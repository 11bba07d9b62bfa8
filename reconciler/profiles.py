"""Version profiles: which upstream generation the reference reconciler imitates.

A profile is a suite (``trainer``) plus a version (``2.3``). Each differing upstream behaviour is a
named switch here, with the PR that introduced it, so a case's version range and the code that
implements it point at the same fact.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Profile:
    """Suite-specific switches default to "off"; a profile sets the ones its generation has."""

    name: str
    suite: str
    version: tuple[int, int]
    #: Directories under reconciler/crds/ whose CRDs this profile serves (the live backend
    #: installs the same files).
    crd_dirs: tuple[str, ...]
    #: torch nproc resolution generation: "v2.0" (#2492, limits first, TrainJob resources only),
    #: "v2.1" (#2832, requests first, runtime fallback, "cpu"/"gpu"), "v2.2" (#3239, int32 only).
    torch_nproc: str = "v2.2"
    #: TrainJob spec.trainer.numProcPerNode is IntOrString (v2.0/v2.1) rather than int32.
    int_or_string_nproc: bool = False
    #: MPI slots default to the GPU count when the runtime says 1 (#2653, v2.1).
    mpi_slots_from_gpu: bool = False
    #: Hostfile/endpoints loop over replicatedJob replicas (#3539, v2.3); before, replica index 0.
    endpoints_loop_replicas: bool = False
    #: resourcesPerNode is merged per key into the runtime's resources (#3602, v2.3); before, replaced.
    merge_resources_per_node: bool = False
    #: SSH secret volume carries file modes (#3649, v2.3).
    ssh_volume_modes: bool = False
    #: MPI webhook rejects reserved OMPI_MCA_* env names (#3491, v2.3).
    mpi_reserved_env_check: bool = False
    #: Torch webhook only checks reserved PET_* envs when numProcPerNode is set (v2.0/v2.1 quirk).
    torch_env_check_needs_nproc: bool = False
    #: The TrainJob controller snapshots its runtime into ConfigMap <trainjob>-runtime-snapshot and
    #: builds from it thereafter (KEP-2599, #3580, v2.3).
    runtime_snapshot: bool = False
    #: Runtime controllers hold (Cluster)TrainingRuntimes in use with finalizer
    #: trainer.kubeflow.org/resource-in-use (v2.0-v2.2; v2.3 only removes it).
    runtime_in_use_finalizer: bool = False
    #: Mutating webhook defaulter.trainjob.trainer.kubeflow.org (v2.2+): runs before the CRD schema and
    #: answers a TrainJob its Go types cannot decode with 400.
    trainjob_defaulter: bool = False
    #: field.Error prints a non-primitive bad value as JSON (apimachinery v0.34+, Trainer v2.1+);
    #: before, with %#v (intstr.IntOrString{...}).
    field_values_json: bool = False
    #: JobSet sets the RestartingJobSet condition on a restart (PR #1225, v0.12.0).
    jobset_restarting_condition: bool = False
    #: JobSet labels/annotates Jobs and pod templates with group-name, group-replicas and
    #: job-group-index, and its webhook validates replicatedJobs[].groupName (PR #822, v0.9.0).
    jobset_group_labels: bool = False
    #: JobSet labels/annotates Jobs and pod templates with jobset-uid (PR #862, v0.9.0).
    jobset_uid_keys: bool = False
    #: JobSet's webhook reports too-long generated Job/pod names as field errors at
    #: spec.replicatedJobs[i].name with the Job name as value (PR #869, v0.9.0); before, plain errors.
    jobset_webhook_field_paths: bool = False
    #: JobSet's pod webhook labels every JobSet pod jobset.sigs.k8s.io/priority (PR #1077, v0.11.0);
    #: before, only exclusive-placement pods, which the reference reconciler does not model.
    jobset_priority_label: bool = False
    #: JobSet reports a Job it cannot create as a Warning Event JobCreationFailed (PR #1076, v0.11.0);
    #: before, the error only went back to controller-runtime (logged, retried): nothing to observe.
    jobset_job_creation_event: bool = False
    #: JobSet's validating webhook denies with apierrors.NewInvalid (422) instead of errors.Join (403)
    #: (PR #1207, v0.12.0).
    jobset_webhook_invalid_status: bool = False
    #: JobSet's webhook refuses restartStrategy InPlaceRestart, alpha gate off (PR #1099, v0.11.0).
    jobset_in_place_restart_gate: bool = False
    #: JobSet's webhook refuses failurePolicy actions RestartJob*, alpha gate off (PR #1177, v0.12.0).
    jobset_restart_job_gate: bool = False
    #: Volcano pytorch plugin: WORLD_SIZE sums only the --master/--worker tasks (#4281, v1.12); before, all tasks.
    pytorch_world_size_master_worker_only: bool = False
    #: Volcano job plugins exactly as upstream has them (every release so far): the pytorch plugin gives pods
    #: of every task MASTER_ADDR, MASTER_PORT, WORLD_SIZE and the port (RANK only master/worker pods), appended
    #: even where the template sets the name. Off: the reference's stricter behaviour beyond upstream, which
    #: the world-size table's extended rows assert (only master/worker pods; a template's own value kept
    #: once). What the plugins only log (klog.Errorf) is no reconcile error in any profile.
    volcano_plugins_as_upstream: bool = False
    #: Volcano Job lifecycle: RestartTask / RestartPod kill only their target (the task's pods / the event's
    #: pod), retryCount + 1 → Restarting (volcano-sh/volcano#3813, v1.11.0). Before, RestartTask is
    #: accepted but has no case in the state machine: it falls to SyncJob, nothing is killed.
    volcano_restart_targets: bool = False
    #: Volcano Job lifecycle: in Restarting a SyncJob syncs (#3813, v1.11.0). Before, every action there
    #: kills the whole job again, each kill bumping status.version.
    volcano_restarting_syncs: bool = False
    #: Volcano's job webhook accepts the PodPending event and the RestartPod action in policies (#3813,
    #: v1.11.0); before, they are "invalid policy event" / "invalid policy action".
    volcano_pod_pending_policies: bool = False
    #: Volcano's job webhook looks the Job's queue up in its informer's lister (volcano-sh/volcano#3743, hierarchical
    #: queues, v1.11.0), whose NotFound names the resource "queue.scheduling.volcano.sh"; before, an API Get, whose
    #: NotFound from kube-apiserver names it "queues.scheduling.volcano.sh".
    volcano_queue_lister: bool = False
    #: Volcano's createJobPod gives a pod the Job's spec.priorityClassName when its template has none
    #: (volcano-sh/volcano#3739, v1.11.0); before, only schedulerName comes from the Job.
    volcano_pod_priority_from_job: bool = False
    #: validateJobUpdate's refusal of a changed spec field also names `PriorityClassName` (volcano-sh/volcano
    #: fb86906b5, v1.11.0); v1.10.0's text ends at "`tasks[*].replicas under spec`".
    volcano_update_names_priority_class: bool = False
    #: PyTorchJob runPolicy.managedBy: the CRD field, the webhook's allowed values and the controller
    #: skipping jobs managed elsewhere (kubeflow/training-operator#2203, v1.9.0); before, the field is pruned.
    pytorchjob_managed_by: bool = False
    #: PyTorchJob webhook: an elasticPolicy needs a Worker spec and Worker replicas, when set, are at
    #: least 1 (kubeflow/training-operator#2320, v1.9.0).
    pytorchjob_worker_checks: bool = False

    @property
    def version_text(self) -> str:
        return f"{self.version[0]}.{self.version[1]}"


TRAINER_V2_0 = Profile(
    name="trainer-v2.0", suite="trainer", version=(2, 0), crd_dirs=("trainer-v2.0", "jobset-v0.8"),
    torch_nproc="v2.0", int_or_string_nproc=True, mpi_slots_from_gpu=False,
    endpoints_loop_replicas=False, merge_resources_per_node=False, ssh_volume_modes=False,
    mpi_reserved_env_check=False, torch_env_check_needs_nproc=True, runtime_in_use_finalizer=True,
    # runs with JobSet v0.8.2 (its CRD: no groupName); none of the jobset_* switches
)

TRAINER_V2_1 = Profile(
    name="trainer-v2.1", suite="trainer", version=(2, 1), crd_dirs=("trainer-v2.1", "jobset-v0.10"),
    torch_nproc="v2.1", int_or_string_nproc=True, mpi_slots_from_gpu=True,
    endpoints_loop_replicas=False, merge_resources_per_node=False, ssh_volume_modes=False,
    mpi_reserved_env_check=False, torch_env_check_needs_nproc=True, runtime_in_use_finalizer=True,
    field_values_json=True,
    jobset_group_labels=True, jobset_uid_keys=True, jobset_webhook_field_paths=True,  # runs with JobSet v0.10.1
)

TRAINER_V2_3 = Profile(
    name="trainer-v2.3", suite="trainer", version=(2, 3), crd_dirs=("trainer-v2.3", "jobset"),
    torch_nproc="v2.2", int_or_string_nproc=False, mpi_slots_from_gpu=True,
    endpoints_loop_replicas=True, merge_resources_per_node=True, ssh_volume_modes=True,
    mpi_reserved_env_check=True, torch_env_check_needs_nproc=False, runtime_snapshot=True, trainjob_defaulter=True,
    field_values_json=True,
    jobset_group_labels=True, jobset_uid_keys=True, jobset_webhook_field_paths=True,  # runs with JobSet v0.12.0
    jobset_priority_label=True, jobset_job_creation_event=True,
    jobset_webhook_invalid_status=True, jobset_in_place_restart_gate=True, jobset_restart_job_gate=True,
)

# JobSet on its own (suite ``jobset``). v0.10.0 is the first release with every failurePolicy field the
# group-restart table uses (onJobFailureMessagePatterns, PR #1033); v0.12.0 adds RestartingJobSet.
JOBSET_V0_10 = Profile(name="jobset-v0.10", suite="jobset", version=(0, 10), crd_dirs=("jobset-v0.10",),
                       jobset_group_labels=True, jobset_uid_keys=True, jobset_webhook_field_paths=True)

JOBSET_V0_12 = Profile(name="jobset-v0.12", suite="jobset", version=(0, 12), crd_dirs=("jobset",),
                       jobset_restarting_condition=True, jobset_group_labels=True, jobset_uid_keys=True,
                       jobset_webhook_field_paths=True, jobset_priority_label=True, jobset_job_creation_event=True,
                       jobset_webhook_invalid_status=True, jobset_in_place_restart_gate=True,
                       jobset_restart_job_gate=True)

PROFILES: dict[str, Profile] = {p.name: p for p in (TRAINER_V2_0, TRAINER_V2_1, TRAINER_V2_3,
                                                    JOBSET_V0_10, JOBSET_V0_12)}
DEFAULT_PROFILE = TRAINER_V2_3.name

# Volcano Job (batch.volcano.sh/v1alpha1). v1.11 = tags v1.11.0-v1.11.2, which predate the #4281
# cherry-pick; v1.12.0 is the first tag with it (shared/reference/volcano-jobset-restart.md §1.5).
# v1.10 = v1.10.0 (the module proxy's only v1.10 release; tags v1.10.1/v1.10.2 behave the same for these
# switches): before #3813's targeted restarts and policy events (shared/reference/lws-volcano-upstream.md B.4).
# volcano-v1.10 and -v1.11 put the pytorch env on pods of every task, as upstream does (their tables have no
# extended rows; the real v1.10.0 showed it, docs/results/README.md); volcano-v1.12 keeps the reference's
# extended behaviour there (only master/worker pods), which its table's extended rows assert.
VOLCANO_V1_10 = Profile(name="volcano-v1.10", suite="volcano", version=(1, 10), crd_dirs=("volcano",),
                        volcano_plugins_as_upstream=True)
_VOLCANO_3813 = dict(volcano_restart_targets=True, volcano_restarting_syncs=True, volcano_pod_pending_policies=True,
                     volcano_queue_lister=True, volcano_pod_priority_from_job=True)  # and #3743, #3739 (v1.11.0 too)
VOLCANO_V1_11 = Profile(name="volcano-v1.11", suite="volcano", version=(1, 11), crd_dirs=("volcano",),
                        volcano_plugins_as_upstream=True, volcano_update_names_priority_class=True, **_VOLCANO_3813)
VOLCANO_V1_12 = Profile(name="volcano-v1.12", suite="volcano", version=(1, 12), crd_dirs=("volcano",),
                        pytorch_world_size_master_worker_only=True, volcano_update_names_priority_class=True,
                        **_VOLCANO_3813)
PROFILES.update({p.name: p for p in (VOLCANO_V1_10, VOLCANO_V1_11, VOLCANO_V1_12)})

# MPIJob (kubeflow.org/v2beta1) of the MPI Operator v0.6.0 (suite ``mpijob``): controller-side validation,
# launcher Job + worker Pods (shared/reference/kubeflow-v1-mpi-operator.md part B). No switches yet.
MPI_OPERATOR_V0_6 = Profile(name="mpi-operator-v0.6", suite="mpijob", version=(0, 6), crd_dirs=("mpi-operator-v0.6",))
PROFILES[MPI_OPERATOR_V0_6.name] = MPI_OPERATOR_V0_6

# Kubeflow Training Operator v1 PyTorchJob (kubeflow.org/v1), suite ``pytorchjob``: v1.8 imitates
# v1.8.1, v1.9 imitates v1.9.2 (shared/reference/kubeflow-v1-mpi-operator.md part A).
TRAINING_OPERATOR_V1_8 = Profile(name="training-operator-v1.8", suite="pytorchjob", version=(1, 8),
                                 crd_dirs=("training-operator-v1.8",))
TRAINING_OPERATOR_V1_9 = Profile(name="training-operator-v1.9", suite="pytorchjob", version=(1, 9),
                                 crd_dirs=("training-operator-v1.9",),
                                 pytorchjob_managed_by=True, pytorchjob_worker_checks=True)
PROFILES.update({p.name: p for p in (TRAINING_OPERATOR_V1_8, TRAINING_OPERATOR_V1_9)})

# LeaderWorkerSet (leaderworkerset.x-k8s.io/v1), suite ``lws``. v0.7.0: restartPolicy
# RecreateGroupOnPodRestart / None (RecreateGroupAfterStart only arrives in v0.8.0 as an annotation),
# LWS_WORKER_INDEX env (v0.6.0), StatefulSet ordinals for the workers (shared/reference/
# lws-volcano-upstream.md A.1-A.3). Its StatefulSets are kube-controller-manager v1.35's.
LWS_V0_7 = Profile(name="lws-v0.7", suite="lws", version=(0, 7), crd_dirs=("lws-v0.7",))
PROFILES[LWS_V0_7.name] = LWS_V0_7


def get(name: str | None) -> Profile:
    if name is None:
        return PROFILES[DEFAULT_PROFILE]
    try:
        return PROFILES[name]
    except KeyError:
        raise KeyError(f"unknown profile {name!r}; known: {', '.join(sorted(PROFILES))}") from None
