"""Small value types of the framework: host ports, affinity terms, image states."""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from schedsim.api.core import Pod
from schedsim.api.labels import LabelSelector

__all__ = ["AffinityTerm", "HostPortInfo", "ImageStateSummary", "WeightedAffinityTerm"]

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
