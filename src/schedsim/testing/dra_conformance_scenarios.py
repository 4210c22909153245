"""The DRA scenarios (`DRA_SCENARIOS`): initial clusters, operations and expected states,
after Cluster Autoscaler's ``predicate_snapshot_test.go`` DRA cases and its
``dynamicresources/snapshot`` semantics.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs

from schedsim.snapshot import PredicateSnapshot, SchedulingError, SchedulingErrorType
from schedsim.snapshot.dra import DraSnapshotError
from schedsim.testing.dra_conformance_objects import (
    BIG_GPU,
    CROWDED,
    CROWDED_STATE,
    EMPTY,
    N1,
    N2,
    P1,
    P1_GPU,
    P1_GPU_ON_N1,
    P2,
    P3,
    P3_GPU,
    PLAIN,
    S1,
    S2,
    SHARED,
    SHARED_ON_N1_P1,
    SHARED_ON_N1_P1_P2,
    SHARED_ON_N1_P2,
    SLICES_1_2,
    USERS,
    alloc_state,
    make_gpu_claim,
    node_state,
    on_node,
)
from schedsim.testing.dra_conformance_operations import (
    DraScenario,
    add_n2_slices_again,
    add_n2_with_claim_allocated_on_n1,
    add_n2_with_crowded_user,
    add_n2_with_missing_shared_claim,
    add_n2_with_pods,
    add_n2_with_shared_claim_of_n1,
    add_n2_with_slices_then_schedule,
    add_n2_with_tracked_owned_claim,
    add_n2_with_unallocated_owned_claim,
    add_n2_without_owned_claim,
    remove_n1,
    remove_n1_add_back,
    schedule_big_on_any,
    schedule_big_on_n1,
    schedule_latecomer,
    schedule_p1_on_any,
    schedule_p1_on_any_matching_n2,
    schedule_p1_on_n1,
    schedule_p1_then_p3_on_any,
    schedule_p2_on_n1,
    schedule_p2_on_n2,
    unschedule_p1,
    unschedule_p1_reschedule_on_n1,
    unschedule_p1_reschedule_on_n2,
    unschedule_p2,
)
from schedsim.testing.dra_conformance_state import UNALLOCATED, DraState

BASE_N1_N2 = {N1.name: EMPTY, N2.name: EMPTY}
_CLAIMS_PENDING = {"default/p1-gpu-0": UNALLOCATED, "default/shared": UNALLOCATED}
P1_ON_N1_NODES = {N1.name: node_state(P1), N2.name: EMPTY}
P1_ON_N1_DRA = DraState(
    {
        "default/p1-gpu-0": alloc_state(N1, "gpu-0", reserved_for=["p1"]),
        "default/shared": alloc_state(N1, "gpu-1", reserved_for=["p1"]),
    },
    SLICES_1_2,
)
_P1_P2_ON_N1_DRA = DraState(
    {
        "default/p1-gpu-0": alloc_state(N1, "gpu-0", reserved_for=["p1"]),
        "default/shared": alloc_state(N1, "gpu-1", reserved_for=["p1", "p2"]),
    },
    SLICES_1_2,
)
# a cluster where p1 runs on dra-node-1 with its claims allocated there
P1_RUNNING: dict[str, Any] = {
    "nodes": (N1, N2),
    "pods": (on_node(P1, N1),),
    "claims": (P1_GPU_ON_N1, SHARED_ON_N1_P1),
    "slices": (S1, S2),
    "initial": P1_ON_N1_NODES,
    "initial_dra": P1_ON_N1_DRA,
}
_P1_P2_RUNNING: dict[str, Any] = {
    "nodes": (N1, N2),
    "pods": (on_node(P1, N1), on_node(P2, N1)),
    "claims": (P1_GPU_ON_N1, SHARED_ON_N1_P1_P2),
    "slices": (S1, S2),
    "initial": {N1.name: node_state(P1, P2), N2.name: EMPTY},
    "initial_dra": _P1_P2_ON_N1_DRA,
}
# dra-node-1 only; the claims of p1, p3 and p2's shared claim, none allocated
_ONLY_N1: dict[str, Any] = {
    "nodes": (N1,),
    "pods": (),
    "claims": (P1_GPU, P3_GPU, SHARED),
    "slices": (S1,),
    "initial": {N1.name: EMPTY},
    "initial_dra": DraState(
        {
            "default/p1-gpu-0": UNALLOCATED,
            "default/p3-gpu-0": UNALLOCATED,
            "default/shared": UNALLOCATED,
        },
        {N1.name: (S1.name,)},
    ),
}
_CROWD: dict[str, Any] = {
    "nodes": (N1,),
    "pods": USERS,
    "claims": (CROWDED,),
    "slices": (S1,),
    "initial": {N1.name: node_state(*USERS)},
    "initial_dra": DraState({"default/crowded": CROWDED_STATE}, {N1.name: (S1.name,)}),
}


def _unchanged(setup: Mapping[str, Any]) -> dict[str, Any]:
    return {**setup, "modified": setup["initial"], "modified_dra": setup["initial_dra"]}


def _add_node_error(name: str, description: str, op: Callable[[PredicateSnapshot], None],
                    match: str, setup: Mapping[str, Any] = _ONLY_N1) -> DraScenario:  # fmt: skip
    return DraScenario(
        name, description, op, **_unchanged(setup), error=DraSnapshotError, error_match=match
    )


DRA_SCENARIOS: tuple[DraScenario, ...] = (
    DraScenario(
        "schedule pod with pod-owned and shared claims",
        "CA 'schedule pod with claims' (owned and shared, none allocated): the DynamicResources "
        "plugin allocates each claim from the node's slice in Filter and writes it in Reserve "
        "(node selector for that node), the snapshot reserves both for the pod (kube-scheduler "
        "PreBind) and the PodInfo holds the allocated claims.",
        schedule_p1_on_n1,
        nodes=(N1, N2),
        pods=(),
        claims=(P1_GPU, SHARED),
        slices=(S1, S2),
        initial=BASE_N1_N2,
        initial_dra=DraState(_CLAIMS_PENDING, SLICES_1_2),
        modified=P1_ON_N1_NODES,
        modified_dra=P1_ON_N1_DRA,
    ),
    DraScenario(
        "schedule pod with a pre-allocated pod-owned claim",
        "CA 'schedule pod with claims, some pre-allocated': an allocated claim keeps its "
        "allocation (gpu-1, not what the allocator would pick) and is only reserved.",
        schedule_p1_on_n1,
        nodes=(N1, N2),
        pods=(),
        claims=(make_gpu_claim("p1-gpu-0", owner=P1, node=N1, devices=["gpu-1"]), SHARED),
        slices=(S1, S2),
        initial=BASE_N1_N2,
        initial_dra=DraState(
            {"default/p1-gpu-0": alloc_state(N1, "gpu-1"), "default/shared": UNALLOCATED},
            SLICES_1_2,
        ),
        modified=P1_ON_N1_NODES,
        modified_dra=DraState(
            {
                "default/p1-gpu-0": alloc_state(N1, "gpu-1", reserved_for=["p1"]),
                "default/shared": alloc_state(N1, "gpu-0", reserved_for=["p1"]),
            },
            SLICES_1_2,
        ),
    ),
    DraScenario(
        "schedule second pod of an allocated shared claim",
        "CA 'schedule pod with shared claim already allocated and in use': the shared claim "
        "keeps its allocation and gets the second pod in reservedFor.",
        schedule_p2_on_n1,
        **P1_RUNNING,
        modified={N1.name: node_state(P1, P2), N2.name: EMPTY},
        modified_dra=_P1_P2_ON_N1_DRA,
    ),
    DraScenario(
        "schedule pod whose shared claim is allocated on another node",
        "CA 'scheduling pod with failing DRA predicates is an error': DynamicResources Filter "
        "rejects a node the claim's allocation does not select ('resourceclaim not available "
        "on the node').",
        schedule_p2_on_n2,
        **_unchanged(P1_RUNNING),
        error=SchedulingError,
        scheduling_error=SchedulingErrorType.FAILING_PREDICATE,
        error_match="resourceclaim not available on the node",
    ),
    DraScenario(
        "schedule pod whose claim cannot be allocated on the node",
        "CA 'scheduling pod with failing DRA predicates is an error': 3 GPUs requested, the "
        "node has 2: 'cannot allocate all claims'.",
        schedule_big_on_n1,
        nodes=(N1, N2),
        pods=(),
        claims=(BIG_GPU,),
        slices=(S1, S2),
        initial=BASE_N1_N2,
        initial_dra=DraState({"default/big-gpu-0": UNALLOCATED}, SLICES_1_2),
        modified=BASE_N1_N2,
        modified_dra=DraState({"default/big-gpu-0": UNALLOCATED}, SLICES_1_2),
        error=SchedulingError,
        scheduling_error=SchedulingErrorType.FAILING_PREDICATE,
        error_match="cannot allocate all claims",
    ),
    DraScenario(
        "schedule pod with claims on any node (only one node has slices)",
        "CA 'schedule pod with claims on any Node (only one Node has ResourceSlices)': the "
        "node without slices fails DynamicResources Filter, the other gets the pod.",
        schedule_p1_on_any,
        nodes=(N1, PLAIN),
        pods=(),
        claims=(P1_GPU, SHARED),
        slices=(S1,),
        initial={N1.name: EMPTY, PLAIN.name: EMPTY},
        initial_dra=DraState(_CLAIMS_PENDING, {N1.name: (S1.name,)}),
        modified={N1.name: node_state(P1), PLAIN.name: EMPTY},
        modified_dra=DraState(P1_ON_N1_DRA.claims, {N1.name: (S1.name,)}),
    ),
    DraScenario(
        "schedule two pods with claims on any node",
        "CA SchedulePodOnAnyNodeMatching's round robin (starts after the node chosen last): "
        "p1 lands on dra-node-2, p3 on dra-node-1, each claim allocated from its node's slice.",
        schedule_p1_then_p3_on_any,
        nodes=(N1, N2),
        pods=(),
        claims=(P1_GPU, P3_GPU, SHARED),
        slices=(S1, S2),
        initial=BASE_N1_N2,
        initial_dra=DraState({**_CLAIMS_PENDING, "default/p3-gpu-0": UNALLOCATED}, SLICES_1_2),
        modified={N1.name: node_state(P3), N2.name: node_state(P1)},
        modified_dra=DraState(
            {
                "default/p1-gpu-0": alloc_state(N2, "gpu-0", reserved_for=["p1"]),
                "default/shared": alloc_state(N2, "gpu-1", reserved_for=["p1"]),
                "default/p3-gpu-0": alloc_state(N1, "gpu-0", reserved_for=["p3"]),
            },
            SLICES_1_2,
        ),
    ),
    DraScenario(
        "schedule pod with claims on any matching node",
        "CA 'schedule pod on any Node matching': only dra-node-2 is acceptable, so the claims "
        "are allocated there.",
        schedule_p1_on_any_matching_n2,
        nodes=(N1, N2),
        pods=(),
        claims=(P1_GPU, SHARED),
        slices=(S1, S2),
        initial=BASE_N1_N2,
        initial_dra=DraState(_CLAIMS_PENDING, SLICES_1_2),
        modified={N1.name: EMPTY, N2.name: node_state(P1)},
        modified_dra=DraState(
            {
                "default/p1-gpu-0": alloc_state(N2, "gpu-0", reserved_for=["p1"]),
                "default/shared": alloc_state(N2, "gpu-1", reserved_for=["p1"]),
            },
            SLICES_1_2,
        ),
    ),
    DraScenario(
        "schedule pod with claims on any node: no node can allocate",
        "CA 'scheduling pod on any Node with failing DRA predicates on all Nodes is an "
        "error': NoNodesPassingPredicates, claims stay unallocated.",
        schedule_big_on_any,
        nodes=(N1, N2),
        pods=(),
        claims=(BIG_GPU,),
        slices=(S1, S2),
        initial=BASE_N1_N2,
        initial_dra=DraState({"default/big-gpu-0": UNALLOCATED}, SLICES_1_2),
        modified=BASE_N1_N2,
        modified_dra=DraState({"default/big-gpu-0": UNALLOCATED}, SLICES_1_2),
        error=SchedulingError,
        scheduling_error=SchedulingErrorType.NO_NODES_PASSING_PREDICATES,
    ),
    DraScenario(
        "unschedule pod with claims, shared claim still in use",
        "CA 'unschedule pod with claims' / UnreservePodClaims: the pod's reservations go, its "
        "pod-owned claim is deallocated, the shared claim stays allocated for the other pod.",
        unschedule_p1,
        **_P1_P2_RUNNING,
        modified={N1.name: node_state(P2), N2.name: EMPTY},
        modified_dra=DraState(
            {
                "default/p1-gpu-0": UNALLOCATED,
                "default/shared": alloc_state(N1, "gpu-1", reserved_for=["p2"]),
            },
            SLICES_1_2,
        ),
    ),
    DraScenario(
        "unschedule the last pod of a shared claim",
        "CA UnreservePodClaims (as the resource-claim controller does): a shared claim nobody "
        "reserves any more is deallocated.",
        unschedule_p2,
        nodes=(N1, N2),
        pods=(on_node(P2, N1),),
        claims=(SHARED_ON_N1_P2,),
        slices=(S1, S2),
        initial={N1.name: node_state(P2), N2.name: EMPTY},
        initial_dra=DraState(
            {"default/shared": alloc_state(N1, "gpu-1", reserved_for=["p2"])}, SLICES_1_2
        ),
        modified=BASE_N1_N2,
        modified_dra=DraState({"default/shared": UNALLOCATED}, SLICES_1_2),
    ),
    DraScenario(
        "unschedule and reschedule pod with claims on another node",
        "CA 'unschedule and reschedule pod with claims': the claims freed on dra-node-1 are "
        "allocated afresh from dra-node-2's slice.",
        unschedule_p1_reschedule_on_n2,
        **P1_RUNNING,
        modified={N1.name: EMPTY, N2.name: node_state(P1)},
        modified_dra=DraState(
            {
                "default/p1-gpu-0": alloc_state(N2, "gpu-0", reserved_for=["p1"]),
                "default/shared": alloc_state(N2, "gpu-1", reserved_for=["p1"]),
            },
            SLICES_1_2,
        ),
    ),
    DraScenario(
        "unschedule and reschedule pod with claims on the same node",
        "CA 'unschedule and reschedule pod with claims' (shared claim used by others): p2 "
        "keeps the shared claim allocated, so p1 gets it back with the same device and a "
        "fresh allocation of its own claim.",
        unschedule_p1_reschedule_on_n1,
        **_P1_P2_RUNNING,
        modified={N1.name: node_state(P1, P2), N2.name: EMPTY},
        modified_dra=DraState(
            {
                "default/p1-gpu-0": alloc_state(N1, "gpu-0", reserved_for=["p1"]),
                "default/shared": alloc_state(N1, "gpu-1", reserved_for=["p2", "p1"]),
            },
            SLICES_1_2,
        ),
    ),
    DraScenario(
        "schedule pod over max reservations of a shared claim",
        "CA 'scheduling pod with shared claim at max reservations is an error' (256, "
        "ResourceClaimReservedForMaxSize): the 257th pod fails with an internal "
        "SchedulingError and nothing changes.",
        schedule_latecomer,
        **_unchanged(_CROWD),
        error=SchedulingError,
        scheduling_error=SchedulingErrorType.INTERNAL_ERROR,
        error_match="max number of reservations",
    ),
    DraScenario(
        "remove node with slices and claims",
        "CA 'remove nodeInfo with LocalResourceSlices and NeededResourceClaims' "
        "(RemoveNodeResourceSlices, RemovePodOwnedClaims): the slices and the pod-owned claim "
        "are gone, the shared claim loses both reservations but keeps its allocation.",
        remove_n1,
        **_P1_P2_RUNNING,
        modified={N2.name: EMPTY},
        modified_dra=DraState({"default/shared": alloc_state(N1, "gpu-1")}, {N2.name: (S2.name,)}),
    ),
    DraScenario(
        "remove node with slices and claims, then add it back",
        "CA 'remove nodeInfo with LocalResourceSlices and NeededResourceClaims, then add it "
        "back': add_node_info restores the slices, re-adds the pod-owned claim and reserves "
        "the claims for its pods again.",
        remove_n1_add_back,
        **_P1_P2_RUNNING,
        modified={N1.name: node_state(P1, P2), N2.name: EMPTY},
        modified_dra=_P1_P2_ON_N1_DRA,
    ),
    DraScenario(
        "add node with slices, then schedule pod on it",
        "CA 'add nodeInfo with LocalResourceSlices': the slices join the DRA snapshot and the "
        "DynamicResources plugin allocates from them.",
        add_n2_with_slices_then_schedule,
        **_ONLY_N1,
        modified={N1.name: EMPTY, N2.name: node_state(P3)},
        modified_dra=DraState(
            {
                "default/p1-gpu-0": UNALLOCATED,
                "default/p3-gpu-0": alloc_state(N2, "gpu-0", reserved_for=["p3"]),
                "default/shared": UNALLOCATED,
            },
            SLICES_1_2,
        ),
    ),
    DraScenario(
        "add node with slices and pods with claims",
        "CA 'add nodeInfo with LocalResourceSlices and NeededResourceClaims': the pod-owned "
        "claim the NodeInfo carries is added, the tracked shared claim is reserved for the pod.",
        add_n2_with_pods,
        nodes=(N1,),
        pods=(),
        claims=(make_gpu_claim("shared", node=N2, devices=["gpu-1"]),),
        slices=(S1,),
        initial={N1.name: EMPTY},
        initial_dra=DraState({"default/shared": alloc_state(N2, "gpu-1")}, {N1.name: (S1.name,)}),
        modified={N1.name: EMPTY, N2.name: node_state(P1)},
        modified_dra=DraState(
            {
                "default/p1-gpu-0": alloc_state(N2, "gpu-0", reserved_for=["p1"]),
                "default/shared": alloc_state(N2, "gpu-1", reserved_for=["p1"]),
            },
            SLICES_1_2,
        ),
    ),
    _add_node_error(
        "error: add node whose slices are already tracked",
        "CA 'adding LocalResourceSlices for an already tracked Node is an error' "
        "(AddNodeResourceSlices).",
        add_n2_slices_again,
        'node "dra-node-2" ResourceSlices already present',
        {
            **_ONLY_N1,
            "slices": (S1, S2),
            "initial_dra": attrs.evolve(_ONLY_N1["initial_dra"], slices=SLICES_1_2),
        },
    ),
    _add_node_error(
        "error: add node with an already tracked pod-owned claim",
        "CA 'adding already tracked pod-owned ResourceClaims is an error' (AddClaims).",
        add_n2_with_tracked_owned_claim,
        "already tracked",
    ),
    _add_node_error(
        "error: add node with an unallocated pod-owned claim",
        "CA 'adding unallocated pod-owned ResourceClaims is an error' "
        "(verifyScheduledPodResourceClaims).",
        add_n2_with_unallocated_owned_claim,
        "not allocated or not available",
        {
            **_ONLY_N1,
            "claims": (P1_GPU, SHARED),
            "initial_dra": DraState(_CLAIMS_PENDING, {N1.name: (S1.name,)}),
        },
    ),
    _add_node_error(
        "error: add node with a pod-owned claim allocated to another node",
        "CA 'adding pod-owned ResourceClaims allocated to another Node is an error' "
        "(ClaimAvailableOnNode).",
        add_n2_with_claim_allocated_on_n1,
        "not allocated or not available",
        {
            **_ONLY_N1,
            "claims": (P1_GPU, SHARED),
            "initial_dra": DraState(_CLAIMS_PENDING, {N1.name: (S1.name,)}),
        },
    ),
    _add_node_error(
        "error: add node with a pod whose shared claim is allocated to another node",
        "CA 'adding pods with shared ResourceClaims allocated to another Node is an error'.",
        add_n2_with_shared_claim_of_n1,
        "not allocated or not available",
        {
            "nodes": (N1,),
            "pods": (on_node(P1, N1),),
            "claims": (P1_GPU_ON_N1, SHARED_ON_N1_P1),
            "slices": (S1,),
            "initial": {N1.name: node_state(P1)},
            "initial_dra": DraState(P1_ON_N1_DRA.claims, {N1.name: (S1.name,)}),
        },
    ),
    _add_node_error(
        "error: add node with a pod whose shared claim is missing",
        "CA ReservePodClaims: a claim the pod references is not in the snapshot.",
        add_n2_with_missing_shared_claim,
        "couldn't find ResourceClaim default/shared",
        {
            **_ONLY_N1,
            "claims": (P1_GPU,),
            "initial_dra": DraState({"default/p1-gpu-0": UNALLOCATED}, {N1.name: (S1.name,)}),
        },
    ),
    _add_node_error(
        "error: add node with a pod without its own claim",
        "CA 'adding pod referencing its own claim without adding the claim is an error': "
        "the PodInfo needs the shared claim only, so its pod-owned claim is not added.",
        add_n2_without_owned_claim,
        "couldn't find ResourceClaim default/p1-gpu-0",
        {
            **_ONLY_N1,
            "claims": (make_gpu_claim("shared", node=N2, devices=["gpu-1"]),),
            "initial_dra": DraState(
                {"default/shared": alloc_state(N2, "gpu-1")}, {N1.name: (S1.name,)}
            ),
        },
    ),
    _add_node_error(
        "error: add node with a pod over max reservations of a shared claim",
        "CA 'adding pod with shared claim at max reservations is an error' (ReservePodClaims).",
        add_n2_with_crowded_user,
        "max number of reservations",
        _CROWD,
    ),
)
"""Every DRA scenario; each runs in every `DRA_FORK_MODES` mode."""
