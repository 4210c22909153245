"""NodeVolumeLimits: mirrors kube-scheduler 1.34's ``NodeVolumeLimits`` plugin (``CSILimits``,
pkg/scheduler/framework/plugins/nodevolumelimits/csi.go) with the csi-translation-lib rules it
relies on.

A node's CSINode says how many volumes of each CSI driver it can attach
(``spec.drivers[].allocatable.count``). Filter counts the distinct volumes (``<driver>/<volume
handle>``) that the pods on the node use, plus the VolumeAttachments on the node, plus the new
pod's volumes that are not on the node yet, per driver, and rejects the node when a driver would
go over its limit. Objects come from the handle: CSINodes from the snapshot
(``Handle.csi_manager``), PVs, PVCs, StorageClasses and VolumeAttachments from
``Handle.storage_listers`` (kube-scheduler's informers).
"""

from __future__ import annotations

import secrets
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Final
from urllib.parse import urlsplit

from schedsim.api.core import Pod, Volume
from schedsim.api.core.volumes import (
    AWS_EBS_PLUGIN,
    AZURE_DISK_PLUGIN,
    CINDER_PLUGIN,
    GCE_PD_PLUGIN,
    IN_TREE_SOURCES,
    InTreeVolumeSource,
)
from schedsim.api.labels import go_quote
from schedsim.api.storage import CSINode, PersistentVolume, PersistentVolumeClaim
from schedsim.api.storage.csi import VolumeAttachment
from schedsim.framework import Code, CycleState, Handle, NodeInfo, Status, StorageListers
from schedsim.framework.args import no_args
from schedsim.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
    as_kind,
    pod_claim_hint,
)

__all__ = [
    "ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED",
    "MIGRATED_BY_CSINODE",
    "NodeVolumeLimits",
    "TranslationError",
    "ebs_volume_id",
    "is_csi_migration_on",
    "translate_in_tree",
]

NAME = "NodeVolumeLimits"

ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED: Final = "node(s) exceed max volume count"
"""Reason when a driver would exceed its limit (``ErrReasonMaxVolumeCountExceeded``)."""

MIGRATED_BY_CSINODE: Final = frozenset(
    {AWS_EBS_PLUGIN, GCE_PD_PLUGIN, AZURE_DISK_PLUGIN, CINDER_PLUGIN}
)
"""In-tree plugins whose migration the plugin treats as on whenever the node has a CSINode
(``isCSIMigrationOn``: migration of these is GA and the annotation is not checked)."""

_IN_TREE_DRIVERS: Mapping[str, str] = {
    plugin: driver for plugin, driver, _ in IN_TREE_SOURCES.values()
}
# csi-translation-lib also knows these in-tree plugins (IsMigratableIntreePluginByName); their
# migration is never on for this plugin in 1.34 (Portworx only behind a gate and the annotation).
_OTHER_MIGRATABLE: Mapping[str, str] = {
    "kubernetes.io/azure-file": "file.csi.azure.com",
    "kubernetes.io/portworx-volume": "pxd.portworx.com",
}

_ZONE_LABEL_BETA = "failure-domain.beta.kubernetes.io/zone"
_ZONE_LABEL = "topology.kubernetes.io/zone"
_UNSPECIFIED = "UNSPECIFIED"

_CACHE_LIMIT = 1 << 16  # entries per cache before it is dropped (bounds memory in long runs)

_SKIP = Status(Code.Skip, (), NAME)
_EXCEEDED = Status(Code.Unschedulable, (ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,), NAME)


class TranslationError(ValueError):
    """csi-translation-lib cannot translate an in-tree volume (its error text)."""


class _PvcNotFoundError(Exception):
    """The new pod's PVC does not exist (an API NotFound upstream)."""


class _VolumeError(Exception):
    """Any other error of ``filterAttachableVolumes`` (an Error status upstream)."""


def is_csi_migration_on(csi_node: CSINode | None, plugin: str) -> bool:
    """Whether the node counts volumes of in-tree ``plugin`` under its CSI driver
    (``isCSIMigrationOn`` of kube-scheduler 1.34).

    False without a CSINode; True for AWS EBS, GCE PD, Azure Disk and Cinder (the
    migrated-plugins annotation is not consulted for them); False for every other plugin
    (vSphere, Azure File; Portworx needs the CSIMigrationPortworx gate and the annotation, and
    is not decoded by schedsim).
    """
    return csi_node is not None and plugin in MIGRATED_BY_CSINODE


