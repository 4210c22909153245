"""The scheduler framework: protocols plugins program against, extension-point hook specs,
Status/Code, CycleState, profiles and the runtime that runs them."""

from schedsim.framework.cycle_state import CycleState, StateKey
from schedsim.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from schedsim.framework.extension_points import EXTENSION_POINTS, RUN_POINTS, ExtensionPoint
from schedsim.framework.features import DEFAULT_FEATURE_GATES, FeatureGates
from schedsim.framework.fit_error import Diagnosis, FitError
from schedsim.framework.handle import Handle, PluginFactory
from schedsim.framework.hookspec import PostFilterResult, PreFilterResult, hookimpl
from schedsim.framework.interface import (
    NodeInfo,
    NodeInfoLister,
    PodInfo,
    SharedLister,
    StorageInfoLister,
)
from schedsim.framework.object_listers import ObjectListers
from schedsim.framework.plugin import (
    BindPlugin,
    FilterPlugin,
    PermitPlugin,
    Plugin,
    PostBindPlugin,
    PostFilterPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreScorePlugin,
    QueueSortPlugin,
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
from schedsim.framework.queued_pod_info import QueuedPodInfo
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
from schedsim.framework.waiting_pods import WaitingPod

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
    "ActionType",
    "AffinityTerm",
    "BindPlugin",
    "ClusterEvent",
    "ClusterEventWithHint",
    "Code",
    "CycleState",
    "Diagnosis",
    "EventResource",
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
    "PermitPlugin",
    "Plugin",
    "PluginError",
    "PluginFactory",
    "PluginScore",
    "PluginTimings",
    "PodInfo",
    "PodResource",
    "PostBindPlugin",
    "PostFilterPlugin",
    "PostFilterResult",
    "PreBindPlugin",
    "PreEnqueuePlugin",
    "PreFilterExtensions",
    "PreFilterPlugin",
    "PreFilterResult",
    "PreScorePlugin",
    "Profile",
    "QueueSortPlugin",
    "QueuedPodInfo",
    "QueueingHint",
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
    "WaitingPod",
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
