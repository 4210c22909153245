"""Who a ResourceClaim belongs to and who uses it: the two predicates the DRA snapshot, the
DynamicResources plugin and the simulations share (k8s.io/dynamic-resource-allocation
``resourceclaim.IsForPod`` / ``IsReservedForPod``)."""

from __future__ import annotations

from schedsim.api.core import Pod
from schedsim.api.resource import ResourceClaim

__all__ = ["claim_is_for_pod", "claim_reserved_for_pod"]


def claim_is_for_pod(pod: Pod, claim: ResourceClaim) -> bool:
    """Tells whether ``pod`` owns ``claim`` (``resourceclaim.IsForPod``).

    The claim is in the pod's namespace and has a controller ownerReference with the pod's UID.
    Time: O(owner references).
    """
    return claim.namespace == pod.namespace and any(
        ref.controller and ref.uid == pod.uid for ref in claim.owner_references
    )


def claim_reserved_for_pod(pod: Pod, claim: ResourceClaim) -> bool:
    """Some ``status.reservedFor`` entry has the pod's UID (``resourceclaim.IsReservedForPod``).

    Time: O(reservations).
    """
    return any(ref.uid == pod.uid for ref in claim.status.reserved_for)
