"""kube-scheduler's node-tree order (`schedsim.scheduler.node_tree_order`), with the cases of
``pkg/scheduler/backend/cache/node_tree_test.go`` (1.34), and its effect on kube-scheduler
placement through `Engine.simulate`."""

from __future__ import annotations

from collections.abc import Sequence

from schedsim.api.core import Node
from schedsim.engine import Cluster, Engine
from schedsim.scheduler import node_tree_order, zone_key
from schedsim.testing.snapshot_conformance import make_node

_BETA_REGION = "failure-domain.beta.kubernetes.io/region"
_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
_REGION = "topology.kubernetes.io/region"
_ZONE = "topology.kubernetes.io/zone"

# node_tree_test.go's allNodes (v1.LabelZoneRegion / LabelZoneFailureDomain are the beta labels)
ALL_NODES = [
    make_node("node-0"),
    make_node("node-1", labels={_BETA_REGION: "region-1"}),
    make_node("node-2", labels={_BETA_ZONE: "zone-2"}),
    make_node("node-3", labels={_BETA_REGION: "region-1", _BETA_ZONE: "zone-2"}),
    make_node("node-4", labels={_BETA_REGION: "region-1", _BETA_ZONE: "zone-2"}),
    make_node("node-5", labels={_BETA_REGION: "region-1", _BETA_ZONE: "zone-3"}),
    make_node("node-6", labels={_BETA_REGION: "region-2", _BETA_ZONE: "zone-2"}),
    make_node("node-7", labels={_BETA_REGION: "region-2", _BETA_ZONE: "zone-2"}),
    make_node("node-8", labels={_BETA_REGION: "region-2", _BETA_ZONE: "zone-2"}),
    make_node(
        "node-9",
        labels={
            _REGION: "region-2",
            _ZONE: "zone-2",
            _BETA_REGION: "region-2",
            _BETA_ZONE: "zone-2",
        },
    ),
    make_node("node-10", labels={_BETA_REGION: "region-2", _BETA_ZONE: "zone-3"}),
]


def _names(nodes: Sequence[Node]) -> list[str]:
    return [n.name for n in nodes]


def test_zone_keys_as_get_zone_key() -> None:
    """TestNodeTree_AddNode's expected tree keys (utilnode.GetZoneKey)."""
    assert [zone_key(n) for n in ALL_NODES[:7]] == [
        "",
        "region-1:\x00:",
        ":\x00:zone-2",
        "region-1:\x00:zone-2",
        "region-1:\x00:zone-2",
        "region-1:\x00:zone-3",
        "region-2:\x00:zone-2",
    ]
    # "nodes also using deprecated zone/region label"
    assert zone_key(ALL_NODES[9]) == "region-2:\x00:zone-2"
    assert zone_key(ALL_NODES[10]) == "region-2:\x00:zone-3"
    # the GA labels alone count too; the beta label wins when both are set
    assert zone_key(make_node("ga", labels={_ZONE: "z", _REGION: "r"})) == "r:\x00:z"
    assert zone_key(make_node("both", labels={_ZONE: "ga", _BETA_ZONE: "beta"})) == ":\x00:beta"


def test_list_as_node_tree_list() -> None:
    """TestNodeTree_List: empty, one node, four nodes, all nodes."""
    assert node_tree_order([]) == []
    assert _names(node_tree_order(ALL_NODES[:1])) == ["node-0"]
    assert _names(node_tree_order(ALL_NODES[:4])) == ["node-0", "node-1", "node-2", "node-3"]
    assert _names(node_tree_order(ALL_NODES[:9])) == [
        "node-0",
        "node-1",
        "node-2",
        "node-3",
        "node-5",
        "node-6",
        "node-4",
        "node-7",
        "node-8",
    ]


def test_add_more_nodes_to_an_exhausted_zone() -> None:
    """TestNodeTreeMultiOperations "add more nodes to an exhausted zone": nodes 4..8 then 3."""
    added = [*ALL_NODES[4:9], ALL_NODES[3]]
    assert _names(node_tree_order(added)) == [
        "node-4",
        "node-5",
        "node-6",
        "node-3",
        "node-7",
        "node-8",
    ]


def _two_zone_cluster(per_zone: int, pods: int) -> Cluster:
    docs = []
    for zone in "ab":
        for i in range(per_zone):
            docs.append(
                f"kind: Node\napiVersion: v1\nmetadata: {{name: {zone}-{i}, labels: "
                f"{{{_ZONE}: {zone}}}}}\nstatus: {{allocatable: {{cpu: '4', memory: 8Gi, "
                "pods: '110'}}"
            )
    for i in range(pods):
        docs.append(
            f"kind: Pod\napiVersion: v1\nmetadata: {{name: p{i}, namespace: default}}\n"
            "spec: {containers: [{name: c, image: nginx, resources: {requests: "
            "{cpu: 100m, memory: 100Mi}}}]}"
        )
    return Cluster.from_text("\n---\n".join(docs), "<two zones>")


def test_kube_scheduler_samples_zones_evenly() -> None:
    """150 equal nodes, zone a listed before zone b: numFeasibleNodesToFind is 100
    (minFeasibleNodesToFind), and kube-scheduler's walk over its node tree evaluates 50 nodes
    of each zone, not a-0..a-74 and b-0..b-24 as input order would. The next pod starts at
    position 100 of the tree's list, a-50 (nextStartNodeIndex advanced by the 100 nodes
    processed), and with every other node tied it lands there (first tied node in
    evaluation order)."""
    cluster = _two_zone_cluster(75, 2)
    result = Engine().simulate(cluster, explain=lambda pod: True)
    first, second = result.outcomes
    explanation = first.explanation
    assert explanation is not None
    evaluated = set(explanation.filter)
    assert len(evaluated) == 100
    assert sum(1 for name in evaluated if name.startswith("a-")) == 50
    assert first.node_name == "a-0"
    assert second.node_name == "a-50"


def test_first_fit_keeps_input_order() -> None:
    """The Cluster Autoscaler's first fit walks its snapshot's order (input order here): the
    round robin starts after index 0, at a-1, then goes on after the chosen node."""
    cluster = _two_zone_cluster(3, 2)
    result = Engine().simulate(cluster, placement="first-fit")
    assert [o.node_name for o in result.outcomes] == ["a-1", "a-2"]
