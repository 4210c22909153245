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
