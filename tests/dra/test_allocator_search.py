"""The search is complete: on small random inputs the allocator finds an allocation exactly
when a brute-force enumeration does, and what it returns is valid.

Mirrors the claim of upstream's ``allocateOne`` ("an exhaustive search ... all requests get
matched against all candidates in all possible orders"), checked against an independent
enumeration instead of hand-picked cases. Inputs combine selectors, ``matchAttribute``,
prioritized lists (``firstAvailable``) and shared counters (partitionable devices).
"""

from __future__ import annotations

import itertools
from typing import Any

from dra_builders import NODE, claim, device, device_class, resource_slice
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedsim.api.resource import AllocationResult
from schedsim.dra import AllocatedState, Allocator, CelCache, DraFeatures

FEATURES = DraFeatures(partitionable_devices=True, prioritized_list=True)
CLASSES = {"class-a": device_class()}
CACHE = CelCache()  # shared like a scheduler's; results are memoized per device object

Dev = tuple[int, int, int]  # size, numa, counters consumed (0 = none)
Sub = tuple[int, int]  # count, minimum size
Req = list[Sub]  # one entry: exactly; two: firstAvailable
Claim = tuple[list[Req], bool]  # requests, matchAttribute numa over all requests

devices_st = st.lists(
    st.tuples(st.integers(0, 2), st.integers(0, 1), st.integers(0, 4)), min_size=1, max_size=5
)
sub_st = st.tuples(st.integers(1, 2), st.integers(0, 2))
req_st = st.lists(sub_st, min_size=1, max_size=2)
claim_st = st.tuples(st.lists(req_st, min_size=1, max_size=2), st.booleans())
claims_st = st.lists(claim_st, min_size=1, max_size=2).filter(
    lambda cs: sum(max(s[0] for s in r) for c in cs for r in c[0]) <= 5
)


def _selector(min_size: int) -> list[dict[str, Any]]:
    return [{"cel": {"expression": f'device.attributes["driver-a"].size >= {min_size}'}}]


def _build(devs: list[Dev], counter_total: int, claims: list[Claim]) -> tuple[Any, list[Any]]:
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
    built = []
    for ci, (reqs, match) in enumerate(claims):
        requests: list[dict[str, Any]] = []
        for ri, subs in enumerate(reqs):
            if len(subs) == 1:
                count, size = subs[0]
                body = {"deviceClassName": "class-a", "count": count, "selectors": _selector(size)}
                requests.append({"name": f"r{ri}", "exactly": body})
            else:
                requests.append(
                    {
                        "name": f"r{ri}",
                        "firstAvailable": [
                            {
                                "name": f"s{si}",
                                "deviceClassName": "class-a",
                                "count": count,
                                "selectors": _selector(size),
                            }
                            for si, (count, size) in enumerate(subs)
                        ],
                    }
                )
        constraints = [{"matchAttribute": "driver-a/numa"}] if match else []
        built.append(claim(f"c{ci}", requests, constraints))
    return slice_, built


def _feasible(
    devs: list[Dev], counter_total: int, claims: list[Claim], choice: tuple[int, ...]
) -> bool:
    """Brute force: some injective assignment of devices to the device slots of ``choice``
    (one subrequest index per request, claims then requests) meets every rule."""
    slots: list[tuple[int, int]] = []  # (claim index, minimum size)
    k = 0
    for ci, (reqs, _) in enumerate(claims):
        for subs in reqs:
            count, size = subs[choice[k]]
            k += 1
            slots += [(ci, size)] * count
    for perm in itertools.permutations(range(len(devs)), len(slots)):
        if any(devs[d][0] < size for d, (_, size) in zip(perm, slots, strict=True)):
            continue
        if sum(devs[d][2] for d in perm) > counter_total:
            continue
        ok = True
        for ci, (_, match) in enumerate(claims):
            numas = {devs[d][1] for d, (c, _) in zip(perm, slots, strict=True) if c == ci}
            if match and len(numas) > 1:
                ok = False
        if ok:
            return True
    return False


def _choices(claims: list[Claim]) -> list[tuple[int, ...]]:
    return list(itertools.product(*[range(len(subs)) for reqs, _ in claims for subs in reqs]))


def _valid(
    devs: list[Dev], counter_total: int, claims: list[Claim], got: list[AllocationResult]
) -> None:
    """Every result obeys its (sub)request's selector and the claim's constraint; no device
    twice; counters within the set."""
    used: list[int] = []
    for (reqs, match), allocation in zip(claims, got, strict=True):
        numas = set()
        for result in allocation.results:
            d = int(result.device.removeprefix("dev-"))
            used.append(d)
            numas.add(devs[d][1])
            name, _, sub = result.request.partition("/")
            _, size = reqs[int(name[1:])][int(sub[1:]) if sub else 0]
            assert devs[d][0] >= size
        assert not match or len(numas) <= 1
    assert len(used) == len(set(used)), "a device was allocated twice"
    assert sum(devs[d][2] for d in used) <= counter_total


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(devs=devices_st, counter_total=st.integers(3, 8), claims=claims_st)
def test_search_is_complete(devs: list[Dev], counter_total: int, claims: list[Claim]) -> None:
    slice_, built = _build(devs, counter_total, claims)
    got = Allocator(FEATURES, AllocatedState(), CLASSES, [slice_], CACHE).allocate(NODE, built)
    feasible = [c for c in _choices(claims) if _feasible(devs, counter_total, claims, c)]
    assert (got is not None) == bool(feasible), f"allocator {got}, brute force {feasible}"
    if got is None:
        return
    _valid(devs, counter_total, claims, got)
    # every request gets its count of devices from the chosen subrequest
    for (reqs, _), allocation in zip(claims, got, strict=True):
        for ri, subs in enumerate(reqs):
            names = [r.request for r in allocation.results if r.request.split("/")[0] == f"r{ri}"]
            assert len(set(names)) == 1
            sub = names[0].partition("/")[2]
            assert len(names) == subs[int(sub[1:]) if sub else 0][0]
    # the very first decision of the search is the first subrequest that can succeed
    first_subs = claims[0][0][0]
    if len(first_subs) > 1:
        first_ok = min(c[0] for c in feasible)
        assert got[0].results[0].request == f"r0/s{first_ok}"
