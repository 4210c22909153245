"""`DeltaSnapshotStore`: layered store where fork and revert cost nothing.

Mirrors CA ``store/delta.go``. Each fork pushes a layer recording what changed relative to
the layer below: NodeInfos *added* in it, NodeInfos *modified* in it (copied on their first
write in the layer, through `NodeInfo.snapshot()`) and names *deleted* in it. Reads walk the
layers from the top; writes touch the top layer only. It behaves exactly like
`BasicSnapshotStore` (the conformance suite and a differential property test check it),
including node order: base order, modified nodes in place, added nodes appended.

Complexity (n nodes, d fork depth, c changes in the top layer):

===============================  =========================================================
operation                        time
===============================  =========================================================
fork                             O(1)
revert                           O(1)
commit                           O(c)
get                              O(d)
list (cached, unchanged layer)   O(1), no allocation
list (first call after a write)  O(1) for a fork without writes (shares the parent's list);
                                 O(n) to build the layer's own list once, then O(1) updates
                                 for later writes in that layer (the first copy-on-write after
                                 the build also indexes the list once, O(n))
store/remove pod                 O(d) + O(pods on the node) for its first write in a layer
                                 (copy-on-write)
store node                       O(d) (O(1) append to an owned cached list)
remove node                      O(d); the layer's cached list is dropped
is_pvc_used_by_pods              O(d) (per-layer reference-count deltas)
===============================  =========================================================
"""

from __future__ import annotations

from collections.abc import Sequence

from schedsim.snapshot.errors import NodeAlreadyExistsError, NodeNotFoundError, PodNotFoundError
from schedsim.snapshot.infos import NodeInfo, PodInfo

__all__ = ["DeltaSnapshotStore"]


class _Layer:
    """Changes relative to ``parent`` (the base layer has no parent and only ``added``)."""

    __slots__ = (
        "added",
        "affinity_cache",
        "anti_affinity_cache",
        "deleted",
        "index",
        "list_cache",
        "list_owned",
        "modified",
        "parent",
        "pvc_delta",
    )

    def __init__(self, parent: _Layer | None) -> None:
        self.parent = parent
        self.added: dict[str, NodeInfo] = {}
        self.modified: dict[str, NodeInfo] = {}
        self.deleted: set[str] = set()
        self.pvc_delta: dict[str, int] = {}  # "ns/claim" -> change in the number of users
        # Node list cache: shared with the parent until this layer writes (list_owned False).
        self.list_cache: list[NodeInfo] | None = None
        self.index: dict[str, int] | None = None  # name -> position in an owned list, lazily
        self.list_owned = False
        self.affinity_cache: list[NodeInfo] | None = None
        self.anti_affinity_cache: list[NodeInfo] | None = None

    # ------------------------------------------------------------------ reads

    def find(self, name: str) -> NodeInfo | None:
        """The visible NodeInfo called ``name``, or None."""
        layer: _Layer | None = self
        while layer is not None:
            ni = layer.added.get(name)
            if ni is not None:
                return ni
            if name in layer.deleted:
                return None
            ni = layer.modified.get(name)
            if ni is not None:
                return ni
            layer = layer.parent
        return None

    def node_list(self) -> list[NodeInfo]:
        cached = self.list_cache
        if cached is not None:
            return cached
        parent = self.parent
        if parent is None:
            built = list(self.added.values())
            self._own(built)
            return built
        base = parent.node_list()
        if not (self.added or self.modified or self.deleted):
            self.list_cache = base  # nothing changed here: share the parent's list
            self.list_owned = False
            return base
        deleted, modified = self.deleted, self.modified
        if deleted or modified:
            built = []
            for ni in base:
                name = ni.node.name  # type: ignore[union-attr]  # stored NodeInfos have a Node
                if name in deleted:
                    continue
                built.append(modified.get(name, ni))
        else:
            built = list(base)
        built.extend(self.added.values())
        self._own(built)
        return built

    def _own(self, built: list[NodeInfo]) -> None:
        self.list_cache = built
        self.index = None  # built on the first copy-on-write that needs it
        self.list_owned = True

    def pvc_users(self, key: str) -> int:
        n = 0
        layer: _Layer | None = self
        while layer is not None:
            n += layer.pvc_delta.get(key, 0)
            layer = layer.parent
        return n

    # ------------------------------------------------------------------ cache upkeep

    def drop_list(self) -> None:
        self.list_cache = None
        self.index = None
        self.list_owned = False
        self.affinity_cache = None
        self.anti_affinity_cache = None

    def replace_in_list(self, name: str, ni: NodeInfo) -> None:
        """A NodeInfo was copied into this layer: swap it into the cached list."""
        cached = self.list_cache
        if cached is None:
            return
        if not self.list_owned:
            self.drop_list()
            return
        if self.index is None:
            self.index = {n.node.name: i for i, n in enumerate(cached)}  # type: ignore[union-attr]
        cached[self.index[name]] = ni
        self.affinity_cache = None
        self.anti_affinity_cache = None

    def append_to_list(self, ni: NodeInfo) -> None:
        cached = self.list_cache
        if cached is None:
            return
        if not self.list_owned:
            self.drop_list()
            return
        if self.index is not None:
            self.index[ni.node.name] = len(cached)  # type: ignore[union-attr]
        cached.append(ni)
        self.affinity_cache = None
        self.anti_affinity_cache = None

    def count_pvcs(self, pod_info: PodInfo, sign: int) -> None:
        for key in pod_info.pvc_keys:
            n = self.pvc_delta.get(key, 0) + sign
            if n:
                self.pvc_delta[key] = n
            else:
                del self.pvc_delta[key]


