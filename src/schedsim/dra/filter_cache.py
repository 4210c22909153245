"""`AllocationCache`: one node's allocation reused by later pods whose claims are equal.

kube-scheduler runs the structured allocator in DynamicResources' Filter for every node it
filters, pod after pod; so did schedsim. With kube-scheduler's placement that is ~230 of
500 nodes per pod in scheduler_perf's SchedulingWithResourceClaimTemplate, although the
pods' claims come from one template and most nodes did not change since the last pod. The
Cluster Autoscaler groups equivalent pods the same way (``podsEquivalenceGroup``: one
scheduling check for a group of pods with the same controller and spec).

What `Allocator.allocate` returns for a node is a function of:

* the specs of the claims to allocate (requests, constraints, config: the results name
  requests, never the claim's name or namespace);
* the node object (name, labels) and the pools it sees (`PoolCache` hands out one list per
  node while the slices and the node object stay the same);
* the devices in use in those pools (`AllocatedStateTracker` keeps a journal of the pools
  whose allocated devices changed);
* the DeviceClasses, the slices, the feature gates and the search budget (the "world":
  any change drops every entry).

So an entry ``(claim specs, node) -> result`` holds as long as the node object and its pool
list are the same objects, no pool of it changed since the entry's epoch, and the world is
the same. A lookup costs O(min(pool changes since the entry, pools the node sees)): a
node-local pool is one check. Only complete outcomes are kept (an allocation, or "does not
fit here"); errors (their messages name the claim) and timeouts are recomputed.

With DRAConsumableCapacity on, the journal also names the pools whose shared allocations
changed (their devices' capacity left), and DynamicResources' Reserve gives every shared
result of a reused answer the claim's own ``shareID``. The reused `AllocationResult`
objects are immutable and shared between the claims they go into.

**Look-alike nodes.** Filter needs only whether the claims fit on a node; the allocation
itself is needed on the node Reserve gets. Nodes whose pools are all local to them
(``nodeName`` slices, no per-device node selection, no device binding to the node) and hold
the same devices in the same order (names, attributes, capacity, counters, taints, binding
conditions: everything the allocator reads but the pool, slice and node names), with the
same devices in use and the same capacity consumed on each, get the same answer: the
search walks them identically (CEL sees no pool or node name; results name them, the
verdict does not). The name is blind to the order of a slice's devices and to their names
(CEL sees no device name either, and no constraint names one): a slice is named by the
multiset of its devices' (content, use) pairs, so a node whose GPU 3 holds a share and one
whose GPU 5 holds the same share are in one state. The verdict is whether a solution
exists, which the search, being complete (it backtracks over every candidate; a timeout
is an error and never kept), finds whatever order it tries the devices in: permuting
devices of equal content within a slice maps solutions to solutions. The search budget
(``max_steps``, from ``filterTimeout``) is the exception: another order may need more
devices tried. So the order-blind name is used only when no order can exhaust the budget:
one claim set's search tree has at most (D + 1) ** T positions for D devices and T
devices requested (every request ``ExactCount``), and when that is within the budget
every order ends; otherwise the name keeps the devices' order and names, as the search
walks them. For one claim asking for one device (one ``ExactCount`` request of count 1, no
constraint, no admin access) on a node whose devices consume no shared counters and whose
pools are all valid, a
solution exists exactly when some device can be taken on its own, which depends only on
that device's content and use: the name is then the set of (driver, content, use) of the
node's devices, blind to how many devices share each. So on a miss
`look_alike` names the node's DRA state and `verdict`
answers "fits" / "does not fit" from any node that was in that state for equal specs; a
"fits" is kept as `FITS` (Filter passes the node without results: Reserve allocates on the
chosen node, `get` with ``need_results``). This is what turns one allocator run per node
and claim spec into one per distinct node state: the GPU trace's 1,213 nodes hold a few
GPU models, most of them idle.

The answers equal the allocator's on every call (checked by
``tests/dra/test_filter_cache.py``, which runs workloads with and without the cache).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from typing import NamedTuple

from schedsim.api.core import Node
from schedsim.api.resource import AllocationResult, DeviceClass, ResourceClaim, ResourceClaimSpec
from schedsim.dra.allocated_state import AllocatedState
from schedsim.dra.pools import Pool
from schedsim.dra.tracker import AllocatedStateTracker
from schedsim.dra.types import DeviceId

__all__ = ["FITS", "MISS", "AllocationCache"]

MISS = object()
"""`AllocationCache.get`'s answer when nothing valid is kept (None means "does not fit")."""

