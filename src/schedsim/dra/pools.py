"""Resource pools as one node sees them: which ResourceSlices count for a node, grouped by
pool, newest generation only.

Mirrors ``GatherPools`` of ``k8s.io/dynamic-resource-allocation/structured`` (experimental
allocator, Kubernetes 1.34).
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from schedsim.api.core import Node, NodeSelectorTerm
from schedsim.api.nodeaffinity import Matcher, compile_node_selector
from schedsim.api.resource import Device, ResourceSlice
from schedsim.dra.types import DraFeatures

__all__ = ["Pool", "PoolId", "gather_pools", "node_selection_matches"]

PoolId = tuple[str, str]
"""``(driver, pool name)``."""


@attrs.frozen
class Pool:
    """The slices of one pool that are relevant for a node.

    Attributes:
        driver: the pool's driver.
        name: the pool's name.
        slices: the node-relevant slices of the newest generation, sorted by name
            (upstream keeps the informer's order; sorting makes first-fit deterministic, as
            later releases do).
        incomplete: fewer slices of that generation than ``resourceSliceCount`` are
            relevant (allocation from it is allowed, but not ``allocationMode: All``).
        invalid_reason: why the pool cannot be used (a device name repeats); empty if valid.
    """

    driver: str
    name: str
    slices: tuple[ResourceSlice, ...]
    incomplete: bool = False
    invalid_reason: str = ""

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


def _has_binding_conditions(pool: Pool) -> bool:
    return any(dev.binding_conditions for s in pool.slices for dev in s.devices)


def gather_pools(slices: Sequence[ResourceSlice], node: Node, features: DraFeatures) -> list[Pool]:
    """The pools with devices reachable from ``node``, in allocation order.

    A slice counts if its ``nodeName``/``allNodes``/``nodeSelector`` covers the node, or,
    with ``perDeviceNodeSelection`` (only with DRAPartitionableDevices; otherwise the slice is
    skipped), if any of its devices does. Per pool only the highest ``pool.generation`` is
    kept. Pools are ordered by (driver, pool name), pools with any device that has binding
    conditions after all others (upstream: "prefer simple devices"; its order among the rest
    is Go map order).

    Args:
        slices: all ResourceSlices.
        node: the candidate node.
        features: the DRA feature gates.

    Returns:
        the pools, each with its node-relevant slices.
    """
    by_pool: dict[PoolId, list[ResourceSlice]] = {}
    for s in slices:
        if s.per_device_node_selection:
            if not features.partitionable_devices:
                continue
            relevant = any(_device_matches(node, dev) for dev in s.devices)
        elif s.node_name or s.all_nodes or s.node_selector is not None:
            relevant = node_selection_matches(node, s.node_name, s.all_nodes, s.node_selector)
        else:
            continue
        if not relevant:
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
        pool_slices.sort(key=lambda x: x.name)
        pool = Pool(
            driver=driver,
            name=name,
            slices=tuple(pool_slices),
            incomplete=len(pool_slices) != pool_slices[0].pool.resource_slice_count,
            invalid_reason=_invalid_reason(pool_slices),
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
