"""A test kit for plugin authors: build a snapshot from manifests, run one plugin's extension
points for a pod on a node, and look at the Status it returned.

.. code-block:: python

    from schedsim.testing import make_node, make_pod, run_plugin

    run = run_plugin(MyPlugin, make_pod("p"), "n1", nodes=[make_node("n1")])
    assert run.filter == Status(Code.Unschedulable, ("my reason",), "MyPlugin")

The plugin runs through the real runtime (pluggy validation, profile, CycleState), exactly as
``schedsim simulate`` would run it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs
import yaml

from schedsim.api.core import Node, Pod
from schedsim.api.loader import decode_objects
from schedsim.engine.cluster import Cluster
from schedsim.framework import (
    Code,
    CycleState,
    FeatureGates,
    Framework,
    Handle,
    PluginFactory,
    Profile,
    Status,
    default_profile,
    discover_plugins,
)
from schedsim.snapshot import ClusterSnapshotStore, PredicateSnapshot

__all__ = ["PluginRun", "run_plugin", "snapshot_from_manifests"]


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
    framework = Framework(profile or default_profile(), Handle(feature_gates=gates), registry)
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
            PreFilter rejected or skipped, or the plugin has no Filter.
        reserve: the Reserve status when ``reserve=True`` and Filter passed.
        state: the CycleState the calls shared.
        plugin: the plugin instance (to inspect what it recorded).
    """

    pre_filter: Status | None
    filter: Status | None
    reserve: Status | None
    state: CycleState
    plugin: Any


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
) -> PluginRun:
    """Run one plugin's PreFilter, Filter (on ``node_name``) and optionally Reserve.

    Args:
        factory: the plugin class (anything with a ``name`` that builds the plugin).
        pod: the pod being scheduled.
        node_name: the node to run Filter (and Reserve) for.
        nodes: the cluster's nodes.
        pods: pods already bound (``spec.nodeName`` set).
        args: the plugin's ``pluginConfig`` args.
        feature_gates: gate overrides.
        reserve: also run Reserve when Filter passes.

    Raises:
        PluginError: the plugin is invalid or rejects its args.
        NodeNotFoundError: ``node_name`` is not among ``nodes``.
    """
    name = getattr(factory, "name", None)
    if not isinstance(name, str):
        raise TypeError("the plugin factory needs a string `name`")
    profile = Profile(
        plugins={"preFilter": (name,), "filter": (name,), "reserve": (name,)},
        plugin_args={name: args or {}},
        explicit=frozenset({name}),
    )
    gates = FeatureGates().with_overrides(feature_gates or {})
    framework = Framework(profile, Handle(feature_gates=gates), {name: factory})
    snap = PredicateSnapshot(framework)
    snap.set_cluster_state(nodes, pods)
    with snap.bound():  # the plugin reads the snapshot through the handle
        return _run(framework, name, snap, pod, node_name, reserve)


def _run(
    framework: Framework,
    name: str,
    snap: PredicateSnapshot,
    pod: Pod,
    node_name: str,
    reserve: bool,
) -> PluginRun:
    order = framework.order()
    state = CycleState()
    pre: Status | None = None
    if order["PreFilter"]:
        result, pre, _ = framework.run_pre_filter_plugins(state, pod, snap.list_node_infos())
        if name in state.skip_filter_plugins:
            pre = Status(Code.Skip, (), name)
        if not pre.is_success:
            return PluginRun(pre, None, None, state, framework.plugins[name])
        if (
            result is not None
            and result.node_names is not None
            and node_name not in (result.node_names)
        ):
            return PluginRun(pre, None, None, state, framework.plugins[name])
    node_info = snap.get_node_info(node_name)
    filt = framework.run_filter_plugins(state, pod, node_info) if order["Filter"] else None
    res = None
    if reserve and order["Reserve"] and (filt is None or filt.is_success):
        res = framework.run_reserve_plugins_reserve(state, pod, node_name)
    return PluginRun(pre, filt, res, state, framework.plugins[name])