FITS = object()
"""`AllocationCache.get`'s answer when the claims are known to fit on the node (a look-alike
node's verdict) but no allocation is kept; ``need_results`` turns it into `MISS`."""

_Outcome = list[AllocationResult] | None | object


class _Entry:
    __slots__ = ("epoch", "node", "pool_keys", "pools", "result")

    def __init__(
        self,
        node: Node,
        pools: list[Pool],
        pool_keys: frozenset[tuple[str, str]],
        epoch: int,
        result: _Outcome,
    ) -> None:
        self.node = node
        self.pools = pools
        self.pool_keys = pool_keys
        self.epoch = epoch
        self.result = result


class AllocationCache:
    """Allocation outcomes per (claim specs, node), valid while the node's DRA state holds.

    One per DynamicResources plugin instance; not thread-safe. Per pod: `begin` (PreFilter),
    `spec_key` for the claims to allocate, then per node `get` and, on a miss, `put`.

    Args:
        tracker: the plugin's allocated-state tracker (the journal of changed pools).
    """

    __slots__ = (
        "_classes",
        "_depths",
        "_device_ids",
        "_entries",
        "_one_device",
        "_pool_uses",
        "_shape_ids",
        "_shapes",
        "_spec_ids",
        "_spec_values",
        "_tracker",
        "_uses",
        "_verdicts",
        "_world",
        "generation",
    )

    def __init__(self, tracker: AllocatedStateTracker) -> None:
        self._tracker = tracker
        self._world: object = None
        self._classes: tuple[DeviceClass, ...] = ()
        # (specs key, node name, or id of a node-independent pool list) -> entry
        self._entries: dict[tuple[int, str | int], _Entry] = {}
        # id-tuple of spec objects -> (the specs, kept alive so the ids stay theirs, key)
        self._spec_ids: dict[tuple[int, ...], tuple[tuple[ResourceClaimSpec, ...], int]] = {}
        # repr of the specs -> [(specs, key)] (equal reprs compared with ==)
        # Bumped whenever `begin` drops every entry (the world changed).
        self.generation = 0
        self._spec_values: dict[str, list[tuple[tuple[ResourceClaimSpec, ...], int]]] = {}
        # look-alike nodes (module docstring): id of a node's pool list -> (the list, the id
        # of its devices' content or None: not a look-alike candidate, and per pool where
        # its devices sit); content -> id; a device's content (all but its name) -> id
        self._shapes: dict[int, _Shape] = {}
        self._shape_ids: dict[object, int] = {}
        self._device_ids: dict[object, int] = {}
        # pool -> (its tracker epoch, its entries, the ids of its devices' use blind to
        # their order and in order, the set of its devices' (driver, content, use) and
        # that set's id); use -> id
        self._pool_uses: dict[
            tuple[str, str], tuple[int, object, int, int, frozenset[tuple[object, ...]], int]
        ] = {}
        self._uses: dict[tuple[object, ...], int] = {}
        # specs key -> T of the module docstring (None: some request is not ExactCount),
        # and whether the specs are one claim asking for one device (`_one_device`)
        self._depths: dict[int, int | None] = {}
        self._one_device: dict[int, bool] = {}
        # (specs key, shape id, use ids) -> whether the claims fit
        self._verdicts: dict[tuple[int, int, tuple[int, ...]], bool] = {}

    def begin(self, world: object, classes: Sequence[DeviceClass]) -> bool:
        """Start a pod's cycle; drop every entry if ``world`` (an equality-compared token of
        the slices, gates and budget) or any DeviceClass object changed.

        Returns:
            False when the cache cannot be used for this pod (the tracker keeps no journal).
        """
        if self._tracker.epoch is None:
            return False
        if world == self._world and classes is self._classes:
            return True  # the plugin hands in the same tuple while the classes stay
        if (
            world != self._world
            or len(classes) != len(self._classes)
            or not all(map(operator.is_, classes, self._classes))
        ):
            self._world = world
            self._classes = tuple(classes)
            self._entries.clear()
            self._shapes.clear()
            self._shape_ids.clear()
            self._device_ids.clear()
            self._pool_uses.clear()
            self._uses.clear()
            self._verdicts.clear()
            self.generation += 1
        return True

    def spec_key(self, claims: Sequence[ResourceClaim]) -> int:
        """A small int naming the claims' specs: equal specs (``==``), equal key. Claims made
        from one template share their spec object and are found by identity; a new spec
        object is bucketed by its ``repr`` (specs hold dicts, so they do not hash) and
        compared with ``==`` within the bucket. Time: O(claims), plus O(spec size) the first
        time a spec object is seen."""
        specs = tuple(c.spec for c in claims)
        ids = tuple(map(id, specs))
        hit = self._spec_ids.get(ids)
        if hit is not None:
            return hit[1]
        bucket = self._spec_values.setdefault(repr(specs), [])
        key = next((k for other, k in bucket if other == specs), None)
        if key is None:
            key = len(self._spec_ids)
            bucket.append((specs, key))
            self._depths[key] = _search_depth(specs)
            self._one_device[key] = _one_device(specs)
        self._spec_ids[ids] = (specs, key)
        return key

    def get(
        self,
        key: int,
        node: Node,
        pools: list[Pool],
        independent: bool = False,
        need_results: bool = False,
    ) -> _Outcome:
        """The outcome kept for specs ``key`` on ``node`` if it still holds, else `MISS`
        (`FITS`: fits, no allocation kept; with ``need_results`` that is a `MISS`).
        ``independent``: the outcome is the same on every node seeing ``pools``
        (`PoolCache.node_independent`), so one entry serves them all."""
        entry = self._entries.get((key, id(pools) if independent else node.name))
        if (
            entry is None
            or entry.pools is not pools
            or (not independent and entry.node is not node)
            or (need_results and entry.result is FITS)
        ):
            return MISS
        tracker = self._tracker
        keys = entry.pool_keys
        since = entry.epoch
        changes = tracker.changes_since(since)
        if changes == 0:
            return entry.result
        if changes is not None and changes <= len(keys):
            changed = tracker.pools_changed_since(since)
            assert changed is not None
            if any(p in keys for p in changed):
                return MISS
        elif any(tracker.pool_changed_after(p, since) for p in keys):
            return MISS
        return entry.result

    def get_kept(self, key: int, node: Node) -> _Outcome:
        """`get` for a node whose entry is per node (not node-independent) and was made for
        this ``node`` object, without its pool list: within one world, one Node object sees
        one pool list (`PoolCache.pools`), so the entry's is the node's. `MISS` whenever
        `get` would need more (no such entry, more than 4 pools: then `get` uses the
        journal). Time: O(1)."""
        entry = self._entries.get((key, node.name))
        if entry is None or entry.node is not node or len(entry.pool_keys) > 4:
            return MISS
        since = entry.epoch
        epoch = self._tracker.pool_epoch
        for p in entry.pool_keys:
            if epoch(p) >= since:
                return MISS
        return entry.result

    def put(
        self,
        key: int,
        node: Node,
        pools: list[Pool],
        result: _Outcome,
        independent: bool = False,
    ) -> None:
        """Keep ``result`` (the allocator's answer for specs ``key`` on ``node`` with the
        tracker's current state; ``independent`` as for `get`)."""
        epoch = self._tracker.epoch
        assert epoch is not None
        slot: str | int = id(pools) if independent else node.name
        old = self._entries.get((key, slot))
        pool_keys = (
            old.pool_keys
            if old is not None and old.pools is pools
            else frozenset((p.driver, p.name) for p in pools)
        )
        self._entries[(key, slot)] = _Entry(node, pools, pool_keys, epoch, result)

    # ------------------------------------------------------------------ look-alike nodes

    def look_alike(
        self,
        key: int,
        node: Node,
        pools: list[Pool],
        allocated: AllocatedState,
        shared_in_use: AbstractSet[DeviceId],
        budget: int | None,
    ) -> tuple[int, int, tuple[int, ...]] | None:
        """The name of the node's DRA state for specs ``key`` (module docstring), or None
        when its pools are not all local to it. ``allocated``/``shared_in_use``: what the
        allocator reads (the tracker's live view, synced for this pod); ``budget``: the
        allocator's ``max_steps`` (None: no limit), which decides whether the name may be
        blind to the devices' order. Time: O(1) per pool, plus O(pool's devices x log) for
        a pool whose use changed."""
        hit = self._shapes.get(id(pools))
        if hit is None or hit.pools is not pools:
            hit = self._shapes[id(pools)] = self._shape(node, pools)
        if hit.blind is None:
            return None
        depth = self._depths[key]
        blind = budget is None or (
            depth is not None and depth <= 64 and (hit.devices + 1) ** depth <= budget
        )
        tracker = self._tracker
        pool_uses = self._pool_uses
        ids = self._uses
        kept_uses = []
        for p, layout in zip(pools, hit.layouts, strict=True):
            pk = (p.driver, p.name)
            epoch = tracker.pool_epoch(pk)
            kept = pool_uses.get(pk)
            if kept is None or kept[0] != epoch or kept[1] is not p.entries:
                blind_use, ordered_use, present = _pool_use(p, layout, allocated, shared_in_use)
                kept = pool_uses[pk] = (
                    epoch,
                    p.entries,
                    ids.setdefault(blind_use, len(ids)),
                    ids.setdefault(ordered_use, len(ids)),
                    present,
                    ids.setdefault(("any", present), len(ids)),
                )
            kept_uses.append(kept)
        if blind and hit.any is not None and self._one_device[key]:
            if len(kept_uses) == 1:  # the pool's own id (the usual one GPU slice per node)
                return (key, hit.any, (kept_uses[0][5],))
            union = frozenset().union(*(kept[4] for kept in kept_uses))
            return (key, hit.any, (ids.setdefault(("any", union), len(ids)),))
        if blind:
            return (key, hit.blind, tuple(kept[2] for kept in kept_uses))
        assert hit.ordered is not None
        return (key, hit.ordered, tuple(kept[3] for kept in kept_uses))

    def verdict(self, name: tuple[int, int, tuple[int, ...]]) -> bool | None:
        """Whether the claims fitted on a node in the state `look_alike` named (None:
        not known)."""
        return self._verdicts.get(name)

    def put_verdict(self, name: tuple[int, int, tuple[int, ...]], fits: bool) -> None:
        """Keep the allocator's complete answer for a node in the state ``name``."""
        self._verdicts[name] = fits

    def _shape(self, node: Node, pools: list[Pool]) -> _Shape:
        """The `_Shape` of a node's pool list: its content with each slice's devices taken
        as a multiset, and in order with their names (the module docstring); ids None
        when the node is not a look-alike candidate."""
        blind_parts = []
        ordered_parts = []
        counters = False
        layouts = []
        device_ids = self._device_ids
        for p in pools:
            blind_slices = []
            ordered_slices = []
            ids: list[int] = []
            ends: list[int] = []
            for s in p.slices:
                if s.node_name != node.name or s.per_device_node_selection:
                    return _Shape(pools, None, None, (), 0)
                contents = []
                for d in s.devices:
                    if d.binds_to_node or d.node_name or d.node_selector or d.all_nodes:
                        return _Shape(pools, None, None, (), 0)
                    content = (
                        d.allow_multiple_allocations,
                        tuple(sorted(d.attributes.items())),
                        tuple(sorted(d.capacity.items())),
                        d.consumes_counters,
                        d.taints,
                        d.binding_conditions,
                        d.binding_failure_conditions,
                    )
                    try:
                        contents.append(device_ids.setdefault(content, len(device_ids)))
                    except TypeError:  # an unhashable value: never a look-alike
                        return _Shape(pools, None, None, (), 0)
                    counters = counters or bool(d.consumes_counters)
                ids.extend(contents)
                ends.append(len(ids))
                head = (s.driver, s.pool.generation, s.pool.resource_slice_count, s.shared_counters)
                blind_slices.append((*head, tuple(sorted(contents))))
                ordered_slices.append(
                    (*head, tuple(zip(contents, (d.name for d in s.devices), strict=True)))
                )
            if len(ids) != len(p.entries):  # entries are the slices' devices, in order
                return _Shape(pools, None, None, (), 0)
            pool_head = (p.driver, p.incomplete, p.invalid_reason, len(p.entries))
            blind_parts.append((*pool_head, tuple(blind_slices)))
            ordered_parts.append((*pool_head, tuple(ordered_slices)))
            layouts.append(_Layout(tuple(ids), tuple(ends)))
        shapes = self._shape_ids
        try:
            blind = shapes.setdefault(("blind", *blind_parts), len(shapes))
            ordered = shapes.setdefault(("ordered", *ordered_parts), len(shapes))
        except TypeError:  # an unhashable value: never a look-alike
            return _Shape(pools, None, None, (), 0)
        heads = sorted((p.driver, p.incomplete, p.invalid_reason) for p in pools)
        # (an invalid pool: whether the search errs depends on where it sits)
        plain = not counters and not any(p.invalid_reason for p in pools)
        any_id = shapes.setdefault(("any", *heads), len(shapes)) if plain else None
        devices = sum(len(p.entries) for p in pools)
        return _Shape(pools, blind, ordered, tuple(layouts), devices, any_id)


