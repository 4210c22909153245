"""Structured allocator: one Allocate on a node with 100-device slices, CEL memo cold vs.
warm, plus the cost of one CEL evaluation.

Run: ``pytest benchmarks/test_allocator.py --benchmark-enable``. Compare within one run:
``cold`` (a fresh `CelCache`: environment, compile and 200 evaluations) over ``warm`` (the
scheduler's shared cache: every selector result memoized) is the ratio the memo buys; the
``cel-eval`` group gives the per-evaluation cost (µs) of a quantity selector on a memo miss.
"""

from __future__ import annotations

from typing import Any

import pytest

from schedsim.api.core import Node
from schedsim.api.resource import DeviceClass, ResourceClaim, ResourceSlice
from schedsim.dra import AllocatedState, Allocator, CelCache, DeviceId, DraFeatures

DRIVER = "gpu.example.com"
NODE = Node(name="node-1")
SELECTOR = (
    f'device.attributes["{DRIVER}"].model == "A100" && '
    f'device.capacity["{DRIVER}"].memory.compareTo(quantity("40Gi")) >= 0'
)


def _slices(n_slices: int = 2, per_slice: int = 100) -> list[ResourceSlice]:
    return [
        ResourceSlice.from_manifest(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": f"slice-{s}"},
                "spec": {
                    "driver": DRIVER,
                    "nodeName": "node-1",
                    "pool": {"name": f"pool-{s}", "generation": 1, "resourceSliceCount": 1},
                    "devices": [
                        {
                            "name": f"gpu-{i}",
                            "attributes": {
                                "model": {"string": "A100" if i % 2 else "T4"},
                                "index": {"int": i},
                            },
                            "capacity": {"memory": {"value": "80Gi" if i % 4 == 3 else "16Gi"}},
                        }
                        for i in range(per_slice)
                    ],
                },
            }
        )
        for s in range(n_slices)
    ]


def _setup() -> tuple[dict[str, DeviceClass], list[ResourceSlice], ResourceClaim, AllocatedState]:
    classes = {
        "gpu": DeviceClass.from_manifest(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "DeviceClass",
                "metadata": {"name": "gpu"},
                "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
            }
        )
    }
    claim = ResourceClaim.from_manifest(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "big-gpus"},
            "spec": {
                "devices": {
                    "requests": [
                        {
                            "name": "gpus",
                            "exactly": {
                                "deviceClassName": "gpu",
                                "count": 4,
                                "selectors": [{"cel": {"expression": SELECTOR}}],
                            },
                        }
                    ]
                }
            },
        }
    )
    # the first half of pool-0's large devices are taken, so the search walks past them
    taken = frozenset(DeviceId(DRIVER, "pool-0", f"gpu-{i}") for i in range(3, 100, 4))
    return classes, _slices(), claim, AllocatedState(devices=taken)


@pytest.fixture(scope="module")
def setup() -> Any:
    return _setup()


def _allocate(setup: Any, cache: CelCache) -> int:
    classes, slices, claim, state = setup
    got = Allocator(DraFeatures(), state, classes, slices, cache).allocate(NODE, [claim])
    assert got is not None
    return len(got[0].results)


@pytest.mark.benchmark(group="allocate-100-device-slices")
def test_allocate_cel_memo_cold(benchmark: Any, setup: Any) -> None:
    """A fresh CelCache per Allocate: compile both selectors, evaluate them per device."""
    assert benchmark(lambda: _allocate(setup, CelCache())) == 4


@pytest.mark.benchmark(group="allocate-100-device-slices")
def test_allocate_cel_memo_warm(benchmark: Any, setup: Any) -> None:
    """The scheduler's shared CelCache: selector results come from the memo."""
    cache = CelCache()
    _allocate(setup, cache)
    evaluations = cache.evaluations
    assert benchmark(lambda: _allocate(setup, cache)) == 4
    assert cache.evaluations == evaluations  # nothing re-evaluated


@pytest.mark.benchmark(group="cel-eval")
def test_cel_eval_quantity_selector_memo_miss(benchmark: Any, setup: Any) -> None:
    """One evaluation of the quantity selector (activation cached, result memo cleared)."""
    _, slices, _, _ = setup
    cache = CelCache(max_results=1)  # every new pair clears the memo: each call evaluates
    devices = slices[0].devices
    cache.matches(SELECTOR, DRIVER, devices[0])
    state = {"i": 0}

    def run() -> bool:
        state["i"] = (state["i"] + 1) % 2
        return cache.matches(SELECTOR, DRIVER, devices[state["i"]])

    benchmark(run)
    assert cache.evaluations > 1
