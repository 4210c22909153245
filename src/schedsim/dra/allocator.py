"""The structured device allocator: picks devices for a pod's unallocated ResourceClaims on
one node.

Mirrors ``k8s.io/dynamic-resource-allocation/structured`` (the "experimental" allocator of
Kubernetes 1.34, which kube-scheduler 1.34 uses with its default gates): pool gathering
(`schedsim.dra.pools`), request validation with upstream's error messages, device
eligibility (in use, binding conditions, DeviceClass then request CEL selectors
(`schedsim.dra.cel`), per-device node selection, consumable capacity
(`schedsim.dra.capacity`), shared counters, taints, claim constraints) and an exhaustive
depth-first search with backtracking that returns the first complete solution.

Modules: this one holds `Allocator` (one per scheduling cycle); one `allocate` call is an
`schedsim.dra.search.AllocationRun` (validation, eligibility, the search), which works with
`schedsim.dra.search_data` (requests, picks, constraints) and builds its output with
`schedsim.dra.allocation_output`; `AllocatedState` and `counters_left` live in
`schedsim.dra.allocated_state` and are re-exported here.

Deliberate differences from the 1.34 code, all fixes of upstream bugs (later releases fix
most of them too):

* every tentative reservation (counters, consumed capacity, constraint state, "in use") is
  undone whenever a candidate is rejected or the search backtracks; upstream leaks counters
  when a device passes the counter check but fails the taint or constraint check, and never
  returns the counters of devices that allow multiple allocations;
* a device's counters are consumed once while it is in use, however many allocations share
  it: devices allocated before (exclusively or shared, `AllocatedState`) and devices picked
  earlier in the same call are both accounted;
* ``distinctAttribute`` compares attribute values (1.34 compares pointers, which makes any
  two different devices "distinct"; 1.35 compares values);
* pools are tried in (driver, pool) order and a pool's slices in name order (upstream: Go
  map order and informer order), so results are deterministic.

For the same reason a shared allocation's ``shareID`` is derived from the claim's UID and
the result's index (`schedsim.dra.allocation_output.share_id`); upstream draws a random UUID
for every device it tries.

Beyond upstream: with ``device_order`` (set by DynamicResources at Reserve when the profile
has a DeviceChoice plugin, `schedsim.framework.devices`) the devices of each request are
tried in the order it gives instead of slice order. The search is the same exhaustive one
(backtracking, the same pruning, with positions counted in that order), so it finds a
solution exactly when the unordered search does; only which one comes first changes.
Without ``device_order`` nothing differs from the description above.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from fractions import Fraction

from schedsim.api.core import Node
from schedsim.api.resource import (
    AllocationResult,
    Device,
    DeviceClass,
    ResourceClaim,
    ResourceSlice,
)
from schedsim.dra.allocated_state import AllocatedState, counters_left
from schedsim.dra.capacity import CapacityCache
from schedsim.dra.cel import CelCache
from schedsim.dra.pools import Pool, PoolCache
from schedsim.dra.search import AllocationRun
from schedsim.dra.search_data import MAX_DEVICES_PER_CLAIM, Request, SearchBudgetExceeded
from schedsim.dra.types import AllocationTimeout, DeviceId, DraFeatures

__all__ = [
    "MAX_DEVICES_PER_CLAIM",
    "AllocatedState",
    "Allocator",
    "CelCache",
    "DeviceOrder",
    "counters_left",
]

DeviceOrder = Callable[
    [ResourceClaim, str, Sequence[tuple[DeviceId, Device, ResourceSlice]]], Sequence[int] | None
]
"""``(claim, request name, candidates) -> ranking``: the order in which one request of a
claim tries the candidate devices (a permutation of their indices; None: upstream's
order). The candidates are the node's searched devices not allocated exclusively before,
in upstream's order."""


# ============================================================================ allocator


