"""What the Handle holds: listers and managers that forward to the snapshot bound for a run.

Mirrors Cluster Autoscaler's ``simulator/framework/delegating_shared_lister.go`` and its use
in ``clustersnapshot/predicate/plugin_runner.go``: the framework (and every plugin, which keeps
the handle it was built with) is built once over a delegating lister; each run points the
delegate at one snapshot (``UpdateDelegate``) and points it back afterwards (``defer
ResetDelegate``). A snapshot never writes itself into a Framework, so two snapshots may share
one Framework: whichever is bound during a call is the one plugins read.

Differences from CA, deliberate: a binding restores the delegate it replaced instead of
resetting to "unset", so bindings nest (a simulation binds its snapshot for the whole run, the
snapshot binds itself again per operation, O(1)); the
DRA manager, the CSI manager and the informer-like storage listers are bound together with the
lister, because in schedsim they are all parts of the one cluster state a run reads. Outside
a binding every method raises `UnboundSnapshotError` (CA's unset lister returns an error).

Cost: a forwarded call is one extra Python call; binding and unbinding are O(1).
"""

from __future__ import annotations

from collections.abc import Sequence
from types import TracebackType
from typing import Protocol

from schedsim.api.resource import DeviceClass, ResourceClaim, ResourceSlice
from schedsim.api.storage import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    VolumeAttachment,
)
from schedsim.dra.types import DeviceId
from schedsim.framework.dra_manager import SharedDraManager
from schedsim.framework.interface import NodeInfoLister, SharedLister, StorageInfoLister
from schedsim.framework.volume_listers import (
    SharedCsiManager,
    SharedVolumeManager,
    StorageListers,
)

__all__ = [
    "BindableSnapshot",
    "Binding",
    "DelegatingCsiManager",
    "DelegatingDraManager",
    "DelegatingSharedLister",
    "DelegatingStorageListers",
    "DelegatingVolumeManager",
    "UnboundSnapshotError",
]


class UnboundSnapshotError(RuntimeError):
    """A plugin read the cluster through the handle while no snapshot was bound to it.

    Raised by every forwarding method of the delegating listers outside a `Binding`; bind a
    snapshot first (``with snapshot.bound(): ...``, which `PredicateSnapshot` does for every
    operation that runs plugins).
    """


def _unbound(what: str) -> UnboundSnapshotError:
    return UnboundSnapshotError(
        f"{what}: no snapshot is bound to the framework's handle "
        "(run plugins through a PredicateSnapshot, or inside `with snapshot.bound():`)"
    )


class BindableSnapshot(
    SharedLister, SharedDraManager, SharedCsiManager, SharedVolumeManager, Protocol
):
    """What a run binds to a Handle: the lister, DRA, CSI and volume managers in one object,
    plus the cluster's storage listers (`schedsim.snapshot.PredicateSnapshot` is one).

    This is a Protocol: implementations don't inherit from it.
    """

    @property
    def storage_listers(self) -> StorageListers:
        """The cluster's PVs, PVCs, StorageClasses and VolumeAttachments."""
        ...


class DelegatingSharedLister:
    """A `SharedLister` forwarding to the bound snapshot (CA ``DelegatingSchedulerSharedLister``).

    Attributes:
        delegate: the bound lister, or None outside a binding.
    """

    __slots__ = ("delegate",)

    def __init__(self) -> None:
        self.delegate: SharedLister | None = None

    def node_infos(self) -> NodeInfoLister:
        """The bound snapshot's NodeInfo lister; raises UnboundSnapshotError outside a run."""
        d = self.delegate
        if d is None:
            raise _unbound("node_infos")
        return d.node_infos()

    def storage_infos(self) -> StorageInfoLister:
        """The bound snapshot's PVC lister; raises UnboundSnapshotError outside a run."""
        d = self.delegate
        if d is None:
            raise _unbound("storage_infos")
        return d.storage_infos()


