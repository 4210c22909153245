"""`AllocatedStateTracker`: the devices in use, kept up to date from one call to the next.

kube-scheduler keeps its allocated-device set current from informer events, so a pod's
PreFilter does not rebuild it. The DynamicResources plugin here used to rebuild it from
every claim for every pod (`AllocatedState.from_claims`), which made a cycle quadratic in
the claims. The tracker remembers each claim object it has seen and what it contributed;
a call compares the identities of the current claim objects with those it saw (claims are
immutable here: a changed claim is a new object; the comparison is set arithmetic at C
speed) and updates only what changed, so forks, reverts and commits of the snapshot are all
just "other objects".

Cost per call: O(C) C-level work (ids, set differences) plus O(results) of the claims that
changed; `AllocatedState.from_claims` costs O(C x results) of attribute work.
"""

from __future__ import annotations

from collections.abc import Iterable

from schedsim.api.positions import differences
from schedsim.api.resource import ResourceClaim
from schedsim.dra.allocator import AllocatedState
from schedsim.dra.types import DeviceId, DraFeatures

__all__ = ["AllocatedStateTracker"]


class AllocatedStateTracker:
    """The `AllocatedState` of a changing set of claims, updated incrementally.

    With DRAConsumableCapacity on, shared allocations need capacity sums, and `state`
    falls back to `AllocatedState.from_claims` (the alpha feature's inputs are small).

    Args:
        features: the DRA feature gates.
    """

    __slots__ = ("_devices", "_features", "_last_ids", "_seen")

    def __init__(self, features: DraFeatures) -> None:
        self._features = features
        # id(claim) -> (the claim (keeps the id unique), its exclusive devices)
        self._seen: dict[int, tuple[ResourceClaim, tuple[DeviceId, ...]]] = {}
        self._devices: dict[DeviceId, int] = {}
        self._last_ids: list[int] = []  # id of each claim of the last call, in its order

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
        if len(ids) == len(last) and len(seen) == len(ids):
            # the usual case: the same list with a few claims replaced in place
            changed: list[int] = []
            differences(ids, last, 0, len(ids), changed)
            gone = {last[i] for i in changed} - set(ids)
            added = {ids[i] for i in changed} - seen.keys()
        else:
            current = set(ids)
            gone = seen.keys() - current
            added = current - seen.keys()
        self._last_ids = ids
        for key in gone:  # claims gone (or replaced by a new object)
            self._drop(seen.pop(key))
        if added:
            devices = self._devices
            by_id = dict(zip(ids, claims, strict=True))
            for key in added:
                claim = by_id[key]
                mine = _exclusive_devices(claim)
                for did in mine:
                    devices[did] = devices.get(did, 0) + 1
                seen[key] = (claim, mine)
        return AllocatedState(devices=self._devices.keys())

    def _drop(self, entry: tuple[ResourceClaim, tuple[DeviceId, ...]]) -> None:
        devices = self._devices
        for did in entry[1]:
            n = devices[did] - 1
            if n:
                devices[did] = n
            else:
                del devices[did]


def _exclusive_devices(claim: ResourceClaim) -> tuple[DeviceId, ...]:
    """The devices an allocated claim takes (admin-access results take none)."""
    allocation = claim.status.allocation
    if allocation is None:
        return ()
    return tuple(
        DeviceId(r.driver, r.pool, r.device) for r in allocation.results if not r.admin_access
    )
