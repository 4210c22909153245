"""Small builders for allocator tests: manifests in, decoded objects out."""

from __future__ import annotations

from typing import Any

from schedsim.api.core import Node
from schedsim.api.resource import DeviceClass, ResourceClaim, ResourceSlice

DRIVER = "driver-a"
NODE = Node(name="node-1", labels={"region": "region-1"})


def device_class(name: str = "class-a", driver: str = DRIVER, **spec: Any) -> DeviceClass:
    """A DeviceClass selecting ``driver`` (plus ``spec`` fields)."""
    return DeviceClass.from_manifest(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": name},
            "spec": {
                "selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}],
                **spec,
            },
        }
    )


def device(name: str, **fields: Any) -> dict[str, Any]:
    """A device manifest; ``ints`` become int attributes, ``counters`` one consumption of
    ``counter-set-1``."""
    out: dict[str, Any] = {"name": name}
    ints = fields.pop("ints", None)
    if ints:
        out["attributes"] = {k: {"int": v} for k, v in ints.items()}
    counters = fields.pop("counters", None)
    if counters:
        out["consumesCounters"] = [
            {
                "counterSet": "counter-set-1",
                "counters": {k: {"value": v} for k, v in counters.items()},
            }
        ]
    out.update(fields)
    return out


def resource_slice(
    devices: list[dict[str, Any]],
    name: str = "slice-1",
    pool: str | dict[str, Any] = "pool-1",
    counters: dict[str, str] | None = None,
    **spec: Any,
) -> ResourceSlice:
    """A node-local slice on node-1 (``pool``: a name or the whole ``spec.pool``;
    ``counters``: one shared counter set ``counter-set-1``)."""
    body: dict[str, Any] = {
        "driver": DRIVER,
        "pool": pool
        if isinstance(pool, dict)
        else {"name": pool, "generation": 1, "resourceSliceCount": 1},
        "devices": devices,
    }
    if not {"nodeName", "allNodes", "nodeSelector", "perDeviceNodeSelection"} & set(spec):
        body["nodeName"] = "node-1"
    if counters:
        body["sharedCounters"] = [
            {"name": "counter-set-1", "counters": {k: {"value": v} for k, v in counters.items()}}
        ]
    body.update(spec)
    return ResourceSlice.from_manifest(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": name},
            "spec": body,
        }
    )


def request(name: str, cls: str = "class-a", **exactly: Any) -> dict[str, Any]:
    """An ``exactly`` request manifest (``selectors`` given as CEL strings)."""
    selectors = exactly.pop("selectors", ())
    body: dict[str, Any] = {"deviceClassName": cls, **exactly}
    if selectors:
        body["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    return {"name": name, "exactly": body}


def claim(
    name: str,
    requests: list[dict[str, Any]],
    constraints: list[dict[str, Any]] | None = None,
    status: dict[str, Any] | None = None,
) -> ResourceClaim:
    """A claim in ``default``."""
    raw: dict[str, Any] = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"devices": {"requests": requests, "constraints": constraints or []}},
    }
    if status:
        raw["status"] = status
    return ResourceClaim.from_manifest(raw)


def picked(allocation: Any) -> list[tuple[str, str]]:
    """``(request, device)`` of every result of one AllocationResult, in order."""
    return [(r.request, r.device) for r in allocation.results]