class DelegatingDraManager:
    """A `SharedDraManager` forwarding to the bound snapshot's DRA state.

    Attributes:
        delegate: the bound manager, or None outside a binding.
    """

    __slots__ = ("delegate",)

    def __init__(self) -> None:
        self.delegate: SharedDraManager | None = None

    def _get(self, what: str) -> SharedDraManager:
        d = self.delegate
        if d is None:
            raise _unbound(what)
        return d

    def get_resource_claim(self, namespace: str, name: str) -> ResourceClaim | None:
        """The claim ``namespace/name`` now, or None."""
        return self._get("get_resource_claim").get_resource_claim(namespace, name)

    def list_resource_claims(self) -> Sequence[ResourceClaim]:
        """Every claim."""
        return self._get("list_resource_claims").list_resource_claims()

    def list_all_allocated_devices(self) -> frozenset[DeviceId]:
        """Devices allocated to any claim (admin-access results excluded)."""
        return self._get("list_all_allocated_devices").list_all_allocated_devices()

    def claim_changes_since(self, token: object) -> tuple[object, Sequence[tuple[str, str]] | None]:
        """The claims' change feed (`SharedDraManager.claim_changes_since`)."""
        return self._get("claim_changes_since").claim_changes_since(token)

    def slices_stamp(self) -> int:
        """The ResourceSlices' version stamp."""
        return self._get("slices_stamp").slices_stamp()

    def device_classes_stamp(self) -> int:
        """The DeviceClasses' version stamp."""
        return self._get("device_classes_stamp").device_classes_stamp()

    def signal_claim_pending_allocation(
        self, claim_uid: str, allocated_claim: ResourceClaim
    ) -> None:
        """Record the allocation Reserve made."""
        self._get("signal_claim_pending_allocation").signal_claim_pending_allocation(
            claim_uid, allocated_claim
        )

    def update_resource_claim(self, claim: ResourceClaim) -> None:
        """Replace a claim (PreBind / PostFilter writes)."""
        self._get("update_resource_claim").update_resource_claim(claim)

    def create_resource_claim(self, claim: ResourceClaim) -> None:
        """Add a claim a plugin made."""
        self._get("create_resource_claim").create_resource_claim(claim)

    def delete_resource_claim(self, namespace: str, name: str) -> None:
        """Remove a claim."""
        self._get("delete_resource_claim").delete_resource_claim(namespace, name)

    def list_resource_slices(self) -> Sequence[ResourceSlice]:
        """Every ResourceSlice."""
        return self._get("list_resource_slices").list_resource_slices()

    def get_device_class(self, name: str) -> DeviceClass | None:
        """The DeviceClass ``name``, or None."""
        return self._get("get_device_class").get_device_class(name)

    def list_device_classes(self) -> Sequence[DeviceClass]:
        """Every DeviceClass."""
        return self._get("list_device_classes").list_device_classes()


class DelegatingCsiManager:
    """A `SharedCsiManager` forwarding to the bound snapshot's CSINodes.

    Attributes:
        delegate: the bound manager, or None outside a binding.
    """

    __slots__ = ("delegate",)

    def __init__(self) -> None:
        self.delegate: SharedCsiManager | None = None

    def get_csi_node(self, name: str) -> CSINode | None:
        """The CSINode ``name`` now, or None."""
        d = self.delegate
        if d is None:
            raise _unbound("get_csi_node")
        return d.get_csi_node(name)

    def list_csi_nodes(self) -> Sequence[CSINode]:
        """Every CSINode now."""
        d = self.delegate
        if d is None:
            raise _unbound("list_csi_nodes")
        return d.list_csi_nodes()


