"""The low-level store interface (``ClusterSnapshotStore``): mutates NodeInfos and PodInfos
directly, never runs plugins. Users go through `PredicateSnapshot`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from schedsim.snapshot.infos import NodeInfo, PodInfo

__all__ = ["ClusterSnapshotStore", "StoreNodeInfoLister", "StoreStorageInfoLister"]


class StoreNodeInfoLister(Protocol):
    """A store's NodeInfo lister: returns the stored `schedsim.snapshot.NodeInfo` objects."""

    def list(self) -> Sequence[NodeInfo]:
        """All stored NodeInfos, in insertion order; the same list object until the node set
        changes (no allocation per call)."""
        ...

    def have_pods_with_affinity_list(self) -> Sequence[NodeInfo]:
        """NodeInfos having a pod with pod (anti-)affinity."""
        ...

    def have_pods_with_required_anti_affinity_list(self) -> Sequence[NodeInfo]:
        """NodeInfos having a pod with required anti-affinity."""
        ...

    def get(self, node_name: str) -> NodeInfo:
        """The stored NodeInfo; raises NodeNotFoundError."""
        ...


class StoreStorageInfoLister(Protocol):
    """PVC usage."""

    def is_pvc_used_by_pods(self, key: str) -> bool:
        """Whether any stored pod uses the PVC ``namespace/name``."""
        ...


class ClusterSnapshotStore(Protocol):
    """What `BasicSnapshotStore` (and the delta store) implement.

    Fork pushes a layer, revert drops it, commit merges it into the one below; both are
    no-ops when not forked. Forks nest.
    """

    def node_infos(self) -> StoreNodeInfoLister:
        """The NodeInfo lister."""
        ...

    def storage_infos(self) -> StoreStorageInfoLister:
        """The PVC lister."""
        ...

    def store_node_info(self, node_info: NodeInfo) -> None:
        """Store the NodeInfo itself (no copy); raises NodeAlreadyExistsError."""
        ...

    def remove_node_info(self, node_name: str) -> None:
        """Remove a node and its pods; raises NodeNotFoundError."""
        ...

    def store_pod_info(self, pod_info: PodInfo, node_name: str) -> None:
        """Add a pod to a node; raises NodeNotFoundError."""
        ...

    def remove_pod_info(self, namespace: str, pod_name: str, node_name: str) -> None:
        """Remove a pod from a node; raises NodeNotFoundError or PodNotFoundError."""
        ...

    def fork(self) -> None:
        """Push a layer."""
        ...

    def revert(self) -> None:
        """Drop the top layer (no-op when not forked)."""
        ...

    def commit(self) -> None:
        """Merge the top layer into the one below (no-op when not forked)."""
        ...

    def clear(self) -> None:
        """Empty and unforked."""
        ...

    def changes_since(self, token: object) -> tuple[object, list[str] | None]:
        """The change journal: a new token and the names of the nodes written since
        ``token``, or None when unknown (no journal kept, or positions may have moved);
        see `DeltaSnapshotStore.changes_since`."""
        ...
