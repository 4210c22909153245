"""`AllocatedStateTracker`: the devices in use, kept up to date from one call to the next.

kube-scheduler keeps its allocated-device set current from informer events, so a pod's
PreFilter does not rebuild it. Here the DRA snapshot offers the same kind of event stream:
a change feed naming the claims written since a token (`DraSnapshot.claim_changes_since`,
modelled on the node journal of `DeltaSnapshotStore.changes_since`). `sync` reads it and
updates only the claims it names, so a pod's PreFilter costs O(claims changed since the last
pod), not O(claims): forks, reverts and commits of the snapshot are all just "these keys
may show another object now". When the feed cannot answer (the first call, another
snapshot, a journal restart) `sync` falls back to a full listing, compared with what it saw
claim by claim (`state`).

The tracker remembers, per claim key, the claim object it saw and the devices it takes;
claims are immutable here (a changed claim is a new object), so an unchanged key is one
identity check.

It also keeps a journal of the pools whose set of allocated devices changed (`epoch`,
`pools_changed_since`), which `schedsim.dra.filter_cache.AllocationCache` and
`schedsim.dra.exhausted.ExhaustedPools` use to tell what still holds.

With DRAConsumableCapacity on, shared allocations (results with a ``shareID``) are kept the
same way: the ``(device, shareID)`` pairs, the devices they are on, and per device the sum of
their consumed capacity, updated by the claims that changed; a pool whose shared
allocations changed is journaled too (its devices' capacity left changed).

Cost per `sync`: O(claims named by the feed + their results); `state` (full listing):
O(C) identity checks plus O(results) of the claims that changed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from fractions import Fraction
from typing import Protocol

from schedsim.api.resource import ResourceClaim, qualified_name
from schedsim.dra.allocated_state import AllocatedState
from schedsim.dra.types import DeviceId, DraFeatures

__all__ = ["JOURNAL_LIMIT", "AllocatedStateTracker", "ClaimFeed", "PoolKey"]

PoolKey = tuple[str, str]
"""``(driver, pool name)``."""

ClaimKey = tuple[str, str]
"""``(namespace, name)`` of a claim."""

JOURNAL_LIMIT = 65_536
"""Journal entries kept; older epochs are answered "unknown" (None) by
`AllocatedStateTracker.pools_changed_since`."""


class ClaimFeed(Protocol):
    """Where `AllocatedStateTracker.sync` reads the claims: the parts of the framework's
    ``SharedDraManager`` it needs (the DRA snapshot implements them). This is a Protocol:
    implementations don't inherit from it."""

    def claim_changes_since(self, token: object) -> tuple[object, Sequence[ClaimKey] | None]:
        """A new token and the keys of the claims that may have changed since ``token``;
        None when unknown."""
        ...

    def get_resource_claim(self, namespace: str, name: str) -> ResourceClaim | None:
        """The claim ``namespace/name`` now, or None."""
        ...

    def list_resource_claims(self) -> Sequence[ResourceClaim]:
        """Every claim now."""
        ...


