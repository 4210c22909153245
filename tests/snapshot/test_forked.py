"""``with snapshot.forked():`` is the Cluster Autoscaler's ``WithForkedSnapshot``
(clustersnapshot.go): fork, run, commit when asked, revert otherwise (a panic included), for
every store and nested."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from schedsim.snapshot import (
    ClusterSnapshotStore,
    Forked,
    NodeInfo,
    PredicateSnapshot,
    SchedulingError,
)
from schedsim.testing import dump_state, make_node, make_pod, new_snapshot

N1, N2, N3 = make_node("n1", cpu="1"), make_node("n2", cpu="1"), make_node("n3")
BOUND = make_pod("bound", cpu="500m", node_name="n1")
SMALL = make_pod("small", cpu="100m")


class Boom(Exception):
    pass


def _snapshot(store: Callable[[], ClusterSnapshotStore]) -> PredicateSnapshot:
    s = new_snapshot(store)
    s.set_cluster_state([N1, N2], [BOUND])
    return s


def _change(s: PredicateSnapshot) -> None:
    """Remove a node, add one, place a pod: a change in every part of the store."""
    s.remove_node_info("n2")
    s.add_node_info(NodeInfo(N3))
    s.schedule_pod(SMALL, "n1")


def test_committed_block_keeps_its_changes(store: Callable[[], ClusterSnapshotStore]) -> None:
    s = _snapshot(store)
    with s.forked() as fork:
        _change(s)
        changed = dump_state(s)
        fork.commit()
        assert fork.committing
    assert dump_state(s) == changed
    s.revert()  # not forked any more: a no-op, the change stays
    assert dump_state(s) == changed
    assert sorted(changed) == ["n1", "n3"]
    assert changed["n1"].pods == ("default/bound", "default/small")


def test_block_not_committed_is_reverted(store: Callable[[], ClusterSnapshotStore]) -> None:
    s = _snapshot(store)
    before = dump_state(s)
    with s.forked() as fork:
        _change(s)
        assert dump_state(s) != before
        assert not fork.committing
    assert dump_state(s) == before


def test_exception_reverts_even_after_commit_was_asked(
    store: Callable[[], ClusterSnapshotStore],
) -> None:
    """CA's deferred cleanup also runs on a panic, and then never commits."""
    s = _snapshot(store)
    before = dump_state(s)
    with pytest.raises(Boom), s.forked() as fork:
        _change(s)
        fork.commit()
        raise Boom
    assert dump_state(s) == before
    with pytest.raises(SchedulingError), s.forked():  # a failing operation inside, too
        s.schedule_pod(make_pod("huge", cpu="64"), "n1")
    assert dump_state(s) == before


def test_nested_blocks(store: Callable[[], ClusterSnapshotStore]) -> None:
    """An inner commit lands in the outer layer, which the outer block still reverts; an inner
    revert leaves the outer block's own changes."""
    s = _snapshot(store)
    before = dump_state(s)
    with s.forked():
        s.remove_node_info("n2")
        outer = dump_state(s)
        with s.forked():  # reverted
            s.add_node_info(NodeInfo(N3))
        assert dump_state(s) == outer
        with s.forked() as inner:  # committed into the outer layer
            s.schedule_pod(SMALL, "n1")
            inner.commit()
        assert dump_state(s)["n1"].pods == ("default/bound", "default/small")
    assert dump_state(s) == before
    with s.forked() as outer_fork:
        with pytest.raises(Boom), s.forked() as inner:
            s.remove_node_info("n2")
            inner.commit()
            raise Boom
        assert dump_state(s) == before  # only the inner block was undone
        s.remove_node_info("n1")
        outer_fork.commit()
    assert sorted(dump_state(s)) == ["n2"]


def test_forked_works_on_a_store_too(store: Callable[[], ClusterSnapshotStore]) -> None:
    """`Forked` needs only fork/commit/revert: the stores have them."""
    st = store()
    st.store_node_info(NodeInfo(N1))
    with Forked(st):
        st.remove_node_info("n1")
        assert list(st.node_infos().list()) == []
    assert [ni.node.name for ni in st.node_infos().list() if ni.node] == ["n1"]
