"""Helpers on ResourceClaims that the DRA snapshot and its callers share: claim identity,
a pod's claim names, allocation and reservation state, and copies with a pod's reservation
added or removed or the allocation cleared; `DraSnapshotError`, which their checks raise.

Mirrors CA ``simulator/dynamicresources/utils/resource_claims.go`` (see `DraSnapshot` in
`schedsim.snapshot.dra`, which re-exports the public names, for the deliberate differences:
claims are immutable here, so every change returns a copy).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import attrs

from schedsim.api.core import Node, NodeSelectorTerm, Pod, PodResourceClaim
from schedsim.api.core.nodeaffinity import node_matches
from schedsim.api.resource import MAX_RESERVED_FOR, ResourceClaim, ResourceClaimConsumerReference

__all__ = [
    "RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE",
    "ClaimId",
    "DraSnapshotError",
    "claim_allocated",
    "claim_available_on_node",
    "claim_fully_reserved",
    "claim_id",
    "claim_in_use",
    "consumer_matches_pod",
    "deallocated",
    "match_node_selector_terms",
    "pod_claim_name",
    "pod_consumer_reference",
    "with_pod_reservation",
    "without_pod_reservation",
]

RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE: Final = MAX_RESERVED_FOR
"""Maximum ``status.reservedFor`` length (``resourceapi.ResourceClaimReservedForMaxSize``, 256)."""

ClaimId = tuple[str, str]
"""``(namespace, name)`` of a ResourceClaim (CA ``ResourceClaimId``)."""


class DraSnapshotError(ValueError):
    """A `DraSnapshot` operation failed (CA returns an ``error``); the snapshot is unchanged."""


def pod_claim_name(pod: Pod, ref: PodResourceClaim) -> str | None:
    """The claim name of one ``spec.resourceClaims`` entry; None: no claim is needed."""
    if ref.resource_claim_name:
        return ref.resource_claim_name
    if not ref.resource_claim_template_name:
        raise DraSnapshotError(
            f'pod "{pod.key}", spec.resourceClaim "{ref.name}": '
            "none of the supported fields are set"
        )
    if ref.name not in pod.resource_claim_statuses:
        raise DraSnapshotError(
            f'pod "{pod.key}": ResourceClaim not created yet '
            f"(couldn't determine ResourceClaim name for spec.resourceClaim {ref.name!r})"
        )
    return pod.resource_claim_statuses[ref.name]


# --------------------------------------------------------------------------- claim helpers


def claim_id(claim: ResourceClaim) -> ClaimId:
    """``(namespace, name)`` of ``claim`` (CA ``GetClaimId``)."""
    return (claim.namespace, claim.name)


def claim_allocated(claim: ResourceClaim) -> bool:
    """``status.allocation`` is set (CA ``ClaimAllocated``). Time: O(1)."""
    return claim.status.allocation is not None


def claim_in_use(claim: ResourceClaim) -> bool:
    """``status.reservedFor`` is not empty (CA ``ClaimInUse``). Time: O(1)."""
    return len(claim.status.reserved_for) > 0


def claim_fully_reserved(claim: ResourceClaim) -> bool:
    """``status.reservedFor`` holds 256 or more entries (CA ``ClaimFullyReserved``). Time: O(1)."""
    return len(claim.status.reserved_for) >= RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE


def consumer_matches_pod(pod: Pod, ref: ResourceClaimConsumerReference) -> bool:
    """Whether ``ref`` names ``pod`` (CA ``claimConsumerReferenceMatchesPod``)."""
    return (
        ref.api_group == ""
        and ref.resource == "pods"
        and ref.name == pod.name
        and ref.uid == pod.uid
    )


def pod_consumer_reference(pod: Pod) -> ResourceClaimConsumerReference:
    """The ``status.reservedFor`` entry of ``pod`` (CA ``PodClaimConsumerReference``)."""
    return ResourceClaimConsumerReference(resource="pods", name=pod.name, uid=pod.uid, api_group="")


def with_pod_reservation(claim: ResourceClaim, pod: Pod) -> ResourceClaim:
    """A copy of ``claim`` reserved for ``pod`` (CA ``AddPodReservationInPlace``); ``claim`` itself
    when it already is."""
    reserved = claim.status.reserved_for
    if any(consumer_matches_pod(pod, ref) for ref in reserved):
        return claim
    status = attrs.evolve(claim.status, reserved_for=(*reserved, pod_consumer_reference(pod)))
    return attrs.evolve(claim, status=status)


def without_pod_reservation(claim: ResourceClaim, pod: Pod) -> ResourceClaim:
    """A copy of ``claim`` without the pod's first reservation (CA ``ClearPodReservationInPlace``);
    ``claim`` itself when there is none."""
    reserved = claim.status.reserved_for
    for i, ref in enumerate(reserved):
        if consumer_matches_pod(pod, ref):
            status = attrs.evolve(claim.status, reserved_for=reserved[:i] + reserved[i + 1 :])
            return attrs.evolve(claim, status=status)
    return claim


def deallocated(claim: ResourceClaim) -> ResourceClaim:
    """A copy of ``claim`` without allocation and device status (CA ``DeallocateClaimInPlace``,
    which clears the allocation only)."""
    if claim.status.allocation is None and not claim.status.devices:
        return claim
    return attrs.evolve(claim, status=attrs.evolve(claim.status, allocation=None, devices=()))


# --------------------------------------------------------------------------- node selectors


def match_node_selector_terms(node: Node, terms: Sequence[NodeSelectorTerm]) -> bool:
    """Tells whether ``node`` matches any of ``terms`` (``corev1helpers.MatchNodeSelectorTerms``).

    Terms are ORed, requirements within a term ANDed, with the rules of
    `schedsim.api.core.nodeaffinity` (the NodeAffinity plugin's matching).

    Time: O(total requirements x values).
    """
    return node_matches(terms, node.labels, node.name)


def claim_available_on_node(claim: ResourceClaim, node: Node) -> bool:
    """Tells whether an allocated ``claim`` can be used on ``node`` (CA ``ClaimAvailableOnNode``).

    True when the claim is allocated and its allocation has no node selector or one that matches
    the node; False for an unallocated claim.

    Time: O(node selector size).
    """
    allocation = claim.status.allocation
    if allocation is None:
        return False
    if allocation.node_selector is None:
        return True
    return match_node_selector_terms(node, allocation.node_selector)
