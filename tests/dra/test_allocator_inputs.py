"""Input handling of the allocator: upstream's error messages, pool gathering, consumable
capacity rounding and the allocated state gathered from claims."""

from __future__ import annotations

from fractions import Fraction

import pytest
from dra_builders import NODE, claim, device, device_class, picked, request, resource_slice

from schedsim.api.core import Node
from schedsim.api.resource import CapacityRequestPolicy, CapacityRequestPolicyRange, Device
from schedsim.api.resource import DeviceCapacity as Cap
from schedsim.dra import AllocatedState, AllocationError, Allocator, DeviceId, DraFeatures
from schedsim.dra.capacity import CapacityCache, consumed_capacity, fits
from schedsim.dra.pools import gather_pools

CLASSES = {"class-a": device_class()}


def _allocate(features: DraFeatures, slices: list, claims: list) -> object:  # type: ignore[type-arg]
    return Allocator(features, AllocatedState(), CLASSES, slices).allocate(NODE, claims)


def test_prioritized_list_disabled_is_an_error() -> None:
    """``has subrequests, but the DRAPrioritizedList feature is disabled`` (Allocate)."""
    c = claim("c", [{"name": "r", "firstAvailable": [{"name": "s", "deviceClassName": "class-a"}]}])
    with pytest.raises(AllocationError, match="claim default/c, request r: has subrequests, but"):
        _allocate(DraFeatures(prioritized_list=False), [resource_slice([device("d")])], [c])


def test_capacity_request_without_consumable_capacity_is_an_error() -> None:
    """``has capacity requests, but the DRAConsumableCapacity feature is disabled``."""
    c = claim("c", [request("r", capacity={"requests": {"mem": "1"}})])
    with pytest.raises(AllocationError, match="DRAConsumableCapacity feature is disabled"):
        _allocate(DraFeatures(), [resource_slice([device("d")])], [c])


def test_class_cel_runtime_error_names_class_and_selector() -> None:
    """``class <c>: selector #<i>: CEL runtime error: no such key: <id>`` (TestAllocator
    invalid-CEL cases; DynamicResources turns it into an Error status)."""
    classes = {
        "class-a": device_class(
            selectors=[
                {"cel": {"expression": 'device.driver == "driver-a"'}},
                {"cel": {"expression": 'device.attributes["driver-a"].healthy'}},
            ]
        )
    }
    c = claim("c", [request("r")])
    alloc = Allocator(DraFeatures(), AllocatedState(), classes, [resource_slice([device("d")])])
    with pytest.raises(AllocationError) as info:
        alloc.allocate(NODE, [c])
    assert str(info.value) == "class class-a: selector #1: CEL runtime error: no such key: healthy"


def test_claim_cel_runtime_error_names_claim() -> None:
    """``claim <ns>/<c>: selector #0: CEL runtime error: ...``."""
    c = claim("c", [request("r", selectors=['device.attributes["driver-a"].healthy'])])
    with pytest.raises(AllocationError) as info:
        _allocate(DraFeatures(), [resource_slice([device("d")])], [c])
    assert (
        str(info.value) == "claim default/c: selector #0: CEL runtime error: no such key: healthy"
    )


def test_cel_runtime_error_is_wrapped_with_cel_go_text() -> None:
    """The structured allocator's wrapping, verbatim from Kubernetes 1.34
    (staging/src/k8s.io/dynamic-resource-allocation/structured, selectorsMatch):
    ``claim %s: selector #%d: CEL runtime error: %w`` with klog.KObj(claim), around cel-go's
    own error text (common/types/err.go errDivideByZero: ``division by zero``); no request
    name in it."""
    c = claim("c", [request("r", selectors=["1 / (size(device.driver) - 8) == 1"])])
    with pytest.raises(AllocationError) as info:
        _allocate(DraFeatures(), [resource_slice([device("d")])], [c])  # driver-a: size 8
    assert str(info.value) == "claim default/c: selector #0: CEL runtime error: division by zero"


def test_all_mode_on_incomplete_pool_is_an_error() -> None:
    """``asks for all devices, but resource pool <driver>/<pool> is currently being
    updated``; ExactCount may still use the incomplete pool."""
    s = resource_slice([device("d")], pool={"name": "p", "generation": 1, "resourceSliceCount": 2})
    with pytest.raises(
        AllocationError, match="resource pool driver-a/p is currently being updated"
    ):
        _allocate(DraFeatures(), [s], [claim("c", [request("r", allocationMode="All")])])
    got = _allocate(DraFeatures(), [s], [claim("c", [request("r")])])
    assert got is not None


