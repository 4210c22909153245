"""The DynamicResources plugin's per-cycle caches give exactly what they replace.

`PoolCache.pools(node)` must equal `gather_pools(slices, node)` for any mix of node-local,
``allNodes``, ``nodeSelector`` and per-device slices, across generations and re-binds; and
`AllocatedStateTracker.state(claims)` must equal `AllocatedState.from_claims(claims)` while
claims are allocated, deallocated, replaced and removed in any order (as forks and reverts
of the snapshot do).
"""

from __future__ import annotations

from typing import Any

from dra_builders import claim, request
from hypothesis import given, settings
from hypothesis import strategies as st

from schedsim.api.core import Node
from schedsim.api.resource import ResourceClaim, ResourceSlice
from schedsim.dra import AllocatedState, DeviceId, DraFeatures
from schedsim.dra.pools import PoolCache, gather_pools
from schedsim.dra.tracker import AllocatedStateTracker

FEATURES = DraFeatures(partitionable_devices=True)
NODES = [Node(name=f"n{i}", labels={"zone": "a" if i % 2 else "b"}) for i in range(3)]

# (kind, pool index, generation, target node index); kind 0 node-local, 1 allNodes,
# 2 nodeSelector on zone a, 3 per-device node names
slice_st = st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(1, 2), st.integers(0, 2))


def _slice(i: int, kind: int, pool: int, generation: int, node: int) -> ResourceSlice:
    spec: dict[str, Any] = {
        "driver": "driver-a",
        "pool": {"name": f"pool-{pool}", "generation": generation, "resourceSliceCount": 2},
        "devices": [{"name": f"d{i}-{j}"} for j in range(2)],
    }
    if kind == 0:
        spec["nodeName"] = f"n{node}"
    elif kind == 1:
        spec["allNodes"] = True
    elif kind == 2:
        spec["nodeSelector"] = {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
            ]
        }
    else:
        spec["perDeviceNodeSelection"] = True
        for j, dev in enumerate(spec["devices"]):
            dev["nodeName"] = f"n{(node + j) % 3}"
    return ResourceSlice.from_manifest(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": f"s{i}"},
            "spec": spec,
        }
    )


@settings(max_examples=150, deadline=None)
@given(first=st.lists(slice_st, max_size=8), second=st.lists(slice_st, max_size=8))
def test_pool_cache_equals_gather_pools(
    first: list[tuple[int, int, int, int]], second: list[tuple[int, int, int, int]]
) -> None:
    """Same pools, same order, for every node, before and after the slices change."""
    cache = PoolCache()
    for spec in (first, second, first):
        slices = [_slice(i, *s) for i, s in enumerate(spec)]
        for _ in range(2):  # the second round is served from the cache
            cache.bind(list(slices), FEATURES)
            for node in NODES:
                assert cache.pools(node) == gather_pools(slices, node, FEATURES)


def _allocated(name: str, devices: list[int], admin: bool = False) -> ResourceClaim:
    results = [
        {
            "request": "r",
            "driver": "driver-a",
            "pool": f"pool-{d % 3}",
            "device": f"dev-{d}",
            **({"adminAccess": True} if admin else {}),
        }
        for d in devices
    ]
    return claim(
        name,
        [request("r")],
        status={"allocation": {"devices": {"results": results}}} if results else None,
    )


op_st = st.tuples(st.integers(0, 4), st.lists(st.integers(0, 5), max_size=3), st.booleans())


