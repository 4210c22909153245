"""NodeResourcesFit Score with its three scoring strategies: upstream's tables
(least_allocated_test.go TestLeastAllocatedScoringStrategy, most_allocated_test.go
TestMostAllocatedScoringStrategy, requested_to_capacity_ratio_test.go
TestRequestedToCapacityRatioScoringStrategy / TestResourceBinPackingSingleExtended /
TestResourceBinPackingMultipleExtended, and helper shape_score_test.go), with upstream's case
names and expected scores.

Rows whose point is the internal args type (``Resources not set``, ``resource with zero
weight``: the v1 defaults turn an unset weight into 1) are covered by test_args.py instead.
Nodes are ``st.MakeNode().Capacity(...)`` (capacity == allocatable); pods are
``st.MakePod().Req(...)``: one container per request map.
"""

from __future__ import annotations

from typing import Any

import pytest

from schedsim.api.core import Node, Pod
from schedsim.framework import CycleState, Handle
from schedsim.snapshot import NodeInfo, PodInfo
from schedsim_plugins.noderesources import NodeResourcesFit
from schedsim_plugins.resource_allocation import broken_linear_function

EXT = "intel.com/foo"
DEFAULT = [("cpu", 1), ("memory", 1)]
EXT_SET = [("cpu", 1), ("memory", 1), (EXT, 1)]

Reqs = dict[str, str]


def make_node(name: str, capacity: Reqs | None = None) -> Node:
    status = {"capacity": capacity, "allocatable": capacity} if capacity else {}
    return Node.from_manifest({"metadata": {"name": name}, "status": status})


def make_pod(*containers: Reqs | None, name: str = "p") -> Pod:
    """``st.MakePod().Req(r1).Req(r2)...``: one container per request map; no argument (or
    None) gives a pod without containers, as ``st.MakePod().Obj()``."""
    cs: list[dict[str, Any]] = []
    for i, reqs in enumerate(c for c in containers if c is not None):
        c: dict[str, Any] = {"name": f"c{i}", "image": "x"}
        if reqs:
            c["resources"] = {"requests": reqs}
            ext = {k: v for k, v in reqs.items() if "/" in k}
            if ext:
                c["resources"]["limits"] = ext
        cs.append(c)
    return Pod.from_manifest({"metadata": {"name": name}, "spec": {"containers": cs}})


def scores(
    strategy: dict[str, Any],
    pod: Pod,
    nodes: list[Node],
    existing: list[tuple[str, Pod]],
    pre_score: bool = True,
) -> list[int]:
    """Run PreScore (optionally) and Score for every node, in order, as upstream's test does."""
    infos = {n.name: NodeInfo(n) for n in nodes}
    for node_name, p in existing:
        infos[node_name].add_pod_info(PodInfo(p))
    plugin = NodeResourcesFit({"scoringStrategy": strategy}, Handle())
    state = CycleState()
    if pre_score:
        assert plugin.schedsim_pre_score(state, pod, list(infos.values())) is None
    out = []
    bound = plugin.score_node_fn(state, pod)  # what the scheduler's cached scoring calls
    for ni in infos.values():
        got = plugin.schedsim_score(state, pod, ni)
        assert isinstance(got, int)
        assert bound(ni) == got
        out.append(got)
    return out


def res(spec: list[tuple[str, int]]) -> list[dict[str, Any]]:
    return [{"name": n, "weight": w} for n, w in spec]


def cm(cpu: str, mem: str, **extra: str) -> Reqs:
    out = {"cpu": cpu, "memory": mem}
    out.update({EXT if k == "ext" else k: v for k, v in extra.items()})
    return out


TWO_CONTAINERS = (cm("1000", "2000"), cm("2000", "3000"))

