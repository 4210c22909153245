"""The incremental pod index behind PodTopologySpread's and InterPodAffinity's PreFilter gives
exactly the counts upstream's walk over every pod gives (podtopologyspread
``calPreFilterState``/``countPodsMatchSelector``, interpodaffinity
``getExistingAntiAffinityCounts``/``getIncomingAffinityAntiAffinityCounts``), on both stores,
through pod additions and removals, forks, commits and reverts, and node removals."""

from __future__ import annotations

import random
from typing import Any

import pytest

from schedsim.api.core import Node, Pod
from schedsim.framework import Code, CycleState, Framework, Handle, Profile
from schedsim.snapshot import PredicateSnapshot
from schedsim.testing import StoreFactory
from schedsim_plugins.interpodaffinity import (
    PRE_FILTER_STATE_KEY as IPA_KEY,
)
from schedsim_plugins.interpodaffinity import (
    InterPodAffinity,
    pre_filter_state_by_walk,
)
from schedsim_plugins.podtopologyspread import (
    PRE_FILTER_STATE_KEY as SPREAD_KEY,
)
from schedsim_plugins.podtopologyspread import (
    PodTopologySpread,
    count_pods_match_selector,
)

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
APPS = ("a", "b", "c")
NAMESPACES = ("default", "other")


def _node(i: int) -> Node:
    labels = {HOST: f"n{i}", ZONE: f"z{i % 3}"}
    if i % 5 == 4:
        del labels[ZONE]  # a node without the zone label
    return Node.from_manifest(
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}", "labels": labels}}
    )


def _pod(rng: random.Random, name: str, node: str = "") -> Pod:
    app = rng.choice(APPS)
    spec: dict[str, Any] = {"containers": [{"name": "c"}], "nodeName": node}
    sel = {"matchLabels": {"app": rng.choice(APPS)}}
    roll = rng.random()
    if roll < 0.3:
        spec["affinity"] = {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"topologyKey": rng.choice((HOST, ZONE)), "labelSelector": sel}
                ]
            }
        }
    elif roll < 0.45:
        spec["affinity"] = {
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"topologyKey": ZONE, "labelSelector": sel, "namespaces": list(NAMESPACES)}
                ]
            }
        }
    spec["topologySpreadConstraints"] = [
        {
            "maxSkew": 1,
            "topologyKey": rng.choice((HOST, ZONE)),
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchExpressions": [{"key": "app", "operator": "Exists"}]}
            if rng.random() < 0.3
            else sel,
        }
    ]
    meta: dict[str, Any] = {
        "name": name,
        "namespace": rng.choice(NAMESPACES),
        "labels": {"app": app},
    }
    if rng.random() < 0.1:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    return Pod.from_manifest({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec})


def _spread_by_walk(plugin: PodTopologySpread, pod: Pod, snap: PredicateSnapshot) -> list[Any]:
    """calPreFilterState as upstream computes it (every pod of every node)."""
    s = CycleState()
    plugin.schedsim_pre_filter(s, pod, snap.list_node_infos())
    state = s.get(SPREAD_KEY)
    if state is None:
        return []
    out = []
    for c in state.constraints:
        m: dict[str, int] = {}
        for ni in snap.list_node_infos():
            labels = ni.node.labels if ni.node else {}
            if not all(k.topology_key in labels for k in state.constraints):
                continue
            v = labels[c.topology_key]
            m[v] = m.get(v, 0) + count_pods_match_selector(ni.pods, c, pod.namespace)
        out.append(m)
    return out


def _check(snap: PredicateSnapshot, rng: random.Random) -> None:
    fw = snap.framework
    spread = fw.plugins["PodTopologySpread"]
    ipa = fw.plugins["InterPodAffinity"]
    assert isinstance(spread, PodTopologySpread) and isinstance(ipa, InterPodAffinity)
    with snap.bound():
        for k in range(4):
            pod = _pod(rng, f"incoming-{k}")
            nodes = snap.list_node_infos()
            s = CycleState()
            spread.schedsim_pre_filter(s, pod, nodes)
            st = s.get(SPREAD_KEY)
            if st is not None:
                assert st.tp_value_to_match_num == _spread_by_walk(spread, pod, snap)
            s = CycleState()
            ipa.schedsim_pre_filter(s, pod, nodes)
            want = pre_filter_state_by_walk(pod, nodes, fw.handle.object_listers)
            got = s.get(IPA_KEY)
            counts = (
                want.existing_anti_affinity_counts,
                want.affinity_counts,
                want.anti_affinity_counts,
            )
            if got is None:
                assert not any(counts[:1]) and not want.affinity and not want.anti_affinity
            else:
                assert (
                    got.existing_anti_affinity_counts,
                    got.affinity_counts,
                    got.anti_affinity_counts,
                ) == counts


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_index_counts_equal_the_walk(store: StoreFactory, seed: int) -> None:
    """Index-based PreFilter counts == the walk's, across adds, removes, fork/revert/commit
    and a node removal."""
    rng = random.Random(seed)
    plugins = ("PodTopologySpread", "InterPodAffinity")
    fw = Framework(
        Profile(plugins={"preFilter": plugins, "filter": plugins, "reserve": ()}), Handle()
    )
    snap = PredicateSnapshot(fw, store())
    nodes = [_node(i) for i in range(8)]
    bound = [_pod(rng, f"p{i}", f"n{rng.randrange(8)}") for i in range(30)]
    snap.set_cluster_state(nodes, bound)
    _check(snap, rng)
    snap.fork()
    added = []
    for i in range(10):
        p = _pod(rng, f"f{i}")
        n = f"n{rng.randrange(8)}"
        snap.force_add_pod(p, n)
        added.append((p, n))
    _check(snap, rng)
    p, n = added[0]
    snap.force_remove_pod(p.namespace, p.name, n)
    _check(snap, rng)
    snap.revert()
    _check(snap, rng)
    snap.fork()
    snap.force_add_pod(_pod(rng, "kept"), "n1")
    snap.remove_node_info("n2")
    _check(snap, rng)
    snap.commit()
    _check(snap, rng)


