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

Cost per `sync`: O(claims named by the feed + their results); `state` (full listing):
O(C) identity checks plus O(results) of the claims that changed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from schedsim.api.resource import ResourceClaim
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

    With DRAConsumableCapacity on, shared allocations need capacity sums, and `state`/`sync`
    fall back to `AllocatedState.from_claims` (the alpha feature's inputs are small); the
    journal is not kept then (`epoch` is None).

    Args:
        features: the DRA feature gates.
    """

    __slots__ = (
        "_devices",
        "_features",
        "_journal",
        "_journal_start",
        "_pool_epoch",
        "_seen",
        "_token",
    )

    def __init__(self, features: DraFeatures) -> None:
        self._features = features
        # claim key -> (the claim object seen, its exclusive devices)
        self._seen: dict[ClaimKey, tuple[ResourceClaim, tuple[DeviceId, ...]]] = {}
        self._devices: dict[DeviceId, int] = {}
        self._token: object = None  # the feed's token `_seen` is up to date with
        # Pools whose allocated devices changed, in order; entry i is epoch _journal_start + i.
        self._journal: list[PoolKey] = []
        self._journal_start = 0
        self._pool_epoch: dict[PoolKey, int] = {}  # pool -> epoch of its last change

    @property
    def epoch(self) -> int | None:
        """The number of pool changes recorded so far (None: not tracked, consumable
        capacity on). Time: O(1)."""
        if self._features.consumable_capacity:
            return None
        return self._journal_start + len(self._journal)

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
        if self._features.consumable_capacity:
            return AllocatedState.from_claims(feed.list_resource_claims(), self._features)
        token, changed = feed.claim_changes_since(self._token)
        if changed is None:
            state = self.state(feed.list_resource_claims())
        else:
            if changed:
                get = feed.get_resource_claim
                self._apply({key: get(key[0], key[1]) for key in changed}.items())
            state = AllocatedState(devices=self._devices.keys())
        self._token = token
        return state

    def state(self, claims: Iterable[ResourceClaim]) -> AllocatedState:
        """What ``claims`` (all claims of the cluster) use: each compared with the object
        seen under its key, claims not listed dropped.

        Returns:
            an `AllocatedState` whose ``devices`` is a live view: valid until the next call.

        Time: O(C) identity checks + O(results) of the claims that changed.
        """
        if self._features.consumable_capacity:
            return AllocatedState.from_claims(claims, self._features)
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
        return AllocatedState(devices=self._devices.keys())

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
                seen[key] = (claim, old[1])  # e.g. only status.reservedFor changed
                continue
            mine = () if claim is None else _exclusive_devices(claim)
            before = () if old is None else old[1]
            if claim is None:
                del seen[key]
            else:
                seen[key] = (claim, mine)
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

    def _record(self, pool: PoolKey) -> None:
        journal = self._journal
        if len(journal) >= JOURNAL_LIMIT:
            drop = len(journal) // 2
            del journal[:drop]
            self._journal_start += drop
        self._pool_epoch[pool] = self._journal_start + len(journal)
        journal.append(pool)


def _exclusive_devices(claim: ResourceClaim) -> tuple[DeviceId, ...]:
    """The devices an allocated claim takes (admin-access results take none)."""
    allocation = claim.status.allocation
    if allocation is None:
        return ()
    return tuple(
        DeviceId(r.driver, r.pool, r.device) for r in allocation.results if not r.admin_access
    )
