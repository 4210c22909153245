"""Sweeps of ``replay`` (traces as an axis) and the columns only some commands measure:
cost, latency percentiles, preemption victims; the 12-scenario replay spec of conftest.py is
equal serially, on the pool and on local Ray, and the HTML report compares its scenarios.

Expected values follow the Cluster Autoscaler's scale-up (FAQ "How does scale-up work?": the
estimator bin-packs pending pods onto template copies up to the group's max size), CA's
scale-down (FAQ "How does scale-down work?": a node unneeded for
--scale-down-unneeded-time, 10m by default, is removed; minSize 0 lets every node go), and
kube-scheduler's preemption (docs "Pod Priority and Preemption": a pending pod of higher
priority evicts lower-priority pods from a node so that it fits; the victims are deleted).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from schedsim.cli import main
from schedsim.sweep import PoolExecutor, ScenarioResult, SerialExecutor, load_spec, run_sweep
from schedsim.sweep.report import sweep_page

NODE_PROVISION_DELAY = 60.0  # replay's default --node-provision-delay


def _rows(results: list[ScenarioResult]) -> dict[str, ScenarioResult]:
    return {r.name: r for r in results}


def test_replay_rows(replay_dir: Path) -> None:
    """The burst trace (six 3-core pods on two 4-core nodes) makes CA add as many nodes as
    scale-up would (capped: 1 under max 3; roomy: one per pod; 8-core: two pods per node);
    the median pod waits one node provisioning (60 s), and in the capped group half the
    pods wait for the first ones to finish (20 min). One hour later every node the pods no
    longer need is gone. The steady trace fits the nodes: no scale-up, no latency. Cost is
    node-hours x price: the 8-core group at twice the price costs twice as much for the
    same nodes. simulate on the same cluster measures neither cost nor latency."""
    rows = _rows(run_sweep(load_spec(str(replay_dir / "replay.yaml")), SerialExecutor()))
    assert len(rows) == 12 and all(r.ok for r in rows.values())
    added = {"capped": 1, "roomy": 4, "large": 2}
    for group, n in added.items():
        r = rows[f"burst+{group}+replay"]
        assert (r.scheduled, r.unschedulable, r.preempted, r.nodes_added) == (6, 0, 0, n)
        assert r.nodes_removed == 2 + n  # minSize 0: the two first nodes go too
        assert r.latency_p50 == NODE_PROVISION_DELAY
        sim = rows[f"burst+{group}+simulate"]
        assert (sim.scheduled, sim.unschedulable, sim.cost, sim.latency_p50) == (2, 4, None, None)
    assert rows["burst+capped+replay"].latency_p99 is not None
    assert rows["burst+capped+replay"].latency_p99 >= 20 * 60
    assert rows["burst+roomy+replay"].latency_p99 == NODE_PROVISION_DELAY
    for group in added:
        r = rows[f"steady+{group}+replay"]
        assert (r.scheduled, r.nodes_added, r.latency_p99) == (2, 0, 0.0)
    capped, large = rows["steady+capped+replay"].cost, rows["steady+large+replay"].cost
    assert capped is not None and large is not None and capped > 0
    assert large == pytest.approx(2 * capped)


def test_twelve_replay_scenarios_serial_pool_ray_and_the_report(replay_dir: Path) -> None:
    """The same rows serially, on a 2-worker pool and on local Ray (when installed); the
    report has one table row per scenario and a bar chart per metric group (pods, nodes,
    cost, latency, wall time)."""
    spec = load_spec(str(replay_dir / "replay.yaml"))
    serial = run_sweep(spec, SerialExecutor())
    pool = run_sweep(spec, PoolExecutor(2))
    assert [r.metrics() for r in pool] == [r.metrics() for r in serial]
    if importlib.util.find_spec("ray") is not None:
        import ray

        from schedsim.sweep.ray import RayExecutor

        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        try:
            on_ray = run_sweep(spec, RayExecutor())
        finally:
            ray.shutdown()
        assert [r.metrics() for r in on_ray] == [r.metrics() for r in serial]
    page = sweep_page(pool, "replay sweep")
    html = page.render()
    assert page.charts == 5
    for r in serial:
        assert f"<td>{r.name}</td>" in html
    assert "latencyP99Seconds" in html and "nodesAdded" in html


PREEMPTION = """
apiVersion: v1
kind: Node
metadata: {name: node-a}
status: {allocatable: {cpu: "4", memory: 16Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: batch, namespace: default}
spec:
  nodeName: node-a
  priority: 0
  containers: [{name: c, image: x, resources: {requests: {cpu: "3", memory: 1Gi}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: urgent, namespace: default, creationTimestamp: "2025-01-01T00:00:00Z"}
spec:
  priority: 1000
  containers: [{name: c, image: x, resources: {requests: {cpu: "2", memory: 1Gi}}}]
"""


def test_preemption_victims_have_a_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 2-core pod of priority 1000 preempts the 3-core priority-0 pod on the only 4-core
    node (kube-scheduler's DefaultPreemption): simulate and replay both count one victim and
    one scheduled pod; scale-down never preempts (0). JSON keys are camelCase, as
    simulate's JSON; the CSV header is the same keys."""
    (tmp_path / "cluster.yaml").write_text(PREEMPTION)
    (tmp_path / "sweep.yaml").write_text(
        "cluster: [cluster.yaml]\ncommands: [simulate, replay, scale-down]\n"
    )
    assert main(["sweep", str(tmp_path / "sweep.yaml"), "--serial", "-o", "json"]) == 0
    rows = {r["scenario"]: r for r in json.loads(capsys.readouterr().out)["scenarios"]}
    assert [(r["scheduled"], r["preempted"]) for r in rows.values()] == [(1, 1), (1, 1), (0, 0)]
    assert all(k[0].islower() and "_" not in k for r in rows.values() for k in r)
    assert main(["sweep", str(tmp_path / "sweep.yaml"), "--serial", "-o", "csv"]) == 0
    header = capsys.readouterr().out.splitlines()[0].split(",")
    assert set(header) - {"command", "status", "error"} <= set(rows["replay"])
