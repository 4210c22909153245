"""The scheduler's integer resource vector (``framework.Resource``) and ``PodResource``."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from types import MappingProxyType
from typing import Any, NoReturn, cast

import attrs

from schedsim.api.core.resources import is_scalar_resource_name
from schedsim.api.quantity import milli_value, value

__all__ = ["READ_ONLY", "FrozenResource", "PodResource", "Resource", "stored_add"]

READ_ONLY = (
    "read-only: a stored snapshot's NodeInfo/PodInfo is shared by every reader; take "
    "node_info.snapshot() or .clone() to get a copy you may change"
)
"""Why a frozen view refuses a change (the error message)."""


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


class FrozenResource(Resource):
    """A `Resource` callers can read but not change: what a stored NodeInfo's
    ``requested``, ``non_zero_requested`` and ``allocatable`` and a PodInfo's
    ``calculate_resource().resource`` are.

    Reads cost what a `Resource`'s do (the same slots); assigning a field, calling `add` or
    `add_resource`, or changing ``scalar_resources`` (a read-only mapping) raises, so a
    plugin cannot corrupt the snapshot (kube-scheduler hands out pointers and trusts
    plugins; Python code slips more easily). Its owner changes it with `stored_add`.
    `clone` returns an ordinary, mutable `Resource`.

    Raises:
        AttributeError: on assignment (`READ_ONLY`).
    """

    __slots__ = ("_scalars",)

    def __init__(self, source: Resource | None = None) -> None:
        src = source if source is not None else Resource()
        _set_milli_cpu(self, src.milli_cpu)
        _set_memory(self, src.memory)
        _set_ephemeral(self, src.ephemeral_storage)
        _set_pods(self, src.allowed_pod_number)
        scalars = dict(src.scalar_resources)
        _set_scalars_dict(self, scalars)
        _set_scalars(self, MappingProxyType(scalars))

    def __setattr__(self, name: str, value: Any) -> NoReturn:
        raise AttributeError(f"cannot set {name}: {READ_ONLY}")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError(f"cannot delete {name}: {READ_ONLY}")

    def add(self, rl: Mapping[str, Fraction]) -> NoReturn:
        """Refused (`READ_ONLY`)."""
        raise AttributeError(f"cannot add: {READ_ONLY}")

    def add_resource(self, other: Resource, sign: int = 1) -> NoReturn:
        """Refused (`READ_ONLY`)."""
        raise AttributeError(f"cannot add_resource: {READ_ONLY}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Resource):
            return NotImplemented
        return (
            self.milli_cpu == other.milli_cpu
            and self.memory == other.memory
            and self.ephemeral_storage == other.ephemeral_storage
            and self.allowed_pod_number == other.allowed_pod_number
            and dict(self.scalar_resources) == dict(other.scalar_resources)
        )

    __hash__ = None

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenResource, (self.clone(),))


def stored_add(
    target: FrozenResource,
    other: Resource | None,
    sign: int = 1,
    non0_cpu: int = 0,
    non0_mem: int = 0,
) -> None:
    """``target += sign * other`` (pod counts excluded, as NodeInfo.update does), plus
    ``sign * non0_cpu`` milli-CPU and ``sign * non0_mem`` bytes: how the NodeInfo that owns
    ``target`` updates it. Nobody else calls this."""
    if other is not None:
        _set_milli_cpu(target, target.milli_cpu + sign * other.milli_cpu)
        _set_memory(target, target.memory + sign * other.memory)
        _set_ephemeral(target, target.ephemeral_storage + sign * other.ephemeral_storage)
        if other.scalar_resources:
            sr: dict[str, int] = _get_scalars_dict(target)
            for k, v in other.scalar_resources.items():
                sr[k] = sr.get(k, 0) + sign * v
    if non0_cpu:
        _set_milli_cpu(target, target.milli_cpu + sign * non0_cpu)
    if non0_mem:
        _set_memory(target, target.memory + sign * non0_mem)


# The slots' own descriptors: how FrozenResource's fields are written past its __setattr__.
_slot: Any = Resource.__dict__
_set_milli_cpu = _slot["milli_cpu"].__set__
_set_memory = _slot["memory"].__set__
_set_ephemeral = _slot["ephemeral_storage"].__set__
_set_pods = _slot["allowed_pod_number"].__set__
_set_scalars = _slot["scalar_resources"].__set__
_set_scalars_dict = FrozenResource.__dict__["_scalars"].__set__
_get_scalars_dict = cast(Any, FrozenResource.__dict__["_scalars"]).__get__


def frozen_copy(source: FrozenResource) -> FrozenResource:
    """``FrozenResource(source)`` for a source that is one (what a NodeInfo's copy-on-write
    takes of its sums), without going through a `Resource` and a read-only mapping: the same
    fields, its own scalar dict. Time: O(scalar resources)."""
    c = _new_frozen(FrozenResource)
    _set_milli_cpu(c, source.milli_cpu)
    _set_memory(c, source.memory)
    _set_ephemeral(c, source.ephemeral_storage)
    _set_pods(c, source.allowed_pod_number)
    scalars = _get_scalars_dict(source)
    scalars = dict(scalars) if scalars else {}
    _set_scalars_dict(c, scalars)
    _set_scalars(c, MappingProxyType(scalars))
    return c


_new_frozen = object.__new__


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
