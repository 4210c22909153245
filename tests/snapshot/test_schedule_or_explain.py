"""`PredicateSnapshot.schedule_pod_or_explain`: kube-scheduler's scheduling cycle in one pass
over the nodes, giving the same FitError as the separate `diagnose` pass."""

from __future__ import annotations

from importlib import resources

from schedsim.api.loading.loader import load_text
from schedsim.framework import FitError, Framework, Handle, PluginTimings, default_profile
from schedsim.scheduler.scheduling import queue_order
from schedsim.snapshot import PredicateSnapshot


def _demo() -> tuple[PredicateSnapshot, PluginTimings, list]:  # type: ignore[type-arg]
    text = resources.files("schedsim.examples").joinpath("demo-cluster.yaml").read_text()
    m = load_text(text, "demo")
    timings = PluginTimings()
    snap = PredicateSnapshot(
        Framework(default_profile(), Handle(), timings=timings), skip_unschedulable_nodes=False
    )
    snap.set_cluster_state(m.nodes, [p for p in m.pods if p.node_name])
    return snap, timings, queue_order(p for p in m.pods if not p.node_name)


def test_fit_errors_match_the_diagnosis_and_cost_one_pass() -> None:
    """For every pod of the demo cluster that fits nowhere, the one-pass FitError equals the
    diagnosis of a separate pass, and each Filter plugin ran at most once per node."""
    snap, timings, pending = _demo()
    nodes = len(snap.list_node_infos())
    unschedulable = 0
    for pod in pending:
        before = dict(timings.calls)
        found = snap.schedule_pod_or_explain(pod)
        calls = {k: timings.calls[k] - before.get(k, 0) for k in timings.calls}
        assert all(n <= nodes for (_, point), n in calls.items() if point == "filter")
        if isinstance(found, FitError):
            unschedulable += 1
            assert found.message == snap.diagnose(pod).message
    assert unschedulable == 2
