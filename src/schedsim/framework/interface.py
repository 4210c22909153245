"""What plugins see: the NodeInfo / PodInfo / lister protocols.

Modelled on k8s.io/kube-scheduler/framework (``NodeInfo``, ``PodInfo``, ``NodeInfoLister``,
``StorageInfoLister``, ``SharedLister``), spelled the Python way: read-only members are
properties, mutations are methods.

These are Protocols: implementations don't inherit from them. ``schedsim.snapshot.NodeInfo``
and ``schedsim.snapshot.PodInfo`` satisfy them directly (checked by mypy in tests/typing), so
the snapshot hands its stored objects to plugins without wrapping.

Everything a getter returns is read-only and valid until the next mutation of the snapshot;
plugins must never mutate it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from schedsim.api.core import Node, Pod
from schedsim.framework.resource import PodResource, Resource
from schedsim.framework.types import (
    AffinityTerm,
    HostPortInfo,
    ImageStateSummary,
    WeightedAffinityTerm,
)

__all__ = ["NodeInfo", "NodeInfoLister", "PodInfo", "SharedLister", "StorageInfoLister"]


class PodInfo(Protocol):
    """A pod plus what the scheduler precomputes about it (``framework.PodInfo``)."""

    @property
    def pod(self) -> Pod:
        """The pod (GetPod)."""
        ...

    @property
    def required_affinity_terms(self) -> Sequence[AffinityTerm]:
        """Required pod affinity terms (GetRequiredAffinityTerms)."""
        ...

    @property
    def required_anti_affinity_terms(self) -> Sequence[AffinityTerm]:
        """Required pod anti-affinity terms."""
        ...

    @property
    def preferred_affinity_terms(self) -> Sequence[WeightedAffinityTerm]:
        """Preferred pod affinity terms."""
        ...

    @property
    def preferred_anti_affinity_terms(self) -> Sequence[WeightedAffinityTerm]:
        """Preferred pod anti-affinity terms."""
        ...

    def calculate_resource(self) -> PodResource:
        """The pod's requests in scheduler units, cached (CalculateResource)."""
        ...


class NodeInfo(Protocol):
    """A node plus the pods on it and their aggregate usage (``framework.NodeInfo``)."""

    @property
    def node(self) -> Node | None:
        """The Node (None for a NodeInfo that only carries pods)."""
        ...

    @property
    def pods(self) -> Sequence[PodInfo]:
        """Pods assigned to the node (GetPods)."""
        ...

    @property
    def pods_with_affinity(self) -> Sequence[PodInfo]:
        """Pods with any pod (anti-)affinity term."""
        ...

    @property
    def pods_with_required_anti_affinity(self) -> Sequence[PodInfo]:
        """Pods with required anti-affinity terms."""
        ...

    @property
    def used_ports(self) -> HostPortInfo:
        """Host ports in use."""
        ...

    @property
    def requested(self) -> Resource:
        """Sum of the pods' requests (milli-CPU, bytes, counts)."""
        ...

    @property
    def non_zero_requested(self) -> Resource:
        """Sum of requests with 100m / 200Mi assumed for unset cpu / memory (scoring)."""
        ...

    @property
    def allocatable(self) -> Resource:
        """The node's status.allocatable in scheduler units."""
        ...

    @property
    def image_states(self) -> Mapping[str, ImageStateSummary]:
        """Images on the node by name."""
        ...

    @property
    def pvc_ref_counts(self) -> Mapping[str, int]:
        """``namespace/claim`` -> number of pods on the node using the PVC."""
        ...

    @property
    def generation(self) -> int:
        """Bumped on every change."""
        ...

    def snapshot(self) -> NodeInfo:
        """A copy that shares the Node and PodInfos but not the aggregates."""
        ...

    def add_pod_info(self, pod_info: PodInfo) -> None:
        """Add a pod and account for its requests, ports and PVCs (AddPodInfo)."""
        ...

    def remove_pod(self, pod: Pod) -> None:
        """Remove the pod with ``pod.uid``; raises LookupError if absent (RemovePod)."""
        ...

    def set_node(self, node: Node) -> None:
        """Replace the Node and recompute allocatable (SetNode)."""
        ...


class NodeInfoLister(Protocol):
    """Lists NodeInfos of a snapshot (``NodeInfoLister``)."""

    def list(self) -> Sequence[NodeInfo]:
        """All NodeInfos."""
        ...

    def have_pods_with_affinity_list(self) -> Sequence[NodeInfo]:
        """NodeInfos with at least one pod having pod (anti-)affinity."""
        ...

    def have_pods_with_required_anti_affinity_list(self) -> Sequence[NodeInfo]:
        """NodeInfos with at least one pod having required anti-affinity."""
        ...

    def get(self, node_name: str) -> NodeInfo:
        """The NodeInfo of ``node_name``; raises LookupError if absent."""
        ...


class StorageInfoLister(Protocol):
    """PVC usage across the snapshot (``StorageInfoLister``)."""

    def is_pvc_used_by_pods(self, key: str) -> bool:
        """Whether any pod uses the PVC ``namespace/name``."""
        ...


class SharedLister(Protocol):
    """What the snapshot shares with plugins during a cycle (``SharedLister``)."""

    def node_infos(self) -> NodeInfoLister:
        """The NodeInfo lister."""
        ...

    def storage_infos(self) -> StorageInfoLister:
        """The storage lister."""
        ...
