"""The DRA checks of ``set_cluster_state`` and ``clear`` (CA ``SetClusterState`` with DRA):
slices on NodeInfos, claims on PodInfos, a missing claim, forks dropped, a forked DRA
snapshot flattened.
"""

from __future__ import annotations

from schedsim.snapshot.dra import DraSnapshot, DraSnapshotError
from schedsim.testing.dra_conformance_forks import new_dra_snapshot
from schedsim.testing.dra_conformance_objects import (
    GPU_CLASS,
    N1,
    N2,
    P1,
    P1_GPU,
    P1_GPU_ON_N1,
    P3,
    PLAIN,
    S1,
    S2,
    SHARED,
    SHARED_ON_N1_P1,
    SLICES_1_2,
    make_gpu_claim,
    on_node,
)
from schedsim.testing.dra_conformance_scenarios import (
    BASE_N1_N2,
    P1_ON_N1_DRA,
    P1_ON_N1_NODES,
    P1_RUNNING,
)
from schedsim.testing.dra_conformance_state import (
    UNALLOCATED,
    DraState,
    dump_dra_state,
    expect_dra_state,
    full_state,
)
from schedsim.testing.snapshot_conformance import StoreFactory
from schedsim.testing.snapshot_conformance_state import expect_equal, fail

# --------------------------------------------------------------------------- set_cluster_state


def check_set_cluster_state(make_store: StoreFactory, clone_on_fork: bool) -> None:
    """CA SetClusterState with DRA: NodeInfos get their node's slices (the DRA snapshot's
    objects), PodInfos their pods' claims as they are (a claim not reserved for its pod stays
    so: nothing is reserved or allocated)."""
    p3 = on_node(P3, N2)
    unreserved = make_gpu_claim("p3-gpu-0", owner=P3, node=N2, devices=["gpu-1"])
    s = new_dra_snapshot(
        make_store,
        (N1, N2, PLAIN),
        (on_node(P1, N1), p3),
        (P1_GPU_ON_N1, SHARED_ON_N1_P1, unreserved),
        (S1, S2),
        clone_on_fork=clone_on_fork,
    )
    dra = s.dra_snapshot
    expect_equal("dra_snapshot.clone_on_fork", dra.clone_on_fork, clone_on_fork)
    for node, want in ((N1, [S1]), (N2, [S2]), (PLAIN, [])):
        got = s.get_node_info(node.name).local_resource_slices
        if len(got) != len(want) or any(a is not b for a, b in zip(got, want, strict=False)):
            fail(f"{node.name}: local_resource_slices {got!r}, want {want!r}")
    (p1_info,) = s.get_node_info(N1.name).pods
    expect_equal(
        "p1's needed_resource_claims",
        list(p1_info.needed_resource_claims),
        [P1_GPU_ON_N1, SHARED_ON_N1_P1],
    )
    (p3_info,) = s.get_node_info(N2.name).pods
    expect_equal("p3's needed_resource_claims", list(p3_info.needed_resource_claims), [unreserved])
    expect_equal(
        "claims after set_cluster_state (taken as they are)",
        sorted(dra.list_resource_claims(), key=lambda c: c.key),
        sorted([P1_GPU_ON_N1, SHARED_ON_N1_P1, unreserved], key=lambda c: c.key),
    )
    expect_equal("slices", dump_dra_state(s).slices, SLICES_1_2)


def check_set_cluster_state_missing_claim(make_store: StoreFactory, clone_on_fork: bool) -> None:
    """A scheduled pod whose claim is missing: DraSnapshotError (CA: ``couldn't obtain pod
    claims``), and the previous state is kept (CA leaves it half-built)."""
    s = new_dra_snapshot(make_store, *_P1_RUNNING_ARGS, clone_on_fork=clone_on_fork)
    before = full_state(s)
    dra = DraSnapshot.from_objects(
        [P1_GPU_ON_N1], [S1, S2], [GPU_CLASS], clone_on_fork=clone_on_fork
    )
    try:
        s.set_cluster_state((N1, N2), (on_node(P1, N1),), dra)
    except DraSnapshotError as e:
        if "default/shared" not in str(e):
            fail(f"set_cluster_state: error {e} does not name the missing claim")
    else:
        fail("set_cluster_state with a missing claim: expected DraSnapshotError")
    if full_state(s) != before:
        fail("set_cluster_state failed but changed the snapshot")
    expect_dra_state(s, P1_ON_N1_NODES, P1_ON_N1_DRA, "after the failed set_cluster_state")


