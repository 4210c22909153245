"""Storage object validation as the API server does it, for what the volume plugins read.

Mirrors ``pkg/apis/core/validation`` ``ValidatePersistentVolumeSpec`` (a PersistentVolume
names exactly one volume source: ``must specify a volume type``); the 1.34 OpenAPI schema of
``storage.k8s.io/v1`` CSINode marks ``spec`` and ``spec.drivers`` required, which is warned
about. Names are DNS subdomains (``ValidateObjectMeta``). Not checked: a claim's
``spec.resources.requests.storage`` (``ValidatePersistentVolumeClaimSpec`` requires it;
schedsim does not read it, and Kubernetes' own scheduler tests leave it out).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from schedsim.api.validation.common import Problems

__all__ = ["PV_SOURCES", "validate_csi_node", "validate_pv"]

PV_SOURCES: Final = (
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "hostPath",
    "glusterfs",
    "nfs",
    "rbd",
    "quobyte",
    "iscsi",
    "cinder",
    "cephfs",
    "fc",
    "flocker",
    "flexVolume",
    "azureFile",
    "vsphereVolume",
    "azureDisk",
    "photonPersistentDisk",
    "portworxVolume",
    "scaleIO",
    "local",
    "storageos",
    "csi",
)
"""core/v1 PersistentVolumeSource's members: a PersistentVolume sets exactly one."""


def validate_pv(obj: Mapping[str, Any], out: Problems) -> None:
    """A PersistentVolume names a volume source (the decoder refuses two)."""
    spec = obj.get("spec")
    spec = spec if isinstance(spec, Mapping) else {}
    if not any(spec.get(s) is not None for s in PV_SOURCES):
        out.error("spec", "required: must specify a volume type")


def validate_csi_node(obj: Mapping[str, Any], out: Problems) -> None:
    """A CSINode without ``spec`` (or ``spec.drivers``) is warned about: the schema marks
    them required, ``ValidateCSINode`` itself does not refuse their absence, and the node
    is read as having no CSI drivers (hence no volume limits)."""
    spec = obj.get("spec")
    if not isinstance(spec, Mapping):
        out.warn("spec", _NO_DRIVERS.format("spec"))
    elif spec.get("drivers") is None:
        out.warn("spec.drivers", _NO_DRIVERS.format("spec.drivers"))


_NO_DRIVERS: Final = (
    "required by the 1.34 schema ({} is absent); read as a node without CSI drivers"
)
