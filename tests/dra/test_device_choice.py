"""schedsim's DeviceChoice extension point (beyond kube-scheduler 1.34): a plugin ranks the
chosen node's devices for a claim request, the allocator tries them in that order and stays
complete; without such a plugin the allocation is upstream's first fit in slice order
(``k8s.io/dynamic-resource-allocation/structured``: devices in slice order, the first that
fits)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any, ClassVar

import pytest

from schedsim.api.core import Pod
from schedsim.api.resource import ResourceClaim
from schedsim.framework import CycleState, Handle, NodeInfo
from schedsim.framework.devices import DeviceCandidate, node_devices
from schedsim.framework.plugin import DeviceChoicePlugin, ScorePlugin
from schedsim.testing import chosen_devices, snapshot_from_manifests

GATES = {"DRAConsumableCapacity": True}


def _claim(name: str, milli: int | None, count: int = 1) -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": "gpu", "allocationMode": "ExactCount"}
    exactly["count"] = count
    if milli is not None:
        exactly["capacity"] = {"requests": {"gpu-milli": str(milli)}}
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}},
    }


def _pod(name: str, claim: str, node: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "image": "i", "resources": {"claims": [{"name": "g"}]}}],
        "resourceClaims": [{"name": "g", "resourceClaimName": claim}],
    }
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def _cluster(used: Mapping[int, int], want: int | None, count: int = 1) -> list[dict[str, Any]]:
    """One node with four shareable GPUs of 1000 gpu-milli; ``used``: GPU index -> milli
    already allocated (a bound pod per entry, allocated in its claim's status); a pending pod
    ``p`` whose claim asks for ``want`` milli of ``count`` GPUs (None: whole GPUs)."""
    docs: list[dict[str, Any]] = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "n", "labels": {"kubernetes.io/hostname": "n"}},
            "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "110"}},
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu"},
            "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]},
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "n-gpu"},
            "spec": {
                "driver": "gpu.example.com",
                "nodeName": "n",
                "pool": {"name": "n", "generation": 1, "resourceSliceCount": 1},
                "devices": [
                    {
                        "name": f"gpu-{i}",
                        "allowMultipleAllocations": True,
                        "capacity": {"gpu-milli": {"value": "1000"}},
                    }
                    for i in range(4)
                ],
            },
        },
    ]
    for i, milli in used.items():
        claim = _claim(f"used-{i}", milli)
        claim["status"] = {
            "allocation": {
                "devices": {
                    "results": [
                        {
                            "request": "gpu",
                            "driver": "gpu.example.com",
                            "pool": "n",
                            "device": f"gpu-{i}",
                            "shareID": f"0000000{i}-0000-0000-0000-000000000000",
                            "consumedCapacity": {"gpu-milli": str(milli)},
                        }
                    ]
                }
            },
            "reservedFor": [{"resource": "pods", "name": f"b{i}", "uid": f"uid-b{i}"}],
        }
        docs.append(claim)
        pod = _pod(f"b{i}", f"used-{i}", "n")
        pod["metadata"]["uid"] = f"uid-b{i}"
        docs.append(pod)
    docs.append(_claim("want", want, count))
    docs.append(_pod("p", "want"))
    return docs


class TightestFit:
    """Ranks GPUs by gpu-milli left, least first (the FGD paper's ``best`` GPU choice)."""

    name: ClassVar[str] = "TightestFit"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        del args, handle

    def schedsim_score(self, *, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return 0

    def schedsim_choose_devices(
        self,
        *,
        state: CycleState,
        pod: Pod,
        node_info: NodeInfo,
        claim: ResourceClaim,
        request: str,
        candidates: Sequence[DeviceCandidate],
    ) -> Sequence[int] | None:
        return sorted(range(len(candidates)), key=lambda i: candidates[i].device.left("gpu-milli"))


class Reversed(TightestFit):
    """Ranks the devices last first."""

    name: ClassVar[str] = "Reversed"

    def schedsim_choose_devices(
        self,
        *,
        state: CycleState,
        pod: Pod,
        node_info: NodeInfo,
        claim: ResourceClaim,
        request: str,
        candidates: Sequence[DeviceCandidate],
    ) -> Sequence[int] | None:
        return list(reversed(range(len(candidates))))


class NoPreference(TightestFit):
    name: ClassVar[str] = "NoPreference"

    def schedsim_choose_devices(
        self,
        *,
        state: CycleState,
        pod: Pod,
        node_info: NodeInfo,
        claim: ResourceClaim,
        request: str,
        candidates: Sequence[DeviceCandidate],
    ) -> Sequence[int] | None:
        return None


_: DeviceChoicePlugin = TightestFit({}, Handle())
__: ScorePlugin = TightestFit({}, Handle())


def test_without_a_ranking_the_first_device_that_fits() -> None:
    """No preference: upstream's order, the first device with 300 left (gpu-1: gpu-0 has
    200 left)."""
    got = chosen_devices(
        NoPreference, _cluster({0: 800, 1: 100, 2: 500}, 300), "p", "n", feature_gates=GATES
    )
    assert got == {"want": ("n/gpu-1",)}


def test_ranking_picks_the_tightest_device_that_fits() -> None:
    """Ranked by milli left (200, 900, 500, 1000): gpu-0 (200) cannot take 300, so the
    search goes on to gpu-2 (500 left), the tightest that fits: complete, not first-only."""
    got = chosen_devices(
        TightestFit, _cluster({0: 800, 1: 100, 2: 500}, 300), "p", "n", feature_gates=GATES
    )
    assert got == {"want": ("n/gpu-2",)}


def test_ranking_orders_multi_device_requests() -> None:
    """Two whole GPUs in reverse order: gpu-3 and gpu-2 (the results list them in the order
    the search picked them); gpu-1 is partly used so a whole-GPU request cannot take it."""
    got = chosen_devices(Reversed, _cluster({1: 100}, None, count=2), "p", "n", feature_gates=GATES)
    assert got == {"want": ("n/gpu-3", "n/gpu-2")}


def test_node_devices_reads_the_nodes_claims() -> None:
    """Per-device use from the node's own slices and its pods' claims."""
    snap, _ = snapshot_from_manifests(_cluster({0: 800, 2: 500}, 300), feature_gates=GATES)
    devices = node_devices(snap.get_node_info("n"))
    assert [(d.name, d.left("gpu-milli"), d.shares) for d in devices] == [
        ("gpu-0", Fraction(200), 1),
        ("gpu-1", Fraction(1000), 0),
        ("gpu-2", Fraction(500), 1),
        ("gpu-3", Fraction(1000), 0),
    ]


def test_bad_ranking_is_an_error() -> None:
    class Bad(TightestFit):
        name: ClassVar[str] = "Bad"

        def schedsim_choose_devices(self, **kw: Any) -> Sequence[int] | None:
            return [0, 0]

    from schedsim.snapshot.errors import SchedulingError

    with pytest.raises(SchedulingError, match='plugin "Bad": ChooseDevices: invalid index 0'):
        chosen_devices(Bad, _cluster({}, 300), "p", "n", feature_gates=GATES)
