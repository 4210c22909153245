"""The scheduler's integer resource vector (``framework.Resource``) and ``PodResource``."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

import attrs

from schedsim.api.quantity import milli_value, value
from schedsim.api.resources import is_scalar_resource_name

__all__ = ["PodResource", "Resource"]


@attrs.define(slots=True)
class Resource:
    """Resources in the scheduler's units.

    Mirrors kube-scheduler ``framework.Resource``.

    Attributes:
        milli_cpu: CPU in milli-cores.
        memory: bytes.
        ephemeral_storage: bytes.
        allowed_pod_number: pod count (from ``pods``).
        scalar_resources: extended, hugepages-*, ``*kubernetes.io/*`` and attachable-volume
            resources, by name, in their integer units.
    """

    milli_cpu: int = 0
    memory: int = 0
    ephemeral_storage: int = 0
    allowed_pod_number: int = 0
    scalar_resources: dict[str, int] = attrs.field(factory=dict)

    @classmethod
    def from_resource_list(cls, rl: Mapping[str, Fraction]) -> Resource:
        """Convert a ResourceList: cpu rounds up to milli-cores, everything else up to
        integers; names that are neither core nor scalar resources are ignored
        (NewResource/Resource.Add upstream)."""
        r = cls()
        r.add(rl)
        return r

    def add(self, rl: Mapping[str, Fraction]) -> None:
        """Add a ResourceList in place (Resource.Add upstream)."""
        for name, q in rl.items():
            if name == "cpu":
                self.milli_cpu += milli_value(q)
            elif name == "memory":
                self.memory += value(q)
            elif name == "ephemeral-storage":
                self.ephemeral_storage += value(q)
            elif name == "pods":
                self.allowed_pod_number += value(q)
            elif is_scalar_resource_name(name):
                self.scalar_resources[name] = self.scalar_resources.get(name, 0) + value(q)

    def add_resource(self, other: Resource, sign: int = 1) -> None:
        """``self += sign * other`` (pod counts excluded, as NodeInfo.update does)."""
        self.milli_cpu += sign * other.milli_cpu
        self.memory += sign * other.memory
        self.ephemeral_storage += sign * other.ephemeral_storage
        if other.scalar_resources:
            sr = self.scalar_resources
            for k, v in other.scalar_resources.items():
                sr[k] = sr.get(k, 0) + sign * v

    def clone(self) -> Resource:
        """An independent copy."""
        return Resource(
            self.milli_cpu,
            self.memory,
            self.ephemeral_storage,
            self.allowed_pod_number,
            dict(self.scalar_resources),
        )


@attrs.frozen
class PodResource:
    """What a pod adds to a node (``framework.PodResource``).

    Attributes:
        resource: the pod's requests.
        non0_cpu: milli-CPU with 100m assumed for containers without a cpu request.
        non0_mem: bytes with 200Mi assumed for containers without a memory request.
    """

    resource: Resource
    non0_cpu: int
    non0_mem: int
