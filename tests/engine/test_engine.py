"""The library entry point: Cluster, EngineConfig, Engine, and binding a snapshot to the
framework for the duration of a run (Cluster Autoscaler's delegating lister)."""

from __future__ import annotations

import multiprocessing
import pickle
from concurrent.futures import ProcessPoolExecutor
from importlib import resources

import attrs
import pytest

from schedsim.api.loading.loader import Manifests
from schedsim.engine import Cluster, Engine, EngineConfig
from schedsim.framework.delegating import UnboundSnapshotError
from schedsim.scheduler.scheduling import SimulationResult
from schedsim.testing import snapshot_from_manifests


def dra_cluster_text(node: str) -> str:
    """One node ``node`` publishing one GPU (pool ``node``), a DeviceClass, a claim
    ``default/gpu`` and a pending pod ``default/user`` that uses it."""
    return f"""
apiVersion: v1
kind: Node
metadata: {{name: {node}}}
status: {{allocatable: {{cpu: "4", memory: 8Gi, pods: "110"}}}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {{name: gpu.example.com}}
spec:
  selectors:
  - cel: {{expression: "device.driver == 'gpu.example.com'"}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {{name: {node}-gpus}}
spec:
  driver: gpu.example.com
  nodeName: {node}
  pool: {{name: {node}, generation: 1, resourceSliceCount: 1}}
  devices:
  - name: gpu-{node}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {{name: gpu, namespace: default}}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {{deviceClassName: gpu.example.com}}
---
apiVersion: v1
kind: Pod
metadata: {{name: user, namespace: default}}
spec:
  containers:
  - name: main
    image: pause
    resources:
      claims: [{{name: gpu}}]
  resourceClaims:
  - name: gpu
    resourceClaimName: gpu
"""


def _example(name: str) -> Cluster:
    text = resources.files("schedsim.examples").joinpath(name).read_text("utf-8")
    return Cluster.from_text(text, f"<example {name}>")


def _summary(result: SimulationResult) -> list[tuple[str, str | None, str, tuple[str, ...]]]:
    return [
        (o.pod.key, o.node_name, o.message, tuple(f"{a.pool}/{a.device}" for a in o.allocations))
        for o in result.outcomes
    ]


@pytest.mark.parametrize("order", ["ab", "ba"])
def test_two_snapshots_share_one_framework(order: str) -> None:
    """Two PredicateSnapshots built on one Framework each schedule through their own DRA
    state, whichever was built first and whichever schedules first: the framework is built
    once over a delegating lister and each operation binds its snapshot and unbinds it
    (CA ``plugin_runner.go``: ``UpdateDelegate`` / ``defer ResetDelegate``). Before, the
    snapshot built last wrote itself into the handle and the other read its claims."""
    framework = EngineConfig().framework()
    snaps = {}
    for n in order:  # build in this order
        snaps[n], skipped = Cluster.from_text(dra_cluster_text(n)).snapshot(framework)
        assert skipped == []
    pods = {n: Cluster.from_text(dra_cluster_text(n)).pods[0] for n in "ab"}
    for n in order:  # and schedule in this order
        assert snaps[n].schedule_pod_on_any_node_matching(pods[n]) == n
        claim = snaps[n].get_resource_claim("default", "gpu")
        assert claim is not None and claim.status.allocation is not None
        [result] = claim.status.allocation.results
        assert (result.pool, result.device) == (n, f"gpu-{n}")
    for n in order:  # each keeps its own allocation
        claim = snaps[n].get_resource_claim("default", "gpu")
        assert claim is not None and claim.status.allocation is not None
        assert [r.pool for r in claim.status.allocation.results] == [n]
    handle = framework.handle
    assert handle.shared_lister.delegate is None
    assert handle.dra_manager.delegate is None


def test_binding_nests_and_unbinds() -> None:
    """A binding restores what it replaced; outside every binding the handle's listers
    raise UnboundSnapshotError (CA's unset lister returns an error)."""
    framework = EngineConfig().framework()
    a, _ = Cluster.from_text(dra_cluster_text("a")).snapshot(framework)
    b, _ = Cluster.from_text(dra_cluster_text("b")).snapshot(framework)
    handle = framework.handle
    with pytest.raises(UnboundSnapshotError, match="no snapshot is bound"):
        handle.dra_manager.list_resource_slices()
    with pytest.raises(UnboundSnapshotError):
        handle.shared_lister.node_infos()
    with a.bound():
        assert [s.name for s in handle.dra_manager.list_resource_slices()] == ["a-gpus"]
        with b.bound():
            assert [ni.node.name for ni in handle.shared_lister.node_infos().list() if ni.node] == [
                "b"
            ]
            with b.bound():
                assert handle.csi_manager.delegate is b
            assert handle.csi_manager.delegate is b
        assert [s.name for s in handle.dra_manager.list_resource_slices()] == ["a-gpus"]
        assert handle.storage_listers.delegate is a.storage_listers
    with pytest.raises(UnboundSnapshotError):
        handle.storage_listers.storage_class("standard")


