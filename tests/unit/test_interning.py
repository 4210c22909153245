"""Decoded objects share their equal immutable parts (`schedsim.api.interning`).

Not upstream behaviour: a memory measure of this project (issue 17 item 5). The tests check
that sharing never changes a value: equal parts are one object, unequal ones never are, key
order is kept, the table bound only loses sharing, and pods still pickle and evolve.
"""

from __future__ import annotations

import pickle
from typing import Any

import attrs

from schedsim.api import interning
from schedsim.api.core import Node, Pod
from schedsim.api.interning import EMPTY_MAP, changed_shared_maps, shared, shared_map


def _pod(name: str, labels: dict[str, str], cpu: str = "100m", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": dict(labels)},
        "spec": {
            "containers": [
                {"name": "c", "image": "nginx", "resources": {"requests": {"cpu": cpu}}}
            ],
            "tolerations": [{"key": "k", "operator": "Exists"}],
            **spec,
        },
    }


def test_pods_of_one_template_share_their_parts() -> None:
    a = Pod.from_manifest(_pod("a", {"app": "web"}))
    b = Pod.from_manifest(_pod("b", {"app": "web"}))
    assert a.labels is b.labels
    assert a.containers is b.containers
    assert a.containers[0].requests is b.containers[0].requests
    assert a.tolerations is b.tolerations
    for empty in (a.annotations, a.node_selector, a.overhead, a.containers[0].limits):
        assert empty is EMPTY_MAP
    assert a.name != b.name and a.uid != b.uid


def test_different_values_are_never_shared() -> None:
    a = Pod.from_manifest(_pod("a", {"app": "web"}))
    b = Pod.from_manifest(_pod("b", {"app": "db"}, cpu="200m"))
    assert a.labels == {"app": "web"} and b.labels == {"app": "db"}
    assert a.containers[0].requests != b.containers[0].requests
    assert a.containers is not b.containers


def test_key_order_is_kept() -> None:
    """Equal maps written in another order are separate objects: each pod iterates its
    labels in its manifest's order, as without sharing."""
    a = Pod.from_manifest(_pod("a", {"x": "1", "y": "2"}))
    b = Pod.from_manifest(_pod("b", {"y": "2", "x": "1"}))
    assert list(a.labels) == ["x", "y"]
    assert list(b.labels) == ["y", "x"]


def test_nodes_of_one_shape_share_allocatable_and_taints() -> None:
    def node(name: str) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name},
            "spec": {"taints": [{"key": "t", "effect": "NoSchedule"}]},
            "status": {"capacity": {"cpu": "4", "memory": "8Gi"}},
        }

    a, b = Node.from_manifest(node("a")), Node.from_manifest(node("b"))
    assert a.allocatable is b.allocatable and a.taints is b.taints
    assert a.labels is EMPTY_MAP


def test_table_bound_loses_sharing_not_values() -> None:
    """Past TABLE_LIMIT distinct values the table is emptied; values stay correct."""
    maps = [shared_map({"k": str(i)}) for i in range(interning.TABLE_LIMIT + 10)]
    assert [m["k"] for m in maps] == [str(i) for i in range(interning.TABLE_LIMIT + 10)]
    again = shared_map({"k": str(interning.TABLE_LIMIT + 5)})
    assert again is maps[interning.TABLE_LIMIT + 5]
    assert len(interning._maps) <= interning.TABLE_LIMIT
    values = [shared(("v", i), (i,)) for i in range(interning.TABLE_LIMIT + 10)]
    assert values == [(i,) for i in range(interning.TABLE_LIMIT + 10)]


def test_shared_pods_pickle_evolve_and_memo_apart() -> None:
    a = Pod.from_manifest(_pod("a", {"app": "web"}))
    b = Pod.from_manifest(_pod("b", {"app": "web"}))
    assert a.memo("k", lambda: 1) == 1
    assert b.memo("k", lambda: 2) == 2  # the memo is per pod, never shared
    assert a.memo("k", lambda: 3) == 1
    c = attrs.evolve(a, name="c")
    assert c.memo("k", lambda: 4) == 4
    assert pickle.loads(pickle.dumps(a)) == a


def test_a_write_into_a_shared_map_is_detected() -> None:
    """The suite-wide fixture's check: a shared map written to is reported."""
    pod = Pod.from_manifest(_pod("a", {"app": "detect-me"}))
    assert changed_shared_maps() == []
    labels = pod.labels
    assert isinstance(labels, dict)
    labels["app"] = "changed"
    try:
        assert changed_shared_maps() == [{"app": "changed"}]
    finally:
        labels["app"] = "detect-me"
    assert changed_shared_maps() == []
