"""`get_node_info` and `list_node_infos` allocate nothing on an unchanged snapshot.

`PredicateSnapshot` promises that get/list return the stored objects with no allocation per
call (the store's list is cached until the node set changes; CA's delta store caches its
node list the same way). Measured with tracemalloc over many calls, after one warm-up call
that may build the caches:

* the net allocation attributed to schedsim's own source files (any frame under the
  ``schedsim`` package) is 0 bytes;
* the peak traced memory during the calls does not exceed that of the same driver loop
  calling a plain Python function, so not even a temporary object is allocated per call;
* every call returns the stored object itself (``is``).

Both stores, at the base state, after forks with no writes, and after a write in a fork.
"""

from __future__ import annotations

import functools
import gc
import itertools
import tracemalloc
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

import schedsim
from schedsim.framework import Framework, Handle, default_profile
from schedsim.snapshot import (
    ClusterSnapshotStore,
    DeltaSnapshotStore,
    NodeInfo,
    PredicateSnapshot,
)
from schedsim.testing import make_node, make_pod

CALLS = 1000
SCHEDSIM_FILES = str(Path(schedsim.__file__).resolve().parent / "*")
"""tracemalloc filename pattern for every file of the schedsim package."""


def _snapshot(make_store: Callable[[], ClusterSnapshotStore]) -> PredicateSnapshot:
    snap = PredicateSnapshot(Framework(default_profile(), Handle()), make_store())
    nodes = [make_node(f"n{i}") for i in range(5)]
    pods = [make_pod(f"p{i}", node_name=f"n{i % 5}", pvcs=["claim"]) for i in range(12)]
    snap.set_cluster_state(nodes, pods)
    return snap


def _base(s: PredicateSnapshot) -> None:
    pass


def _fork(s: PredicateSnapshot) -> None:
    s.fork()


def _fork3(s: PredicateSnapshot) -> None:
    s.fork()
    s.fork()
    s.fork()


def _fork_write(s: PredicateSnapshot) -> None:
    s.list_node_infos()
    s.fork()
    s.force_add_pod(make_pod("extra"), "n2")
    s.force_remove_pod("default", "p3", "n3")


SITUATIONS: dict[str, Callable[[PredicateSnapshot], None]] = {
    "base": _base,
    "fork": _fork,
    "fork-fork-fork": _fork3,
    "write-in-fork": _fork_write,
}
"""How the snapshot got to the state measured (nothing changes after that)."""


# --------------------------------------------------------------------------- measurement

# The drivers allocate nothing themselves: the loop iterates a pre-built itertools.repeat,
# the callable is pre-bound and the comparison yields a bool.


def _drive_get(get: Callable[[str], object], name: str, want: object, loop: Iterator[None]) -> bool:
    ok = True
    for _ in loop:
        if get(name) is not want:
            ok = False
    return ok


def _drive_list(lst: Callable[[], object], want: object, loop: Iterator[None]) -> bool:
    ok = True
    for _ in loop:
        if lst() is not want:
            ok = False
    return ok


def _returning(value: object) -> Callable[..., object]:
    """A plain Python function returning ``value``: the baseline for peak memory (built
    before measuring, so the measurement includes only calling it)."""

    def fake(*_: object) -> object:
        return value

    return fake


class Measurement:
    """What `measure` saw."""

    def __init__(self, ok: bool, schedsim_net: int, peak: int, lines: list[str]) -> None:
        self.ok = ok
        self.schedsim_net = schedsim_net  # bytes still allocated by schedsim code afterwards
        self.peak = peak  # peak traced memory during the calls, above the memory before them
        self.lines = lines  # what schedsim code allocated, for the failure message


def measure(drive: Callable[[Iterator[None]], bool]) -> Measurement:
    """Run ``drive`` over `CALLS` iterations under tracemalloc.

    The peak includes a small fixed overhead of the measurement itself, the same for the
    baseline; an allocation per call, even one freed at once, raises it above the
    baseline's.
    """
    loop = itertools.repeat(None, CALLS)
    gc.collect()
    gc.disable()
    tracemalloc.start(25)
    try:
        before = tracemalloc.take_snapshot()
        start, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        ok = drive(loop)
        _, peak = tracemalloc.get_traced_memory()
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
        gc.enable()
    only_schedsim = [tracemalloc.Filter(True, SCHEDSIM_FILES, all_frames=True)]
    diff = after.filter_traces(only_schedsim).compare_to(
        before.filter_traces(only_schedsim), "traceback"
    )
    grown = [d for d in diff if d.size_diff or d.count_diff]
    lines = [f"{d.size_diff:+} B {d.count_diff:+}: {d.traceback.format()[-1:]}" for d in grown]
    return Measurement(ok, sum(d.size_diff for d in grown), peak - start, lines)


def _assert_no_allocation(what: str, got: Measurement, baseline: Measurement) -> None:
    assert got.ok, f"{what} did not return the stored object on every call"
    assert got.schedsim_net == 0, (
        f"{what}: {CALLS} calls left {got.schedsim_net} bytes allocated by schedsim code:\n"
        + "\n".join(got.lines)
    )
    assert got.peak <= baseline.peak, (
        f"{what}: {CALLS} calls raised peak memory by {got.peak} bytes "
        f"(a plain Python function: {baseline.peak})"
    )


# --------------------------------------------------------------------------- tests


@pytest.mark.parametrize("situation", SITUATIONS)
def test_get_node_info_allocates_nothing(
    store_name: str, store: Callable[[], ClusterSnapshotStore], situation: str
) -> None:
    """``get_node_info(name)`` for each node: the stored NodeInfo, no allocation."""
    snap = _snapshot(store)
    SITUATIONS[situation](snap)
    nodes: Sequence[NodeInfo] = snap.list_node_infos()
    for ni in nodes:
        assert ni.node is not None
        name = ni.node.name
        get = snap.get_node_info
        assert get(name) is ni  # warm-up
        fake = _returning(ni)
        got = measure(functools.partial(_drive_get, get, name, ni))
        baseline = measure(functools.partial(_drive_get, fake, name, ni))
        _assert_no_allocation(
            f"{store_name} store, {situation}: get_node_info({name!r})", got, baseline
        )


@pytest.mark.parametrize("situation", SITUATIONS)
def test_list_node_infos_allocates_nothing(
    store_name: str, store: Callable[[], ClusterSnapshotStore], situation: str
) -> None:
    """``list_node_infos()``: the same cached list object every call, no allocation."""
    snap = _snapshot(store)
    SITUATIONS[situation](snap)
    lst = snap.list_node_infos
    nodes = lst()  # warm-up: may build the cache
    assert len(nodes) == 5
    fake = _returning(nodes)
    got = measure(functools.partial(_drive_list, lst, nodes))
    baseline = measure(functools.partial(_drive_list, fake, nodes))
    _assert_no_allocation(f"{store_name} store, {situation}: list_node_infos()", got, baseline)


@pytest.mark.parametrize("depth", [1, 3])
def test_delta_fork_without_writes_shares_the_list(depth: int) -> None:
    """After forks with no writes, the delta store lists the very list object it listed
    before them (a fork costs nothing until it writes), and the same NodeInfos."""
    snap = _snapshot(DeltaSnapshotStore)
    before = snap.list_node_infos()
    for _ in range(depth):
        snap.fork()
    assert snap.list_node_infos() is before
    for ni in before:
        assert ni.node is not None
        assert snap.get_node_info(ni.node.name) is ni
    snap.revert()
    assert snap.list_node_infos() is before
