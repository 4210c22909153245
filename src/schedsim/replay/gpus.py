"""GPUs as DRA devices: per node, how many devices of the GPU driver are allocated and how
many its ResourceSlices publish (the replay's GPU metrics with ``--gpu-as dra``)."""

from __future__ import annotations

from schedsim.snapshot.predicate import PredicateSnapshot


def device_gpus(
    snapshot: PredicateSnapshot, driver: str | None
) -> dict[str, tuple[int, int]] | None:
    """Node -> (devices allocated, devices) of the GPU driver ``driver`` in the snapshot's DRA
    state (its ResourceSlices and allocated claims), or None without one; a device shared by
    several claims counts once."""
    if driver is None:
        return None
    dra = snapshot.dra_snapshot
    out: dict[str, tuple[int, int]] = {}
    node_of: dict[str, str] = {}
    for sl in dra.list_resource_slices():
        if sl.driver == driver and sl.node_name:
            node_of[sl.pool.name] = sl.node_name
            used, total = out.get(sl.node_name, (0, 0))
            out[sl.node_name] = (used, total + len(sl.devices))
    allocated = {  # a shared device (DRAConsumableCapacity) counts once
        (r.pool, r.device)
        for claim in dra.list_resource_claims()
        if claim.status.allocation is not None
        for r in claim.status.allocation.results
        if r.driver == driver
    }
    for pool, _ in allocated:
        node = node_of.get(pool)
        if node is not None:
            used, total = out[node]
            out[node] = (used + 1, total)
    return out
