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
commit                           O(c) (+ O(n) once if it removes a node of the base)
get                              O(d)
list                             O(1), no allocation: the base layer's list, the parent's
                                 sequence for a layer without writes, else the layer's view
                                 (`_View`, made once per layer; reading it costs O(d + k)
                                 per index for k deletions in the layer, O(n) to iterate)
store/remove pod                 O(d) + O(pods on the node) for its first write in a layer
                                 (copy-on-write)
store node                       O(d)
remove node                      O(d + log k); in the base layer the list is rebuilt on the
                                 next list, O(n)
is_pvc_used_by_pods              O(d) (per-layer reference-count deltas)
have_pods_with_(required_anti_)  cached per layer; in a new layer built from the parent's
affinity_list                    list and the layer's changes: O(c d) when no change touches
                                 a member, else O(members + c d); never a scan of all nodes
                                 above the base
===============================  =========================================================
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Sequence
from typing import overload

from schedsim.snapshot.errors import NodeAlreadyExistsError, NodeNotFoundError, PodNotFoundError
from schedsim.snapshot.infos import NodeInfo, PodInfo

__all__ = ["DeltaSnapshotStore"]

_JOURNAL_LIMIT = 1 << 16

Changes = tuple[object, list[str] | None]
"""What `DeltaSnapshotStore.changes_since` returns: a token and the names written, or None."""


