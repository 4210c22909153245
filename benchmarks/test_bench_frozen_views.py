"""The cost of the read-only views a stored NodeInfo hands out (issue 15, repro 9), as
ratios within one run: each frozen form against the plain one it replaced.

Run: ``pytest benchmarks/test_bench_frozen_views.py --benchmark-enable``; compare
``frozen`` with ``plain`` in the same group. Reads use the same slots (ratio ~1); the
owner's updates go through the slots' descriptors (`stored_add`) instead of ``+=``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from schedsim.framework.resource import FrozenResource, Resource, stored_add
from schedsim.framework.types import FrozenList

POD = Resource(milli_cpu=100, memory=128 << 20, scalar_resources={"example.com/gpu": 1})
LOOPS = 1000


def _read(r: Resource, a: Resource) -> Callable[[], int]:
    def run() -> int:
        total = 0
        for _ in range(LOOPS):
            total += a.milli_cpu - r.milli_cpu + a.memory - r.memory
        return total

    return run


def _update(r: Resource, frozen: bool) -> Callable[[], None]:
    def plain() -> None:
        for _ in range(LOOPS):
            r.add_resource(POD, 1)
            r.add_resource(POD, -1)

    def owner() -> None:
        assert isinstance(r, FrozenResource)
        for _ in range(LOOPS):
            stored_add(r, POD, 1)
            stored_add(r, POD, -1)

    return owner if frozen else plain


def _iterate(items: list[Any]) -> Callable[[], int]:
    def run() -> int:
        n = 0
        for _ in range(LOOPS // 100):
            for x in items:
                n += x
        return n

    return run


@pytest.mark.benchmark(group="frozen-views: read requested/allocatable")
@pytest.mark.parametrize("kind", ["plain", "frozen"])
def test_read(benchmark: Any, kind: str) -> None:
    base = Resource(milli_cpu=4000, memory=8 << 30)
    make = FrozenResource if kind == "frozen" else Resource.clone
    benchmark(_read(make(base), make(base)))


@pytest.mark.benchmark(group="frozen-views: owner update (add/remove a pod)")
@pytest.mark.parametrize("kind", ["plain", "frozen"])
def test_update(benchmark: Any, kind: str) -> None:
    r = FrozenResource() if kind == "frozen" else Resource()
    benchmark(_update(r, kind == "frozen"))


@pytest.mark.benchmark(group="frozen-views: iterate pods")
@pytest.mark.parametrize("kind", ["plain", "frozen"])
def test_iterate(benchmark: Any, kind: str) -> None:
    items = list(range(100))
    benchmark(_iterate(FrozenList(items) if kind == "frozen" else items))