LEAST = [
    (
        "nothing scheduled, nothing requested",
        (),
        [cm("4000", "10000"), cm("4000", "10000")],
        [],
        DEFAULT,
        [100, 100],
    ),
    (
        "nothing scheduled, resources requested, differently sized nodes",
        TWO_CONTAINERS,
        [cm("4000", "10000"), cm("6000", "10000")],
        [],
        DEFAULT,
        [37, 50],
    ),
    (
        "no resources requested, pods scheduled",
        (),
        [cm("4000", "10000"), cm("4000", "10000")],
        [(0, None), (0, None), (1, None), (1, None)],
        DEFAULT,
        [100, 100],
    ),
    (
        "no resources requested, pods scheduled with resources",
        (),
        [cm("10000", "20000"), cm("10000", "20000")],
        [(0, cm("3000", "0")), (0, cm("3000", "0")), (1, cm("3000", "0")), (1, cm("3000", "5000"))],
        DEFAULT,
        [70, 57],
    ),
    (
        "resources requested, pods scheduled with resources",
        TWO_CONTAINERS,
        [cm("10000", "20000"), cm("10000", "20000")],
        [(0, cm("3000", "0")), (1, cm("3000", "5000"))],
        DEFAULT,
        [57, 45],
    ),
    (
        "resources requested, pods scheduled with resources, differently sized nodes",
        TWO_CONTAINERS,
        [cm("10000", "20000"), cm("10000", "50000")],
        [(0, cm("3000", "0")), (1, cm("3000", "5000"))],
        DEFAULT,
        [57, 60],
    ),
    (
        "requested resources exceed node capacity",
        (cm("3000", "0"),),
        [cm("4000", "10000"), cm("4000", "10000")],
        [(0, cm("3000", "0")), (1, cm("3000", "5000"))],
        DEFAULT,
        [50, 25],
    ),
    (
        "zero node resources, pods scheduled with resources",
        (),
        [None, None],
        [(0, cm("3000", "0")), (1, cm("3000", "5000"))],
        DEFAULT,
        [0, 0],
    ),
    (
        "nothing scheduled, resources requested with different weight on CPU and memory, differently sized nodes",  # noqa: E501 - upstream's case name
        TWO_CONTAINERS,
        [cm("4000", "10000"), cm("6000", "10000")],
        [],
        [("memory", 2), ("cpu", 1)],
        [41, 50],
    ),
    (
        "bypass extended resource if the pod does not request",
        TWO_CONTAINERS,
        [cm("6000", "10000"), cm("6000", "10000", ext="4")],
        [],
        EXT_SET,
        [50, 50],
    ),
    (
        "honor extended resource if the pod requests",
        (cm("3000", "5000", ext="2"),),
        [cm("6000", "10000", ext="4"), cm("6000", "10000", ext="10")],
        [],
        EXT_SET,
        [50, 60],
    ),
    (
        "if the node doesn't have a resource",
        (cm("3000", "4000"),),
        [cm("6000", "10000"), cm("6000", "10000", ext="4")],
        [],
        [(EXT, 2), ("cpu", 1), ("memory", 1)],
        [55, 55],
    ),
]