class _Layer:
    """Changes relative to ``parent`` (the base layer has no parent and only ``added``).

    The base layer keeps its node list as a real list (and a name -> position index, built
    on first use). A layer above it never copies the list: its view (`_View`) reads the
    parent's sequence through this layer's changes, so forking and writing cost what changed,
    not the cluster size.
    """

    __slots__ = (
        "added",
        "added_list",
        "affinity_cache",
        "anti_affinity_cache",
        "dead",
        "deleted",
        "index",
        "list_cache",
        "modified",
        "parent",
        "pvc_delta",
        "view",
    )

    def __init__(self, parent: _Layer | None) -> None:
        self.parent = parent
        self.added: dict[str, NodeInfo] = {}
        self.modified: dict[str, NodeInfo] = {}
        self.deleted: set[str] = set()
        self.pvc_delta: dict[str, int] = {}  # "ns/claim" -> change in the number of users
        # above the base: positions (in the parent's sequence) of the nodes deleted here
        self.dead: list[int] = []
        self.added_list: list[NodeInfo] | None = None  # added.values(), for the view
        self.view: _View | None = None
        # base layer: the node list and name -> position (None until built / after a drop)
        self.list_cache: list[NodeInfo] | None = None
        self.index: dict[str, int] | None = None
        # have_pods_with_(required_anti_)affinity_list: None until asked / after a change
        # that can alter membership; above the base built from the parent's list and this
        # layer's changes (`members`), so a fork never scans the cluster
        self.affinity_cache: _Members | None = None
        self.anti_affinity_cache: _Members | None = None

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

    def node_list(self) -> Sequence[NodeInfo]:
        """The visible nodes in order: the base list, or a view over the parent's sequence
        (the parent's own object when this layer changed nothing). Time: O(1) except the
        base layer's first call after a node removal, O(n)."""
        parent = self.parent
        if parent is None:
            cached = self.list_cache
            if cached is None:
                cached = self.list_cache = list(self.added.values())
            return cached
        if not (self.added or self.deleted or self.modified):
            return parent.node_list()
        view = self.view
        if view is None:
            view = self.view = _View(self)
        return view

    def tail(self) -> list[NodeInfo]:
        """The nodes added in this layer, in order (above the base)."""
        out = self.added_list
        if out is None:
            out = self.added_list = list(self.added.values())
        return out

    def position(self, name: str) -> int:
        """Where the visible node ``name`` sits in `node_list`. Time: O(d log k) (O(n) once
        for the base index)."""
        parent = self.parent
        if parent is None:
            index = self.index
            if index is None:
                index = self.index = {
                    ni.node.name: i  # type: ignore[union-attr]  # stored NodeInfos have a Node
                    for i, ni in enumerate(self.node_list())
                }
            return index[name]
        if name in self.added:
            return len(parent.node_list()) - len(self.dead) + self.tail().index(self.added[name])
        p = parent.position(name)
        return p - bisect.bisect_left(self.dead, p)

    def pvc_users(self, key: str) -> int:
        n = 0
        layer: _Layer | None = self
        while layer is not None:
            n += layer.pvc_delta.get(key, 0)
            layer = layer.parent
        return n

    # ------------------------------------------------------------------ cache upkeep

    def nodes_changed(self) -> None:
        """Forget what a change of the node set invalidates (the affinity lists; the base
        list and index after a removal are dropped by the caller)."""
        self.affinity_cache = None
        self.anti_affinity_cache = None

    def copied(self, name: str, old: NodeInfo, new: NodeInfo) -> None:
        """``new``, a copy of ``old`` with the same pods, now shows in its place: the affinity
        lists swap the object where they hold it (their membership is unchanged), so a
        copy-on-write costs O(nodes in the lists) (a C-level list copy), not a rebuild."""
        if old.pods_with_affinity and self.affinity_cache is not None:
            self.affinity_cache = self.affinity_cache.replaced(name, new)
        if old.pods_with_required_anti_affinity and self.anti_affinity_cache is not None:
            self.anti_affinity_cache = self.anti_affinity_cache.replaced(name, new)

    def pod_changed(self, ni: NodeInfo, had_affinity: bool, had_anti: bool) -> None:
        """A pod with affinity was added to or removed from ``ni`` (writable in this layer):
        a list stays valid unless the node's membership in it changed."""
        if had_affinity != bool(ni.pods_with_affinity):
            self.affinity_cache = None
        if had_anti != bool(ni.pods_with_required_anti_affinity):
            self.anti_affinity_cache = None

    def members(self, anti: bool) -> _Members:
        """The visible nodes with a pod with (anti-)affinity (``anti``: required
        anti-affinity), in `node_list` order, cached until a change can alter it.

        The base layer scans its nodes once. Above it the list comes from the parent's and
        this layer's changes: the parent's object itself when no change touches a member or
        adds one (O(changes)), a C-level copy with the copied NodeInfos swapped in when only
        members were copied, else one pass over the parent's members (O(members + changes)).
        Zero nodes scanned when no pod has affinity.
        """
        cached = self.anti_affinity_cache if anti else self.affinity_cache
        if cached is not None:
            return cached
        attr = "pods_with_required_anti_affinity" if anti else "pods_with_affinity"
        parent = self.parent
        if parent is None:
            cached = _Members([ni for ni in self.node_list() if getattr(ni, attr)])
        else:
            cached = self._members_above(parent.members(anti), parent, attr)
        if anti:
            self.anti_affinity_cache = cached
        else:
            self.affinity_cache = cached
        return cached

    def _members_above(self, below: _Members, parent: _Layer, attr: str) -> _Members:
        swapped: list[tuple[str, NodeInfo]] = []  # members still members, copied here
        gained: list[NodeInfo] = []  # non-members of the parent that are members here
        lost = False
        for name, ni in self.modified.items():
            old = parent.find(name)
            was = old is not None and bool(getattr(old, attr))
            now = bool(getattr(ni, attr))
            if was and now:
                swapped.append((name, ni))
            elif now:
                gained.append(ni)
            elif was:
                lost = True
        for name in self.deleted:
            old = parent.find(name)
            if old is not None and getattr(old, attr):
                lost = True
        tail = [ni for ni in self.tail() if getattr(ni, attr)] if self.added else []
        if not (lost or gained or tail):
            out = below
            for name, ni in swapped:
                out = out.replaced(name, ni)
            return out
        modified, deleted = self.modified, self.deleted
        nodes: list[NodeInfo] = []
        for ni in below.nodes:
            name = ni.node.name  # type: ignore[union-attr]  # stored NodeInfos have a Node
            if name in deleted:
                continue
            m = modified.get(name)
            if m is None:
                nodes.append(ni)
            elif getattr(m, attr):
                nodes.append(m)
        if gained:
            # in node order: by position in this layer's list (few nodes gain per layer)
            nodes += gained
            nodes.sort(key=lambda n: self.position(n.node.name))  # type: ignore[union-attr]
        nodes += tail
        return _Members(nodes)

    def add(self, name: str, ni: NodeInfo) -> None:
        """Make ``ni`` visible here, after every node below (appended)."""
        self.added[name] = ni
        if self.parent is None:
            if self.list_cache is not None:
                if self.index is not None:
                    self.index[name] = len(self.list_cache)
                self.list_cache.append(ni)
        else:
            self.added_list = None
        self.nodes_changed()

    def hide(self, name: str) -> None:
        """Hide the visible node ``name`` from this layer up."""
        if self.added.pop(name, None) is not None:
            if self.parent is None:
                self.list_cache = None
                self.index = None
            else:
                self.added_list = None
        else:
            assert self.parent is not None  # the base layer only has `added`
            self.modified.pop(name, None)
            bisect.insort(self.dead, self.parent.position(name))
            self.deleted.add(name)
        self.nodes_changed()

    def count_pvcs(self, pod_info: PodInfo, sign: int) -> None:
        for key in pod_info.pvc_keys:
            n = self.pvc_delta.get(key, 0) + sign
            if n:
                self.pvc_delta[key] = n
            else:
                del self.pvc_delta[key]


