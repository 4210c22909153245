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

The answers equal the allocator's on every call (checked by
``tests/dra/test_filter_cache.py``, which runs workloads with and without the cache).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

from schedsim.api.core import Node
from schedsim.api.resource import AllocationResult, DeviceClass, ResourceClaim, ResourceClaimSpec
from schedsim.dra.pools import Pool
from schedsim.dra.tracker import AllocatedStateTracker

__all__ = ["MISS", "AllocationCache"]

MISS = object()
"""`AllocationCache.get`'s answer when nothing valid is kept (None means "does not fit")."""

_Outcome = list[AllocationResult] | None


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
        "_entries",
        "_spec_ids",
        "_spec_values",
        "_tracker",
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
        self._spec_ids[ids] = (specs, key)
        return key

    def get(
        self, key: int, node: Node, pools: list[Pool], independent: bool = False
    ) -> _Outcome | object:
        """The outcome kept for specs ``key`` on ``node`` if it still holds, else `MISS`.
        ``independent``: the outcome is the same on every node seeing ``pools``
        (`PoolCache.node_independent`), so one entry serves them all."""
        entry = self._entries.get((key, id(pools) if independent else node.name))
        if (
            entry is None
            or entry.pools is not pools
            or (not independent and entry.node is not node)
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
