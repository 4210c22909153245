"""``schedsim scale-up`` and ``schedsim scale-down``: the shipped demo, JSON and table output,
both stores, and bad input (exit status 2, one ``schedsim: error: FILE: field: problem`` line,
nothing on stdout, never a traceback)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from schedsim.cli import main

CLUSTER = """\
apiVersion: v1
kind: Node
metadata: {name: gpu-0, labels: {pool: gpu}}
status: {allocatable: {cpu: "1", memory: 1000, pods: "110", nvidia.com/gpu: "1"}}
---
apiVersion: v1
kind: Node
metadata: {name: gpu-1, labels: {pool: gpu}}
status: {allocatable: {cpu: "1", memory: 1000, pods: "110", nvidia.com/gpu: "1"}}
---
apiVersion: v1
kind: Pod
metadata:
  name: big
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: rs, uid: rs, controller: true}]
spec:
  nodeName: gpu-1
  containers:
  - name: c
    resources: {requests: {cpu: 600m, memory: 100}, limits: {nvidia.com/gpu: "1"}}
"""

PENDING = """\
---
apiVersion: v1
kind: Pod
metadata:
  name: train-{i}
  ownerReferences: [{apiVersion: batch/v1, kind: Job, name: job, uid: job, controller: true}]
spec:
  containers:
  - name: c
    resources: {requests: {cpu: 100m, memory: 100}, limits: {nvidia.com/gpu: "1"}}