class _Members:
    """One layer's affinity list: the nodes, and name -> position in them (built on the
    first swap, shared by the copies that only swap objects, whose positions are the
    same)."""

    __slots__ = ("_index", "nodes")

    def __init__(self, nodes: list[NodeInfo], index: dict[str, int] | None = None) -> None:
        self.nodes = nodes
        self._index = index

    def replaced(self, name: str, ni: NodeInfo) -> _Members:
        """A copy holding ``ni`` where the node ``name`` is (a member). Time: O(members) in
        C (O(members) in Python once per list for its index)."""
        index = self._index
        if index is None:
            index = self._index = {
                n.node.name: i  # type: ignore[union-attr]  # stored NodeInfos have a Node
                for i, n in enumerate(self.nodes)
            }
        nodes = list(self.nodes)
        nodes[index[name]] = ni
        return _Members(nodes, index)


class _View(Sequence[NodeInfo]):
    """A layer's node list without copying it: the parent's sequence minus the nodes deleted
    in the layer, with its modified copies in place, then the nodes added in it.

    ``len`` O(1); indexing O(d + k) for k deletions in the layer; iteration O(n) with one
    generator per layer. Reflects later writes to the layer (it is valid until the next
    mutation, like every list a lister returns).
    """

    __slots__ = ("_layer",)

    def __init__(self, layer: _Layer) -> None:
        self._layer = layer

    def __len__(self) -> int:
        layer = self._layer
        assert layer.parent is not None
        return len(layer.parent.node_list()) - len(layer.dead) + len(layer.added)

    @overload
    def __getitem__(self, i: int) -> NodeInfo: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[NodeInfo]: ...

    def __getitem__(self, i: int | slice) -> NodeInfo | Sequence[NodeInfo]:
        if isinstance(i, slice):
            return list(self)[i]
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("node list index out of range")
        layer = self._layer
        assert layer.parent is not None
        below = layer.parent.node_list()
        dead = layer.dead
        visible = len(below) - len(dead)
        if i >= visible:
            return layer.tail()[i - visible]
        # the i-th surviving position: the fixpoint of p = i + (deleted positions <= p)
        p = i
        while True:
            q = i + bisect.bisect_right(dead, p)
            if q == p:
                break
            p = q
        ni = below[p]
        modified = layer.modified
        if modified:
            ni = modified.get(ni.node.name, ni)  # type: ignore[union-attr]
        return ni

    def __iter__(self) -> Iterator[NodeInfo]:
        layer = self._layer
        assert layer.parent is not None
        below = layer.parent.node_list()
        modified, dead = layer.modified, layer.dead
        if not modified and not dead:
            yield from below
        elif not dead:
            for ni in below:
                yield modified.get(ni.node.name, ni)  # type: ignore[union-attr]
        else:
            skip = set(dead)
            for p, ni in enumerate(below):
                if p in skip:
                    continue
                yield modified.get(ni.node.name, ni)  # type: ignore[union-attr]
        yield from layer.tail()


