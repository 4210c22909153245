"""`ResultCache`: when Filter results of identical pods may be shared (its documented rule)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from schedsim.api.core import Pod
from schedsim.framework import CycleState, Framework, Handle, default_profile
from schedsim.scheduler import ResultCache
from schedsim.snapshot import NodeInfo, PredicateSnapshot
from schedsim.testing.snapshot_conformance import make_node, make_pod


def _nodes(fw: Framework) -> Sequence[NodeInfo]:
    snap = PredicateSnapshot(fw)
    snap.set_cluster_state([make_node("n")], [])
    return snap.list_node_infos()


def _pre_filtered(fw: Framework, pod: Pod) -> CycleState:
    state = CycleState()
    _, st, _ = fw.run_pre_filter_plugins(state, pod, _nodes(fw))
    assert st.is_success, st
    return state


def test_identical_pods_share_one_class_and_different_ones_do_not() -> None:
    """Pods differing only in name/uid share results; another request does not."""
    fw = Framework(default_profile(), Handle())
    cache = ResultCache(fw)
    a, b, c = make_pod("a"), make_pod("b"), make_pod("c", cpu="2")
    ca = cache.filter_cache(a, _pre_filtered(fw, a))
    assert ca is not None
    assert cache.filter_cache(b, _pre_filtered(fw, b)) is ca
    assert cache.filter_cache(c, _pre_filtered(fw, c)) is not ca


def test_no_sharing_when_a_plugin_that_reads_more_than_the_node_runs() -> None:
    """A pod with a PVC runs NodeVolumeLimits (it reads PVCs and CSINodes): never cached."""
    fw = Framework(default_profile(), Handle())
    cache = ResultCache(fw)
    pod = make_pod("p", pvcs=["data"])
    state = CycleState()
    fw.run_pre_filter_plugins(state, pod, _nodes(fw))
    assert "NodeVolumeLimits" not in state.skip_filter_plugins
    assert cache.filter_cache(pod, state) is None


def test_no_sharing_with_a_replaced_in_tree_plugin() -> None:
    """A plugin registered under an in-tree name from elsewhere (`--plugin`) turns the cache
    off: its results are not known to depend on the pod and node alone."""

    class NodeName:
        name = "NodeName"

        def __init__(self, args: Any, handle: Handle) -> None:
            pass

        def schedsim_filter(self, state: CycleState, pod: Pod, node_info: Any) -> None:
            return None

    from schedsim.framework import discover_plugins

    fw = Framework(default_profile(), Handle(), discover_plugins(extra={"NodeName": NodeName}))
    pod = make_pod("p")
    assert ResultCache(fw).filter_cache(pod, _pre_filtered(fw, pod)) is None


def test_a_change_of_pods_only_reruns_only_the_plugins_reading_pods(monkeypatch: Any) -> None:
    """Where only a node's pods changed since its class last ran, the Filter plugins that read
    the Node object alone (TaintToleration, `NODE_ONLY_FILTER_PLUGINS`) are not run again:
    their rejection stands and after their success only NodeResourcesFit runs; the raw
    scores of TaintToleration stay (`NODE_ONLY_SCORE_PLUGINS`) and NodeResourcesFit scores
    again. A new Node object under the same name runs everything. Placements equal the
    scheduler's without the cache (which runs every plugin on every node, as
    kube-scheduler's schedulePod does)."""
    from schedsim.scheduler import Scheduler
    from schedsim.snapshot import DeltaSnapshotStore
    from schedsim_plugins.noderesources import NodeResourcesFit
    from schedsim_plugins.tainttoleration import TaintToleration

    calls: list[tuple[str, str]] = []

    def counting(cls: type, method: str, label: str) -> None:
        original = getattr(cls, method)

        def wrapper(self: Any, state: CycleState, pod: Pod, node_info: Any) -> Any:
            calls.append((label, node_info.node.name))
            return original(self, state, pod, node_info)

        monkeypatch.setattr(cls, method, wrapper)

    def counting_bound(cls: type, method: str, label: str) -> None:
        # the plugin's Filter / Score bound to one attempt (``filter_node_fn``,
        # ``score_node_fn``): what the cached walk and scoring call per node
        original = getattr(cls, method)

        def wrapper(self: Any, state: CycleState, pod: Pod) -> Any:
            bound = original(self, state, pod)

            def call(node_info: Any) -> Any:
                calls.append((label, node_info.node.name))
                return bound(node_info)

            return call

        monkeypatch.setattr(cls, method, wrapper)

    counting(TaintToleration, "schedsim_filter", "TaintToleration/Filter")
    counting(TaintToleration, "schedsim_score", "TaintToleration/Score")
    counting(NodeResourcesFit, "schedsim_filter", "NodeResourcesFit/Filter")
    counting(NodeResourcesFit, "schedsim_score", "NodeResourcesFit/Score")
    counting_bound(NodeResourcesFit, "filter_node_fn", "NodeResourcesFit/Filter")
    counting_bound(NodeResourcesFit, "score_node_fn", "NodeResourcesFit/Score")
    taint = [{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}]
    nodes = [make_node("n0", taints=taint), make_node("n1"), make_node("n2", cpu="8")]

    def run(cache: bool) -> tuple[list[str | None], list[list[tuple[str, str]]]]:
        fw = Framework(default_profile(), Handle())
        snap = PredicateSnapshot(fw, DeltaSnapshotStore())
        snap.set_cluster_state(nodes, [])
        sched = Scheduler(snap, cache=cache)
        placed: list[str | None] = []
        steps: list[list[tuple[str, str]]] = []
        for step in range(3):
            calls.clear()
            placed.append(sched.schedule_one(make_pod(f"p{step}", cpu="1")).node_name)
            steps.append(sorted(calls))
            if step == 0:  # pods only: a pod bound to the tainted node
                snap.force_add_pod(make_pod("bound", cpu="1"), "n0")
            if step == 1:  # a new Node object for n0, without the taint
                snap.remove_node_info("n0")
                snap.add_node_info(NodeInfo(make_node("n0")))
        return placed, steps

    placed, steps = run(cache=True)
    assert placed == run(cache=False)[0]
    assert placed[0] == "n2"
    first, second, third = steps
    assert ("TaintToleration/Filter", "n0") in first
    # p0 landed on n2 and a pod was bound to n0: n2 runs NodeResourcesFit's Filter and
    # Score again, nothing else; n0's TaintToleration rejection stands
    assert second == [("NodeResourcesFit/Filter", "n2"), ("NodeResourcesFit/Score", "n2")]
    # n0 is a new Node object (untainted): every plugin runs on it
    assert ("TaintToleration/Filter", "n0") in third
    assert ("NodeResourcesFit/Filter", "n0") in third
    assert ("TaintToleration/Score", "n0") in third
