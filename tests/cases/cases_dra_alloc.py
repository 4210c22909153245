"""Runner for the ``dra-alloc-*`` cases (the structured allocator, `schedsim.dra.Allocator`).

Called by ``test_cases.py``. The cluster state comes from the case's objects: claims with a
``status.allocation`` that are not in ``claimsToAllocate`` are the allocated state (and must
agree with ``check.allocatedDevices`` / ``allocatedConsumedCapacity``, upstream's plain form of
the same state). ``check.features`` lists the gates that are on; absent gates are off.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from schedsim.api.core import NodeSelectorRequirement, NodeSelectorTerm
from schedsim.api.errors import ManifestError
from schedsim.api.loading.loader import decode_objects
from schedsim.api.quantity import parse_quantity
from schedsim.api.resource import AllocationResult, qualified_name
from schedsim.dra import AllocatedState, AllocationError, Allocator, DeviceId, DraFeatures

_GATES = {
    "DRAAdminAccess": "admin_access",
    "DRAPrioritizedList": "prioritized_list",
    "DRAPartitionableDevices": "partitionable_devices",
    "DRADeviceTaints": "device_taints",
    "DRADeviceBindingConditions": "device_binding_conditions",
    "DRAResourceClaimDeviceStatus": "device_status",
    "DRAConsumableCapacity": "consumable_capacity",
    "DRAExtendedResource": "extended_resource",
}


def expected_failure(case: dict[str, Any]) -> str | None:
    """Why this case is expected to fail (None: it must pass)."""
    return None


def features(check: dict[str, Any]) -> DraFeatures:
    """The case's gates: listed ones as given, all others off."""
    given = check.get("features") or {}
    unknown = set(given) - set(_GATES)
    assert not unknown, f"unknown feature gates {sorted(unknown)}"
    return DraFeatures(**{field: bool(given.get(gate, False)) for gate, field in _GATES.items()})


def _requirements(reqs: tuple[NodeSelectorRequirement, ...]) -> list[dict[str, Any]]:
    return [{"key": r.key, "operator": r.operator, "values": list(r.values)} for r in reqs]


def _node_selector(terms: tuple[NodeSelectorTerm, ...] | None) -> dict[str, Any] | None:
    if terms is None:
        return None
    out = []
    for t in terms:
        term: dict[str, Any] = {}
        if t.match_expressions:
            term["matchExpressions"] = _requirements(t.match_expressions)
        if t.match_fields:
            term["matchFields"] = _requirements(t.match_fields)
        out.append(term)
    return {"nodeSelectorTerms": out}


def _results(allocation: AllocationResult) -> list[dict[str, Any]]:
    out = []
    for r in allocation.results:
        item: dict[str, Any] = {
            "request": r.request,
            "driver": r.driver,
            "pool": r.pool,
            "device": r.device,
        }
        if r.admin_access is not None:
            item["adminAccess"] = r.admin_access
        if r.share_id is not None:
            item["shareID"] = r.share_id
        if r.consumed_capacity:
            item["consumedCapacity"] = dict(r.consumed_capacity)
        if r.binding_conditions:
            item["bindingConditions"] = list(r.binding_conditions)
        if r.binding_failure_conditions:
            item["bindingFailureConditions"] = list(r.binding_failure_conditions)
        out.append(item)
    return out


def _normalize_expected(item: dict[str, Any], got: dict[str, Any]) -> dict[str, Any]:
    """Expected result with quantities parsed and ``shareID: <any...>`` resolved against
    ``got`` (any non-empty id)."""
    want = dict(item)
    if "consumedCapacity" in want:
        want["consumedCapacity"] = {
            k: parse_quantity(v) for k, v in want["consumedCapacity"].items()
        }
    share = want.get("shareID")
    if isinstance(share, str) and share.startswith("<any") and got.get("shareID"):
        want["shareID"] = got["shareID"]
    return want


