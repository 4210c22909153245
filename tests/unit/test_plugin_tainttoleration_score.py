"""TaintToleration PreScore/Score/NormalizeScore: upstream's table
(taint_toleration_test.go TestTaintTolerationScore) with its case names and expected
normalized scores."""

from __future__ import annotations

from typing import Any

import pytest

from schedsim.api.core import Node, Pod
from schedsim.framework import Code, CycleState, Handle
from schedsim.snapshot import NodeInfo
from schedsim_plugins.tainttoleration import TaintToleration

PNS = "PreferNoSchedule"


def taint(key: str, value: str, effect: str = PNS) -> dict[str, str]:
    return {"key": key, "value": value, "effect": effect}


def tol(key: str, value: str, effect: str = PNS) -> dict[str, str]:
    return {"key": key, "operator": "Equal", "value": value, "effect": effect}


TABLE: list[tuple[str, list[dict[str, str]], list[list[dict[str, str]]], list[int]]] = [
    (
        "node with taints tolerated by the pod, gets a higher score than those node with intolerable taints",  # noqa: E501 - upstream's case name
        [tol("foo", "bar")],
        [[taint("foo", "bar")], [taint("foo", "blah")]],
        [100, 0],
    ),
    (
        "the nodes that all of their taints are tolerated by the pod, get the same score, no matter how many tolerable taints a node has",  # noqa: E501 - upstream's case name
        [tol("cpu-type", "arm64"), tol("disk-type", "ssd")],
        [[], [taint("cpu-type", "arm64")], [taint("cpu-type", "arm64"), taint("disk-type", "ssd")]],
        [100, 100, 100],
    ),
    (
        "the more intolerable taints a node has, the lower score it gets.",
        [tol("foo", "bar")],
        [[], [taint("cpu-type", "arm64")], [taint("cpu-type", "arm64"), taint("disk-type", "ssd")]],
        [100, 50, 0],
    ),
    (
        "only taints and tolerations that have effect PreferNoSchedule are checked by taints-tolerations priority function",  # noqa: E501 - upstream's case name
        [tol("cpu-type", "arm64", "NoSchedule"), tol("disk-type", "ssd", "NoSchedule")],
        [
            [],
            [taint("cpu-type", "arm64", "NoSchedule")],
            [taint("cpu-type", "arm64"), taint("disk-type", "ssd")],
        ],
        [100, 100, 0],
    ),
    (
        "Default behaviour No taints and tolerations, lands on node with no taints",
        [],
        [[], [taint("cpu-type", "arm64")]],
        [100, 0],
    ),
]


def node(name: str, taints: list[dict[str, str]]) -> NodeInfo:
    return NodeInfo(Node.from_manifest({"metadata": {"name": name}, "spec": {"taints": taints}}))


def pod(tolerations: list[dict[str, Any]]) -> Pod:
    return Pod.from_manifest({"metadata": {"name": "pod1"}, "spec": {"tolerations": tolerations}})


@pytest.mark.parametrize("row", TABLE, ids=[r[0] for r in TABLE])
def test_taint_toleration_score(row: tuple[Any, ...]) -> None:
    """Raw score = intolerable PreferNoSchedule taints; NormalizeScore reverses
    (DefaultNormalizeScore(100, true))."""
    _, tolerations, taints, want = row
    plugin = TaintToleration({}, Handle())
    p = pod(tolerations)
    nodes = [node(f"node{chr(65 + i)}", t) for i, t in enumerate(taints)]
    state = CycleState()
    assert plugin.schedsim_pre_score(state, p, nodes) is None
    scores = {}
    for ni in nodes:
        got = plugin.schedsim_score(state, p, ni)
        assert isinstance(got, int)
        assert ni.node is not None
        scores[ni.node.name] = got
    assert plugin.schedsim_normalize_score(state, p, scores) is None
    assert list(scores.values()) == want


def test_empty_effect_toleration_counts_for_prefer_no_schedule() -> None:
    """getAllTolerationPreferNoSchedule keeps tolerations with an empty effect (all effects)."""
    plugin = TaintToleration({}, Handle())
    p = pod([{"key": "foo", "operator": "Exists"}])
    state = CycleState()
    ni = node("a", [taint("foo", "x")])
    assert plugin.schedsim_pre_score(state, p, [ni]) is None
    assert plugin.schedsim_score(state, p, ni) == 0


def test_score_without_pre_score_is_an_error() -> None:
    """Upstream's Score reads the PreScore state and fails when it is absent."""
    st = TaintToleration({}, Handle()).schedsim_score(CycleState(), pod([]), node("a", []))
    assert not isinstance(st, int) and st.code is Code.Error
    assert st.reasons == ('reading "PreScoreTaintToleration" from cycleState: not found',)
