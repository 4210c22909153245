"""Scheduler profiles: which plugins run at each extension point, in which order, with which
args and Score weights. Built from a KubeSchedulerConfiguration by
`schedsim.framework.scheduler_config` (which documents the merge rules), or the default
profile.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from schedsim.framework.extension_points import RUN_POINTS

__all__ = [
    "DEFAULT_PLUGINS",
    "DEFAULT_WEIGHTS",
    "EXTENSION_POINTS",
    "IN_TREE_PLUGINS",
    "RUN_POINTS",
    "Profile",
    "default_profile",
    "load_scheduler_config",
    "profile_from_config",
]

DEFAULT_PLUGINS: tuple[str, ...] = (
    "SchedulingGates",
    "PrioritySort",
    "NodeUnschedulable",
    "NodeName",
    "TaintToleration",
    "NodeAffinity",
    "NodePorts",
    "NodeResourcesFit",
    "VolumeRestrictions",
    "NodeVolumeLimits",
    "VolumeBinding",
    "VolumeZone",
    "PodTopologySpread",
    "InterPodAffinity",
    "DynamicResources",
    "DefaultPreemption",
    "NodeResourcesBalancedAllocation",
    "ImageLocality",
    "DefaultBinder",
)
"""kube-scheduler 1.34's default MultiPoint plugins, in order (DynamicResources is enabled
by default since DRA is GA)."""

DEFAULT_WEIGHTS: Mapping[str, int] = {
    "TaintToleration": 3,
    "NodeAffinity": 2,
    "NodeResourcesFit": 1,
    "PodTopologySpread": 2,
    "InterPodAffinity": 2,
    "NodeResourcesBalancedAllocation": 1,
    "ImageLocality": 1,
}
"""Score weights of kube-scheduler 1.34's default MultiPoint plugins (config v1
getDefaultPlugins); a Score plugin without a weight gets 1 (getScoreWeights)."""

EXTENSION_POINTS: tuple[str, ...] = RUN_POINTS
"""The KubeSchedulerConfiguration extension points schedsim runs (alias of
`extension_points.RUN_POINTS`)."""

IN_TREE_PLUGINS: frozenset[str] = frozenset(DEFAULT_PLUGINS)
"""kube-scheduler 1.34's in-tree plugin registry (NewInTreeRegistry): the same names as the
default plugins. A profile naming one schedsim does not implement gets a "not emulated yet"
warning, never "not registered"."""


@attrs.frozen
class Profile:
    """One scheduler profile.

    Attributes:
        scheduler_name: ``schedulerName`` of the profile.
        plugins: extension point (``"preEnqueue"``, ``"preFilter"``, ``"filter"``,
            ``"postFilter"``, ``"reserve"``, ``"preBind"``) -> plugin names
            in run order; a plugin runs at a point only if it implements that hook.
        plugin_args: plugin name -> its ``pluginConfig`` args.
        explicit: names the user enabled explicitly (an unknown one is an error, while an
            unknown default plugin is only "not emulated").
        plugin_weights: Score plugin name -> its weight; a Score plugin not listed weighs 1,
            as in kube-scheduler's getScoreWeights.
        percentage_of_nodes_to_score: the profile's ``percentageOfNodesToScore`` (0-100), or
            the configuration's global one when the profile has none; ``None`` or 0 means
            kube-scheduler's adaptive default.
        enabled_at: extension point -> ``(plugin, config path)`` of each plugin enabled
            explicitly at that point (not through ``multiPoint``): such a plugin must
            implement the point, as kube-scheduler's updatePluginList requires.
        queue_sort_set: the ``plugins.queueSort`` section as written: (enabled names,
            disabled names); profiles must agree on it (validateCommonQueueSort).
        multi_point_weights: ``(plugin, config path)`` of each ``multiPoint`` entry that
            carries a weight; the weight only means something for a Score plugin.
        multi_point_enabled: ``(plugin, config path)`` of every ``multiPoint.enabled``
            entry as written (a plugin listed twice is refused at framework creation, as
            kube-scheduler's expandMultiPointPlugins does).
        config_path: where the profile came from (``"profiles[1]"``), empty for a profile
            built in code; with ``plugin_config_index`` (plugin -> ``j`` of its
            ``pluginConfig[j]``) it lets plugin args errors name their field.
    """

    scheduler_name: str = "default-scheduler"
    plugins: Mapping[str, tuple[str, ...]] = attrs.field(
        factory=lambda: {p: DEFAULT_PLUGINS for p in RUN_POINTS}
    )
    plugin_args: Mapping[str, Mapping[str, Any]] = attrs.field(factory=dict)
    explicit: frozenset[str] = frozenset()
    plugin_weights: Mapping[str, int] = attrs.field(factory=lambda: dict(DEFAULT_WEIGHTS))
    percentage_of_nodes_to_score: int | None = None
    enabled_at: Mapping[str, tuple[tuple[str, str], ...]] = attrs.field(factory=dict)
    multi_point_weights: tuple[tuple[str, str], ...] = ()
    multi_point_enabled: tuple[tuple[str, str], ...] = ()
    queue_sort_set: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
    config_path: str = ""
    plugin_config_index: Mapping[str, int] = attrs.field(factory=dict)

    def weight(self, plugin: str) -> int:
        """``plugin``'s Score weight (1 when not configured)."""
        return self.plugin_weights.get(plugin, 1)


def default_profile() -> Profile:
    """kube-scheduler's default profile."""
    return Profile()


def profile_from_config(raw: Mapping[str, Any]) -> Profile:
    """The first profile of a decoded KubeSchedulerConfiguration (see
    `scheduler_config.scheduler_configuration_from_mapping`, which this calls; its warnings
    are dropped here: use it directly to see them).

    Raises:
        FieldError: a field is malformed or unknown (the message names it).
    """
    from schedsim.framework.scheduler_config import scheduler_configuration_from_mapping

    return scheduler_configuration_from_mapping(raw).profiles[0]


def load_scheduler_config(path: str) -> Profile:
    """Read a KubeSchedulerConfiguration file and return its first profile (see
    `scheduler_config.load_scheduler_configuration` for all profiles and the warnings).

    Raises:
        ManifestError: the file is missing, not YAML, or malformed; the message is
            ``FILE: KubeSchedulerConfiguration: FIELD: problem``.
    """
    from schedsim.framework.scheduler_config import load_scheduler_configuration

    return load_scheduler_configuration(path).profiles[0]
