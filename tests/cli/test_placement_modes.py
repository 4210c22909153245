"""`schedsim simulate --placement kube-scheduler|first-fit`, `--seed` and `--explain` on the
shipped examples and the shared real manifests (issue 12 items 2, 4, 5)."""

from __future__ import annotations

import json
import os
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from schedsim.cli import main

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("SCHEDSIM_SHARED_DIR") or ROOT.parent / "shared")
EXAMPLES = resources.files("schedsim.examples")


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["simulate", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def _doc(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    code, out, _ = _run(capsys, *argv, "-o", "json")
    assert code == 0
    doc: dict[str, Any] = json.loads(out)
    return doc


def _example(name: str) -> str:
    return str(EXAMPLES.joinpath(name))


def _unplaced(doc: dict[str, Any]) -> dict[str, str]:
    return {f"{p['namespace']}/{p['name']}": p["message"] for p in doc["pods"] if not p["node"]}


@pytest.mark.parametrize(
    "example", ["demo-cluster.yaml", "gpu-cluster.yaml", "ebs-volume-limits.yaml"]
)
def test_shipped_examples_in_both_modes(capsys: pytest.CaptureFixture[str], example: str) -> None:
    """The demo, the DRA GPU example and the CSI volume-limit example: where capacity is not
    contended by order, both placements schedule the same pods and give the same
    kube-scheduler FitError messages to the others, followed in kube-scheduler placement by
    the PostFilter message (demo: train-2 and report; GPU: big-job,
    two GPUs nowhere; EBS: db-47..49, 'exceed max volume count'); kube-scheduler placement is
    the default."""
    path = _example(example)
    kube = _doc(capsys, path)
    assert kube == _doc(capsys, path, "--placement", "kube-scheduler")
    first = _doc(capsys, path, "--placement", "first-fit")
    assert kube["summary"] == first["summary"]
    # kube-scheduler placement then runs PostFilter: DefaultPreemption's message follows
    unplaced = _unplaced(kube)
    assert unplaced.keys() == _unplaced(first).keys()
    for key, message in _unplaced(first).items():
        assert unplaced[key].startswith(message + " ") and "preemption: " in unplaced[key]
    assert (
        len(_unplaced(kube))
        == {
            "demo-cluster.yaml": 2,
            "gpu-cluster.yaml": 1,
            "ebs-volume-limits.yaml": 3,
        }[example]
    )


def test_dra_allocations_follow_the_chosen_node(capsys: pytest.CaptureFixture[str]) -> None:
    """In kube-scheduler placement every claim of a placed pod is allocated on its node's
    devices (the DRA example's pools are named after their nodes), and no exclusive device is
    given twice (the shared claim's two viewers share one GPU)."""
    doc = _doc(capsys, _example("gpu-cluster.yaml"))
    seen: dict[str, str] = {}
    for p in doc["pods"]:
        for a in p["allocations"]:
            assert a["pool"] == p["node"]
            device = f"{a['pool']}/{a['device']}"
            assert seen.setdefault(device, a["claim"]) == a["claim"]


@pytest.mark.parametrize("mode", ["kube-scheduler", "first-fit"])
def test_k8s_sims_benchmark_in_both_modes(capsys: pytest.CaptureFixture[str], mode: str) -> None:
    """The k8s-sims benchmark (400 pods, 4 nodes): every pod fits in either placement, 100
    per node (the nodes' capacity)."""
    bench = SHARED / "examples" / "k8s-sims-benchmark"
    if not bench.is_dir():
        pytest.skip(f"{bench} not found (set SCHEDSIM_SHARED_DIR to the shared folder)")
    doc = _doc(capsys, str(bench), "--placement", mode)
    assert doc["summary"] == {
        "scheduled": 400,
        "unschedulable": 0,
        "errors": 0,
        "preempted": 0,
        "nodes": 4,
    }
    per_node: dict[str, int] = {}
    for p in doc["pods"]:
        per_node[p["node"]] = per_node.get(p["node"], 0) + 1
    assert sorted(per_node.values()) == [100, 100, 100, 100]


@pytest.mark.parametrize("example", ["csi-driver-host-path", "aws-ebs-dynamic-provisioning"])
def test_shared_csi_examples_in_both_modes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, example: str
) -> None:
    """The shared CSI manifests with one node: the same outcome in both placements."""
    csi = SHARED / "examples" / "csi"
    files = sorted(csi.glob(f"{example}*.yaml")) if csi.is_dir() else []
    if not files:
        pytest.skip(f"{csi} has no {example} manifests")
    node = tmp_path / "node.yaml"
    node.write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
        "status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}\n"
    )
    args = [str(node), *map(str, files)]
    kube = _doc(capsys, *args)
    first = _doc(capsys, *args, "--placement", "first-fit")
    assert kube["pods"] == first["pods"]