class _NodeLister:
    __slots__ = ("_store",)

    def __init__(self, store: DeltaSnapshotStore) -> None:
        self._store = store

    def list(self) -> Sequence[NodeInfo]:
        return self._store._top.node_list()

    def have_pods_with_affinity_list(self) -> Sequence[NodeInfo]:
        top = self._store._top
        if top.affinity_cache is None:
            top.affinity_cache = [n for n in top.node_list() if n.pods_with_affinity]
        return top.affinity_cache

    def have_pods_with_required_anti_affinity_list(self) -> Sequence[NodeInfo]:
        top = self._store._top
        if top.anti_affinity_cache is None:
            top.anti_affinity_cache = [
                n for n in top.node_list() if n.pods_with_required_anti_affinity
            ]
        return top.anti_affinity_cache

    def get(self, node_name: str) -> NodeInfo:
        top = self._store._top
        ni = top.added.get(node_name)  # fast path: every node of an unforked snapshot
        if ni is None:
            ni = top.find(node_name)
        if ni is None:
            raise NodeNotFoundError(node_name)
        return ni


class _StorageLister:
    __slots__ = ("_store",)

    def __init__(self, store: DeltaSnapshotStore) -> None:
        self._store = store

    def is_pvc_used_by_pods(self, key: str) -> bool:
        return self._store._top.pvc_users(key) > 0


