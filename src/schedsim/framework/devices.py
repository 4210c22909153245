"""Devices as a plugin sees them: the DRA devices of one node with what is left of each
(`node_devices`), and the candidates a DeviceChoice plugin ranks (`DeviceCandidate`).

Beyond kube-scheduler 1.34: upstream's structured allocator takes the first device that
fits, in slice order, and no plugin sees devices. schedsim adds one extension point,
DeviceChoice (`schedsim.framework.hookspec.schedsim_choose_devices`), so that a policy can
pick which device of the chosen node a claim request gets (the in-node GPU choice of the
FGD paper's policies). Without a DeviceChoice plugin nothing here runs and the allocation is
exactly upstream's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import attrs

from schedsim.framework.interface import NodeInfo

__all__ = ["DeviceCandidate", "NodeDevice", "node_devices"]


@attrs.frozen
class NodeDevice:
    """One device a node's local ResourceSlices publish, with what the node's pods use of it.

    Attributes:
        driver, pool, name: the device (``status.allocation.devices.results`` names it so).
        capacity: capacity name -> published value (``devices[].capacity``, names as
            published, e.g. ``gpu-milli``).
        consumed: capacity name -> the sum of the ``consumedCapacity`` of the node's pods'
            shared allocations of this device (DRAConsumableCapacity); an exclusive
            allocation consumes the whole capacity.
        exclusive: allocated whole to a claim (an allocation result without a ``shareID``).
        shares: the number of allocation results naming this device.
    """

    driver: str
    pool: str
    name: str
    capacity: Mapping[str, Fraction]
    consumed: Mapping[str, Fraction]
    exclusive: bool
    shares: int

    def left(self, capacity: str) -> Fraction:
        """What is left of ``capacity`` (0 when allocated exclusively or not published)."""
        total = self.capacity.get(capacity)
        if total is None or self.exclusive:
            return Fraction(0)
        return total - self.consumed.get(capacity, Fraction(0))

    @property
    def free(self) -> bool:
        """Nothing of it is allocated."""
        return self.shares == 0


@attrs.frozen
class DeviceCandidate:
    """A device of the node that a DeviceChoice plugin may rank for one claim request: a
    device of the pools the allocator searches for that node, not allocated exclusively
    before this pod. Whether it can serve the request (selectors, capacity, counters,
    constraints) is still decided by the allocator, in the plugin's order.

    Attributes:
        device: the device with its use before this pod (`NodeDevice`).
        attributes: the device's attributes (name -> value, as published).
    """

    device: NodeDevice
    attributes: Mapping[str, Any]


def _bare(driver: str, name: str) -> str:
    prefix = driver + "/"
    return name[len(prefix) :] if name.startswith(prefix) else name


def node_devices(node_info: NodeInfo, driver: str | None = None) -> tuple[NodeDevice, ...]:
    """The devices of ``node_info``'s local ResourceSlices (of ``driver`` only when given),
    in slice-name then device order, each with what the node's pods' allocated claims use.

    Reads the node's own parts only (its ``local_resource_slices`` and its pods' claims, as
    the snapshot's NodeInfo keeps them), never every claim of the cluster: O(devices + claims
    of the node's pods). A NodeInfo without those parts (not a snapshot NodeInfo) has no
    devices. Claims shared with pods on other nodes are counted here as well (their devices
    are on this node when their slices are).
    """
    slices: Sequence[Any] = getattr(node_info, "local_resource_slices", ())
    if not slices:
        return ()
    claims: Sequence[Any] = getattr(node_info, "resource_claims", ())
    consumed: dict[tuple[str, str, str], dict[str, Fraction]] = {}
    exclusive: set[tuple[str, str, str]] = set()
    shares: dict[tuple[str, str, str], int] = {}
    for claim in claims:
        allocation = claim.status.allocation
        if allocation is None:
            continue
        for r in allocation.results:
            if r.admin_access or (driver is not None and r.driver != driver):
                continue
            key = (r.driver, r.pool, r.device)
            shares[key] = shares.get(key, 0) + 1
            if r.share_id is None:
                exclusive.add(key)
                continue
            used = consumed.setdefault(key, {})
            for name, value in r.consumed_capacity.items():
                bare = _bare(r.driver, name)
                used[bare] = used.get(bare, Fraction(0)) + value
    out = []
    for sl in sorted(slices, key=lambda s: s.name):
        if driver is not None and sl.driver != driver:
            continue
        for dev in sl.devices:
            key = (sl.driver, sl.pool.name, dev.name)
            out.append(
                NodeDevice(
                    sl.driver,
                    sl.pool.name,
                    dev.name,
                    {name: c.value for name, c in dev.capacity.items()},
                    consumed.get(key, {}),
                    key in exclusive,
                    shares.get(key, 0),
                )
            )
    return tuple(out)
