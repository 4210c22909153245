"""The allocator's pruned search gives upstream's answer, and the filterTimeout bounds it.

`schedsim.dra.Allocator` skips device orders (the devices of a request form a set) and
devices the claim cannot tell apart from one that already failed. Upstream's ``allocateOne``
tries every permutation; ``Allocator(prune=False)`` does the same and is the reference here:
on random inputs with many look-alike devices both must return the same allocation (same
devices, same order) or both none. Issue 15's repro (20 GPUs whose attribute alternates, a
claim for 11 under matchAttribute: 378 s before) must finish within a small, counted budget.
"""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any

import pytest
import yaml
from dra_builders import NODE, claim, device, device_class, picked, request, resource_slice
from hypothesis import given, settings
from hypothesis import strategies as st

from schedsim.cli import main
from schedsim.dra import (
    AllocatedState,
    AllocationError,
    AllocationTimeout,
    Allocator,
    CelCache,
    DeviceId,
    DraFeatures,
)

FEATURES = DraFeatures(partitionable_devices=True, prioritized_list=True)
CLASSES = {"class-a": device_class()}

# few distinct values, so many devices look alike
devices_st = st.lists(
    st.tuples(st.integers(0, 1), st.integers(0, 1), st.integers(0, 2)), min_size=1, max_size=7
)
claim_st = st.tuples(
    st.lists(st.tuples(st.integers(1, 3), st.integers(0, 1)), min_size=1, max_size=2),
    st.booleans(),
)


def _outcome(allocator: Allocator, claims: list[Any]) -> Any:
    try:
        got = allocator.allocate(NODE, claims)
    except AllocationError as e:
        return ("error", str(e))
    return None if got is None else [picked(a) for a in got]


@settings(max_examples=200, deadline=None)
@given(
    devs=devices_st,
    counter_total=st.integers(1, 6),
    claims=st.lists(claim_st, min_size=1, max_size=2),
    allocated=st.sets(st.integers(0, 6), max_size=2),
)
def test_pruned_search_returns_what_the_exhaustive_search_returns(
    devs: list[tuple[int, int, int]],
    counter_total: int,
    claims: list[tuple[list[tuple[int, int]], bool]],
    allocated: set[int],
) -> None:
    """Same first solution (devices and their order) as upstream's permutation search, or
    the same None, on inputs with look-alike devices, counters and devices already in use."""
    slice_ = resource_slice(
        [
            device(
                f"dev-{i}",
                ints={"size": size, "numa": numa},
                **({"counters": {"mem": str(mem)}} if mem else {}),
            )
            for i, (size, numa, mem) in enumerate(devs)
        ],
        counters={"mem": str(counter_total)},
    )
    built = _claims(
        [
            (
                [
                    {"count": count, "selectors": [f'device.attributes["driver-a"].size >= {size}']}
                    for count, size in reqs
                ],
                [{"matchAttribute": "driver-a/numa"}] if match else [],
            )
            for reqs, match in claims
        ]
    )
    state = _allocated_state(slice_, allocated)
    cache = CelCache()
    fast = Allocator(FEATURES, state, CLASSES, [slice_], cache)
    slow = Allocator(FEATURES, state, CLASSES, [slice_], cache, prune=False)
    assert _outcome(fast, built) == _outcome(slow, built)


SHARING = DraFeatures(partitionable_devices=True, consumable_capacity=True)

# shared devices (capacity "bw") that look alike but for the capacity already in use
shared_devices_st = st.lists(
    st.tuples(st.booleans(), st.integers(0, 1), st.integers(0, 3)), min_size=1, max_size=6
)
shared_claim_st = st.tuples(
    st.lists(st.tuples(st.integers(1, 3), st.integers(0, 2), st.integers(0, 1)), max_size=2),
    st.sampled_from(["none", "match", "distinct"]),
)
# at most 5 devices per call: the exhaustive search tries every sequence of them
shared_claims_st = st.lists(shared_claim_st, min_size=1, max_size=2).filter(
    lambda cs: sum(max(sum(r[0] for r in reqs), 1) for reqs, _ in cs) <= 5
)


