"""NodeAffinity PreScore/Score/NormalizeScore: upstream's table
(node_affinity_test.go TestNodeAffinityPriority) with its case names and expected normalized
scores."""

from __future__ import annotations

from typing import Any

import pytest

from schedsim.api.core import Node, Pod
from schedsim.framework import Code, CycleState, Handle
from schedsim.snapshot import NodeInfo
from schedsim_plugins.nodeaffinity import NodeAffinity

LABEL1 = {"foo": "bar"}
LABEL2 = {"key": "value"}
LABEL3 = {"az": "az1"}
LABEL4 = {"abc": "az11", "def": "az22"}
LABEL5 = {"foo": "bar", "key": "value", "az": "az1"}


def pref(weight: int, *exprs: tuple[str, str]) -> dict[str, Any]:
    return {
        "weight": weight,
        "preference": {
            "matchExpressions": [{"key": k, "operator": "In", "values": [v]} for k, v in exprs]
        },
    }


AFFINITY1 = {"preferredDuringSchedulingIgnoredDuringExecution": [pref(2, ("foo", "bar"))]}
AFFINITY2 = {
    "preferredDuringSchedulingIgnoredDuringExecution": [
        pref(2, ("foo", "bar")),
        pref(4, ("key", "value")),
        pref(5, ("foo", "bar"), ("key", "value"), ("az", "az1")),
    ]
}
ADDED3 = {"preferredDuringSchedulingIgnoredDuringExecution": [pref(3, ("key", "value"))]}


def pod(node_affinity: dict[str, Any] | None = None) -> Pod:
    spec: dict[str, Any] = {}
    if node_affinity is not None:
        spec["affinity"] = {"nodeAffinity": node_affinity}
    return Pod.from_manifest({"metadata": {"name": "p"}, "spec": spec})


def nodes(*named: tuple[str, dict[str, str]]) -> list[NodeInfo]:
    return [
        NodeInfo(Node.from_manifest({"metadata": {"name": n, "labels": lb}})) for n, lb in named
    ]


TABLE = [
    (
        "all nodes are same priority as NodeAffinity is nil",
        None,
        {},
        [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL3)],
        False,
        [0, 0, 0],
    ),
    (
        "no node matches preferred scheduling requirements in NodeAffinity of pod so all nodes' priority is zero",  # noqa: E501 - upstream's case name
        AFFINITY1,
        {},
        [("node1", LABEL4), ("node2", LABEL2), ("node3", LABEL3)],
        True,
        [0, 0, 0],
    ),
    (
        "only node1 matches the preferred scheduling requirements of pod",
        AFFINITY1,
        {},
        [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL3)],
        True,
        [100, 0, 0],
    ),
    (
        "all nodes matches the preferred scheduling requirements of pod but with different priorities ",  # noqa: E501 - upstream's case name
        AFFINITY2,
        {},
        [("node1", LABEL1), ("node5", LABEL5), ("node2", LABEL2)],
        True,
        [18, 100, 36],
    ),
    (
        "added affinity",
        None,
        {"addedAffinity": AFFINITY1},
        [("node1", LABEL1), ("node2", LABEL2)],
        True,
        [100, 0],
    ),
    (
        "added affinity and pod has default affinity",
        AFFINITY1,
        {"addedAffinity": ADDED3},
        [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL5)],
        True,
        [40, 60, 100],
    ),
    (
        "calculate the priorities correctly even if PreScore is not called",
        AFFINITY2,
        {},
        [("node1", LABEL1), ("node5", LABEL5), ("node2", LABEL2)],
        False,
        [18, 100, 36],
    ),
]


@pytest.mark.parametrize("row", TABLE, ids=[r[0] for r in TABLE])
def test_node_affinity_priority(row: tuple[Any, ...]) -> None:
    """Raw score: the weights of the matching preferred terms (pod's and addedAffinity's);
    NormalizeScore: DefaultNormalizeScore(100, false)."""
    _, affinity, args, named, run_pre_score, want = row
    plugin = NodeAffinity(args, Handle())
    p = pod(affinity)
    infos = nodes(*named)
    state = CycleState()
    if run_pre_score:
        assert plugin.schedsim_pre_score(state, p, infos) is None
    scores: dict[str, int] = {}
    for ni in infos:
        got = plugin.schedsim_score(state, p, ni)
        assert isinstance(got, int)
        assert ni.node is not None
        scores[ni.node.name] = got
    assert plugin.schedsim_normalize_score(state, p, scores) is None
    assert list(scores.values()) == want


def test_pre_score_skip_when_node_affinity_is_nil() -> None:
    """Skip is returned in PreScore when NodeAffinity is nil."""
    st = NodeAffinity({}, Handle()).schedsim_pre_score(
        CycleState(), pod(), nodes(("node1", LABEL1))
    )
    assert st is not None and st.code is Code.Skip


def test_pre_score_error_for_broken_affinity() -> None:
    """PreScore returns error when an incoming Pod has a broken affinity (the message names
    the term as upstream's: ``[0].matchExpressions[0].key: Invalid value: ...``)."""
    broken = {"preferredDuringSchedulingIgnoredDuringExecution": [pref(2, ("invalid key", "bar"))]}
    st = NodeAffinity({}, Handle()).schedsim_pre_score(
        CycleState(), pod(broken), nodes(("node1", LABEL1))
    )
    assert st is not None and st.code is Code.Error
    assert st.message.startswith("[0].matchExpressions[0].key: Invalid value: "), st.message
