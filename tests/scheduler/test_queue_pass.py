"""`simulate` through kube-scheduler's queue (issue 14 item 2), on both stores."""

from __future__ import annotations

import pytest

from schedsim.engine import Cluster, Engine, EngineConfig
from schedsim.testing import StoreFactory

ONE_SLOT = """apiVersion: v1
kind: Node
metadata: {name: n1}
status: {capacity: {cpu: "2", memory: 4Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: early-low, creationTimestamp: "2024-01-01T00:00:00Z"}
spec: {priority: 0, containers: [{name: c, resources: {requests: {cpu: 2}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: late-high, creationTimestamp: "2024-01-02T00:00:00Z"}
spec: {priority: 1000, containers: [{name: c, resources: {requests: {cpu: 2}}}]}
"""


@pytest.mark.parametrize("placement", ["kube-scheduler", "first-fit"])
def test_two_pods_competing_for_one_slot_go_in_priority_order(
    store_name: str, placement: str
) -> None:
    """Issue 14 "Done when": two pods competing for one slot go in priority order
    (PrioritySort, scheduling_queue_test.go TestPriorityQueue_Pop): the later, higher-priority
    pod is popped first and takes n1; the other fails once on NodeResourcesFit and, with no
    event that could help it (a bound pod is AssignedPodAdd, which NodeResourcesFit does not
    register), is not retried: attempts 1 each."""
    cluster = Cluster.from_text(ONE_SLOT, "one-slot.yaml")
    result = Engine(EngineConfig(store=store_name)).simulate(cluster, placement=placement)
    got = {o.pod.name: (o.node_name, o.attempts) for o in result.outcomes}
    assert got == {"late-high": ("n1", 1), "early-low": (None, 1)}
    low = next(o for o in result.outcomes if o.pod.name == "early-low")
    message = "0/1 nodes are available: 1 Insufficient cpu."
    if placement == "kube-scheduler":  # then PostFilter: the higher pod is no victim
        message += (
            " no new claims to deallocate, preemption: 0/1 nodes are available: 1 No preemption"
            " victims found for incoming pod."
        )
    assert low.message == message


def test_node_added_in_a_what_if_requeues_the_pod_that_did_not_fit(store: StoreFactory) -> None:
    """The pass driven step by step (as a replay does): "b" does not fit n1 and is parked
    (NodeResourcesFit); a node added to the snapshot is the NodeAdd event, which
    NodeResourcesFit registers: "b" goes back to the queue and lands on n2 (attempt 2).
    Mirrors scheduling_queue_test.go's NodeAdd move and kube-scheduler's requeue on node add."""
    from schedsim.framework import Framework, Handle, default_profile
    from schedsim.framework.events import NODE_ADD
    from schedsim.scheduler import Scheduler
    from schedsim.scheduler.scheduling import SchedulingPass
    from schedsim.snapshot import NodeInfo, PredicateSnapshot
    from schedsim.testing.snapshot_conformance import make_node, make_pod

    snap = PredicateSnapshot(
        Framework(default_profile(), Handle()), store(), skip_unschedulable_nodes=False
    )
    snap.set_cluster_state([make_node("n1", cpu="1")], [])
    run = SchedulingPass({"default-scheduler": Scheduler(snap)})
    a, b = make_pod("a", cpu="1", priority=1), make_pod("b", cpu="1")
    run.add(a)
    run.add(b)
    assert run.schedule_ready() == 2
    assert (run.outcome(a).node_name, run.outcome(b).node_name) == ("n1", None)
    n2 = make_node("n2", cpu="1")
    snap.add_node_info(NodeInfo(n2))
    run.queue.move_all_to_active_or_backoff(NODE_ADD, None, n2)
    run.advance_to(5.0)
    assert run.schedule_ready() == 1
    assert (run.outcome(b).node_name, run.outcome(b).attempts) == ("n2", 2)