class _Shape(NamedTuple):
    """A node's pool list as `AllocationCache.look_alike` names it: the ids of its content
    blind to the devices' order and names and in order (None: not a look-alike), where
    each pool's devices sit, how many devices it has, and the id of what a claim for one
    device sees beyond the devices (None: some device consumes shared counters, or a pool
    is invalid)."""

    pools: list[Pool]
    blind: int | None
    ordered: int | None
    layouts: tuple[_Layout, ...]
    devices: int
    any: int | None = None  # its pools' heads' id; None: counters used, or a pool invalid


class _Layout(NamedTuple):
    """Where a pool's devices sit, for `_pool_use`: the content id of each entry (in
    ``Pool.entries`` order) and the end of each slice's run of entries."""

    content: tuple[int, ...]
    ends: tuple[int, ...]


def _one_device(specs: Sequence[ResourceClaimSpec]) -> bool:
    """Whether ``specs`` are one claim asking for one device: one ``ExactCount`` request of
    count 1, without admin access, and no constraint (the module docstring)."""
    if len(specs) != 1 or specs[0].constraints or len(specs[0].requests) != 1:
        return False
    exactly = specs[0].requests[0].exactly
    return (
        exactly is not None
        and exactly.allocation_mode == "ExactCount"
        and exactly.count == 1
        and not exactly.admin_access
    )