MOST = [
    (
        "nothing scheduled, nothing requested",
        (),
        [cm("4000", "10000"), cm("4000", "10000")],
        [],
        DEFAULT,
        [0, 0],
    ),
    (
        "nothing scheduled, resources requested, differently sized nodes",
        TWO_CONTAINERS,
        [cm("4000", "10000"), cm("6000", "10000")],
        [],
        DEFAULT,
        [62, 50],
    ),
    (
        "no resources requested, pods scheduled with resources",
        (),
        [cm("10000", "20000"), cm("10000", "20000")],
        [(0, cm("3000", "0")), (0, cm("3000", "0")), (1, cm("3000", "0")), (1, cm("3000", "5000"))],
        DEFAULT,
        [30, 42],
    ),
    (
        "resources requested, pods scheduled with resources",
        TWO_CONTAINERS,
        [cm("10000", "20000"), cm("10000", "20000")],
        [(0, cm("3000", "0")), (1, cm("3000", "5000"))],
        DEFAULT,
        [42, 55],
    ),
    (
        "resources requested equal node capacity",
        (cm("2000", "4000"), cm("3000", "5000")),
        [cm("5000", "10000"), cm("10000", "9000")],
        [],
        DEFAULT,
        [95, 75],
    ),
    (
        "nothing scheduled, resources requested, differently sized nodes (weights)",
        TWO_CONTAINERS,
        [cm("4000", "10000"), cm("6000", "10000")],
        [],
        [("memory", 2), ("cpu", 1)],
        [58, 50],
    ),
    (
        "no resources requested, pods scheduled, nonzero request for resource",
        ({},),
        [cm("250m", "1000Mi"), cm("250m", "1000Mi")],
        [(0, {}), (0, {})],
        DEFAULT,
        [80, 30],
    ),
    (
        "bypass extended resource if the pod does not request",
        TWO_CONTAINERS,
        [cm("6000", "10000"), cm("6000", "10000", ext="4")],
        [],
        EXT_SET,
        [50, 50],
    ),
    (
        "honor extended resource if the pod request",
        (cm("3000", "5000", ext="2"),),
        [cm("6000", "10000", ext="4"), cm("6000", "10000", ext="10")],
        [],
        EXT_SET,
        [50, 40],
    ),
    (
        "if the node doesn't have a resource",
        (cm("3000", "4000"),),
        [cm("6000", "10000"), cm("6000", "10000", ext="4")],
        [],
        [(EXT, 2), ("cpu", 1), ("memory", 1)],
        [45, 45],
    ),
]


def _run(strategy_type: str, row: tuple[Any, ...], **extra: Any) -> list[int]:
    """One table row: (name, pod containers, node capacities, existing (node index,
    requests), resources, expected scores)."""
    _, pod_reqs, caps, existing, resources, _ = row
    nodes = [make_node(f"node{i + 1}", c) for i, c in enumerate(caps)]
    pods = [(f"node{i + 1}", make_pod(r, name=f"e{j}")) for j, (i, r) in enumerate(existing)]
    strategy = {"type": strategy_type, "resources": res(resources), **extra}
    return scores(strategy, make_pod(*pod_reqs), nodes, pods)


@pytest.mark.parametrize("row", LEAST, ids=[r[0] for r in LEAST])
def test_least_allocated(row: tuple[Any, ...]) -> None:
    """TestLeastAllocatedScoringStrategy: ``(allocatable - requested) * 100 / allocatable``
    per resource (NonZeroRequested for cpu/memory), weighted integer average."""
    assert _run("LeastAllocated", row) == row[-1]


@pytest.mark.parametrize("row", MOST, ids=[r[0] for r in MOST])
def test_most_allocated(row: tuple[Any, ...]) -> None:
    """TestMostAllocatedScoringStrategy: ``min(requested, allocatable) * 100 / allocatable``."""
    assert _run("MostAllocated", row) == row[-1]


def shape(*points: tuple[int, int]) -> dict[str, Any]:
    return {"shape": [{"utilization": u, "score": s} for u, s in points]}


RTCR = [
    (
        "nothing scheduled, nothing requested (default - least requested nodes have priority)",
        (),
        [cm("4000", "10000"), cm("4000", "10000")],
        [(0, None), (0, None)],
        DEFAULT,
        [100, 100],
    ),
    (
        "nothing scheduled, resources requested, differently sized nodes (default - least requested nodes have priority)",  # noqa: E501 - upstream's case name
        TWO_CONTAINERS,
        [cm("4000", "10000"), cm("6000", "10000")],
        [(0, None), (0, None)],
        DEFAULT,
        [38, 50],
    ),
    (
        "no resources requested, pods scheduled with resources (default - least requested nodes have priority)",  # noqa: E501 - upstream's case name
        (),
        [cm("4000", "10000"), cm("6000", "10000")],
        [(0, cm("3000", "5000")), (1, cm("3000", "5000"))],
        DEFAULT,
        [38, 50],
    ),
]


