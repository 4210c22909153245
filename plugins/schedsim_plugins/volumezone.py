"""VolumeZone: mirrors kube-scheduler 1.34's ``VolumeZone`` plugin
(pkg/scheduler/framework/plugins/volumezone/volume_zone.go).

A PersistentVolume labelled with a zone or region (``topology.kubernetes.io/zone``,
``topology.kubernetes.io/region`` or their ``failure-domain.beta.kubernetes.io`` forms) can only
be used from nodes in that zone or region. PVCs and PVs come from the snapshot
(``Handle.volume_manager``: bindings VolumeBinding made earlier in the run are seen),
StorageClasses from ``Handle.storage_listers``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Final

from schedsim.api.core import Pod
from schedsim.api.labels import go_quote
from schedsim.api.storage import PersistentVolume
from schedsim.api.storage.pv import PersistentVolumeClaim
from schedsim.api.storage.storage_class import StorageClass
from schedsim.framework import (
    Code,
    CycleState,
    Handle,
    NodeInfo,
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
    "ERR_REASON_CONFLICT",
    "PRE_FILTER_STATE_KEY",
    "TOPOLOGY_LABELS",
    "PVTopology",
    "VolumeZone",
    "label_zones_to_set",
    "pv_topologies",
]

NAME = "VolumeZone"

ERR_REASON_CONFLICT: Final = "node(s) had no available volume zone"
"""Reason when a PV's zone or region label does not match the node (``ErrReasonConflict``)."""

_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
_BETA_REGION = "failure-domain.beta.kubernetes.io/region"
_ZONE = "topology.kubernetes.io/zone"
_REGION = "topology.kubernetes.io/region"

TOPOLOGY_LABELS: Final = (_BETA_ZONE, _BETA_REGION, _ZONE, _REGION)
"""The labels compared, in upstream's order (``topologyLabels``)."""

_TO_GA: Mapping[str, str] = {_BETA_ZONE: _ZONE, _BETA_REGION: _REGION}

PVTopology = tuple[str, frozenset[str]]
"""``(label key, allowed values)`` of one zone/region label of a PV (``pvTopology``)."""

PRE_FILTER_STATE_KEY: StateKey[tuple[PVTopology, ...]] = StateKey("PreFilter" + NAME)
"""Where PreFilter leaves the pod's PV topologies (``preFilterStateKey`` upstream)."""

_SKIP = Status(Code.Skip, (), NAME)
_CONFLICT = Status(Code.UnschedulableAndUnresolvable, (ERR_REASON_CONFLICT,), NAME)


def label_zones_to_set(value: str) -> frozenset[str] | None:
    """The zones of a zone label value: ``__``-separated, each trimmed
    (``volumehelpers.LabelZonesToSet``); None when an element is empty (upstream's error:
    the label is then ignored)."""
    zones = set()
    for zone in value.split("__"):
        zone = zone.strip()
        if not zone:
            return None
        zones.add(zone)
    return frozenset(zones)


def pv_topologies(pv: PersistentVolume) -> tuple[PVTopology, ...]:
    """The zone/region labels of ``pv`` with their value sets (``getPVTopologies``); labels
    whose value does not parse are skipped."""
    out = []
    for key in TOPOLOGY_LABELS:
        value = pv.labels.get(key)
        if value is None:
            continue
        zones = label_zones_to_set(value)
        if zones is not None:
            out.append((key, zones))
    return tuple(out)


def _unresolvable(message: str) -> Status:
    return Status(Code.UnschedulableAndUnresolvable, (message,), NAME)


