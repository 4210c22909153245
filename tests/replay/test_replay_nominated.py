"""Replay: a pending pod with ``status.nominatedNodeName`` is pending at t = 0, as
``schedsim simulate`` (kube-scheduler placement) has it: the replay counted it as running on
that node from t = 0, without any check (a 2-CPU node then held 3 CPUs).

kube-scheduler 1.34: such a pod is in the scheduling queue (``nominator.addNominatedPod``
reads ``status.nominatedNodeName`` on Add); ``schedulePod`` -> ``findNodesThatFitPod`` runs
Filter on the nominated node alone first (``evaluateNominatedNode``, PreferNominatedNode GA)
and takes it when it passes, without scoring, else filters every node (upstream
``TestSchedulerSchedulePod`` / ``TestFindNodesThatPassFilters`` nominated-node cases).
"""

from __future__ import annotations

from schedsim.engine import Cluster
from schedsim.replay import Replay, manifest_trace


def _node(name: str, cpu: str) -> str:
    return f"""apiVersion: v1
kind: Node
metadata: {{name: {name}}}
status: {{allocatable: {{cpu: "{cpu}", memory: 16Gi, pods: "110"}}}}
---
"""


def _pod(name: str, cpu: str, *, node: str = "", nominated: str = "") -> str:
    spec_node = f"nodeName: {node}, " if node else ""
    status = f"\nstatus: {{phase: Pending, nominatedNodeName: {nominated}}}" if nominated else ""
    container = f'{{name: c, image: x, resources: {{requests: {{cpu: "{cpu}"}}}}}}'
    return f"""apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: default}}
spec: {{{spec_node}containers: [{container}]}}{status}
---
"""


def _replay(text: str) -> Replay:
    return Replay(manifest_trace(Cluster.from_text(text, "trace.yaml")), [])


def test_a_nominated_pod_that_does_not_fit_stays_pending() -> None:
    """A full 2-CPU node and a 1-CPU pod nominated to it: pending (Insufficient cpu), never
    running; the node holds its 2 CPUs only."""
    trace = manifest_trace(
        Cluster.from_text(
            _node("n1", "2") + _pod("running", "2", node="n1") + _pod("nom", "1", nominated="n1"),
            "trace.yaml",
        )
    )
    assert [tp.pod.name for tp in trace.running] == ["running"]
    assert [tp.pod.name for tp in trace.arrivals] == ["nom"]
    r = Replay(trace, [])
    m = r.run()
    assert r.bound == {"default/running": "n1"}
    first = m.samples[0]
    assert (first.time, first.running, first.pending) == (0.0, 1, 1)
    assert first.cpu_requested == 2000
    assert list(m.unschedulable) == ["default/nom"]
    assert "1 Insufficient cpu" in m.unschedulable["default/nom"]


def test_the_nominated_node_is_tried_first() -> None:
    """Two fitting nodes: an unnominated pod goes to the emptier, larger n1 (the default
    scores); the same pod nominated to n2 binds there (evaluateNominatedNode: the nominated
    node passes Filter, so it is chosen without scoring)."""
    nodes = _node("n1", "8") + _node("n2", "4")
    plain = _replay(nodes + _pod("p", "1"))
    plain.run()
    assert plain.bound == {"default/p": "n1"}
    nominated = _replay(nodes + _pod("p", "1", nominated="n2"))
    m = nominated.run()
    assert nominated.bound == {"default/p": "n2"}
    assert list(m.latencies) == ["default/p"] and not m.unschedulable


def test_a_nominated_node_that_no_longer_fits_falls_back_to_the_others() -> None:
    """The nominated node is full: Filter fails there, so every node is filtered and the pod
    binds on the other one (findNodesThatFitPod after evaluateNominatedNode)."""
    r = _replay(
        _node("n1", "2")
        + _node("n2", "2")
        + _pod("running", "2", node="n1")
        + _pod("nom", "1", nominated="n1")
    )
    r.run()
    assert r.bound == {"default/running": "n1", "default/nom": "n2"}
