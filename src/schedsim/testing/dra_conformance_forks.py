"""The fork modes every DRA scenario runs in (`DRA_FORK_MODES`, after CA ``TestForking``'s
sub-tests), building a DRA snapshot for a scenario (`new_dra_snapshot`) and running one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import attrs

from schedsim.api.core import Node, Pod
from schedsim.api.resource import ResourceClaim, ResourceSlice
from schedsim.snapshot import NodeInfo, PredicateSnapshot
from schedsim.snapshot.dra import DraSnapshot
from schedsim.testing.dra_conformance_objects import EMPTY, EXTRA, GPU_CLASS, S_EXTRA
from schedsim.testing.dra_conformance_operations import DraScenario
from schedsim.testing.dra_conformance_state import (
    DraState,
    check_dra_consistency,
    dump_dra_state,
    expect_dra_state,
)
from schedsim.testing.snapshot_conformance import NodeState, StoreFactory, new_snapshot
from schedsim.testing.snapshot_conformance_state import expect_equal

# --------------------------------------------------------------------------- fork modes


def _with_extra(sc: DraScenario) -> tuple[dict[str, NodeState], DraState]:
    nodes = {**sc.modified, EXTRA.name: EMPTY}
    slices = dict(sorted({**sc.modified_dra.slices, EXTRA.name: (S_EXTRA.name,)}.items()))
    return nodes, attrs.evolve(sc.modified_dra, slices=slices)


def _add_extra(s: PredicateSnapshot) -> None:
    s.add_node_info(NodeInfo(EXTRA, [S_EXTRA]))


def _initial(s: PredicateSnapshot, sc: DraScenario, step: str) -> None:
    expect_dra_state(s, sc.initial, sc.initial_dra, step)


def _modified(s: PredicateSnapshot, sc: DraScenario, step: str) -> None:
    expect_dra_state(s, sc.modified, sc.modified_dra, step)


def _mode_base(s: PredicateSnapshot, sc: DraScenario) -> None:
    sc.run_op(s)
    _modified(s, sc, "op")


def _mode_fork(s: PredicateSnapshot, sc: DraScenario) -> None:
    s.fork()
    sc.run_op(s)
    _modified(s, sc, "fork, op")


def _mode_fork_revert(s: PredicateSnapshot, sc: DraScenario) -> None:
    s.fork()
    sc.run_op(s)
    _modified(s, sc, "fork, op")
    s.revert()
    _initial(s, sc, "fork, op, revert")


def _mode_fork_commit(s: PredicateSnapshot, sc: DraScenario) -> None:
    s.fork()
    sc.run_op(s)
    s.commit()
    _modified(s, sc, "fork, op, commit")
    s.revert()
    _modified(s, sc, "fork, op, commit, revert (committed into the base: no-op)")


def _mode_fork_fork_revert_revert(s: PredicateSnapshot, sc: DraScenario) -> None:
    s.fork()
    sc.run_op(s)
    s.fork()
    _add_extra(s)
    nodes, dra = _with_extra(sc)
    expect_dra_state(s, nodes, dra, "fork, op, fork, add extra node with slices")
    s.revert()
    _modified(s, sc, "fork, op, fork, add extra node, revert")
    s.revert()
    _initial(s, sc, "fork, op, fork, add extra node, revert, revert")


def _mode_fork_fork_commit_revert(s: PredicateSnapshot, sc: DraScenario) -> None:
    s.fork()
    s.fork()
    sc.run_op(s)
    s.commit()
    _modified(s, sc, "fork, fork, op, commit")
    s.revert()
    _initial(s, sc, "fork, fork, op, commit, revert")


def _mode_fork_fork_revert_commit(s: PredicateSnapshot, sc: DraScenario) -> None:
    s.fork()
    sc.run_op(s)
    s.fork()
    _add_extra(s)
    s.revert()
    s.commit()
    _modified(s, sc, "fork, op, fork, add extra node, revert, commit")


def _mode_fork_fork_extra_commit_revert(s: PredicateSnapshot, sc: DraScenario) -> None:
    s.fork()
    sc.run_op(s)
    s.fork()
    _add_extra(s)
    s.commit()
    nodes, dra = _with_extra(sc)
    expect_dra_state(s, nodes, dra, "fork, op, fork, add extra node, commit")
    s.revert()
    _initial(s, sc, "fork, op, fork, add extra node, commit, revert")


def _mode_cache_fork_revert(s: PredicateSnapshot, sc: DraScenario) -> None:
    # read everything a store or patch set may cache, in the base and in the fork
    dump_dra_state(s)
    s.fork()
    check_dra_consistency(s)
    dump_dra_state(s)
    sc.run_op(s)
    _modified(s, sc, "cache, fork, cache, op")
    s.revert()
    _initial(s, sc, "cache, fork, cache, op, revert")


def _mode_unforked_commit_revert(s: PredicateSnapshot, sc: DraScenario) -> None:
    sc.run_op(s)
    s.commit()
    s.revert()
    _modified(s, sc, "op, commit, revert (not forked: no-ops)")


def _mode_deep_commit(s: PredicateSnapshot, sc: DraScenario) -> None:
    for _ in range(3):
        s.fork()
        dump_dra_state(s)
    sc.run_op(s)
    for i in range(3):
        s.commit()
        _modified(s, sc, f"fork x3, op, commit x{i + 1}")


@attrs.frozen
class DraForkMode:
    """How a scenario's op is wrapped in fork/commit/revert, checking the state after each
    step (CA ``TestForking``'s sub-tests; the inner fork adds a node with its own slice)."""

    name: str
    run: Callable[[PredicateSnapshot, DraScenario], None]


DRA_FORK_MODES: tuple[DraForkMode, ...] = (
    DraForkMode("base", _mode_base),
    DraForkMode("fork", _mode_fork),
    DraForkMode("fork & revert", _mode_fork_revert),
    DraForkMode("fork & commit", _mode_fork_commit),
    DraForkMode("fork & fork & revert & revert", _mode_fork_fork_revert_revert),
    DraForkMode("fork & fork & commit & revert", _mode_fork_fork_commit_revert),
    DraForkMode("fork & fork & revert & commit", _mode_fork_fork_revert_commit),
    DraForkMode("fork & fork(extra) & commit & revert", _mode_fork_fork_extra_commit_revert),
    DraForkMode("cache, fork, cache & revert", _mode_cache_fork_revert),
    DraForkMode("commit & revert when not forked", _mode_unforked_commit_revert),
    DraForkMode("fork x3 & commit x3", _mode_deep_commit),
)
"""Every DRA scenario runs in every mode."""


def new_dra_snapshot(
    make_store: StoreFactory,
    nodes: Iterable[Node],
    pods: Iterable[Pod],
    claims: Iterable[ResourceClaim],
    slices: Iterable[ResourceSlice],
    *,
    clone_on_fork: bool = False,
) -> PredicateSnapshot:
    """A default-profile `PredicateSnapshot` over ``make_store()`` set to the cluster
    (`GPU_CLASS` is its only device class); raises AssertionError if a pod is skipped."""
    s = new_snapshot(make_store)
    dra = DraSnapshot.from_objects(claims, slices, [GPU_CLASS], clone_on_fork=clone_on_fork)
    skipped = s.set_cluster_state(nodes, pods, dra)
    expect_equal("pods skipped by set_cluster_state", skipped, [])
    return s


def run_scenario(
    scenario: DraScenario, mode: DraForkMode, make_store: StoreFactory, clone_on_fork: bool
) -> None:
    """Run ``scenario`` in fork ``mode`` over stores from ``make_store``: build it, check the
    initial state, then let the mode run the op and check each step."""
    s = new_dra_snapshot(
        make_store,
        scenario.nodes,
        scenario.pods,
        scenario.claims,
        scenario.slices,
        clone_on_fork=clone_on_fork,
    )
    _initial(s, scenario, "initial state")
    mode.run(s, scenario)