def test_explain_json_results(capsys: pytest.CaptureFixture[str]) -> None:
    """--explain NS/NAME: that pod's JSON gets `results` named after kube-scheduler-simulator's
    annotations; the others none. The demo's shop/report fits nowhere: worker-a lacks cpu and
    memory, worker-b cpu, gpu-1 has the untolerated taint, worker-c is cordoned."""
    doc = _doc(capsys, "--explain", "shop/report")
    by_key = {f"{p['namespace']}/{p['name']}": p for p in doc["pods"]}
    assert [k for k, p in by_key.items() if "results" in p] == ["shop/report"]
    results = by_key["shop/report"]["results"]
    assert list(results) == [
        "preFilter",
        "filter",
        "postFilter",
        "preScore",
        "score",
        "finalScore",
        "reserve",
        "permit",
        "permitTimeout",
        "preBind",
        "bind",
        "selectedNode",
        "nodes",
    ]
    assert results["filter"]["worker-a"]["NodeResourcesFit"] == (
        "Insufficient cpu, Insufficient memory"
    )
    assert results["filter"]["worker-b"]["NodeResourcesFit"] == "Insufficient cpu"
    assert results["filter"]["gpu-1"]["TaintToleration"] == (
        "node(s) had untolerated taint(s)"
    )
    assert results["filter"]["worker-c"] == {"NodeUnschedulable": "node(s) were unschedulable"}
    assert results["selectedNode"] is None
    assert results["nodes"] == {
        "all": 4,
        "evaluated": 4,
        "feasible": 0,
        "notEvaluated": 0,
        "excludedByPreFilter": 0,
    }


def test_explain_every_pod_and_the_table_grid(capsys: pytest.CaptureFixture[str]) -> None:
    """--explain alone explains every pending pod; the table prints one node-by-plugin grid
    per pod, the chosen node starred."""
    doc = _doc(capsys, "--explain")
    assert all("results" in p for p in doc["pods"])
    node = next(p["node"] for p in doc["pods"] if p["name"] == "web-2")
    code, out, _ = _run(capsys, "--explain", "shop/web-2")
    assert code == 0
    assert f"shop/web-2: {node} (4 of 4 nodes evaluated, " in out
    assert f"* {node}" in out and "NodeResourcesFit" in out


