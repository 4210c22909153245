"""Storage objects the scheduler's volume plugins read: CSINode, CSIDriver,
CSIStorageCapacity, StorageClass and VolumeAttachment (``storage.k8s.io/v1``),
PersistentVolume and PersistentVolumeClaim
(``core/v1``).

Only the fields volume scheduling depends on are decoded; the rest is ignored like any unknown
field. Decoding applies the parts of the API server's defaulting and validation that matter
here: a StorageClass's ``volumeBindingMode`` defaults to ``Immediate`` and must be
``Immediate`` or ``WaitForFirstConsumer``; a CSINode driver's ``allocatable.count`` must not be
negative; names, drivers, provisioners, attachers and nodes are required where the API requires
them.

The API server's DefaultStorageClass admission (a claim without a class gets the default
StorageClass) is applied to the claims once every input is read: `storage_admission`.

Objects are immutable (`attrs.frozen`). Decoders raise `FieldError` naming the field; the loader
turns it into ``FILE: KIND NS/NAME: FIELD: problem``.

The kinds live in one module per concept (`storage_csi`, `storage_class`, `storage_pv`, with
the shared annotations, modes and helpers in `storage_fields`); this module is their public
face and re-exports them, so ``from schedsim.api.storage import PersistentVolume`` keeps
working.
"""

from __future__ import annotations

from schedsim.api.storage.csi import (
    CSIDriver,
    CSINode,
    CSINodeDriver,
    CSIStorageCapacity,
    VolumeAttachment,
)
from schedsim.api.storage.fields import (
    ACCESS_MODES,
    BETA_IS_DEFAULT_CLASS_ANNOTATION,
    BETA_STORAGE_CLASS_ANNOTATION,
    BIND_COMPLETED_ANNOTATION,
    BOUND_BY_CONTROLLER_ANNOTATION,
    IS_DEFAULT_CLASS_ANNOTATION,
    MIGRATED_PLUGINS_ANNOTATION,
    NOT_SUPPORTED_PROVISIONER,
    SELECTED_NODE_ANNOTATION,
    VOLUME_BINDING_MODES,
    VOLUME_MODES,
)
from schedsim.api.storage.pv import ClaimReference, PersistentVolume, PersistentVolumeClaim
from schedsim.api.storage.storage_class import StorageClass, TopologySelectorTerm

__all__ = [
    "ACCESS_MODES",
    "BETA_IS_DEFAULT_CLASS_ANNOTATION",
    "BETA_STORAGE_CLASS_ANNOTATION",
    "BIND_COMPLETED_ANNOTATION",
    "BOUND_BY_CONTROLLER_ANNOTATION",
    "IS_DEFAULT_CLASS_ANNOTATION",
    "MIGRATED_PLUGINS_ANNOTATION",
    "NOT_SUPPORTED_PROVISIONER",
    "SELECTED_NODE_ANNOTATION",
    "VOLUME_BINDING_MODES",
    "VOLUME_MODES",
    "CSIDriver",
    "CSINode",
    "CSINodeDriver",
    "CSIStorageCapacity",
    "ClaimReference",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "StorageClass",
    "TopologySelectorTerm",
    "VolumeAttachment",
]
