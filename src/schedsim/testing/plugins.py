"""A test kit for plugin authors: build a snapshot from manifests, run one plugin's extension
points for a pod, and look at the Statuses and scores it returned.

.. code-block:: python

    from schedsim.testing import make_node, make_pod, run_plugin, run_plugin_on_nodes

    run = run_plugin(MyPlugin, make_pod("p"), "n1", nodes=[make_node("n1")])
    assert run.filter == Status(Code.Unschedulable, ("my reason",), "MyPlugin")

    every = run_plugin_on_nodes(MyScorer, make_pod("p"), nodes=[make_node("a"), make_node("b")])
    assert every.normalized_scores == {"a": 100, "b": 0}

The plugin runs through the real runtime (pluggy validation, profile, CycleState), exactly as
``schedsim simulate`` would run it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs
import yaml

from schedsim.api.core import Node, Pod
from schedsim.api.loading.loader import decode_objects
from schedsim.engine.cluster import Cluster
from schedsim.framework import (
    SUCCESS,
    Code,
    CycleState,
    FeatureGates,
    Framework,
    Handle,
    NodeInfo,
    PluginFactory,
    PreFilterResult,
    Profile,
    Status,
    default_profile,
    discover_plugins,
)
from schedsim.snapshot import ClusterSnapshotStore, PredicateSnapshot

__all__ = [
    "PluginNodesRun",
    "PluginRun",
    "chosen_devices",
    "run_plugin",
    "run_plugin_on_nodes",
    "snapshot_from_manifests",
]


def snapshot_from_manifests(
    manifests: str | Iterable[Mapping[str, Any]],
    *,
    profile: Profile | None = None,
    plugins: Mapping[str, PluginFactory] | None = None,
    feature_gates: Mapping[str, bool] | None = None,
    store: ClusterSnapshotStore | None = None,
) -> tuple[PredicateSnapshot, list[Pod]]:
    """A snapshot holding the nodes and bound pods of ``manifests``, and the pending pods.

    Built by `schedsim.engine.Cluster` as the commands build theirs: DeviceClasses,
    ResourceClaims and ResourceSlices go into the snapshot's DRA snapshot, CSINodes into its
    CSI snapshot, PVs, PVCs, StorageClasses and VolumeAttachments into its storage listers;
    plugins read them through the framework's handle while the snapshot is bound (each
    snapshot operation binds it; to call a plugin's hooks directly, use
    ``with snap.bound(): ...``). Claims pending pods would create from templates are not
    created (their PreEnqueue reports them missing, as kube-scheduler's would).

    Args:
        manifests: YAML text (multi-document, ``kind: List``) or decoded objects.
        profile: the scheduler profile (default: kube-scheduler's default profile).
        plugins: extra plugin factories by name, besides the entry-point ones.
        feature_gates: gate overrides.
        store: the store (default: the delta store).

    Returns:
        the snapshot, and the pods with neither ``spec.nodeName`` nor
        ``status.nominatedNodeName``, in input order.

    Raises:
        ManifestError: a malformed object.
        DraSnapshotError: inconsistent DRA objects, or a bound pod's claim is missing.
    """
    docs = yaml.safe_load_all(manifests) if isinstance(manifests, str) else manifests
    cluster = Cluster.from_manifests(decode_objects(docs, "<test manifests>"))
    registry = discover_plugins(extra=plugins)
    gates = FeatureGates().with_overrides(feature_gates or {})
    handle = Handle(feature_gates=gates, object_listers=cluster.object_listers())
    framework = Framework(profile or default_profile(), handle, registry)
    snap, _ = cluster.snapshot(framework, store)
    live = [p for p in cluster.pods if not p.is_terminal]
    return snap, [p for p in live if not (p.node_name or p.nominated_node_name)]


@attrs.frozen
class PluginRun:
    """What one plugin returned for one pod and node (``None`` = success / not run).

    Attributes:
        pre_filter: the PreFilter status (SUCCESS, Skip, or a rejection); None if the plugin
            has no PreFilter.
        filter: the Filter status for the node (SUCCESS or the rejection); None when
            PreFilter rejected or skipped, PreFilter's result excludes the node, or the
            plugin has no Filter.
        reserve: the Reserve status when ``reserve=True`` and Filter passed.
        state: the CycleState the calls shared.
        plugin: the plugin instance (to inspect what it recorded).
        pre_filter_result: the `PreFilterResult` PreFilter returned (None: all nodes).
        pre_score: the PreScore status (SUCCESS, Skip or the Error); None if the plugin has
            no PreScore or scoring did not run.
        scores: node -> raw Score, over every node this plugin finds feasible (its
            PreFilter result and Filter), as kube-scheduler would score them.
        normalized_scores: node -> score after NormalizeScore (the raw score when the
            plugin has none).
        score_status: SUCCESS, or the Error ``run_score_plugins`` returned; None when the
            plugin has no Score or scoring did not run.
        permit: the Permit result when ``permit=True`` and Reserve passed: SUCCESS (allow),
            ``Code.Wait`` (wait; `permit_timeout` says how long), the rejection, or the
            Error the runtime made of an exception or a wrong result; None when not run.
        permit_timeout: for a Wait, the seconds the plugin asked to wait (capped at 15
            minutes, as upstream's ``maxTimeout``), else None.
    """

    pre_filter: Status | None
    filter: Status | None
    reserve: Status | None
    state: CycleState
    plugin: Any
    pre_filter_result: PreFilterResult | None = None
    pre_score: Status | None = None
    scores: Mapping[str, int] = attrs.field(factory=dict)
    normalized_scores: Mapping[str, int] = attrs.field(factory=dict)
    score_status: Status | None = None
    permit: Status | None = None
    permit_timeout: float | None = None

    @property
    def score(self) -> int | None:
        """The raw Score of the node ``run_plugin`` was asked about (None: not scored)."""
        return self.scores.get(self._node)

    @property
    def normalized_score(self) -> int | None:
        """Its score after NormalizeScore (None: not scored)."""
        return self.normalized_scores.get(self._node)

    _node: str = ""


@attrs.frozen
class PluginNodesRun:
    """What one plugin returned for one pod over every node (`run_plugin_on_nodes`).

    Attributes:
        pre_filter: as `PluginRun.pre_filter`.
        pre_filter_result: as `PluginRun.pre_filter_result`.
        filter: node -> Filter status (SUCCESS or the rejection), for every node Filter ran
            on (none when PreFilter rejected or skipped, or the plugin has no Filter; nodes
            outside the PreFilter result are absent).
        feasible: the nodes this plugin lets through, in node order.
        pre_score, scores, normalized_scores, score_status: as in `PluginRun`.
        state: the CycleState the calls shared.
        plugin: the plugin instance.
    """

    pre_filter: Status | None
    pre_filter_result: PreFilterResult | None
    filter: Mapping[str, Status]
    feasible: tuple[str, ...]
    pre_score: Status | None
    scores: Mapping[str, int]
    normalized_scores: Mapping[str, int]
    score_status: Status | None
    state: CycleState
    plugin: Any


def _framework(
    factory: PluginFactory, args: Mapping[str, Any] | None, feature_gates: Mapping[str, bool] | None
) -> tuple[Framework, str]:
    name = getattr(factory, "name", None)
    if not isinstance(name, str):
        raise TypeError("the plugin factory needs a string `name`")
    points = ("preFilter", "filter", "preScore", "score", "reserve", "permit")
    profile = Profile(
        plugins={p: (name,) for p in points},
        plugin_args={name: args or {}},
        explicit=frozenset({name}),
        plugin_weights={name: 1},
    )
    gates = FeatureGates().with_overrides(feature_gates or {})
    return Framework(profile, Handle(feature_gates=gates), {name: factory}), name


def run_plugin_on_nodes(
    factory: PluginFactory,
    pod: Pod,
    *,
    nodes: Sequence[Node],
    pods: Sequence[Pod] = (),
    args: Mapping[str, Any] | None = None,
    feature_gates: Mapping[str, bool] | None = None,
) -> PluginNodesRun:
    """Run one plugin's PreFilter, Filter on every node, then PreScore, Score and
    NormalizeScore over the nodes it finds feasible (what kube-scheduler's schedulePod does,
    with this plugin alone in the profile, weight 1).

    Args:
        factory: the plugin class (anything with a ``name`` that builds the plugin).
        pod: the pod being scheduled.
        nodes: the cluster's nodes.
        pods: pods already bound (``spec.nodeName`` set).
        args: the plugin's ``pluginConfig`` args.
        feature_gates: gate overrides.

    Raises:
        PluginError: the plugin is invalid or rejects its args.
    """
    framework, name = _framework(factory, args, feature_gates)
    snap = PredicateSnapshot(framework)
    snap.set_cluster_state(nodes, pods)
    with snap.bound():  # the plugin reads the snapshot through the handle
        return _evaluate(framework, name, snap, pod)


def _evaluate(framework: Framework, name: str, snap: PredicateSnapshot, pod: Pod) -> PluginNodesRun:
    order = framework.order()
    plugin = framework.plugins[name]
    state = CycleState()
    infos = snap.list_node_infos()
    pre: Status | None = None
    result: PreFilterResult | None = None
    if order["PreFilter"]:
        result, pre, _ = framework.run_pre_filter_plugins(state, pod, infos)
        if name in state.skip_filter_plugins:
            pre = Status(Code.Skip, (), name)
        elif not pre.is_success:
            return PluginNodesRun(pre, result, {}, (), None, {}, {}, None, state, plugin)
    allowed = result.node_names if result is not None else None
    candidates = [ni for ni in infos if allowed is None or _name(ni) in allowed]
    filters: dict[str, Status] = {}
    if order["Filter"] and name not in state.skip_filter_plugins:
        for ni in candidates:
            filters[_name(ni)] = framework.run_filter_plugins(state, pod, ni)
    feasible = [ni for ni in candidates if filters.get(_name(ni), SUCCESS).is_success]
    names = tuple(_name(ni) for ni in feasible)
    if not order["Score"] or not feasible:
        return PluginNodesRun(pre, result, filters, names, None, {}, {}, None, state, plugin)
    pre_score = framework.run_pre_score_plugins(state, pod, feasible) if order["PreScore"] else None
    if name in state.skip_score_plugins:
        pre_score = Status(Code.Skip, (), name)
    if pre_score is not None and not pre_score.is_success:
        return PluginNodesRun(pre, result, filters, names, pre_score, {}, {}, None, state, plugin)
    raw: dict[str, dict[str, int]] = {}
    scored, score_status = framework.run_score_plugins(state, pod, feasible, raw)
    normalized = {s.name: s.total_score for s in scored}  # weight 1: normalized score
    return PluginNodesRun(
        pre,
        result,
        filters,
        names,
        pre_score,
        raw.get(name, {}),
        normalized,
        score_status,
        state,
        plugin,
    )


def chosen_devices(
    factory: PluginFactory,
    manifests: str | Iterable[Mapping[str, Any]],
    pod_name: str,
    node_name: str,
    *,
    args: Mapping[str, Any] | None = None,
    feature_gates: Mapping[str, bool] | None = None,
) -> dict[str, tuple[str, ...]]:
    """Schedule the pending pod ``pod_name`` of ``manifests`` on ``node_name`` with
    kube-scheduler's default profile plus the plugin (enabled at Score, weight 1, so that its
    DeviceChoice hook runs: schedsim's own extension point, `schedsim.framework.devices`),
    and return what DynamicResources allocated: claim name -> ``"<pool>/<device>"`` per
    allocation result, in result order.

    The pod's claims must be in ``manifests`` (as ``resourceClaimName`` references; claims
    from templates are not created, see `snapshot_from_manifests`).

    Raises:
        SchedulingError: the pod does not fit there (the failing plugin and its reasons).
        LookupError: no pending pod ``pod_name``.
        PluginError: the plugin is invalid or rejects its args.
    """
    name = getattr(factory, "name", None)
    if not isinstance(name, str):
        raise TypeError("the plugin factory needs a string `name`")
    base = default_profile()
    profile = attrs.evolve(
        base,
        plugins={**base.plugins, "score": (*base.plugins.get("score", ()), name)},
        plugin_args={name: args or {}},
        explicit=frozenset({name}),
        plugin_weights={**base.plugin_weights, name: 1},
    )
    snap, pending = snapshot_from_manifests(
        manifests, profile=profile, plugins={name: factory}, feature_gates=feature_gates
    )
    pod = next((p for p in pending if p.name == pod_name), None)
    if pod is None:
        raise LookupError(f"no pending pod {pod_name!r} in the manifests")
    snap.schedule_pod(pod, node_name)
    out: dict[str, tuple[str, ...]] = {}
    for claim in snap.dra_snapshot.list_resource_claims():
        allocation = claim.status.allocation
        if allocation is not None and any(r.uid == pod.uid for r in claim.status.reserved_for):
            out[claim.name] = tuple(f"{r.pool}/{r.device}" for r in allocation.results)
    return out


def _name(ni: NodeInfo) -> str:
    return ni.node.name if ni.node is not None else ""


def run_plugin(
    factory: PluginFactory,
    pod: Pod,
    node_name: str,
    *,
    nodes: Sequence[Node],
    pods: Sequence[Pod] = (),
    args: Mapping[str, Any] | None = None,
    feature_gates: Mapping[str, bool] | None = None,
    reserve: bool = False,
    permit: bool = False,
) -> PluginRun:
    """Run one plugin's extension points for a pod and report them for ``node_name``.

    PreFilter, Filter on every node (see `run_plugin_on_nodes`), PreScore, Score and
    NormalizeScore over the nodes the plugin finds feasible, and optionally Reserve on
    ``node_name``.

    Args:
        factory: the plugin class (anything with a ``name`` that builds the plugin).
        pod: the pod being scheduled.
        node_name: the node to report Filter and the scores for (and to run Reserve on).
        nodes: the cluster's nodes.
        pods: pods already bound (``spec.nodeName`` set).
        args: the plugin's ``pluginConfig`` args.
        feature_gates: gate overrides.
        reserve: also run Reserve when Filter passes on ``node_name``.
        permit: also run Permit after that (Reserve first, as kube-scheduler's
            schedulingCycle): its result in `PluginRun.permit`, a wait's timeout in
            `PluginRun.permit_timeout`.

    Raises:
        PluginError: the plugin is invalid or rejects its args.
        NodeNotFoundError: ``node_name`` is not among ``nodes``.
    """
    framework, name = _framework(factory, args, feature_gates)
    snap = PredicateSnapshot(framework)
    snap.set_cluster_state(nodes, pods)
    with snap.bound():  # the plugin reads the snapshot through the handle
        snap.get_node_info(node_name)  # NodeNotFoundError for an unknown node
        run = _evaluate(framework, name, snap, pod)
        filt = run.filter.get(node_name)
        res = None
        fits = (filt is None or filt.is_success) and (
            run.pre_filter is None or run.pre_filter.code in (Code.Success, Code.Skip)
        )
        if (reserve or permit) and framework.order()["Reserve"] and fits:
            res = framework.run_reserve_plugins_reserve(run.state, pod, node_name)
        allowed: Status | None = None
        timeout: float | None = None
        if permit and framework.order()["Permit"] and fits and (res is None or res.is_success):
            allowed = framework.run_permit_plugins(run.state, pod, node_name, 0.0)
            waiting = framework.handle.waiting_pods.get(pod.uid)
            if allowed.code is Code.Wait and waiting is not None:
                timeout = waiting.timeouts.get(name)
                allowed = Status(Code.Wait, allowed.reasons, name)
                framework.handle.waiting_pods.remove(pod.uid)
    return PluginRun(
        run.pre_filter,
        filt,
        res,
        run.state,
        run.plugin,
        run.pre_filter_result,
        run.pre_score,
        run.scores,
        run.normalized_scores,
        run.score_status,
        allowed,
        timeout,
        node_name,
    )
