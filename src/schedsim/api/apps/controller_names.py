"""Names, hashes and labels of the pods workload controllers create (the part of
`schedsim.api.apps.controllers` both its expansion and `schedsim.api.apps.daemonset_pods` use):
``controller.ComputeHash``, ``getPodsPrefix`` and the labels the controllers set."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from schedsim.api.loading.defaults import safe_encode_string

__all__ = [
    "CONTROLLER_REVISION_HASH_LABEL",
    "JOB_COMPLETION_INDEX",
    "POD_INDEX_LABEL",
    "POD_TEMPLATE_HASH_LABEL",
    "REVISION_ANNOTATION",
    "STATEFUL_SET_POD_NAME_LABEL",
    "compute_hash",
    "fnv32a",
    "pods_prefix",
]

POD_TEMPLATE_HASH_LABEL: Final = "pod-template-hash"
"""``apps.DefaultDeploymentUniqueLabelKey``."""

REVISION_ANNOTATION: Final = "deployment.kubernetes.io/revision"
STATEFUL_SET_POD_NAME_LABEL: Final = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL: Final = "apps.kubernetes.io/pod-index"
CONTROLLER_REVISION_HASH_LABEL: Final = "controller-revision-hash"
JOB_COMPLETION_INDEX: Final = "batch.kubernetes.io/job-completion-index"


def fnv32a(data: bytes) -> int:
    """The 32-bit FNV-1a hash (Go ``hash/fnv.New32a``) of ``data``."""
    h = 0x811C9DC5
    for b in data:
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def compute_hash(template: Mapping[str, Any], collision_count: int | None = None) -> str:
    """A pod template's hash, as ``controller.ComputeHash`` builds it: fnv32a over the
    template (here its canonical JSON; Go hashes the typed struct), plus the collision count
    when given, decimal-printed and passed through `safe_encode_string`.

    Args:
        template: the pod template as written (metadata and spec).
        collision_count: ``status.collisionCount``, or None.

    Returns:
        the hash, e.g. ``"5d8f7c9b4"`` (up to 10 characters).
    """
    data = json.dumps(template, sort_keys=True, separators=(",", ":"), default=str).encode()
    h = fnv32a(data)
    if collision_count is not None:
        h = fnv32a(data + collision_count.to_bytes(4, "little"))
    return safe_encode_string(str(h))


def pods_prefix(controller_name: str) -> str:
    """``getPodsPrefix``: ``<name>-`` (the generateName of a controller's pods)."""
    return f"{controller_name}-"
