"""The Cluster Autoscaler's cluster snapshot: CA-internal NodeInfo/PodInfo (which are the
framework's objects), stores, and the PredicateSnapshot that schedules through a profile."""

from schedsim.snapshot.basic import BasicSnapshotStore
from schedsim.snapshot.delta import DeltaSnapshotStore
from schedsim.snapshot.errors import (
    NodeAlreadyExistsError,
    NodeNotFoundError,
    PodNotFoundError,
    SchedulingError,
    SchedulingErrorType,
)
from schedsim.snapshot.forked import Forked
from schedsim.snapshot.infos import NodeInfo, PodInfo
from schedsim.snapshot.plugin_runner import (
    LastIndexOrderMapping,
    NodeOrderMapping,
    SchedulerPluginRunner,
)
from schedsim.snapshot.predicate import PredicateSnapshot
from schedsim.snapshot.store import ClusterSnapshotStore

__all__ = [
    "BasicSnapshotStore",
    "ClusterSnapshotStore",
    "DeltaSnapshotStore",
    "Forked",
    "LastIndexOrderMapping",
    "NodeAlreadyExistsError",
    "NodeInfo",
    "NodeNotFoundError",
    "NodeOrderMapping",
    "PodInfo",
    "PodNotFoundError",
    "PredicateSnapshot",
    "SchedulerPluginRunner",
    "SchedulingError",
    "SchedulingErrorType",
]
