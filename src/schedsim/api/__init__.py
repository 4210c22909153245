"""Kubernetes objects schedsim reads (core/v1 now; DRA and storage kinds later), exact
quantities, and manifest loading."""

from schedsim.api.core import (
    Affinity,
    Container,
    ContainerPort,
    Node,
    NodeAffinity,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PodResourceClaim,
    ResourceList,
    Taint,
    Toleration,
    Volume,
)
from schedsim.api.errors import FieldError, ManifestError
from schedsim.api.labels import LabelSelector
from schedsim.api.loader import Manifests, decode_objects, load_paths

__all__ = [
    "Affinity",
    "Container",
    "ContainerPort",
    "FieldError",
    "LabelSelector",
    "ManifestError",
    "Manifests",
    "Node",
    "NodeAffinity",
    "NodeSelectorRequirement",
    "NodeSelectorTerm",
    "Pod",
    "PodResourceClaim",
    "ResourceList",
    "Taint",
    "Toleration",
    "Volume",
    "decode_objects",
    "load_paths",
]
