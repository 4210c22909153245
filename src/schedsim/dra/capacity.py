"""Consumable capacity (alpha DRAConsumableCapacity): how much of a device's capacity a
request consumes, and whether it still fits.

Mirrors ``consumable_capacity.go`` of the experimental structured allocator (1.34) with
exact arithmetic: quantities are `Fraction`s, so rounding to ``min + k * step`` is exact
(upstream rounds through int64 values, which agrees for whole-number quantities).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction

from schedsim.api.resource import CapacityRequestPolicy, Device, qualified_name

__all__ = ["CapacityCache", "CapacityPlan", "consumed_capacity", "fits"]


def _round_up(requested: Fraction, policy: CapacityRequestPolicy) -> Fraction:
    rng = policy.valid_range
    if rng is not None:
        if requested < rng.min:
            return rng.min
        if rng.step is None:
            return requested
        steps = math.ceil((requested - rng.min) / rng.step)
        return rng.min + steps * rng.step
    for valid in policy.valid_values:
        if requested <= valid:
            return valid
    return requested


def _violates(value: Fraction, policy: CapacityRequestPolicy) -> bool:
    if policy.default is not None and value == policy.default:
        return False
    rng = policy.valid_range
    if rng is not None:
        if rng.max is not None and value > rng.max:
            return True
        return rng.step is not None and (value - rng.min) % rng.step != 0
    if policy.valid_values:
        return value not in policy.valid_values
    return False


def consumed_capacity(
    driver: str, device: Device, requests: Mapping[str, Fraction]
) -> dict[str, Fraction] | None:
    """What one allocation of ``device`` consumes, per capacity name as the device publishes
    it (upstream ``GetConsumedCapacityFromRequest`` plus the policy check of
    ``CmpRequestOverCapacity``).

    For each capacity: the request rounded up by ``requestPolicy`` (``validRange``: at least
    ``min``, then up to ``min + k * step``; ``validValues``: the first value not below the
    request), or without a request the policy's ``default``, else the whole capacity.

    Args:
        driver: the device's driver (domain of bare names).
        device: the device.
        requests: the (sub)request's ``capacity.requests`` (names bare or qualified).

    Returns:
        capacity name -> consumed amount; None when the request names a capacity the device
        does not have or a rounded amount violates the policy (above ``max``, off-step, not a
        valid value, and not the default): the device cannot serve the request.
    """
    if not requests:  # the common case: nothing asked, every capacity's default or whole
        out: dict[str, Fraction] = {}
        for name, cap in device.capacity.items():
            policy = cap.request_policy
            if policy is None:
                out[name] = cap.value
                continue
            value = cap.value if policy.default is None else policy.default
            if _violates(value, policy):
                return None
            out[name] = value
        return out
    wanted = {qualified_name(driver, name): value for name, value in requests.items()}
    published = {qualified_name(driver, name): name for name in device.capacity}
    if any(name not in published for name in wanted):
        return None
    out = {}
    for qname, name in published.items():
        cap = device.capacity[name]
        policy = cap.request_policy
        requested = wanted.get(qname)
        if requested is None:
            value = cap.value if policy is None or policy.default is None else policy.default
        elif policy is None:
            value = requested
        else:
            value = _round_up(requested, policy)
        if policy is not None and _violates(value, policy):
            return None
        out[name] = value
    return out


def fits(
    driver: str,
    device: Device,
    consumed: Mapping[str, Fraction],
    *in_use: Mapping[str, Fraction] | None,
) -> bool:
    """Whether consuming ``consumed`` (`consumed_capacity`'s answer) on top of the
    capacity ``in_use`` on the device (e.g. allocated before, and being allocated in this
    call; keyed by qualified name; None: nothing) stays within every capacity."""
    used = [m for m in in_use if m]
    for name, value in consumed.items():
        if used:
            qname = qualified_name(driver, name)
            for m in used:
                more = m.get(qname)
                if more:
                    value = value + more
        if value > device.capacity[name].value:
            return False
    return True


class CapacityPlan:
    """What one (sub)request consumes on one device, ready for the fit check of every try.

    Attributes:
        consumed: `consumed_capacity`'s answer (not None), by capacity name as published.
        qualified: ``(capacity name, qualified name)`` per consumed capacity.
        whole: ``(qualified name, consumed, capacity)`` as ints when every consumed amount
            and capacity is a whole number (the usual case: the check then adds ints),
            else None (`fits` with Fractions).
    """

    __slots__ = ("consumed", "qualified", "whole")

    def __init__(self, driver: str, device: Device, consumed: dict[str, Fraction]) -> None:
        self.consumed = consumed
        self.qualified = tuple((name, qualified_name(driver, name)) for name in consumed)
        whole: list[tuple[str, int, int]] = []
        for name, qname in self.qualified:
            value, cap = consumed[name], device.capacity[name].value
            if value.denominator != 1 or cap.denominator != 1:
                self.whole: Sequence[tuple[str, int, int]] | None = None
                return
            whole.append((qname, value.numerator, cap.numerator))
        self.whole = tuple(whole)

    def fits(self, driver: str, device: Device, *in_use: Mapping[str, Fraction] | None) -> bool:
        """`fits` for this plan: the consumed capacity on top of ``in_use``."""
        whole = self.whole
        if whole is None:
            return fits(driver, device, self.consumed, *in_use)
        used = [m for m in in_use if m]
        for qname, value, cap in whole:
            for m in used:
                more = m.get(qname)
                if more:
                    if more.denominator != 1:
                        return fits(driver, device, self.consumed, *used)
                    value += more.numerator
            if value > cap:
                return False
        return True


class CapacityCache:
    """`CapacityPlan`s per (device, capacity requests) objects, kept across allocations
    (the DynamicResources plugin keeps one for its lifetime): a request is checked against
    the same device pod after pod. An entry holds its device and requests, so their ids
    stay theirs; the cache is emptied when it reaches ``max_entries``. Not thread-safe.

    Args:
        max_entries: the bound on entries.
    """

    __slots__ = ("_entries", "_max")

    def __init__(self, max_entries: int = 100_000) -> None:
        self._entries: dict[
            tuple[str, int, int], tuple[Device, Mapping[str, Fraction], CapacityPlan | None]
        ] = {}
        self._max = max_entries

    def plan(
        self, driver: str, device: Device, requests: Mapping[str, Fraction]
    ) -> CapacityPlan | None:
        """The plan of ``requests`` on ``device``; None when the device cannot serve them
        at all (`consumed_capacity` is None). Time: O(1) for a pair seen before."""
        key = (driver, id(device), id(requests))
        hit = self._entries.get(key)
        if hit is not None and hit[0] is device and hit[1] is requests:
            return hit[2]
        consumed = consumed_capacity(driver, device, requests)
        plan = None if consumed is None else CapacityPlan(driver, device, consumed)
        if len(self._entries) >= self._max:
            self._entries.clear()
        self._entries[key] = (device, requests, plan)
        return plan
