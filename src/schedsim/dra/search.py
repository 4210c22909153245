"""`AllocationRun`: one `schedsim.dra.allocator.Allocator.allocate` call: the requests
validated, each device's eligibility, the exhaustive depth-first search with backtracking,
and the AllocationResults built from the first solution.

Mirrors the ``allocator`` of ``k8s.io/dynamic-resource-allocation/structured``
(experimental, Kubernetes 1.34); split out of `schedsim.dra.allocator`, whose docstring
lists the pruning and the deliberate differences from upstream.
"""

from __future__ import annotations

import operator
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING

from schedsim.api.core import Node
from schedsim.api.resource import (
    AllocationResult,
    Device,
    DeviceClass,
    DeviceSelector,
    ResourceClaim,
    ResourceSlice,
    qualified_name,
)
from schedsim.dra.allocation_output import allocation_result
from schedsim.dra.cel import CelCompileError, CelRuntimeError
from schedsim.dra.pools import Pool, gather_pools, node_selection_matches
from schedsim.dra.search_data import (
    MAX_DEVICES_PER_CLAIM,
    Constraint,
    DistinctAttribute,
    MatchAttribute,
    MaxSizeExceeded,
    Pick,
    Request,
    SearchBudgetExceeded,
)
from schedsim.dra.types import AllocationError, DeviceId

if TYPE_CHECKING:
    from schedsim.dra.allocator import Allocator

__all__ = ["AllocationRun"]


