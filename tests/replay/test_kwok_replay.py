"""Issue 28: ``schedsim replay`` applies a KWOK recording's ResourcePatch timeline on its
virtual clock (`schedsim.replay.recording`), and ``simulate`` on the same file runs the
objects as recording started.

The recording (data/kwok-replay-record.yaml, hand-written in ``kwokctl snapshot record``'s
format: sigs.k8s.io/kwok pkg/apis/action/v1alpha1 ResourcePatch) has node n1 (2 CPU) and
pending pod a (1.5 CPU) at the start, then:

=====  ===========================================================================
 5 s   create pod b (1 CPU): n1 has 0.5 CPU free -> unschedulable (Insufficient cpu)
10 s   create node n2 (2 CPU): NodeAdd, which NodeResourcesFit registers -> b on n2
10.2s  patch b spec.nodeName (the recorded scheduler's binding): not applied
15 s   patch n1: label dedicated=x, taint dedicated=x:NoSchedule (+ a condition)
20 s   create pod c (0.5 CPU): n1 untolerated taint, n2 has 1 CPU -> c on n2
21 s   patch c metadata.labels: not applied (named in the warning)
22 s   patch Deployment web: not applied (named in the warning)
25 s   patch a status.phase Succeeded: a leaves n1
30 s   create pod d (1.5 CPU): n1 tainted, n2 has 0.5 CPU -> unschedulable
40 s   patch n1 spec.taints null: NodeTaintChange, which TaintToleration registers and
       its hint queues (the taint d did not tolerate is gone) -> d on n1 (2 CPU free)
50 s   delete pod b: it leaves n2
60 s   delete node n2: c, bound there, is deleted (the pod garbage collector deletes pods
       bound to a node that no longer exists: pkg/controller/podgc gcOrphaned)
=====  ===========================================================================
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schedsim.api.core import Node
from schedsim.api.core.taints import Taint
from schedsim.cli import main
from schedsim.replay import Replay, trace_from_paths
from schedsim.replay.loop import node_update_events

RECORD = Path(__file__).parent / "data" / "kwok-replay-record.yaml"

WARNING = (
    f"{RECORD}: KWOK recording: 12 ResourcePatch change(s) over 60s: to apply on the replay's "
    "clock: 1 node-create, 1 node-delete, 2 node-update, 3 pod-create, 1 pod-delete, "
    "1 pod-finish (a change the cluster cannot take then is named when it comes); "
    "1 pod binding/status change(s) of the recorded scheduler and kubelet not "
    "applied (the replay schedules and runs the pods itself); pod field changes not applied: "
    "metadata.labels (1); not applied: 1 patch deployments.apps (a controller acts through "
    "the pods it creates and deletes, which are in the recording)"
)

# kube-scheduler 1.34's FitError text (framework.FitError.Error: reasons sorted, then the
# PostFilter's message from DefaultPreemption)
B_AT_5 = (
    "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, preemption: "
    "0/1 nodes are available: "
    "1 No preemption victims found for incoming pod."
)
D_AT_30 = (
    "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s). "
    "no new claims to deallocate, preemption: 0/2 nodes are available: 1 No "
    "preemption victims found for "
    "incoming pod, 1 Preemption is not helpful for scheduling."
)

# time -> (pending, running pod -> node, nodes)
EXPECTED = {
    0: ((), {"default/a": "n1"}, {"n1"}),
    5: (("default/b",), {"default/a": "n1"}, {"n1"}),
    10: ((), {"default/a": "n1", "default/b": "n2"}, {"n1", "n2"}),
    15: ((), {"default/a": "n1", "default/b": "n2"}, {"n1", "n2"}),
    20: ((), {"default/a": "n1", "default/b": "n2", "default/c": "n2"}, {"n1", "n2"}),
    25: ((), {"default/b": "n2", "default/c": "n2"}, {"n1", "n2"}),
    30: (("default/d",), {"default/b": "n2", "default/c": "n2"}, {"n1", "n2"}),
    40: ((), {"default/b": "n2", "default/c": "n2", "default/d": "n1"}, {"n1", "n2"}),
    50: ((), {"default/c": "n2", "default/d": "n1"}, {"n1", "n2"}),
    60: ((), {"default/d": "n1"}, {"n1"}),
}


def test_the_recorded_timeline_is_applied_at_its_times() -> None:
    trace = trace_from_paths([str(RECORD)])
    assert trace.warnings == (WARNING,)
    assert [(c.time, c.action, c.key) for c in trace.recorded] == [
        (5.0, "pod-create", "default/b"),
        (10.0, "node-create", "n2"),
        (15.0, "node-update", "n1"),
        (20.0, "pod-create", "default/c"),
        (25.0, "pod-finish", "default/a"),
        (30.0, "pod-create", "default/d"),
        (40.0, "node-update", "n1"),
        (50.0, "pod-delete", "default/b"),
        (60.0, "node-delete", "n2"),
    ]
    replay = Replay(trace)
    messages = {}
    for t, (pending, running, nodes) in EXPECTED.items():
        replay.run_until(t)
        state = replay.state()
        assert (state.pending, state.running, set(state.nodes)) == (pending, running, nodes), t
        messages[t] = replay.metrics().unschedulable
    assert messages[5] == {"default/b": B_AT_5}
    assert messages[30] == {"default/d": D_AT_30}
    metrics = replay.run()
    assert replay.done and replay.now == 60.0
    # a at 0 (bound at 0), b 5 -> 10, c 20 -> 20, d 30 -> 40
    assert metrics.latencies == {
        "default/a": 0.0,
        "default/b": 5.0,
        "default/c": 0.0,
        "default/d": 10.0,
    }
    assert (metrics.arrivals, metrics.completed, metrics.evicted) == (4, 1, 0)
    assert [(n.name, n.added, n.removed) for n in metrics.nodes] == [
        ("n1", 0.0, None),
        ("n2", 10.0, 60.0),
    ]
    assert replay.warnings == [WARNING]


def test_replay_cli_runs_the_recording(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["replay", str(RECORD), "-o", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert err == f"warning: {WARNING}\n"
    doc = json.loads(out)
    summary = doc["summary"]
    assert (summary["arrivals"], summary["scheduled"], summary["completed"]) == (4, 4, 1)
    assert (summary["pendingAtEnd"], summary["simulatedSeconds"]) == (0, 60.0)
    assert doc["unschedulable"] == {}


def test_simulate_uses_the_objects_as_recording_started(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["simulate", str(RECORD), "-o", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    doc = json.loads(out)
    placed = {f"{p['namespace']}/{p['name']}": p["node"] for p in doc["pods"]}
    assert placed == {"default/a": "n1"}  # only the recorded objects: n1 and pod a
    assert doc["summary"]["nodes"] == 1
    assert [w["message"] for w in doc["warnings"]] == [
        f"{RECORD}: KWOK recording: 12 ResourcePatch change(s) (4 create, 6 patch, 2 delete) "
        "over 60s after the recorded objects are not applied: the run is the cluster as "
        "recording started (schedsim replay applies them)"
    ]


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "rec.yaml"
    path.write_text(RECORD.read_text() + text)
    return path


def test_a_node_patch_for_an_unrecorded_node_is_an_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = _write(
        tmp_path,
        "---\napiVersion: action.kwok.x-k8s.io/v1alpha1\nkind: ResourcePatch\n"
        "resource: {version: v1, resource: nodes}\ntarget: {name: n9}\n"
        "durationNanosecond: 70000000000\nmethod: patch\ntemplate: {spec: {unschedulable: true}}\n",
    )
    code = main(["replay", str(path)])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err == (
        f"schedsim: error: {path}: ResourcePatch (document 15): patch nodes n9 at 70s: target: "
        "node 'n9' is not among the recorded nodes (neither in the objects nor created "
        "before)\n"
    )


def test_a_created_pod_the_api_server_refuses_is_an_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = _write(
        tmp_path,
        "---\napiVersion: action.kwok.x-k8s.io/v1alpha1\nkind: ResourcePatch\n"
        "resource: {version: v1, resource: pods}\ntarget: {name: e, namespace: default}\n"
        "durationNanosecond: 70000000000\nmethod: create\n"
        "template: {apiVersion: v1, kind: Pod, metadata: {name: e, namespace: default}, "
        "spec: {containers: [{name: c, image: i, resources: {requests: {cpu: -1}}}]}}\n",
    )
    code = main(["replay", str(path)])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err == (
        f"schedsim: error: {path}: ResourcePatch (document 15): create pods default/e at "
        '70s: Pod default/e: spec.containers[0].resources.requests[cpu]: quantity "-1": must '
        "be greater than or equal to 0\n"
    )


def test_a_recorded_pod_that_exists_is_a_warning(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "---\napiVersion: action.kwok.x-k8s.io/v1alpha1\nkind: ResourcePatch\n"
        "resource: {version: v1, resource: pods}\ntarget: {name: d, namespace: default}\n"
        "durationNanosecond: 70000000000\nmethod: create\n"
        "template: {apiVersion: v1, kind: Pod, metadata: {name: d, namespace: default}, "
        "spec: {containers: [{name: c, image: i}]}}\n",
    )
    replay = Replay(trace_from_paths([str(path)]))
    replay.run()
    assert replay.warnings[-1] == (
        f"{path}: ResourcePatch (document 15): create pods default/d at 70s: pod default/d "
        "exists in the replay; not applied"
    )
    assert replay.state().running == {"default/d": "n1"}


def test_a_pod_created_bound_runs_on_its_node(tmp_path: Path) -> None:
    """A pod created with spec.nodeName (a static pod's mirror, made by the kubelet) is not
    scheduled: it runs on its node from its creation."""
    path = _write(
        tmp_path,
        "---\napiVersion: action.kwok.x-k8s.io/v1alpha1\nkind: ResourcePatch\n"
        "resource: {version: v1, resource: pods}\ntarget: {name: m, namespace: default}\n"
        "durationNanosecond: 70000000000\nmethod: create\n"
        "template: {apiVersion: v1, kind: Pod, metadata: {name: m, namespace: default}, "
        "spec: {nodeName: n1, containers: [{name: c, image: i, "
        "resources: {requests: {cpu: 100m}}}]}}\n",
    )
    replay = Replay(trace_from_paths([str(path)]))
    metrics = replay.run()
    assert replay.state().running == {"default/d": "n1", "default/m": "n1"}
    assert metrics.latencies["default/m"] == 0.0 and replay.now == 70.0


def _node(**kw: object) -> Node:
    return Node(name="n", **kw)  # type: ignore[arg-type]


def test_node_update_events_follow_kube_scheduler() -> None:
    """pkg/scheduler/eventhandlers.go nodeSchedulingPropertiesChange (1.34): unschedulable
    only when the node becomes schedulable, then allocatable, labels, taints, annotations."""
    taint = Taint(key="k", value="v", effect="NoSchedule")
    old = _node(unschedulable=True, labels={"a": "1"}, taints=(taint,))
    new = _node(unschedulable=False, labels={"a": "2"}, allocatable={"cpu": 1000})
    assert [e.label for e in node_update_events(old, new)] == [
        "NodeSpecUnschedulableChange",
        "NodeAllocatableChange",
        "NodeLabelChange",
        "NodeTaintChange",
    ]
    # cordoning is no event: no pod becomes schedulable by it
    assert node_update_events(_node(), _node(unschedulable=True)) == []
    assert [e.label for e in node_update_events(_node(), _node(annotations={"x": "y"}))] == [
        "NodeAnnotationChange"
    ]
