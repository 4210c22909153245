"""VolumeRestrictions: mirrors kube-scheduler 1.34's ``VolumeRestrictions`` plugin
(pkg/scheduler/framework/plugins/volumerestrictions/volume_restrictions.go).

Two rules: an in-tree disk (GCE PD, AWS EBS, iSCSI, RBD) that a pod on the node already
mounts conflicts unless both mounts are read-only (AWS EBS: always); and a
ReadWriteOncePod PVC used by any scheduled pod makes every node unschedulable for another
pod using it. PVCs come from the snapshot (``Handle.volume_manager``), PVC usage from
``StorageInfoLister.is_pvc_used_by_pods`` of the snapshot.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Final

import attrs

from schedsim.api.core import Pod
from schedsim.api.labels import go_quote
from schedsim.api.storage.pv import PersistentVolumeClaim
from schedsim.framework import (
    Code,
    CycleState,
    Handle,
    NodeInfo,
    PodInfo,
    SharedVolumeManager,
    StateKey,
    Status,
)
from schedsim.framework.args import no_args
from schedsim.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
    as_kind,
)

__all__ = [
    "ERR_REASON_DISK_CONFLICT",
    "ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT",
    "PRE_FILTER_STATE_KEY",
    "DiskVolume",
    "PreFilterState",
    "VolumeRestrictions",
    "disk_volumes",
    "is_volume_conflict",
]

NAME = "VolumeRestrictions"

ERR_REASON_DISK_CONFLICT: Final = "node(s) had no available disk"
"""Reason for an in-tree disk mounted read-write by another pod (``ErrReasonDiskConflict``)."""

ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT: Final = (
    "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"
)
"""Reason for a ReadWriteOncePod claim in use (``ErrReasonReadWriteOncePodConflict``)."""

_SKIP = Status(Code.Skip, (), NAME)
_DISK_CONFLICT = Status(Code.Unschedulable, (ERR_REASON_DISK_CONFLICT,), NAME)
_RWOP_CONFLICT = Status(Code.Unschedulable, (ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT,), NAME)


@attrs.frozen
class DiskVolume:
    """An in-tree disk volume of a pod that can conflict with another pod's.

    Attributes:
        kind: ``gcePersistentDisk``, ``awsElasticBlockStore``, ``iscsi`` or ``rbd``.
        identity: what names the disk: GCE ``pdName``; EBS ``volumeID``; iSCSI ``iqn``; RBD
            ``(pool, image)`` (with ``monitors``).
        monitors: RBD Ceph monitors (two RBD volumes are the same image when they share one).
        read_only: the mount's ``readOnly``.
    """

    kind: str
    identity: tuple[str, ...]
    monitors: frozenset[str] = frozenset()
    read_only: bool = False

    def conflicts_with(self, other: DiskVolume) -> bool:
        """Upstream ``isVolumeConflict`` for one pair of volumes."""
        if self.kind != other.kind or self.identity != other.identity:
            return False
        if self.kind == "awsElasticBlockStore":
            return True
        if self.kind == "rbd" and not (self.monitors & other.monitors):
            return False
        return not (self.read_only and other.read_only)


def _str(raw: Mapping[str, Any], key: str, default: str = "") -> str:
    value = raw.get(key)
    return value if isinstance(value, str) and value else default


def disk_volumes(pod: Pod) -> tuple[DiskVolume, ...]:
    """The pod's GCE PD, AWS EBS, iSCSI and RBD volumes (``needsRestrictionsCheck``), memoized
    per pod object. An RBD ``pool`` defaults to ``rbd`` as the API server defaults it."""

    def compute() -> tuple[DiskVolume, ...]:
        out = []
        for vol in pod.volumes:
            src = vol.source
            for kind in ("gcePersistentDisk", "awsElasticBlockStore", "iscsi", "rbd"):
                raw = src.get(kind)
                if not isinstance(raw, Mapping):
                    continue
                ro = raw.get("readOnly") is True
                if kind == "gcePersistentDisk":
                    out.append(DiskVolume(kind, (_str(raw, "pdName"),), read_only=ro))
                elif kind == "awsElasticBlockStore":
                    out.append(DiskVolume(kind, (_str(raw, "volumeID"),), read_only=ro))
                elif kind == "iscsi":
                    out.append(DiskVolume(kind, (_str(raw, "iqn"),), read_only=ro))
                else:
                    mons = raw.get("monitors")
                    monitors = frozenset(m for m in mons if isinstance(m, str)) if mons else ()
                    out.append(
                        DiskVolume(
                            kind,
                            (_str(raw, "pool", "rbd"), _str(raw, "image")),
                            frozenset(monitors),
                            ro,
                        )
                    )
        return tuple(out)

    return pod.memo((NAME, "disks"), compute)


def is_volume_conflict(volume: DiskVolume, pod: Pod) -> bool:
    """Whether ``volume`` conflicts with any volume of the existing ``pod``
    (``isVolumeConflict``)."""
    return any(volume.conflicts_with(other) for other in disk_volumes(pod))


@attrs.define
class PreFilterState:
    """What PreFilter computed (``preFilterState``).

    Attributes:
        read_write_once_pod_pvcs: names of the pod's PVCs with ReadWriteOncePod access.
        conflicting_pvc_ref_count: how many scheduled pods use one of them (AddPod/RemovePod
            adjust it during preemption's dry runs).
    """

    read_write_once_pod_pvcs: frozenset[str]
    conflicting_pvc_ref_count: int = 0

    def clone(self) -> PreFilterState:
        """A copy whose count changes independently (upstream ``Clone``)."""
        return PreFilterState(self.read_write_once_pod_pvcs, self.conflicting_pvc_ref_count)

    def conflicts_of(self, pod: Pod) -> int:
        """How many of ``pod``'s PVC volumes are among the ReadWriteOncePod PVCs
        (``conflictingPVCRefCountForPod``)."""
        names = self.read_write_once_pod_pvcs
        return sum(
            1
            for v in pod.volumes
            if v.persistent_volume_claim is not None and v.persistent_volume_claim in names
        )


PRE_FILTER_STATE_KEY: StateKey[PreFilterState] = StateKey("PreFilter" + NAME)
"""Where PreFilter leaves its `PreFilterState` (``preFilterStateKey`` upstream)."""

_NO_STATE = Status(
    Code.Error, (f'cannot read "{PRE_FILTER_STATE_KEY.name}" from cycleState',), NAME
)


class VolumeRestrictions:
    """Mirrors kube-scheduler's ``VolumeRestrictions`` plugin.

    PreFilter reads the pod's ``persistentVolumeClaim`` volumes (a missing PVC gives
    UnschedulableAndUnresolvable ``persistentvolumeclaim "x" not found``), keeps those with
    ReadWriteOncePod access and counts the ones a scheduled pod already uses (cluster-wide);
    it returns Skip when the pod has no GCE PD, AWS EBS, iSCSI or RBD volume and nothing
    conflicts. Filter rejects a node where a pod mounts one of the pod's disks (both
    read-only is fine, except AWS EBS; RBD images are the same when pool and image match and a
    Ceph monitor is shared) with Unschedulable ``node(s) had no available disk``, then any node
    while the ReadWriteOncePod conflict count is positive with Unschedulable ``node has pod
    using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode``.
    AddPod/RemovePod (PreFilterExtensions) add or subtract a pod's uses of those claims.
    Takes no args.
    """

    name: ClassVar[str] = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        no_args(NAME, args)
        self._handle = handle

    def events_to_register(self) -> tuple[ClusterEventWithHint, ...]:
        """``EventsToRegister`` (volume_restrictions.go, 1.34, SchedulerQueueingHints on):
        pod Delete with `is_schedulable_after_pod_deleted`, Node Add without a hint,
        PersistentVolumeClaim Add with `is_schedulable_after_persistent_volume_claim_added`.
        The pod deletion is registered as ``AssignedPod Delete`` (schedsim's pods leave a node
        as assigned pods; the hint does not read ``spec.nodeName``)."""
        return (
            ClusterEventWithHint(
                ClusterEvent(EventResource.AssignedPod, ActionType.Delete),
                self.is_schedulable_after_pod_deleted,
            ),
            ClusterEventWithHint(ClusterEvent(EventResource.Node, ActionType.Add)),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PersistentVolumeClaim, ActionType.Add),
                self.is_schedulable_after_persistent_volume_claim_added,
            ),
        )

    def is_schedulable_after_pod_deleted(self, pod: Pod, old: object, new: object) -> QueueingHint:
        """``isSchedulableAfterPodDeleted``: a pod of another namespace is skipped; queue when
        the deleted pod mounted one of the pending pod's disks in a conflicting way
        (``satisfyVolumeConflicts`` against a NodeInfo of the deleted pod alone), or used a
        PersistentVolumeClaim the pending pod uses (its ReadWriteOncePod access is not looked
        up, as upstream); an object of the wrong type: Queue."""
        typed = as_kind(Pod, old, new)
        if typed is None or typed[0] is None:
            return QueueingHint.Queue
        deleted = typed[0]
        assert isinstance(deleted, Pod)
        if deleted.namespace != pod.namespace:
            return QueueingHint.QueueSkip
        if any(is_volume_conflict(v, deleted) for v in disk_volumes(pod)):
            return QueueingHint.Queue
        claims = {v.persistent_volume_claim for v in pod.volumes if v.persistent_volume_claim}
        if any(v.persistent_volume_claim in claims for v in deleted.volumes):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_persistent_volume_claim_added(
        self, pod: Pod, old: object, new: object
    ) -> QueueingHint:
        """``isSchedulableAfterPersistentVolumeClaimAdded``: queue when the added claim is in
        the pending pod's namespace and one of its volumes names it; an object of the wrong
        type: Queue."""
        typed = as_kind(PersistentVolumeClaim, old, new)
        if typed is None or typed[1] is None:
            return QueueingHint.Queue
        claim = typed[1]
        assert isinstance(claim, PersistentVolumeClaim)
        if claim.namespace != pod.namespace:
            return QueueingHint.QueueSkip
        if any(v.persistent_volume_claim == claim.name for v in pod.volumes):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def _volumes(self) -> SharedVolumeManager:
        return self._handle.volume_manager

    def pre_filter_reusable(self, pod: Pod) -> bool:
        """A pod without volumes is skipped without reading any claim or the pods using
        them (`schedsim.framework.pre_filter_reuse`)."""
        return not pod.volumes

    def schedsim_pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None:
        """PreFilter of upstream VolumeRestrictions (see the class docstring)."""
        volumes = self._volumes()
        rwop: set[str] = set()
        for vol in pod.volumes:
            name = vol.persistent_volume_claim
            if name is None:
                continue
            pvc = volumes.get_persistent_volume_claim(pod.namespace, name)
            if pvc is None:
                return Status(
                    Code.UnschedulableAndUnresolvable,
                    (f"persistentvolumeclaim {go_quote(name)} not found",),
                    NAME,
                )
            if "ReadWriteOncePod" in pvc.access_modes:
                rwop.add(pvc.name)
        conflicts = 0
        if rwop:
            storage = self._handle.shared_lister.storage_infos()
            for name in rwop:
                if storage.is_pvc_used_by_pods(f"{pod.namespace}/{name}"):
                    conflicts += 1  # at most one pod can use a ReadWriteOncePod claim
        if not disk_volumes(pod) and conflicts == 0:
            return _SKIP
        state[PRE_FILTER_STATE_KEY] = PreFilterState(frozenset(rwop), conflicts)
        return None

    def schedsim_pre_filter_add_pod(
        self,
        state: CycleState,
        pod_to_schedule: Pod,
        pod_info_to_add: PodInfo,
        node_info: NodeInfo,
    ) -> Status | None:
        """AddPod of upstream VolumeRestrictions: count the added pod's uses."""
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return _NO_STATE
        s.conflicting_pvc_ref_count += s.conflicts_of(pod_info_to_add.pod)
        return None

    def schedsim_pre_filter_remove_pod(
        self,
        state: CycleState,
        pod_to_schedule: Pod,
        pod_info_to_remove: PodInfo,
        node_info: NodeInfo,
    ) -> Status | None:
        """RemovePod of upstream VolumeRestrictions: uncount the removed pod's uses."""
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return _NO_STATE
        s.conflicting_pvc_ref_count -= s.conflicts_of(pod_info_to_remove.pod)
        return None

    def schedsim_filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Filter of upstream VolumeRestrictions (see the class docstring)."""
        disks = disk_volumes(pod)
        if disks:
            for pi in node_info.pods:
                existing = pi.pod
                for disk in disks:
                    if is_volume_conflict(disk, existing):
                        return _DISK_CONFLICT
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return _NO_STATE
        if s.conflicting_pvc_ref_count > 0:
            return _RWOP_CONFLICT
        return None