class AllocationRun:
    """The state of one `Allocator.allocate` call (upstream's ``allocator``): validation,
    eligibility, the depth-first search and the results."""

    def __init__(self, owner: Allocator, node: Node, claims: Sequence[ResourceClaim]) -> None:
        self.a = owner
        self.f = owner.features
        self.node = node
        self.claims = claims
        self.pools: list[Pool] = []
        self.search_pools: list[Pool] = []  # the pools the search walks
        # per claim, per request: the request (one entry) or its subrequests
        self.requests: list[list[list[Request]]] = []
        self.constraints: list[list[Constraint]] = []
        self.selected_sub: dict[tuple[int, int], int] = {}
        self.results: list[list[Pick]] = [[] for _ in claims]
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
        # (claim, request, subrequest) -> its devices in owner.device_order's order
        self.ordered: dict[tuple[int, int, int], list[tuple[DeviceId, Device, ResourceSlice]]] = {}

    # ------------------------------------------------------------------ validation

    def _claim_ref(self, ci: int) -> str:
        claim = self.claims[ci]
        return f"{claim.namespace}/{claim.name}" if claim.namespace else claim.name

    def allocate(self) -> list[AllocationResult] | None:
        cache = self.a.pool_cache
        self.pools = (
            cache.pools(self.node)
            if cache is not None
            else gather_pools(self.a.slices, self.node, self.f)
        )
        ids = tuple(map(id, self.claims))
        memo = self.a.validated.get(ids)
        if memo is not None and all(map(operator.is_, memo[0], self.claims)):
            self.requests = memo[1]
            self.constraints = [self._constraints(ci) for ci in range(len(self.claims))]
            total = memo[2]
        else:
            total = self._validate()
            if not any(rd.mode == "All" for rd in self._all_requests()):
                # node-independent: later runs of this allocator for these claims reuse it
                self.a.validated[ids] = (tuple(self.claims), self.requests, total)
        self.search_pools = self._pools_to_search()
        if self._first_fit_applies() and self._first_fit():
            return [self._result(0)]
        needed = 1000 + 6 * total + 4 * len(self.claims)
        limit = sys.getrecursionlimit()
        if needed > limit:
            sys.setrecursionlimit(needed)
        try:
            done = self._search(0, 0, 0, 0, False)
        except MaxSizeExceeded:
            done = False
        finally:
            if needed > limit:
                sys.setrecursionlimit(limit)
        if not done:
            return None
        return [self._result(ci) for ci in range(len(self.claims))]

    def _all_requests(self) -> list[Request]:
        return [rd for per_claim in self.requests for subs in per_claim for rd in subs]

    def _validate(self) -> int:
        """Build and check the claims' requests and constraints (``validateDeviceRequest``,
        upstream's messages); the devices of ``allocationMode: All`` requests are fixed
        here (`_prepare`). Returns the search's depth bound (for the recursion limit)."""
        total = 0
        for ci, claim in enumerate(self.claims):
            ref = self._claim_ref(ci)
            minimum = 0
            per_claim: list[list[Request]] = []
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
                    rd = Request(
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
                    subs: list[Request] = []
                    for si, sub in enumerate(request.first_available):
                        rd = Request(
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
        return total

    def _pools_to_search(self) -> list[Pool]:
        live = self.a.live_pools
        if live is None or any(rd.admin_access for rd in self._all_requests()):
            return self.pools
        return live(self.pools)

    def _device_class(self, ref: str, request: str, name: str) -> DeviceClass:
        device_class = self.a.classes.get(name)
        if device_class is None:
            raise AllocationError(
                f"claim {ref}, request {request}: could not retrieve device class {name}: "
                f'deviceclass.resource.k8s.io "{name}" not found'
            )
        return device_class

    def _prepare(self, ci: int, ri: int, si: int, rd: Request) -> None:
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

    def _constraints(self, ci: int) -> list[Constraint]:
        out: list[Constraint] = []
        for i, c in enumerate(self.claims[ci].spec.constraints):
            if c.match_attribute is not None:
                out.append(MatchAttribute(c, c.match_attribute))
            elif c.distinct_attribute is not None and self.f.consumable_capacity:
                out.append(DistinctAttribute(c, c.distinct_attribute))
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
        rd: Request,
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
                ok = self.a.cel.matches(
                    selector.expression, did.driver, device, self.f.consumable_capacity
                )
            except CelCompileError as e:
                raise AllocationError(f"{owner}: selector #{i}: CEL compile error: {e}") from None
            except CelRuntimeError as e:
                raise AllocationError(f"{owner}: selector #{i}: CEL runtime error: {e}") from None
            if not ok:
                return False
        return True

    def _in_use(self, ci: int, rd: Request, did: DeviceId) -> bool:
        picked = self.allocating.get(did)
        if rd.admin_access:
            return picked is not None and ci in picked
        return did in self.a.allocated.devices or bool(picked)

    def _capacity_for(
        self, rd: Request, did: DeviceId, device: Device
    ) -> Mapping[str, Fraction] | None:
        """What the request would consume on the device, or None if it does not fit
        (``CmpRequestOverCapacity``)."""
        plan = self.a.capacity.plan(did.driver, device, rd.capacity_requests)
        if plan is None:
            return None
        used = self.a.allocated.consumed_capacity.get(did)
        pending = self.allocating_capacity.get(did)
        return plan.consumed if plan.fits(did.driver, device, used, pending) else None

    def _tolerated(self, rd: Request, device: Device) -> bool:
        return all(any(t.tolerates(taint) for t in rd.tolerations) for taint in device.taints)

    def _take_counters(self, did: DeviceId, device: Device, slice_: ResourceSlice) -> bool:
        """Reserve the device's counters unless it already holds them; False if they do not
        suffice (nothing reserved then)."""
        if did in self.a.allocated.devices or did in self.a.shared_in_use:
            self.counter_holders[did] = self.counter_holders.get(did, 0) + 1
            return True
        holders = self.counter_holders.get(did, 0)
        if holders:
            self.counter_holders[did] = holders + 1
            return True
        left = self.a.counters_left_of(slice_)
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
        if did in self.a.allocated.devices or did in self.a.shared_in_use:
            return
        used = self.consumed_counters[id(slice_)]
        for use in device.consumes_counters:
            for name, value in use.counters.items():
                used[(use.counter_set, name)] -= value

    def _take(
        self,
        ci: int,
        rd: Request,
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
        pick = Pick(request=rd, did=did, device=device, slice=slice_)
        if shared:
            assert consumed is not None
            pick.shared = True
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
            MaxSizeExceeded: every way on from here exceeds 32 devices in the claim.
            AllocationError: bad input found during the search.
        """
        if ci >= len(self.claims):
            return True
        per_claim = self.requests[ci]
        if ri >= len(per_claim):
            try:
                return self._search(ci + 1, 0, 0, 0, False)
            except MaxSizeExceeded:
                return False
        candidates = per_claim[ri]
        if not in_sub and candidates[0].parent is not None:
            all_exceeded = True
            for sub in range(len(candidates)):
                try:
                    ok = self._search(ci, ri, sub, 0, True)
                except MaxSizeExceeded:
                    continue
                all_exceeded = False
                if ok:
                    self.selected_sub[(ci, ri)] = sub
                    return True
            if all_exceeded:
                raise MaxSizeExceeded
            return False
        rd = candidates[si]
        if rd.mode == "All" and not rd.all_devices:
            return False
        if di >= rd.num_devices:
            return self._search(ci, ri + 1, 0, 0, False)
        if len(self.results[ci]) + rd.num_devices - di > MAX_DEVICES_PER_CLAIM:
            raise MaxSizeExceeded
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
        walk = (
            self._ordered_candidates(ci, ri, si, rd, start)
            if self.a.device_order is not None and not rd.admin_access
            else self._candidates(ci, ri, si, rd, start)
        )
        for ordinal, did, device, slice_ in walk:
            if failed and self._look_now(did, slice_, device) in failed:
                continue
            self._tick()
            undo = self._take(ci, rd, did, device, slice_, must=False)
            if undo is None:
                continue
            self.results[ci][-1].ordinal = ordinal
            if self._descend(undo, ci, ri, si, di, in_sub):
                return True
            self._failed(failed, did, slice_, device)
        return False

    def _candidates(
        self, ci: int, ri: int, si: int, rd: Request, start: int
    ) -> Iterator[tuple[int, DeviceId, Device, ResourceSlice]]:
        """``(ordinal, device id, device, slice)`` of every device of the searched pools
        from ordinal ``start`` on that is not in use and selectable for request
        ``(ci, ri, si)``, in search order; checked as the caller comes to it (after the
        previous candidate's branch is undone).

        Raises:
            AllocationError: an invalid pool reached (before any of its devices).
        """
        # Hot loop (every device of every pool the node sees, per device position): the
        # common "already allocated to another claim" case is tested inline.
        taken = self.a.allocated.devices if not rd.admin_access else ()
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
                yield offset + i, did, device, slice_
            offset += len(entries)

    def _first_fit_applies(self) -> bool:
        """One claim with one request for ``count`` devices, no subrequests, constraints,
        admin access or device order: then the search's first solution is the first fit
        (`_first_fit`)."""
        if len(self.claims) != 1 or self.constraints[0] or not self.a.prune:
            return False
        if self.a.device_order is not None or len(self.requests[0]) != 1:
            return False
        (subs,) = self.requests[0]
        rd = subs[0]
        return len(subs) == 1 and rd.parent is None and rd.mode != "All" and not rd.admin_access

    def _first_fit(self) -> bool:
        """The depth-first search without its recursion, for `_first_fit_applies`'s claims:
        each device position takes the first device after the previous one (the same one
        again if it is shared) that can be taken, never going back. With a single request
        and no constraints a device taken is only ever a unit of the devices' joint
        capacity (a free exclusive device, or one more share of a shared device's capacity
        in use, the request consuming the same on it every time): taking the first one
        keeps a completion whenever any choice does, so this is the search's own first
        solution, found with the same devices tried (the same budget and errors) in the
        same order. True when it found one (state kept). False, with the state restored,
        when a position found no device or a device consumes shared counters (taking it
        changes what other devices can take): the caller runs the search, which proves
        there is no solution the way upstream does (its budget and errors)."""
        rd = self.requests[0][0][0]
        undos: list[Callable[[], None]] = []
        start = 0
        ok = True
        for _ in range(rd.num_devices):
            ok = False
            for ordinal, did, device, slice_ in self._candidates(0, 0, 0, rd, start):
                if device.consumes_counters:
                    break
                self._tick()
                undo = self._take(0, rd, did, device, slice_, must=False)
                if undo is None:
                    continue
                undos.append(undo)
                self.results[0][-1].ordinal = start = ordinal
                if not (self.f.consumable_capacity and device.allow_multiple_allocations):
                    start += 1
                ok = True
                break
            if not ok:
                break
        if ok:
            return True
        for undo in reversed(undos):
            undo()
        self.steps = 0
        return False

    def _ordered(
        self, ci: int, ri: int, si: int, rd: Request
    ) -> list[tuple[DeviceId, Device, ResourceSlice]]:
        """The devices of request ``(ci, ri, si)`` in ``device_order``'s order (asked once
        per request and run): every device of the searched pools not allocated exclusively
        before, ranked."""
        key = (ci, ri, si)
        got = self.ordered.get(key)
        if got is None:
            order = self.a.device_order
            assert order is not None
            taken = self.a.allocated.devices
            candidates: list[tuple[DeviceId, Device, ResourceSlice]] = []
            for pool in self.search_pools:
                if pool.invalid_reason:  # reached here as upstream reaches it: before any device
                    raise AllocationError(f"pool {pool.name} is invalid: {pool.invalid_reason}")
                candidates.extend(e for e in pool.entries if e[0] not in taken)
            ranking = order(self.claims[ci], rd.result_name, candidates)
            got = candidates if ranking is None else [candidates[i] for i in ranking]
            self.ordered[key] = got
        return got

    def _ordered_candidates(
        self, ci: int, ri: int, si: int, rd: Request, start: int
    ) -> Iterator[tuple[int, DeviceId, Device, ResourceSlice]]:
        """`_candidates` over `_ordered` (ordinals are ranks in that order)."""
        entries = self._ordered(ci, ri, si, rd)
        for i in range(max(start, 0), len(entries)):
            did, device, slice_ = entries[i]
            if self._in_use(ci, rd, did):
                continue
            if not self._selectable(ci, ri, si, rd, did, device, slice_):
                continue
            yield i, did, device, slice_

    def _look_now(self, did: DeviceId, slice_: ResourceSlice, device: Device) -> object:
        """The device's look plus the allocation state that tells look-alikes apart (None:
        never treated as interchangeable). Shared devices (consumable capacity) without
        counters are told apart by the capacity in use on them, before and in this call:
        two such devices with the same look and the same capacity in use offer the claims
        the same (the later one's branch is, up to swapping the two, a part of the earlier
        one's), so once one failed at a position the other fails there too."""
        if not self.a.prune:
            return None
        look = self.a.look(slice_, device)
        if look is None:
            return None
        if device.allow_multiple_allocations:
            if not self.f.consumable_capacity or device.consumes_counters:
                return None
            used = self.a.allocated.consumed_capacity.get(did)
            pending = self.allocating_capacity.get(did)
            state = []
            for name in sorted(device.capacity):
                qname = qualified_name(did.driver, name)
                total = (used.get(qname, 0) if used else 0) + (
                    pending.get(qname, 0) if pending else 0
                )
                state.append(total)
            return (look, tuple(state))
        if did in self.a.shared_in_use:
            return None
        return (look, did in self.a.allocated.devices)

    def _failed(
        self, failed: set[object], did: DeviceId, slice_: ResourceSlice, device: Device
    ) -> None:
        """Remember that ``device`` failed at the current position (its look, taken after
        the undo, i.e. in the state it was tried in)."""
        look = self._look_now(did, slice_, device)
        if look is not None:
            failed.add(look)

    def _tick(self) -> None:
        self.steps += 1
        limit = self.a.max_steps
        if limit is not None and self.steps > limit:
            raise SearchBudgetExceeded

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
        return allocation_result(
            self.f, self.results[ci], self._chosen(ci), self.claims[ci], self.node.name
        )

    def _chosen(self, ci: int) -> list[Request]:
        """The request, or the chosen subrequest, of each request of claim ``ci``."""
        return [
            subs[self.selected_sub.get((ci, ri), 0)] for ri, subs in enumerate(self.requests[ci])
        ]
