"""The Cluster Autoscaler's internal NodeInfo and PodInfo.

They ARE the scheduler framework's objects: they satisfy `schedsim.framework.NodeInfo` /
`schedsim.framework.PodInfo` directly (mypy checks it in tests/typing) and carry the CA-only
parts beside them (``local_resource_slices``, ``csi_node``; ``needed_resource_claims`` on
PodInfo). The stores keep these objects and hand them to plugins as they are: no wrapper is
built on get or list.

Mirrors CA ``simulator/framework/infos.go`` (>= 1.36, the embedding model) over
kube-scheduler's ``framework.NodeInfo`` / ``framework.PodInfo`` semantics.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from fractions import Fraction
from operator import attrgetter
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from schedsim.api.core import Node, Pod, PodAffinityTerm, WeightedPodAffinityTerm
from schedsim.api.core.resources import (
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    is_pod_level_requests_set,
    pod_requests,
    request_parts,
)
from schedsim.api.parts_memo import parts_memo
from schedsim.api.storage import CSINode
from schedsim.framework import interface
from schedsim.framework.resource import (
    FrozenResource,
    PodResource,
    Resource,
    frozen_copy,
    stored_add,
)
from schedsim.framework.types import (
    AffinityTerm,
    FrozenHostPortInfo,
    FrozenList,
    ImageStateSummary,
    WeightedAffinityTerm,
)

__all__ = ["NodeInfo", "PodInfo", "next_generation"]

_generation = itertools.count(1)


def next_generation() -> int:
    """A process-wide increasing generation number (nextGeneration upstream)."""
    return next(_generation)


def _affinity_terms(pod: Pod, terms: Sequence[PodAffinityTerm]) -> tuple[AffinityTerm, ...]:
    # Empty namespaces and no namespaceSelector mean "the pod's own namespace".
    return tuple(
        AffinityTerm(
            namespaces=frozenset(t.namespaces)
            if t.namespaces or t.namespace_selector is not None
            else frozenset({pod.namespace}),
            selector=t.label_selector,
            topology_key=t.topology_key,
            namespace_selector=t.namespace_selector,
        )
        for t in terms
    )


def _weighted(
    pod: Pod, terms: Sequence[WeightedPodAffinityTerm]
) -> tuple[WeightedAffinityTerm, ...]:
    return tuple(
        WeightedAffinityTerm(term=_affinity_terms(pod, (t.term,))[0], weight=t.weight)
        for t in terms
    )


# Requests assumed for containers that set none, for the non-zero (scoring) sums.
_NON_MISSING: Mapping[str, Fraction] = {
    "cpu": Fraction(DEFAULT_MILLI_CPU_REQUEST, 1000),
    "memory": Fraction(DEFAULT_MEMORY_REQUEST),
}


class PodInfo:
    """A pod as stored in the snapshot: the framework PodInfo plus CA's claim list.

    Args:
        pod: the pod (kept as given; the snapshot never modifies it).
        needed_resource_claims: ResourceClaims the pod needs (shared and pod-owned), as the
            DRA snapshot had them when the PodInfo was built.
        pod_level_resources: the PodLevelResources feature gate for request computation.

    Affinity terms are computed here, once; `calculate_resource` is computed on first use and
    cached (CalculateResource upstream).
    """

    __slots__ = (
        "_pod",
        "_pod_level_resources",
        "_preferred_affinity",
        "_preferred_anti_affinity",
        "_required_affinity",
        "_required_anti_affinity",
        "_resource",
        "host_ports",
        "needed_resource_claims",
        "pvc_keys",
    )

    def __init__(
        self,
        pod: Pod,
        needed_resource_claims: Sequence[Any] = (),
        *,
        pod_level_resources: bool = True,
    ) -> None:
        self._pod = pod
        self.needed_resource_claims: tuple[Any, ...] = tuple(needed_resource_claims)
        self._pod_level_resources = pod_level_resources
        aff = pod.affinity
        if aff is None:
            self._required_affinity: tuple[AffinityTerm, ...] = ()
            self._required_anti_affinity: tuple[AffinityTerm, ...] = ()
            self._preferred_affinity: tuple[WeightedAffinityTerm, ...] = ()
            self._preferred_anti_affinity: tuple[WeightedAffinityTerm, ...] = ()
        else:
            self._required_affinity = _affinity_terms(pod, aff.pod_affinity_required)
            self._required_anti_affinity = _affinity_terms(pod, aff.pod_anti_affinity_required)
            self._preferred_affinity = _weighted(pod, aff.pod_affinity_preferred)
            self._preferred_anti_affinity = _weighted(pod, aff.pod_anti_affinity_preferred)
        self._resource: PodResource | None = None
        # ``namespace/claim`` of each persistentVolumeClaim volume (ephemeral volumes are not
        # counted, as in kube-scheduler's updatePVCRefCounts and CA's stores).
        self.pvc_keys: tuple[str, ...] = tuple(
            f"{pod.namespace}/{v.persistent_volume_claim}"
            for v in pod.volumes
            if v.persistent_volume_claim is not None
        )
        self.host_ports: tuple[tuple[str, str, int], ...] = _node_ports(pod)
        """(ip, protocol, port) of each port with ``hostPort > 0`` of the containers, then
        of the sidecars: what a NodeInfo adds to its used ports for this pod."""

    def __repr__(self) -> str:
        return f"PodInfo({self._pod.key})"

    @property
    def pod(self) -> Pod:
        """The pod."""
        return self._pod

    @property
    def required_affinity_terms(self) -> tuple[AffinityTerm, ...]:
        """Required pod affinity terms."""
        return self._required_affinity

    @property
    def required_anti_affinity_terms(self) -> tuple[AffinityTerm, ...]:
        """Required pod anti-affinity terms."""
        return self._required_anti_affinity

    @property
    def preferred_affinity_terms(self) -> tuple[WeightedAffinityTerm, ...]:
        """Preferred pod affinity terms."""
        return self._preferred_affinity

    @property
    def preferred_anti_affinity_terms(self) -> tuple[WeightedAffinityTerm, ...]:
        """Preferred pod anti-affinity terms."""
        return self._preferred_anti_affinity

    @property
    def has_affinity(self) -> bool:
        """Any pod (anti-)affinity term (NodeInfo.pods_with_affinity membership)."""
        aff = self._pod.affinity
        return aff is not None and aff.has_pod_affinity_or_anti_affinity

    def calculate_resource(self) -> PodResource:
        """Requests in scheduler units (milli-CPU, bytes) plus the non-zero cpu/memory used for
        scoring, cached. Mirrors kube-scheduler ``PodInfo.CalculateResource``."""
        res = self._resource
        if res is None:
            # The pod is immutable: every PodInfo of it (one per schedule in a simulation)
            # shares one computation.
            res = self._resource = parts_memo(
                self._pod,
                ("PodResource", self._pod_level_resources),
                request_parts(self._pod),
                self._compute_resource,
            )
        return res

    def _compute_resource(self) -> PodResource:
        pod = self._pod
        plr = self._pod_level_resources
        requests = pod_requests(pod, pod_level_resources=plr)
        if plr and is_pod_level_requests_set(pod):
            # a pod-level cpu/memory request wins over the 100m/200Mi container default
            defaults: Mapping[str, Fraction] = {
                k: v for k, v in _NON_MISSING.items() if k not in requests
            }
        else:
            defaults = _NON_MISSING
        non0 = requests
        if defaults:
            non0 = pod_requests(
                pod, pod_level_resources=plr, non_missing_container_requests=defaults
            )
        r = Resource.from_resource_list(requests)
        non0_res = Resource.from_resource_list(
            {k: v for k, v in non0.items() if k in ("cpu", "memory")}
        )
        return PodResource(
            resource=FrozenResource(r), non0_cpu=non0_res.milli_cpu, non0_mem=non0_res.memory
        )


class NodeInfo:
    """A node, its pods and their aggregate usage, plus CA's DRA and CSI objects.

    Mirrors kube-scheduler ``framework.NodeInfo`` (AddPodInfo, RemovePod, SetNode, Snapshot)
    and CA ``framework.NodeInfo`` (``LocalResourceSlices``, ``CSINode``).

    Args:
        node: the Node (None for a pods-only NodeInfo).
        local_resource_slices: node-local ResourceSlices this node publishes.
        csi_node: the node's CSINode, if any.
        pods: PodInfos to add at once.

    Complexity: add_pod_info O(ports + PVCs); remove_pod O(pods) (search by UID, swap with
    the last); snapshot O(pods + ports + PVCs) (shares Node and PodInfo objects).
    """

    __slots__ = (
        "_allocatable",
        "_image_states",
        "_image_states_view",
        "_non_zero_requested",
        "_pods",
        "_pods_with_affinity",
        "_pods_with_required_anti_affinity",
        "_pvc_ref_counts",
        "_pvc_ref_counts_view",
        "_requested",
        "_used_ports",
        "csi_node",
        "generation",
        "local_resource_slices",
        "node",
    )

    def __init__(
        self,
        node: Node | None = None,
        local_resource_slices: Sequence[Any] = (),
        csi_node: CSINode | None = None,
        pods: Sequence[PodInfo] = (),
    ) -> None:
        self.node: Node | None = node
        """The Node; read-only for everybody else (a plain attribute, not a property, so
        bulk readers pay no call; `set_node` replaces it)."""
        self._pods: FrozenList[PodInfo] = FrozenList()
        self._pods_with_affinity: FrozenList[PodInfo] = FrozenList()
        self._pods_with_required_anti_affinity: FrozenList[PodInfo] = FrozenList()
        self._used_ports = FrozenHostPortInfo()
        self._requested = FrozenResource()
        self._non_zero_requested = FrozenResource()
        self._allocatable = FrozenResource(
            Resource.from_resource_list(node.allocatable) if node else None
        )
        self._image_states: dict[str, ImageStateSummary] = {}
        self._pvc_ref_counts: dict[str, int] = {}
        self._image_states_view = MappingProxyType(self._image_states)
        self._pvc_ref_counts_view = MappingProxyType(self._pvc_ref_counts)
        self.generation: int = next_generation()
        """Bumped on every mutation; read-only for everybody else (a plain attribute, not a
        property, so bulk readers such as the scheduler's filter table pay no call)."""
        self.local_resource_slices: list[Any] = list(local_resource_slices)
        self.csi_node: CSINode | None = csi_node
        for p in pods:
            self.add_pod_info(p)

    def __getstate__(self) -> dict[str, Any]:
        """Pickling (sweeps send snapshots to workers): the slots but the read-only
        mapping views, which are rebuilt."""
        return {k: getattr(self, k) for k in NodeInfo.__slots__ if not k.endswith("_view")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for k, v in state.items():
            setattr(self, k, v)
        self._image_states_view = MappingProxyType(self._image_states)
        self._pvc_ref_counts_view = MappingProxyType(self._pvc_ref_counts)

    def __repr__(self) -> str:
        name = self.node.name if self.node else "<no node>"
        return f"NodeInfo({name}, pods={len(self._pods)})"

    # ----------------------------------------------------------------- read-only members

    if TYPE_CHECKING:

        @property
        def pods(self) -> Sequence[PodInfo]:
            """The stored PodInfos (not copies)."""
            ...

        @property
        def requested(self) -> Resource:
            """Sum of pod requests (milli-CPU, bytes, scalar units)."""
            ...

        @property
        def non_zero_requested(self) -> Resource:
            """Sum of requests with 100m cpu / 200Mi memory assumed when unset."""
            ...

        @property
        def allocatable(self) -> Resource:
            """status.allocatable in scheduler units."""
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
        def used_ports(self) -> FrozenHostPortInfo:
            """Host ports in use (read-only: `check_conflict`, `copy`)."""
            ...

    else:  # C-level getters: plugins read these per node, a Python property is a call
        pods = property(attrgetter("_pods"), doc="The stored PodInfos (not copies).")
        requested = property(
            attrgetter("_requested"), doc="Sum of pod requests (milli-CPU, bytes, scalar units)."
        )
        non_zero_requested = property(
            attrgetter("_non_zero_requested"),
            doc="Sum of requests with 100m cpu / 200Mi memory assumed when unset.",
        )
        allocatable = property(
            attrgetter("_allocatable"), doc="status.allocatable in scheduler units."
        )
        # read at every placement of a CA simulation (the store's affinity lists) and by
        # NodePorts' Filter per node
        pods_with_affinity = property(
            attrgetter("_pods_with_affinity"), doc="Pods with any pod (anti-)affinity term."
        )
        pods_with_required_anti_affinity = property(
            attrgetter("_pods_with_required_anti_affinity"),
            doc="Pods with required anti-affinity terms.",
        )
        used_ports = property(
            attrgetter("_used_ports"),
            doc="Host ports in use (read-only: `check_conflict`, `copy`).",
        )

    @property
    def image_states(self) -> Mapping[str, ImageStateSummary]:
        """Images present on the node (a read-only mapping)."""
        return self._image_states_view

    @property
    def pvc_ref_counts(self) -> Mapping[str, int]:
        """``namespace/claim`` -> pods on this node using it (a read-only mapping)."""
        return self._pvc_ref_counts_view

    @property
    def resource_claims(self) -> list[Any]:
        """All claims needed by the node's pods, deduplicated by UID (first one wins)."""
        seen: set[object] = set()
        out = []
        for p in self._pods:
            for c in p.needed_resource_claims:
                uid: object = getattr(c, "uid", id(c))
                if uid not in seen:
                    seen.add(uid)
                    out.append(c)
        return out

    # ----------------------------------------------------------------- mutations

    def add_pod_info(self, pod_info: interface.PodInfo) -> None:
        """Add a pod: account for its requests, host ports and PVCs.

        Raises:
            TypeError: ``pod_info`` is not a `schedsim.snapshot.PodInfo` (CA panics here: a
                PodInfo without CA's DRA data must not get into the snapshot).
        """
        if not isinstance(pod_info, PodInfo):
            raise TypeError(f"expected schedsim.snapshot.PodInfo, got {type(pod_info).__name__}")
        append = FrozenList.owner_append
        append(self._pods, pod_info)
        if pod_info.has_affinity:
            append(self._pods_with_affinity, pod_info)
        if pod_info.required_anti_affinity_terms:
            append(self._pods_with_required_anti_affinity, pod_info)
        self._update(pod_info, 1)

    def remove_pod(self, pod: Pod) -> None:
        """Remove the pod with ``pod.uid`` (the first one with that UID, whatever its name).

        Removal swaps with the last element, so pod order changes (as upstream).

        Raises:
            LookupError: no pod with that UID is on the node.
        """
        uid = pod.uid
        for lst in (self._pods_with_affinity, self._pods_with_required_anti_affinity):
            _remove_by_uid(lst, uid)
        pods = self._pods
        for i, pi in enumerate(pods):
            if pi.pod.uid == uid:
                list.__setitem__(pods, i, pods[-1])
                list.pop(pods)
                self._update(pi, -1)
                return
        node = self.node.name if self.node else ""
        raise LookupError(f"no corresponding pod {pod.name} in pods of node {node}")

    def set_node(self, node: Node) -> None:
        """Replace the Node and recompute allocatable; pods are not re-accounted."""
        self.node = node
        self._allocatable = FrozenResource(Resource.from_resource_list(node.allocatable))
        self.generation = next_generation()

    def snapshot(self) -> NodeInfo:
        """A copy sharing the Node, the PodInfos and the slice/CSINode objects, with its own
        lists, aggregates, ports and PVC counts (Snapshot upstream; what a store's fork and
        copy-on-write use). Keeps the generation."""
        c = NodeInfo.__new__(NodeInfo)
        c.node = self.node
        c._pods = FrozenList(self._pods)
        c._pods_with_affinity = FrozenList(self._pods_with_affinity)
        c._pods_with_required_anti_affinity = FrozenList(self._pods_with_required_anti_affinity)
        c._used_ports = FrozenHostPortInfo(self._used_ports)
        c._requested = frozen_copy(self._requested)
        c._non_zero_requested = frozen_copy(self._non_zero_requested)
        c._allocatable = self._allocatable  # replaced, never changed, by set_node
        # nothing writes image states after __init__ (which leaves them empty): shared
        c._image_states = self._image_states
        c._image_states_view = self._image_states_view
        c._pvc_ref_counts = dict(self._pvc_ref_counts)
        c._pvc_ref_counts_view = MappingProxyType(c._pvc_ref_counts)
        c.generation = self.generation
        c.local_resource_slices = list(self.local_resource_slices)
        c.csi_node = self.csi_node
        return c

    def _update(self, pod_info: PodInfo, sign: int) -> None:
        res = pod_info.calculate_resource()
        stored_add(self._requested, res.resource, sign)
        stored_add(self._non_zero_requested, None, sign, res.non0_cpu, res.non0_mem)
        host_ports = pod_info.host_ports
        if host_ports:
            ports = self._used_ports
            for ip, protocol, port in host_ports:
                if sign > 0:
                    ports.owner_add(ip, protocol, port)
                else:
                    ports.owner_remove(ip, protocol, port)
        counts = self._pvc_ref_counts
        for key in pod_info.pvc_keys:
            n = counts.get(key, 0) + sign
            if n > 0:
                counts[key] = n
            else:
                counts.pop(key, None)
        self.generation = next_generation()


def _node_ports(pod: Pod) -> tuple[tuple[str, str, int], ...]:
    """The pod's host ports as a NodeInfo counts them: containers and sidecars only
    (util.GetHostPorts, kube-scheduler 1.34: ordinary init containers have exited before the
    pod's ports matter), ports with ``hostPort > 0``, containers first."""
    out = [
        (p.host_ip, p.protocol, p.host_port)
        for c in pod.containers
        if c.ports
        for p in c.ports
        if p.host_port > 0
    ]
    for c in pod.init_containers:
        if c.is_restartable_init and c.ports:
            out.extend((p.host_ip, p.protocol, p.host_port) for p in c.ports if p.host_port > 0)
    return tuple(out)


def _remove_by_uid(lst: list[PodInfo], uid: str) -> None:
    for i, pi in enumerate(lst):
        if pi.pod.uid == uid:
            list.__setitem__(lst, i, lst[-1])
            list.pop(lst)
            return