@settings(max_examples=200, deadline=None)
@given(devs=shared_devices_st, claims=shared_claims_st)
def test_pruned_search_with_shared_devices_returns_what_the_exhaustive_search_returns(
    devs: list[tuple[bool, int, int]], claims: list[tuple[list[tuple[int, int, int]], str]]
) -> None:
    """With DRAConsumableCapacity, devices that allow multiple allocations are skipped as
    look-alikes of a failed one only while their capacity in use is the same: same first
    solution (devices, order, consumed capacity) as upstream's permutation search, or the
    same None, with capacity in use before and requests with and without a capacity
    request (none: the whole capacity), under matchAttribute and distinctAttribute."""
    slice_ = resource_slice(
        [
            device(
                f"dev-{i}",
                ints={"numa": numa},
                allowMultipleAllocations=shared,
                capacity={"bw": {"value": "4"}},
            )
            for i, (shared, numa, _) in enumerate(devs)
        ]
    )
    used = {
        DeviceId("driver-a", "pool-1", f"dev-{i}"): {"driver-a/bw": Fraction(u)}
        for i, (shared, _, u) in enumerate(devs)
        if shared and u
    }
    state = AllocatedState(
        shared_device_ids=frozenset((did, f"uid-{did.device}") for did in used),
        consumed_capacity=used,
    )
    constraint = {
        "none": [],
        "match": [{"matchAttribute": "driver-a/numa"}],
        "distinct": [{"distinctAttribute": "driver-a/numa"}],
    }
    built = _claims(
        [
            (
                [
                    {
                        "count": count,
                        **({"capacity": {"requests": {"bw": str(bw)}}} if bw else {}),
                        **({"selectors": ["device.allowMultipleAllocations"]} if only else {}),
                    }
                    for count, bw, only in reqs
                ]
                or [{}],
                constraint[kind],
            )
            for reqs, kind in claims
        ]
    )
    cache = CelCache()
    fast = Allocator(SHARING, state, CLASSES, [slice_], cache)
    slow = Allocator(SHARING, state, CLASSES, [slice_], cache, prune=False)
    assert _results(fast, built) == _results(slow, built)


def _results(allocator: Allocator, claims: list[Any]) -> Any:
    """The whole answer: shareIDs are derived from the claim, so results compare equal."""
    try:
        return allocator.allocate(NODE, claims)
    except AllocationError as e:
        return ("error", str(e))


def test_failed_shared_look_alikes_are_not_tried_again() -> None:
    """Eight free shared GPUs that look alike, a claim for nine whole ones (no capacity
    request: each takes a whole device): no allocation. Without skipping look-alikes the
    search tries every subset of the eight (more than 1,000 devices); with them it fails in
    a few dozen."""
    gpus = resource_slice(
        [
            device(f"gpu-{i}", allowMultipleAllocations=True, capacity={"bw": {"value": "4"}})
            for i in range(8)
        ]
    )
    nine = claim("nine", [request("gpus", count=9)])
    fast = Allocator(SHARING, AllocatedState(), CLASSES, [gpus], max_steps=100)
    assert fast.allocate(NODE, [nine]) is None
    eight = claim("eight", [request("gpus", count=8)])
    got = fast.allocate(NODE, [eight])
    assert got is not None
    assert [r.device for r in got[0].results] == [f"gpu-{i}" for i in range(8)]
    slow = Allocator(SHARING, AllocatedState(), CLASSES, [gpus], max_steps=1_000, prune=False)
    with pytest.raises(AllocationTimeout):
        slow.allocate(NODE, [nine])


def test_shared_look_alikes_with_different_capacity_in_use_are_both_tried() -> None:
    """gpu-0 is free, gpu-1 has 2 of 4 in use. Giving claim ``half`` (2) gpu-0 leaves no
    whole device for claim ``whole`` (no capacity request: all 4), so that branch fails;
    gpu-1 looks the same but has less free, and giving it to ``half`` is the solution
    (the exhaustive search's first one)."""
    gpus = resource_slice(
        [
            device(f"gpu-{i}", allowMultipleAllocations=True, capacity={"bw": {"value": "4"}})
            for i in range(2)
        ]
    )
    did = DeviceId("driver-a", "pool-1", "gpu-1")
    state = AllocatedState(
        shared_device_ids=frozenset({(did, "uid-1")}),
        consumed_capacity={did: {"driver-a/bw": Fraction(2)}},
    )
    half = claim("half", [request("gpu", capacity={"requests": {"bw": "2"}})])
    whole = claim("whole", [request("gpu")])
    got = Allocator(SHARING, state, CLASSES, [gpus]).allocate(NODE, [half, whole])
    assert got is not None
    assert [picked(a) for a in got] == [[("gpu", "gpu-1")], [("gpu", "gpu-0")]]
    slow = Allocator(SHARING, state, CLASSES, [gpus], prune=False).allocate(NODE, [half, whole])
    assert got == slow


def _claims(specs: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]]) -> list[Any]:
    """Claims ``c0, c1, ...`` from (the ``exactly`` fields of requests ``r0, r1, ...``,
    the constraints) per claim."""
    return [
        claim(f"c{ci}", [request(f"r{ri}", **fields) for ri, fields in enumerate(reqs)], cons)
        for ci, (reqs, cons) in enumerate(specs)
    ]


def _allocated_state(slice_: Any, indices: set[int]) -> AllocatedState:
    names = {d.name for d in slice_.devices}
    return AllocatedState(
        devices=frozenset(
            DeviceId("driver-a", "pool-1", f"dev-{i}") for i in indices if f"dev-{i}" in names
        )
    )


def _alternating(n: int) -> Any:
    return resource_slice([device(f"gpu-{i}", ints={"numa": i % 2}) for i in range(n)])


