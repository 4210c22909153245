"""A pool's slices with binding-condition devices come after its plain slices.

Mirrors ``GatherPools`` of the experimental allocator, Kubernetes release-1.34
(structured/internal/experimental/pools_experimental.go): a matching slice with a device that
has ``bindingConditions`` goes to ``slicesWithBindingConditions`` and is added to its pool
after every plain slice, "because then the allocation is going to prefer the simpler devices
without binding conditions". The upstream row is
TestAllocator/partitionable-devices-with-binding-conditions-multi-slices (also transcribed
as tests/cases/upstream/dra-alloc/119-...): ``slice-1`` (the first by name) holds the
binding-condition ``device-1``, ``slice-2`` the plain ``device-2``; ``count: 2`` is allocated
as ``device-2`` then ``device-1``. With ``count: 1`` the same order gives ``device-2`` (the
pod does not wait in PreBind), where a by-name order gave ``device-1``.
"""

from __future__ import annotations

import pytest
from dra_builders import NODE, claim, device, device_class, picked, request, resource_slice

from schedsim.dra import AllocatedState, Allocator, DraFeatures
from schedsim.dra.pools import PoolCache, gather_pools

FEATURES = DraFeatures(
    partitionable_devices=True, device_binding_conditions=True, device_status=True
)
CLASSES = {"class-a": device_class()}


def _slices() -> list:
    pool = {"name": "pool-1", "generation": 1, "resourceSliceCount": 1}
    shared = {"memory": "8Gi"}
    with_conditions = resource_slice(
        [
            device(
                "device-1",
                counters={"memory": "4Gi"},
                capacity={"memory": {"value": "4Gi"}},
                bindingConditions=["IsPrepare"],
                bindingFailureConditions=["BindingFailed"],
            )
        ],
        name="slice-1",
        pool=pool,
        counters=shared,
    )
    plain = resource_slice(
        [device("device-2", counters={"memory": "4Gi"}, capacity={"memory": {"value": "4Gi"}})],
        name="slice-2",
        pool=pool,
        counters=shared,
    )
    return [with_conditions, plain]


@pytest.mark.parametrize(
    ("count", "expected"),
    [
        (2, [("req-0", "device-2"), ("req-0", "device-1")]),  # the upstream row
        (1, [("req-0", "device-2")]),  # count: 1 takes the plain device
    ],
)
def test_plain_slice_before_binding_condition_slice(
    count: int, expected: list[tuple[str, str]]
) -> None:
    c = claim("claim-0", [request("req-0", count=count, allocationMode="ExactCount")])
    got = Allocator(FEATURES, AllocatedState(), CLASSES, _slices()).allocate(NODE, [c])
    assert got is not None
    assert picked(got[0]) == expected
    results = {r.device: r for r in got[0].results}
    assert results["device-2"].binding_conditions == ()
    if count == 2:
        assert results["device-1"].binding_conditions == ("IsPrepare",)


@pytest.mark.parametrize("order", [0, 1])
def test_gather_pools_and_cached_pools_order_slices_alike(order: int) -> None:
    """The order does not depend on the order the slices come in, and the cached pool path
    (`PoolCache`, shared and node-local slices) gives the same order as `gather_pools`."""
    slices = _slices() if order == 0 else _slices()[::-1]
    direct = gather_pools(slices, NODE, FEATURES)
    assert [s.name for s in direct[0].slices] == ["slice-2", "slice-1"]
    assert [e[1].name for e in direct[0].entries] == ["device-2", "device-1"]
    cache = PoolCache()
    cache.bind(slices, FEATURES)
    assert [s.name for s in cache.pools(NODE)[0].slices] == ["slice-2", "slice-1"]
    shared = [
        resource_slice(
            [device("device-1", bindingConditions=["c"], bindingFailureConditions=["f"])],
            name="a",
            pool={"name": "p", "generation": 1, "resourceSliceCount": 2},
            allNodes=True,
        ),
        resource_slice(
            [device("device-2")],
            name="b",
            pool={"name": "p", "generation": 1, "resourceSliceCount": 2},
        ),
    ]
    cache.bind(shared, FEATURES)
    assert [s.name for s in cache.pools(NODE)[0].slices] == ["b", "a"]
    assert [s.name for s in gather_pools(shared, NODE, FEATURES)[0].slices] == ["b", "a"]
