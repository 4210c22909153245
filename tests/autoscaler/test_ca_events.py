"""Scale-up and scale-down outcomes in the Cluster Autoscaler's own words (CA 1.34.0, tag
``cluster-autoscaler-1.34.0`` of kubernetes/autoscaler, commit dd28ada7).

Upstream strings asserted verbatim, each with where it is written:

- ``processors/status/eventing_scale_up_processor.go``: line 42 the ``NotTriggerScaleUp``
  event with line 43 ``"pod didn't trigger scale-up: %s"`` of ``ReasonsMessage`` (lines
  63-94: ``fmt.Sprintf("%d %s", count, msg)`` per reason of every rejected and skipped node
  group, joined with ``", "``); line 52 ``TriggeredScaleUp`` with line 53
  ``"pod triggered scale-up: %v"`` of the ScaleUpInfos; line 40: NotTriggerScaleUp only on
  a loop without a scale-up.
- ``processors/nodegroupset/nodegroup_set_processor.go`` line 43: a ScaleUpInfo prints as
  ``"{%v %v->%v (max: %v)}"``.
- ``core/scaleup/orchestrator/skippedreasons.go`` line 43: ``MaxLimitReachedReason`` is
  ``"max node group size reached"``; lines 41 and 45 the backoff and not-ready reasons.
- ``core/scaleup/orchestrator/orchestrator.go`` line 626: a group whose template fails the
  predicates is rejected with the SchedulingError, whose ``Reasons()``
  (``simulator/clustersnapshot/scheduling_error.go`` line 112) are the failing predicate's
  reasons (``Insufficient cpu``).
- ``core/scaledown/actuation/actuator.go`` line 395 ``"marked the node as
  toBeDeleted/unschedulable"``; ``delete_in_batch.go`` line 215 ``"nodes removed by cluster
  autoscaler"``; ``drain.go`` line 228 ``"deleting pod for node scale down"``, all with reason
  ``ScaleDown``.
- ``simulator/cluster.go`` line 67: ``NotAutoscaled``, the reason of a node no node group
  holds (a control-plane node, without a node-groups file).
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from sim_loaded import loaded
from test_scale_up import framework, group, node, pod

from schedsim.api.core import Node
from schedsim.autoscaler import events
from schedsim.autoscaler.scaledown import UnremovableReason, scale_down
from schedsim.autoscaler.scaleup import scale_up
from schedsim.cli import main
from schedsim.snapshot import ClusterSnapshotStore


def test_the_upstream_strings() -> None:
    assert events.MAX_LIMIT_REACHED_REASON == "max node group size reached"
    assert events.BACKOFF_REASON == "in backoff after failed scale-up"
    assert events.NOT_READY_REASON == "not ready for scale-up"
    assert events.NODE_MARKED_MESSAGE == "marked the node as toBeDeleted/unschedulable"
    assert events.NODE_REMOVED_MESSAGE == "nodes removed by cluster autoscaler"
    assert events.POD_EVICTED_MESSAGE == "deleting pod for node scale down"
    assert events.scale_up_info("ng-1", 1, 3, 10) == "{ng-1 1->3 (max: 10)}"
    # %v of a slice of two ScaleUpInfos: brackets, a space between
    assert events.triggered_scale_up_message(["{a 0->1 (max: 2)}", "{b 1->2 (max: 5)}"]) == (
        "pod triggered scale-up: [{a 0->1 (max: 2)} {b 1->2 (max: 5)}]"
    )
    # one count per distinct reason over all groups
    assert events.not_trigger_scale_up_message(
        [("Insufficient cpu",), ("Insufficient cpu", "Insufficient memory")],
        [(events.MAX_LIMIT_REACHED_REASON,)],
    ) == (
        "pod didn't trigger scale-up: 2 Insufficient cpu, 1 Insufficient memory, "
        "1 max node group size reached"
    )


def test_a_pod_no_group_helps_gets_not_trigger_scale_up(
    store: Callable[[], ClusterSnapshotStore],
) -> None:
    """The issue's case: one group at its max size (skipped), one whose template lacks cpu
    (rejected: Insufficient cpu). CA records ``pod didn't trigger scale-up: 1 max node group
    size reached, 1 Insufficient cpu`` in some order (Go map order); schedsim writes the
    rejected groups' reasons first."""
    full = group("full", node("full-t", cpu="4000m"), max_size=1)
    small = group("small", node("small-t", cpu="1000m"), max_size=5)
    nodes = [node("full-0", cpu="4000m", labels={"group": "full"})]
    pods = [
        pod("running", cpu="3900m", node_name="full-0", controller="x"),
        pod("big", cpu="2000m", controller="u"),
    ]
    r = scale_up(*loaded(nodes, pods, framework(), store()), [full, small])
    assert r.chosen is None
    [u] = r.unhelped
    assert u.message == (
        "pod didn't trigger scale-up: 1 Insufficient cpu, 1 max node group size reached"
    )
    assert r.events == (events.Event("Pod", u.pod.key, "Normal", "NotTriggerScaleUp", u.message),)
    # schedsim's own detail stays alongside
    assert u.reasons == {"full": "already at max size 1", "small": "wouldn't fit: Insufficient cpu"}