def ebs_volume_id(kubernetes_id: str) -> str:
    """The EBS volume ID of an in-tree AWS EBS ``volumeID`` (csi-translation-lib
    ``KubernetesVolumeIDToEBSVolumeID``).

    ``aws://<zone>/<vol-id>`` and ``aws:///<vol-id>`` give ``<vol-id>``; anything not starting
    with ``aws://`` is kept as is.

    Raises:
        TranslationError: an ``aws://`` ID whose path is not ``vol-...`` without '/'.
    """
    if not kubernetes_id.startswith("aws://"):
        return kubernetes_id
    aws_id = urlsplit(kubernetes_id).path.strip("/")
    if not aws_id.startswith("vol-") or "/" in aws_id:
        raise TranslationError(f"Invalid format for AWS volume ({kubernetes_id})")
    return aws_id


def _gce_region(zones: Sequence[str]) -> str:
    regions = set()
    for zone in zones:
        parts = zone.split("-")
        if len(parts) != 3:
            raise TranslationError(
                "failed to get region from zones: zone in unexpected format, expected: "
                f"{{locale}}-{{region}}-{{zone}}, got: {zone}"
            )
        regions.add("-".join(parts[:2]))
    if len(regions) != 1:
        raise TranslationError(
            f"failed to get region from zones: multiple or no regions gotten from zones, "
            f"got: {sorted(regions)}"
        )
    return regions.pop()


def translate_in_tree(
    source: InTreeVolumeSource, pv_labels: Mapping[str, str] | None = None
) -> tuple[str, str]:
    """The CSI (driver, volume handle) of an in-tree volume, as csi-translation-lib translates it.

    Args:
        source: the in-tree source.
        pv_labels: the PV's labels when ``source`` is a PV's (GCE PD reads its zone labels);
            None for an inline pod volume.

    Returns:
        AWS EBS: the EBS volume ID (see `ebs_volume_id`); GCE PD: ``projects/UNSPECIFIED/
        zones/<zone>/disks/<pdName>`` (zone from the PV's ``failure-domain.beta`` or
        ``topology.kubernetes.io/zone`` label, ``UNSPECIFIED`` without one or inline),
        ``projects/UNSPECIFIED/regions/<region>/disks/<pdName>`` for several zones (``__``
        separated); Azure Disk: ``diskURI``; Cinder: ``volumeID``; vSphere: ``volumePath``.

    Raises:
        TranslationError: an invalid AWS volume ID, or GCE zones without one common region.
    """
    driver, vid = source.driver, source.volume_id
    if source.plugin == AWS_EBS_PLUGIN:
        try:
            return driver, ebs_volume_id(vid)
        except TranslationError as e:
            raise TranslationError(
                f"failed to translate Kubernetes ID to EBS Volume ID {e}"
            ) from None
    if source.plugin == GCE_PD_PLUGIN:
        zones_label = ""
        if pv_labels is not None:
            zones_label = pv_labels.get(_ZONE_LABEL_BETA, "") or pv_labels.get(_ZONE_LABEL, "")
        zones = zones_label.split("__")
        if len(zones) == 1 and zones[0]:
            return driver, f"projects/{_UNSPECIFIED}/zones/{zones[0]}/disks/{vid}"
        if len(zones) > 1:
            return driver, f"projects/{_UNSPECIFIED}/regions/{_gce_region(zones)}/disks/{vid}"
        return driver, f"projects/{_UNSPECIFIED}/zones/{_UNSPECIFIED}/disks/{vid}"
    return driver, vid


