"""benchmarks/scheduler_perf.py's PV workloads exercise what upstream's do: every pod has its
own bound PVC and PV (test/utils ``CreatePodWithPersistentVolume``), and on the nodes of the
migrated and CSI workloads NodeVolumeLimits counts those volumes against the CSINode's
``ebs.csi.aws.com`` count of 39 (kube-scheduler's ``node(s) exceed max volume count``), the
in-tree AWS EBS ones through CSI migration (``isCSIMigrationOn``)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def sp() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "scheduler_perf_bench", ROOT / "benchmarks" / "scheduler_perf.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def placed(sp: ModuleType, objects: list[Any]) -> int:
    _, _, count, total = sp.run(objects, 1)
    assert total == sum(1 for o in objects if o["kind"] == "Pod")
    return int(count)


@pytest.mark.parametrize(("migrated", "csi"), [(True, False), (False, True)])
def test_volume_limit_of_39_per_node(sp: ModuleType, migrated: bool, csi: bool) -> None:
    """One EBS-limit node (capacity for 40 pod-default pods by cpu) and 45 pods with PVs: 39
    fit, the volume limit stops the rest."""
    objects = [sp.node_with_ebs_limit("n0"), sp.csi_node("n0", migrated)]
    objects += sp.pods_with_pvs("namespace-1", 45, csi)
    assert placed(sp, objects) == 39


def test_in_tree_pvs_without_csinode_are_not_limited(sp: ModuleType) -> None:
    """SchedulingInTreePVs' node-default nodes have no CSINode: no volume limit applies
    (``isCSIMigrationOn`` is false without one), so cpu (4 / 100m = 40 pods) is the limit."""
    objects = [sp.node("n0"), *sp.pods_with_pvs("namespace-1", 45, False)]
    assert placed(sp, objects) == 40


def test_each_pod_has_its_own_bound_claim_and_volume(sp: ModuleType) -> None:
    objs = list(sp.pods_with_pvs("namespace-2", 2, True))
    assert [o["kind"] for o in objs] == ["PersistentVolume", "PersistentVolumeClaim", "Pod"] * 2
    pv, pvc, pod = objs[3:]
    assert pv["metadata"]["name"] == "namespace-2-vol-1" == pvc["spec"]["volumeName"]
    assert pv["spec"]["csi"]["volumeHandle"] == "namespace-2-vol-1"
    assert pv["spec"]["claimRef"]["name"] == "pvc-1" == pvc["metadata"]["name"]
    assert pod["spec"]["volumes"] == [
        {"name": "vol", "persistentVolumeClaim": {"claimName": "pvc-1"}}
    ]
