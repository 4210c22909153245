"""What a plugin gets at construction: feature gates and access to the snapshot."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

import attrs

from schedsim.framework.features import FeatureGates
from schedsim.framework.interface import SharedLister

__all__ = ["Handle", "PluginFactory"]


@attrs.define
class Handle:
    """The framework handle (``framework.Handle`` upstream, the parts we emulate).

    Attributes:
        feature_gates: gate values for this run.
        shared_lister: the snapshot, set by the snapshot that owns the framework; plugins
            read it during hook calls only.
    """

    feature_gates: FeatureGates = attrs.field(factory=FeatureGates)
    shared_lister: SharedLister | None = None


class PluginFactory(Protocol):
    """What an entry point in the ``schedsim.plugins`` group names: usually the plugin class.

    Called once per profile with the plugin's ``pluginConfig`` args (empty when none) and the
    handle; raises ValueError for invalid args.
    """

    def __call__(self, args: Mapping[str, Any], handle: Handle) -> Any: ...