"""

GROUPS: dict[str, Any] = {
    "nodeGroups": [
        {
            "name": "gpu",
            "minSize": 0,
            "maxSize": 10,
            "nodeSelector": {"pool": "gpu"},
            "template": {
                "node": {
                    "metadata": {"name": "gpu-template", "labels": {"pool": "gpu"}},
                    "status": {
                        "allocatable": {"cpu": "1", "memory": "1000", "pods": "110",
                                        "nvidia.com/gpu": "1"}},
                }
            },
        },
        {
            "name": "cpu",
            "minSize": 0,
            "maxSize": 10,
            "template": {"node": {"metadata": {"name": "cpu-template"},
                                  "status": {"allocatable": {"cpu": "8", "memory": "8Gi",
                                                                 "pods": "110"}}}},
        },
    ]
}  # fmt: skip


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(CLUSTER + "".join(PENDING.replace("{i}", str(i)) for i in range(3)))
    groups = tmp_path / "groups.yaml"
    groups.write_text(yaml.safe_dump(GROUPS))
    return str(cluster), str(groups)


def test_demo_scale_up(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["scale-up"], capsys)
    assert code == 0, err
    assert "scale up highmem by 1 node(s) for 1 pod(s) (least-waste)" in out
    assert "untolerated taint(s)" in out  # escaped, not rich markup
    code, out, _ = run(["scale-up", "-o", "json"], capsys)
    doc = json.loads(out)
    assert doc["scaleUp"] == {"nodeGroup": "highmem", "nodes": 1}
    assert doc["noScaleUp"] == [
        {
            "pod": "ml/train-2",
            "reasons": {
                "general": "wouldn't fit: node(s) didn't match Pod's node affinity/selector",
                "gpu": "wouldn't fit: node(s) had untolerated taint(s)",
                "highmem": "wouldn't fit: node(s) didn't match Pod's node affinity/selector",
            },
            # CA 1.34's NotTriggerScaleUp message (tests/autoscaler/test_ca_events.py)
            "message": "pod didn't trigger scale-up: 2 node(s) didn't match Pod's node "
            "affinity/selector, 1 node(s) had untolerated taint(s)",
        }
    ]
    assert doc["summary"] == {
        "pending": 7, "onExistingNodes": 5, "helped": 1, "awaiting": 0, "noScaleUp": 1,
        "laterScaleUp": 0, "errors": 0}  # fmt: skip


def test_demo_scale_down(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["scale-down", "-o", "json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    by_node = {n["node"]: (n["removable"], n["reason"]) for n in doc["nodes"]}
    # The demo's pending pods that fit go to existing nodes first (CA's filter-out-schedulable):
    # worker-b fills to exactly the threshold (cpu 0.50: a candidate, as CA 1.34's
    # isNodeAtOrBelowUtilizationThreshold) but runs the bare pod kube-system/metrics-agent,
    # and gpu-1 receives the bare pod ml/train-1: neither can be moved.
    assert by_node == {
        "worker-a": (False, "NotUnderutilized"),
        "worker-b": (False, "BlockedByPod"),
        "gpu-1": (False, "BlockedByPod"),
        "worker-c": (True, None),
    }
    assert doc["summary"]["pendingPlaced"] == 5 and doc["summary"]["pendingUnplaced"] == 2
    code, out, _ = run(["scale-down"], capsys)
    assert "1 of 4 node(s) removable (utilization threshold 0.5)" in out
    assert "7 pending pod(s): 5 placed on existing nodes first" in out


def test_scale_up_files(
    files: tuple[str, str], capsys: pytest.CaptureFixture[str], store_name: str
) -> None:
    """The CA outcome "one pod per node, one device per node" through the command: the
    existing GPU nodes: gpu-0 takes one pod, the two others need 2 new nodes; the cpu group
    says what it lacks."""
    cluster, groups = files
    code, out, err = run(["scale-up", cluster, "--node-groups", groups, "-o", "json",
                          "--store", store_name], capsys)  # fmt: skip
    assert code == 0, err
    doc = json.loads(out)
    assert doc["scaleUp"] == {"nodeGroup": "gpu", "nodes": 2}
    assert doc["existingNodes"] == [{"pod": "default/train-0", "node": "gpu-0"}]
    [gpu, cpu] = doc["nodeGroups"]
    assert (gpu["currentSize"], gpu["nodes"]) == (2, 2)
    assert cpu["nodes"] == 0
    code, out, _ = run(["scale-up", cluster, "--node-groups", groups, "--expander", "most-pods"],
                       capsys)  # fmt: skip
    assert "scale up gpu by 2 node(s) for 2 pod(s) (most-pods)" in out


def test_scale_down_files(
    files: tuple[str, str], capsys: pytest.CaptureFixture[str], store_name: str
) -> None:
    """Pending train-0 goes to gpu-0 first (CA's filter-out-schedulable), so neither GPU node
    is removable; nvidia.com/gpu in allocatable makes them GPU nodes, whose utilization is
    their GPUs' only (CA ``utilization.Calculate``), against the GPU threshold (CA
    ``eligibility.isNodeBelowUtilizationThreshold``). Without the pending pods, gpu-0 is
    removable."""
    cluster, _ = files
    code, out, err = run(["scale-down", cluster, "-o", "json", "--store", store_name], capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert [(n["node"], n["removable"]) for n in doc["nodes"]] == [
        ("gpu-0", False),
        ("gpu-1", False),
    ]
    assert doc["nodes"][1]["utilization"] == {
        "cpu": 0.6, "memory": 0.1, "devices": 0.0, "gpu": 1.0, "basis": "gpu",
        "resource": "nvidia.com/gpu", "value": 1.0,
    }  # fmt: skip
    assert doc["pendingPlaced"] == [{"pod": "default/train-0", "node": "gpu-0"}]
    assert doc["pendingUnplaced"] == ["default/train-1", "default/train-2"]
    bound_only = Path(cluster).with_name("bound.yaml")
    bound_only.write_text(CLUSTER)
    args = ["scale-down", str(bound_only), "--utilization-threshold", "0.7",
            "--gpu-utilization-threshold", "0.4", "--store", store_name]  # fmt: skip
    code, out, _ = run(args, capsys)
    assert "1 of 2 node(s) removable (utilization threshold 0.7, GPU nodes 0.4)" in out
    code, out, _ = run(["scale-down", str(bound_only), "--gpu-utilization-threshold", "0.4",
                        "-o", "json"], capsys)  # fmt: skip
    detail = json.loads(out)["nodes"][1]["detail"]
    assert detail == "nvidia.com/gpu utilization 1.00 > GPU threshold 0.4"


DATA = Path(__file__).parent / "data" / "autoscaling"


def test_scale_down_places_pending_pods_first(
    capsys: pytest.CaptureFixture[str], store_name: str
) -> None:
    """A tester's input: two empty 16-CPU nodes, 12 pending 2-CPU pods that all fit. CA's
    ``RunOnce`` runs the pod list processor before scale-down planning, and its
    filter-out-schedulable (``core/podlistprocessor/filter_out_schedulable.go``
    ``filterOutSchedulableByPacking``) calls ``TrySchedulePods`` on the cluster snapshot
    itself, not a fork; ``scaleDown`` -> ``planner.UpdateClusterState`` then sees the pods on
    the nodes: 12 CPU of 16 each, NotUnderutilized (before the fix both were removable)."""
    args = ["scale-down", str(DATA / "sd-pending.yaml"), "-o", "json", "--store", store_name]
    code, out, err = run(args, capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert [(n["node"], n["reason"], n["utilization"]["cpu"]) for n in doc["nodes"]] == [
        ("cpu-0", "NotUnderutilized", 0.75),
        ("cpu-1", "NotUnderutilized", 0.75),
    ]
    assert len(doc["pendingPlaced"]) == 12 and doc["pendingUnplaced"] == []


def test_scale_down_dra_node_utilization_is_devices_only(
    capsys: pytest.CaptureFixture[str], store_name: str
) -> None:
    """A tester's input: gpu-a0 uses 1 of its 8 DRA GPUs and 14 of 16 CPUs. CA
    ``simulator/utilization/info.go`` ``Calculate``: with DRA enabled and local
    ResourceSlices, the utilization is ``HighestDynamicResourceUtilization`` only (cpu and
    memory are not computed): 0.125, a candidate (before the fix: cpu 0.88, NotUnderutilized).
    Its pod moves to gpu-a1; gpu-a1 is then the last node of gpu-a100 (min size 1)."""
    args = ["scale-down", str(DATA / "sd-cluster.yaml"), "--node-groups",
            str(DATA / "ng-sd.yaml"), "-o", "json", "--store", store_name]  # fmt: skip
    code, out, err = run(args, capsys)
    assert code == 0, err
    nodes = {n["node"]: n for n in json.loads(out)["nodes"]}
    a0 = nodes["gpu-a0"]
    assert a0["removable"] is True
    assert a0["utilization"]["basis"] == "devices" and a0["utilization"]["value"] == 0.125
    assert a0["utilization"]["cpu"] == 0.875
    assert nodes["gpu-a1"]["reason"] == "NodeGroupMinSizeReached"
    h1 = nodes["gpu-h1"]
    assert (h1["reason"], h1["utilization"]["value"]) == ("NotUnderutilized", 1.0)
    assert "devices (gpu.example.com/gpu-h1) utilization 1.00 > threshold 0.5" in h1["detail"]


def _error(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    code, out, err = run(args, capsys)
    assert code == 2
    assert out == ""
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("schedsim: error: ")
    return lines[0].removeprefix("schedsim: error: ")


def test_bad_node_groups(
    files: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster, _ = files
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"nodeGroups": [{"name": "g", "maxSize": "ten"}]}))
    msg = _error(["scale-up", cluster, "--node-groups", str(bad)], capsys)
    assert msg == f"{bad}: nodeGroups[0].maxSize: expected an integer, got a string"
    msg = _error(["scale-down", cluster, "--node-groups", str(bad)], capsys)
    assert msg.startswith(f"{bad}: nodeGroups[0].maxSize")
    bad.write_text("nodeGroups:\n- name: g\n  maxSize: 3\n  template:\n    node: {metadata: {}}\n")
    msg = _error(["scale-up", cluster, "--node-groups", str(bad)], capsys)
    assert msg == f"{bad}: nodeGroups[0].template.node.metadata.name: required"
    msg = _error(["scale-up", cluster, "--node-groups", str(tmp_path / "missing.yaml")], capsys)
    assert msg == f"{tmp_path / 'missing.yaml'}: no such file or directory"


def test_template_pod_with_missing_claim(
    files: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster, _ = files
    groups = tmp_path / "claims.yaml"
    doc = json.loads(json.dumps(GROUPS))
    doc["nodeGroups"][0]["template"]["pods"] = [
        {"metadata": {"name": "ds"},
         "spec": {"resourceClaims": [{"name": "c", "resourceClaimName": "nowhere"}],
                  "containers": [{"name": "c", "image": "i"}]}}
    ]  # fmt: skip
    groups.write_text(yaml.safe_dump(doc))
    msg = _error(["scale-up", cluster, "--node-groups", str(groups)], capsys)
    assert msg == (
        f"{groups}: nodeGroups[0].template.pods[0].spec.resourceClaims[0]: pod default/ds "
        "references ResourceClaim default/nowhere, which is neither in resourceClaims nor in "
        "the cluster"
    )


def test_usage_errors(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    cluster, _ = files
    assert _error(["scale-up", cluster], capsys) == "--node-groups FILE is required with CLUSTER"
    msg = _error(["scale-down", cluster, "--utilization-threshold", "2"], capsys)
    # CA's flag name (the old spelling is an alias of it)
    assert msg == "--scale-down-utilization-threshold: must be between 0 and 1, got 2.0"
    msg = _error(["scale-down", cluster, "--gpu-utilization-threshold", "-1"], capsys)
    assert msg == "--scale-down-gpu-utilization-threshold: must be between 0 and 1, got -1.0"


def test_documented_node_groups_example_is_valid() -> None:
    """The node-groups example in docs/cli.md parses, and its template can be copied."""
    from schedsim.autoscaler.nodegroups import parse_node_groups
    from schedsim.autoscaler.sanitize import sanitized_node_info, template_node_info

    text = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text("utf-8")
    section = text.split("## The node-groups file", 1)[1]
    block = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    [g] = parse_node_groups(yaml.safe_load(block), "docs/cli.md")
    assert (g.name, g.max_size, g.nodes) == ("gpu", 3, frozenset({"gpu-1"}))
    copy = sanitized_node_info(template_node_info(g.template), "gpu-template-e-0", "e-0")
    assert [s.pool.name for s in copy.local_resource_slices] == ["gpu-template-e-0"]
    assert copy.csi_node is not None and copy.csi_node.name == "gpu-template-e-0"
    assert [p.pod.name for p in copy.pods] == ["gpu-agent-e-0"]


def test_progress_bar_only_for_many_items_on_a_terminal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import sys

    from schedsim.cli import autoscaling as cli_autoscaling

    with cli_autoscaling._progress(100, "nodes") as callback:
        assert callback is None  # stderr is not a terminal here
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    with cli_autoscaling._progress(cli_autoscaling.PROGRESS_THRESHOLD - 1, "nodes") as callback:
        assert callback is None
    with cli_autoscaling._progress(cli_autoscaling.PROGRESS_THRESHOLD, "nodes") as callback:
        assert callback is not None
        callback(cli_autoscaling.PROGRESS_THRESHOLD, cli_autoscaling.PROGRESS_THRESHOLD)
    assert capsys.readouterr().out == ""  # never on stdout


def test_node_in_two_groups_and_unknown_member_nodes(
    files: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """CA: a node belongs to exactly one node group; a listed node the cluster lacks is
    only a warning (the group may list nodes not created yet)."""
    cluster, _ = files
    groups = tmp_path / "two.yaml"
    doc = json.loads(json.dumps(GROUPS))
    doc["nodeGroups"][1]["nodes"] = ["gpu-0"]  # gpu-0 is in group gpu by its labels
    groups.write_text(yaml.safe_dump(doc))
    for cmd in ("scale-up", "scale-down"):
        msg = _error([cmd, cluster, "--node-groups", str(groups)], capsys)
        want = 'nodeGroups[1].nodes: node "gpu-0" is already in group "gpu"'
        assert msg == f"{groups}: {want}"
    doc["nodeGroups"][1]["nodes"] = ["nosuch"]
    groups.write_text(yaml.safe_dump(doc))
    code, out, err = run(["scale-up", cluster, "--node-groups", str(groups)], capsys)
    assert code == 0 and out
    assert err == f'warning: {groups}: nodeGroups[1].nodes: node "nosuch" is not in the cluster\n'


def test_pods_on_unknown_nodes_warn_as_simulate_does(
    files: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster, groups = files
    ghost = tmp_path / "ghost.yaml"
    ghost.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: b}\n"
                     "spec: {nodeName: ghost, containers: [{name: c}]}\n")  # fmt: skip
    want = "warning: pod default/b: node 'ghost' is not among the nodes; ignored\n"
    for args in (["scale-up", "--node-groups", groups], ["scale-down"]):
        code, _, err = run([args[0], cluster, str(ghost), *args[1:]], capsys)
        assert code == 0 and err == want


def test_node_groups_from_stdin(
    files: tuple[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import io

    cluster, groups = files
    monkeypatch.setattr("sys.stdin", io.StringIO(Path(groups).read_text()))
    code, out, err = run(["scale-up", cluster, "--node-groups", "-", "-o", "json"], capsys)
    assert code == 0, err
    assert json.loads(out)["scaleUp"] == {"nodeGroup": "gpu", "nodes": 2}
    monkeypatch.setattr("sys.stdin", io.StringIO("nodeGroups: [{name: g}]\n"))
    msg = _error(["scale-down", cluster, "--node-groups", "-"], capsys)
    assert msg == "<stdin>: nodeGroups[0].maxSize: required"
    msg = _error(["scale-up", "-", "--node-groups", "-"], capsys)
    assert msg.startswith("--node-groups -: standard input is already read for CLUSTER (-)")


def test_max_nodes_per_scaleup(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    """CA's ``--max-nodes-per-scaleup`` (default 1000): the estimate stops there, and the
    output says so."""
    cluster, groups = files
    code, out, _ = run(["scale-up", cluster, "--node-groups", groups,
                        "--max-nodes-per-scaleup", "1"], capsys)  # fmt: skip
    assert code == 0
    assert "capped by --max-nodes-per-scaleup 1" in out
    verdict = ("scale up gpu by 1 node(s) for 1 pod(s) (estimate stopped at "
               "--max-nodes-per-scaleup 1; more pods may need more nodes)")  # fmt: skip
    assert verdict in " ".join(out.split())
    code, out, _ = run(["scale-up", cluster, "--node-groups", groups, "-o", "json",
                        "--max-nodes-per-scaleup", "1"], capsys)  # fmt: skip
    doc = json.loads(out)
    assert doc["maxNodesPerScaleUp"] == 1
    assert doc["nodeGroups"][0]["limitReached"] == "the estimate reached --max-nodes-per-scaleup 1"
    assert [u["pod"] for u in doc["laterScaleUp"]] == ["default/train-2"]
    assert doc["noScaleUp"] == []
    code, out, _ = run(["scale-up", cluster, "--node-groups", groups, "-o", "json"], capsys)
    assert json.loads(out)["maxNodesPerScaleUp"] == 1000
    msg = _error(["scale-up", cluster, "--node-groups", groups, "--max-nodes-per-scaleup", "-1"],
                 capsys)  # fmt: skip
    assert msg == "--max-nodes-per-scaleup: must be >= 0, got -1"


def test_scale_up_pods_left_by_a_limit_are_not_unhelped(
    capsys: pytest.CaptureFixture[str], store_name: str
) -> None:
    """A tester's input: gpu-h100 (2/10) grows by its 8 allowed nodes for 16 pods; 5 more
    pods of the same kind fit its template but are past its max size. CA
    (``core/scaleup/orchestrator/orchestrator.go``): ``SchedulablePodGroups`` marks their
    equivalence group ``Schedulable``, and ``GetRemainingPods`` reports only groups that are
    not, so they get no NotTriggerScaleUp: they are "left for a later scale-up", grouped in
    one row, and the max size is named (before: "5 helped by no group", "max size reached")."""
    args = ["scale-up", str(DATA / "gpu-big.yaml"), "--node-groups",
            str(DATA / "ng-gpu-cpu.yaml"), "--store", store_name]  # fmt: skip
    code, out, err = run(args, capsys)
    assert code == 0, err
    flat = " ".join(out.split())
    assert "chosen, limited by max size 10, waste 1.95" in flat
    assert "pods no node group helps" not in out
    assert (
        "ml/train4-1 (+4 similar) │ 5 │ gpu-h100 │ the estimate reached the group's max size 10"
        in flat
    )
    assert "0 helped by no group, 5 left for a later scale-up" in flat
    # the verdict names the limit once, without a stray comma before the expander
    assert "for 16 pod(s), reaching the group's max size 10 (least-waste);" in flat
    assert (
        "5 pod(s) left for a later scale-up: the estimate reached the group's max size 10" in flat
    )
    code, out, _ = run([*args, "-o", "json"], capsys)
    doc = json.loads(out)
    assert doc["summary"]["noScaleUp"] == 0 and doc["summary"]["laterScaleUp"] == 5
    assert doc["nodeGroups"][0]["limitReached"] == "the estimate reached the group's max size 10"


def test_unhelped_pods_are_grouped_and_sorted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Pods no group helps are listed one row per equivalence group (same controller and
    spec, CA's ``PodEquivalenceGroup``), with a count, sorted by their first pod: not one row
    per pod in input order."""
    pods = "".join(
        PENDING.replace("train-{i}", f"big-{i}").replace("cpu: 100m", "cpu: '64'")
        for i in (3, 1, 2)
    )
    path = tmp_path / "c.yaml"
    path.write_text(CLUSTER + pods)
    groups = tmp_path / "g.yaml"
    groups.write_text(yaml.safe_dump(GROUPS))
    code, out, err = run(["scale-up", str(path), "--node-groups", str(groups)], capsys)
    assert code == 0, err
    rows = [line for line in out.splitlines() if "big-" in line and line.startswith("│")]
    assert len(rows) == 1 and "default/big-1 (+2 similar)" in rows[0] and "│ 3 " in rows[0]
    assert "3 helped by no group" in " ".join(out.split())


