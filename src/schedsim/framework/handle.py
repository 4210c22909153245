"""What a plugin gets at construction: feature gates and access to the snapshot."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

import attrs

from schedsim.framework.dra_manager import SharedDraManager
from schedsim.framework.features import FeatureGates
from schedsim.framework.interface import SharedLister
from schedsim.framework.volume_listers import SharedCsiManager, StorageListers

__all__ = ["Handle", "PluginFactory"]


@attrs.define
class Handle:
    """The framework handle (``framework.Handle`` upstream, the parts we emulate).

    Attributes:
        feature_gates: gate values for this run.
        shared_lister: the snapshot, set by the snapshot that owns the framework; plugins
            read it during hook calls only.
        dra_manager: the snapshot's DRA objects (``SharedDRAManager``), set by the snapshot.
        csi_manager: the snapshot's CSINodes (``CSIManager``), set by the snapshot.
        storage_listers: the cluster's PVs, PVCs, StorageClasses and VolumeAttachments (what
            kube-scheduler's informer listers give the volume plugins); set by whoever loads
            the cluster, empty by default.
    """

    feature_gates: FeatureGates = attrs.field(factory=FeatureGates)
    shared_lister: SharedLister | None = None
    dra_manager: SharedDraManager | None = None
    csi_manager: SharedCsiManager | None = None
    storage_listers: StorageListers = attrs.field(factory=StorageListers)


class PluginFactory(Protocol):
    """What an entry point in the ``schedsim.plugins`` group names: usually the plugin class.

    Called once per profile with the plugin's ``pluginConfig`` args (empty when none) and the
    handle; raises ValueError for invalid args.
    """

    def __call__(self, args: Mapping[str, Any], handle: Handle) -> Any: ...