def _match_results(
    got: list[dict[str, Any]], expected: list[dict[str, Any]], ordered: bool
) -> None:
    assert len(got) == len(expected), f"results: got {got}, want {expected}"
    if ordered:
        for g, e in zip(got, expected, strict=True):
            assert g == _normalize_expected(e, g), f"results: got {got}, want {expected}"
        return
    remaining = list(got)
    for e in expected:
        for i, g in enumerate(remaining):
            if g == _normalize_expected(e, g):
                del remaining[i]
                break
        else:
            raise AssertionError(f"result {e} missing: got {got}")


def _config(allocation: AllocationResult) -> list[dict[str, Any]]:
    out = []
    for c in allocation.config:
        item: dict[str, Any] = {
            "source": c.source,
            "opaque": {"driver": c.opaque.driver, "parameters": dict(c.opaque.parameters)},
        }
        if c.requests:
            item["requests"] = list(c.requests)
        out.append(item)
    return out


def _check_allocated_state(check: dict[str, Any], state: AllocatedState) -> None:
    """The claims' allocated state equals upstream's plain form of it, where given."""
    if "allocatedDevices" in check:
        want = {DeviceId(d["driver"], d["pool"], d["device"]) for d in check["allocatedDevices"]}
        assert state.devices == want, f"allocated devices from claims: {set(state.devices)}"
    if "allocatedConsumedCapacity" in check:
        want_cap: dict[DeviceId, dict[str, Fraction]] = {}
        for d in check["allocatedConsumedCapacity"]:
            did = DeviceId(d["driver"], d["pool"], d["device"])
            want_cap[did] = {
                qualified_name(d["driver"], k): parse_quantity(v)
                for k, v in d["consumedCapacity"].items()
            }
        got_cap = {k: dict(v) for k, v in state.consumed_capacity.items()}
        assert got_cap == want_cap, f"consumed capacity from claims: {got_cap}"


def run(case: dict[str, Any], source: str) -> None:
    """Run one allocator case and compare every field its ``expect`` gives."""
    check, expect = case["check"], case["expect"]
    assert check["component"] == "StructuredAllocator"
    if expect["outcome"] == "invalid":  # refused at load, as the API server refuses it
        with pytest.raises(ManifestError) as refused:
            decode_objects(case["objects"], source, api_rules=False)
        assert expect["errorContains"] in str(refused.value), str(refused.value)
        return
    manifests = decode_objects(case["objects"], source, api_rules=False)
    feats = features(check)
    node = next(n for n in manifests.nodes if n.name == check["node"])
    by_key = {c.key: c for c in manifests.resource_claims}
    to_allocate = [by_key[k] for k in check["claimsToAllocate"]]
    others = [c for c in manifests.resource_claims if c.key not in check["claimsToAllocate"]]
    state = AllocatedState.from_claims(others, feats)
    _check_allocated_state(check, state)
    allocator = Allocator(
        feats, state, {c.name: c for c in manifests.device_classes}, manifests.resource_slices
    )
    outcome = expect["outcome"]
    try:
        got = allocator.allocate(node, to_allocate)
    except AllocationError as e:
        assert outcome == "error", f"unexpected error: {e}"
        assert expect["errorContains"] in str(e), f"error {str(e)!r}"
        return
    assert outcome != "error", f"expected an error containing {expect.get('errorContains')!r}"
    if outcome == "unschedulable":
        assert got is None, f"expected no allocation, got {got}"
        return
    assert outcome == "allocated"
    assert got is not None, "expected an allocation, got None"
    assert len(got) == len(to_allocate)
    want_allocations = expect["allocations"]
    assert [a["claim"] for a in want_allocations] == check["claimsToAllocate"]
    for allocation, want in zip(got, want_allocations, strict=True):
        if "results" in want:
            _match_results(_results(allocation), want["results"], bool(want.get("resultsOrdered")))
        assert _node_selector(allocation.node_selector) == want.get("nodeSelector"), (
            f"nodeSelector: got {_node_selector(allocation.node_selector)}"
        )
        if "config" in want:
            assert _config(allocation) == want["config"], f"config: got {_config(allocation)}"
