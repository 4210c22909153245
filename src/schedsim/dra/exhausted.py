"""`ExhaustedPools`: the pools in which no device can be allocated any more, skipped by the
allocator's search.

The search tries the pools a node sees in order and, in each, every device: one in use is
passed over at once, but a free device whose shared counters earlier allocations consumed
goes through the selectors and the counter arithmetic before it fails. In kube-scheduler's
scheduler_perf partitionable workload (slices of six devices on four shared counters, each
pod taking two) every filled slice keeps four such devices, so each pod's search walked
every slice filled before it: O(pods x pools) for the run.

A pool is *exhausted* when every device in it is in use or needs more of a shared counter
than its slice has left after the devices in use (or names a counter the slice does not
have, or consumes counters while DRAPartitionableDevices is off). No allocation can use such
a device (the counters the search itself takes only lower what is left), so a search that
leaves exhausted pools out finds the same first solution. Whether a pool is exhausted
changes only when its devices in use change: the flags are kept per pool and recomputed for
the pools `AllocatedStateTracker`'s journal names (O(devices of the pool)); the list of live
pools is kept per pool list (`PoolCache` hands out one list per distinct set of pools) and
rebuilt, O(pools) at C speed, only after a flag changed.

Not used for requests with ``adminAccess`` (they may take devices in use), nor with
DRAConsumableCapacity on (no journal then). Devices left out are not counted against the
search budget (``filterTimeout``), as devices in use are not; an invalid pool is never left
out (the search reports it).
"""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from fractions import Fraction

from schedsim.api.resource import DeviceCounterConsumption
from schedsim.dra.allocated_state import counters_left
from schedsim.dra.pools import Pool, PoolId
from schedsim.dra.tracker import AllocatedStateTracker
from schedsim.dra.types import DeviceId, DraFeatures

__all__ = ["ExhaustedPools"]


class ExhaustedPools:
    """Per pool, whether a device in it can still be allocated; the live pools of a list.

    One per DynamicResources plugin instance; not thread-safe. Per pod: `begin` with the
    devices in use (after `AllocatedStateTracker.state`), then `live` per pool list.

    Args:
        tracker: the plugin's allocated-state tracker (its journal of changed pools).
        features: the DRA feature gates.
    """

    __slots__ = (
        "_epoch",
        "_features",
        "_flags",
        "_in_use",
        "_lists",
        "_tracker",
        "_version",
        "_world",
    )

    def __init__(self, tracker: AllocatedStateTracker, features: DraFeatures) -> None:
        self._tracker = tracker
        self._features = features
        self._flags: dict[PoolId, bool] = {}  # pool -> exhausted (absent: not known)
        self._epoch: int | None = None  # tracker epoch the flags follow
        self._version = 0  # bumped whenever a flag is dropped
        # id(pool list) -> (the list, version, its live pools)
        self._lists: dict[int, tuple[list[Pool], int, list[Pool]]] = {}
        self._in_use: AbstractSet[DeviceId] = frozenset()
        self._world: object = None

    def begin(self, world: object, in_use: AbstractSet[DeviceId]) -> bool:
        """Start a pod's cycle over the devices ``in_use`` (the tracker's state); ``world``
        changes (other slices) drop everything. False: not usable (no journal)."""
        epoch = self._tracker.epoch
        if epoch is None:
            return False
        self._in_use = in_use
        since = self._epoch
        changed = None if since is None else self._tracker.pools_changed_since(since)
        if world != self._world or changed is None:
            self._world = world
            self._flags.clear()
            self._lists.clear()
            self._version += 1
        elif changed:
            flags = self._flags
            for pool in changed:
                flags.pop(pool, None)
            self._version += 1
        self._epoch = epoch
        return True

    def live(self, pools: list[Pool]) -> list[Pool]:
        """``pools`` without the exhausted ones, in order. Time: O(1) while no pool changed
        since the last call for this list, else O(pools) plus O(devices) per pool whose
        devices in use changed."""
        hit = self._lists.get(id(pools))
        if hit is not None and hit[0] is pools and hit[1] == self._version:
            return hit[2]
        flags = self._flags
        out: list[Pool] = []
        for pool in pools:
            key = (pool.driver, pool.name)
            dead = flags.get(key)
            if dead is None:
                dead = flags[key] = self._exhausted(pool)
            if not dead:
                out.append(pool)
        self._lists[id(pools)] = (pools, self._version, out)
        return out

    def _exhausted(self, pool: Pool) -> bool:
        if pool.invalid_reason:
            return False
        in_use = self._in_use
        for slice_ in pool.slices:
            left: dict[tuple[str, str], Fraction] | None = None
            for device in slice_.devices:
                did = DeviceId(slice_.driver, slice_.pool.name, device.name)
                if did in in_use:
                    continue
                if not device.consumes_counters:
                    return False
                if not self._features.partitionable_devices:
                    continue
                if left is None:
                    left = counters_left(slice_, in_use)
                if _fits(device.consumes_counters, left):
                    return False
        return True


def _fits(
    consumes: Sequence[DeviceCounterConsumption], left: dict[tuple[str, str], Fraction]
) -> bool:
    """Whether one device's counter demand fits in what its slice has left."""
    wanted: dict[tuple[str, str], Fraction] = {}
    for use in consumes:
        for name, value in use.counters.items():
            k = (use.counter_set, name)
            if k not in left:
                return False
            wanted[k] = wanted.get(k, Fraction(0)) + value
    return all(left[k] - v >= 0 for k, v in wanted.items())