class AllocatedStateTracker:
    """The `AllocatedState` of a changing set of claims, updated incrementally.

    With DRAConsumableCapacity on, shared allocations are tracked as well (see the module
    docstring): the same answers as `AllocatedState.from_claims`, incrementally.

    Args:
        features: the DRA feature gates.
    """

    __slots__ = (
        "_consumed",
        "_devices",
        "_features",
        "_journal",
        "_journal_start",
        "_pool_epoch",
        "_seen",
        "_shared",
        "_shared_devices",
        "_token",
    )

    def __init__(self, features: DraFeatures) -> None:
        self._features = features
        # claim key -> (the claim object seen, its exclusive devices, its shared allocations)
        self._seen: dict[ClaimKey, tuple[ResourceClaim, tuple[DeviceId, ...], _Shares]] = {}
        self._devices: dict[DeviceId, int] = {}
        # DRAConsumableCapacity: (device, shareID) of shared allocations; per device their
        # number and consumed capacity (qualified names)
        self._shared: set[tuple[DeviceId, str]] = set()
        self._shared_devices: dict[DeviceId, int] = {}
        self._consumed: dict[DeviceId, dict[str, Fraction]] = {}
        self._token: object = None  # the feed's token `_seen` is up to date with
        # Pools whose allocated devices changed, in order; entry i is epoch _journal_start + i.
        self._journal: list[PoolKey] = []
        self._journal_start = 0
        self._pool_epoch: dict[PoolKey, int] = {}  # pool -> epoch of its last change

    @property
    def epoch(self) -> int | None:
        """The number of pool changes recorded so far. Time: O(1)."""
        return self._journal_start + len(self._journal)

    def _allocated_state(self) -> AllocatedState:
        if not self._features.consumable_capacity:
            return AllocatedState(devices=self._devices.keys())
        return AllocatedState(
            devices=self._devices.keys(),
            shared_device_ids=self._shared,
            consumed_capacity=self._consumed,
            shared_devices=self._shared_devices.keys(),
        )

    def changes_since(self, epoch: int) -> int | None:
        """How many pool changes were recorded after ``epoch``; None when the journal no
        longer reaches back that far. Time: O(1)."""
        if epoch < self._journal_start:
            return None
        return self._journal_start + len(self._journal) - epoch

    def pools_changed_since(self, epoch: int) -> Sequence[PoolKey] | None:
        """The pools whose allocated devices changed after ``epoch`` (an earlier `epoch`),
        with repeats; None when the journal no longer reaches back that far.
        Time: O(changes) (a copy of the journal's tail)."""
        start = epoch - self._journal_start
        if start < 0:
            return None
        return self._journal[start:]

    def pool_epoch(self, pool: PoolKey) -> int:
        """The epoch of ``pool``'s last change (-1: none recorded). Time: O(1)."""
        return self._pool_epoch.get(pool, -1)

    def pool_changed_after(self, pool: PoolKey, epoch: int) -> bool:
        """Whether ``pool``'s allocated devices changed after ``epoch``. Time: O(1)."""
        return self._pool_epoch.get(pool, -1) >= epoch

    def sync(self, feed: ClaimFeed) -> AllocatedState:
        """What the claims of ``feed`` (all claims of the cluster) use, read through its
        change feed: only the claims named since the last `sync` are looked at; a full
        listing (`state`) when the feed does not know (the first call, another snapshot,
        a journal restart).

        Returns:
            an `AllocatedState` whose ``devices`` is a live view: valid until the next call
            (the DynamicResources plugin uses it within one pod's attempt).

        Time: O(claims named + their results); O(C) for a full listing.
        """
        token, changed = feed.claim_changes_since(self._token)
        if changed is None:
            state = self.state(feed.list_resource_claims())
        else:
            if changed:
                get = feed.get_resource_claim
                self._apply({key: get(key[0], key[1]) for key in changed}.items())
            state = self._allocated_state()
        self._token = token
        return state

    def state(self, claims: Iterable[ResourceClaim]) -> AllocatedState:
        """What ``claims`` (all claims of the cluster) use: each compared with the object
        seen under its key, claims not listed dropped.

        Returns:
            an `AllocatedState` whose ``devices`` is a live view: valid until the next call.

        Time: O(C) identity checks + O(results) of the claims that changed.
        """
        self._token = None  # not read through a feed: the next `sync` lists everything
        seen = self._seen
        current: dict[ClaimKey, ResourceClaim] = {}
        updates: list[tuple[ClaimKey, ResourceClaim | None]] = []
        for claim in claims:
            key = (claim.namespace, claim.name)
            current[key] = claim
            old = seen.get(key)
            if old is None or old[0] is not claim:
                updates.append((key, claim))
        if len(current) != len(seen) or updates:
            updates.extend((key, None) for key in seen.keys() - current.keys())
        self._apply(updates)
        return self._allocated_state()

    def _apply(self, updates: Iterable[tuple[ClaimKey, ResourceClaim | None]]) -> None:
        """Make each key show its claim (None: gone); journal the pools whose set of
        devices in use changed."""
        seen = self._seen
        devices = self._devices
        # device -> whether it was in use before (devices whose count crossed 0)
        touched: dict[DeviceId, bool] = {}
        for key, claim in updates:
            old = seen.get(key)
            if old is None:
                if claim is None:
                    continue
            elif old[0] is claim:
                continue
            elif claim is not None and old[0].status.allocation is claim.status.allocation:
                seen[key] = (claim, old[1], old[2])  # e.g. only status.reservedFor changed
                continue
            mine, shares = ((), ()) if claim is None else self._uses(claim)
            before, shared_before = ((), ()) if old is None else (old[1], old[2])
            if claim is None:
                del seen[key]
            else:
                seen[key] = (claim, mine, shares)
            if shares != shared_before:
                self._share(shared_before, -1)
                self._share(shares, 1)
            if mine == before:
                continue
            for did in before:
                n = devices[did] - 1
                if n:
                    devices[did] = n
                else:
                    del devices[did]
                    touched.setdefault(did, True)
            for did in mine:
                n = devices.get(did, 0)
                if not n:
                    touched.setdefault(did, False)
                devices[did] = n + 1
        for did, was in touched.items():
            if (did in devices) != was:
                self._record((did.driver, did.pool))

    def _uses(self, claim: ResourceClaim) -> tuple[tuple[DeviceId, ...], _Shares]:
        """The claim's exclusive devices and shared allocations (as `from_claims` splits
        them: a result with a shareID is shared when DRAConsumableCapacity is on)."""
        allocation = claim.status.allocation
        if allocation is None:
            return (), ()
        if not self._features.consumable_capacity:
            return _exclusive_devices(claim), ()
        mine: list[DeviceId] = []
        shares: list[tuple[DeviceId, str, tuple[tuple[str, Fraction], ...]]] = []
        for r in allocation.results:
            if r.admin_access:
                continue
            did = DeviceId(r.driver, r.pool, r.device)
            if r.share_id is not None:
                consumed = tuple(
                    (qualified_name(r.driver, n), v) for n, v in r.consumed_capacity.items()
                )
                shares.append((did, r.share_id, consumed))
            else:
                mine.append(did)
        return tuple(mine), tuple(shares)

    def _share(self, shares: _Shares, sign: int) -> None:
        """Add (``sign`` 1) or take away (-1) shared allocations; journal their pools."""
        counts = self._shared_devices
        for did, share_id, consumed in shares:
            if sign > 0:
                self._shared.add((did, share_id))
                counts[did] = counts.get(did, 0) + 1
            else:
                self._shared.discard((did, share_id))
                n = counts[did] - 1
                if n:
                    counts[did] = n
                else:
                    del counts[did]
            per_device = self._consumed.setdefault(did, {})
            for name, value in consumed:
                per_device[name] = per_device.get(name, Fraction(0)) + sign * value
            if did not in counts:
                del self._consumed[did]
            self._record((did.driver, did.pool))

    def _record(self, pool: PoolKey) -> None:
        journal = self._journal
        if len(journal) >= JOURNAL_LIMIT:
            drop = len(journal) // 2
            del journal[:drop]
            self._journal_start += drop
        self._pool_epoch[pool] = self._journal_start + len(journal)
        journal.append(pool)


_Shares = tuple[tuple[DeviceId, str, tuple[tuple[str, Fraction], ...]], ...]
"""A claim's shared allocations: (device, shareID, consumed capacity by qualified name)."""


def _exclusive_devices(claim: ResourceClaim) -> tuple[DeviceId, ...]:
    """The devices an allocated claim takes (admin-access results take none)."""
    allocation = claim.status.allocation
    if allocation is None:
        return ()
    return tuple(
        DeviceId(r.driver, r.pool, r.device) for r in allocation.results if not r.admin_access
    )
