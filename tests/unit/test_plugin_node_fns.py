"""The per-attempt bound forms of NodeResourcesFit's Filter and Score and BalancedAllocation's
Score (``filter_node_fn`` / ``score_node_fn``, what the scheduler's cached walk and scoring
call on changed nodes) give what ``schedsim_filter`` / ``schedsim_score`` give, on random
nodes, existing pods and requests: same statuses, same integers (the upstream tables run
through them too, in test_plugin_noderesources_score.py, test_plugin_balancedallocation.py
and the fit cases)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from schedsim.api.core import Node, Pod
from schedsim.framework import CycleState, Handle
from schedsim.snapshot import NodeInfo, PodInfo
from schedsim_plugins.balancedallocation import NodeResourcesBalancedAllocation
from schedsim_plugins.noderesources import NodeResourcesFit

GPU = "example.com/gpu"

_amount = st.integers(min_value=0, max_value=40)


def _node(cpu: int, memory: int, pods: int, gpus: int | None) -> Node:
    rl = {"cpu": f"{cpu * 250}m", "memory": f"{memory * 256}Mi", "pods": str(pods)}
    if gpus is not None:
        rl[GPU] = str(gpus)
    return Node.from_manifest(
        {"metadata": {"name": "n"}, "status": {"capacity": rl, "allocatable": rl}}
    )


def _pod(name: str, cpu: int, memory: int, gpus: int) -> Pod:
    requests: dict[str, str] = {}
    if cpu:
        requests["cpu"] = f"{cpu * 100}m"
    if memory:
        requests["memory"] = f"{memory * 128}Mi"
    resources: dict[str, Any] = {"requests": requests}
    if gpus:  # an extended resource's limit equals its request
        requests[GPU] = str(gpus)
        resources["limits"] = {GPU: str(gpus)}
    container = {"name": "c", "image": "x", "resources": resources}
    return Pod.from_manifest({"metadata": {"name": name}, "spec": {"containers": [container]}})


_pods = st.tuples(_amount, _amount, st.integers(min_value=0, max_value=3))
CPU, MEMORY = {"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}
_strategies = st.sampled_from(
    [
        {},
        {"type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 3}, MEMORY]},
        {"type": "LeastAllocated", "resources": [MEMORY, CPU]},
        {
            "type": "LeastAllocated",
            "resources": [{"name": "cpu", "weight": 2}, {"name": "memory", "weight": 2}],
        },
        {"type": "MostAllocated"},
        {"type": "LeastAllocated", "resources": [CPU, MEMORY, {"name": GPU, "weight": 2}]},
    ]
)
_balanced = st.sampled_from([[], [CPU, {"name": GPU, "weight": 1}, MEMORY]])


@settings(max_examples=300, deadline=None)
@given(
    alloc=st.tuples(_amount, _amount, st.integers(min_value=0, max_value=6)),
    gpus=st.none() | st.integers(min_value=0, max_value=4),
    existing=st.lists(_pods, max_size=5),
    incoming=_pods,
    strategy=_strategies,
    balanced=_balanced,
)
def test_bound_forms_equal_the_plugin_calls(
    alloc: tuple[int, int, int],
    gpus: int | None,
    existing: list[tuple[int, int, int]],
    incoming: tuple[int, int, int],
    strategy: dict[str, Any],
    balanced: list[dict[str, Any]],
) -> None:
    ni = NodeInfo(_node(*alloc, gpus))
    for i, reqs in enumerate(existing):
        ni.add_pod_info(PodInfo(_pod(f"e{i}", *reqs)))
    pod = _pod("p", *incoming)
    fit = NodeResourcesFit({"scoringStrategy": strategy} if strategy else {}, Handle())
    ba = NodeResourcesBalancedAllocation({"resources": balanced} if balanced else {}, Handle())
    for pre_score in (True, False):
        state = CycleState()
        assert fit.schedsim_pre_filter(state, pod, [ni]) is None
        assert fit.filter_node_fn(state, pod)(ni) == fit.schedsim_filter(state, pod, ni)
        if pre_score:
            assert fit.schedsim_pre_score(state, pod, [ni]) is None
            ba.schedsim_pre_score(state, pod, [ni])  # Skip for a best-effort pod
        assert fit.score_node_fn(state, pod)(ni) == fit.schedsim_score(state, pod, ni)
        assert ba.score_node_fn(state, pod)(ni) == ba.schedsim_score(state, pod, ni)


_fit_args = st.sampled_from(
    [{}, {"ignoredResources": [GPU]}, {"ignoredResourceGroups": ["example.com"]}]
)


@settings(max_examples=200, deadline=None)
@given(
    nodes=st.lists(
        st.tuples(
            st.tuples(_amount, _amount, st.integers(min_value=0, max_value=6)),
            st.none() | st.integers(min_value=0, max_value=4),
            st.lists(_pods, max_size=5),
        ),
        min_size=1,
        max_size=8,
    ),
    incoming=st.lists(_pods, min_size=1, max_size=3),
    args=_fit_args,
)
def test_bound_filter_over_many_nodes(
    nodes: list[tuple[tuple[int, int, int], int | None, list[tuple[int, int, int]]]],
    incoming: list[tuple[int, int, int]],
    args: dict[str, Any],
) -> None:
    """One plugin, several pods and nodes: the bound Filter (which looks a node's status up
    by which resources fall short, `_shortages` computing it the first time) gives
    Filter's status on every node, for every pod (full nodes, zero requests, requests
    above allocatable, nodes without the extended resource, ignored resources)."""
    fit = NodeResourcesFit(args, Handle())
    infos = []
    for n, (alloc, gpus, existing) in enumerate(nodes):
        ni = NodeInfo(_node(*alloc, gpus))
        for i, reqs in enumerate(existing):
            ni.add_pod_info(PodInfo(_pod(f"e{n}-{i}", *reqs)))
        infos.append(ni)
    for k, reqs in enumerate(incoming):
        pod = _pod(f"p{k}", *reqs)
        state = CycleState()
        assert fit.schedsim_pre_filter(state, pod, infos) is None
        bound = fit.filter_node_fn(state, pod)
        for ni in infos + infos:  # the second time from the table
            assert bound(ni) == fit.schedsim_filter(state, pod, ni)


def test_filter_without_pre_filter_state() -> None:
    """No PreFilter state: the bound Filter gives Filter's Error status too."""
    fit = NodeResourcesFit({}, Handle())
    ni = NodeInfo(_node(4, 4, 10, None))
    pod = _pod("p", 1, 1, 0)
    state = CycleState()
    assert fit.filter_node_fn(state, pod)(ni) == fit.schedsim_filter(state, pod, ni)
