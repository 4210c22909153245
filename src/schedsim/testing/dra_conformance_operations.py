"""A DRA scenario's shape (`DraScenario`: an operation and the states before and after it)
and the snapshot operations the scenarios run (schedule, unschedule, remove and add nodes).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import attrs

from schedsim.api.core import Node, Pod
from schedsim.api.resource import ResourceClaim, ResourceSlice
from schedsim.snapshot import (
    NodeInfo,
    PodInfo,
    PredicateSnapshot,
    SchedulingError,
    SchedulingErrorType,
)
from schedsim.testing.dra_conformance_objects import (
    BIG,
    CROWDED,
    LATECOMER,
    N1,
    N2,
    P1,
    P2,
    P3,
    P3_GPU,
    S2,
    SHARED_ON_N1_P1,
    make_gpu_claim,
    on_node,
)
from schedsim.testing.dra_conformance_state import DraState, full_state
from schedsim.testing.snapshot_conformance import NodeState
from schedsim.testing.snapshot_conformance_state import expect_equal, fail

# --------------------------------------------------------------------------- scenarios


@attrs.frozen
class DraScenario:
    """One operation on a snapshot with DRA state, and the states before and after it.

    Attributes:
        name: short, unique.
        description: the CA test case or Kubernetes behaviour it mirrors.
        op: the operation; it may check its own results (e.g. the chosen node).
        nodes: the initial cluster's nodes.
        pods: its scheduled pods (``spec.nodeName`` set).
        claims, slices: its DRA objects (the device class is `GPU_CLASS`).
        initial, initial_dra: the state ``set_cluster_state`` builds.
        modified, modified_dra: the state after ``op`` (the initial one when ``op`` fails).
        error: the exception ``op`` must raise, if any (then nothing may change).
        scheduling_error: its type when it is a `SchedulingError`.
        error_match: a substring of the error's message.
    """

    name: str
    description: str
    op: Callable[[PredicateSnapshot], None]
    nodes: tuple[Node, ...]
    pods: tuple[Pod, ...]
    claims: tuple[ResourceClaim, ...]
    slices: tuple[ResourceSlice, ...]
    initial: Mapping[str, NodeState]
    initial_dra: DraState
    modified: Mapping[str, NodeState]
    modified_dra: DraState
    error: type[Exception] | None = None
    scheduling_error: SchedulingErrorType | None = None
    error_match: str = ""

    def run_op(self, snapshot: PredicateSnapshot) -> None:
        """Run ``op``; check it raises what it must and that a failure changed nothing."""
        if self.error is None:
            try:
                self.op(snapshot)
            except AssertionError:
                raise
            except Exception as e:
                fail(f"op raised {type(e).__name__}: {e}")
            return
        before = full_state(snapshot)
        try:
            self.op(snapshot)
        except self.error as e:
            if self.scheduling_error is not None:
                got = e.type if isinstance(e, SchedulingError) else None
                if got is not self.scheduling_error:
                    fail(f"op: expected a {self.scheduling_error.name} SchedulingError, got {e!r}")
            if self.error_match not in str(e):
                fail(f"op: error {str(e)!r} does not contain {self.error_match!r}")
        except Exception as e:
            fail(f"op: expected {self.error.__name__}, got {type(e).__name__}: {e}")
        else:
            fail(f"op: expected {self.error.__name__}, nothing was raised")
        if full_state(snapshot) != before:
            fail("op failed but changed the snapshot (claims, slices or NodeInfos)")


def schedule_p1_on_n1(s: PredicateSnapshot) -> None:
    s.schedule_pod(P1, N1.name)


def schedule_p2_on_n1(s: PredicateSnapshot) -> None:
    s.schedule_pod(P2, N1.name)


def schedule_p2_on_n2(s: PredicateSnapshot) -> None:
    s.schedule_pod(P2, N2.name)


def schedule_p1_on_any(s: PredicateSnapshot) -> None:
    expect_equal(
        "schedule_pod_on_any_node_matching(p1)", s.schedule_pod_on_any_node_matching(P1), N1.name
    )


def schedule_p1_then_p3_on_any(s: PredicateSnapshot) -> None:
    expect_equal("first pod's node", s.schedule_pod_on_any_node_matching(P1), N2.name)
    expect_equal("second pod's node", s.schedule_pod_on_any_node_matching(P3), N1.name)


def schedule_p1_on_any_matching_n2(s: PredicateSnapshot) -> None:
    got = s.schedule_pod_on_any_node_matching(
        P1, lambda ni: ni.node is not None and ni.node.name == N2.name
    )
    expect_equal("schedule_pod_on_any_node_matching(p1, only dra-node-2)", got, N2.name)


def schedule_big_on_n1(s: PredicateSnapshot) -> None:
    s.schedule_pod(BIG, N1.name)


def schedule_big_on_any(s: PredicateSnapshot) -> None:
    s.schedule_pod_on_any_node_matching(BIG)


def schedule_latecomer(s: PredicateSnapshot) -> None:
    s.schedule_pod(LATECOMER, N1.name)


def unschedule_p1(s: PredicateSnapshot) -> None:
    s.unschedule_pod("default", "p1", N1.name)


def unschedule_p2(s: PredicateSnapshot) -> None:
    s.unschedule_pod("default", "p2", N1.name)


def unschedule_p1_reschedule_on_n2(s: PredicateSnapshot) -> None:
    s.unschedule_pod("default", "p1", N1.name)
    s.schedule_pod(P1, N2.name)


def unschedule_p1_reschedule_on_n1(s: PredicateSnapshot) -> None:
    s.unschedule_pod("default", "p1", N1.name)
    s.schedule_pod(P1, N1.name)


def remove_n1(s: PredicateSnapshot) -> None:
    s.remove_node_info(N1.name)


def remove_n1_add_back(s: PredicateSnapshot) -> None:
    ni = s.get_node_info(N1.name)
    s.remove_node_info(N1.name)
    s.add_node_info(ni)


def add_n2_with_slices_then_schedule(s: PredicateSnapshot) -> None:
    s.add_node_info(NodeInfo(N2, [S2]))
    s.schedule_pod(P3, N2.name)


def add_n2_with_pods(s: PredicateSnapshot) -> None:
    p1 = on_node(P1, N2)
    claims = [
        make_gpu_claim("p1-gpu-0", owner=P1, node=N2, devices=["gpu-0"], reserved_for=[P1]),
        make_gpu_claim("shared", node=N2, devices=["gpu-1"], reserved_for=[P1]),
    ]
    s.add_node_info(NodeInfo(N2, [S2], pods=[PodInfo(p1, claims)]))


def add_n2_slices_again(s: PredicateSnapshot) -> None:
    s.add_node_info(NodeInfo(N2, [S2]))


def add_n2_with_tracked_owned_claim(s: PredicateSnapshot) -> None:
    claim = make_gpu_claim("p3-gpu-0", owner=P3, node=N2, devices=["gpu-0"], reserved_for=[P3])
    s.add_node_info(NodeInfo(N2, [S2], pods=[PodInfo(on_node(P3, N2), [claim])]))


def add_n2_with_unallocated_owned_claim(s: PredicateSnapshot) -> None:
    s.add_node_info(NodeInfo(N2, [S2], pods=[PodInfo(on_node(P3, N2), [P3_GPU])]))


def add_n2_with_claim_allocated_on_n1(s: PredicateSnapshot) -> None:
    claim = make_gpu_claim("p3-gpu-0", owner=P3, node=N1, devices=["gpu-1"], reserved_for=[P3])
    s.add_node_info(NodeInfo(N2, [S2], pods=[PodInfo(on_node(P3, N2), [claim])]))


def add_n2_with_shared_claim_of_n1(s: PredicateSnapshot) -> None:
    s.add_node_info(NodeInfo(N2, [S2], pods=[PodInfo(on_node(P2, N2), [SHARED_ON_N1_P1])]))


def add_n2_with_missing_shared_claim(s: PredicateSnapshot) -> None:
    claim = make_gpu_claim("shared", node=N2, devices=["gpu-0"], reserved_for=[P2])
    s.add_node_info(NodeInfo(N2, [S2], pods=[PodInfo(on_node(P2, N2), [claim])]))


def add_n2_without_owned_claim(s: PredicateSnapshot) -> None:
    shared = make_gpu_claim("shared", node=N2, devices=["gpu-1"], reserved_for=[P1])
    s.add_node_info(NodeInfo(N2, [S2], pods=[PodInfo(on_node(P1, N2), [shared])]))


def add_n2_with_crowded_user(s: PredicateSnapshot) -> None:
    s.add_node_info(NodeInfo(N2, [S2], pods=[PodInfo(on_node(LATECOMER, N2), [CROWDED])]))
