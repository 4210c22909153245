"""Static conformance: checked by `mypy --strict` (tests/unit/test_typing.py), never run.

The snapshot's own objects must satisfy the framework protocols directly, so the stores can
hand them to plugins without wrapping.
"""

from __future__ import annotations

from typing import assert_type

from schedsim import framework, snapshot
from schedsim.api.core import Node
from schedsim.framework import Framework, Handle, default_profile
from schedsim.snapshot.csi import CsiSnapshot


def node_info_is_framework_node_info(ni: snapshot.NodeInfo) -> framework.NodeInfo:
    return ni


def pod_info_is_framework_pod_info(pi: snapshot.PodInfo) -> framework.PodInfo:
    return pi


def snapshot_is_shared_lister(s: snapshot.PredicateSnapshot) -> framework.SharedLister:
    return s


def snapshot_is_csi_manager(s: snapshot.PredicateSnapshot) -> framework.SharedCsiManager:
    return s


def csi_snapshot_is_csi_manager(s: CsiSnapshot) -> framework.SharedCsiManager:
    return s


def store_lister_is_node_info_lister(s: snapshot.BasicSnapshotStore) -> framework.NodeInfoLister:
    return s.node_infos()


def basic_store_is_a_store(s: snapshot.BasicSnapshotStore) -> snapshot.ClusterSnapshotStore:
    return s


_ni: framework.NodeInfo = snapshot.NodeInfo(Node(name="n1"))
_snap = snapshot.PredicateSnapshot(Framework(default_profile(), Handle()))
assert_type(_snap.get_node_info("n1"), snapshot.NodeInfo)
assert_type(_snap.list_node_infos()[0].pods[0], snapshot.PodInfo)


# In-tree plugins satisfy the typed plugin protocols (what plugin authors check against).
def in_tree_plugins_conform() -> None:
    from schedsim.framework import FilterPlugin, PreFilterPlugin
    from schedsim_plugins.nodeports import NodePorts
    from schedsim_plugins.noderesources import NodeResourcesFit
    from schedsim_plugins.nodevolumelimits import NodeVolumeLimits
    from schedsim_plugins.tainttoleration import TaintToleration

    fit = NodeResourcesFit({}, Handle())
    _pre: PreFilterPlugin = fit
    _filter: FilterPlugin = fit
    _ports: FilterPlugin = NodePorts({}, Handle())
    _taints: FilterPlugin = TaintToleration({}, Handle())
    limits = NodeVolumeLimits({}, Handle())
    _limits_pre: PreFilterPlugin = limits
    _limits: FilterPlugin = limits


# The in-tree score plugins satisfy the score protocols (keyword-only parameters: the names
# must be the specs').
def in_tree_score_plugins_conform() -> None:
    from schedsim.framework import PreScorePlugin, ScoreExtensions, ScorePlugin
    from schedsim_plugins.balancedallocation import NodeResourcesBalancedAllocation
    from schedsim_plugins.imagelocality import ImageLocality
    from schedsim_plugins.nodeaffinity import NodeAffinity
    from schedsim_plugins.noderesources import NodeResourcesFit
    from schedsim_plugins.tainttoleration import TaintToleration

    fit = NodeResourcesFit({}, Handle())
    _fit_pre: PreScorePlugin = fit
    _fit: ScorePlugin = fit
    balanced = NodeResourcesBalancedAllocation({}, Handle())
    _balanced_pre: PreScorePlugin = balanced
    _balanced: ScorePlugin = balanced
    images = ImageLocality({}, Handle())
    _images_pre: PreScorePlugin = images
    _images: ScorePlugin = images
    taints = TaintToleration({}, Handle())
    _taints_pre: PreScorePlugin = taints
    _taints: ScoreExtensions = taints
    affinity = NodeAffinity({}, Handle())
    _affinity_pre: PreScorePlugin = affinity
    _affinity: ScoreExtensions = affinity


def queue_and_binding_plugins_conform() -> None:
    from schedsim.framework import BindPlugin, QueueSortPlugin
    from schedsim_plugins.defaultbinder import DefaultBinder
    from schedsim_plugins.queuesort import PrioritySort

    _sort: QueueSortPlugin = PrioritySort({}, Handle())
    _bind: BindPlugin = DefaultBinder({}, Handle())


def gang_example_is_a_permit_plugin() -> None:
    from schedsim_gang import Gang

    from schedsim.framework import PermitPlugin
    from schedsim.framework.events import EnqueueExtensions

    gang = Gang({}, Handle())
    _permit: PermitPlugin = gang
    _events: EnqueueExtensions = gang


def gpu_sharing_policies_are_score_and_device_choice_plugins() -> None:
    from schedsim.framework import PreScorePlugin, ScorePlugin
    from schedsim.framework.plugin import DeviceChoicePlugin, ScoreExtensions
    from schedsim_gpu_sharing import BestFitScore, FGDScore, RandomScore

    fgd = FGDScore({}, Handle())
    _score: ScorePlugin = fgd
    _choice: DeviceChoicePlugin = fgd
    _normalize: ScoreExtensions = BestFitScore({}, Handle())
    _pre_score: PreScorePlugin = RandomScore({}, Handle())
