"""Resource pools as one node sees them: which ResourceSlices count for a node, grouped by
pool, newest generation only.

Mirrors ``GatherPools`` of ``k8s.io/dynamic-resource-allocation/structured`` (experimental
allocator, Kubernetes 1.34).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

import attrs

from schedsim.api.core import Node, NodeSelectorTerm
from schedsim.api.core.nodeaffinity import Matcher, compile_node_selector
from schedsim.api.resource import Device, ResourceSlice
from schedsim.dra.types import DeviceId, DraFeatures

__all__ = ["Pool", "PoolCache", "PoolId", "gather_pools", "node_selection_matches"]

PoolId = tuple[str, str]
"""``(driver, pool name)``."""


@attrs.frozen
class Pool:
    """The slices of one pool that are relevant for a node.

    Attributes:
        driver: the pool's driver.
        name: the pool's name.
        slices: the node-relevant slices of the newest generation: the slices without a
            device that has binding conditions first, then those with one (1.34's
            ``GatherPools`` adds them last "to prefer the simpler devices"), each group
            sorted by name (upstream keeps the informer's order within a group; sorting
            makes first-fit deterministic, as later releases do).
        incomplete: fewer slices of that generation than ``resourceSliceCount`` are
            relevant (allocation from it is allowed, but not ``allocationMode: All``).
        invalid_reason: why the pool cannot be used (a device name repeats); empty if valid.
        entries: every device of ``slices`` in order, with its id and slice (what the
            allocator's search walks; built once per pool).
    """

    driver: str
    name: str
    slices: tuple[ResourceSlice, ...]
    incomplete: bool = False
    invalid_reason: str = ""
    entries: tuple[tuple[DeviceId, Device, ResourceSlice], ...] = ()

    def __str__(self) -> str:
        return f"{self.driver}/{self.name}"


_SELECTORS: dict[tuple[NodeSelectorTerm, ...], Matcher] = {}


def _selector(terms: tuple[NodeSelectorTerm, ...]) -> Matcher:
    matcher = _SELECTORS.get(terms)
    if matcher is None:
        matcher = compile_node_selector(terms)[0]
        if len(_SELECTORS) > 10_000:
            _SELECTORS.clear()
        _SELECTORS[terms] = matcher
    return matcher


def node_selection_matches(
    node: Node,
    node_name: str | None,
    all_nodes: bool,
    node_selector: tuple[NodeSelectorTerm, ...] | None,
) -> bool:
    """Whether a slice's or device's node selection covers ``node`` (upstream
    ``nodeMatches``): ``node_name`` must equal the node's name, ``all_nodes`` matches every
    node, ``node_selector`` is matched against labels and ``metadata.name``; nothing set
    matches no node."""
    if node_name:
        return node.name == node_name
    if all_nodes:
        return True
    if node_selector is not None:
        return _selector(node_selector)(node.labels, node.name)
    return False


def _device_matches(node: Node, device: Device) -> bool:
    return node_selection_matches(node, device.node_name, device.all_nodes, device.node_selector)


def _slice_has_binding_conditions(s: ResourceSlice) -> bool:
    return any(dev.binding_conditions for dev in s.devices)


def _has_binding_conditions(pool: Pool) -> bool:
    return any(_slice_has_binding_conditions(s) for s in pool.slices)


def _slice_order(s: ResourceSlice) -> tuple[bool, str]:
    """Plain slices before slices with binding conditions, then by name (upstream 1.34
    ``GatherPools``: ``slicesWithBindingConditions`` are added to their pools last)."""
    return (_slice_has_binding_conditions(s), s.name)


def gather_pools(slices: Sequence[ResourceSlice], node: Node, features: DraFeatures) -> list[Pool]:
    """The pools with devices reachable from ``node``, in allocation order.

    A slice counts if its ``nodeName``/``allNodes``/``nodeSelector`` covers the node, or,
    with ``perDeviceNodeSelection`` (only with DRAPartitionableDevices; otherwise the slice is
    skipped), if any of its devices does. Per pool only the highest ``pool.generation`` is
    kept. Within a pool, slices with a device that has binding conditions come after the
    plain ones (each group by name). Pools are ordered by (driver, pool name), pools with
    any device that has binding conditions after all others (upstream: "prefer simple
    devices"; its order among the rest is Go map order).

    Args:
        slices: all ResourceSlices.
        node: the candidate node.
        features: the DRA feature gates.

    Returns:
        the pools, each with its node-relevant slices.
    """
    by_pool: dict[PoolId, list[ResourceSlice]] = {}
    for s in slices:
        if not _slice_relevant(s, node, features):
            continue
        key = (s.driver, s.pool.name)
        current = by_pool.get(key)
        if current is None or s.pool.generation > current[0].pool.generation:
            by_pool[key] = [s]
        elif s.pool.generation == current[0].pool.generation:
            current.append(s)
    plain: list[Pool] = []
    with_conditions: list[Pool] = []
    for (driver, name), pool_slices in sorted(by_pool.items()):
        pool_slices.sort(key=_slice_order)
        pool = Pool(
            driver=driver,
            name=name,
            slices=tuple(pool_slices),
            incomplete=len(pool_slices) != pool_slices[0].pool.resource_slice_count,
            invalid_reason=_invalid_reason(pool_slices),
            entries=tuple(
                (DeviceId(s.driver, s.pool.name, dev.name), dev, s)
                for s in pool_slices
                for dev in s.devices
            ),
        )
        (with_conditions if _has_binding_conditions(pool) else plain).append(pool)
    return plain + with_conditions


def _invalid_reason(pool_slices: Sequence[ResourceSlice]) -> str:
    seen: set[str] = set()
    for s in pool_slices:
        for dev in s.devices:
            if dev.name in seen:
                return f"duplicate device name {dev.name}"
            seen.add(dev.name)
    return ""


class PoolCache:
    """`gather_pools` results per node, kept while the set of slices stays the same.

    A scheduling cycle asks for the pools of every candidate node, pod after pod, while the
    ResourceSlices rarely change. `bind` (once per pod, O(S) identity check) sorts the
    slices into the ones every node sees (``allNodes``), node-local ones (``nodeName``,
    indexed by node) and the ones whose node selection must be evaluated per node; the pools
    of the ``allNodes`` slices are gathered once. `pools` for a node then costs the slices
    that concern that node plus merging in the shared pools (O(P) for P pools it sees), not a
    pass over every slice and device; its result is kept per Node object.

    The result equals `gather_pools` over the bound slices (checked by a hypothesis test).
    Not thread-safe; one per plugin instance.
    """

    __slots__ = (
        "_by_node",
        "_by_node_name",
        "_features",
        "_independent",
        "_interned",
        "_pool_nodes",
        "_selective",
        "_shared",
        "_shared_by_pool",
        "_slices",
        "generation",
    )

    def __init__(self) -> None:
        self._slices: tuple[ResourceSlice, ...] = ()
        self._features: DraFeatures | None = None
        self._by_node: dict[str, tuple[Node, list[Pool]]] = {}
        self._by_node_name: dict[str, list[ResourceSlice]] = {}
        self._selective: list[ResourceSlice] = []
        self._shared: list[Pool] = []
        self._shared_by_pool: dict[PoolId, list[ResourceSlice]] = {}
        # pool -> the one node whose slices make it up (None: other or several nodes see it)
        self._pool_nodes: dict[PoolId, str | None] = {}
        # equal pool lists of different nodes -> one list object; id(list) -> independent
        self._interned: dict[tuple[object, ...], list[Pool]] = {}
        self._independent: dict[int, bool] = {}
        # Bumped whenever `bind` gets other slices or features (the cached pools are dropped).
        self.generation = 0

    def bind(self, slices: Sequence[ResourceSlice], features: DraFeatures) -> None:
        """Use ``slices`` from now on; keep what was computed unless they are other slice
        objects than last time (the snapshot hands out the objects it stores). The tuple
        bound last time, given again, costs O(1)."""
        if slices is self._slices and (features is self._features or features == self._features):
            return
        if (
            features == self._features
            and len(slices) == len(self._slices)
            and all(map(operator.is_, slices, self._slices))
        ):
            return
        self._slices = tuple(slices)
        self._features = features
        self.generation += 1
        self._by_node = {}
        self._by_node_name = {}
        self._selective = []
        self._shared_by_pool = {}
        self._pool_nodes = {}
        self._interned = {}
        self._independent = {}
        shared: list[ResourceSlice] = []
        for s in slices:
            pid = (s.driver, s.pool.name)
            local = (
                s.node_name
                if s.node_name and not s.per_device_node_selection and s.node_selector is None
                else None
            )
            self._pool_nodes[pid] = local if self._pool_nodes.get(pid, local) == local else None
            if s.per_device_node_selection or s.node_selector is not None:
                self._selective.append(s)
            elif s.node_name:
                self._by_node_name.setdefault(s.node_name, []).append(s)
            elif s.all_nodes:
                shared.append(s)
                self._shared_by_pool.setdefault((s.driver, s.pool.name), []).append(s)
        self._shared = gather_pools(shared, _ANY_NODE, features)

    def pool_node(self, pool: PoolId) -> str | None:
        """The only node that can see ``pool`` (all its bound slices are local to that node:
        ``nodeName``); None when other or several nodes may see it; ``""`` when no bound slice
        belongs to it (no node sees it). Time: O(1)."""
        return self._pool_nodes.get(pool, "")

    def node_independent(self, pools: list[Pool]) -> bool:
        """Whether an allocation from ``pools`` (a list `pools` returned) is the same for
        every node that sees exactly these pools: no slice is node-local or selects per
        device, and no device binds to the node (the allocator reads the node only for
        those). Time: O(1) after the first call per list."""
        key = id(pools)
        hit = self._independent.get(key)
        if hit is None:
            hit = self._independent[key] = all(
                not s.node_name
                and not s.per_device_node_selection
                and not any(d.binds_to_node for d in s.devices)
                for p in pools
                for s in p.slices
            )
        return hit

    def pools(self, node: Node) -> list[Pool]:
        """`gather_pools` for ``node`` over the bound slices (the same Node object hits the
        cache). Read-only: do not modify the list."""
        hit = self._by_node.get(node.name)
        if hit is not None and hit[0] is node:
            return hit[1]
        features = self._features
        assert features is not None, "bind() first"
        local = list(self._by_node_name.get(node.name, ()))
        local += (s for s in self._selective if _slice_relevant(s, node, features))
        if not local:
            pools = self._shared
        else:
            ids = {(s.driver, s.pool.name) for s in local}
            for pid in ids:
                local += self._shared_by_pool.get(pid, ())
            mine = gather_pools(local, node, features)
            pools = [p for p in self._shared if (p.driver, p.name) not in ids] + mine
            pools.sort(key=lambda p: (_has_binding_conditions(p), p.driver, p.name))
            # nodes that see the same pools share one list (found by identity later on)
            same = tuple(
                (p.driver, p.name, p.incomplete, p.invalid_reason, *map(id, p.slices))
                for p in pools
            )
            pools = self._interned.setdefault(same, pools)
        self._by_node[node.name] = (node, pools)
        return pools


_ANY_NODE = Node(name="")
"""Stands for every node when gathering ``allNodes`` slices (their relevance ignores it)."""


def _slice_relevant(s: ResourceSlice, node: Node, features: DraFeatures) -> bool:
    if s.per_device_node_selection:
        return features.partitionable_devices and any(_device_matches(node, d) for d in s.devices)
    return node_selection_matches(node, s.node_name, s.all_nodes, s.node_selector)
