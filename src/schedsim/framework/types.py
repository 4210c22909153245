"""Small value types of the framework: host ports, affinity terms, image states, and the
read-only forms a stored NodeInfo hands out (`FrozenHostPortInfo`, `FrozenList`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NoReturn, TypeVar

import attrs

from schedsim.api.core import Pod
from schedsim.api.labels import LabelSelector

__all__ = [
    "AffinityTerm",
    "FrozenHostPortInfo",
    "FrozenList",
    "HostPortInfo",
    "ImageStateSummary",
    "WeightedAffinityTerm",
]

_T = TypeVar("_T")

_ANY_IP = "0.0.0.0"


class HostPortInfo:
    """Host ports in use on a node: ip -> set of (protocol, port).

    Mirrors kube-scheduler ``framework.HostPortInfo``: an empty ip means ``0.0.0.0``, an empty
    protocol means ``TCP``; ``0.0.0.0`` conflicts with the same (protocol, port) on any ip.
    """

    __slots__ = ("_ports",)

    def __init__(self) -> None:
        self._ports: dict[str, dict[tuple[str, int], int]] = {}

    def add(self, ip: str, protocol: str, port: int) -> None:
        """Record one use of ``ip:port/protocol`` (ports <= 0 are ignored)."""
        if port <= 0:
            return
        entry = self._ports.setdefault(ip or _ANY_IP, {})
        key = (protocol or "TCP", port)
        entry[key] = entry.get(key, 0) + 1

    def remove(self, ip: str, protocol: str, port: int) -> None:
        """Drop one use of ``ip:port/protocol``."""
        if port <= 0:
            return
        ip = ip or _ANY_IP
        entry = self._ports.get(ip)
        if entry is None:
            return
        key = (protocol or "TCP", port)
        n = entry.get(key, 0) - 1
        if n > 0:
            entry[key] = n
        else:
            entry.pop(key, None)
            if not entry:
                del self._ports[ip]

    def __len__(self) -> int:
        return sum(len(v) for v in self._ports.values())

    def check_conflict(self, ip: str, protocol: str, port: int) -> bool:
        """Whether using ``ip:port/protocol`` would conflict with a port in use."""
        if port <= 0:
            return False
        ip = ip or _ANY_IP
        key = (protocol or "TCP", port)
        if ip == _ANY_IP:
            return any(key in m for m in self._ports.values())
        return key in self._ports.get(ip, {}) or key in self._ports.get(_ANY_IP, {})

    def copy(self) -> HostPortInfo:
        """A deep copy."""
        c = HostPortInfo()
        c._ports = {ip: dict(m) for ip, m in self._ports.items()}
        return c


_READ_ONLY = (
    "read-only: a stored snapshot's NodeInfo is shared by every reader; take "
    "node_info.snapshot() to get a copy you may change"
)


class FrozenHostPortInfo(HostPortInfo):
    """The host ports of a stored NodeInfo: `check_conflict`, ``len`` and `copy` (a mutable
    `HostPortInfo`) as usual; `add` and `remove` raise. Its owner changes it with
    `owner_add` / `owner_remove`.

    Raises:
        AttributeError: from `add` and `remove`.
    """

    __slots__ = ()

    def __init__(self, source: HostPortInfo | None = None) -> None:
        ports = None if source is None else source._ports
        self._ports = {ip: dict(m) for ip, m in ports.items()} if ports else {}

    def add(self, ip: str, protocol: str, port: int) -> NoReturn:
        """Refused."""
        raise AttributeError(f"cannot add a host port: {_READ_ONLY}")

    def remove(self, ip: str, protocol: str, port: int) -> NoReturn:
        """Refused."""
        raise AttributeError(f"cannot remove a host port: {_READ_ONLY}")

    def owner_add(self, ip: str, protocol: str, port: int) -> None:
        """`HostPortInfo.add`, for the NodeInfo that owns these ports only."""
        HostPortInfo.add(self, ip, protocol, port)

    def owner_remove(self, ip: str, protocol: str, port: int) -> None:
        """`HostPortInfo.remove`, for the NodeInfo that owns these ports only."""
        HostPortInfo.remove(self, ip, protocol, port)


class FrozenList(list[_T]):
    """A list callers can read (index, iterate, ``len``, slices, ``in``: list speed) but not
    change: what a stored NodeInfo's ``pods``, ``pods_with_affinity`` and
    ``pods_with_required_anti_affinity`` are. Its owner changes it through ``list``'s own
    methods (``list.append(x, item)``).

    Raises:
        AttributeError: from every method that would change it.
    """

    __slots__ = ()

    def _refuse(self, *_: Any, **__: Any) -> NoReturn:
        raise AttributeError(f"cannot change the list: {_READ_ONLY}")

    append = extend = insert = pop = remove = clear = sort = reverse = _refuse
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenList, (list(self),))

    @staticmethod
    def owner_append(lst: list[_T], item: _T) -> None:
        """Append, for the owner only."""
        list.append(lst, item)

    @staticmethod
    def owner_extend(lst: list[_T], items: Iterable[_T]) -> None:
        """Extend, for the owner only."""
        list.extend(lst, items)


@attrs.frozen
class AffinityTerm:
    """A processed pod (anti-)affinity term (``framework.AffinityTerm``).

    Attributes:
        namespaces: namespaces the term applies to (the pod's own when none given).
        selector: pods the term selects (None matches nothing, like a nil selector).
        topology_key: node label defining the topology domain.
        namespace_selector: namespaces selected by label (None = none).
    """

    namespaces: frozenset[str]
    selector: LabelSelector | None
    topology_key: str
    namespace_selector: LabelSelector | None = None

    def matches(self, pod: Pod, ns_labels: Mapping[str, str] | None) -> bool:
        """Whether ``pod`` (with its namespace's labels) is selected by this term."""
        in_ns = pod.namespace in self.namespaces or (
            self.namespace_selector is not None
            and ns_labels is not None
            and self.namespace_selector.matches(ns_labels)
        )
        return in_ns and self.selector is not None and self.selector.matches(pod.labels)


@attrs.frozen
class WeightedAffinityTerm:
    """A preferred term with its weight."""

    term: AffinityTerm
    weight: int


@attrs.frozen
class ImageStateSummary:
    """Size of an image (bytes) and how many nodes have it."""

    size: int
    num_nodes: int
