"""Generic checker for plugin cases in the ``preFilter`` / ``filter`` / ``preScore`` /
``scores`` / ``normalizedScores`` format (../shared/cases/README.md).

Like upstream's plugin tests (``TestPodTopologySpreadFilter``, ``TestNodeAffinityPriority``,
...) it builds the cluster from the case's objects, constructs the plugin from the plugin
registry with the case's ``pluginArgs`` and ``featureGates``, and calls the plugin's hook
methods directly, in extension-point order, for the points the case lists:

1. PreFilter with every NodeInfo of the snapshot;
2. Filter per listed node (only when PreFilter neither failed nor returned Skip);
3. PreScore with the listed nodes that passed Filter (all listed nodes when Filter is not
   listed), in the case's order;
4. Score per such node (only when PreScore returned Success: Skip skips Score, a failure
   ends the cycle and must be the case's expected ``preScore``);
5. NormalizeScore over those scores, in place (``normalizedScores`` equal ``scores`` for a
   plugin without NormalizeScore).

Use from a group module (``cases_<group>.py``) or wire the group's prefix straight to this
module in ``test_cases.py`` GROUPS::

    from cases_plugin import build, expected_failure, run   # the whole checker
    run(case, source)                                        # asserts every `expect` field
    run(case, source, configure=add_my_listers)              # extra cluster wiring

``configure(handle, manifests)`` is called before the plugin is constructed, for what the
plugin needs that kube-scheduler's informers would give it and this module does not wire
(PVs, PVCs, StorageClasses, VolumeAttachments, CSINodes and the DRA objects are wired).
`build` returns the `PluginCase` for checks this module does not make.

`expected_failure` marks a case xfail (strict) while its plugin is not registered or does
not implement a listed extension point yet, so a group can be wired before its plugin lands
and its cases must pass as soon as it does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs

from schedsim.api.core import Pod
from schedsim.api.loading.loader import Manifests, decode_objects
from schedsim.framework import (
    CycleState,
    FeatureGates,
    Framework,
    Handle,
    NodeInfo,
    PreFilterResult,
    Profile,
    Status,
    StorageListers,
    discover_plugins,
)
from schedsim.framework.args import ArgsError
from schedsim.snapshot import PredicateSnapshot
from schedsim.snapshot.csi import CsiSnapshot
from schedsim.snapshot.dra import DraSnapshot

__all__ = ["HOOKS", "PluginCase", "build", "expected_failure", "run"]

HOOKS = {
    "PreFilter": "schedsim_pre_filter",
    "Filter": "schedsim_filter",
    "PreScore": "schedsim_pre_score",
    "Score": "schedsim_score",
    "NormalizeScore": "schedsim_normalize_score",
}
"""The extension points this checker runs -> the plugin method it calls."""

Configure = Callable[[Handle, Manifests], None]


@attrs.define
class PluginCase:
    """A case ready to run.

    Attributes:
        plugin: the plugin instance (built by its registered factory).
        pod: the pod being scheduled.
        nodes: the listed nodes' NodeInfos, in the case's order.
        snapshot: the cluster: every Node, and every pod with ``spec.nodeName`` on its node;
            call the plugin within ``snapshot.bound()`` (the handle reads it then).
        points: the extension points to run.
        manifests: the decoded objects.
    """

    plugin: Any
    pod: Pod
    nodes: list[NodeInfo]
    snapshot: PredicateSnapshot
    points: tuple[str, ...]
    manifests: Manifests


def expected_failure(case: dict[str, Any]) -> str | None:
    """Why this case is expected to fail (None: it must pass): its plugin is not registered,
    or lacks the hook of a listed extension point."""
    check = case["check"]
    name = check["plugin"]
    registry = discover_plugins()
    if name not in registry:
        return f"plugin {name} is not emulated yet"
    factory = registry[name]
    missing = [p for p in check.get("extensionPoints", []) if not hasattr(factory, HOOKS.get(p, p))]
    if missing:
        return f"{name} does not implement {', '.join(missing)} yet"
    return None


def build(case: dict[str, Any], source: str, configure: Configure | None = None) -> PluginCase:
    """Build the cluster and the plugin of one case (see the module docstring)."""
    check = case["check"]
    name = check["plugin"]
    points = tuple(check.get("extensionPoints", ()))
    unknown = [p for p in points if p not in HOOKS]
    assert not unknown, f"this checker does not run {unknown}"
    m = decode_objects(case["objects"], source, api_rules=False)
    # upstream sets feature.Features fields directly, so a locked gate may take its other value
    gates = FeatureGates().with_overrides(check.get("featureGates") or {}, enforce_locks=False)
    listers = StorageListers.from_objects(
        m.persistent_volumes, m.persistent_volume_claims, m.storage_classes, m.volume_attachments
    )
    handle = Handle(feature_gates=gates)
    # a framework without plugins: the snapshot binds itself to the handle (shared_lister,
    # ...) within `PredicateSnapshot.bound`
    snap = PredicateSnapshot(Framework(Profile(plugins={}), handle))
    ns, pod_name = check["pod"].split("/")
    pod = next(p for p in m.pods if p.namespace == ns and p.name == pod_name)
    bound = [p for p in m.pods if p.node_name and p is not pod]
    csi = CsiSnapshot(m.csi_nodes)
    dra = DraSnapshot.from_objects(m.resource_claims, m.resource_slices, m.device_classes)
    assert (
        snap.set_cluster_state(m.nodes, bound, dra, csi_snapshot=csi, storage_listers=listers) == []
    )
    if configure is not None:
        configure(handle, m)
    plugin = discover_plugins()[name](check.get("pluginArgs") or {}, handle)
    node_names = check.get("nodes") or [check["node"]]
    nodes = [snap.get_node_info(n) for n in node_names]
    return PluginCase(plugin, pod, nodes, snap, points, m)


def _code(st: Status | PreFilterResult | None) -> str:
    return "Success" if st is None or isinstance(st, PreFilterResult) else st.code.value


def _check_status(where: str, got: Status | PreFilterResult | None, want: dict[str, Any]) -> None:
    code = _code(got)
    assert code == want["code"], f"{where}: code {code} ({got}), want {want}"
    if "reasons" in want:
        reasons = [] if not isinstance(got, Status) else list(got.reasons)
        assert reasons == want["reasons"], f"{where}: reasons {reasons}, want {want['reasons']}"


def _node_name(ni: NodeInfo) -> str:
    assert ni.node is not None
    return ni.node.name


def run(case: dict[str, Any], source: str, configure: Configure | None = None) -> None:
    """Run one case and assert every field its ``expect`` gives (see the module docstring).

    ``expect.pluginArgsError`` (``field``, ``type``: the ``field.Error`` upstream's plugin
    constructor returns, e.g. ``Invalid``): building the plugin from ``pluginArgs`` must fail
    with that field and error type, and nothing is run.
    """
    want_err = case["expect"].get("pluginArgsError")
    if want_err is not None:
        try:
            build(case, source, configure)
        except ArgsError as e:
            assert e.field == want_err["field"], f"pluginArgsError field: {e}"
            assert e.problem.startswith(f"{want_err['type']} value"), f"pluginArgsError: {e}"
            return
        raise AssertionError(f"pluginArgsError: the plugin accepted the args, want {want_err}")
    c = build(case, source, configure)
    with c.snapshot.bound():  # the plugin reads the snapshot through its handle
        _run(c, case["expect"])


def _run(c: PluginCase, expect: dict[str, Any]) -> None:
    plugin, pod, points = c.plugin, c.pod, c.points
    state = CycleState()
    feasible: Sequence[NodeInfo] = c.nodes
    if "PreFilter" in points:
        pre = plugin.schedsim_pre_filter(state, pod, c.snapshot.list_node_infos())
        if "preFilter" in expect:
            _check_status("preFilter", pre, expect["preFilter"])
        if _code(pre) == "Success":
            want_names = (expect.get("preFilterResult") or {}).get("nodeNames")
            got_names = pre.node_names if isinstance(pre, PreFilterResult) else None
            got_sorted = None if got_names is None else sorted(got_names)
            assert got_sorted == (None if want_names is None else sorted(want_names)), (
                f"preFilterResult: {got_sorted}, want {want_names}"
            )
        elif _code(pre) == "Skip":
            state.skip_filter_plugins.add(plugin.name)
        else:
            assert "filter" not in expect, "a failing PreFilter ends the cycle"
            return
    if "Filter" in points:
        skipped = plugin.name in state.skip_filter_plugins
        passed = []
        for ni in c.nodes:
            node = _node_name(ni)
            st = None if skipped else plugin.schedsim_filter(state, pod, ni)
            if node in (expect.get("filter") or {}):
                _check_status(f"filter.{node}", st, expect["filter"][node])
            if _code(st) == "Success":
                passed.append(ni)
        assert not (skipped and expect.get("filter")), "PreFilter Skip: Filter is not called"
        feasible = passed
    if not any(p in points for p in ("PreScore", "Score", "NormalizeScore")):
        return
    if "PreScore" in points:
        pre_score = plugin.schedsim_pre_score(state, pod, list(feasible))
        if "preScore" in expect:
            _check_status("preScore", pre_score, expect["preScore"])
        if _code(pre_score) != "Success":  # Skip: Score is not run; a failure ends the cycle
            assert "scores" not in expect, f"PreScore {_code(pre_score)}: Score is not run"
            assert "preScore" in expect, f"preScore: {pre_score}"
            return
    if "Score" not in points:
        return
    scores: dict[str, int] = {}
    for ni in feasible:
        got = plugin.schedsim_score(state, pod, ni)
        assert isinstance(got, int) and not isinstance(got, bool), f"score {_node_name(ni)}: {got}"
        scores[_node_name(ni)] = got
    if "scores" in expect:
        assert scores == expect["scores"], f"scores: {scores}, want {expect['scores']}"
    normalized = dict(scores)
    if "NormalizeScore" in points:
        st = plugin.schedsim_normalize_score(state, pod, normalized)
        assert _code(st) == "Success", f"normalizeScore: {st}"
        assert list(normalized) == list(scores), "NormalizeScore must keep the nodes"
    if "normalizedScores" in expect:
        want = expect["normalizedScores"]
        assert normalized == want, f"normalizedScores: {normalized}, want {want}"