class NodeVolumeLimits:
    """Mirrors kube-scheduler 1.34's ``NodeVolumeLimits`` (CSI volume limits) plugin.

    PreFilter returns Skip unless the pod has a ``persistentVolumeClaim``, a generic
    ``ephemeral`` volume, or an inline in-tree volume that csi-translation-lib can migrate
    (inline ``csi``, ``configMap``, ``secret``, ``emptyDir``, ... are never counted).

    Filter, on a node:

    * Success when the pod has no volumes, no volume of it is counted, or the node's CSINode
      sets no ``allocatable.count`` (no CSINode: no limit, and no migration);
    * counts each volume as ``<driver>/<handle>``: a PVC bound to a PV gives the PV's CSI
      driver and volume handle (an in-tree PV is translated when migration is on, else not
      counted); an unbound PVC, or one whose PV is missing, gives its StorageClass's
      provisioner and a per-plugin random handle ``<prefix>-<ns>/<pvc>`` (so a PVC shared by
      pods counts once; no class or an unknown class: not counted); a generic ephemeral volume
      uses the PVC ``<pod>-<volume>``, which the pod must control; an inline in-tree volume is
      translated when migration is on;
    * the pods already on the node and the VolumeAttachments on the node (of PVs with a CSI
      source, ``<attacher>/<handle>``, not counted again when a pod there uses the volume)
      make the node's count per driver; the new pod's volumes already on the node are not new;
    * Unschedulable ``node(s) exceed max volume count`` when, for a driver with a limit,
      attached + new > ``allocatable.count``.

    Errors: the new pod's PVC missing gives UnschedulableAndUnresolvable ``looking up PVC
    <ns>/<name>: persistentvolumeclaim "<name>" not found`` (an existing pod's missing PVC is
    skipped); an ephemeral PVC the pod does not control gives Error ``PVC <ns>/<pvc> was not
    created for pod <ns>/<pod> (pod is not owner)``, and so does an inline volume that cannot
    be translated. Takes no args.
    """

    name: ClassVar[str] = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        no_args(NAME, args)
        self._handle = handle
        # rand.String(32) upstream: keeps handles of unbound PVCs apart from real ones
        self.random_volume_id_prefix = secrets.token_hex(16)
        # (id(pod), migration on, new pod) -> (pod, listers, its counted volumes): a pod's
        # volumes depend only on the (immutable) pod, the listers and whether the node has a
        # CSINode, so Filter does not redo the lookups for every pod on every node
        self._volumes_cache: dict[
            tuple[int, bool, bool], tuple[Pod, StorageListers | None, dict[str, str]]
        ] = {}
        # id(node_info) -> (node_info, generation, listers, migration on, attached, counts):
        # a NodeInfo's volumes change only with its generation (every mutation bumps it)
        self._usage_cache: dict[int, tuple[Any, ...]] = {}

    # ----------------------------------------------------------------- queueing hints

    def events_to_register(self) -> tuple[ClusterEventWithHint, ...]:
        """``EventsToRegister`` (csi.go, 1.34, SchedulerQueueingHints on): CSINode Add and
        Update and Node Add without a hint (any of them may raise a limit or bring a node
        without one), assigned-pod Delete with `is_schedulable_after_pod_deleted`,
        PersistentVolumeClaim Add with `schedsim.framework.events.pod_claim_hint`
        (``isSchedulableAfterPVCAdded``), VolumeAttachment Delete with
        `is_schedulable_after_volume_attachment_deleted`.

        Upstream registers ``Pod Delete`` and skips a deleted pod without ``spec.nodeName``;
        a pod the simulation placed keeps an empty ``spec.nodeName``, so schedsim registers
        ``AssignedPod Delete`` only (an unscheduled pod's deletion frees no attachment)."""
        return (
            ClusterEventWithHint(
                ClusterEvent(EventResource.CSINode, ActionType.Add | ActionType.Update)
            ),
            ClusterEventWithHint(ClusterEvent(EventResource.Node, ActionType.Add)),
            ClusterEventWithHint(
                ClusterEvent(EventResource.AssignedPod, ActionType.Delete),
                self.is_schedulable_after_pod_deleted,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PersistentVolumeClaim, ActionType.Add),
                pod_claim_hint,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.VolumeAttachment, ActionType.Delete),
                self.is_schedulable_after_volume_attachment_deleted,
            ),
        )

    def is_schedulable_after_pod_deleted(self, pod: Pod, old: object, new: object) -> QueueingHint:
        """``isSchedulableAfterPodDeleted``: queue when the deleted (bound) pod had a volume
        that may have counted against a limit: a PVC, a generic ephemeral volume or a
        migratable inline volume; an object of the wrong type: Queue."""
        typed = as_kind(Pod, old, new)
        if typed is None or typed[0] is None:
            return QueueingHint.Queue
        deleted = typed[0]
        assert isinstance(deleted, Pod)
        for vol in deleted.volumes:
            if vol.persistent_volume_claim is not None or vol.ephemeral or vol.in_tree is not None:
                return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_volume_attachment_deleted(
        self, pod: Pod, old: object, new: object
    ) -> QueueingHint:
        """``isSchedulableAfterVolumeAttachmentDeleted``: queue when the deleted attachment
        was of a volume like the pod's: the PV a ``persistentVolumeClaim`` of the pod is
        bound to (the claim read through the PVC lister; a missing claim matches nothing),
        or, for a migratable inline volume of the pod, an attacher equal to the CSI driver
        it translates to; an object of the wrong type: Queue.

        Raises:
            TranslationError: an inline volume that cannot be translated (upstream returns
                Queue with the error; the scheduling queue counts a raising hint as Queue).
        """
        typed = as_kind(VolumeAttachment, old, new)
        if typed is None or typed[0] is None:
            return QueueingHint.Queue
        deleted = typed[0]
        assert isinstance(deleted, VolumeAttachment)
        listers = self._handle.storage_listers
        for vol in pod.volumes:
            if vol.persistent_volume_claim is not None:
                pvc = listers.persistent_volume_claim(pod.namespace, vol.persistent_volume_claim)
                if (
                    pvc is not None
                    and deleted.persistent_volume_name is not None
                    and pvc.volume_name == deleted.persistent_volume_name
                ):
                    return QueueingHint.Queue
                continue
            if vol.in_tree is None:
                continue
            driver, _ = translate_in_tree(vol.in_tree)
            if driver == deleted.attacher:
                return QueueingHint.Queue
        return QueueingHint.QueueSkip

    # ----------------------------------------------------------------- extension points

    def pre_filter_reusable(self, pod: Pod) -> bool:
        """PreFilter reads the pod's volumes only and writes nothing
        (`schedsim.framework.pre_filter_reuse`)."""
        del pod
        return True

    def schedsim_pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None:
        """PreFilter of upstream CSILimits: Skip unless a volume may be counted."""
        for vol in pod.volumes:
            if vol.persistent_volume_claim is not None or vol.ephemeral or vol.in_tree is not None:
                return None
        return _SKIP

    def schedsim_filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Filter of upstream CSILimits (see the class docstring)."""
        node = node_info.node
        if not pod.volumes or node is None:
            return None
        manager = self._handle.csi_manager
        csi_node = manager.get_csi_node(node.name) if manager is not None else None
        try:
            new_volumes = dict(self._pod_volumes(pod, csi_node, True))
        except _PvcNotFoundError as e:
            return Status(Code.UnschedulableAndUnresolvable, (str(e),), NAME)
        except _VolumeError as e:
            return Status(Code.Error, (str(e),), NAME)
        if not new_volumes:
            return None
        limits = csi_node.volume_limits() if csi_node is not None else {}
        if not limits:
            return None
        try:
            attached, attached_count = self._node_usage(node_info, node.name, csi_node)
        except _VolumeError as e:
            return Status(Code.Error, (str(e),), NAME)
        for unique_name in attached:
            new_volumes.pop(unique_name, None)  # a volume on the node is not new
        new_count = Counter(new_volumes.values())
        for driver, count in new_count.items():
            limit = limits.get(driver)
            if limit is not None and attached_count[driver] + count > limit:
                return _EXCEEDED
        return None

    # ----------------------------------------------------------------- counting

    def _pod_volumes(self, pod: Pod, csi_node: CSINode | None, new_pod: bool) -> dict[str, str]:
        """`_attachable_volumes` of ``pod``, cached (read-only result; errors are not cached)
        per bound storage listers."""
        listers = self._handle.storage_listers.delegate
        key = (id(pod), csi_node is not None, new_pod)
        hit = self._volumes_cache.get(key)
        if hit is not None and hit[0] is pod and hit[1] is listers:
            return hit[2]
        result: dict[str, str] = {}
        self._attachable_volumes(pod, csi_node, new_pod, result)
        if len(self._volumes_cache) >= _CACHE_LIMIT:
            self._volumes_cache.clear()
        self._volumes_cache[key] = (pod, listers, result)
        return result

    def _node_usage(
        self, node_info: NodeInfo, node_name: str, csi_node: CSINode | None
    ) -> tuple[Mapping[str, str], Mapping[str, int]]:
        """The volumes of the pods on the node (``<driver>/<handle>`` -> driver) and the
        attached count per driver, VolumeAttachments included; cached per NodeInfo generation.

        Raises:
            _VolumeError: a pod on the node has a volume that cannot be counted.
        """
        listers = self._handle.storage_listers.delegate  # the cache is per bound cluster
        migration = csi_node is not None
        hit = self._usage_cache.get(id(node_info))
        if (
            hit is not None
            and hit[0] is node_info
            and hit[1] == node_info.generation
            and hit[2] is listers
            and hit[3] == migration
        ):
            return hit[4], hit[5]
        attached: dict[str, str] = {}
        for pod_info in node_info.pods:
            attached.update(self._pod_volumes(pod_info.pod, csi_node, False))
        counts: Counter[str] = Counter(attached.values())
        for unique_name, driver in self._volume_attachments(node_name).items():
            if unique_name not in attached:  # not de-duplicated against the new pod's
                counts[driver] += 1
        if len(self._usage_cache) >= _CACHE_LIMIT:
            self._usage_cache.clear()
        self._usage_cache[id(node_info)] = (
            node_info,
            node_info.generation,
            listers,
            migration,
            attached,
            counts,
        )
        return attached, counts

    def _attachable_volumes(
        self, pod: Pod, csi_node: CSINode | None, new_pod: bool, result: dict[str, str]
    ) -> None:
        """``filterAttachableVolumes``: add ``<driver>/<handle>`` -> driver for each counted
        volume of ``pod`` to ``result``."""
        listers = self._handle.storage_listers
        for vol in pod.volumes:
            if vol.persistent_volume_claim is not None:
                pvc_name = vol.persistent_volume_claim
                ephemeral = False
            elif vol.ephemeral:
                pvc_name = f"{pod.name}-{vol.name}"  # ephemeral.VolumeClaimName
                ephemeral = True
            else:
                self._inline_volume(vol, csi_node, result)
                continue
            pvc = listers.persistent_volume_claim(pod.namespace, pvc_name)
            if pvc is None:
                if new_pod:
                    raise _PvcNotFoundError(
                        f"looking up PVC {pod.namespace}/{pvc_name}: "
                        f"persistentvolumeclaim {go_quote(pvc_name)} not found"
                    )
                continue
            if ephemeral and not pvc.is_controlled_by(pod.uid):  # ephemeral.VolumeIsForPod
                raise _VolumeError(
                    f"PVC {pvc.namespace}/{pvc.name} was not created for pod "
                    f"{pod.namespace}/{pod.name} (pod is not owner)"
                )
            driver, handle = self._csi_driver_info(csi_node, pvc)
            if driver and handle:
                result[f"{driver}/{handle}"] = driver

    def _inline_volume(self, vol: Volume, csi_node: CSINode | None, result: dict[str, str]) -> None:
        """``checkAttachableInlineVolume``: count a migratable inline in-tree volume."""
        source = vol.in_tree
        if source is None or not is_csi_migration_on(csi_node, source.plugin):
            return
        try:
            driver, handle = translate_in_tree(source)
        except TranslationError as e:
            raise _VolumeError(f"converting volume({vol.name}) from inline to csi: {e}") from None
        result[f"{driver}/{handle}"] = driver

    def _csi_driver_info(
        self, csi_node: CSINode | None, pvc: PersistentVolumeClaim
    ) -> tuple[str, str]:
        """``getCSIDriverInfo``: the driver and handle of a PVC's volume, ("", "") if none."""
        if not pvc.volume_name:
            return self._csi_driver_info_from_sc(csi_node, pvc)
        pv = self._handle.storage_listers.persistent_volume(pvc.volume_name)
        if pv is None:
            return self._csi_driver_info_from_sc(csi_node, pvc)
        return _pv_driver_info(csi_node, pv)

    def _csi_driver_info_from_sc(
        self, csi_node: CSINode | None, pvc: PersistentVolumeClaim
    ) -> tuple[str, str]:
        """``getCSIDriverInfoFromSC``: the class's provisioner and a per-PVC random handle."""
        class_name = pvc.storage_class
        if not class_name:
            return "", ""
        storage_class = self._handle.storage_listers.storage_class(class_name)
        if storage_class is None:
            return "", ""
        handle = f"{self.random_volume_id_prefix}-{pvc.namespace}/{pvc.name}"
        provisioner = storage_class.provisioner
        driver = _IN_TREE_DRIVERS.get(provisioner) or _OTHER_MIGRATABLE.get(provisioner)
        if driver is not None:  # an in-tree provisioner
            if not is_csi_migration_on(csi_node, provisioner):
                return "", ""
            return driver, handle
        return provisioner, handle

    def _volume_attachments(self, node_name: str) -> dict[str, str]:
        """``getNodeVolumeAttachmentInfo``: ``<attacher>/<handle>`` -> attacher for the node's
        VolumeAttachments of existing PVs with a CSI source."""
        listers = self._handle.storage_listers
        out: dict[str, str] = {}
        for va in listers.volume_attachments_on(node_name):
            if not va.attacher or va.persistent_volume_name is None:
                continue
            pv = listers.persistent_volume(va.persistent_volume_name)
            if pv is None or pv.csi is None:
                continue
            out[f"{va.attacher}/{pv.csi.volume_handle}"] = va.attacher
        return out


def _pv_driver_info(csi_node: CSINode | None, pv: PersistentVolume) -> tuple[str, str]:
    """The driver and handle of a bound PV: its CSI source, or its in-tree source translated
    when migration is on; ("", "") otherwise (also when translation fails)."""
    if pv.csi is not None:
        return pv.csi.driver, pv.csi.volume_handle
    source = pv.in_tree
    if source is None or not is_csi_migration_on(csi_node, source.plugin):
        return "", ""
    try:
        return translate_in_tree(source, pv.labels)
    except TranslationError:
        return "", ""
