"""The hinting simulator (CA ``simulator/scheduling/hinting_simulator_test.go``): hints first,
priority order, similar pods skipped after a failure, break on failure; both stores."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from schedsim.api.core import Node, Pod
from schedsim.autoscaler.hinting import HintingSimulator, Hints, hint_key
from schedsim.framework import Framework, Handle, default_profile
from schedsim.snapshot import (
    ClusterSnapshotStore,
    PredicateSnapshot,
)


@pytest.fixture
def snap(store: Callable[[], ClusterSnapshotStore]) -> PredicateSnapshot:
    s = PredicateSnapshot(Framework(default_profile(), Handle()), store())
    nodes = [
        Node.from_manifest(
            {
                "metadata": {"name": n},
                "status": {"allocatable": {"cpu": "1", "memory": "1Gi", "pods": "110"}},
            }
        )
        for n in ("n1", "n2", "n3")
    ]
    s.set_cluster_state(nodes, [])
    return s


def pod(name: str, cpu: str, owner: str | None = "rs", priority: int = 0) -> Pod:
    meta: dict[str, Any] = {"name": name}
    if owner:
        meta["ownerReferences"] = [
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner, "uid": owner,
             "controller": True}
        ]  # fmt: skip
    return Pod.from_manifest(
        {
            "metadata": meta,
            "spec": {
                "priority": priority,
                "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}],
            },
        }
    )


def test_hints_are_tried_first(snap: PredicateSnapshot) -> None:
    sim = HintingSimulator()
    p = pod("p", "600m")
    sim.hints.set(hint_key(p), "n3")
    r = sim.try_schedule_pods(snap, [p])
    assert [(x.pod.name, x.node_name) for x in r.scheduled] == [("p", "n3")]
    # a hint to a node that does not fit any more falls back to the search
    q = pod("q", "600m", owner="other")
    sim.hints.set(hint_key(q), "n3")
    r = sim.try_schedule_pods(snap, [q])
    assert r.scheduled[0].node_name != "n3"
    assert sim.hints.get(hint_key(q)) == r.scheduled[0].node_name


def test_priority_order_and_similar_pods(snap: PredicateSnapshot) -> None:
    """Higher priority first; after one pod of a controller fails, its equal siblings are not
    tried (no error recorded for them); other specs still are."""
    big = [pod(f"big-{i}", "2") for i in range(3)]
    small = pod("small", "500m", priority=5)
    r = HintingSimulator().try_schedule_pods(snap, [*big, small])
    assert [x.pod.name for x in r.scheduled] == ["small"]
    assert [p.name for p in r.unschedulable] == ["big-0", "big-1", "big-2"]
    assert list(r.errors) == [hint_key(big[0])]


def test_break_on_failure(snap: PredicateSnapshot) -> None:
    pods = [pod("a", "900m", owner="a"), pod("b", "5", owner="b"), pod("c", "100m", owner="c")]
    r = HintingSimulator().try_schedule_pods(snap, pods, break_on_failure=True)
    assert [x.pod.name for x in r.scheduled] == ["a"]
    assert [p.name for p in r.unschedulable] == ["b"]
    assert [p.name for p in r.unprocessed] == ["c"]


def test_acceptable_nodes(snap: PredicateSnapshot) -> None:
    r = HintingSimulator().try_schedule_pods(
        snap, [pod("a", "100m")], lambda ni: ni.node is not None and ni.node.name == "n2"
    )
    assert r.scheduled[0].node_name == "n2"


def test_hints_generations() -> None:
    h = Hints()
    h.set("a", "n1")
    h.drop_old()
    assert h.get("a") == "n1"
    h.set("a", "n2")
    assert h.get("a") == "n2"
    h.drop_old()
    h.drop_old()
    assert h.get("a") is None
