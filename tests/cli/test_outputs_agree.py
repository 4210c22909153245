"""The outputs agree with themselves (issue 15, repro 9): the JSON carries the warnings stderr
shows, and plugin errors are counted apart from unschedulable pods.

kube-scheduler tells the two apart: a pod whose attempt failed with an Error status is not
"unschedulable" (``handleSchedulingFailure`` records ``SchedulerError`` rather than
``Unschedulable`` as the PodScheduled condition's reason), so the summary counts it under
``errors``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from schedsim.cli import main

NODE = """\
kind: Node
apiVersion: v1
metadata: {name: n1}
status: {allocatable: {cpu: '1', memory: 1Gi, pods: '10'}}
"""
BOUND_ELSEWHERE = """\
kind: Pod
apiVersion: v1
metadata: {name: old, namespace: shop}
spec: {nodeName: gone, containers: [{name: c}]}
"""
TOO_BIG = """\
kind: Pod
apiVersion: v1
metadata: {name: big, namespace: shop}
spec: {containers: [{name: c, resources: {requests: {cpu: '2'}}}]}
"""


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("command", ["simulate", "scale-down"])
def test_json_warnings_are_the_stderr_warnings(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every ``warning:`` line on stderr is in the JSON's ``warnings``, same words, with the
    object it names."""
    f = tmp_path / "c.yaml"
    f.write_text("---\n".join([NODE, BOUND_ELSEWHERE, TOO_BIG]))
    code, out, err = _run(capsys, command, str(f), "-o", "json")
    assert code == 0, err
    shown = [ln.removeprefix("warning: ") for ln in err.splitlines() if ln.startswith("warning:")]
    doc = json.loads(out)
    assert [w["message"] for w in doc["warnings"]] == shown
    assert {
        "message": "pod shop/old: node 'gone' is not among the nodes; ignored",
        "object": "Pod shop/old",
    } in doc["warnings"]


def test_scale_up_json_carries_warnings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """scale-up: the node-groups file naming an unknown node warns, on stderr and in the JSON."""
    f = tmp_path / "c.yaml"
    f.write_text("---\n".join([NODE, TOO_BIG]))
    groups = tmp_path / "g.yaml"
    template = {"metadata": {"name": "t"}, "status": {"allocatable": {"cpu": "4", "pods": "10"}}}
    groups.write_text(
        yaml.safe_dump(
            {
                "nodeGroups": [
                    {"name": "g", "maxSize": 2, "nodes": ["nope"], "template": {"node": template}}
                ]
            }
        )
    )
    code, out, err = _run(capsys, "scale-up", str(f), "--node-groups", str(groups), "-o", "json")
    assert code == 0, err
    shown = [ln.removeprefix("warning: ") for ln in err.splitlines() if ln.startswith("warning:")]
    assert shown and [w["message"] for w in json.loads(out)["warnings"]] == shown


PLUGIN_ERROR = """\
kind: DeviceClass
apiVersion: resource.k8s.io/v1
metadata: {name: gpu}
spec: {selectors: [{cel: {expression: "device.driver == 'gpu.example.com'"}}]}
---
kind: ResourceSlice
apiVersion: resource.k8s.io/v1
metadata: {name: n1-gpus}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 1}
  devices: [{name: gpu-0}]
---
kind: ResourceClaim
apiVersion: resource.k8s.io/v1
metadata: {name: bad, namespace: shop}
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu
        selectors: [{cel: {expression: "device.attributes['gpu.example.com'].model == 'x'"}}]
---
kind: Pod
apiVersion: v1
metadata: {name: a, namespace: shop}
spec:
  containers: [{name: c}]
  resourceClaims: [{name: gpu, resourceClaimName: bad}]
"""


def test_plugin_errors_are_not_unschedulable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A CEL runtime error (an Error status) is counted in ``errors``, not ``unschedulable``;
    a pod that fits nowhere is ``unschedulable``; the table says the same."""
    f = tmp_path / "c.yaml"
    f.write_text("---\n".join([NODE, PLUGIN_ERROR, TOO_BIG]))
    code, out, _ = _run(capsys, "simulate", str(f), "-o", "json")
    assert code == 1
    assert json.loads(out)["summary"] == {
        "scheduled": 0,
        "unschedulable": 1,
        "errors": 1,
        "preempted": 0,
        "nodes": 1,
    }
    code, out, _ = _run(capsys, "simulate", str(f))
    assert code == 1
    assert "0 scheduled, 1 unschedulable, 1 plugin error(s), 1 nodes" in out


NAME_AFFINITY = """\
kind: Pod
apiVersion: v1
metadata: {name: pinned, namespace: shop}
spec:
  containers: [{name: c}]
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchFields: [{key: metadata.name, operator: In, values: [elsewhere]}]
"""
EXCLUDED = "node(s) didn't satisfy plugin(s) [NodeAffinity]"
"""kube-scheduler's status for nodes a PreFilterResult leaves out (findNodesThatFitPod)."""


def test_one_wording_for_a_pre_filter_exclusion(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """NodeAffinity's PreFilter narrows the nodes to one that does not exist: simulate (the
    FitError), the library's schedule_pod (the predicate error's reasons) and scale-up (the
    group's reason) all say it with kube-scheduler's words."""
    from schedsim.engine import Cluster, Engine, EngineConfig
    from schedsim.snapshot import SchedulingError

    f = tmp_path / "c.yaml"
    f.write_text("---\n".join([NODE, NAME_AFFINITY]))
    code, out, _ = _run(capsys, "simulate", str(f), "-o", "json")
    assert code == 0
    [pod] = json.loads(out)["pods"]
    assert pod["message"] == (
        f"0/1 nodes are available: 1 {EXCLUDED}. no new claims to deallocate, preemption: 0/1"
        " nodes are available: 1"
        " Preemption is not helpful for scheduling."  # PostFilter: an excluded node is absent
    )

    cluster = Cluster.from_paths([str(f)])
    snapshot, _ = Engine(EngineConfig()).snapshot(cluster)
    with pytest.raises(SchedulingError) as info:
        snapshot.schedule_pod(cluster.pods[0], "n1")
    assert info.value.reasons == (EXCLUDED,)

    groups = tmp_path / "g.yaml"
    template = {"metadata": {"name": "t"}, "status": {"allocatable": {"cpu": "4", "pods": "10"}}}
    groups.write_text(
        yaml.safe_dump(
            {"nodeGroups": [{"name": "g", "maxSize": 2, "template": {"node": template}}]}
        )
    )
    code, out, _ = _run(capsys, "scale-up", str(f), "--node-groups", str(groups), "-o", "json")
    assert code == 0
    assert json.loads(out)["noScaleUp"] == [
        {
            "pod": "shop/pinned",
            "reasons": {"g": f"wouldn't fit: {EXCLUDED}"},
            "message": f"pod didn't trigger scale-up: 1 {EXCLUDED}",
        }
    ]
