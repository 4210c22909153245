"""Pods being deleted (``metadata.deletionTimestamp`` set).

Upstream behaviour asserted here:

- kube-scheduler 1.34, pkg/scheduler/schedule_one.go: ScheduleOne pops the pod and calls
  skipPodSchedule, whose "Case 1: pod is being deleted" records the FailedScheduling event
  ``skip schedule deleting pod: %v/%v`` (namespace, name) and returns true; the pod is Done
  and never put back, so it is neither bound nor unschedulable.
- Cluster Autoscaler 1.34, utils/kubernetes/listers.go: isUnschedulable returns false when
  ``isDeleted`` (deletionTimestamp set), so UnschedulablePods never lists such a pod and no
  scale-up is made for it; ScheduledPods keeps a bound one (isScheduled only), so it still
  counts on its node, as kube-scheduler's cache keeps it until the pod is deleted.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from schedsim.autoscaler.nodegroups import parse_node_groups
from schedsim.cli import main
from schedsim.engine import Cluster, Engine, EngineConfig
from schedsim.replay import Replay, manifest_trace

NODE = """\
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
"""


def pod(name: str, *, deleting: bool = False, node: str = "", nominated: str = "") -> str:
    meta = f"name: {name}, namespace: default"
    if deleting:
        meta += ', deletionTimestamp: "2025-11-01T10:00:00Z", deletionGracePeriodSeconds: 30'
    spec = f"nodeName: {node}, " if node else ""
    status = f"status: {{nominatedNodeName: {nominated}}}\n" if nominated else ""
    return (
        f"---\napiVersion: v1\nkind: Pod\nmetadata: {{{meta}}}\n"
        f"spec: {{{spec}containers: [{{name: c, image: x, "
        f'resources: {{requests: {{cpu: "3"}}}}}}]}}\n' + status
    )


GROUPS = """\
nodeGroups:
- name: g
  maxSize: 3
  template:
    node:
      metadata: {name: g-template}
      status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
"""


@pytest.mark.parametrize("placement", ["kube-scheduler", "first-fit"])
def test_pending_pod_being_deleted_is_skipped_not_scheduled(placement: str) -> None:
    """The deleting pod comes first in queue order (name) and would take n1; it is skipped
    with kube-scheduler's message, so the other pod gets n1, and neither counts as
    unschedulable."""
    text = NODE + pod("a-deleting", deleting=True) + pod("b-later")
    result = Engine(EngineConfig()).simulate(Cluster.from_text(text), placement=placement)
    got = {o.pod.name: o for o in result.outcomes}
    skipped = got["a-deleting"]
    assert skipped.node_name is None and skipped.skipped and not skipped.error
    assert skipped.message == "skip schedule deleting pod: default/a-deleting"
    assert skipped.reasons == () and skipped.attempts == 1  # popped once, not put back
    assert got["b-later"].node_name == "n1"
    assert (result.scheduled, result.unschedulable, result.skipped) == (1, 0, 1)


def test_bound_pod_being_deleted_still_occupies_its_node() -> None:
    """A bound pod being deleted is in kube-scheduler's cache until it is gone: the 3-cpu
    pending pod does not fit beside it."""
    text = NODE + pod("old", deleting=True, node="n1") + pod("new")
    result = Engine(EngineConfig()).simulate(Cluster.from_text(text))
    [o] = result.outcomes
    assert o.pod.name == "new" and o.node_name is None and not o.skipped
    assert o.message.startswith("0/1 nodes are available: 1 Insufficient cpu.")
    assert (result.scheduled, result.unschedulable, result.skipped) == (0, 1, 0)


def test_simulate_output_shows_the_skipped_pod(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "c.yaml"
    f.write_text(NODE + pod("a-deleting", deleting=True) + pod("b-later"))
    assert main(["simulate", str(f), "-o", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    [entry] = [p for p in doc["pods"] if p["name"] == "a-deleting"]
    assert entry["skipped"] is True and entry["node"] is None
    assert entry["message"] == "skip schedule deleting pod: default/a-deleting"
    assert doc["summary"]["skipped"] == 1 and doc["summary"]["unschedulable"] == 0
    assert main(["simulate", str(f)]) == 0
    out = capsys.readouterr().out
    assert "skip schedule deleting pod: default/a-deleting" in out
    assert "1 scheduled, 0 unschedulable, 1 skipped (being deleted), 1 nodes" in out


def test_scale_up_leaves_out_pending_pods_being_deleted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """n1 runs a 3-cpu pod; a pending 3-cpu pod being deleted would need a new node, but CA
    does not count it: no scale-up, and a warning says why."""
    f = tmp_path / "c.yaml"
    f.write_text(NODE + pod("running", node="n1") + pod("deleting", deleting=True))
    g = tmp_path / "g.yaml"
    g.write_text(GROUPS)
    assert main(["scale-up", str(f), "--node-groups", str(g), "-o", "json"]) == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert doc["scaleUp"] is None
    assert doc["summary"]["pending"] == 0
    assert "1 pending pod(s) (default/deleting) are being deleted" in captured.err
    # the same pod without a deletionTimestamp does trigger one
    f.write_text(NODE + pod("running", node="n1") + pod("deleting"))
    assert main(["scale-up", str(f), "--node-groups", str(g), "-o", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["scaleUp"] == {"nodeGroup": "g", "nodes": 1}


def test_scale_up_does_not_place_a_nominated_pod_being_deleted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """CA puts a pod with only status.nominatedNodeName on that node (FilterOutExpendable
    AndSplit) because it is among the unschedulable pods; one being deleted is not, so n1
    stays free for the pending pod and no scale-up is needed."""
    f = tmp_path / "c.yaml"
    f.write_text(NODE + pod("nominated", deleting=True, nominated="n1") + pod("pending"))
    g = tmp_path / "g.yaml"
    g.write_text(GROUPS)
    assert main(["scale-up", str(f), "--node-groups", str(g), "-o", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["scaleUp"] is None
    assert doc["summary"]["pending"] == 1 and doc["summary"]["onExistingNodes"] == 1


def test_replay_skips_a_pending_pod_being_deleted() -> None:
    """The replay's scheduling pass skips it (reported, not unschedulable) and the
    autoscaler never sees it: no scale-up."""
    text = NODE + pod("running", node="n1") + pod("deleting", deleting=True)
    trace = manifest_trace(Cluster.from_text(text, "trace.yaml"))
    groups = parse_node_groups(yaml.safe_load(GROUPS), "groups.yaml")
    replay = Replay(trace, groups)
    m = replay.run()
    assert replay.skipped == {"default/deleting": "skip schedule deleting pod: default/deleting"}
    assert "default/deleting" not in m.unschedulable
    assert not [e for e in m.events if e.kind == "scale-up"]
    assert any("skip schedule deleting pod: default/deleting" in w for w in replay.warnings)
