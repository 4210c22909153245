"""The fork modes of the store conformance kit: each modification scenario runs in the base
state and through every fork/commit/revert combination CA's ``TestForking`` uses, plus
schedsim's own (caches primed before a fork, deep commits, commit/revert when not forked)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import attrs

from schedsim.snapshot import (
    NodeInfo,
    PredicateSnapshot,
)
from schedsim.snapshot.csi import CsiSnapshot
from schedsim.testing.snapshot_conformance_objects import new_snapshot
from schedsim.testing.snapshot_conformance_scenarios import EXTRA_NODE, ModificationScenario
from schedsim.testing.snapshot_conformance_state import (
    EMPTY,
    NodeState,
    StoreFactory,
    expect_equal,
    expect_state,
    prime_caches,
)

# --------------------------------------------------------------------------- fork modes


def with_extra(state: Mapping[str, NodeState]) -> dict[str, NodeState]:
    return {**state, "extra-node": EMPTY}


def _mode_base(s: PredicateSnapshot, sc: ModificationScenario) -> None:
    sc.run_op(s)
    expect_state(s, sc.modified, "after op")


def _mode_fork(s: PredicateSnapshot, sc: ModificationScenario) -> None:
    s.fork()
    sc.run_op(s)
    expect_state(s, sc.modified, "fork, op")


def _mode_fork_revert(s: PredicateSnapshot, sc: ModificationScenario) -> None:
    s.fork()
    sc.run_op(s)
    expect_state(s, sc.modified, "fork, op")
    s.revert()
    expect_state(s, sc.initial, "fork, op, revert")


def _mode_fork_fork_revert_revert(s: PredicateSnapshot, sc: ModificationScenario) -> None:
    s.fork()
    sc.run_op(s)
    s.fork()
    s.add_node_info(NodeInfo(EXTRA_NODE))
    expect_state(s, with_extra(sc.modified), "fork, op, fork, add extra node")
    s.revert()
    expect_state(s, sc.modified, "fork, op, fork, add extra node, revert")
    s.revert()
    expect_state(s, sc.initial, "fork, op, fork, add extra node, revert, revert")


def _mode_fork_commit(s: PredicateSnapshot, sc: ModificationScenario) -> None:
    s.fork()
    sc.run_op(s)
    s.commit()
    expect_state(s, sc.modified, "fork, op, commit")


def _mode_fork_fork_commit_revert(s: PredicateSnapshot, sc: ModificationScenario) -> None:
    s.fork()
    s.fork()
    sc.run_op(s)
    s.commit()
    expect_state(s, sc.modified, "fork, fork, op, commit")
    s.revert()
    expect_state(s, sc.initial, "fork, fork, op, commit, revert")


def _mode_fork_fork_revert_commit(s: PredicateSnapshot, sc: ModificationScenario) -> None:
    s.fork()
    sc.run_op(s)
    s.fork()
    s.add_node_info(NodeInfo(EXTRA_NODE))
    s.revert()
    s.commit()
    expect_state(s, sc.modified, "fork, op, fork, add extra node, revert, commit")


def _mode_cache_fork_commit(s: PredicateSnapshot, sc: ModificationScenario) -> None:
    prime_caches(s)
    s.fork()
    sc.run_op(s)
    s.commit()
    expect_state(s, sc.modified, "cache, fork, op, commit")


def _mode_cache_fork_revert(s: PredicateSnapshot, sc: ModificationScenario) -> None:
    prime_caches(s)
    s.fork()
    prime_caches(s)
    sc.run_op(s)
    expect_state(s, sc.modified, "cache, fork, cache, op")
    s.revert()
    expect_state(s, sc.initial, "cache, fork, cache, op, revert")


def _mode_unforked_commit_revert(s: PredicateSnapshot, sc: ModificationScenario) -> None:
    sc.run_op(s)
    s.commit()
    expect_state(s, sc.modified, "op, commit (not forked: no-op)")
    s.revert()
    expect_state(s, sc.modified, "op, commit, revert (not forked: no-op)")


def _mode_fork_commit_revert(s: PredicateSnapshot, sc: ModificationScenario) -> None:
    s.fork()
    sc.run_op(s)
    s.commit()
    s.revert()
    expect_state(s, sc.modified, "fork, op, commit, revert (committed into the base: no-op)")


def _mode_fork_fork_extra_commit_revert(s: PredicateSnapshot, sc: ModificationScenario) -> None:
    s.fork()
    sc.run_op(s)
    s.fork()
    s.add_node_info(NodeInfo(EXTRA_NODE))
    s.commit()
    expect_state(s, with_extra(sc.modified), "fork, op, fork, add extra node, commit")
    s.revert()
    expect_state(s, sc.initial, "fork, op, fork, add extra node, commit, revert")


def _mode_deep_commit(s: PredicateSnapshot, sc: ModificationScenario) -> None:
    for _ in range(3):
        s.fork()
        prime_caches(s)
    sc.run_op(s)
    for i in range(3):
        s.commit()
        expect_state(s, sc.modified, f"fork x3, op, commit x{i + 1}")
    s.revert()
    expect_state(s, sc.modified, "fork x3, op, commit x3, revert (no-op)")


@attrs.frozen
class ForkMode:
    """How a scenario's op is wrapped in fork/commit/revert and which state is expected
    after each step (CA ``TestForking``'s sub-tests, plus ``extra:`` ones)."""

    name: str
    run: Callable[[PredicateSnapshot, ModificationScenario], None]


FORK_MODES: tuple[ForkMode, ...] = (
    ForkMode("base", _mode_base),
    ForkMode("fork", _mode_fork),
    ForkMode("fork & revert", _mode_fork_revert),
    ForkMode("fork & fork & revert & revert", _mode_fork_fork_revert_revert),
    ForkMode("fork & commit", _mode_fork_commit),
    ForkMode("fork & fork & commit & revert", _mode_fork_fork_commit_revert),
    ForkMode("fork & fork & revert & commit", _mode_fork_fork_revert_commit),
    ForkMode("cache, fork & commit", _mode_cache_fork_commit),
    ForkMode("extra: cache, fork, cache & revert", _mode_cache_fork_revert),
    ForkMode("extra: commit & revert when not forked", _mode_unforked_commit_revert),
    ForkMode("extra: fork & commit & revert", _mode_fork_commit_revert),
    ForkMode("extra: fork & fork & commit & revert", _mode_fork_fork_extra_commit_revert),
    ForkMode("extra: fork x3 & commit x3", _mode_deep_commit),
)
"""Every scenario runs in every mode."""


def run_modification(
    scenario: ModificationScenario, mode: ForkMode, make_store: StoreFactory
) -> None:
    s = new_snapshot(make_store)
    skipped = s.set_cluster_state(
        scenario.nodes, scenario.pods, csi_snapshot=CsiSnapshot(scenario.csi_nodes)
    )
    expect_equal("pods skipped by set_cluster_state", skipped, [])
    expect_state(s, scenario.initial, "initial state")
    mode.run(s, scenario)