def test_a_scale_up_records_triggered_scale_up_and_no_not_triggered(
    store: Callable[[], ClusterSnapshotStore],
) -> None:
    g = group("g", node("g-t", cpu="1000m"), max_size=10)
    pods = [
        pod("a", cpu="600m", controller="u"),
        pod("b", cpu="600m", controller="u"),
        pod("huge", cpu="5000m", controller="v"),
    ]
    r = scale_up(*loaded([], pods, framework(), store()), [g])
    assert r.chosen == "g"
    assert [u.pod.name for u in r.unhelped] == ["huge"]  # fits no template...
    msg = "pod triggered scale-up: [{g 0->2 (max: 10)}]"
    # ...but a loop with a scale-up records no NotTriggerScaleUp (line 40)
    assert [(e.name, e.reason, e.message) for e in r.events] == [
        ("default/a", "TriggeredScaleUp", msg),
        ("default/b", "TriggeredScaleUp", msg),
    ]
    assert r.unhelped[0].message == "pod didn't trigger scale-up: 1 Insufficient cpu"


def _control_plane(name: str) -> Node:
    return Node.from_manifest(
        {
            "metadata": {
                "name": name,
                "labels": {
                    "kubernetes.io/hostname": name,
                    "node-role.kubernetes.io/control-plane": "",
                },
            },
            "status": {"allocatable": {"cpu": "1000m", "memory": "1000", "pods": "110"}},
        }
    )


def test_without_node_groups_the_control_plane_is_not_autoscaled(
    store: Callable[[], ClusterSnapshotStore],
) -> None:
    """An empty control-plane node and an empty worker: without node groups the worker is
    removable (schedsim's what-if of every node autoscaled), the control plane is
    NotAutoscaled and named as such. The removal's events are CA's."""
    nodes = [_control_plane("cp"), node("w1")]
    r = scale_down(*loaded(nodes, [], framework(), store()))
    by = {v.node: v for v in r.verdicts}
    assert by["cp"].reason is UnremovableReason.NOT_AUTOSCALED
    assert by["cp"].reason.value == "NotAutoscaled"
    assert by["cp"].detail.startswith(
        "control-plane node (label node-role.kubernetes.io/control-plane): in no node group"
    )
    assert by["w1"].removable
    assert [(e.kind, e.name, e.reason, e.message) for e in r.events] == [
        ("Node", "w1", "ScaleDown", "marked the node as toBeDeleted/unschedulable"),
        ("Node", "w1", "ScaleDown", "nodes removed by cluster autoscaler"),
    ]


def test_scale_down_events_name_each_moved_pod(store: Callable[[], ClusterSnapshotStore]) -> None:
    """a (10% used) is removable, its pod going to b (60% used: not a candidate)."""
    nodes = [node("a"), node("b")]
    pods = [
        pod("p", cpu="100m", node_name="a", controller="rs"),
        pod("q", cpu="600m", node_name="b", controller="rs"),
    ]
    r = scale_down(*loaded(nodes, pods, framework(), store()))
    assert r.removable == ("a",)
    assert [(e.kind, e.name, e.message) for e in r.events] == [
        ("Node", "a", "marked the node as toBeDeleted/unschedulable"),
        ("Pod", "default/p", "deleting pod for node scale down"),
        ("Node", "a", "nodes removed by cluster autoscaler"),
    ]


def test_cli_json_carries_the_messages_and_events(capsys: pytest.CaptureFixture[str]) -> None:
    """The shipped demo: ml/train-2 fits no group; highmem is chosen for another pod."""
    assert main(["scale-up", "-o", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    [entry] = [e for e in doc["noScaleUp"] if e["pod"] == "ml/train-2"]
    assert entry["message"] == (
        "pod didn't trigger scale-up: 2 node(s) didn't match Pod's node affinity/selector, "
        "1 node(s) had untolerated taint(s)"
    )
    assert {e["reason"] for e in doc["events"]} == {"TriggeredScaleUp"}
    assert doc["events"][0]["message"] == "pod triggered scale-up: [{highmem 0->1 (max: 2)}]"