DRA_CLUSTER = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec: {selectors: [{cel: {expression: "device.driver == 'gpu.example.com'"}}]}
---
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: "8", memory: 32Gi, pods: "110"}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-s}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 1}
  devices: [{name: gpu-0}, {name: gpu-1}]
---
apiVersion: v1
kind: Node
metadata: {name: n2, labels: {kubernetes.io/hostname: n2}}
status: {allocatable: {cpu: "8", memory: 32Gi, pods: "110"}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n2-s}
spec:
  driver: gpu.example.com
  nodeName: n2
  pool: {name: n2, generation: 1, resourceSliceCount: 1}
  devices: [{name: gpu-0}, {name: gpu-1}]
---
apiVersion: v1
kind: Pod
metadata: {name: pinned, namespace: default}
spec: {nodeName: n2, containers: [{name: c, resources: {requests: {cpu: "1"}}}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: c
  namespace: default
  ownerReferences: [{apiVersion: v1, kind: Pod, name: p, uid: uid-p, controller: true}]
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.example.com
        selectors: [{cel: {expression: "device.attributes['gpu.example.com'].nosuch == 'x'"}}]
status:
  allocation:
    devices: {results: [{request: gpu, driver: gpu.example.com, pool: n1, device: gpu-0}]}
    nodeSelector:
      nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [n1]}]}]
  reservedFor: [{resource: pods, name: p, uid: uid-p}]
