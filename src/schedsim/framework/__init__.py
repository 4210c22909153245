"""The scheduler framework: protocols plugins program against, extension-point hook specs,
Status/Code, CycleState, profiles and the runtime that runs them."""

from schedsim.framework.cycle_state import CycleState, StateKey
from schedsim.framework.extension_points import EXTENSION_POINTS, RUN_POINTS, ExtensionPoint
from schedsim.framework.features import DEFAULT_FEATURE_GATES, FeatureGates
from schedsim.framework.fit_error import Diagnosis, FitError
from schedsim.framework.handle import Handle, PluginFactory
from schedsim.framework.hookspec import PreFilterResult, hookimpl
from schedsim.framework.interface import (
    NodeInfo,
    NodeInfoLister,
    PodInfo,
    SharedLister,
    StorageInfoLister,
)
from schedsim.framework.object_listers import ObjectListers
from schedsim.framework.plugin import (
    FilterPlugin,
    Plugin,
    PostFilterPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreScorePlugin,
    ReservePlugin,
    ScoreExtensions,
    ScorePlugin,
)
from schedsim.framework.profile import (
    DEFAULT_PLUGINS,
    DEFAULT_WEIGHTS,
    Profile,
    default_profile,
    load_scheduler_config,
    profile_from_config,
)
from schedsim.framework.resource import PodResource, Resource
from schedsim.framework.runtime import (
    ENTRY_POINT_GROUP,
    Framework,
    PluginError,
    PluginTimings,
    discover_plugins,
    load_plugin_spec,
    plugin_sources,
)
from schedsim.framework.scheduler_config import (
    SchedulerConfiguration,
    load_scheduler_configuration,
    scheduler_configuration_from_mapping,
)
from schedsim.framework.scores import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    NodePluginScores,
    PluginScore,
)
from schedsim.framework.status import SUCCESS, Code, Status
from schedsim.framework.types import (
    AffinityTerm,
    HostPortInfo,
    ImageStateSummary,
    WeightedAffinityTerm,
)
from schedsim.framework.volume_listers import (
    SharedCsiManager,
    SharedVolumeManager,
    StorageListers,
    VolumeState,
)

__all__ = [
    "DEFAULT_FEATURE_GATES",
    "DEFAULT_PLUGINS",
    "DEFAULT_WEIGHTS",
    "ENTRY_POINT_GROUP",
    "EXTENSION_POINTS",
    "MAX_NODE_SCORE",
    "MIN_NODE_SCORE",
    "RUN_POINTS",
    "SUCCESS",
    "AffinityTerm",
    "Code",
    "CycleState",
    "Diagnosis",
    "ExtensionPoint",
    "FeatureGates",
    "FilterPlugin",
    "FitError",
    "Framework",
    "Handle",
    "HostPortInfo",
    "ImageStateSummary",
    "NodeInfo",
    "NodeInfoLister",
    "NodePluginScores",
    "ObjectListers",
    "Plugin",
    "PluginError",
    "PluginFactory",
    "PluginScore",
    "PluginTimings",
    "PodInfo",
    "PodResource",
    "PostFilterPlugin",
    "PreBindPlugin",
    "PreEnqueuePlugin",
    "PreFilterExtensions",
    "PreFilterPlugin",
    "PreFilterResult",
    "PreScorePlugin",
    "Profile",
    "ReservePlugin",
    "Resource",
    "SchedulerConfiguration",
    "ScoreExtensions",
    "ScorePlugin",
    "SharedCsiManager",
    "SharedLister",
    "SharedVolumeManager",
    "StateKey",
    "Status",
    "StorageInfoLister",
    "StorageListers",
    "VolumeState",
    "WeightedAffinityTerm",
    "default_profile",
    "discover_plugins",
    "hookimpl",
    "load_plugin_spec",
    "load_scheduler_config",
    "load_scheduler_configuration",
    "plugin_sources",
    "profile_from_config",
    "scheduler_configuration_from_mapping",
]
