"""The DRA state a conformance check compares: the canonical dump of a DRA snapshot
(`DraState`, `ClaimState`), the consistency check between NodeInfos, PodInfos and the DRA
snapshot, and the comparisons the scenarios and fork modes make.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from schedsim.api.core import Node
from schedsim.api.resource import ResourceClaim
from schedsim.snapshot import PodInfo, PredicateSnapshot
from schedsim.snapshot.dra import (
    NON_LOCAL_SLICES_KEY,
    DraSnapshot,
    DraSnapshotError,
    claim_available_on_node,
    claim_reserved_for_pod,
)
from schedsim.testing.snapshot_conformance import NodeState, check_snapshot_consistency, dump_state
from schedsim.testing.snapshot_conformance_state import expect_equal, fail

# --------------------------------------------------------------------------- state and checks


@attrs.frozen
class ClaimState:
    """What the DRA dump records for one claim.

    Attributes:
        devices: ``pool/device`` of each allocation result, in result order; () when the
            claim is not allocated.
        node: the node a single-node allocation selector names (``matchFields metadata.name In
            [node]``, what the allocator writes for node-local devices); None when the claim is
            not allocated or its allocation has no node selector; the selector's repr otherwise.
        reserved_for: the names of the pods in ``status.reservedFor``, in order.
        allocated: ``status.allocation`` is set.
    """

    devices: tuple[str, ...] = ()
    node: str | None = None
    reserved_for: tuple[str, ...] = ()
    allocated: bool = False


UNALLOCATED = ClaimState()
"""A claim without allocation and reservations."""


@attrs.frozen
class DraState:
    """The canonical dump of a DRA snapshot.

    Attributes:
        claims: ``namespace/name`` -> `ClaimState`, for every tracked claim.
        slices: node name -> names of its node-local slices, for every node with an entry
            (slices that are not node-local are listed under ``NON_LOCAL_SLICES_KEY`` when
            there are any).
    """

    claims: Mapping[str, ClaimState] = attrs.field(factory=dict)
    slices: Mapping[str, tuple[str, ...]] = attrs.field(factory=dict)


def _claim_state(claim: ResourceClaim) -> ClaimState:
    allocation = claim.status.allocation
    reserved = tuple(r.name for r in claim.status.reserved_for)
    if allocation is None:
        return ClaimState(reserved_for=reserved)
    node: str | None = None
    sel = allocation.node_selector
    if sel is not None:
        fields = sel[0].match_fields if len(sel) == 1 else ()
        if (
            len(sel) == 1
            and not sel[0].match_expressions
            and len(fields) == 1
            and fields[0].key == "metadata.name"
            and fields[0].operator == "In"
            and len(fields[0].values) == 1
        ):
            node = fields[0].values[0]
        else:
            node = repr(sel)
    devices = tuple(f"{r.pool}/{r.device}" for r in allocation.results)
    return ClaimState(devices, node, reserved, allocated=True)


def dump_dra_state(snapshot: PredicateSnapshot) -> DraState:
    """The canonical dump of ``snapshot.dra_snapshot`` (claims and slices; device classes
    never change)."""
    dra = snapshot.dra_snapshot
    claims = {c.key: _claim_state(c) for c in dra.list_resource_claims()}
    slices: dict[str, list[str]] = {}
    for s in dra.list_resource_slices():
        slices.setdefault(s.node_name or NON_LOCAL_SLICES_KEY, []).append(s.name)
    # nodes whose entry holds no slices are invisible in the list: ask for the known nodes
    for ni in snapshot.list_node_infos():
        if ni.node is not None:
            local, found = dra.node_resource_slices(ni.node.name)
            if found and not local:
                slices.setdefault(ni.node.name, [])
    return DraState(claims, {k: tuple(v) for k, v in sorted(slices.items())})


def check_dra_consistency(snapshot: PredicateSnapshot) -> None:
    """Check that the NodeInfos and PodInfos agree with the DRA snapshot (and run
    `check_snapshot_consistency`).

    * each NodeInfo's ``local_resource_slices`` are the DRA snapshot's slices for its node
      (the same objects, in order; none when the node has no entry);
    * each stored pod without ``spec.resourceClaims`` needs no claims; for each pod with
      claims, its PodInfo's ``needed_resource_claims`` are the pod's claims in the DRA snapshot
      (same namespace/name/UID, in order) with the same allocation, and each of those claims
      is allocated, available on the pod's node and reserved for the pod. (The PodInfo's copy
      of a shared claim may lag behind on ``reservedFor``, CA's stale-claims TODO; a pod added
      with ``force_add_pod`` is not reserved, as in CA, and fails this check.)
    * every ``reservedFor`` entry of every claim names a stored pod (by UID) that uses it.

    Raises:
        AssertionError: naming the first disagreement.
    """
    check_snapshot_consistency(snapshot)
    dra = snapshot.dra_snapshot
    users: dict[str, set[str]] = {}  # claim key -> UIDs of stored pods using it
    for ni in snapshot.list_node_infos():
        node = ni.node
        if node is None:
            fail(f"listed NodeInfo without a Node: {ni!r}")
        local, _ = dra.node_resource_slices(node.name)
        got = ni.local_resource_slices
        if len(got) != len(local) or any(a is not b for a, b in zip(got, local, strict=False)):
            fail(
                f"{node.name}: local_resource_slices {[s.name for s in got]} are not the DRA "
                f"snapshot's slices {[s.name for s in local]}"
            )
        for pi in ni.pods:
            _check_pod_claims(dra, node, pi, users)
    for claim in dra.list_resource_claims():
        for ref in claim.status.reserved_for:
            if ref.resource == "pods" and ref.uid not in users.get(claim.key, set()):
                fail(
                    f"claim {claim.key} is reserved for pod {ref.name} (uid {ref.uid}), which "
                    f"is not a stored pod using it"
                )


def _check_pod_claims(
    dra: DraSnapshot, node: Node, pi: PodInfo, users: dict[str, set[str]]
) -> None:
    pod = pi.pod
    needed = pi.needed_resource_claims
    if not pod.resource_claims:
        if needed:
            fail(f"{pod.key}: has no spec.resourceClaims but needs claims {needed!r}")
        return
    try:
        claims = dra.pod_claims(pod)
    except DraSnapshotError as e:
        fail(f"{pod.key} on {node.name}: its claims are not all in the DRA snapshot: {e}")
    expect_equal(
        f"{pod.key} on {node.name}: needed_resource_claims (key, uid) vs the DRA snapshot",
        [(c.key, c.uid) for c in needed],
        [(c.key, c.uid) for c in claims],
    )
    for mine, theirs in zip(needed, claims, strict=True):
        expect_equal(
            f"{pod.key}: allocation of its claim {theirs.key} in the PodInfo vs the DRA snapshot",
            mine.status.allocation,
            theirs.status.allocation,
        )
        if not claim_available_on_node(theirs, node):
            fail(f"{pod.key}: claim {theirs.key} is not allocated for its node {node.name}")
        if not claim_reserved_for_pod(pod, theirs):
            fail(f"{pod.key}: claim {theirs.key} is not reserved for it")
        users.setdefault(theirs.key, set()).add(pod.uid)


def _fmt_dra(state: DraState) -> str:
    claims = "; ".join(f"{k}: {v}" for k, v in sorted(state.claims.items()))
    return f"claims {{{claims}}} slices {dict(state.slices)}"


def expect_dra_state(
    snapshot: PredicateSnapshot,
    nodes: Mapping[str, NodeState],
    dra: DraState,
    step: str,
) -> None:
    """Check the DRA consistency, then that the nodes and pods dump to ``nodes`` and the DRA
    state to ``dra``; raises AssertionError naming ``step``."""
    check_dra_consistency(snapshot)
    got = dump_state(snapshot)
    if got != dict(nodes):
        fail(f"{step}: nodes and pods differ\n  got:  {got}\n  want: {dict(nodes)}")
    got_dra = dump_dra_state(snapshot)
    if got_dra != dra:
        fail(f"{step}: DRA state differs\n  got:  {_fmt_dra(got_dra)}\n  want: {_fmt_dra(dra)}")


def full_state(snapshot: PredicateSnapshot) -> object:
    """Everything a failing operation must leave alone: the claim objects, the slices, and
    per node its slices and each PodInfo's pod and claims (objects compared by value)."""
    dra = snapshot.dra_snapshot
    nodes = []
    for ni in snapshot.list_node_infos():
        assert ni.node is not None
        pods = sorted(
            ((p.pod.key, p.pod, p.needed_resource_claims) for p in ni.pods), key=lambda t: t[0]
        )
        nodes.append((ni.node.name, tuple(ni.local_resource_slices), pods))
    return (
        sorted(((c.key, c) for c in dra.list_resource_claims()), key=lambda t: t[0]),
        sorted((s.name, s) for s in dra.list_resource_slices()),
        nodes,
    )
