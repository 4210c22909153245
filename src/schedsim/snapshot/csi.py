"""`CsiSnapshot`: the CSINodes of a cluster snapshot.

Mirrors CA ``simulator/csi/snapshot/snapshot.go`` (``Snapshot``, autoscaler PR #8721) and
``csinode_lister.go``: CSINodes live in one `PatchSet` keyed by name (a CSINode is named after
its node) and fork, commit and revert with the rest of the snapshot. The scheduler's
NodeVolumeLimits plugin reads them through the snapshot (kube-scheduler's ``CSIManager``),
so CSINodes of nodes added in a fork (scale-up templates) are seen, and gone after a revert.

Differences from CA, both deliberate:

* `add_csi_nodes` checks every CSINode before adding any: a failing call changes nothing
  (CA adds the ones before the duplicate).
* CSINodes are immutable (`attrs.frozen`), so values shared between layers are never written.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from schedsim.api.storage import CSINode
from schedsim.snapshot.patchset import PatchSet

__all__ = ["CsiNodeNotFoundError", "CsiSnapshot", "CsiSnapshotError"]


class CsiSnapshotError(ValueError):
    """A `CsiSnapshot` operation failed (CA returns an ``error``); the snapshot is unchanged."""


class CsiNodeNotFoundError(CsiSnapshotError, LookupError):
    """No CSINode with the given name (CA ``csi nodes X not found``)."""


class CsiSnapshot:
    """CSINodes by name in a forkable patch set (CA ``csisnapshot.Snapshot``).

    It is also its own CSINode lister (CA ``SnapshotCSINodeLister``: `list`, `get`) and the
    ``SharedCsiManager`` plugins read (`get_csi_node`, `list_csi_nodes`).

    Complexity (C CSINodes, N patches = forks + 1): fork O(1); commit and revert O(changes in
    the top layer); get O(1) cached, O(N) otherwise; list O(C) (O(N x changes) to build the
    merged view the first time).
    """

    __slots__ = ("_csi_nodes",)

    def __init__(self, csi_nodes: Iterable[CSINode] = ()) -> None:
        """Creates a snapshot holding ``csi_nodes`` (CA ``NewSnapshot``; no argument:
        ``NewEmptySnapshot``).

        Raises:
            CsiSnapshotError: two CSINodes share a name.

        Time: O(C).
        """
        base: dict[str, CSINode] = {}
        for csi_node in csi_nodes:
            if csi_node.name in base:
                raise CsiSnapshotError(f"csi node {csi_node.name} given twice")
            base[csi_node.name] = csi_node
        self._csi_nodes: PatchSet[str, CSINode] = PatchSet(base)

    # ----------------------------------------------------------------- fork / commit / revert

    @property
    def depth(self) -> int:
        """Forks not yet committed or reverted."""
        return self._csi_nodes.depth

    def fork(self) -> None:
        """Starts a layer of changes that `revert` can undo (CA ``Fork``). Time: O(1)."""
        self._csi_nodes.fork()

    def commit(self) -> None:
        """Merges the top layer into the one below; no-op when not forked (CA ``Commit``).

        Time: O(changes in the top layer).
        """
        self._csi_nodes.commit()

    def revert(self) -> None:
        """Drops the top layer and its changes; no-op when not forked (CA ``Revert``).

        Time: O(changes in the top layer).
        """
        self._csi_nodes.revert()

    def clear(self) -> None:
        """Removes every CSINode and all layers. Time: O(1) (O(C) once listed)."""
        self._csi_nodes.clear()

    # ----------------------------------------------------------------- reads

    def get_csi_node(self, name: str) -> CSINode | None:
        """The CSINode ``name``, or None. Time: O(1) cached, O(N) otherwise."""
        return self._csi_nodes.find_value(name)

    def get(self, name: str) -> CSINode:
        """The CSINode ``name`` (CA ``Get`` / lister ``Get``).

        Raises:
            CsiNodeNotFoundError: ``csi nodes <name> not found``.

        Time: O(1) cached, O(N) otherwise.
        """
        csi_node = self._csi_nodes.find_value(name)
        if csi_node is None:
            raise CsiNodeNotFoundError(f"csi nodes {name} not found")
        return csi_node

    def list(self) -> Sequence[CSINode]:
        """Every CSINode (CA lister ``List``), in no particular order. Time: O(C)."""
        return list(self._csi_nodes.as_map().values())

    def list_csi_nodes(self) -> Sequence[CSINode]:
        """Same as `list` (the ``SharedCsiManager`` spelling)."""
        return self.list()

    def csi_nodes(self) -> CsiSnapshot:
        """The CSINode lister (CA ``CSINodes()``): this snapshot itself."""
        return self

    def __contains__(self, name: object) -> bool:
        """Whether a CSINode named ``name`` exists."""
        return isinstance(name, str) and name in self._csi_nodes

    # ----------------------------------------------------------------- writes

    def add_csi_node(self, csi_node: CSINode) -> None:
        """Adds ``csi_node`` (CA ``AddCSINode``).

        Raises:
            CsiSnapshotError: ``csi node <name> already in snapshot``.

        Time: O(1) cached, O(N) otherwise.
        """
        if csi_node.name in self._csi_nodes:
            raise CsiSnapshotError(f"csi node {csi_node.name} already in snapshot")
        self._csi_nodes.set_current(csi_node.name, csi_node)

    def add_csi_nodes(self, csi_nodes: Iterable[CSINode]) -> None:
        """Adds every CSINode of ``csi_nodes`` (CA ``AddCSINodes``).

        Raises:
            CsiSnapshotError: one of them is already in the snapshot, or two share a name;
                nothing is added (CA keeps the ones added before the duplicate).

        Time: O(len(csi_nodes)) lookups.
        """
        new: dict[str, CSINode] = {}
        for csi_node in csi_nodes:
            if csi_node.name in new or csi_node.name in self._csi_nodes:
                raise CsiSnapshotError(f"csi node {csi_node.name} already in snapshot")
            new[csi_node.name] = csi_node
        for name, csi_node in new.items():
            self._csi_nodes.set_current(name, csi_node)

    def remove_csi_node(self, name: str) -> None:
        """Removes the CSINode ``name``; no-op when absent (CA ``RemoveCSINode``).

        Time: O(1) cached, O(N) otherwise.
        """
        if name in self._csi_nodes:
            self._csi_nodes.delete_current(name)