def check_set_cluster_state_drops_forks(make_store: StoreFactory, clone_on_fork: bool) -> None:
    """CA SetClusterState clears the store and replaces the DRA snapshot: nothing from the
    forked state survives, and revert/commit afterwards are no-ops for the DRA state too."""
    s = new_dra_snapshot(
        make_store, (N1, N2), (), (P1_GPU, SHARED), (S1, S2), clone_on_fork=clone_on_fork
    )
    s.fork()
    s.schedule_pod(P1, N1.name)
    s.fork()
    dra = DraSnapshot.from_objects(
        [P1_GPU_ON_N1, SHARED_ON_N1_P1], [S1, S2], [GPU_CLASS], clone_on_fork=clone_on_fork
    )
    s.set_cluster_state((N1, N2), (on_node(P1, N1),), dra)
    expect_dra_state(s, P1_ON_N1_NODES, P1_ON_N1_DRA, "set_cluster_state in a fork")
    s.revert()
    s.revert()
    expect_dra_state(s, P1_ON_N1_NODES, P1_ON_N1_DRA, "set_cluster_state, revert, revert")
    s.unschedule_pod("default", "p1", N1.name)
    s.commit()
    expect_dra_state(
        s,
        BASE_N1_N2,
        DraState({"default/p1-gpu-0": UNALLOCATED, "default/shared": UNALLOCATED}, SLICES_1_2),
        "set_cluster_state, unschedule, commit",
    )


def check_set_cluster_state_forked_dra(make_store: StoreFactory, clone_on_fork: bool) -> None:
    """A forked DRA snapshot given to set_cluster_state: its current state is taken and no
    fork survives (set_cluster_state drops all layers), so a revert afterwards changes nothing
    (it used to revert the DRA layer alone: dra-node-2's slices came back beside a NodeInfo
    without them). The given snapshot itself keeps its fork."""
    s = new_dra_snapshot(make_store, (N1, N2), (), (P1_GPU, SHARED), (S1, S2))
    given = DraSnapshot.from_objects(
        [P1_GPU_ON_N1, SHARED], [S1, S2], [GPU_CLASS], clone_on_fork=clone_on_fork
    )
    given.fork()
    given.remove_node_resource_slices(N2.name)
    given.update_claim(SHARED_ON_N1_P1)
    s.set_cluster_state((N1, N2), (on_node(P1, N1),), given)
    want = DraState(P1_ON_N1_DRA.claims, {N1.name: (S1.name,)})
    expect_dra_state(s, P1_ON_N1_NODES, want, "set_cluster_state with a forked DRA snapshot")
    s.revert()
    expect_dra_state(s, P1_ON_N1_NODES, want, "set_cluster_state, revert (not forked: no-op)")
    expect_equal("the given snapshot's forks", given.depth, 1)


def check_clear(make_store: StoreFactory, clone_on_fork: bool) -> None:
    """clear: empty, unforked, an empty DRA snapshot of the same design."""
    s = new_dra_snapshot(make_store, *_P1_RUNNING_ARGS, clone_on_fork=clone_on_fork)
    s.fork()
    s.clear()
    expect_dra_state(s, {}, DraState(), "clear in a fork")
    expect_equal(
        "dra_snapshot.clone_on_fork after clear", s.dra_snapshot.clone_on_fork, clone_on_fork
    )
    s.revert()
    expect_dra_state(s, {}, DraState(), "clear, revert")


_P1_RUNNING_ARGS = (
    P1_RUNNING["nodes"],
    P1_RUNNING["pods"],
    P1_RUNNING["claims"],
    P1_RUNNING["slices"],
)
