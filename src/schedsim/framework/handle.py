"""What a plugin gets at construction: feature gates and access to the snapshot of the run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import attrs

from schedsim.api.core import Pod
from schedsim.api.resource import ResourceClaim
from schedsim.framework.cycle_state import CycleState
from schedsim.framework.delegating import (
    BindableSnapshot,
    Binding,
    DelegatingCsiManager,
    DelegatingDraManager,
    DelegatingSharedLister,
    DelegatingStorageListers,
    DelegatingVolumeManager,
)
from schedsim.framework.devices import DeviceCandidate
from schedsim.framework.features import FeatureGates
from schedsim.framework.interface import NodeInfo, PodInfo
from schedsim.framework.nominator import FilterRunner, PodNominator
from schedsim.framework.object_listers import ObjectListers
from schedsim.framework.pod_index import PodIndex
from schedsim.framework.status import Status
from schedsim.framework.waiting_pods import WaitingPods

__all__ = ["FrameworkRunner", "Handle", "PluginFactory"]


class FrameworkRunner(FilterRunner, Protocol):
    """What a plugin may run through ``handle.framework`` (kube-scheduler's Handle embeds the
    framework): the PreFilter extensions and Filter, for preemption's dry runs. This is a
    Protocol: implementations don't inherit from it."""

    def run_pre_filter_extension_remove_pod(
        self,
        state: CycleState,
        pod_to_schedule: Pod,
        pod_info_to_remove: PodInfo,
        node_info: NodeInfo,
    ) -> Status:
        """RunPreFilterExtensionRemovePod."""
        ...

    @property
    def has_device_choice_plugins(self) -> bool:
        """Whether the profile has a DeviceChoice plugin (schedsim's own point)."""
        ...

    def run_device_choice_plugins(
        self,
        state: CycleState,
        pod: Pod,
        node_info: NodeInfo,
        claim: ResourceClaim,
        request: str,
        candidates: Sequence[DeviceCandidate],
    ) -> list[int] | None:
        """The DeviceChoice ranking of ``candidates`` (a permutation), or None."""
        ...

    def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> Status:
        """RunFilterPluginsWithNominatedPods (the handle's nominator)."""
        ...


@attrs.define
class Handle:
    """The framework handle (``framework.Handle`` upstream, the parts we emulate).

    A Framework is built once over a handle whose listers delegate to the snapshot bound for
    the current run (CA's delegating lister, see `schedsim.framework.delegating`): plugins keep
    the handle and read the cluster through it during hook calls only. `bind` points the
    delegates at a snapshot; `schedsim.snapshot.PredicateSnapshot` binds itself for every
    operation that runs plugins, so nothing outside ever assigns these attributes.

    Attributes:
        feature_gates: gate values for this run.
        shared_lister: the bound snapshot's NodeInfo and PVC listers (``SharedLister``).
        dra_manager: the bound snapshot's DRA objects (``SharedDRAManager``).
        csi_manager: the bound snapshot's CSINodes (``CSIManager``).
        storage_listers: the bound cluster's PVs, PVCs, StorageClasses, VolumeAttachments,
            CSIDrivers and CSIStorageCapacities (what kube-scheduler's informer listers give
            the volume plugins).
        volume_manager: the bound snapshot's PVs and PVCs with the bindings VolumeBinding made
            (kube-scheduler's PV and PVC assume caches).
        object_listers: the cluster's Namespaces, Services, ReplicationControllers,
            ReplicaSets and StatefulSets (the informer listers of PodTopologySpread and
            InterPodAffinity); set by whoever builds the framework for a cluster, empty by
            default.
        pod_index: the pods of the snapshot last seen, indexed for PodTopologySpread and
            InterPodAffinity and kept across pods (refreshed by node generation, so it
            follows whichever snapshot is bound).
        waiting_pods: the pods waiting at Permit (``IterateOverWaitingPods``,
            ``GetWaitingPod``): a Permit plugin allows or rejects other pods through it.
        nominator: the nominated pods of the run in progress (kube-scheduler's
            PodNominator); a scheduler points it at its own with `nominating`; empty
            otherwise.
        framework: the Framework built over this handle (it sets itself at construction,
            as kube-scheduler's framework is its plugins' Handle); None before.
    """

    feature_gates: FeatureGates = attrs.field(factory=FeatureGates)
    shared_lister: DelegatingSharedLister = attrs.field(
        factory=DelegatingSharedLister, init=False, repr=False
    )
    dra_manager: DelegatingDraManager = attrs.field(
        factory=DelegatingDraManager, init=False, repr=False
    )
    csi_manager: DelegatingCsiManager = attrs.field(
        factory=DelegatingCsiManager, init=False, repr=False
    )
    storage_listers: DelegatingStorageListers = attrs.field(
        factory=DelegatingStorageListers, init=False, repr=False
    )
    volume_manager: DelegatingVolumeManager = attrs.field(
        factory=DelegatingVolumeManager, init=False, repr=False
    )
    object_listers: ObjectListers = attrs.field(factory=ObjectListers, repr=False)
    pod_index: PodIndex = attrs.field(factory=PodIndex, init=False, repr=False)
    waiting_pods: WaitingPods = attrs.field(factory=WaitingPods, init=False, repr=False)
    nominator: PodNominator = attrs.field(factory=PodNominator, init=False, repr=False)
    framework: FrameworkRunner | None = attrs.field(default=None, init=False, repr=False)

    def nominating(self, nominator: PodNominator) -> _Nominating:
        """A context manager: inside the block ``self.nominator`` is ``nominator``; the
        previous one after (a class, not a generator: entered once per scheduled pod).

        Time: O(1).
        """
        return _Nominating(self, nominator)

    def bind(self, snapshot: BindableSnapshot) -> Binding:
        """A context manager during which the delegates read ``snapshot``; on exit what was
        bound before is bound again (CA ``UpdateDelegate`` / ``defer ResetDelegate``).

        Time: O(1) to enter and to leave.
        """
        return Binding(self, snapshot)


class _Nominating:
    """`Handle.nominating`'s context manager."""

    __slots__ = ("_handle", "_nominator", "_saved")

    def __init__(self, handle: Handle, nominator: PodNominator) -> None:
        self._handle = handle
        self._nominator = nominator

    def __enter__(self) -> None:
        self._saved = self._handle.nominator
        self._handle.nominator = self._nominator

    def __exit__(self, *exc: object) -> None:
        self._handle.nominator = self._saved


class PluginFactory(Protocol):
    """What an entry point in the ``schedsim.plugins`` group names: usually the plugin class.

    Called once per profile with the plugin's ``pluginConfig`` args (empty when none) and the
    handle; raises ValueError for invalid args.
    """

    def __call__(self, args: Mapping[str, Any], handle: Handle) -> Any: ...
