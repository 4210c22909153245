"""The AllocationResult of a claim from the devices the allocator's search picked:
results per device, the class and claim configs, and the node selector.

Mirrors the output part of ``k8s.io/dynamic-resource-allocation/structured``'s allocator
(``Allocate``'s result building, ``createNodeSelector``; experimental, Kubernetes 1.34);
split out of `schedsim.dra.search`.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from schedsim.api.core import NodeSelectorRequirement, NodeSelectorTerm
from schedsim.api.core.nodeaffinity import OBJECT_NAME_FIELD
from schedsim.api.loading.uids import url_uuid5
from schedsim.api.resource import (
    AllocationResult,
    Device,
    DeviceAllocationConfiguration,
    DeviceClass,
    DeviceRequestAllocationResult,
    ResourceClaim,
    ResourceSlice,
)
from schedsim.dra.search_data import Pick, Request
from schedsim.dra.types import AllocationError, DraFeatures

__all__ = ["allocation_config", "allocation_node_selector", "allocation_result", "share_id"]


def allocation_result(
    features: DraFeatures,
    picks: Sequence[Pick],
    chosen: Sequence[Request],
    claim: ResourceClaim,
    node_name: str,
) -> AllocationResult:
    """The AllocationResult of one claim from the devices the search picked for it (in
    pick order), the request or chosen subrequest of each of its requests, and the node."""
    binding = features.device_binding_conditions and features.device_status
    results = []
    for j, pick in enumerate(picks):
        rd = pick.request
        results.append(
            DeviceRequestAllocationResult(
                request=rd.result_name,
                driver=pick.did.driver,
                pool=pick.did.pool,
                device=pick.did.device,
                admin_access=True if rd.admin_access else None,
                tolerations=rd.tolerations if features.device_taints else (),
                binding_conditions=pick.device.binding_conditions if binding else (),
                binding_failure_conditions=(
                    pick.device.binding_failure_conditions if binding else ()
                ),
                share_id=share_id(claim, j) if pick.shared else None,
                consumed_capacity=dict(pick.consumed or {}),
            )
        )
    return AllocationResult(
        results=tuple(results),
        config=tuple(allocation_config(chosen, claim)),
        node_selector=allocation_node_selector(features, picks, claim.name, node_name),
    )


def share_id(claim: ResourceClaim, index: int) -> str:
    """The shareID of result ``index`` of ``claim``'s allocation when that result is a
    shared allocation (DRAConsumableCapacity): a UUID (36 characters) derived from the
    claim's UID and the index, unique per claim and result. Upstream draws a random UUID
    per tentative pick (``allocateDevice``); a derived one keeps a simulation's output the
    same from run to run and costs nothing for picks the search drops."""
    return _share_id(claim.uid, index)


@functools.lru_cache(maxsize=4096)
def _share_id(uid: str, index: int) -> str:
    # memoized: Filter allocates one claim on many nodes, each result asking again
    return url_uuid5(f"schedsim:share:{uid}/{index}")


def allocation_config(
    chosen: Sequence[Request], claim: ResourceClaim
) -> list[DeviceAllocationConfiguration]:
    """Class configs once per class with the requests using it (in request order), then
    the claim's configs in spec order. 1.34 quirk: a claim config naming k requests of
    the claim is emitted k times."""
    out: list[DeviceAllocationConfiguration] = []
    if not claim.spec.config and not any(rd.device_class.config for rd in chosen):
        return out
    by_class: dict[str, list[str]] = {}
    classes: dict[str, DeviceClass] = {}
    for rd in chosen:
        by_class.setdefault(rd.device_class.name, []).append(rd.result_name)
        classes[rd.device_class.name] = rd.device_class
    for name, requests in by_class.items():
        for opaque in classes[name].config:
            out.append(
                DeviceAllocationConfiguration(
                    source="FromClass", opaque=opaque, requests=tuple(requests)
                )
            )
    for config in claim.spec.config:
        entry = DeviceAllocationConfiguration(
            source="FromClaim", opaque=config.opaque, requests=config.requests
        )
        if not config.requests:
            out.append(entry)
            continue
        for rd in chosen:
            base = rd.parent if rd.parent is not None else rd.name
            if base in config.requests or (
                rd.parent is not None and rd.result_name in config.requests
            ):
                out.append(entry)
    return out


def allocation_node_selector(
    features: DraFeatures, picks: Sequence[Pick], claim_name: str, node_name: str
) -> tuple[NodeSelectorTerm, ...] | None:
    """``createNodeSelector``: pinned to the node if any device is node-local (or binds to
    the node); else one term joining the slices' (or devices') single selector terms;
    None when every device is reachable from every node."""
    fields: list[NodeSelectorRequirement] = []
    expressions: list[NodeSelectorRequirement] = []
    binding = features.device_binding_conditions and features.device_status
    for pick in picks:
        source: Device | ResourceSlice = (
            pick.device if pick.slice.per_device_node_selection else pick.slice
        )
        if source.node_name or (binding and pick.device.binds_to_node):
            return _pinned(node_name)
        terms = source.node_selector
        if terms:
            if len(terms) > 1:
                raise AllocationError(
                    f"create NodeSelector for claim {claim_name}: unsupported "
                    f"ResourceSlice.NodeSelector with {len(terms)} terms"
                )
            _add_new(terms[0].match_fields, fields)
            _add_new(terms[0].match_expressions, expressions)
    if not fields and not expressions:
        return None
    return (NodeSelectorTerm(match_expressions=tuple(expressions), match_fields=tuple(fields)),)


@functools.lru_cache(maxsize=4096)
def _pinned(node_name: str) -> tuple[NodeSelectorTerm, ...]:
    # memoized (the terms are immutable): every node-local allocation on a node has it
    return (
        NodeSelectorTerm(
            match_fields=(
                NodeSelectorRequirement(key=OBJECT_NAME_FIELD, operator="In", values=(node_name,)),
            )
        ),
    )


def _add_new(src: Sequence[NodeSelectorRequirement], dst: list[NodeSelectorRequirement]) -> None:
    for req in src:
        if not any(
            r.key == req.key and r.operator == req.operator and set(r.values) == set(req.values)
            for r in dst
        ):
            dst.append(req)
