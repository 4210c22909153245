"""The storage vocabulary the storage kinds share: well-known annotations (bind-completed,
selected-node, the beta storage-class annotation, the default-class annotations, migrated
plugins), the valid binding,
access and volume modes, the served apiVersion, and two decoding helpers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from schedsim.api.errors import FieldError
from schedsim.api.loading import decode as d

MIGRATED_PLUGINS_ANNOTATION: Final = "storage.alpha.kubernetes.io/migrated-plugins"
"""CSINode annotation listing the in-tree plugins migrated on the node, comma separated
(``v1.MigratedPluginsAnnotationKey``)."""

BETA_STORAGE_CLASS_ANNOTATION: Final = "volume.beta.kubernetes.io/storage-class"
"""PVC annotation that wins over ``spec.storageClassName`` (``v1.BetaStorageClassAnnotation``)."""

IS_DEFAULT_CLASS_ANNOTATION: Final = "storageclass.kubernetes.io/is-default-class"
"""StorageClass annotation: ``"true"`` marks the cluster's default class
(``IsDefaultStorageClassAnnotation``)."""

BETA_IS_DEFAULT_CLASS_ANNOTATION: Final = "storageclass.beta.kubernetes.io/is-default-class"
"""The beta form of `IS_DEFAULT_CLASS_ANNOTATION`, still honoured
(``BetaIsDefaultStorageClassAnnotation``)."""

VOLUME_BINDING_MODES: Final = frozenset({"Immediate", "WaitForFirstConsumer"})
"""Valid StorageClass ``volumeBindingMode`` values."""

ACCESS_MODES: Final = frozenset(
    {"ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"}
)
"""Valid PV and PVC ``accessModes`` values."""

VOLUME_MODES: Final = frozenset({"Filesystem", "Block"})
"""Valid PV and PVC ``volumeMode`` values (unset means ``Filesystem``)."""

BIND_COMPLETED_ANNOTATION: Final = "pv.kubernetes.io/bind-completed"
"""PVC annotation the PV controller sets once a claim is fully bound (``AnnBindCompleted``)."""

BOUND_BY_CONTROLLER_ANNOTATION: Final = "pv.kubernetes.io/bound-by-controller"
"""PV/PVC annotation: the binding was made by the controller (``AnnBoundByController``)."""

SELECTED_NODE_ANNOTATION: Final = "volume.kubernetes.io/selected-node"
"""PVC annotation naming the node a WaitForFirstConsumer claim is provisioned for
(``AnnSelectedNode``); the scheduler sets it when it chooses dynamic provisioning."""

NOT_SUPPORTED_PROVISIONER: Final = "kubernetes.io/no-provisioner"
"""The provisioner of classes without dynamic provisioning (``NotSupportedProvisioner``)."""


# apiVersions served in 1.34: storage.k8s.io/v1beta1 of CSINode, StorageClass and
# VolumeAttachment is no longer served since 1.22 (deprecation guide); PV and PVC are core/v1.
STORAGE_V1: Final = ("storage.k8s.io/v1",)


def metadata_name(meta: Mapping[str, Any]) -> str:
    """``metadata.name``, required; raises FieldError."""
    name = d.get_str(meta, "name", "metadata")
    if not name:
        raise FieldError("metadata.name", "required")
    return name


def required_str(raw: Mapping[str, Any], key: str, path: str) -> str:
    """``raw[key]`` as a non-empty string; raises FieldError (``required``) otherwise."""
    value = d.get_str(raw, key, path)
    if not value:
        raise FieldError(d.join(path, key), "required")
    return value
