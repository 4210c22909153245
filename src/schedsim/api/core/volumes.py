"""Volume sources shared by Pod volumes and PersistentVolumes: CSI and the in-tree block-storage
plugins whose volumes migrate to CSI drivers.

core/v1 spells each in-tree source as its own field (``awsElasticBlockStore``,
``gcePersistentDisk``, ``azureDisk``, ``cinder``, ``vsphereVolume``); here each decodes to one
`InTreeVolumeSource` carrying the in-tree plugin name and the field that identifies the disk,
which is all the scheduler's NodeVolumeLimits plugin reads (through csi-translation-lib) to
count attachments. The plugin-name and CSI-driver constants are csi-translation-lib's.

Decoders raise `FieldError` naming the field, for what the API server's validation rejects
(a missing disk identifier, two volume types in one volume).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import attrs

from schedsim.api.errors import FieldError
from schedsim.api.loading import decode as d

__all__ = [
    "AWS_EBS_DRIVER",
    "AWS_EBS_PLUGIN",
    "AZURE_DISK_DRIVER",
    "AZURE_DISK_PLUGIN",
    "CINDER_DRIVER",
    "CINDER_PLUGIN",
    "GCE_PD_DRIVER",
    "GCE_PD_PLUGIN",
    "IN_TREE_SOURCES",
    "VSPHERE_DRIVER",
    "VSPHERE_PLUGIN",
    "CSIPersistentVolumeSource",
    "CSIVolumeSource",
    "InTreeVolumeSource",
    "decode_csi_persistent_source",
    "decode_in_tree_source",
    "decode_inline_csi_source",
]

AWS_EBS_PLUGIN: Final = "kubernetes.io/aws-ebs"
"""In-tree plugin name of AWS EBS (csi-translation-lib ``AWSEBSInTreePluginName``)."""
AWS_EBS_DRIVER: Final = "ebs.csi.aws.com"
"""CSI driver AWS EBS volumes migrate to (``AWSEBSDriverName``)."""
GCE_PD_PLUGIN: Final = "kubernetes.io/gce-pd"
"""In-tree plugin name of GCE PD (``GCEPDInTreePluginName``)."""
GCE_PD_DRIVER: Final = "pd.csi.storage.gke.io"
"""CSI driver GCE PD volumes migrate to (``GCEPDDriverName``)."""
AZURE_DISK_PLUGIN: Final = "kubernetes.io/azure-disk"
"""In-tree plugin name of Azure Disk (``AzureDiskInTreePluginName``)."""
AZURE_DISK_DRIVER: Final = "disk.csi.azure.com"
"""CSI driver Azure Disk volumes migrate to (``AzureDiskDriverName``)."""
CINDER_PLUGIN: Final = "kubernetes.io/cinder"
"""In-tree plugin name of OpenStack Cinder (``CinderInTreePluginName``)."""
CINDER_DRIVER: Final = "cinder.csi.openstack.org"
"""CSI driver Cinder volumes migrate to (``CinderDriverName``)."""
VSPHERE_PLUGIN: Final = "kubernetes.io/vsphere-volume"
"""In-tree plugin name of vSphere volumes (``VSphereInTreePluginName``)."""
VSPHERE_DRIVER: Final = "csi.vsphere.vmware.com"
"""CSI driver vSphere volumes migrate to (``VSphereDriverName``)."""

IN_TREE_SOURCES: Mapping[str, tuple[str, str, str]] = {
    "awsElasticBlockStore": (AWS_EBS_PLUGIN, AWS_EBS_DRIVER, "volumeID"),
    "gcePersistentDisk": (GCE_PD_PLUGIN, GCE_PD_DRIVER, "pdName"),
    "azureDisk": (AZURE_DISK_PLUGIN, AZURE_DISK_DRIVER, "diskURI"),
    "cinder": (CINDER_PLUGIN, CINDER_DRIVER, "volumeID"),
    "vsphereVolume": (VSPHERE_PLUGIN, VSPHERE_DRIVER, "volumePath"),
}
"""Volume-source field -> (in-tree plugin name, CSI driver name, identifying field)."""


@attrs.frozen
class InTreeVolumeSource:
    """An in-tree block volume that csi-translation-lib can migrate to a CSI driver.

    Attributes:
        field: the source's field name in the manifest (``awsElasticBlockStore``, ...).
        plugin: the in-tree plugin name (``kubernetes.io/aws-ebs``, ...).
        driver: the CSI driver it migrates to (``ebs.csi.aws.com``, ...).
        volume_id: what identifies the disk: AWS EBS and Cinder ``volumeID``, GCE PD
            ``pdName``, Azure Disk ``diskURI``, vSphere ``volumePath``.
        disk_name: Azure Disk ``diskName`` (empty for the others).
    """

    field: str
    plugin: str
    driver: str
    volume_id: str
    disk_name: str = ""


@attrs.frozen
class CSIVolumeSource:
    """``volumes[].csi`` of a Pod: a CSI ephemeral inline volume.

    Attributes:
        driver: the CSI driver name.
        volume_attributes: driver-specific attributes.
    """

    driver: str
    volume_attributes: Mapping[str, str] = attrs.field(factory=dict)


@attrs.frozen
class CSIPersistentVolumeSource:
    """``spec.csi`` of a PersistentVolume.

    Attributes:
        driver: the CSI driver name.
        volume_handle: the driver's ID of the volume.
    """

    driver: str
    volume_handle: str


def _required_str(raw: Mapping[str, Any], key: str, path: str) -> str:
    value = d.get_str(raw, key, path)
    if not value:
        raise FieldError(d.join(path, key), "required")
    return value


def decode_in_tree_source(raw: Mapping[str, Any], path: str) -> InTreeVolumeSource | None:
    """Decode the migratable in-tree source of a volume or PV spec, if it has one.

    Args:
        raw: the volume (``spec.volumes[i]``) or the PV ``spec``.
        path: the field path of ``raw``, for messages.

    Returns:
        the source, or None when ``raw`` has none of the five in-tree fields.

    Raises:
        FieldError: the identifying field is missing or empty (the API server requires it;
            Azure Disk requires ``diskName`` too), or two in-tree fields are set.
    """
    found: InTreeVolumeSource | None = None
    for field, (plugin, driver, key) in IN_TREE_SOURCES.items():
        if raw.get(field) is None:
            continue
        fp = d.join(path, field)
        if found is not None:
            raise FieldError(fp, "may not specify more than 1 volume type")
        src = d.get_map(raw, field, path)
        volume_id = _required_str(src, key, fp)
        disk_name = _required_str(src, "diskName", fp) if field == "azureDisk" else ""
        found = InTreeVolumeSource(field, plugin, driver, volume_id, disk_name)
    return found


def decode_inline_csi_source(raw: Mapping[str, Any], path: str) -> CSIVolumeSource | None:
    """Decode ``volumes[i].csi`` (None when absent); raises FieldError without a driver."""
    if raw.get("csi") is None:
        return None
    p = d.join(path, "csi")
    src = d.get_map(raw, "csi", path)
    return CSIVolumeSource(
        driver=_required_str(src, "driver", p),
        volume_attributes=d.get_str_map(src, "volumeAttributes", p),
    )


def decode_csi_persistent_source(
    raw: Mapping[str, Any], path: str
) -> CSIPersistentVolumeSource | None:
    """Decode a PV's ``spec.csi`` (None when absent).

    Raises:
        FieldError: ``driver`` or ``volumeHandle`` is missing or empty (both required).
    """
    if raw.get("csi") is None:
        return None
    p = d.join(path, "csi")
    src = d.get_map(raw, "csi", path)
    return CSIPersistentVolumeSource(
        driver=_required_str(src, "driver", p),
        volume_handle=_required_str(src, "volumeHandle", p),
    )
