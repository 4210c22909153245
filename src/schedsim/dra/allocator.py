"""The structured device allocator: picks devices for a pod's unallocated ResourceClaims on
one node.

Mirrors ``k8s.io/dynamic-resource-allocation/structured`` (the "experimental" allocator of
Kubernetes 1.34, which kube-scheduler 1.34 uses with its default gates): pool gathering
(`schedsim.dra.pools`), request validation with upstream's error messages, device
eligibility (in use, binding conditions, DeviceClass then request CEL selectors
(`schedsim.dra.cel`), per-device node selection, consumable capacity
(`schedsim.dra.capacity`), shared counters, taints, claim constraints) and an exhaustive
depth-first search with backtracking that returns the first complete solution.

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
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from fractions import Fraction

import attrs

from schedsim.api.core import Node, NodeSelectorRequirement, NodeSelectorTerm
from schedsim.api.nodeaffinity import OBJECT_NAME_FIELD
from schedsim.api.resource import (
    AllocationResult,
    Device,
    DeviceAllocationConfiguration,
    DeviceAttribute,
    DeviceClass,
    DeviceConstraint,
    DeviceRequestAllocationResult,
    DeviceSelector,
    DeviceToleration,
    ResourceClaim,
    ResourceSlice,
    qualified_name,
)
from schedsim.dra.capacity import consumed_capacity, fits
from schedsim.dra.cel import CelCache, CelCompileError, CelRuntimeError
from schedsim.dra.pools import Pool, PoolCache, gather_pools, node_selection_matches
from schedsim.dra.types import AllocationError, AllocationTimeout, DeviceId, DraFeatures

__all__ = ["MAX_DEVICES_PER_CLAIM", "AllocatedState", "Allocator", "CelCache", "counters_left"]

MAX_DEVICES_PER_CLAIM = 32
"""``resourceapi.AllocationResultsMaxSize``: at most 32 devices per claim."""


# ============================================================================ allocated state


@attrs.frozen
class AllocatedState:
    """What is already in use cluster-wide (``structured.AllocatedState``).

    Attributes:
        devices: exclusively allocated devices (a frozenset, or the live view an
            `schedsim.dra.tracker.AllocatedStateTracker` keeps current).
        shared_device_ids: ``(device, shareID)`` of allocations of devices that allow
            multiple allocations (consumable capacity).
        consumed_capacity: per device, the capacity consumed by its shared allocations,
            summed, keyed by fully qualified capacity name (``<driver>/<name>`` for bare
            names).
    """

    devices: AbstractSet[DeviceId] = frozenset()
    shared_device_ids: frozenset[tuple[DeviceId, str]] = frozenset()
    consumed_capacity: Mapping[DeviceId, Mapping[str, Fraction]] = attrs.field(factory=dict)

    @classmethod
    def from_claims(cls, claims: Iterable[ResourceClaim], features: DraFeatures) -> AllocatedState:
        """Gather what allocated claims use, as the DynamicResources plugin does in PreFilter.

        Results with ``adminAccess: true`` are skipped (admin access does not take a device).
        With DRAConsumableCapacity, results with a ``shareID`` are shared allocations
        (``GatherAllocatedState``: their consumed capacity is summed per device); without it
        every other result is an exclusive allocation (``foreachAllocatedDevice``).

        Args:
            claims: any claims; unallocated ones are ignored.
            features: the DRA feature gates.
        """
        devices: set[DeviceId] = set()
        shared: set[tuple[DeviceId, str]] = set()
        consumed: dict[DeviceId, dict[str, Fraction]] = {}
        for claim in claims:
            allocation = claim.status.allocation
            if allocation is None:
                continue
            for r in allocation.results:
                if r.admin_access:
                    continue
                did = DeviceId(r.driver, r.pool, r.device)
                if features.consumable_capacity and r.share_id is not None:
                    shared.add((did, r.share_id))
                    per_device = consumed.setdefault(did, {})
                    for name, value in r.consumed_capacity.items():
                        qname = qualified_name(r.driver, name)
                        per_device[qname] = per_device.get(qname, Fraction(0)) + value
                else:
                    devices.add(did)
        return cls(
            devices=frozenset(devices),
            shared_device_ids=frozenset(shared),
            consumed_capacity=consumed,
        )


# ============================================================================ request data


@attrs.define
class _Request:
    """One request without subrequests, or one subrequest (``requestData``)."""

    name: str  # request name, or subrequest name
    parent: str | None  # the request name of a subrequest
    device_class: DeviceClass
    selectors: tuple[DeviceSelector, ...]
    mode: str
    num_devices: int
    admin_access: bool
    tolerations: tuple[DeviceToleration, ...]
    capacity_requests: Mapping[str, Fraction]
    all_devices: list[tuple[DeviceId, Device, ResourceSlice]] = attrs.field(factory=list)

    @property
    def result_name(self) -> str:
        return self.name if self.parent is None else f"{self.parent}/{self.name}"


@attrs.define
class _Pick:
    """One tentatively allocated device."""

    request: _Request
    did: DeviceId
    device: Device
    slice: ResourceSlice
    share_id: str | None = None
    consumed: Mapping[str, Fraction] | None = None
    ordinal: int = -1  # position of the device in the search's iteration order


class _SearchBudgetExceeded(Exception):
    """The search tried more devices than its budget allows (the filterTimeout)."""


class _MaxSizeExceeded(Exception):
    """A branch would put more than 32 devices into one claim
    (``errAllocationResultMaxSizeExceeded``)."""


# ============================================================================ constraints


def _applies(requests: frozenset[str], request: _Request) -> bool:
    if not requests:
        return True
    if request.parent is None:
        return request.name in requests
    return request.parent in requests or request.result_name in requests


def _same_value(a: DeviceAttribute, b: DeviceAttribute) -> bool:
    return a.kind == b.kind and a.value == b.value


class _MatchAttribute:
    """``matchAttribute``: all devices of the covered requests share one value."""

    def __init__(self, constraint: DeviceConstraint, attribute: str) -> None:
        self.requests = frozenset(constraint.requests)
        self.attribute = attribute
        self.value: DeviceAttribute | None = None
        self.count = 0

    def add(self, request: _Request, did: DeviceId, device: Device) -> bool:
        if not _applies(self.requests, request):
            return True
        value = device.attribute(did.driver, self.attribute)
        if value is None:
            return False
        if self.count == 0:
            self.value = value
        elif self.value is None or not _same_value(value, self.value):
            return False
        self.count += 1
        return True

    def remove(self, request: _Request, did: DeviceId, device: Device) -> None:
        if _applies(self.requests, request):
            self.count -= 1
            if self.count == 0:
                self.value = None


class _DistinctAttribute:
    """``distinctAttribute`` (alpha): the covered devices' values are pairwise different."""

    def __init__(self, constraint: DeviceConstraint, attribute: str) -> None:
        self.requests = frozenset(constraint.requests)
        self.attribute = attribute
        self.values: list[DeviceAttribute] = []

    def add(self, request: _Request, did: DeviceId, device: Device) -> bool:
        if not _applies(self.requests, request):
            return True
        value = device.attribute(did.driver, self.attribute)
        if value is None or any(_same_value(value, v) for v in self.values):
            return False
        self.values.append(value)
        return True

    def remove(self, request: _Request, did: DeviceId, device: Device) -> None:
        if _applies(self.requests, request):
            value = device.attribute(did.driver, self.attribute)
            for i in range(len(self.values) - 1, -1, -1):
                if value is not None and _same_value(self.values[i], value):
                    del self.values[i]
                    break