def test_explain_value_that_is_a_path_is_read_as_a_path(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`--explain FILE` takes FILE as the input path (argparse would read it as NS/NAME)."""
    doc = _doc(capsys, "--explain", _example("demo-cluster.yaml"))
    assert len(doc["pods"]) == 7 and all("results" in p for p in doc["pods"])


def test_explain_usage(capsys: pytest.CaptureFixture[str]) -> None:
    """A name without namespace, or --explain with first fit, is a usage error (exit 2); an
    unknown pod is a warning naming it."""
    code, _, err = _run(capsys, "--explain", "report")
    assert code == 2 and "--explain report: expected NAMESPACE/NAME" in err
    code, _, err = _run(capsys, "--explain", "--placement", "first-fit")
    assert code == 2 and "--explain: needs --placement kube-scheduler" in err
    code, _, err = _run(capsys, "--explain", "shop/nope")
    assert code == 0 and "warning: --explain shop/nope: no such pending pod" in err


def test_unexplained_output_has_no_results(capsys: pytest.CaptureFixture[str]) -> None:
    """Without --explain nothing is collected or printed."""
    doc = _doc(capsys)
    assert not any("results" in p for p in doc["pods"])


def test_seed_is_reproducible(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """--seed N: seeded tie-breaking gives the same output for the same seed."""
    nodes = "".join(
        f"---\napiVersion: v1\nkind: Node\nmetadata: {{name: n{i}}}\n"
        "status: {allocatable: {cpu: '8', memory: 16Gi, pods: '110'}}\n"
        for i in range(5)
    )
    pods = "".join(
        f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}}}\n"
        "spec: {containers: [{name: c, resources: {requests: {cpu: 100m}}}]}\n"
        for i in range(20)
    )
    f = tmp_path / "c.yaml"
    f.write_text(nodes + pods)
    one = _doc(capsys, str(f), "--seed", "3")
    assert one == _doc(capsys, str(f), "--seed", "3")


def test_explain_scores_computed_by_hand(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """--explain's raw and final scores against kube-scheduler 1.34's formulas, by hand.

    Nodes a (4 cpu, 8Gi) and b (8 cpu, 8Gi), empty; pod: 1 cpu, 2Gi. Default weights:
    NodeResourcesFit 1, NodeResourcesBalancedAllocation 1.

    NodeResourcesFit, LeastAllocated (resource_allocation.go + least_allocated.go):
    per resource ``(allocatable - requested) * 100 / allocatable`` (integer division), then
    the weighted mean (weights cpu 1, memory 1):
    a: cpu (4000 - 1000) * 100 / 4000 = 75, memory (8Gi - 2Gi) * 100 / 8Gi = 75 -> 75;
    b: cpu (8000 - 1000) * 100 / 8000 = 87, memory 75 -> (87 + 75) / 2 = 81.

    NodeResourcesBalancedAllocation (balanced_allocation.go): fractions requested /
    allocatable, for two resources std = |f1 - f2| / 2, score ``(1 - std) * 100``:
    a: 0.25 and 0.25 -> std 0 -> 100; b: 0.125 and 0.25 -> std 0.0625 -> 93.

    Neither normalizes; every other plugin scores both nodes alike (no taints, no
    preferences, no images), so a wins by (75 + 100) - (81 + 93) = 1.
    """
    if not callable(getattr(_plugin_class("NodeResourcesFit"), "schedsim_score", None)):
        pytest.skip("NodeResourcesFit has no Score yet")
    f = tmp_path / "c.yaml"
    f.write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: a}\n"
        "status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}\n---\n"
        "apiVersion: v1\nkind: Node\nmetadata: {name: b}\n"
        "status: {allocatable: {cpu: '8', memory: 8Gi, pods: '110'}}\n---\n"
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
        "spec: {containers: [{name: c, resources: {requests: {cpu: '1', memory: 2Gi}}}]}\n"
    )
    results = _doc(capsys, str(f), "--explain")["pods"][0]["results"]
    for plugin, a, b in (
        ("NodeResourcesFit", 75, 81),
        ("NodeResourcesBalancedAllocation", 100, 93),
    ):
        assert (results["score"]["a"][plugin], results["score"]["b"][plugin]) == (a, b)
        assert (results["finalScore"]["a"][plugin], results["finalScore"]["b"][plugin]) == (a, b)
    others = {
        node: sum(
            v
            for k, v in results["finalScore"][node].items()
            if k not in ("NodeResourcesFit", "NodeResourcesBalancedAllocation")
        )
        for node in ("a", "b")
    }
    assert others["a"] == others["b"]
    assert results["selectedNode"] == "a"


def _plugin_class(name: str) -> object:
    from schedsim.framework import discover_plugins

    return discover_plugins()[name]
