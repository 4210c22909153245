"""One test per class of upstream allocator bug (and the behaviour each mirrors).

Each docstring names the Kubernetes behaviour or test it mirrors; values are chosen so that
the buggy behaviour gives a different answer.
"""

from __future__ import annotations

from fractions import Fraction

from dra_builders import NODE, claim, device, device_class, picked, request, resource_slice

from schedsim.dra import AllocatedState, Allocator, DeviceId, DraFeatures

PARTITIONABLE = DraFeatures(partitionable_devices=True)
CONSUMABLE = DraFeatures(partitionable_devices=True, consumable_capacity=True)
CLASSES = {"class-a": device_class()}


def test_rejected_candidate_releases_its_counters() -> None:
    """A device that takes its counters and is then rejected by a claim constraint gives the
    counters back. 1.34's ``allocateDevice`` runs ``checkAvailableCounters`` (which reserves)
    before the constraint check and returns without ``deallocateCountersForDevice``, so the
    next candidate sees 8 of 10 counters gone. Here ``dev-b`` (numa 1) is tried first for
    req-1 and rejected by ``matchAttribute``; ``dev-c`` (numa 0) then needs 8 of the 10."""
    slice_ = resource_slice(
        [
            device("dev-a", ints={"numa": 0}),
            device("dev-b", ints={"numa": 1}, counters={"mem": "8"}),
            device("dev-c", ints={"numa": 0}, counters={"mem": "8"}),
        ],
        counters={"mem": "10"},
    )
    c = claim(
        "c",
        [
            request("req-0", selectors=['device.attributes["driver-a"].numa == 0']),
            request("req-1", selectors=['device.attributes["driver-a"].numa >= 0']),
        ],
        constraints=[{"matchAttribute": "driver-a/numa"}],
    )
    got = Allocator(PARTITIONABLE, AllocatedState(), CLASSES, [slice_]).allocate(NODE, [c])
    assert got is not None
    assert picked(got[0]) == [("req-0", "dev-a"), ("req-1", "dev-c")]


def test_backtracking_returns_counters() -> None:
    """Counters reserved on a branch that fails later are returned before the next branch
    (TestAllocator/partitionable-devices-*, where claims compete for one counter set): the
    first claim first takes ``big`` (6 of 8), the second claim then cannot get ``mid`` (4),
    so the search must undo ``big`` and use ``small`` (2) + ``mid`` (4)."""
    slice_ = resource_slice(
        [
            device("big", counters={"mem": "6"}),
            device("small", counters={"mem": "2"}),
            device("mid", counters={"mem": "4"}, ints={"mid": 1}),
        ],
        counters={"mem": "8"},
    )
    c0 = claim("c0", [request("req-0")])
    c1 = claim("c1", [request("req-1", selectors=['has(device.attributes["driver-a"].mid)'])])
    got = Allocator(PARTITIONABLE, AllocatedState(), CLASSES, [slice_]).allocate(NODE, [c0, c1])
    assert got is not None
    assert [picked(a) for a in got] == [[("req-0", "small")], [("req-1", "mid")]]


def test_all_mode_over_counter_devices_allocates_all_when_counters_suffice() -> None:
    """``allocationMode: All`` over partitions of one counter set: all of them when the set
    covers them (TestAllocator/partitionable-devices-with-all-allocation-mode)."""
    slice_ = resource_slice(
        [device("p0", counters={"mem": "4"}), device("p1", counters={"mem": "4"})],
        counters={"mem": "8"},
    )
    c = claim("c", [request("req-0", allocationMode="All")])
    got = Allocator(PARTITIONABLE, AllocatedState(), CLASSES, [slice_]).allocate(NODE, [c])
    assert got is not None
    assert sorted(picked(got[0])) == [("req-0", "p0"), ("req-0", "p1")]


def test_all_mode_over_counter_devices_is_unschedulable_when_counters_do_not_suffice() -> None:
    """The same with 6 of 8 counters needed twice: not an error, just no allocation on this
    node (upstream ``allocateOne`` returns ``false, nil`` when an "all" device cannot be
    allocated; counters are no constraint, so this is no "claim constraint" error)."""
    slice_ = resource_slice(
        [device("p0", counters={"mem": "6"}), device("p1", counters={"mem": "6"})],
        counters={"mem": "8"},
    )
    c = claim("c", [request("req-0", allocationMode="All")])
    assert Allocator(PARTITIONABLE, AllocatedState(), CLASSES, [slice_]).allocate(NODE, [c]) is None


def _shared_slice() -> list:  # type: ignore[type-arg]
    return [
        resource_slice(
            [
                device(
                    "shared",
                    allowMultipleAllocations=True,
                    capacity={"bw": {"value": "4"}},
                    counters={"mem": "6"},
                ),
                device("part", counters={"mem": "4"}),
            ],
            counters={"mem": "8"},
        )
    ]