class DeltaSnapshotStore:
    """Layered store; implements `ClusterSnapshotStore` with O(1) fork and revert.

    Every failing call raises before changing anything.
    """

    def __init__(self) -> None:
        self._base = _Layer(None)
        self._top = self._base
        self._depth = 0
        self._node_lister = _NodeLister(self)
        self._storage_lister = _StorageLister(self)

    def node_infos(self) -> _NodeLister:
        """The NodeInfo lister (the same object every call)."""
        return self._node_lister

    def storage_infos(self) -> _StorageLister:
        """The PVC lister."""
        return self._storage_lister

    @property
    def depth(self) -> int:
        """Number of forks on top of the base state."""
        return self._depth

    # ------------------------------------------------------------------ writes

    def _writable(self, name: str) -> NodeInfo:
        """The NodeInfo to mutate in the top layer, copying it there on its first write.
        Time: O(d), plus O(pods on the node) for the copy."""
        top = self._top
        ni = top.added.get(name)
        if ni is not None:
            return ni
        if name not in top.deleted:
            ni = top.modified.get(name)
            if ni is not None:
                return ni
        below = None if top.parent is None or name in top.deleted else top.parent.find(name)
        if below is None:
            raise NodeNotFoundError(name)
        copy = below.snapshot()
        top.modified[name] = copy
        top.replace_in_list(name, copy)
        return copy

    def store_node_info(self, node_info: NodeInfo) -> None:
        """Store ``node_info`` itself in the top layer. Time: O(d).

        Raises:
            NodeAlreadyExistsError: a node with that name is visible.
            ValueError: the NodeInfo has no Node.
        """
        node = node_info.node
        if node is None:
            raise ValueError("NodeInfo has no Node")
        top = self._top
        name = node.name
        if (name in top.added) if top.parent is None else (top.find(name) is not None):
            raise NodeAlreadyExistsError(name)
        top.added[name] = node_info
        top.append_to_list(node_info)
        for p in node_info.pods:
            top.count_pvcs(p, 1)

    def remove_node_info(self, node_name: str) -> None:
        """Hide a node (and its pods) from this layer up. Time: O(d).

        Raises:
            NodeNotFoundError: no such node is visible.
        """
        top = self._top
        ni = top.find(node_name)
        if ni is None:
            raise NodeNotFoundError(node_name)
        if top.added.pop(node_name, None) is None:
            top.modified.pop(node_name, None)
            if top.parent is not None:
                top.deleted.add(node_name)
        for p in ni.pods:
            top.count_pvcs(p, -1)
        top.drop_list()

    def store_pod_info(self, pod_info: PodInfo, node_name: str) -> None:
        """Add a pod to a node (copy-on-write). Raises NodeNotFoundError."""
        ni = self._writable(node_name)
        ni.add_pod_info(pod_info)
        top = self._top
        top.count_pvcs(pod_info, 1)
        if pod_info.has_affinity:
            top.affinity_cache = None
            top.anti_affinity_cache = None

    def remove_pod_info(self, namespace: str, pod_name: str, node_name: str) -> None:
        """Remove a pod by namespace and name (copy-on-write).

        Raises:
            NodeNotFoundError, PodNotFoundError (before anything is copied).
        """
        visible = self._top.find(node_name)
        if visible is None:
            raise NodeNotFoundError(node_name)
        target = next(
            (p for p in visible.pods if p.pod.name == pod_name and p.pod.namespace == namespace),
            None,
        )
        if target is None:
            raise PodNotFoundError(namespace, pod_name, node_name)
        self._writable(node_name).remove_pod(target.pod)
        top = self._top
        top.count_pvcs(target, -1)
        if target.has_affinity:
            top.affinity_cache = None
            top.anti_affinity_cache = None

    # ------------------------------------------------------------------ layers

    def fork(self) -> None:
        """Push an empty layer. Time: O(1)."""
        self._top = _Layer(self._top)
        self._depth += 1

    def revert(self) -> None:
        """Drop the top layer (no-op when not forked). Time: O(1)."""
        parent = self._top.parent
        if parent is not None:
            self._top = parent
            self._depth -= 1

    def commit(self) -> None:
        """Fold the top layer into its parent (no-op when not forked). Time: O(changes)."""
        top = self._top
        parent = top.parent
        if parent is None:
            return
        for name in top.deleted:
            if parent.added.pop(name, None) is None:
                parent.modified.pop(name, None)
                if parent.parent is not None:
                    parent.deleted.add(name)
        for name, ni in top.modified.items():
            if name in parent.added or parent.parent is None:
                parent.added[name] = ni  # keeps its place
            else:
                parent.modified[name] = ni
        for name, ni in top.added.items():
            parent.added[name] = ni
        for key, n in top.pvc_delta.items():
            m = parent.pvc_delta.get(key, 0) + n
            if m:
                parent.pvc_delta[key] = m
            else:
                parent.pvc_delta.pop(key, None)
        if top.list_owned:  # the top layer's view is now the parent's view
            parent.list_cache = top.list_cache
            parent.index = top.index
            parent.list_owned = True
            parent.affinity_cache = top.affinity_cache
            parent.anti_affinity_cache = top.anti_affinity_cache
        elif top.added or top.modified or top.deleted:
            parent.drop_list()
        self._top = parent
        self._depth -= 1

    def clear(self) -> None:
        """Empty and unforked."""
        self._base = _Layer(None)
        self._top = self._base
        self._depth = 0
