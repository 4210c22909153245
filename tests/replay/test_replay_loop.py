"""`Replay`: the Cluster Autoscaler on a virtual clock. Expected times follow CA's documented
flags and defaults (cluster-autoscaler FAQ, "What are the parameters to CA?" and "How does
scale-down work?": --scan-interval 10s, --scale-down-unneeded-time 10m,
--scale-down-delay-after-add 10m, --max-node-provision-time 15m, a node group backs off after
a failed scale-up) and kube-scheduler's behaviour (a pending pod is retried when a node is
added or a pod leaves a node)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from replay_scenarios import NODE_GROUPS, TAIL_POD, burst_trace

from schedsim.api.core import Pod
from schedsim.autoscaler.nodegroups import parse_node_groups
from schedsim.engine import Cluster
from schedsim.replay import AutoscalerOptions, Replay, manifest_trace, trace_from_paths
from schedsim.replay.export import metrics_to_csv, metrics_to_json
from schedsim.snapshot.errors import SchedulingError


def _replay(text: str, options: AutoscalerOptions | None = None, **kw: object) -> Replay:
    trace = manifest_trace(Cluster.from_text(text, "trace.yaml"))
    groups = parse_node_groups(yaml.safe_load(NODE_GROUPS), "groups.yaml")
    return Replay(trace, groups, options=options, **kw)  # type: ignore[arg-type]


def test_burst_scales_up_then_down_ten_minutes_after_it_drains() -> None:
    """A burst of 6 two-CPU pods at t=60 on a 4-CPU node running 1 CPU: one pod fits there,
    the other 5 are unschedulable and the loop at t=60 asks for 3 burst nodes (binpacking: 2
    pods per 4-CPU node); they are ready 60s later (the provisioning delay) and the pods
    bind at t=120 (2, 2 and 1 pods). burst-2, one 2-CPU pod of 4, is exactly at the
    utilization threshold (0.5), a candidate as in CA 1.34 (isNodeAtOrBelowUtilizationThreshold);
    its pod can move to base once the burst pod there completes at t=360, so it is unneeded
    from then and deleted at t=960, after --scale-down-unneeded-time (10m); the other pods
    complete at t=420 (5m), burst-0 and burst-1 are unneeded from then and deleted at t=1020;
    the base group stays at its min size."""
    r = _replay(burst_trace())
    m = r.run()
    ups = [e for e in m.events if e.kind == "scale-up"]
    downs = [e for e in m.events if e.kind == "scale-down"]
    assert [(e.time, e.group, e.nodes) for e in ups] == [
        (60.0, "burst", ("burst-0", "burst-1", "burst-2"))
    ]
    assert sorted(p for p in ups[0].pods) == [f"default/burst-{i}" for i in range(1, 6)]
    assert [(e.time, e.nodes) for e in downs] == [
        (960.0, ("burst-2",)),
        (1020.0, ("burst-0",)),
        (1020.0, ("burst-1",)),
    ]
    assert all("unneeded for 10m0s" in e.reason and "empty" in e.reason for e in downs)
    by_time = {s.time: s for s in m.samples}
    assert by_time[60.0].pending == 5 and by_time[60.0].nodes["burst"] == 0
    assert by_time[60.0].upcoming["burst"] == 3  # sampled after the loop of that instant
    assert by_time[120.0].nodes["burst"] == 3 and by_time[120.0].running == 7
    # samples are recorded when something changed: the last one before the scale-down
    assert max(t for t in by_time if t < 960.0) == 420.0
    assert by_time[420.0].nodes["burst"] == 3 and by_time[420.0].running == 1
    assert m.samples[-1].nodes == {"base": 1, "burst": 0}
    assert m.latencies["default/burst-1"] == 60.0  # waited for the new node
    assert m.latencies["default/burst-0"] == 0.0  # fit on the base node at once
    # the loop after the deletions finds nothing left to do: the replay ends there
    assert m.end == 1030.0 and r.done
    # node-hours: base to the end, burst 2 nodes x 900 s + 840 s; cost at 0.2 and 0.5 per hour
    assert m.node_hours() == pytest.approx({"base": 1030 / 3600, "burst": 2640 / 3600})
    assert m.summary()["totalCost"] == pytest.approx(0.2 * 1030 / 3600 + 0.5 * 2640 / 3600)
    assert m.samples[-1].cost == pytest.approx(m.summary()["totalCost"])


def test_scale_down_waits_for_the_delay_after_add() -> None:
    """With --scale-down-unneeded-time 1m the burst nodes (drained at t=150) would go at
    t=210, but scale-down is in cooldown until --scale-down-delay-after-add (10m) after the
    scale-up at t=60: they are deleted at t=660 (CA isScaleDownInCooldown)."""
    options = AutoscalerOptions(scale_down_unneeded_time=60.0)
    m = _replay(burst_trace(duration="30s"), options).run()
    downs = [e for e in m.events if e.kind == "scale-down"]
    assert {e.time for e in downs} == {660.0}
    assert len(downs) == 3


def test_max_scale_down_parallelism_limits_deletions_per_loop() -> None:
    """--max-scale-down-parallelism 1: burst-2 goes alone at t=960 (the burst test above);
    of burst-0 and burst-1, both unneeded for 10m at t=1020, one goes then, the other after
    --scale-down-delay-after-delete (default: the scan interval)."""
    options = AutoscalerOptions(max_scale_down_parallelism=1)
    m = _replay(burst_trace(), options).run()
    assert [e.time for e in m.events if e.kind == "scale-down"] == [960.0, 1020.0, 1030.0]


def test_node_not_ready_in_time_is_given_up_and_its_group_backs_off() -> None:
    """A node that takes 20m to provision is given up after --max-node-provision-time (15m)
    and its group backs off for --initial-node-group-backoff-duration (5m): the next
    scale-up for the still pending pods comes 5m later (one failed scale-up, one backoff,
    however many nodes it asked for)."""
    options = AutoscalerOptions(node_provision_delay=1200.0)
    r = _replay(burst_trace(), options, until=1300.0)
    m = r.run()
    kinds = [(e.time, e.kind, len(e.nodes)) for e in m.events]
    assert kinds[:4] == [
        (60.0, "scale-up", 3),
        (960.0, "scale-up-timeout", 1),
        (960.0, "scale-up-timeout", 1),
        (960.0, "scale-up-timeout", 1),
    ]
    # meanwhile the base node ran the pending pods one at a time (each 5m): one is left
    assert [t for t, k, _ in kinds if k == "scale-up"] == [60.0, 1260.0]
    assert "backs off for 5m0s" in m.events[1].reason


def test_scale_ups_that_can_never_succeed_end_the_replay() -> None:
    """Nodes that take 20m to provision against --max-node-provision-time 15m: every new
    node is given up and its group backs off (5m, then longer: CA's exponential node
    group backoff), and CA would retry for ever. A 4-CPU pod that only a new node can take
    (the base node's 1-CPU pod runs for ever): once nothing else can happen, the replay
    ends after the first timeout with the pod listed pending (retries would fail the same
    way), not at ``until``, and a warning says why. It never ended before (the issue-30
    re-attack's repro)."""
    options = AutoscalerOptions(node_provision_delay=1200.0)
    r = _replay(burst_trace(pods=1, cpu="4"), options)
    r.run_until(6 * 3600.0)  # (never ending before: bounded here)
    assert r.step() is False  # ended
    m = r.metrics()
    assert [(e.time, e.kind) for e in m.events] == [(60.0, "scale-up"), (960.0, "scale-up-timeout")]
    assert m.end == 960.0
    assert list(m.unschedulable) == ["default/burst-0"]
    assert any(
        w.startswith("--node-provision-delay 20m0s is longer than --max-node-provision-time 15m0s")
        for w in r.warnings
    )


def test_pod_no_group_can_take_stays_pending_with_reasons() -> None:
    """A pod larger than every template triggers no scale-up (CA: NotTriggerScaleUp) and is
    reported with kube-scheduler's message and each group's reason."""
    text = burst_trace(pods=1, cpu="8")
    m = _replay(text).run()
    assert not [e for e in m.events if e.kind == "scale-up"]
    why = m.unschedulable["default/burst-0"]
    assert why.startswith("0/1 nodes are available: 1 Insufficient cpu.")
    assert "burst: wouldn't fit: Insufficient cpu" in why


def test_same_input_same_replay() -> None:
    """Deterministic: two replays of one trace give byte-identical JSON and CSV."""
    a = _replay(burst_trace()).run()
    b = _replay(burst_trace()).run()
    assert metrics_to_json(a) == metrics_to_json(b)
    assert metrics_to_csv(a) == metrics_to_csv(b)


def test_step_and_inspect() -> None:
    """`run_until` stops at a time; `state` shows pending pods and upcoming nodes."""
    r = _replay(burst_trace())
    r.run_until(60.0)
    s = r.state()
    assert s.time == 60.0
    assert s.upcoming == {"burst-0": "burst", "burst-1": "burst", "burst-2": "burst"}
    assert len(s.pending) == 5
    r.run_until(120.0)
    s = r.state()
    assert s.pending == () and not s.upcoming
    assert s.nodes == {"base-1": "base", "burst-0": "burst", "burst-1": "burst", "burst-2": "burst"}
    assert s.running["default/burst-3"].startswith("burst-")
    assert r.step() and r.now > 120.0
    assert r.metrics().end == r.now


def test_scale_down_disabled_keeps_nodes() -> None:
    """--scale-down-enabled=false: the burst nodes stay; the replay ends when nothing else
    can happen."""
    m = _replay(burst_trace(), AutoscalerOptions(scale_down_enabled=False)).run()
    assert not [e for e in m.events if e.kind == "scale-down"]
    assert m.samples[-1].nodes["burst"] == 3


def test_without_node_groups_no_autoscaling() -> None:
    """No node groups: pods that do not fit stay pending; the replay ends with the trace."""
    trace = manifest_trace(Cluster.from_text(burst_trace(), "trace.yaml"))
    m = Replay(trace).run()
    assert m.events == ()
    assert len(m.unschedulable) == 0  # they all ran, one after the other, on the base node
    assert m.completed == 7
    assert max(m.latencies.values()) > 300.0


def test_evicted_pods_are_rescheduled() -> None:
    """A long-running 500m pod arriving at t=130 lands on the least allocated node (the
    burst node holding one 2-CPU pod: NodeResourcesFit's LeastAllocated score). After the
    burst drains, that node is under the utilization threshold (0.125 < 0.5) and its pod
    fits on the base node, so it is unneeded like the empty ones; deleting it evicts the
    pod, which kube-scheduler places on the base node (CA drains a node it removes)."""
    text = burst_trace() + TAIL_POD.format(created="2025-01-01T00:02:10Z")
    r = _replay(text)
    m = r.run()
    downs = [e for e in m.events if e.kind == "scale-down"]
    assert len(downs) == 3 and {e.time for e in downs} == {1020.0}
    carrying = [e for e in downs if e.pods]
    assert [e.pods for e in carrying] == [("default/tail",)]
    assert "its 1 pod(s) fit elsewhere" in carrying[0].reason
    assert m.evicted == 1
    assert r.bound["default/tail"] == "base-1"
    assert m.latencies["default/tail"] == 0.0  # latency is to the first binding


def test_bad_options() -> None:
    """Durations must be finite and >= 0, the scan interval > 0, thresholds in [0, 1]."""
    with pytest.raises(ValueError, match="scan_interval"):
        AutoscalerOptions(scan_interval=0)
    with pytest.raises(ValueError, match="scale_down_unneeded_time"):
        AutoscalerOptions(scale_down_unneeded_time=-1)
    with pytest.raises(ValueError, match="threshold"):
        AutoscalerOptions(scale_down_utilization_threshold=1.5)
    with pytest.raises(ValueError, match="expander"):
        AutoscalerOptions(expander="random")
    with pytest.raises(ValueError, match=r"^max_nodes_per_scaleup: must be >= 0, got -1$"):
        AutoscalerOptions(max_nodes_per_scaleup=-1)
    with pytest.raises(ValueError, match=r"^scale_down_delay_after_delete: "):
        AutoscalerOptions(scale_down_delay_after_delete=-1)


def test_shipped_files_unchanged(tmp_path: Path) -> None:
    """Inputs are never modified: the trace text read is the text left."""
    p = tmp_path / "trace.yaml"
    p.write_text(burst_trace())
    before = p.read_text()
    Replay(trace_from_paths([str(p)])).run()
    assert p.read_text() == before


PICKY_POD = """\
---
apiVersion: v1
kind: Pod
metadata:
  name: picky
  creationTimestamp: "2025-01-01T00:00:00Z"
  ownerReferences: [{apiVersion: batch/v1, kind: Job, name: picky, uid: picky, controller: true}]
spec:
  nodeSelector: {pool: gpu}
  containers: [{name: c, image: x, resources: {requests: {cpu: 100m, memory: 64Mi}}}]
"""


def test_queue_retries_a_parked_pod_only_for_its_plugins_events_and_the_flush() -> None:
    """kube-scheduler's queue in the replay: ``picky`` (nodeSelector pool=gpu, no such node)
    is rejected by NodeAffinity, which registers only Node Add/UpdateNodeLabel with a hint
    that skips nodes not matching the pod (NodeAffinity ``EventsToRegister`` /
    ``isSchedulableAfterNodeChange``): neither the burst pods completing (AssignedPodDelete)
    nor the three burst nodes added at t=120 (pool=burst) move it. Only
    ``flushUnschedulablePodsLeftover`` does, which runs every 30 s and moves pods parked
    longer than podMaxInUnschedulablePodsDuration (5m, strictly longer): attempts at 0, 330,
    660 and 990 while the replay runs (it ends at 1030). The burst pods, rejected by
    NodeResourcesFit (AssignedPod Delete, Node Add), are retried on those events and bind at
    t=120 as before."""
    r = _replay(burst_trace() + PICKY_POD)
    m = r.run()
    assert m.end == 1030.0
    assert r.scheduling.attempts["default/picky"] == 4
    assert r.scheduling.queue.unschedulable_len == 1
    assert m.latencies["default/burst-1"] == 60.0
    assert "node(s) didn't match Pod's node affinity/selector" in m.unschedulable["default/picky"]


def test_queue_flush_alone_does_not_keep_the_replay_going() -> None:
    """Without node groups a parked pod no event can help leaves nothing to wait for: the
    replay ends with the trace's last event (t=1860: six 2-CPU pods of 5m one after the other
    on the base node from t=60) rather than flushing for ever; the flush ran at 330, 660,
    990, 1320 and 1650 meanwhile."""
    trace = manifest_trace(Cluster.from_text(burst_trace() + PICKY_POD, "trace.yaml"))
    r = Replay(trace)
    m = r.run()
    assert m.end == 1860.0
    assert r.scheduling.attempts["default/picky"] == 6
    assert list(m.unschedulable) == ["default/picky"]


def test_pod_failing_with_an_error_is_reported_not_dropped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An attempt that ends with an Error status (a plugin failed; kube-scheduler's
    ``handleSchedulingFailure`` with an Error) leaves the pod out of the queue; the replay
    names it in `Replay.failed` and a warning instead of losing it silently."""
    r = _replay(burst_trace(pods=1))
    original = r.scheduler.schedule_one

    def schedule_one(pod: Pod, **kw: object) -> object:
        if pod.name == "burst-0":
            raise SchedulingError.internal(pod, "boom")
        return original(pod, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(r.scheduler, "schedule_one", schedule_one)
    m = r.run()
    assert list(r.failed) == ["default/burst-0"] and "boom" in r.failed["default/burst-0"]
    assert any(
        w.startswith("pod default/burst-0: scheduling failed with an error at 60s")
        for w in r.warnings
    )
    assert m.completed == 1 and "default/burst-0" not in r.bound


def test_listed_node_the_cluster_lacks_is_a_warning() -> None:
    """As scale-up and scale-down warn (docs/cli.md, the node-groups file): a node a group
    lists by name that the trace's cluster lacks is a warning, not silent (fresh-user
    finding)."""
    trace = manifest_trace(Cluster.from_text(burst_trace(), "trace.yaml"))
    doc = yaml.safe_load(NODE_GROUPS)
    doc["nodeGroups"][0]["nodes"] = ["ghost"]
    r = Replay(trace, parse_node_groups(doc, "groups.yaml"))
    assert 'nodeGroups[0].nodes: node "ghost" is not in the cluster' in r.warnings


TAIL_JOB = """\
---
apiVersion: batch/v1
kind: Job
metadata: {{name: tail, namespace: default}}
spec:
  completions: 1
{limit}  template:
    metadata: {{creationTimestamp: "2025-01-01T00:02:10Z"}}
    spec:
      restartPolicy: Never
      containers: [{{name: c, image: x, resources: {{requests: {{cpu: 500m, memory: 256Mi}}}}}}]
"""


@pytest.mark.parametrize("limit", [None, 0])
def test_an_evicted_job_pod_is_a_failed_pod_of_its_job(limit: int | None) -> None:
    """The evicted-pod case with the tail pod a Job's: CA's drain deletes it, which the Job
    controller counts as a failed pod (isPodFailed: deleted and not Succeeded). With the
    default backoffLimit (6) it creates a new pod after the pod failure backoff (10 s: at
    1030), placed on the base node; with backoffLimit 0 the Job is Failed
    (BackoffLimitExceeded) at 1020 and makes none."""
    spec = "" if limit is None else f"  backoffLimit: {limit}\n"
    r = _replay(burst_trace() + TAIL_JOB.format(limit=spec))
    m = r.run()
    assert m.evicted == 1
    pods = sorted((tp.arrival, k) for k, tp in r._pods.items() if k.startswith("default/tail-"))
    if limit is None:
        assert [t for t, _ in pods] == [130.0, 1030.0]
        assert r.bound[pods[1][1]] == "base-1" and pods[0][1] not in r.bound
        assert not r.job_failures
    else:
        assert [t for t, _ in pods] == [130.0]
        assert not any(k.startswith("default/tail-") for k in r.bound)
        assert set(r.job_failures) == {"default/tail"}
        assert any("Failed at 1020s: BackoffLimitExceeded" in w for w in r.warnings)
