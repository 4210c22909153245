"""What get/list return cannot be changed in a way that corrupts the snapshot (issue 15,
repro 9: ``node_info.requested.milli_cpu = 0`` silently changed the stored snapshot).

The design's mental model: "what get/list return is read-only and valid until the next
mutation; callers never mutate it". kube-scheduler hands plugins pointers and trusts them;
schedsim makes the promise hold: every aggregate a stored NodeInfo exposes is a frozen view
(same reads, no allocation per read), and every attempted change raises, leaving the store
as it was. The owner's own updates (add/remove pod, snapshot) still work.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import pytest

from schedsim.framework import Framework, Handle, default_profile
from schedsim.framework.resource import READ_ONLY, FrozenResource, Resource, frozen_copy, stored_add
from schedsim.snapshot import (
    ClusterSnapshotStore,
    DeltaSnapshotStore,
    NodeInfo,
    PredicateSnapshot,
)
from schedsim.testing import make_node, make_pod


def _snapshot(make_store: Callable[[], ClusterSnapshotStore]) -> PredicateSnapshot:
    snap = PredicateSnapshot(Framework(default_profile(), Handle()), make_store())
    pods = [
        make_pod("a", node_name="n1", cpu="1", memory="1Gi", pvcs=["claim"]),
        make_pod("b", node_name="n1", cpu="500m", memory=None),
    ]
    snap.set_cluster_state([make_node("n1", cpu="4", memory="8Gi")], pods)
    return snap


def _state(ni: NodeInfo) -> tuple[Any, ...]:
    return (
        ni.requested.clone(),
        ni.non_zero_requested.clone(),
        ni.allocatable.clone(),
        [p.pod.name for p in ni.pods],
        dict(ni.pvc_ref_counts),
        dict(ni.image_states),
        len(ni.used_ports),
    )


def _set_item(mapping: Any, key: str, value: object) -> None:
    mapping[key] = value  # what a caller holding the Mapping would write


CHANGES: dict[str, tuple[Callable[[NodeInfo], object], type[Exception]]] = {
    "requested.milli_cpu = 0": (lambda ni: setattr(ni.requested, "milli_cpu", 0), AttributeError),
    "requested.add_resource": (
        lambda ni: ni.requested.add_resource(Resource(milli_cpu=1)),
        AttributeError,
    ),
    "non_zero_requested.memory = 0": (
        lambda ni: setattr(ni.non_zero_requested, "memory", 0),
        AttributeError,
    ),
    "allocatable.add": (lambda ni: ni.allocatable.add({"cpu": Fraction(1)}), AttributeError),
    "allocatable.scalar_resources[x] = 1": (
        lambda ni: _set_item(ni.allocatable.scalar_resources, "x", 1),
        TypeError,
    ),
    "pods.append": (lambda ni: ni.pods.append(ni.pods[0]), AttributeError),  # type: ignore[attr-defined]
    "pods.pop": (lambda ni: ni.pods.pop(), AttributeError),  # type: ignore[attr-defined]
    "del pods[0]": (lambda ni: ni.pods.__delitem__(0), AttributeError),  # type: ignore[attr-defined]
    "pods.clear": (lambda ni: ni.pods.clear(), AttributeError),  # type: ignore[attr-defined]
    "pvc_ref_counts[x] = 9": (
        lambda ni: _set_item(ni.pvc_ref_counts, "default/claim", 9),
        TypeError,
    ),
    "image_states.clear": (lambda ni: ni.image_states.clear(), AttributeError),  # type: ignore[attr-defined]
    "used_ports.add": (lambda ni: ni.used_ports.add("", "TCP", 80), AttributeError),
    "pod resource milli_cpu = 0": (
        lambda ni: setattr(ni.pods[0].calculate_resource().resource, "milli_cpu", 0),
        AttributeError,
    ),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_changing_what_get_returns_raises_and_leaves_the_store(
    store: Callable[[], ClusterSnapshotStore], change: str
) -> None:
    """Each change raises and the stored NodeInfo reads as before, in the base state and in
    a fork."""
    snap = _snapshot(store)
    for forked in (False, True):
        if forked:
            snap.fork()
        ni = snap.get_node_info("n1")
        before = _state(ni)
        do, error = CHANGES[change]
        with pytest.raises(error):
            do(ni)
        assert _state(snap.get_node_info("n1")) == before
        assert _state(snap.list_node_infos()[0]) == before


def test_the_message_says_what_to_do() -> None:
    ni = _snapshot(DeltaSnapshotStore).get_node_info("n1")
    with pytest.raises(AttributeError) as info:
        ni.requested.milli_cpu = 0
    assert str(info.value) == f"cannot set milli_cpu: {READ_ONLY}"


def test_reads_are_the_stored_values_without_allocating() -> None:
    """The views are the stored objects: the same object on every read (nothing is built
    per read) with the values kube-scheduler computes (1.5 CPU, 1Gi + 200Mi non-zero)."""
    ni = _snapshot(DeltaSnapshotStore).get_node_info("n1")
    assert ni.requested is ni.requested and ni.pods is ni.pods
    assert ni.pvc_ref_counts is ni.pvc_ref_counts and ni.used_ports is ni.used_ports
    assert ni.requested == Resource(milli_cpu=1500, memory=1 << 30)
    assert ni.non_zero_requested.memory == (1 << 30) + 200 * (1 << 20)
    assert dict(ni.pvc_ref_counts) == {"default/claim": 1}


def test_owner_updates_and_copies_still_work() -> None:
    """Scheduling and removing pods (the owner's changes) go on; a ``snapshot()`` copy and a
    ``clone()`` are independent, and ``clone()`` is an ordinary mutable Resource; the frozen
    views survive pickling (sweeps send snapshots to workers)."""
    snap = _snapshot(DeltaSnapshotStore)
    snap.fork()
    snap.force_add_pod(make_pod("c", cpu="250m", memory=None), "n1")
    assert snap.get_node_info("n1").requested.milli_cpu == 1750
    snap.force_remove_pod("default", "a", "n1")
    ni = snap.get_node_info("n1")
    assert ni.requested.milli_cpu == 750 and sorted(p.pod.name for p in ni.pods) == ["b", "c"]
    snap.revert()
    assert snap.get_node_info("n1").requested.milli_cpu == 1500
    copy = ni.snapshot()
    copy.remove_pod(copy.pods[0].pod)
    assert len(ni.pods) == 2 and len(copy.pods) == 1
    mine = ni.requested.clone()
    mine.milli_cpu = 0
    assert ni.requested.milli_cpu == 750
    again = pickle.loads(pickle.dumps(ni))
    assert again.requested == ni.requested and len(again.pods) == 2
    with pytest.raises(AttributeError):
        again.requested.milli_cpu = 0


@pytest.mark.parametrize("scalars", [{}, {"example.com/gpu": 2}])
def test_frozen_copy_is_an_independent_equal_copy(scalars: dict[str, int]) -> None:
    """`frozen_copy` (NodeInfo.snapshot's copy of its sums) equals ``FrozenResource(source)``
    and shares nothing that `stored_add` changes."""
    source = FrozenResource(Resource(1500, 2048, 10, 110, dict(scalars)))
    copy = frozen_copy(source)
    assert copy == FrozenResource(source) and copy is not source
    assert repr(copy) == repr(FrozenResource(source))
    stored_add(copy, Resource(500, 1024, 0, 0, {"example.com/gpu": 1}))
    assert source == FrozenResource(Resource(1500, 2048, 10, 110, dict(scalars)))
    assert copy.milli_cpu == 2000 and copy.scalar_resources["example.com/gpu"] == 1 + scalars.get(
        "example.com/gpu", 0
    )
    with pytest.raises(AttributeError):
        copy.milli_cpu = 1  # type: ignore[misc]
