"""PodTopologySpread and InterPodAffinity beyond the shared cases: plugin args validation,
the PreFilterExtensions (AddPod/RemovePod) and their cloned state.

Sources: kube-scheduler 1.34 ``validation_pluginargs.go`` (ValidatePodTopologySpreadArgs,
ValidateInterPodAffinityArgs), podtopologyspread ``filtering_test.go`` TestPreFilterStateAddPod
("node a and b both impact current min match"), interpodaffinity ``filtering_test.go``
TestPreFilterStateAddRemovePod (AddPod/RemovePod update the counts Filter reads).
"""

from __future__ import annotations

from typing import Any

import pytest

from schedsim.api.core import Node, Pod
from schedsim.framework import CycleState, Framework, Handle, Profile
from schedsim.snapshot import PodInfo, PredicateSnapshot
from schedsim.testing import StoreFactory
from schedsim_plugins.interpodaffinity import InterPodAffinity
from schedsim_plugins.podtopologyspread import PRE_FILTER_STATE_KEY, PodTopologySpread


def _node(name: str, zone: str) -> Node:
    return Node.from_manifest(
        {"metadata": {"name": name, "labels": {"zone": zone, "node": name}}, "kind": "Node"}
    )


def _pod(name: str, spec: dict[str, Any] | None = None, node: str = "") -> Pod:
    return Pod.from_manifest(
        {
            "kind": "Pod",
            "metadata": {"name": name, "labels": {"foo": ""}},
            "spec": {"containers": [{"name": "c"}], "nodeName": node, **(spec or {})},
        }
    )


def _snap(store: Any, nodes: list[Node], pods: list[Pod]) -> PredicateSnapshot:
    fw = Framework(Profile(plugins={"preFilter": (), "filter": (), "reserve": ()}), Handle())
    snap = PredicateSnapshot(fw, store())
    snap.set_cluster_state(nodes, pods)
    return snap


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (
            {"defaultingType": "System", "defaultConstraints": [{"maxSkew": 1}]},
            'defaultingType: Invalid value: "System": when .defaultConstraints are not empty',
        ),
        (
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    {"maxSkew": 0, "topologyKey": "k", "whenUnsatisfiable": "DoNotSchedule"}
                ],
            },
            "defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf)",
        ),
        (
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    {
                        "maxSkew": 1,
                        "topologyKey": "k",
                        "whenUnsatisfiable": "DoNotSchedule",
                        "labelSelector": {},
                    }
                ],
            },
            "defaultConstraints[0].labelSelector: Forbidden: constraint must not define a "
            "selector, as they deduced for each pod",
        ),
        ({"defaultingType": "Other"}, 'defaultingType: Unsupported value: "Other"'),
    ],
)
def test_pod_topology_spread_args_validation(args: dict[str, Any], error: str) -> None:
    """ValidatePodTopologySpreadArgs (TestValidatePodTopologySpreadArgs): System defaulting
    with constraints, maxSkew <= 0, a selector in a default constraint, unknown defaulting."""
    with pytest.raises(ValueError) as e:
        PodTopologySpread(args, Handle())
    assert error in str(e.value)


def test_inter_pod_affinity_args_validation() -> None:
    """ValidateInterPodAffinityArgs: hardPodAffinityWeight must be in [0, 100]; default 1."""
    with pytest.raises(ValueError, match=r"not in valid range \[0, 100\]"):
        InterPodAffinity({"hardPodAffinityWeight": 101}, Handle())
    assert InterPodAffinity({}, Handle()).hard_pod_affinity_weight == 1


