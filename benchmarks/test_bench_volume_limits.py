"""NodeVolumeLimits in a scheduling cycle: 100 nodes whose CSINode allows 25 EBS volumes, 20
volume pods already on each, 1000 pending pods with one unbound claim each (500 fit, 500 get
``0/100 nodes are available: 100 node(s) exceed max volume count.`` after a Filter on every
node). ``csinodes`` against ``no-csinodes`` (the same cluster without limits: PreFilter and
Filter still run, nothing is rejected) is what enforcing the limit costs.

Run: ``pytest benchmarks/test_bench_volume_limits.py --benchmark-enable``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from schedsim.api.core import Node, Pod
from schedsim.api.loading.loader import Manifests, decode_objects
from schedsim.engine import Cluster
from schedsim.framework import Framework, Handle, StorageListers, default_profile
from schedsim.scheduler.scheduling import simulate
from schedsim.snapshot import ClusterSnapshotStore, PredicateSnapshot
from schedsim.snapshot.csi import CsiSnapshot

NODES, BOUND_PER_NODE, PENDING, LIMIT = 100, 20, 1000, 25


def loaded(
    nodes: Sequence[Node],
    pods: Sequence[Pod],
    framework: Framework,
    store: ClusterSnapshotStore | None = None,
    **state: Any,
) -> tuple[PredicateSnapshot, Sequence[Pod]]:
    """The simulations' first two arguments, built through `Cluster` (``state``: per-run
    state a caller made, as `Cluster.snapshot` takes it)."""
    cluster = Cluster(nodes=nodes, pods=pods)
    return cluster.snapshot(framework, store, **state)[0], cluster.pods


def _cluster() -> Manifests:
    objs: list[dict[str, Any]] = [
        # WaitForFirstConsumer: VolumeBinding provisions the claims on the chosen node (an
        # Immediate class would leave them unbound: "pod has unbound immediate ...")
        {
            "kind": "StorageClass",
            "metadata": {"name": "ebs"},
            "provisioner": "ebs.csi.aws.com",
            "volumeBindingMode": "WaitForFirstConsumer",
        }
    ]
    for n in range(NODES):
        name = f"node-{n:03d}"
        objs.append(
            {
                "kind": "Node",
                "metadata": {"name": name},
                "status": {"allocatable": {"cpu": "64", "memory": "256Gi", "pods": "110"}},
            }
        )
        objs.append(
            {
                "kind": "CSINode",
                "metadata": {"name": name},
                "spec": {"drivers": [{"name": "ebs.csi.aws.com", "allocatable": {"count": LIMIT}}]},
            }
        )
    nodes = [f"node-{n:03d}" for n in range(NODES) for _ in range(BOUND_PER_NODE)]
    for i, node in enumerate([*nodes, *[""] * PENDING]):
        objs.append(
            {
                "kind": "PersistentVolumeClaim",
                "metadata": {"name": f"data-{i}"},
                "spec": {"storageClassName": "ebs"},
            }
        )
        spec: dict[str, Any] = {
            "containers": [{"name": "c", "resources": {"requests": {"cpu": "10m"}}}],
            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": f"data-{i}"}}],
        }
        if node:
            spec["nodeName"] = node
        objs.append({"kind": "Pod", "metadata": {"name": f"pod-{i}"}, "spec": spec})
    return decode_objects(objs, "bench")


CLUSTER = _cluster()


@pytest.mark.parametrize("csinodes", [True, False], ids=["csinodes", "no-csinodes"])
def test_cycle_with_volume_limits(benchmark: Any, csinodes: bool) -> None:
    m = CLUSTER
    listers = StorageListers.from_objects(
        m.persistent_volumes, m.persistent_volume_claims, m.storage_classes
    )

    def run() -> int:
        framework = Framework(default_profile(), Handle())
        result = simulate(
            *loaded(
                m.nodes,
                m.pods,
                framework,
                csi_snapshot=CsiSnapshot(m.csi_nodes if csinodes else ()),
                storage_listers=listers,
                skip_unschedulable_nodes=False,
            )
        )
        return result.scheduled

    scheduled = benchmark.pedantic(run, rounds=3, iterations=1)
    assert scheduled == (NODES * (LIMIT - BOUND_PER_NODE) if csinodes else PENDING)