class Allocator:
    """Allocates devices for claims, node by node (``structured.Allocator``).

    One allocator serves one scheduling cycle: the allocated state, classes and slices are
    fixed; `allocate` may be called for many nodes. Not thread-safe.

    Args:
        features: the DRA feature gates.
        allocated: devices in use by allocated claims (and in-flight allocations).
        device_classes: DeviceClasses by name.
        slices: all ResourceSlices (DeviceTaintRule taints already applied).
        cel_cache: compiled selectors and memoized results, shared across allocators; a
            private one when None.
        max_steps: the search budget of one `allocate` call, in devices tried (None:
            unbounded). Upstream bounds each Filter call by ``filterTimeout`` on the wall
            clock; a simulation must give the same answer on every machine, so the
            DynamicResources plugin turns the timeout into this count instead.
        prune: skip the branches described below (False: upstream's exact search, the
            reference the pruned one is tested against).
        pool_cache: pools per node kept across allocators while the slices stay the same
            (the DynamicResources plugin keeps one); without it every `allocate` gathers
            the node's pools afresh.
        live_pools: the pools of a list in which a device can still be allocated
            (`schedsim.dra.exhausted.ExhaustedPools.live`); the search then walks only
            those (not for requests with admin access). None: every pool.
        capacity_cache: what each request consumes on each device (consumable capacity),
            shared across allocators like ``cel_cache``; a private one when None.

    The search explores what upstream's does, in the same order, and returns the same first
    solution, but it skips two kinds of branches that cannot change the outcome:

    * order: the devices of one request form a set, so after picking a device for position
      ``i`` the search for position ``i + 1`` only looks at devices after it (upstream tries
      every permutation; the first solution it finds is the sorted one, which is the one
      found here);
    * interchangeable devices: when a device failed (no solution below it), a later device
      of the same slice that the claim cannot tell apart (same attributes, capacity,
      counters, taints, node selection and binding conditions; CEL does not see device
      names) fails too and is not tried. A shared device (consumable capacity) is
      interchangeable with a look-alike only while both have the same capacity in use,
      and never when it consumes counters.

    So 20 GPUs whose attribute alternates, asked for 11 under ``matchAttribute``, fail in
    milliseconds where the permutations took minutes. With ``live_pools`` the search also
    leaves out pools where no device can be allocated any more (`schedsim.dra.exhausted`):
    same first solution; their devices are not counted as tried against ``max_steps``.
    """

    def __init__(
        self,
        features: DraFeatures,
        allocated: AllocatedState,
        device_classes: Mapping[str, DeviceClass],
        slices: Sequence[ResourceSlice],
        cel_cache: CelCache | None = None,
        max_steps: int | None = None,
        prune: bool = True,
        pool_cache: PoolCache | None = None,
        live_pools: Callable[[list[Pool]], list[Pool]] | None = None,
        capacity_cache: CapacityCache | None = None,
    ) -> None:
        self.features = features
        self.max_steps = max_steps
        self.prune = prune
        self.pool_cache = pool_cache
        self.live_pools = live_pools
        if pool_cache is not None:
            pool_cache.bind(slices, features)
        self.allocated = allocated
        self.classes = device_classes
        self.slices = slices
        self.cel = cel_cache if cel_cache is not None else CelCache()
        self.capacity = capacity_cache if capacity_cache is not None else CapacityCache()
        self.shared_in_use: AbstractSet[DeviceId] = (
            allocated.shared_devices
            if allocated.shared_devices is not None
            else frozenset(did for did, _ in allocated.shared_device_ids)
        )
        self.device_order: DeviceOrder | None = None
        """Tries each request's devices in this order (see the module docstring); None:
        upstream's order. Set by the caller around an `allocate` call."""
        self.validated: dict[
            tuple[int, ...], tuple[tuple[ResourceClaim, ...], list[list[list[Request]]], int]
        ] = {}
        """The claims' validated requests and the search's depth bound, per claims (by
        identity) without ``allocationMode: All`` requests: node-independent, so each
        `allocate` call for the same claims validates them once (the requests are not
        changed by a search)."""
        # The attributes above are read by each `AllocationRun` (schedsim.dra.search).
        # Counters left per slice after the devices allocated before (computed on first use).
        self._available_counters: dict[int, dict[tuple[str, str], Fraction]] = {}
        # id(device) -> what the claims can see of it (None: never interchangeable)
        self._looks: dict[int, object] = {}

    def allocate(
        self, node: Node, claims: Sequence[ResourceClaim]
    ) -> list[AllocationResult] | None:
        """One AllocationResult per claim, in the order of ``claims``.

        Args:
            node: the candidate node.
            claims: the pod's claims that still need an allocation, in pod order.

        Returns:
            the allocations; None when the claims cannot all be allocated on this node
            (unschedulable there, not an error).

        Raises:
            AllocationError: bad input, with upstream's message: an invalid or failing CEL
                selector, a missing DeviceClass, a feature used while its gate is off, more
                than 32 devices requested by one claim, ``allocationMode: All`` over an
                incomplete or invalid pool or violating a claim constraint, an invalid pool
                reached by the search.
            AllocationTimeout: the search tried more than ``max_steps`` devices.
        """
        run = AllocationRun(self, node, claims)
        try:
            return run.allocate()
        except SearchBudgetExceeded:
            raise AllocationTimeout(
                f"node {node.name}: no allocation found within {self.max_steps} devices tried"
            ) from None

    def look(self, slice_: ResourceSlice, device: Device) -> object:
        """What a claim can see of ``device`` (hashable), or None when it may not be treated
        as interchangeable with a look-alike (unhashable values). The search adds the
        device's allocation state (`schedsim.dra.search.AllocationRun`)."""
        key = id(device)
        if key in self._looks:
            return self._looks[key]
        look: object = (
            id(slice_),
            device.allow_multiple_allocations,
            tuple(sorted(device.attributes.items())),
            tuple(sorted(device.capacity.items())),
            device.consumes_counters,
            device.node_name,
            device.node_selector,
            device.all_nodes,
            device.taints,
            device.binds_to_node,
            device.binding_conditions,
            device.binding_failure_conditions,
        )
        try:
            hash(look)
        except TypeError:
            look = None
        self._looks[key] = look
        return look

    # -- helpers shared by runs -------------------------------------------------------------

    def counters_left_of(self, slice_: ResourceSlice) -> dict[tuple[str, str], Fraction]:
        """`counters_left` of ``slice_`` after the devices allocated before (memoized)."""
        key = id(slice_)
        left = self._available_counters.get(key)
        if left is None:
            left = counters_left(slice_, self.allocated.devices, self.shared_in_use)
            self._available_counters[key] = left
        return left