def test_all_mode_constraint_violation_is_an_error() -> None:
    """In All mode a device rejected by a claim constraint is an error: ``cannot add device
    ... because a claim constraint would not be satisfied``."""
    s = resource_slice([device("a", ints={"numa": 0}), device("b", ints={"numa": 1})])
    c = claim("c", [request("r", allocationMode="All")], [{"matchAttribute": "driver-a/numa"}])
    with pytest.raises(AllocationError, match="cannot add device driver-a/pool-1/b because"):
        _allocate(DraFeatures(), [s], [c])


def test_distinct_attribute_with_gate_off_is_an_empty_constraint() -> None:
    """The API server drops ``distinctAttribute`` while DRAConsumableCapacity is off, which
    leaves an empty constraint: ``constraint #0: empty constraint (unsupported constraint
    type?)``."""
    c = claim("c", [request("r")], [{"distinctAttribute": "driver-a/numa"}])
    with pytest.raises(AllocationError, match="constraint #0: empty constraint"):
        _allocate(DraFeatures(), [resource_slice([device("d")])], [c])


def test_pools_newest_generation_node_selection_and_binding_conditions_last() -> None:
    """GatherPools: newest generation wins, non-matching selectors are skipped, pools with
    binding conditions come last; per-device node selection needs DRAPartitionableDevices."""
    old = resource_slice(
        [device("x")], name="old", pool={"name": "a", "generation": 1, "resourceSliceCount": 1}
    )
    new = resource_slice(
        [device("y")], name="new", pool={"name": "a", "generation": 2, "resourceSliceCount": 1}
    )
    cond = resource_slice(
        [device("z", bindingConditions=["ready"], bindingFailureConditions=["failed"])],
        name="cond",
        pool={"name": "0-first-by-name", "generation": 1, "resourceSliceCount": 1},
    )
    elsewhere = resource_slice(
        [device("w")],
        name="elsewhere",
        pool="b",
        nodeSelector={
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": "region", "operator": "In", "values": ["r2"]}]}
            ]
        },
    )
    per_device = resource_slice(
        [device("v", nodeName="node-1")], name="per-device", pool="c", perDeviceNodeSelection=True
    )
    slices = [old, new, cond, elsewhere, per_device]
    pools = gather_pools(slices, NODE, DraFeatures())
    assert [(p.name, [s.name for s in p.slices]) for p in pools] == [
        ("a", ["new"]),
        ("0-first-by-name", ["cond"]),
    ]
    pools = gather_pools(slices, Node(name="node-1"), DraFeatures(partitionable_devices=True))
    assert [p.name for p in pools] == ["a", "c", "0-first-by-name"]


def test_consumed_capacity_rounding() -> None:
    """requestPolicy rounding (TestAllocator consumable-capacity-*-range-policy-*): below
    min -> min, then up to min + k*step; validValues -> first value not below; no request ->
    default; over max -> unusable; unknown capacity name -> unusable."""
    rng = CapacityRequestPolicy(
        default=Fraction(2),
        valid_range=CapacityRequestPolicyRange(min=Fraction(2), max=Fraction(8), step=Fraction(3)),
    )
    dev = Device(name="d", capacity={"bw": Cap(Fraction(8), rng)}, allow_multiple_allocations=True)
    assert consumed_capacity("drv", dev, {"bw": Fraction(1)}) == {"bw": 2}
    assert consumed_capacity("drv", dev, {"drv/bw": Fraction(3)}) == {"bw": 5}
    assert consumed_capacity("drv", dev, {}) == {"bw": 2}
    assert consumed_capacity("drv", dev, {"bw": Fraction(9)}) is None
    assert consumed_capacity("drv", dev, {"other": Fraction(1)}) is None
    values = CapacityRequestPolicy(default=Fraction(1), valid_values=(Fraction(1), Fraction(4)))
    dev = Device(
        name="d", capacity={"bw": Cap(Fraction(8), values)}, allow_multiple_allocations=True
    )
    assert consumed_capacity("drv", dev, {"bw": Fraction(2)}) == {"bw": 4}
    assert consumed_capacity("drv", dev, {"bw": Fraction(5)}) is None
    plain = Device(name="d", capacity={"bw": Cap(Fraction(8))})
    assert consumed_capacity("drv", plain, {}) == {"bw": 8}