@pytest.mark.parametrize("row", RTCR, ids=[r[0] for r in RTCR])
def test_requested_to_capacity_ratio(row: tuple[Any, ...]) -> None:
    """TestRequestedToCapacityRatioScoringStrategy: shape (0 -> 10, 100 -> 0) scaled x10,
    weighted average rounded."""
    got = _run("RequestedToCapacityRatio", row, requestedToCapacityRatio=shape((0, 10), (100, 0)))
    assert got == row[-1]


def _binpacking(
    pod: Pod, caps: list[Reqs], existing: list[tuple[int, Reqs]], resources: list[tuple[str, int]]
) -> list[int]:
    nodes = [make_node(f"node{i + 1}", c) for i, c in enumerate(caps)]
    pods = [(f"node{i + 1}", make_pod(r, name=f"e{j}")) for j, (i, r) in enumerate(existing)]
    strategy = {
        "type": "RequestedToCapacityRatio",
        "resources": res(resources),
        "requestedToCapacityRatio": shape((0, 0), (100, 1)),
    }
    return scores(strategy, pod, nodes, pods)


EXT_NODES = [cm("4000m", "10485760000", ext="8"), cm("4000m", "10485760000", ext="4")]


@pytest.mark.parametrize(
    ("pod", "existing", "want"),
    [
        pytest.param((), [], [0, 0], id="nothing scheduled, nothing requested"),
        pytest.param(
            ({EXT: "2"},), [], [2, 5], id="resources requested, pods scheduled with less resources"
        ),
        pytest.param(
            ({EXT: "2"},),
            [(1, {EXT: "2"})],
            [2, 10],
            id="resources requested, pods scheduled with resources, on node with existing pod running ",  # noqa: E501 - upstream's case name
        ),
        pytest.param(
            ({EXT: "4"},), [], [5, 10], id="resources requested, pods scheduled with more resources"
        ),
    ],
)
def test_bin_packing_single_extended(
    pod: tuple[Reqs, ...], existing: list[tuple[int, Reqs]], want: list[int]
) -> None:
    """TestResourceBinPackingSingleExtended: only intel.com/foo scored, shape (0 -> 0,
    100 -> 1): ``10 * utilization / 100`` with integer division."""
    assert _binpacking(make_pod(*pod), EXT_NODES, existing, [(EXT, 1)]) == want


def test_score_without_pre_score_computes_requests() -> None:
    """Score without PreScore computes the pod's requests itself (upstream's fallback)."""
    row = LEAST[1]
    nodes = [make_node(f"node{i + 1}", c) for i, c in enumerate(row[2])]
    got = scores({"type": "LeastAllocated"}, make_pod(*row[1]), nodes, [], pre_score=False)
    assert got == row[-1]


@pytest.mark.parametrize(
    ("points", "checks"),
    [
        pytest.param(
            [(10, 1), (90, 9)],
            [
                (-10, 1),
                (0, 1),
                (9, 1),
                (10, 1),
                (15, 1),
                (19, 1),
                (20, 2),
                (89, 8),
                (90, 9),
                (99, 9),
                (100, 9),
                (110, 9),
            ],
            id="case_0",
        ),
        pytest.param(
            [(0, 2), (40, 10), (100, 0)],
            [(-10, 2), (0, 2), (20, 6), (30, 8), (40, 10), (70, 5), (100, 0), (110, 0)],
            id="case_1",
        ),
        pytest.param(
            [(0, 2), (40, 2), (100, 2)],
            [(-10, 2), (0, 2), (20, 2), (70, 2), (100, 2), (110, 2)],
            id="case_2",
        ),
        pytest.param(
            [(0, 10), (100, 0)],
            [(0, 10), (33, 7), (66, 4), (100, 0)],
            id="extra: decreasing truncates toward zero",
        ),
    ],
)
def test_broken_linear_function(
    points: list[tuple[int, int]], checks: list[tuple[int, int]]
) -> None:
    """helper.BuildBrokenLinearFunction (shape_score_test.go TestBrokenLinearFunction):
    constant outside the points, linear between them with Go's truncating division."""
    f = broken_linear_function(points)
    assert [f(p) for p, _ in checks] == [s for _, s in checks]