def test_engine_runs_leave_the_framework_unbound_and_independent() -> None:
    """An Engine reuses its framework across clusters: no run writes into the handle (the
    storage listers of one cluster never leak into the next run), and a run repeated after
    another gives the same outcome."""
    engine = Engine()
    gpu = _example("gpu-cluster.yaml")
    ebs = _example("ebs-volume-limits.yaml")
    first = _summary(engine.simulate(gpu))
    volumes = engine.simulate(ebs)
    db = [o for o in volumes.outcomes if o.pod.name.startswith("db-")]
    assert sum(o.node_name is not None for o in db) == 47  # README: "47 of 50 database pods fit"
    assert _summary(engine.simulate(gpu)) == first
    assert _summary(Engine().simulate(gpu)) == first
    h = engine.framework.handle
    assert h.storage_listers.delegate is None and h.shared_lister.delegate is None


def test_cluster_from_manifests_keeps_every_kind() -> None:
    """The DRA, CSI and storage objects of the input reach the run's snapshot."""
    cluster = _example("gpu-cluster.yaml")
    assert [n.name for n in cluster.nodes] == ["gpu-node-1", "gpu-node-2"]
    assert len(cluster.resource_slices) == 2 and len(cluster.resource_claims) == 2
    assert [t.name for t in cluster.resource_claim_templates] == ["one-gpu"]
    snap, _ = Engine().snapshot(cluster)
    assert {s.name for s in snap.list_resource_slices()} == {
        s.name for s in cluster.resource_slices
    }
    ebs = _example("ebs-volume-limits.yaml")
    snap, _ = Engine().snapshot(ebs)
    assert len(snap.list_csi_nodes()) == len(ebs.csi_nodes) > 0
    assert len(snap.storage_listers.persistent_volume_claims) == len(ebs.persistent_volume_claims)
    assert pickle.loads(pickle.dumps(cluster)) == cluster


def test_engine_config_is_frozen_and_picklable() -> None:
    """An EngineConfig is plain data: equal after a pickle round trip, immutable."""
    cfg = EngineConfig(
        feature_gates={"DRAPrioritizedList": False},
        plugins=["schedsim_plugins.nodeports:NodePorts"],
        store="basic",
    )
    assert cfg.feature_gates == (("DRAPrioritizedList", False),)
    assert pickle.loads(pickle.dumps(cfg)) == cfg
    with pytest.raises(AttributeError):
        cfg.store = "delta"  # type: ignore[misc]
    with pytest.raises(ValueError, match="store: expected one of basic, delta"):
        EngineConfig(store="fast")
    with pytest.raises(KeyError, match="unknown feature gate 'NoSuchGate'"):
        EngineConfig(feature_gates={"NoSuchGate": True})


def _simulate_in_worker(config: EngineConfig, cluster: Cluster) -> list[object]:
    return list(_summary(Engine(config).simulate(cluster)))


def test_engine_config_and_cluster_ship_to_a_worker_process() -> None:
    """A config and a cluster pickled to a fresh (spawned) worker give the same outcome there
    as here: what replay and sweeps rely on."""
    config = EngineConfig(store="basic")
    cluster = _example("gpu-cluster.yaml")
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=ctx) as pool:
        there = pool.submit(_simulate_in_worker, config, cluster).result(timeout=120)
    assert there == list(_summary(Engine(config).simulate(cluster)))


def test_snapshot_from_manifests_keeps_dra_objects() -> None:
    """`schedsim.testing.snapshot_from_manifests` gives plugins the input's DeviceClasses,
    ResourceClaims and ResourceSlices: a pod using a claim is scheduled and the claim
    allocated (before, every DRA object was dropped and the claim was "not found")."""
    snap, pending = snapshot_from_manifests(dra_cluster_text("n1"))
    [pod] = pending
    assert snap.get_resource_claim("default", "gpu") is not None
    assert snap.schedule_pod_on_any_node_matching(pod) == "n1"
    claim = snap.get_resource_claim("default", "gpu")
    assert claim is not None and claim.status.allocation is not None
    assert [r.device for r in claim.status.allocation.results] == ["gpu-n1"]
    with snap.bound():  # a plugin's hooks called directly read the same state
        manager = snap.framework.handle.dra_manager
        assert manager.get_resource_claim("default", "gpu") == claim


def test_cluster_keeps_every_kind_manifests_keeps() -> None:
    """One place where manifests become a Cluster: every object list of `Manifests` is a
    Cluster field (a kind added to the loader and not to the Cluster fails here)."""
    kept = {f.name for f in attrs.fields(Manifests) if f.init and f.name != "skipped"}
    assert kept <= {f.name for f in attrs.fields(Cluster)}