def test_shared_device_counters_count_once_across_allocations() -> None:
    """A device that allows multiple allocations holds its counters once, however many
    allocations share it: already shared by another claim (``AllocatedState``), a partition
    that would overlap (6 + 4 > 8) is not available, while the shared device itself still is
    (its counters are already taken). Upstream 1.34 only subtracts counters of exclusively
    allocated devices, so it would hand out ``part`` too."""
    did = DeviceId("driver-a", "pool-1", "shared")
    state = AllocatedState(
        shared_device_ids=frozenset({(did, "uid-1")}),
        consumed_capacity={did: {"driver-a/bw": Fraction(1)}},
    )
    alloc = Allocator(CONSUMABLE, state, CLASSES, _shared_slice())
    want_part = claim(
        "p",
        [
            request(
                "req-0",
                selectors=["!device.allowMultipleAllocations"],
            )
        ],
    )
    assert alloc.allocate(NODE, [want_part]) is None
    want_shared = claim(
        "s",
        [
            request(
                "req-0",
                selectors=["device.allowMultipleAllocations"],
                capacity={"requests": {"bw": "3"}},
            )
        ],
    )
    got = alloc.allocate(NODE, [want_shared])
    assert got is not None
    (result,) = got[0].results
    assert result.device == "shared" and result.share_id
    assert result.consumed_capacity == {"bw": Fraction(3)}


def test_shared_device_consumed_capacity_is_accounted() -> None:
    """Consumed capacity of earlier shared allocations (``AllocatedState``) and of this call
    adds up (TestAllocator/consumable-capacity-multi-allocatable-device-with-some-remaining-
    consumable-capacity): 1 of 4 used, so one request for 3 fits but a second one in the same
    call does not, and within one call two claims sharing the device take its counters once."""
    did = DeviceId("driver-a", "pool-1", "shared")
    state = AllocatedState(
        shared_device_ids=frozenset({(did, "uid-1")}),
        consumed_capacity={did: {"driver-a/bw": Fraction(1)}},
    )

    def wants(name: str, bw: str) -> object:
        return claim(
            name,
            [
                request(
                    "req-0",
                    selectors=["device.allowMultipleAllocations"],
                    capacity={"requests": {"bw": bw}},
                )
            ],
        )

    alloc = Allocator(CONSUMABLE, state, CLASSES, _shared_slice())
    assert alloc.allocate(NODE, [wants("a", "3"), wants("b", "1")]) is None  # type: ignore[list-item]
    fresh = Allocator(CONSUMABLE, AllocatedState(), CLASSES, _shared_slice())
    got = fresh.allocate(NODE, [wants("a", "2"), wants("b", "2")])  # type: ignore[list-item]
    assert got is not None
    ids = {a.results[0].share_id for a in got}
    assert len(ids) == 2 and None not in ids


def test_greedy_choice_for_first_claim_is_backtracked() -> None:
    """The first claim would take the large device greedily; the second claim needs it, so
    the search goes back and gives the first claim the small one
    (TestAllocator/small-and-large-backtrack-claims)."""
    slice_ = resource_slice(
        [
            device("large", capacity={"memory": {"value": "2Gi"}}),
            device("small", capacity={"memory": {"value": "1Gi"}}),
        ]
    )
    sel = 'device.capacity["driver-a"].memory.compareTo(quantity("{}")) >= 0'
    c0 = claim("c0", [request("req-0", selectors=[sel.format("1Gi")])])
    c1 = claim("c1", [request("req-1", selectors=[sel.format("2Gi")])])
    got = Allocator(DraFeatures(), AllocatedState(), CLASSES, [slice_]).allocate(NODE, [c0, c1])
    assert got is not None
    assert [picked(a) for a in got] == [[("req-0", "small")], [("req-1", "large")]]


def test_prioritized_subrequest_that_blocks_a_later_request_is_abandoned() -> None:
    """A firstAvailable choice is kept only if the rest of the search succeeds with it
    (TestAllocator/prioritized-list-with-backtracking): subReq-0 could take the only large
    device, but req-1 needs it, so subReq-1 (small) is chosen."""
    slice_ = resource_slice(
        [
            device("large", ints={"size": 2}),
            device("small", ints={"size": 1}),
        ]
    )
    c = claim(
        "c",
        [
            {
                "name": "req-0",
                "firstAvailable": [
                    {
                        "name": "subReq-0",
                        "deviceClassName": "class-a",
                        "selectors": [
                            {"cel": {"expression": 'device.attributes["driver-a"].size == 2'}}
                        ],
                    },
                    {"name": "subReq-1", "deviceClassName": "class-a"},
                ],
            },
            request("req-1", selectors=['device.attributes["driver-a"].size == 2']),
        ],
    )
    got = Allocator(DraFeatures(), AllocatedState(), CLASSES, [slice_]).allocate(NODE, [c])
    assert got is not None
    assert picked(got[0]) == [("req-0/subReq-1", "small"), ("req-1", "large")]