_Constraint = _MatchAttribute | _DistinctAttribute


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

    The search explores what upstream's does, in the same order, and returns the same first
    solution, but it skips two kinds of branches that cannot change the outcome:

    * order: the devices of one request form a set, so after picking a device for position
      ``i`` the search for position ``i + 1`` only looks at devices after it (upstream tries
      every permutation; the first solution it finds is the sorted one, which is the one
      found here);
    * interchangeable devices: when a device failed (no solution below it), a later device
      of the same slice that the claim cannot tell apart (same attributes, capacity,
      counters, taints, node selection and binding conditions; CEL does not see device
      names) fails too and is not tried. Shared devices (consumable capacity) are never
      skipped.

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
    ) -> None:
        self._features = features
        self.max_steps = max_steps
        self.prune = prune
        self._pool_cache = pool_cache
        self._live_pools = live_pools
        if pool_cache is not None:
            pool_cache.bind(slices, features)
        self._allocated = allocated
        self._classes = device_classes
        self._slices = slices
        self._cel = cel_cache if cel_cache is not None else CelCache()
        self._shared_in_use = frozenset(did for did, _ in allocated.shared_device_ids)
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
        run = _Run(self, node, claims)
        try:
            return run.allocate()
        except _SearchBudgetExceeded:
            raise AllocationTimeout(
                f"node {node.name}: no allocation found within {self.max_steps} devices tried"
            ) from None

    def _look(self, slice_: ResourceSlice, device: Device) -> object:
        """What a claim can see of ``device`` (hashable), or None when it may not be treated
        as interchangeable with a look-alike (shared devices, unhashable values)."""
        key = id(device)
        if key in self._looks:
            return self._looks[key]
        look: object = None
        if not device.allow_multiple_allocations:
            look = (
                id(slice_),
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

    def _counters_left(self, slice_: ResourceSlice) -> dict[tuple[str, str], Fraction]:
        key = id(slice_)
        left = self._available_counters.get(key)
        if left is None:
            left = counters_left(slice_, self._allocated.devices, self._shared_in_use)
            self._available_counters[key] = left
        return left


def counters_left(
    slice_: ResourceSlice, *in_use: AbstractSet[DeviceId]
) -> dict[tuple[str, str], Fraction]:
    """The slice's shared counters, ``(counter set, counter) -> value``, minus what its
    devices in any of the ``in_use`` sets consume (a device's counters are consumed once
    while it is in use)."""
    left = {
        (cs.name, name): value
        for cs in slice_.shared_counters
        for name, value in cs.counters.items()
    }
    for dev in slice_.devices:
        if not dev.consumes_counters:
            continue
        did = DeviceId(slice_.driver, slice_.pool.name, dev.name)
        if not any(did in s for s in in_use):
            continue
        for use in dev.consumes_counters:
            for name, value in use.counters.items():
                k = (use.counter_set, name)
                if k in left:
                    left[k] -= value
    return left


class _Run:
    """The state of one `Allocator.allocate` call (upstream's ``allocator``)."""

    def __init__(self, owner: Allocator, node: Node, claims: Sequence[ResourceClaim]) -> None:
        self.a = owner
        self.f = owner._features
        self.node = node
        self.claims = claims
        self.pools: list[Pool] = []
        self.search_pools: list[Pool] = []  # the pools the search walks
        # per claim, per request: the request (one entry) or its subrequests
        self.requests: list[list[list[_Request]]] = []
        self.constraints: list[list[_Constraint]] = []
        self.selected_sub: dict[tuple[int, int], int] = {}
        self.results: list[list[_Pick]] = [[] for _ in claims]
        self.matches: dict[tuple[int, int, int, DeviceId], bool] = {}
        # devices picked in this call (not for shared devices): claim index -> count
        self.allocating: dict[DeviceId, dict[int, int]] = {}
        # devices picked in this call that hold their counters: number of picks
        self.counter_holders: dict[DeviceId, int] = {}
        # counters consumed by this call, per slice
        self.consumed_counters: dict[int, dict[tuple[str, str], Fraction]] = {}
        # capacity consumed by shared allocations of this call, per device (qualified names)
        self.allocating_capacity: dict[DeviceId, dict[str, Fraction]] = {}
        self.steps = 0  # devices tried, against owner.max_steps

    # ------------------------------------------------------------------ validation

    def _claim_ref(self, ci: int) -> str:
        claim = self.claims[ci]
        return f"{claim.namespace}/{claim.name}" if claim.namespace else claim.name

    def allocate(self) -> list[AllocationResult] | None:
        cache = self.a._pool_cache
        self.pools = (
            cache.pools(self.node)
            if cache is not None
            else gather_pools(self.a._slices, self.node, self.f)
        )
        total = 0
        for ci, claim in enumerate(self.claims):
            ref = self._claim_ref(ci)
            minimum = 0
            per_claim: list[list[_Request]] = []
            for ri, request in enumerate(claim.spec.requests):
                if request.first_available and not self.f.prioritized_list:
                    raise AllocationError(
                        f"claim {ref}, request {request.name}: has subrequests, but the "
                        "DRAPrioritizedList feature is disabled"
                    )
                if not self.f.consumable_capacity and (
                    (request.exactly is not None and request.exactly.capacity_requests)
                    or any(s.capacity_requests for s in request.first_available)
                ):
                    raise AllocationError(
                        f"claim {ref}, request {request.name}: has capacity requests, but the "
                        "DRAConsumableCapacity feature is disabled"
                    )
                if request.exactly is not None:
                    e = request.exactly
                    if e.admin_access is not None and not self.f.admin_access:
                        raise AllocationError(
                            f"claim {ref}, request {request.name}: admin access is requested, "
                            "but the feature is disabled"
                        )
                    rd = _Request(
                        name=request.name,
                        parent=None,
                        device_class=self._device_class(ref, request.name, e.device_class_name),
                        selectors=e.selectors,
                        mode=e.allocation_mode,
                        num_devices=e.count,
                        admin_access=bool(e.admin_access),
                        tolerations=e.tolerations,
                        capacity_requests=e.capacity_requests,
                    )
                    self._prepare(ci, ri, 0, rd)
                    per_claim.append([rd])
                    minimum += rd.num_devices
                else:
                    subs: list[_Request] = []
                    for si, sub in enumerate(request.first_available):
                        rd = _Request(
                            name=sub.name,
                            parent=request.name,
                            device_class=self._device_class(ref, sub.name, sub.device_class_name),
                            selectors=sub.selectors,
                            mode=sub.allocation_mode,
                            num_devices=sub.count,
                            admin_access=False,
                            tolerations=sub.tolerations,
                            capacity_requests=sub.capacity_requests,
                        )
                        self._prepare(ci, ri, si, rd)
                        subs.append(rd)
                    per_claim.append(subs)
                    minimum += min(s.num_devices for s in subs)
            self.requests.append(per_claim)
            if minimum > MAX_DEVICES_PER_CLAIM:
                raise AllocationError(
                    f"claim {ref}: number of requested devices {minimum} exceeds the claim "
                    f"limit of {MAX_DEVICES_PER_CLAIM}"
                )
            self.constraints.append(self._constraints(ci))
            total += max((max(r.num_devices for r in subs) for subs in per_claim), default=0) * max(
                len(per_claim), 1
            )
        self.search_pools = self._pools_to_search()
        needed = 1000 + 6 * total + 4 * len(self.claims)
        limit = sys.getrecursionlimit()
        if needed > limit:
            sys.setrecursionlimit(needed)
        try:
            done = self._search(0, 0, 0, 0, False)
        except _MaxSizeExceeded:
            done = False
        finally:
            if needed > limit:
                sys.setrecursionlimit(limit)
        if not done:
            return None
        return [self._result(ci) for ci in range(len(self.claims))]

    def _pools_to_search(self) -> list[Pool]:
        live = self.a._live_pools
        if live is None or any(
            rd.admin_access for per_claim in self.requests for subs in per_claim for rd in subs
        ):
            return self.pools
        return live(self.pools)

    def _device_class(self, ref: str, request: str, name: str) -> DeviceClass:
        device_class = self.a._classes.get(name)
        if device_class is None:
            raise AllocationError(
                f"claim {ref}, request {request}: could not retrieve device class {name}: "
                f'deviceclass.resource.k8s.io "{name}" not found'
            )
        return device_class

    def _prepare(self, ci: int, ri: int, si: int, rd: _Request) -> None:
        """``validateDeviceRequest`` for ``All``: the devices it needs, fixed up front."""
        if rd.mode != "All":
            return
        ref = self._claim_ref(ci)
        for pool in self.pools:
            if pool.incomplete:
                raise AllocationError(
                    f"claim {ref}, request {rd.name}: asks for all devices, but resource pool "
                    f"{pool} is currently being updated"
                )
            if pool.invalid_reason:
                raise AllocationError(
                    f"claim {ref}, request {rd.name}: asks for all devices, but resource pool "
                    f"{pool} is currently invalid"
                )
            for slice_ in pool.slices:
                for device in slice_.devices:
                    did = DeviceId(slice_.driver, slice_.pool.name, device.name)
                    if not self._selectable(ci, ri, si, rd, did, device, slice_):
                        continue
                    if self.f.consumable_capacity and self._capacity_for(rd, did, device) is None:
                        continue
                    rd.all_devices.append((did, device, slice_))
        rd.num_devices = len(rd.all_devices)

    def _constraints(self, ci: int) -> list[_Constraint]:
        out: list[_Constraint] = []
        for i, c in enumerate(self.claims[ci].spec.constraints):
            if c.match_attribute is not None:
                out.append(_MatchAttribute(c, c.match_attribute))
            elif c.distinct_attribute is not None and self.f.consumable_capacity:
                out.append(_DistinctAttribute(c, c.distinct_attribute))
            else:
                # distinctAttribute is dropped by the API server while its gate is off.
                raise AllocationError(
                    f"claim {self._claim_ref(ci)}, constraint #{i}: empty constraint "
                    "(unsupported constraint type?)"
                )
        return out

    # ------------------------------------------------------------------ eligibility

    def _selectable(
        self,
        ci: int,
        ri: int,
        si: int,
        rd: _Request,
        did: DeviceId,
        device: Device,
        slice_: ResourceSlice,
    ) -> bool:
        """``isSelectable``: binding conditions, class and request selectors, per-device
        node selection (memoized per request and device for this call)."""
        if device.binding_conditions and not (
            self.f.device_binding_conditions and self.f.device_status
        ):
            return False
        key = (ci, ri, si, did)
        hit = self.matches.get(key)
        if hit is not None:
            return hit
        ok = self._selectors_match(
            f"class {rd.device_class.name}", rd.device_class.selectors, did, device
        ) and self._selectors_match(f"claim {self._claim_ref(ci)}", rd.selectors, did, device)
        if ok and slice_.per_device_node_selection:
            ok = node_selection_matches(
                self.node, device.node_name, device.all_nodes, device.node_selector
            )
        self.matches[key] = ok
        return ok

    def _selectors_match(
        self, owner: str, selectors: Sequence[DeviceSelector], did: DeviceId, device: Device
    ) -> bool:
        for i, selector in enumerate(selectors):
            try:
                ok = self.a._cel.matches(
                    selector.expression, did.driver, device, self.f.consumable_capacity
                )
            except CelCompileError as e:
                raise AllocationError(f"{owner}: selector #{i}: CEL compile error: {e}") from None
            except CelRuntimeError as e:
                raise AllocationError(f"{owner}: selector #{i}: CEL runtime error: {e}") from None
            if not ok:
                return False
        return True

    def _in_use(self, ci: int, rd: _Request, did: DeviceId) -> bool:
        picked = self.allocating.get(did)
        if rd.admin_access:
            return picked is not None and ci in picked
        return did in self.a._allocated.devices or bool(picked)

    def _capacity_for(
        self, rd: _Request, did: DeviceId, device: Device
    ) -> Mapping[str, Fraction] | None:
        """What the request would consume on the device, or None if it does not fit
        (``CmpRequestOverCapacity``)."""
        consumed = consumed_capacity(did.driver, device, rd.capacity_requests)
        if consumed is None:
            return None
        already = dict(self.a._allocated.consumed_capacity.get(did, {}))
        for name, value in self.allocating_capacity.get(did, {}).items():
            already[name] = already.get(name, Fraction(0)) + value
        return consumed if fits(did.driver, device, consumed, already) else None

    def _tolerated(self, rd: _Request, device: Device) -> bool:
        return all(any(t.tolerates(taint) for t in rd.tolerations) for taint in device.taints)

    def _take_counters(self, did: DeviceId, device: Device, slice_: ResourceSlice) -> bool:
        """Reserve the device's counters unless it already holds them; False if they do not
        suffice (nothing reserved then)."""
        if did in self.a._allocated.devices or did in self.a._shared_in_use:
            self.counter_holders[did] = self.counter_holders.get(did, 0) + 1
            return True
        holders = self.counter_holders.get(did, 0)
        if holders:
            self.counter_holders[did] = holders + 1
            return True
        left = self.a._counters_left(slice_)
        used = self.consumed_counters.setdefault(id(slice_), {})
        wanted: dict[tuple[str, str], Fraction] = {}
        for use in device.consumes_counters:
            for name, value in use.counters.items():
                k = (use.counter_set, name)
                if k not in left:
                    return False  # refers to a counter the slice does not have
                wanted[k] = wanted.get(k, Fraction(0)) + value
        for k, total in left.items():
            if total - used.get(k, Fraction(0)) - wanted.get(k, Fraction(0)) < 0:
                return False
        for k, value in wanted.items():
            used[k] = used.get(k, Fraction(0)) + value
        self.counter_holders[did] = 1
        return True

    def _release_counters(self, did: DeviceId, device: Device, slice_: ResourceSlice) -> None:
        holders = self.counter_holders[did] - 1
        if holders:
            self.counter_holders[did] = holders
            return
        del self.counter_holders[did]
        if did in self.a._allocated.devices or did in self.a._shared_in_use:
            return
        used = self.consumed_counters[id(slice_)]
        for use in device.consumes_counters:
            for name, value in use.counters.items():
                used[(use.counter_set, name)] -= value

    def _take(
        self,
        ci: int,
        rd: _Request,
        did: DeviceId,
        device: Device,
        slice_: ResourceSlice,
        must: bool,
    ) -> Callable[[], None] | None:
        """``allocateDevice``: check availability and constraints for one selectable
        candidate and tentatively allocate it.

        Returns:
            the undo function, or None when the device cannot be used (nothing changed).

        Raises:
            AllocationError: ``must`` (``allocationMode: All``) and a claim constraint
                rejects the device.
        """
        shared = self.f.consumable_capacity and device.allow_multiple_allocations
        if self._in_use(ci, rd, did):
            return None
        if device.consumes_counters and not self.f.partitionable_devices:
            return None
        if self.f.device_taints and not self._tolerated(rd, device):
            return None
        consumed: Mapping[str, Fraction] | None = None
        if self.f.consumable_capacity:
            consumed = self._capacity_for(rd, did, device)
            if consumed is None:
                return None
        if device.consumes_counters and not self._take_counters(did, device, slice_):
            return None
        constraints = self.constraints[ci]
        for i, c in enumerate(constraints):
            if c.add(rd, did, device):
                continue
            for earlier in constraints[:i]:
                earlier.remove(rd, did, device)
            if device.consumes_counters:
                self._release_counters(did, device, slice_)
            if must:
                raise AllocationError(
                    f"claim {self._claim_ref(ci)}, request {rd.name}: cannot add device {did} "
                    "because a claim constraint would not be satisfied"
                )
            return None
        pick = _Pick(request=rd, did=did, device=device, slice=slice_)
        if shared:
            assert consumed is not None
            pick.share_id = str(uuid.uuid4())
            pick.consumed = consumed
            per_device = self.allocating_capacity.setdefault(did, {})
            for name, value in consumed.items():
                qname = qualified_name(did.driver, name)
                per_device[qname] = per_device.get(qname, Fraction(0)) + value
        else:
            claims = self.allocating.setdefault(did, {})
            claims[ci] = claims.get(ci, 0) + 1
        results = self.results[ci]
        results.append(pick)

        def undo() -> None:
            popped = results.pop()
            assert popped is pick
            for c in constraints:
                c.remove(rd, did, device)
            if device.consumes_counters:
                self._release_counters(did, device, slice_)
            if shared:
                per_device = self.allocating_capacity[did]
                for name, value in (pick.consumed or {}).items():
                    per_device[qualified_name(did.driver, name)] -= value
            else:
                claims = self.allocating[did]
                claims[ci] -= 1
                if not claims[ci]:
                    del claims[ci]
                if not claims:
                    del self.allocating[did]

        return undo

    # ------------------------------------------------------------------ search

    def _search(self, ci: int, ri: int, si: int, di: int, in_sub: bool) -> bool:
        """``allocateOne``: allocate device ``di`` of (sub)request ``(ci, ri, si)`` and
        everything after it. True when a complete solution was found (state kept); False
        when none exists from here (state restored).

        Raises:
            _MaxSizeExceeded: every way on from here exceeds 32 devices in the claim.
            AllocationError: bad input found during the search.
        """
        if ci >= len(self.claims):
            return True
        per_claim = self.requests[ci]
        if ri >= len(per_claim):
            try:
                return self._search(ci + 1, 0, 0, 0, False)
            except _MaxSizeExceeded:
                return False
        candidates = per_claim[ri]
        if not in_sub and candidates[0].parent is not None:
            all_exceeded = True
            for sub in range(len(candidates)):
                try:
                    ok = self._search(ci, ri, sub, 0, True)
                except _MaxSizeExceeded:
                    continue
                all_exceeded = False
                if ok:
                    self.selected_sub[(ci, ri)] = sub
                    return True
            if all_exceeded:
                raise _MaxSizeExceeded
            return False
        rd = candidates[si]
        if rd.mode == "All" and not rd.all_devices:
            return False
        if di >= rd.num_devices:
            return self._search(ci, ri + 1, 0, 0, False)
        if len(self.results[ci]) + rd.num_devices - di > MAX_DEVICES_PER_CLAIM:
            raise _MaxSizeExceeded
        if rd.mode == "All":
            did, device, slice_ = rd.all_devices[di]
            self._tick()
            undo = self._take(ci, rd, did, device, slice_, must=True)
            if undo is None:
                return False
            return self._descend(undo, ci, ri, si, di, in_sub)
        # Devices of one request form a set: position di only looks after position di - 1's
        # device (the same one again only if it can be shared). See `Allocator`.
        prev = self.results[ci][-1] if di > 0 else None
        start = -1
        if prev is not None and self.a.prune:
            start = prev.ordinal
            if not (self.f.consumable_capacity and prev.device.allow_multiple_allocations):
                start += 1
        failed: set[object] = set()  # looks of devices that failed at this position
        # Hot loop (every device of every pool the node sees, per device position): the
        # common "already allocated to another claim" case is tested inline.
        taken = self.a._allocated.devices if not rd.admin_access else ()
        offset = 0  # ordinal of the pool's first device
        for pool in self.search_pools:
            if pool.invalid_reason:
                raise AllocationError(f"pool {pool.name} is invalid: {pool.invalid_reason}")
            entries = pool.entries
            if offset + len(entries) <= start:
                offset += len(entries)
                continue
            for i in range(max(start - offset, 0), len(entries)):
                did, device, slice_ = entries[i]
                if did in taken or self._in_use(ci, rd, did):
                    continue
                if not self._selectable(ci, ri, si, rd, did, device, slice_):
                    continue
                look = self._look_now(did, slice_, device)
                if look is not None and look in failed:
                    continue
                self._tick()
                undo = self._take(ci, rd, did, device, slice_, must=False)
                if undo is None:
                    continue
                self.results[ci][-1].ordinal = offset + i
                if self._descend(undo, ci, ri, si, di, in_sub):
                    return True
                if look is not None:
                    failed.add(look)
            offset += len(entries)
        return False

    def _look_now(self, did: DeviceId, slice_: ResourceSlice, device: Device) -> object:
        """The device's look plus the allocation state that tells look-alikes apart."""
        if not self.a.prune:
            return None
        look = self.a._look(slice_, device)
        if look is None or did in self.a._shared_in_use:
            return None
        return (look, did in self.a._allocated.devices)

    def _tick(self) -> None:
        self.steps += 1
        limit = self.a.max_steps
        if limit is not None and self.steps > limit:
            raise _SearchBudgetExceeded

    def _descend(
        self, undo: Callable[[], None], ci: int, ri: int, si: int, di: int, in_sub: bool
    ) -> bool:
        try:
            done = self._search(ci, ri, si, di + 1, in_sub)
        except BaseException:
            undo()
            raise
        if not done:
            undo()
        return done

    # ------------------------------------------------------------------ output

    def _result(self, ci: int) -> AllocationResult:
        binding = self.f.device_binding_conditions and self.f.device_status
        results = []
        for pick in self.results[ci]:
            rd = pick.request
            results.append(
                DeviceRequestAllocationResult(
                    request=rd.result_name,
                    driver=pick.did.driver,
                    pool=pick.did.pool,
                    device=pick.did.device,
                    admin_access=True if rd.admin_access else None,
                    tolerations=rd.tolerations if self.f.device_taints else (),
                    binding_conditions=pick.device.binding_conditions if binding else (),
                    binding_failure_conditions=(
                        pick.device.binding_failure_conditions if binding else ()
                    ),
                    share_id=pick.share_id,
                    consumed_capacity=dict(pick.consumed or {}),
                )
            )
        return AllocationResult(
            results=tuple(results),
            config=tuple(self._config(ci)),
            node_selector=self._node_selector(ci),
        )

    def _chosen(self, ci: int) -> list[_Request]:
        """The request, or the chosen subrequest, of each request of claim ``ci``."""
        return [
            subs[self.selected_sub.get((ci, ri), 0)] for ri, subs in enumerate(self.requests[ci])
        ]

    def _config(self, ci: int) -> list[DeviceAllocationConfiguration]:
        """Class configs once per class with the requests using it (in request order), then
        the claim's configs in spec order. 1.34 quirk: a claim config naming k requests of
        the claim is emitted k times."""
        out: list[DeviceAllocationConfiguration] = []
        chosen = self._chosen(ci)
        by_class: dict[str, list[str]] = {}
        classes: dict[str, DeviceClass] = {}
        for rd in chosen:
            by_class.setdefault(rd.device_class.name, []).append(rd.result_name)
            classes[rd.device_class.name] = rd.device_class
        for name, requests in by_class.items():
            for opaque in classes[name].config:
                out.append(
                    DeviceAllocationConfiguration(
                        source="FromClass", opaque=opaque, requests=tuple(requests)
                    )
                )
        for config in self.claims[ci].spec.config:
            entry = DeviceAllocationConfiguration(
                source="FromClaim", opaque=config.opaque, requests=config.requests
            )
            if not config.requests:
                out.append(entry)
                continue
            for rd in chosen:
                base = rd.parent if rd.parent is not None else rd.name
                if base in config.requests or (
                    rd.parent is not None and rd.result_name in config.requests
                ):
                    out.append(entry)
        return out

    def _node_selector(self, ci: int) -> tuple[NodeSelectorTerm, ...] | None:
        """``createNodeSelector``: pinned to the node if any device is node-local (or binds to
        the node); else one term joining the slices' (or devices') single selector terms;
        None when every device is reachable from every node."""
        fields: list[NodeSelectorRequirement] = []
        expressions: list[NodeSelectorRequirement] = []
        binding = self.f.device_binding_conditions and self.f.device_status
        for pick in self.results[ci]:
            source: Device | ResourceSlice = (
                pick.device if pick.slice.per_device_node_selection else pick.slice
            )
            if source.node_name or (binding and pick.device.binds_to_node):
                return (
                    NodeSelectorTerm(
                        match_fields=(
                            NodeSelectorRequirement(
                                key=OBJECT_NAME_FIELD, operator="In", values=(self.node.name,)
                            ),
                        )
                    ),
                )
            terms = source.node_selector
            if terms:
                if len(terms) > 1:
                    raise AllocationError(
                        f"create NodeSelector for claim {self.claims[ci].name}: unsupported "
                        f"ResourceSlice.NodeSelector with {len(terms)} terms"
                    )
                _add_new(terms[0].match_fields, fields)
                _add_new(terms[0].match_expressions, expressions)
        if not fields and not expressions:
            return None
        return (NodeSelectorTerm(match_expressions=tuple(expressions), match_fields=tuple(fields)),)


def _add_new(src: Sequence[NodeSelectorRequirement], dst: list[NodeSelectorRequirement]) -> None:
    for req in src:
        if not any(
            r.key == req.key and r.operator == req.operator and set(r.values) == set(req.values)
            for r in dst
        ):
            dst.append(req)
