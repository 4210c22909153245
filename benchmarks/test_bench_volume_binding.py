"""VolumeBinding on many local PVs: 1,000 nodes, each with one Available local PV pinned to it
(``kubernetes.io/hostname In``) of a WaitForFirstConsumer class. One pending pod with such a
claim is diagnosed (PreFilter, then Filter on every node, as kube-scheduler's
``findNodesThatFitPod`` does) against the same pod without volumes: the ratio is what
VolumeBinding's static-binding search costs per pod.

Run: ``pytest benchmarks/test_bench_volume_binding.py --benchmark-enable``.
"""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from schedsim.api.loading.loader import decode_objects
from schedsim.engine import Cluster
from schedsim.framework import Framework, Handle, default_profile

NODES = 1000


def _objects() -> list[dict[str, Any]]:
    objs: list[dict[str, Any]] = [
        {
            "kind": "StorageClass",
            "metadata": {"name": "local"},
            "provisioner": "kubernetes.io/no-provisioner",
            "volumeBindingMode": "WaitForFirstConsumer",
        }
    ]
    for i in range(NODES):
        host = f"n{i:04d}"
        objs.append(
            {
                "kind": "Node",
                "metadata": {"name": host, "labels": {"kubernetes.io/hostname": host}},
                "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
            }
        )
        objs.append(
            {
                "kind": "PersistentVolume",
                "metadata": {"name": f"pv-{host}"},
                "spec": {
                    "capacity": {"storage": "10Gi"},
                    "accessModes": ["ReadWriteOnce"],
                    "storageClassName": "local",
                    "local": {"path": "/mnt/disk"},
                    "nodeAffinity": {
                        "required": {
                            "nodeSelectorTerms": [
                                {
                                    "matchExpressions": [
                                        {
                                            "key": "kubernetes.io/hostname",
                                            "operator": "In",
                                            "values": [host],
                                        }
                                    ]
                                }
                            ]
                        }
                    },
                },
                "status": {"phase": "Available"},
            }
        )
    objs.append(
        {
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "data"},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": "local",
                "resources": {"requests": {"storage": "1Gi"}},
            },
        }
    )
    objs.append(
        {
            "kind": "Pod",
            "metadata": {"name": "db"},
            "spec": {
                "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
                "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}],
            },
        }
    )
    return objs


CLUSTER = Cluster.from_manifests(decode_objects(_objects(), "bench"))


@pytest.mark.parametrize("volumes", [True, False], ids=["wffc-claim", "no-volumes"])
def test_diagnose_all_nodes(benchmark: Any, volumes: bool) -> None:
    snap, _ = CLUSTER.snapshot(Framework(default_profile(), Handle()))
    pod = CLUSTER.pods[0] if volumes else attrs.evolve(CLUSTER.pods[0], volumes=())
    fit_error = benchmark(snap.diagnose, pod)
    # every node but the first-matching one rejects: the claim's only PV is elsewhere
    assert fit_error.num_all_nodes == NODES