def _plain(name: str, node: str = "", app: str = "a") -> Pod:
    return Pod.from_manifest(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "labels": {"app": app}},
            "spec": {"containers": [{"name": "c"}], "nodeName": node},
        }
    )


def _anti(name: str, node: str) -> Pod:
    raw: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "x"}},
        "spec": {
            "containers": [{"name": "c"}],
            "nodeName": node,
            "affinity": {
                "podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {"topologyKey": ZONE, "labelSelector": {"matchLabels": {"app": "a"}}}
                    ]
                }
            },
        },
    }
    return Pod.from_manifest(raw)


def _affinity_lists_are_visible(snap: PredicateSnapshot) -> None:
    lister = snap.store.node_infos()
    for ni in (
        *lister.have_pods_with_affinity_list(),
        *lister.have_pods_with_required_anti_affinity_list(),
    ):
        assert ni.node is not None and lister.get(ni.node.name) is ni


def test_pre_filter_skips_without_refresh_until_an_anti_affine_pod_exists(
    store: StoreFactory,
) -> None:
    """Upstream InterPodAffinity PreFilter counts existing anti-affinity over
    ``HavePodsWithRequiredAntiAffinityList`` and returns Skip when a pod without required
    (anti-)affinity meets no such pod: the index is then not refreshed (no per-node work).
    After a fork adds an anti-affine pod the counts equal the walk's and Filter rejects that
    pod's zone (``ErrReasonExistingAntiAffinityRulesNotMatch``); a revert brings the Skip
    back. The stores' affinity lists hold the visible NodeInfos through copy-on-write."""
    plugins = ("InterPodAffinity",)
    fw = Framework(
        Profile(plugins={"preFilter": plugins, "filter": plugins, "reserve": ()}), Handle()
    )
    ipa = fw.plugins["InterPodAffinity"]
    assert isinstance(ipa, InterPodAffinity)
    snap = PredicateSnapshot(fw, store())
    snap.set_cluster_state(
        [_node(i) for i in range(6)], [_plain(f"p{i}", f"n{i}") for i in range(6)]
    )
    incoming = _plain("incoming")

    def pre_filter() -> Any:
        s = CycleState()
        with snap.bound():
            st = ipa.schedsim_pre_filter(s, incoming, snap.list_node_infos())
        return st, s.get(IPA_KEY)

    st, _ = pre_filter()
    assert st is not None and st.code is Code.Skip
    assert not fw.handle.pod_index.node_labels  # never refreshed
    snap.fork()
    _affinity_lists_are_visible(snap)
    snap.force_add_pod(_anti("anti", "n1"), "n1")
    _affinity_lists_are_visible(snap)
    snap.force_add_pod(_plain("more", "n1"), "n1")  # a write on a node already listed
    snap.force_add_pod(_plain("other", "n2"), "n2")  # copy-on-write of an unlisted node
    _affinity_lists_are_visible(snap)
    st, got = pre_filter()
    assert st is None and got is not None
    want = pre_filter_state_by_walk(incoming, snap.list_node_infos(), fw.handle.object_listers)
    assert (
        got.existing_anti_affinity_counts == want.existing_anti_affinity_counts == {(ZONE, "z1"): 1}
    )
    state = CycleState()
    state[IPA_KEY] = got
    assert ipa.schedsim_filter(state, incoming, snap.get_node_info("n1")) is not None
    assert ipa.schedsim_filter(state, incoming, snap.get_node_info("n0")) is None  # zone z0
    snap.revert()
    _affinity_lists_are_visible(snap)
    st, _ = pre_filter()
    assert st is not None and st.code is Code.Skip
    # a node already listed is copied on its first write in a fork: the lists show the copy
    snap.force_add_pod(_anti("anti", "n1"), "n1")
    _affinity_lists_are_visible(snap)
    snap.fork()
    _affinity_lists_are_visible(snap)
    snap.force_add_pod(_plain("more", "n1"), "n1")
    _affinity_lists_are_visible(snap)
    snap.revert()
    _affinity_lists_are_visible(snap)