def test_issue_repro_alternating_attribute_finishes_within_a_small_budget() -> None:
    """20 GPUs whose ``numa`` alternates, one claim for 11 under ``matchAttribute``: no
    allocation exists (10 per value). The pruned search proves it trying fewer than 5,000
    devices (each request position only looks past the previous device; failed look-alikes
    are skipped); upstream's permutation search needs millions."""
    gpus = _alternating(20)
    big = claim("big", [request("gpus", count=11)], [{"matchAttribute": "driver-a/numa"}])
    fast = Allocator(FEATURES, AllocatedState(), CLASSES, [gpus], max_steps=5_000)
    assert fast.allocate(NODE, [big]) is None
    slow = Allocator(FEATURES, AllocatedState(), CLASSES, [gpus], max_steps=100_000, prune=False)
    with pytest.raises(AllocationTimeout):
        slow.allocate(NODE, [big])


def test_look_alikes_still_allocate_the_first_devices() -> None:
    """Pruning never changes which devices are picked: 10 of 20 alternating GPUs under
    matchAttribute are the even ones, in order (upstream's first solution)."""
    gpus = _alternating(20)
    ten = claim("ten", [request("gpus", count=10)], [{"matchAttribute": "driver-a/numa"}])
    got = Allocator(FEATURES, AllocatedState(), CLASSES, [gpus], max_steps=5_000).allocate(
        NODE, [ten]
    )
    assert got is not None
    assert picked(got[0]) == [("gpus", f"gpu-{i}") for i in range(0, 20, 2)]


def _node() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "node-1"},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}},
    }


def _objects(count: int) -> list[dict[str, Any]]:
    devices = [{"name": f"gpu-{i}", "attributes": {"numa": {"int": i % 2}}} for i in range(20)]
    return [
        _node(),
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu"},
            "spec": {"selectors": [{"cel": {"expression": 'device.driver == "driver-a"'}}]},
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "node-1-gpus"},
            "spec": {
                "driver": "driver-a",
                "nodeName": "node-1",
                "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
                "devices": devices,
            },
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "big", "namespace": "default"},
            "spec": {
                "devices": {
                    "requests": [
                        {"name": "gpus", "exactly": {"deviceClassName": "gpu", "count": count}}
                    ],
                    "constraints": [{"matchAttribute": "driver-a/numa"}],
                }
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "trainer", "namespace": "default"},
            "spec": {
                "containers": [{"name": "c", "resources": {"claims": [{"name": "gpus"}]}}],
                "resourceClaims": [{"name": "gpus", "resourceClaimName": "big"}],
            },
        },
    ]


@pytest.mark.parametrize(
    ("timeout", "count", "message"),
    [
        # dynamicresources_test.go "timeout": a 1ns filterTimeout rejects the node
        ("10us", 2, "0/1 nodes are available: 1 timed out trying to allocate devices."),
        # upstream's own 1ns: shorter than one device's virtual cost, still a limit (it was
        # read as "no limit" before)
        ("1ns", 2, "0/1 nodes are available: 1 timed out trying to allocate devices."),
        # "timeout_disabled": 0 turns the timeout off, the search runs to its answer
        ("0s", 11, "0/1 nodes are available: 1 cannot allocate all claims."),
        # the default 10s is far above what the pruned search needs here
        (None, 11, "0/1 nodes are available: 1 cannot allocate all claims."),
    ],
)
def test_filter_timeout_through_simulate(
    tmp_path: Any, capsys: pytest.CaptureFixture[str], timeout: str | None, count: int, message: str
) -> None:
    """DynamicResourcesArgs.filterTimeout (gate DRASchedulerFilterTimeout, on in 1.34): a node
    whose search runs out is ``UnschedulableAndUnresolvable`` with upstream's ``timed out
    trying to allocate devices``; ``0s`` disables the limit."""
    f = tmp_path / "in.yaml"
    f.write_text(yaml.safe_dump_all(_objects(count)))
    args = ["simulate", str(f), "-o", "json"]
    if timeout is not None:
        cfg = tmp_path / "cfg.yaml"
        cfg.write_text(
            yaml.safe_dump(
                {
                    "apiVersion": "kubescheduler.config.k8s.io/v1",
                    "kind": "KubeSchedulerConfiguration",
                    "profiles": [
                        {
                            "schedulerName": "default-scheduler",
                            "pluginConfig": [
                                {"name": "DynamicResources", "args": {"filterTimeout": timeout}}
                            ],
                        }
                    ],
                }
            )
        )
        args += ["--config", str(cfg)]
    assert main(args) == 0
    (pod,) = json.loads(capsys.readouterr().out)["pods"]
    assert pod["node"] is None
    # then PostFilter: DynamicResources deallocates nothing, DefaultPreemption cannot help
    assert pod["message"] == message + (
        " still not schedulable, preemption: 0/1 nodes are available: 1 Preemption is not "
        "helpful for scheduling."
    )