class _NodeLister:
    __slots__ = ("_store",)

    def __init__(self, store: DeltaSnapshotStore) -> None:
        self._store = store

    def list(self) -> Sequence[NodeInfo]:
        return self._store._top.node_list()

    def changes_since(self, token: object) -> Changes:
        """The store's `DeltaSnapshotStore.changes_since`."""
        return self._store.changes_since(token)

    def have_pods_with_affinity_list(self) -> Sequence[NodeInfo]:
        """Visible nodes with a pod with (anti-)affinity, in list order. Time: O(1) cached;
        in a fresh layer O(changes in it), or O(members + changes) when a change touches a
        member (`_Layer.members`)."""
        return self._store._top.members(False).nodes

    def have_pods_with_required_anti_affinity_list(self) -> Sequence[NodeInfo]:
        """Visible nodes with a pod with required anti-affinity, in list order; costs as
        `have_pods_with_affinity_list`."""
        return self._store._top.members(True).nodes

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
        # change journal (`changes_since`): names written since the epoch began
        self._epoch = 0
        self._journal: list[str] = []

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

    # ------------------------------------------------------------------ change journal

    def changes_since(self, token: object) -> tuple[object, list[str] | None]:
        """What changed in the visible NodeInfos since ``token`` (a value this method
        returned earlier; None for the first call).

        Returns:
            ``(token, names)``: the new token, and the names of the nodes whose visible
            NodeInfo (object or contents) may have changed since ``token``, in no particular
            order, possibly repeated; None when that is not known (the first call, a node was
            added or removed, the store was cleared, or the journal was restarted): the
            caller then compares everything, and positions in `node_infos().list()` may
            have moved. While names is not None, every node keeps its position.

        Time: O(1) + O(names returned). The journal records pod writes and the nodes a
        revert brings back; it restarts (one None for its readers) past 65,536 entries.
        """
        now = (self, self._epoch, len(self._journal))
        if (
            not isinstance(token, tuple)
            or len(token) != 3
            or token[0] is not self
            or token[1] != self._epoch
        ):
            return now, None
        return now, self._journal[token[2] :]

    def _written(self, name: str) -> None:
        journal = self._journal
        journal.append(name)
        if len(journal) > _JOURNAL_LIMIT:
            self._restart_journal()

    def _restart_journal(self) -> None:
        self._epoch += 1
        self._journal = []

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
        top.modified[name] = copy  # the layer's view shows it in place from now on
        top.copied(name, below, copy)
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
        top.add(name, node_info)
        for p in node_info.pods:
            top.count_pvcs(p, 1)
        self._restart_journal()

    def remove_node_info(self, node_name: str) -> None:
        """Hide a node (and its pods) from this layer up. Time: O(d).

        Raises:
            NodeNotFoundError: no such node is visible.
        """
        top = self._top
        ni = top.find(node_name)
        if ni is None:
            raise NodeNotFoundError(node_name)
        top.hide(node_name)
        for p in ni.pods:
            top.count_pvcs(p, -1)
        self._restart_journal()

    def store_pod_info(self, pod_info: PodInfo, node_name: str) -> None:
        """Add a pod to a node (copy-on-write). Raises NodeNotFoundError."""
        ni = self._writable(node_name)
        if not pod_info.has_affinity:  # the affinity lists cannot change: no look at them
            ni.add_pod_info(pod_info)
            self._written(node_name)
            if pod_info.pvc_keys:
                self._top.count_pvcs(pod_info, 1)
            return
        had = bool(ni.pods_with_affinity), bool(ni.pods_with_required_anti_affinity)
        ni.add_pod_info(pod_info)
        self._written(node_name)
        top = self._top
        top.count_pvcs(pod_info, 1)
        top.pod_changed(ni, *had)

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
        ni = self._writable(node_name)
        had = bool(ni.pods_with_affinity), bool(ni.pods_with_required_anti_affinity)
        ni.remove_pod(target.pod)
        self._written(node_name)
        top = self._top
        top.count_pvcs(target, -1)
        if target.has_affinity:
            top.pod_changed(ni, *had)

    # ------------------------------------------------------------------ layers

    def fork(self) -> None:
        """Push an empty layer. Time: O(1)."""
        self._top = _Layer(self._top)
        self._depth += 1

    def revert(self) -> None:
        """Drop the top layer (no-op when not forked). Time: O(1)."""
        top = self._top
        parent = top.parent
        if parent is not None:
            if top.added or top.deleted:
                self._restart_journal()  # the node set changes back
            else:
                for name in top.modified:  # the parent's NodeInfo shows again
                    self._written(name)
            self._top = parent
            self._depth -= 1

    def commit(self) -> None:
        """Fold the top layer into its parent (no-op when not forked). Time: O(changes),
        plus O(n) for the base list when the commit removes a node from the base."""
        top = self._top
        parent = top.parent
        if parent is None:
            return
        changed = bool(top.added or top.modified or top.deleted)
        # what the parent will show is what the top shows: its affinity lists, where the
        # parent had one (cheap to derive from it now; no rebuild over the cluster later)
        lists = [
            top.members(anti)
            if (top.anti_affinity_cache if anti else top.affinity_cache) is not None
            or (parent.anti_affinity_cache if anti else parent.affinity_cache) is not None
            else None
            for anti in (False, True)
        ]
        for name in top.deleted:
            parent.hide(name)  # it is visible in the parent: hidden in the top layer only
        for name, ni in top.modified.items():
            if name in parent.added:
                parent.added[name] = ni  # keeps its place
                if parent.parent is None:
                    if parent.list_cache is not None:
                        parent.list_cache[parent.position(name)] = ni
                else:
                    parent.added_list = None
            else:
                parent.modified[name] = ni
        for name, ni in top.added.items():
            parent.add(name, ni)
        for key, n in top.pvc_delta.items():
            m = parent.pvc_delta.get(key, 0) + n
            if m:
                parent.pvc_delta[key] = m
            else:
                parent.pvc_delta.pop(key, None)
        if changed:
            # the parent now shows what the top layer showed: its lists, when known, hold
            # the same nodes in the same order (no rebuild over the cluster per commit)
            parent.affinity_cache, parent.anti_affinity_cache = lists
        if top.added or top.deleted:
            self._restart_journal()  # the visible nodes are the same; their list is rebuilt
        self._top = parent
        self._depth -= 1

    def clear(self) -> None:
        """Empty and unforked."""
        self._base = _Layer(None)
        self._top = self._base
        self._depth = 0
        self._restart_journal()