class DelegatingStorageListers:
    """The informer-like storage listers of the bound cluster (`StorageListers`' lookups).

    Attributes:
        delegate: the bound listers, or None outside a binding. A plugin's unit test may set
            it (and the other delegates) directly.
    """

    __slots__ = ("delegate",)

    def __init__(self) -> None:
        self.delegate: StorageListers | None = None

    def _get(self, what: str) -> StorageListers:
        d = self.delegate
        if d is None:
            raise _unbound(what)
        return d

    def persistent_volume(self, name: str) -> PersistentVolume | None:
        """The PV ``name``, or None."""
        return self._get("persistent_volume").persistent_volume(name)

    def persistent_volume_claim(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        """The PVC ``namespace/name``, or None."""
        return self._get("persistent_volume_claim").persistent_volume_claim(namespace, name)

    def storage_class(self, name: str) -> StorageClass | None:
        """The StorageClass ``name``, or None."""
        return self._get("storage_class").storage_class(name)

    def volume_attachments_on(self, node_name: str) -> tuple[VolumeAttachment, ...]:
        """VolumeAttachments with ``spec.nodeName == node_name``."""
        return self._get("volume_attachments_on").volume_attachments_on(node_name)

    def csi_driver(self, name: str) -> CSIDriver | None:
        """The CSIDriver ``name``, or None."""
        return self._get("csi_driver").csi_driver(name)

    @property
    def csi_storage_capacities(self) -> tuple[CSIStorageCapacity, ...]:
        """Every CSIStorageCapacity."""
        return self._get("csi_storage_capacities").csi_storage_capacities


class DelegatingVolumeManager:
    """A `SharedVolumeManager` forwarding to the bound snapshot's PVs and PVCs (what
    VolumeBinding's assume caches hold: bindings it made are seen, and undone by a revert).

    Attributes:
        delegate: the bound manager, or None outside a binding.
    """

    __slots__ = ("delegate",)

    def __init__(self) -> None:
        self.delegate: SharedVolumeManager | None = None

    def _get(self, what: str) -> SharedVolumeManager:
        d = self.delegate
        if d is None:
            raise _unbound(what)
        return d

    def get_persistent_volume(self, name: str) -> PersistentVolume | None:
        """The PV ``name`` now, or None."""
        return self._get("get_persistent_volume").get_persistent_volume(name)

    def get_persistent_volume_claim(
        self, namespace: str, name: str
    ) -> PersistentVolumeClaim | None:
        """The PVC ``namespace/name`` now, or None."""
        return self._get("get_persistent_volume_claim").get_persistent_volume_claim(namespace, name)

    def list_persistent_volumes(self, storage_class: str) -> Sequence[PersistentVolume]:
        """The PVs of class ``storage_class`` now."""
        return self._get("list_persistent_volumes").list_persistent_volumes(storage_class)

    def assume_persistent_volume(self, pv: PersistentVolume) -> None:
        """Replace a PV (VolumeBinding's Reserve/PreBind)."""
        self._get("assume_persistent_volume").assume_persistent_volume(pv)

    def assume_persistent_volume_claim(self, pvc: PersistentVolumeClaim) -> None:
        """Replace a PVC (VolumeBinding's Reserve/PreBind)."""
        self._get("assume_persistent_volume_claim").assume_persistent_volume_claim(pvc)


class _Delegates(Protocol):
    """The parts of a Handle a binding points (`schedsim.framework.Handle`)."""

    @property
    def shared_lister(self) -> DelegatingSharedLister: ...

    @property
    def dra_manager(self) -> DelegatingDraManager: ...

    @property
    def csi_manager(self) -> DelegatingCsiManager: ...

    @property
    def storage_listers(self) -> DelegatingStorageListers: ...

    @property
    def volume_manager(self) -> DelegatingVolumeManager: ...


class Binding:
    """A context manager that binds ``snapshot`` to a handle's delegates and, on exit, restores
    what was bound before (None when nothing was): CA's ``UpdateDelegate`` / ``defer
    ResetDelegate``. Reusable; bindings nest; binding the snapshot already bound changes nothing.

    Args:
        handle: whose delegates to point (`schedsim.framework.Handle`).
        snapshot: the lister, DRA manager, CSI manager and storage listers to read.
    """

    __slots__ = ("_handle", "_saved", "_snapshot")

    def __init__(self, handle: _Delegates, snapshot: BindableSnapshot) -> None:
        self._handle = handle
        self._snapshot = snapshot
        self._saved: list[
            tuple[
                SharedLister | None,
                SharedDraManager | None,
                SharedCsiManager | None,
                StorageListers | None,
                SharedVolumeManager | None,
            ]
        ] = []

    def __enter__(self) -> None:
        h = self._handle
        lister = h.shared_lister
        self._saved.append(
            (
                lister.delegate,
                h.dra_manager.delegate,
                h.csi_manager.delegate,
                h.storage_listers.delegate,
                h.volume_manager.delegate,
            )
        )
        s = self._snapshot
        lister.delegate = s
        h.dra_manager.delegate = s
        h.csi_manager.delegate = s
        h.storage_listers.delegate = s.storage_listers
        h.volume_manager.delegate = s

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        h = self._handle
        (
            h.shared_lister.delegate,
            h.dra_manager.delegate,
            h.csi_manager.delegate,
            h.storage_listers.delegate,
            h.volume_manager.delegate,
        ) = self._saved.pop()
