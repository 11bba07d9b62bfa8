"""LeaderWorkerSet v0.7.0 names: labels, annotations, env, reasons (api/leaderworkerset/v1/
leaderworkerset_types.go; shared/reference/lws-volcano-upstream.md A.1-A.4)."""

from __future__ import annotations

GROUP = "leaderworkerset.x-k8s.io"
API_VERSION = f"{GROUP}/v1"
KIND = "LeaderWorkerSet"

PREFIX = "leaderworkerset.sigs.k8s.io/"
NAME = PREFIX + "name"
GROUP_INDEX = PREFIX + "group-index"
WORKER_INDEX = PREFIX + "worker-index"
GROUP_KEY = PREFIX + "group-key"
REVISION = PREFIX + "template-revision-hash"
SIZE = PREFIX + "size"
REPLICAS = PREFIX + "replicas"
LEADER_NAME = PREFIX + "leader-name"
EXCLUSIVE = PREFIX + "exclusive-topology"
SUBGROUP_EXCLUSIVE = PREFIX + "subgroup-exclusive-topology"
SUBGROUP_INDEX = PREFIX + "subgroup-index"
SUBGROUP_SIZE = PREFIX + "subgroup-size"
SUBGROUP_KEY = PREFIX + "subgroup-key"
SUBGROUP_POLICY_TYPE = PREFIX + "subgroup-policy-type"
SUBDOMAIN_POLICY = PREFIX + "subdomainPolicy"

LEADER_ADDRESS = "LWS_LEADER_ADDRESS"
GROUP_SIZE = "LWS_GROUP_SIZE"
WORKER_INDEX_ENV = "LWS_WORKER_INDEX"

RECREATE_GROUP = "RecreateGroupOnPodRestart"
NONE = "None"
DEPRECATED_DEFAULT = "Default"
LEADER_READY = "LeaderReady"
LEADER_CREATED = "LeaderCreated"
SHARED = "Shared"
UNIQUE_PER_REPLICA = "UniquePerReplica"
LEADER_EXCLUDED = "LeaderExcluded"

# Event reasons (pkg/controllers/leaderworkerset_controller.go).
FAILED_CREATE = "FailedCreate"
GROUPS_PROGRESSING = "GroupsProgressing"
GROUPS_UPDATING = "GroupsUpdating"
CREATING_REVISION = "CreatingRevision"

#: Webhook names (config/webhook/manifests.yaml).
LWS_DEFAULTER = "mleaderworkerset.kb.io"
LWS_VALIDATOR = "vleaderworkerset.kb.io"
POD_DEFAULTER = "mpod.kb.io"
