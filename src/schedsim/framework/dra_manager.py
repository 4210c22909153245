"""What the DynamicResources plugin reads and writes: the snapshot's DRA objects.

Mirrors kube-scheduler's ``SharedDRAManager`` (``ResourceClaims()`` = the claim tracker,
``ResourceSlices()``, ``DeviceClasses()``) as CA's DRA snapshot implements it: there is no
API server and no in-flight state; an allocation signalled at Reserve is written into the
snapshot at once, and the writes kube-scheduler makes to the API server at PreBind and
PostFilter are writes into the snapshot.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from schedsim.api.resource import DeviceClass, ResourceClaim, ResourceSlice
from schedsim.dra.types import DeviceId

__all__ = ["SharedDraManager"]


class SharedDraManager(Protocol):
    """The DRA state a snapshot shares with plugins during a cycle."""

    def get_resource_claim(self, namespace: str, name: str) -> ResourceClaim | None:
        """The claim ``namespace/name`` as the snapshot has it now, or None."""
        ...

    def list_resource_claims(self) -> Sequence[ResourceClaim]:
        """Every claim in the snapshot."""
        ...

    def claim_changes_since(self, token: object) -> tuple[object, Sequence[tuple[str, str]] | None]:
        """The claims' change feed: a new token and the (namespace, name) of each claim that
        may have changed since ``token`` (a token returned before; None at first), or None
        when unknown (then list every claim). See `DraSnapshot.claim_changes_since`."""
        ...

    def slices_stamp(self) -> int:
        """Equal across calls while the ResourceSlices stay the same; changes otherwise."""
        ...

    def device_classes_stamp(self) -> int:
        """Equal across calls while the DeviceClasses stay the same; changes otherwise."""
        ...

    def list_all_allocated_devices(self) -> frozenset[DeviceId]:
        """Devices allocated to any claim, results with admin access excluded."""
        ...

    def signal_claim_pending_allocation(
        self, claim_uid: str, allocated_claim: ResourceClaim
    ) -> None:
        """Record the allocation Reserve made (the claim tracker's
        ``SignalClaimPendingAllocation``); raises ValueError if the claim is unknown."""
        ...

    def update_resource_claim(self, claim: ResourceClaim) -> None:
        """Store ``claim`` in place of the claim with its namespace and name (what PreBind and
        PostFilter write to the API server upstream); raises ValueError if it is unknown."""
        ...

    def create_resource_claim(self, claim: ResourceClaim) -> None:
        """Add a claim the plugin made (the special claim for extended resources); raises
        ValueError if one with its namespace and name exists."""
        ...

    def delete_resource_claim(self, namespace: str, name: str) -> None:
        """Remove a claim; raises ValueError if it is unknown."""
        ...

    def list_resource_slices(self) -> Sequence[ResourceSlice]:
        """Every ResourceSlice (node-local and not)."""
        ...

    def get_device_class(self, name: str) -> DeviceClass | None:
        """The DeviceClass ``name``, or None."""
        ...

    def list_device_classes(self) -> Sequence[DeviceClass]:
        """Every DeviceClass."""
        ...