@settings(max_examples=150, deadline=None)
@given(ops=st.lists(op_st, min_size=1, max_size=25))
def test_tracker_equals_from_claims(ops: list[tuple[int, list[int], bool]]) -> None:
    """After every change (a claim allocated, re-allocated, deallocated, removed when its
    device list is empty and the flag is set), the tracked devices equal a full rebuild, and
    the journal names exactly the pools whose devices in use changed."""
    tracker = AllocatedStateTracker(DraFeatures())
    claims: dict[int, ResourceClaim] = {}
    history: list[dict[int, ResourceClaim]] = []
    for key, devices, flag in ops:
        before = set(tracker.state(list(claims.values())).devices)
        claims = dict(claims)
        if not devices and flag:
            claims.pop(key, None)
        else:
            claims[key] = _allocated(f"c{key}", devices, admin=flag and len(devices) == 1)
        history.append(claims)
        epoch = tracker.epoch
        assert epoch is not None
        got = tracker.state(list(claims.values()))
        want = AllocatedState.from_claims(claims.values(), DraFeatures())
        assert set(got.devices) == set(want.devices)
        _check_journal(tracker, epoch, before, set(want.devices))
    # a revert hands back objects seen before
    for earlier in reversed(history):
        before = set(tracker.state(list(claims.values())).devices)
        epoch = tracker.epoch
        assert epoch is not None
        got = tracker.state(list(earlier.values()))
        rebuilt = set(AllocatedState.from_claims(earlier.values(), DraFeatures()).devices)
        assert set(got.devices) == rebuilt
        _check_journal(tracker, epoch, before, rebuilt)
        claims = earlier


def _check_journal(
    tracker: AllocatedStateTracker, epoch: int, before: set[DeviceId], after: set[DeviceId]
) -> None:
    """The journal since ``epoch`` names exactly the pools whose devices in use changed (the
    AllocationCache's validity rule relies on it), and the per-pool check agrees."""
    changed_pools = {(d.driver, d.pool) for d in before ^ after}
    journal = tracker.pools_changed_since(epoch)
    assert journal is not None
    assert set(journal) == changed_pools
    assert tracker.changes_since(epoch) == len(journal)
    for pool in (("driver-a", f"pool-{i}") for i in range(3)):
        assert tracker.pool_changed_after(pool, epoch) == (pool in changed_pools)


def _shared(name: str, devices: list[int], milli: int) -> ResourceClaim:
    results = [
        {
            "request": "r",
            "driver": "driver-a",
            "pool": f"pool-{d % 3}",
            "device": f"dev-{d}",
            **(
                {"shareID": f"{name}-{j}", "consumedCapacity": {"mem": f"{milli}"}} if d % 2 else {}
            ),
        }
        for j, d in enumerate(devices)
    ]
    return claim(
        name,
        [request("r")],
        status={"allocation": {"devices": {"results": results}}} if results else None,
    )


shared_op_st = st.tuples(
    st.integers(0, 4), st.lists(st.integers(0, 5), max_size=3), st.integers(1, 9)
)


@settings(max_examples=150, deadline=None)
@given(ops=st.lists(shared_op_st, min_size=1, max_size=25))
def test_tracker_equals_from_claims_with_consumable_capacity(
    ops: list[tuple[int, list[int], int]],
) -> None:
    """DRAConsumableCapacity: results with a shareID (odd devices here) are shared
    allocations; after every change the tracker's shared IDs, shared devices and summed
    consumed capacity equal a full rebuild (`AllocatedState.from_claims`), and every pool
    whose shared allocations changed is journaled."""
    features = DraFeatures(consumable_capacity=True)
    tracker = AllocatedStateTracker(features)
    claims: dict[int, ResourceClaim] = {}
    for key, devices, milli in ops:
        claims = dict(claims)
        old = claims.get(key)
        if not devices:
            claims.pop(key, None)
        else:
            claims[key] = _shared(f"c{key}", devices, milli)
        epoch = tracker.epoch
        assert epoch is not None
        got = tracker.state(list(claims.values()))
        want = AllocatedState.from_claims(claims.values(), features)
        assert set(got.devices) == set(want.devices)
        assert set(got.shared_device_ids) == set(want.shared_device_ids)
        assert got.shared_devices is not None
        assert set(got.shared_devices) == {did for did, _ in want.shared_device_ids}
        assert {d: dict(v) for d, v in got.consumed_capacity.items()} == {
            d: dict(v) for d, v in want.consumed_capacity.items()
        }
        changed = set(tracker.pools_changed_since(epoch) or ())
        for r in _shares(old) ^ _shares(claims.get(key)):
            assert (r[0], r[1]) in changed


def _shares(c: ResourceClaim | None) -> set[tuple[str, str, str, str | None, str]]:
    if c is None or c.status.allocation is None:
        return set()
    return {
        (r.driver, r.pool, r.device, r.share_id, repr(r.consumed_capacity))
        for r in c.status.allocation.results
        if r.share_id is not None
    }
