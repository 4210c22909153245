"""`CsiSnapshot`: the table of CA's ``simulator/csi/snapshot/snapshot_test.go`` (Get, AddCSINode,
AddCSINodes, RemoveCSINode, List, the lister, Fork/Commit/Revert), with schedsim's one
deliberate difference (a failing `add_csi_nodes` adds nothing)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from schedsim.api.storage import CSINode, CSINodeDriver
from schedsim.snapshot.csi import CsiNodeNotFoundError, CsiSnapshot, CsiSnapshotError


def _csi(name: str, count: int = 5) -> CSINode:
    return CSINode(name, drivers=(CSINodeDriver("ebs.csi.aws.com", name, count),))


N1, N2, N3 = _csi("n1"), _csi("n2"), _csi("n3")


def _names(s: CsiSnapshot) -> list[str]:
    return sorted(c.name for c in s.list())


def test_get() -> None:
    """Get: an existing CSINode is returned as stored; a missing one is ``csi nodes X not
    found`` (CA's message), None from `get_csi_node`."""
    s = CsiSnapshot([N1])
    assert s.get("n1") is N1
    assert s.get_csi_node("n1") is N1
    assert s.csi_nodes().get("n1") is N1
    with pytest.raises(CsiNodeNotFoundError, match=r"^csi nodes n2 not found$"):
        s.get("n2")
    assert s.get_csi_node("n2") is None
    with pytest.raises(LookupError):  # a lister miss is a LookupError, as for NodeInfos
        s.get("n2")


def test_new_snapshot_rejects_duplicates() -> None:
    """Two CSINodes named alike cannot make a snapshot."""
    with pytest.raises(CsiSnapshotError, match="csi node n1 given twice"):
        CsiSnapshot([N1, _csi("n1", 3)])


def test_add_csi_node() -> None:
    """AddCSINode: a new one is added; an existing name is ``csi node X already in
    snapshot`` and the stored one stays."""
    s = CsiSnapshot([N1])
    s.add_csi_node(N2)
    assert _names(s) == ["n1", "n2"]
    with pytest.raises(CsiSnapshotError, match=r"^csi node n1 already in snapshot$"):
        s.add_csi_node(_csi("n1", 9))
    assert s.get("n1") is N1


def test_add_csi_nodes_batch_and_duplicates() -> None:
    """AddCSINodes adds a batch; a duplicate in the batch, or of a stored one, is an error and
    (unlike CA, which keeps the ones before it) nothing is added."""
    s = CsiSnapshot()
    s.add_csi_nodes([N1, N2])
    assert _names(s) == ["n1", "n2"]
    with pytest.raises(CsiSnapshotError, match="csi node n3 already in snapshot"):
        s.add_csi_nodes([N3, _csi("n3", 1)])
    with pytest.raises(CsiSnapshotError, match="csi node n2 already in snapshot"):
        s.add_csi_nodes([N3, N2])
    assert _names(s) == ["n1", "n2"]


def test_remove_csi_node() -> None:
    """RemoveCSINode: an existing one goes; a missing one is a no-op."""
    s = CsiSnapshot([N1, N2])
    s.remove_csi_node("n1")
    assert _names(s) == ["n2"]
    s.remove_csi_node("n1")
    s.remove_csi_node("never")
    assert _names(s) == ["n2"]
    assert "n1" not in s and "n2" in s


def test_empty_snapshot() -> None:
    """NewEmptySnapshot: nothing listed, every get misses, fork/commit/revert are harmless."""
    s = CsiSnapshot()
    assert list(s.list()) == []
    assert s.list_csi_nodes() == []
    s.commit()
    s.revert()
    assert s.depth == 0


def _add(s: CsiSnapshot) -> None:
    s.add_csi_node(N3)


def _remove(s: CsiSnapshot) -> None:
    s.remove_csi_node("n1")


def _replace(s: CsiSnapshot) -> None:
    s.remove_csi_node("n2")
    s.add_csi_node(_csi("n2", 1))


@pytest.mark.parametrize(
    ("op", "after"),
    [(_add, ["n1", "n2", "n3"]), (_remove, ["n2"]), (_replace, ["n1", "n2"])],
    ids=["add", "remove", "replace"],
)
@pytest.mark.parametrize("listed_first", [False, True], ids=["cold", "listed"])
def test_fork_commit_revert(
    op: Callable[[CsiSnapshot], None], after: list[str], listed_first: bool
) -> None:
    """The CA fork matrix: a change in a fork is visible in it, gone after revert, kept after
    commit; nested forks revert one layer at a time; commit and revert are no-ops unforked.
    Run with and without the merged view built before the fork (it must follow reverts)."""
    s = CsiSnapshot([N1, N2])
    if listed_first:
        s.list()
    s.fork()
    op(s)
    assert _names(s) == after
    s.revert()
    assert _names(s) == ["n1", "n2"]
    assert s.get("n2") is N2
    # fork, fork, change, revert, revert
    s.fork()
    s.fork()
    op(s)
    s.revert()
    assert _names(s) == ["n1", "n2"]
    s.revert()
    # fork, change, commit: kept; a later revert is a no-op
    s.fork()
    op(s)
    s.commit()
    assert _names(s) == after
    s.revert()
    assert _names(s) == after
    assert s.depth == 0


def test_fork_fork_commit_revert() -> None:
    """A change committed from the inner fork into the outer one is reverted with it."""
    s = CsiSnapshot([N1])
    s.fork()
    s.fork()
    s.add_csi_node(N2)
    s.commit()
    assert _names(s) == ["n1", "n2"]
    s.revert()
    assert _names(s) == ["n1"]
    assert s.get_csi_node("n2") is None


def test_clear() -> None:
    """clear drops every CSINode and every layer."""
    s = CsiSnapshot([N1])
    s.fork()
    s.add_csi_node(N2)
    s.clear()
    assert (list(s.list()), s.depth) == ([], 0)
    s.revert()
    assert list(s.list()) == []