---
apiVersion: v1
kind: Pod
metadata:
  name: p
  namespace: default
  uid: uid-p
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: rs, uid: rs1, controller: true}]
spec:
  nodeName: n1
  containers: [{name: c, resources: {requests: {cpu: "1"}, claims: [{name: gpu}]}}]
  resourceClaims: [{name: gpu, resourceClaimName: c}]
"""

DRA_PENDING = """\
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: q, namespace: default}
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.example.com
        selectors: [{cel: {expression: "device.attributes['gpu.example.com'].nosuch == 'x'"}}]
---
apiVersion: v1
kind: Pod
metadata: {name: q, namespace: default}
spec:
  containers: [{name: c, resources: {claims: [{name: gpu}]}}]
  resourceClaims: [{name: gpu, resourceClaimName: q}]
"""


def test_plugin_errors_are_reported_per_pod_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A CEL runtime error (``no such key``) is an Error status of the DynamicResources
    Filter: kube-scheduler fails that pod's attempt. scale-up lists the pod as an error (one
    line, the message's first line), never as "wouldn't fit"; scale-down never calls a node
    removable when moving its pods hit the error (UnexpectedError); both print their output
    and exit 1."""
    cluster = tmp_path / "c.yaml"
    cluster.write_text(DRA_CLUSTER + DRA_PENDING)
    groups = tmp_path / "g.yaml"
    template = {
        "node": {"metadata": {"name": "t"}, "status": {"allocatable": {"cpu": "8", "pods": "110"}}}
    }
    groups.write_text(yaml.safe_dump({"nodeGroups": [{"name": "g", "maxSize": 3,
                                                      "template": template}]}))  # fmt: skip
    code, out, err = run(["scale-up", str(cluster), "--node-groups", str(groups), "-o", "json"],
                         capsys)  # fmt: skip
    assert code == 1
    doc = json.loads(out)
    [e] = doc["errors"]
    assert (e["pod"], e["nodeGroup"]) == ("default/q", None)
    assert e["message"].endswith("selector #0: CEL runtime error: no such key: nosuch")
    assert doc["noScaleUp"] == [] and "wouldn't fit" not in out
    lines = err.splitlines()
    assert lines[0] == f"error: pod default/q: {e['message']}"
    assert lines[-1].startswith("schedsim: error: a plugin failed for 1 pod(s)")
    cluster.write_text(DRA_CLUSTER)
    args = ["scale-down", str(cluster), "-o", "json", "--utilization-threshold", "0.6"]
    code, out, err = run(args, capsys)
    assert code == 1
    doc = json.loads(out)
    n1 = doc["nodes"][0]
    assert (n1["node"], n1["removable"], n1["reason"], n1["pod"]) == (
        "n1", False, "UnexpectedError", "default/p")  # fmt: skip
    assert n1["detail"].endswith("CEL runtime error: no such key: nosuch")
    assert [e["pod"] for e in doc["errors"]] == ["default/p"]
    assert err.splitlines()[0].startswith('error: pod default/p: running "DynamicResources"')