def _search_depth(specs: Sequence[ResourceClaimSpec]) -> int | None:
    """T of the module docstring: the devices the claims request, if every request is an
    ``ExactCount`` one (else None: its search tree is not bounded by the count)."""
    total = 0
    for spec in specs:
        for request in spec.requests:
            exactly = request.exactly
            if exactly is None or exactly.allocation_mode != "ExactCount":
                return None
            total += exactly.count
    return total


def _pool_use(
    pool: Pool,
    layout: _Layout,
    allocated: AllocatedState,
    shared_in_use: AbstractSet[DeviceId],
) -> tuple[tuple[object, ...], tuple[object, ...], frozenset[tuple[object, ...]]]:
    """What ``pool``'s devices hold, per slice: (content id, in use exclusively, shared,
    capacity consumed) per device, sorted (blind to which of the devices of equal content
    holds what) and in order; and the set of (driver, content id, use) of its devices."""
    devices = allocated.devices
    consumed = allocated.consumed_capacity
    content = layout.content
    per_device: list[tuple[object, ...]] = []
    for k, (did, _, _) in enumerate(pool.entries):
        used = consumed.get(did)
        per_device.append(
            (
                content[k],
                did in devices,
                did in shared_in_use,
                used is not None,
                () if used is None else tuple(sorted(used.items())),
            )
        )
    blind: list[object] = ["blind"]
    start = 0
    for end in layout.ends:
        blind.append(tuple(sorted(per_device[start:end])))
        start = end
    present = frozenset((pool.driver, *d) for d in per_device)
    return tuple(blind), ("ordered", *per_device), present