@pytest.mark.parametrize(
    ("cap", "request_", "used", "pending"),
    [
        ("8", "3", "5", None),  # whole numbers, exactly full: fits
        ("8", "3", "5", "1"),  # over by one
        ("8", "3", None, "6"),
        ("8", "3", None, None),
        ("8", "9", None, None),  # more than the whole capacity
        ("3/2", "1/2", "1", None),  # fractions (the plan's Fraction path): fits
        ("3/2", "1/2", "3/2", None),
        ("8", "3", "5/2", "5/2"),  # whole plan, fractional use: 8 fits
        ("8", "3", "5/2", "3"),
    ],
)
def test_capacity_plan_fits_like_fits(
    cap: str, request_: str, used: str | None, pending: str | None
) -> None:
    """`CapacityPlan.fits` (ints for whole numbers) answers what `fits` (exact Fractions)
    answers: consumed plus capacity in use before and in this call against the capacity
    (``CmpRequestOverCapacity``), whole-number and fractional amounts."""
    dev = Device(name="d", capacity={"bw": Cap(Fraction(cap))}, allow_multiple_allocations=True)
    requests = {"bw": Fraction(request_)}
    in_use = [None if u is None else {"drv/bw": Fraction(u)} for u in (used, pending)]
    plan = CapacityCache().plan("drv", dev, requests)
    assert plan is not None
    want = fits("drv", dev, {"bw": Fraction(request_)}, *in_use)
    assert plan.fits("drv", dev, *in_use) is want
    total = Fraction(request_) + sum(Fraction(u) for u in (used, pending) if u)
    assert want is (total <= Fraction(cap))


def test_capacity_cache_keeps_one_plan_per_device_and_requests() -> None:
    """The same (device, requests) objects get the same plan; a device that cannot serve
    the request (unknown capacity name) gets None."""
    dev = Device(name="d", capacity={"bw": Cap(Fraction(8))}, allow_multiple_allocations=True)
    cache = CapacityCache()
    requests = {"bw": Fraction(3)}
    first = cache.plan("drv", dev, requests)
    assert first is not None and first.consumed == {"bw": 3}
    assert cache.plan("drv", dev, requests) is first
    assert cache.plan("drv", dev, {"other": Fraction(1)}) is None


def test_allocated_state_from_claims() -> None:
    """The plugin's gathering of allocated devices: adminAccess results skipped; with
    DRAConsumableCapacity, results with a shareID are shared and their consumed capacity is
    summed; without it they are plain allocations."""
    status = {
        "allocation": {
            "devices": {
                "results": [
                    {"request": "r", "driver": "driver-a", "pool": "p", "device": "a"},
                    {
                        "request": "r",
                        "driver": "driver-a",
                        "pool": "p",
                        "device": "b",
                        "adminAccess": True,
                    },
                    {
                        "request": "r",
                        "driver": "driver-a",
                        "pool": "p",
                        "device": "s",
                        "shareID": "u1",
                        "consumedCapacity": {"bw": "1"},
                    },
                    {
                        "request": "r",
                        "driver": "driver-a",
                        "pool": "p",
                        "device": "s",
                        "shareID": "u2",
                        "consumedCapacity": {"driver-a/bw": "2"},
                    },
                ]
            }
        }
    }
    claims = [claim("c", [request("r")], status=status), claim("unallocated", [request("r")])]
    a, s = DeviceId("driver-a", "p", "a"), DeviceId("driver-a", "p", "s")
    state = AllocatedState.from_claims(claims, DraFeatures(consumable_capacity=True))
    assert state.devices == {a}
    assert state.shared_device_ids == {(s, "u1"), (s, "u2")}
    assert state.consumed_capacity == {s: {"driver-a/bw": Fraction(3)}}
    plain = AllocatedState.from_claims(claims, DraFeatures())
    assert plain.devices == {a, s} and not plain.shared_device_ids


def test_admin_access_may_use_allocated_devices_but_not_twice_in_a_claim() -> None:
    """TestAllocator/admin-access-enabled: admin access ignores other claims' allocations,
    not its own claim's picks (count 2 over one device is unschedulable)."""
    s = resource_slice([device("d")])
    state = AllocatedState(devices=frozenset({DeviceId("driver-a", "pool-1", "d")}))
    alloc = Allocator(DraFeatures(), state, CLASSES, [s])
    got = alloc.allocate(NODE, [claim("c", [request("r", adminAccess=True)])])
    assert got is not None and picked(got[0]) == [("r", "d")] and got[0].results[0].admin_access
    assert alloc.allocate(NODE, [claim("c", [request("r", adminAccess=True, count=2)])]) is None
