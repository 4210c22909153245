"""`AllocatedStateTracker`: the devices in use, kept up to date from one call to the next.

kube-scheduler keeps its allocated-device set current from informer events, so a pod's
PreFilter does not rebuild it. The DynamicResources plugin here used to rebuild it from
every claim for every pod (`AllocatedState.from_claims`), which made a cycle quadratic in
the claims. The tracker remembers each claim object it has seen and what it contributed;
a call compares the identities of the current claim objects with those it saw (claims are
immutable here: a changed claim is a new object; the comparison is set arithmetic at C
speed) and updates only what changed, so forks, reverts and commits of the snapshot are all
just "other objects".

It also keeps a journal of the pools whose set of allocated devices changed (`epoch`,
`pools_changed_since`), which `schedsim.dra.filter_cache.AllocationCache` uses to tell
whether an allocation computed for a node earlier still holds.

Cost per call: O(C) C-level work (ids, slice comparisons) plus O(results) of the claims that
changed; `AllocatedState.from_claims` costs O(C x results) of attribute work.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from schedsim.api.positions import differences
from schedsim.api.resource import ResourceClaim
from schedsim.dra.allocator import AllocatedState
from schedsim.dra.types import DeviceId, DraFeatures

__all__ = ["JOURNAL_LIMIT", "AllocatedStateTracker", "PoolKey"]

PoolKey = tuple[str, str]
"""``(driver, pool name)``."""

JOURNAL_LIMIT = 65_536
"""Journal entries kept; older epochs are answered "unknown" (None) by
`AllocatedStateTracker.pools_changed_since`."""


class AllocatedStateTracker:
    """The `AllocatedState` of a changing set of claims, updated incrementally.

    With DRAConsumableCapacity on, shared allocations need capacity sums, and `state`
    falls back to `AllocatedState.from_claims` (the alpha feature's inputs are small); the
    journal is not kept then (`epoch` is None).

    Args:
        features: the DRA feature gates.
    """

    __slots__ = (
        "_devices",
        "_features",
        "_journal",
        "_journal_start",
        "_last_ids",
        "_pool_epoch",
        "_seen",
    )

    def __init__(self, features: DraFeatures) -> None:
        self._features = features
        # id(claim) -> (the claim (keeps the id unique), its exclusive devices)
        self._seen: dict[int, tuple[ResourceClaim, tuple[DeviceId, ...]]] = {}
        self._devices: dict[DeviceId, int] = {}
        self._last_ids: list[int] = []  # id of each claim of the last call, in its order
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

    def state(self, claims: Iterable[ResourceClaim]) -> AllocatedState:
        """What ``claims`` (all claims of the cluster) use.

        Returns:
            an `AllocatedState` whose ``devices`` is a live view: valid until the next call
            (the DynamicResources plugin uses it within one pod's attempt).
        """
        if self._features.consumable_capacity:
            return AllocatedState.from_claims(claims, self._features)
        claims = claims if isinstance(claims, list | tuple) else list(claims)
        ids = list(map(id, claims))
        last = self._last_ids
        seen = self._seen
        changed: list[int] | None = None
        if len(ids) == len(last) and len(seen) == len(ids):
            # the usual case: the same list with a few claims replaced in place
            changed = []
            differences(ids, last, 0, len(ids), changed)
            # A claim object sits at one position only (one key each), so an old object still
            # present moved to another changed position: O(changes), not a set of all ids.
            now = {ids[i] for i in changed}
            gone = {last[i] for i in changed} - now
            added = now - seen.keys()
        else:
            current = set(ids)
            gone = seen.keys() - current
            added = current - seen.keys()
        self._last_ids = ids
        devices = self._devices
        # device -> whether it was in use before this call (devices whose count crossed 0)
        touched: dict[DeviceId, bool] = {}
        for key in gone:  # claims gone (or replaced by a new object)
            for did in seen.pop(key)[1]:
                n = devices[did] - 1
                if n:
                    devices[did] = n
                else:
                    del devices[did]
                    touched.setdefault(did, True)
        if added:
            by_id = (
                {ids[i]: claims[i] for i in changed}
                if changed is not None
                else dict(zip(ids, claims, strict=True))
            )
            for key in added:
                claim = by_id[key]
                mine = _exclusive_devices(claim)
                for did in mine:
                    n = devices.get(did, 0)
                    if not n:
                        touched.setdefault(did, False)
                    devices[did] = n + 1
                seen[key] = (claim, mine)
        for did, was in touched.items():
            if (did in devices) != was:
                self._record((did.driver, did.pool))
        return AllocatedState(devices=devices.keys())

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
