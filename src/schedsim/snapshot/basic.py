"""`BasicSnapshotStore`: the simple reference store. Fork clones every NodeInfo.

Mirrors CA ``store/basic.go``: "simple, reference implementation ... inefficient. But
hopefully bug-free". The delta store must behave exactly like it.

Complexity (n nodes, p pods):

=====================  ============
operation              time
=====================  ============
fork                   O(n + p)
revert, commit         O(1)
get                    O(1)
list                   O(1) (cached until the node set changes), O(n) after
store/remove pod       O(1) / O(pods on the node)
=====================  ============
"""

from __future__ import annotations

from collections.abc import Sequence

from schedsim.snapshot.errors import NodeAlreadyExistsError, NodeNotFoundError, PodNotFoundError
from schedsim.snapshot.infos import NodeInfo, PodInfo

__all__ = ["BasicSnapshotStore"]


class _Layer:
    __slots__ = ("affinity_cache", "anti_affinity_cache", "list_cache", "node_infos", "pvc_pods")

    def __init__(self) -> None:
        self.node_infos: dict[str, NodeInfo] = {}
        self.pvc_pods: dict[str, set[str]] = {}  # "ns/claim" -> {"ns/pod"}
        self.list_cache: list[NodeInfo] | None = None
        # the affinity lists, until the node set or a pod with affinity changes
        self.affinity_cache: list[NodeInfo] | None = None
        self.anti_affinity_cache: list[NodeInfo] | None = None

    def nodes_changed(self) -> None:
        self.list_cache = None
        self.affinity_cache = None
        self.anti_affinity_cache = None

    def affinity_changed(self, pod_info: PodInfo) -> None:
        if pod_info.has_affinity:
            self.affinity_cache = None
            self.anti_affinity_cache = None

    def clone(self) -> _Layer:
        c = _Layer()
        c.node_infos = {k: v.snapshot() for k, v in self.node_infos.items()}
        c.pvc_pods = {k: set(v) for k, v in self.pvc_pods.items()}
        return c

    def add_pvcs(self, pod_info: PodInfo) -> None:
        for key in pod_info.pvc_keys:
            self.pvc_pods.setdefault(key, set()).add(pod_info.pod.key)

    def remove_pvcs(self, pod_info: PodInfo) -> None:
        for key in pod_info.pvc_keys:
            users = self.pvc_pods.get(key)
            if users is not None:
                users.discard(pod_info.pod.key)
                if not users:
                    del self.pvc_pods[key]


class _NodeLister:
    __slots__ = ("_store",)

    def __init__(self, store: BasicSnapshotStore) -> None:
        self._store = store

    def list(self) -> Sequence[NodeInfo]:
        layer = self._store._top
        if layer.list_cache is None:
            layer.list_cache = list(layer.node_infos.values())
        return layer.list_cache

    def have_pods_with_affinity_list(self) -> Sequence[NodeInfo]:
        layer = self._store._top
        if layer.affinity_cache is None:
            layer.affinity_cache = [n for n in self.list() if n.pods_with_affinity]
        return layer.affinity_cache

    def have_pods_with_required_anti_affinity_list(self) -> Sequence[NodeInfo]:
        layer = self._store._top
        if layer.anti_affinity_cache is None:
            layer.anti_affinity_cache = [
                n for n in self.list() if n.pods_with_required_anti_affinity
            ]
        return layer.anti_affinity_cache

    def get(self, node_name: str) -> NodeInfo:
        try:
            return self._store._top.node_infos[node_name]
        except KeyError:
            raise NodeNotFoundError(node_name) from None


class _StorageLister:
    __slots__ = ("_store",)

    def __init__(self, store: BasicSnapshotStore) -> None:
        self._store = store

    def is_pvc_used_by_pods(self, key: str) -> bool:
        return bool(self._store._top.pvc_pods.get(key))


class BasicSnapshotStore:
    """A stack of full copies; the top one is current. Implements `ClusterSnapshotStore`.

    NodeInfos are listed in insertion order (CA iterates a Go map, i.e. randomly; a stable
    order makes runs reproducible).
    """

    def __init__(self) -> None:
        self._layers: list[_Layer] = [_Layer()]
        self._top = self._layers[0]
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
        return len(self._layers) - 1

    def store_node_info(self, node_info: NodeInfo) -> None:
        """Store ``node_info`` itself. Raises NodeAlreadyExistsError, ValueError (no node)."""
        node = node_info.node
        if node is None:
            raise ValueError("NodeInfo has no Node")
        top = self._top
        if node.name in top.node_infos:
            raise NodeAlreadyExistsError(node.name)
        top.node_infos[node.name] = node_info
        top.nodes_changed()
        for p in node_info.pods:
            top.add_pvcs(p)

    def remove_node_info(self, node_name: str) -> None:
        """Remove a node and its pods. Raises NodeNotFoundError."""
        top = self._top
        ni = top.node_infos.pop(node_name, None)
        if ni is None:
            raise NodeNotFoundError(node_name)
        top.nodes_changed()
        for p in ni.pods:
            top.remove_pvcs(p)

    def store_pod_info(self, pod_info: PodInfo, node_name: str) -> None:
        """Add a pod to the node's NodeInfo in place. Raises NodeNotFoundError."""
        top = self._top
        ni = top.node_infos.get(node_name)
        if ni is None:
            raise NodeNotFoundError(node_name)
        ni.add_pod_info(pod_info)
        top.add_pvcs(pod_info)
        top.affinity_changed(pod_info)

    def remove_pod_info(self, namespace: str, pod_name: str, node_name: str) -> None:
        """Remove a pod by namespace and name. Raises NodeNotFoundError, PodNotFoundError."""
        top = self._top
        ni = top.node_infos.get(node_name)
        if ni is None:
            raise NodeNotFoundError(node_name)
        for p in ni.pods:
            if p.pod.name == pod_name and p.pod.namespace == namespace:
                ni.remove_pod(p.pod)
                top.remove_pvcs(p)
                top.affinity_changed(p)
                return
        raise PodNotFoundError(namespace, pod_name, node_name)

    def changes_since(self, token: object) -> tuple[object, list[str] | None]:
        """Always ``(None, None)``: the reference store keeps no change journal, so callers
        compare every node (see `DeltaSnapshotStore.changes_since`)."""
        return None, None

    def fork(self) -> None:
        """Push a full copy of the current state. Time: O(nodes + pods)."""
        self._top = self._top.clone()
        self._layers.append(self._top)

    def revert(self) -> None:
        """Drop the top copy (no-op when not forked). Time: O(1)."""
        if len(self._layers) > 1:
            self._layers.pop()
            self._top = self._layers[-1]

    def commit(self) -> None:
        """Keep the top copy in place of its parent (no-op when not forked). Time: O(1)."""
        if len(self._layers) > 1:
            top = self._layers.pop()
            self._layers[-1] = top
            self._top = top

    def clear(self) -> None:
        """Empty and unforked."""
        self._layers = [_Layer()]
        self._top = self._layers[0]