class VolumeZone:
    """Mirrors kube-scheduler's ``VolumeZone`` plugin.

    PreFilter walks the pod's PVC volumes (``persistentVolumeClaim`` and generic ephemeral
    ones): a missing PVC, PV or StorageClass gives UnschedulableAndUnresolvable with the
    lister's message (``persistentvolumeclaim "x" not found``); an unbound claim of a
    WaitForFirstConsumer class is skipped (VolumeBinding picks its PV); an unbound claim of
    another class gives ``PersistentVolume had no name`` (no class at all: ``PersistentVolumeClaim
    had no pv name and storageClass name``). It collects the zone/region labels of the bound
    PVs and returns Skip when there are none.

    Filter passes nodes without any of the four zone/region labels (a single-zone cluster);
    otherwise every PV label must be on the node (a beta key is also looked up under its GA
    key) with a value in the PV's ``__``-separated set, else UnschedulableAndUnresolvable
    ``node(s) had no available volume zone``. Takes no args.
    """

    name: ClassVar[str] = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        no_args(NAME, args)
        self._handle = handle

    def events_to_register(self) -> tuple[ClusterEventWithHint, ...]:
        """``EventsToRegister`` (volume_zone.go, 1.34, SchedulerQueueingHints on):
        StorageClass Add with `is_schedulable_after_storage_class_added`, Node Add and
        UpdateNodeLabel without a hint, PersistentVolumeClaim Add|Update with
        `is_schedulable_after_persistent_volume_claim_change`, PersistentVolume Add|Update
        with `is_schedulable_after_persistent_volume_change`."""
        add_update = ActionType.Add | ActionType.Update
        return (
            ClusterEventWithHint(
                ClusterEvent(EventResource.StorageClass, ActionType.Add),
                self.is_schedulable_after_storage_class_added,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeLabel)
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PersistentVolumeClaim, add_update),
                self.is_schedulable_after_persistent_volume_claim_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PersistentVolume, add_update),
                self.is_schedulable_after_persistent_volume_change,
            ),
        )

    def is_schedulable_after_persistent_volume_claim_change(
        self, pod: Pod, old: object, new: object
    ) -> QueueingHint:
        """``isSchedulableAfterPersistentVolumeClaimChange`` (``checkPVCBindingToPodPV``):
        queue when the claim as it is now is in the pending pod's namespace and one of the
        pod's volumes names it; an object of the wrong type: Queue."""
        typed = as_kind(PersistentVolumeClaim, old, new)
        if typed is None:
            return QueueingHint.Queue
        claim = typed[1]
        if not isinstance(claim, PersistentVolumeClaim) or claim.namespace != pod.namespace:
            return QueueingHint.QueueSkip
        if any(v.persistent_volume_claim == claim.name for v in pod.volumes):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_storage_class_added(
        self, pod: Pod, old: object, new: object
    ) -> QueueingHint:
        """``isSchedulableAfterStorageClassAdded``: queue only a WaitForFirstConsumer class
        (its unbound claims stop blocking the pod); an object of the wrong type: Queue."""
        typed = as_kind(StorageClass, old, new)
        if typed is None or typed[1] is None:
            return QueueingHint.Queue
        added = typed[1]
        assert isinstance(added, StorageClass)
        if added.volume_binding_mode == "WaitForFirstConsumer":
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_persistent_volume_change(
        self, pod: Pod, old: object, new: object
    ) -> QueueingHint:
        """``isSchedulableAfterPersistentVolumeChange``: queue an added PV, or an update that
        changes its zone/region topology (`pv_topologies`); an object of the wrong type:
        Queue."""
        typed = as_kind(PersistentVolume, old, new)
        if typed is None or typed[1] is None:
            return QueueingHint.Queue
        original, modified = typed
        if not isinstance(original, PersistentVolume):
            return QueueingHint.Queue
        assert isinstance(modified, PersistentVolume)
        if pv_topologies(original) != pv_topologies(modified):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def _volumes(self) -> SharedVolumeManager:
        return self._handle.volume_manager

    def _pv_topologies(self, pod: Pod) -> tuple[PVTopology, ...] | Status:
        """``getPVbyPod``: the pod's PV topologies, or the failing status."""
        volumes = self._volumes()
        classes = self._handle.storage_listers
        out: list[PVTopology] = []
        for vol in pod.volumes:
            if vol.persistent_volume_claim is not None:
                pvc_name = vol.persistent_volume_claim
            elif vol.ephemeral:
                pvc_name = f"{pod.name}-{vol.name}"  # ephemeral.VolumeClaimName
            else:
                continue
            pvc = volumes.get_persistent_volume_claim(pod.namespace, pvc_name)
            if pvc is None:
                return _unresolvable(f"persistentvolumeclaim {go_quote(pvc_name)} not found")
            pv_name = pvc.volume_name
            if not pv_name:
                class_name = pvc.storage_class
                if not class_name:
                    return _unresolvable(
                        "PersistentVolumeClaim had no pv name and storageClass name"
                    )
                sc = classes.storage_class(class_name)
                if sc is None:
                    return _unresolvable(f'storageclass.storage.k8s.io "{class_name}" not found')
                if sc.volume_binding_mode == "WaitForFirstConsumer":
                    continue  # skip unbound volumes
                return _unresolvable("PersistentVolume had no name")
            pv = volumes.get_persistent_volume(pv_name)
            if pv is None:
                return _unresolvable(f'persistentvolume "{pv_name}" not found')
            out.extend(pv_topologies(pv))
        return tuple(out)

    def pre_filter_reusable(self, pod: Pod) -> bool:
        """A pod without volumes is skipped without reading any claim or PV
        (`schedsim.framework.pre_filter_reuse`)."""
        return not pod.volumes

    def schedsim_pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None:
        """PreFilter of upstream VolumeZone (see the class docstring)."""
        found = self._pv_topologies(pod)
        if isinstance(found, Status):
            return found
        if not found:
            return _SKIP
        state[PRE_FILTER_STATE_KEY] = found
        return None

    def schedsim_filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Filter of upstream VolumeZone (see the class docstring)."""
        if not pod.volumes:
            return None
        topologies = state.get(PRE_FILTER_STATE_KEY)
        if topologies is None:  # upstream recomputes without PreFilter state
            found = self._pv_topologies(pod)
            if isinstance(found, Status):
                return found
            topologies = found
        node = node_info.node
        if node is None:
            return None
        labels = node.labels
        if not any(key in labels for key in TOPOLOGY_LABELS):
            return None  # a node without topology labels: a single-zone cluster
        for key, values in topologies:
            value = labels.get(key)
            if value is None:
                value = labels.get(_TO_GA.get(key, key))
            if value is None or value not in values:
                return _CONFLICT
        return None