def test_spread_add_pod_both_nodes_impact_min_match(store: StoreFactory) -> None:
    """TestPreFilterStateAddPod "node a and b both impact current min match": an empty
    cluster of node-a and node-b, a constraint on "node" with maxSkew 1; adding p-b1 on
    node-b gives counts {node-a: 0, node-b: 1} and critical path node-a (0) first. The
    state AddPod changed is a clone: the original keeps {0, 0}."""
    sel = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
    spread = {
        "topologySpreadConstraints": [
            {
                "maxSkew": 1,
                "topologyKey": "node",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": sel,
            }
        ]
    }
    snap = _snap(store, [_node("node-a", "zone1"), _node("node-b", "zone1")], [])
    plugin = PodTopologySpread({"defaultingType": "List"}, snap.framework.handle)
    preemptor = _pod("p", spread)
    state = CycleState()
    with snap.bound():
        assert plugin.schedsim_pre_filter(state, preemptor, snap.list_node_infos()) is None
        clone = state.clone()
        added = PodInfo(_pod("p-b1", node="node-b"))
        nb = snap.get_node_info("node-b")
        assert plugin.schedsim_pre_filter_add_pod(clone, preemptor, added, nb) is None
    s = clone[PRE_FILTER_STATE_KEY]
    assert s.tp_value_to_match_num == [{"node-a": 0, "node-b": 1}]
    assert (s.critical_paths[0].values, s.critical_paths[0].nums) == (
        ["node-a", "node-b"],
        [0, 1],
    )
    assert state[PRE_FILTER_STATE_KEY].tp_value_to_match_num == [{"node-a": 0, "node-b": 0}]
    # Filter reads the updated counts: node-b would be skew 2 > 1
    assert plugin.schedsim_filter(clone, preemptor, nb) is not None
    assert plugin.schedsim_filter(state, preemptor, nb) is None
    with snap.bound():
        plugin.schedsim_pre_filter_remove_pod(clone, preemptor, added, nb)
    assert clone[PRE_FILTER_STATE_KEY].tp_value_to_match_num == [{"node-a": 0, "node-b": 0}]


def test_inter_pod_affinity_add_remove_pod(store: StoreFactory) -> None:
    """TestPreFilterStateAddRemovePod: AddPod of a pod the incoming pod's required
    anti-affinity selects makes Filter reject that node's domain ("node(s) didn't match pod
    anti-affinity rules"); RemovePod undoes it; an added pod with anti-affinity selecting the
    incoming pod rejects its domain with "node(s) didn't satisfy existing pods anti-affinity
    rules"."""
    anti = {
        "affinity": {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"topologyKey": "zone", "labelSelector": {"matchLabels": {"foo": ""}}}
                ]
            }
        }
    }
    snap = _snap(store, [_node("node-a", "zone1"), _node("node-b", "zone2")], [])
    plugin = InterPodAffinity({}, snap.framework.handle)
    incoming = _pod("p", anti)
    state = CycleState()
    with snap.bound():
        assert plugin.schedsim_pre_filter(state, incoming, snap.list_node_infos()) is None
        na, nb = snap.get_node_info("node-a"), snap.get_node_info("node-b")
        assert plugin.schedsim_filter(state, incoming, na) is None
        other = PodInfo(_pod("other", node="node-a"))
        plugin.schedsim_pre_filter_add_pod(state, incoming, other, na)
        st = plugin.schedsim_filter(state, incoming, na)
        assert st is not None and st.reasons == ("node(s) didn't match pod anti-affinity rules",)
        assert plugin.schedsim_filter(state, incoming, nb) is None
        plugin.schedsim_pre_filter_remove_pod(state, incoming, other, na)
        assert plugin.schedsim_filter(state, incoming, na) is None
        guard_pod = Pod.from_manifest(
            {
                "kind": "Pod",
                "metadata": {"name": "guard", "labels": {"x": "y"}},
                "spec": {"containers": [{"name": "c"}], "nodeName": "node-b", **anti},
            }
        )
        guard = PodInfo(guard_pod)
        plugin.schedsim_pre_filter_add_pod(state, incoming, guard, nb)
        st = plugin.schedsim_filter(state, incoming, nb)
        assert st is not None
        assert st.reasons == ("node(s) didn't satisfy existing pods anti-affinity rules",)
