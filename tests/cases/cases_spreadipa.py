"""Runner for the ``spread-*`` (PodTopologySpread) and ``ipa-*`` (InterPodAffinity) cases:
PreFilter/Filter and PreScore/Score/NormalizeScore through the plugin's own hook methods.

Called by ``test_cases.py``. As upstream's plugin tests do, the plugin's methods are called
directly in extension-point order: PreFilter with every node of the snapshot, then Filter on
each listed node (unless PreFilter skipped or failed; a case listing Filter without PreFilter
calls Filter with an empty CycleState, as upstream's TestPreFilterDisabled does); PreScore
with the listed nodes, Score on each and NormalizeScore (unless PreScore skipped). The
Namespaces, Services, ReplicationControllers, ReplicaSets and StatefulSets of the case reach
the plugin through the handle's `ObjectListers`, the nodes and pods through the snapshot
(both stores).
"""

from __future__ import annotations

from typing import Any

from schedsim.api.loading.loader import decode_objects
from schedsim.engine import STORES
from schedsim.framework import (
    CycleState,
    FeatureGates,
    Framework,
    Handle,
    ObjectListers,
    Profile,
    Status,
)
from schedsim.snapshot import PredicateSnapshot
from schedsim_plugins.interpodaffinity import InterPodAffinity
from schedsim_plugins.podtopologyspread import PodTopologySpread

PLUGINS: dict[str, Any] = {p.name: p for p in (PodTopologySpread, InterPodAffinity)}


def expected_failure(case: dict[str, Any]) -> str | None:
    """Why this case is expected to fail (None: it must pass)."""
    del case
    return None


def _status(st: Status | None) -> dict[str, Any]:
    if st is None or st.is_success:
        return {"code": "Success"}
    out: dict[str, Any] = {"code": st.code.value}
    if st.reasons:
        out["reasons"] = list(st.reasons)
    return out


def _same(got: dict[str, Any], want: dict[str, Any], where: str) -> None:
    assert got["code"] == want["code"], f"{where}: got {got}, want {want}"
    if "reasons" in want:
        assert got.get("reasons") == want["reasons"], f"{where}: got {got}, want {want}"
    if "reasonContains" in want:  # upstream asserts a substring of the message only
        reasons = got.get("reasons") or []
        assert any(want["reasonContains"] in r for r in reasons), f"{where}: got {got}, want {want}"


def run_on(case: dict[str, Any], source: str, store: Any) -> None:
    """Run one case on a snapshot with ``store`` and compare every field ``expect`` gives."""
    check = case["check"]
    expect = case["expect"]
    plugin_name = check["plugin"]
    m = decode_objects(case["objects"], source, api_rules=False)
    gates = FeatureGates().with_overrides(check.get("featureGates") or {}, enforce_locks=False)
    handle = Handle(feature_gates=gates, object_listers=ObjectListers.from_manifests(m))
    # the snapshot becomes the handle's shared lister; the plugin is called directly
    framework = Framework(Profile(plugins={"preFilter": (), "filter": (), "reserve": ()}), handle)
    snap = PredicateSnapshot(framework, store=store())
    plugin = PLUGINS[plugin_name](check.get("pluginArgs") or {}, handle)
    ns, name = check["pod"].split("/")
    pod = next(p for p in m.pods if p.namespace == ns and p.name == name)
    bound = [p for p in m.pods if p.node_name and p is not pod]
    assert snap.set_cluster_state(m.nodes, bound) == []
    with snap.bound():  # the plugin reads the snapshot through the handle
        _run_points(plugin, snap, pod, check, expect)


def _run_points(
    plugin: Any, snap: PredicateSnapshot, pod: Any, check: dict[str, Any], expect: dict[str, Any]
) -> None:
    points = check.get("extensionPoints", [])
    state = CycleState()
    node_names = check["nodes"] if "nodes" in check else [check["node"]]
    if "PreFilter" in points:
        pre = plugin.schedsim_pre_filter(state, pod, snap.list_node_infos())
        _same(_status(pre), expect["preFilter"], "preFilter")
        if pre is None or pre.is_success:
            for n in node_names:
                got = _status(plugin.schedsim_filter(state, pod, snap.get_node_info(n)))
                _same(got, expect["filter"][n], f"filter.{n}")
        else:
            assert "filter" not in expect
    elif "Filter" in points:  # upstream's TestPreFilterDisabled: Filter with no PreFilter state
        for n in node_names:
            got = _status(plugin.schedsim_filter(state, pod, snap.get_node_info(n)))
            _same(got, expect["filter"][n], f"filter.{n}")
    if "PreScore" in points:
        nodes = [snap.get_node_info(n) for n in node_names]
        pre = plugin.schedsim_pre_score(state, pod, nodes)
        _same(_status(pre), expect["preScore"], "preScore")
        if pre is not None and not pre.is_success:
            assert "scores" not in expect
            return
        scores: dict[str, int] = {}
        for ni in nodes:
            s = plugin.schedsim_score(state, pod, ni)
            assert isinstance(s, int), s
            scores[ni.node.name] = s
        assert scores == expect["scores"], f"scores: got {scores}"
        plugin.schedsim_normalize_score(state, pod, scores)
        assert scores == expect["normalizedScores"], f"normalizedScores: got {scores}"


def run(case: dict[str, Any], source: str) -> None:
    """Run one case on both stores."""
    for store in STORES.values():
        run_on(case, source, store)
