"""The ``schedsim simulate`` command: the shipped example, output formats, ``--config``, and
bad input (exit status 2, one ``schedsim: error: ...`` line naming the file, object and field,
nothing on stdout, never a traceback)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_proc import schedsim_script

from schedsim.cli import main

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("SCHEDSIM_SHARED_DIR") or ROOT.parent / "shared")
BENCHMARK = SHARED / "examples" / "k8s-sims-benchmark"

TAINT = "node(s) had untolerated taint(s)"
CORDONED = "node(s) were unschedulable"
SELECTOR = "node(s) didn't match Pod's node affinity/selector"

# The shipped example in first-fit placement (FIRST_FIT: these tests are about the command's
# input and output, the placement modes have tests/cli/test_placement_modes.py), worked out
# by hand with kube-scheduler's filter semantics. Queue order:
# priority (train-1 has 1000), then name. Nodes in input order: worker-a, worker-b, gpu-1,
# worker-c (cordoned); the first search starts at index 1, later ones after the node chosen
# last. Filters run NodeUnschedulable, NodeName, TaintToleration, NodeAffinity, NodePorts,
# NodeResourcesFit and a node is charged to the first one that rejects it.
#   train-1  from worker-b: selector fails; gpu-1 tolerated, fits          -> gpu-1
#   cache    from worker-c: cordoned; worker-a (ssd) 1 cpu / 2Gi free       -> worker-a
#   db-1     from worker-b: zone-b, 3.5 cpu free, port 5432 free            -> worker-b
#   report   6 cpu: gpu-1 taint, worker-c cordoned, worker-a short of cpu (0.5 free) and
#            memory (1Gi free), worker-b short of cpu (2.5 free)            -> none
#   train-2  no toleration: gpu-1 taint, worker-c cordoned, workers fail the selector -> none
#   web-1    from gpu-1 (after worker-b): taint; worker-c cordoned; worker-a 0.5 cpu free -> a
#   web-2    from worker-b: 2.5 cpu free                                     -> worker-b
EXAMPLE_PODS: list[dict[str, Any]] = [
    {"namespace": "ml", "name": "train-1", "node": "gpu-1", "reasons": [], "message": ""},
    {"namespace": "shop", "name": "cache", "node": "worker-a", "reasons": [], "message": ""},
    {"namespace": "shop", "name": "db-1", "node": "worker-b", "reasons": [], "message": ""},
    {
        "namespace": "shop",
        "name": "report",
        "node": None,
        "reasons": ["Insufficient cpu", "Insufficient memory", TAINT, CORDONED],
        "message": "0/4 nodes are available: 1 Insufficient memory, 1 node(s) had untolerated "
        "taint(s), 1 node(s) were unschedulable, 2 Insufficient cpu.",
    },
    {
        "namespace": "ml",
        "name": "train-2",
        "node": None,
        "reasons": [SELECTOR, TAINT, CORDONED],
        "message": "0/4 nodes are available: 1 node(s) had untolerated taint(s), "
        "1 node(s) were unschedulable, 2 node(s) didn't match Pod's node affinity/selector.",
    },
    {"namespace": "shop", "name": "web-1", "node": "worker-a", "reasons": [], "message": ""},
    {"namespace": "shop", "name": "web-2", "node": "worker-b", "reasons": [], "message": ""},
]
for _p in EXAMPLE_PODS:
    _p["allocations"] = []  # no DRA claims in the demo cluster
    # one attempt each: nothing in the pass could help the unschedulable ones (no pod left a
    # node, no node was added), so the queue never retried them
    _p["attempts"] = 1

NO_TAINT_FILTER = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    filter:
      disabled:
      - name: TaintToleration
"""

GPU_CLUSTER = """\
apiVersion: v1
kind: Node
metadata: {name: plain, labels: {kubernetes.io/hostname: plain}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: gpu, labels: {accelerator: example-gpu}}
spec:
  taints: [{key: dedicated, value: gpu, effect: NoSchedule}]
status: {allocatable: {cpu: "8", memory: 32Gi, pods: "110", example.com/gpu: "2"}}
---
apiVersion: v1
kind: Pod
metadata: {name: trainer, namespace: ml}
spec:
  nodeSelector: {accelerator: example-gpu}
  containers:
  - name: t
    image: example.com/trainer:2
    resources: {limits: {example.com/gpu: "1"}}
"""

POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"

FIRST_FIT = ("--placement", "first-fit")


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["simulate", *FIRST_FIT, *argv])
    out, err = capsys.readouterr()
    return code, out, err


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    code, out, err = _run(capsys, *argv, "--output", "json")
    assert (code, err) == (0, "")
    doc: dict[str, Any] = json.loads(out)
    return doc


def _placement(doc: dict[str, Any]) -> dict[str, str | None]:
    return {f"{p['namespace']}/{p['name']}": p["node"] for p in doc["pods"]}


def _assert_one_error_line(code: int, out: str, err: str, expected: str) -> None:
    assert code == 2, err
    assert out == ""
    assert "Traceback" not in err
    assert err == f"schedsim: error: {expected}\n"


class _Stdin:
    """A stand-in for sys.stdin with a binary ``buffer``."""

    def __init__(self, data: bytes) -> None:
        self.buffer = io.BytesIO(data)


@pytest.fixture
def cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


# --------------------------------------------------------------------------- the example


def test_example_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys)
    assert (code, err) == (0, "")
    for p in EXAMPLE_PODS:
        assert f"{p['namespace']}/{p['name']}" in out
    assert out.count("<none>") == 2
    assert "0/4 nodes are available: 1 Insufficient memory," in out
    assert out.rstrip().endswith(
        "5 scheduled, 2 unschedulable, 4 nodes (gpu-1: 1, worker-a: 2, worker-b: 2)"
    )
    # bound pods are placed, not scheduled: they are not rows
    assert "db-0" not in out
    assert "metrics-agent" not in out


def test_table_never_cuts_names(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Pod and node names are identities (Kubernetes allows 253-character names): the table
    folds them onto more lines instead of cutting them, so pods of one long namespace stay
    distinguishable (a fresh user saw 43 pods as one cut name)."""
    ns = "a-very-long-namespace-name-that-is-also-valid-in-kubernetes-x"
    node = "node-with-a-rather-long-name-that-goes-on-and-on-and-on-for-a-while-0"
    docs = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": node},
         "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}},
    ] + [
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"pod-{i}", "namespace": ns},
         "spec": {"containers": [{"name": "c", "image": "i"}]}}
        for i in range(2)
    ]  # fmt: skip
    f = tmp_path / "long.json"
    f.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}))
    code, out, err = _run(capsys, str(f))
    assert (code, err) == (0, "")
    assert "…" not in out
    cells = [line.split("│")[1:3] for line in out.splitlines() if line.startswith("│")]
    pods = ["".join(c[0].strip() for c in cells[k : k + 2]) for k in (0, 2)]
    nodes = ["".join(c[1].strip() for c in cells[k : k + 2]) for k in (0, 2)]
    assert pods == [f"{ns}/pod-0", f"{ns}/pod-1"]
    assert nodes == [node, node]


def test_example_json_exact(capsys: pytest.CaptureFixture[str]) -> None:
    doc = _json(capsys)
    assert doc == {
        "pods": EXAMPLE_PODS,
        "summary": {"scheduled": 5, "unschedulable": 2, "errors": 0, "preempted": 0, "nodes": 4},
        "warnings": [],
    }


def test_json_shape(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "-o", "json")
    assert code == 0
    assert out.endswith("}\n")
    doc = json.loads(out)
    assert list(doc) == ["pods", "summary", "warnings"]
    assert list(doc["summary"]) == ["scheduled", "unschedulable", "errors", "preempted", "nodes"]
    assert all(isinstance(v, int) for v in doc["summary"].values())
    for p in doc["pods"]:
        assert list(p) == [
            "namespace",
            "name",
            "node",
            "reasons",
            "message",
            "allocations",
            "attempts",
        ]
        assert isinstance(p["namespace"], str) and isinstance(p["name"], str)
        assert p["node"] is None or isinstance(p["node"], str)
        assert isinstance(p["reasons"], list)
        assert all(isinstance(r, str) for r in p["reasons"])
        assert isinstance(p["message"], str)
        assert (p["node"] is None) == bool(p["message"]) == bool(p["reasons"])
        assert p["reasons"] == sorted(p["reasons"])


def test_example_file_given_as_path_gives_the_same_result(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = ROOT / "src" / "schedsim" / "examples" / "demo-cluster.yaml"
    assert _json(capsys, str(path)) == _json(capsys)


def test_example_from_stdin(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    text = (ROOT / "src" / "schedsim" / "examples" / "demo-cluster.yaml").read_text()
    monkeypatch.setattr(sys, "stdin", _Stdin(text.encode()))
    assert _json(capsys, "-")["pods"] == EXAMPLE_PODS


def test_empty_stdin_is_zero_objects(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # like an empty file: nothing to schedule, not an error, but a warning
    monkeypatch.setattr(sys, "stdin", _Stdin(b""))
    code, out, err = _run(capsys, "-", "--output", "json")
    assert (code, err) == (0, "warning: no objects found in <stdin>\n")
    assert json.loads(out) == {
        "pods": [],
        "summary": {"scheduled": 0, "unschedulable": 0, "errors": 0, "preempted": 0, "nodes": 0},
        "warnings": [{"message": "no objects found in <stdin>"}],
    }


# --------------------------------------------------------------------------- --config


def test_config_disabling_taint_toleration_filter(
    cwd: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (cwd / "cluster.yaml").write_text(GPU_CLUSTER)
    (cwd / "sched.yaml").write_text(NO_TAINT_FILTER)
    default = _json(capsys, "cluster.yaml")
    assert default["pods"] == [
        {
            "namespace": "ml",
            "name": "trainer",
            "node": None,
            "reasons": [SELECTOR, TAINT],
            "message": "0/2 nodes are available: 1 node(s) didn't match Pod's node "
            "affinity/selector, 1 node(s) had untolerated taint(s).",
            "allocations": [],
            "attempts": 1,
        }
    ]
    relaxed = _json(capsys, "cluster.yaml", "--config", "sched.yaml")
    assert _placement(relaxed) == {"ml/trainer": "gpu"}


def test_config_on_the_example(cwd: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (cwd / "sched.yaml").write_text(NO_TAINT_FILTER)
    doc = _json(capsys, "--config", "sched.yaml")
    # without the taint check, gpu-1 takes report (8 cpu, 6 free after train-1) and train-2
    assert _placement(doc) == {
        "ml/train-1": "gpu-1",
        "shop/cache": "worker-a",
        "shop/db-1": "worker-b",
        "shop/report": "gpu-1",
        "ml/train-2": "gpu-1",
        "shop/web-1": "worker-a",
        "shop/web-2": "worker-b",
    }
    assert doc["summary"] == {
        "scheduled": 7,
        "unschedulable": 0,
        "errors": 0,
        "preempted": 0,
        "nodes": 4,
    }


BAD_CONFIGS = [
    (
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\nprofiles: [\n",
        "not valid YAML: ",
    ),
    ("kind: Pod\n", "KubeSchedulerConfiguration: kind: expected KubeSchedulerConfiguration, "),
    ("- a\n", "expected a KubeSchedulerConfiguration mapping"),
    ("", "expected one KubeSchedulerConfiguration, found 0"),
    ("kind: KubeSchedulerConfiguration\n---\nkind: KubeSchedulerConfiguration\n", "expected one "),
    (
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\nprofiles: 5\n",
        "KubeSchedulerConfiguration: profiles: expected a list, got a number",
    ),
    (
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\nprofiles: [{plugins: {filter: {disabled: [{}]}}}]\n",
        "KubeSchedulerConfiguration: profiles[0].plugins.filter.disabled[0].name: required",
    ),
    (
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\nprofiles: [{plugins: {filter: {enabled: "
        "[{name: Bogus}]}}}]\n",
        "plugin 'Bogus' is not registered",
    ),
    (
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\nprofiles: [{pluginConfig: [{name: NodeResourcesFit, "
        "args: {ignoredResources: 5}}]}]\n",
        "KubeSchedulerConfiguration: profiles[0].pluginConfig[0].args.ignoredResources: "
        "expected a list, got int",
    ),
    (
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\nx: !!int abc\n",
        "not valid YAML: ",
    ),
    (
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\nx: !!bool abc\n",
        "not valid YAML: line 3, column 4: invalid !!bool value 'abc'",
    ),
    ("[" * 100_000, "not valid YAML: "),
]


@pytest.mark.parametrize(("text", "problem"), BAD_CONFIGS, ids=[p for _, p in BAD_CONFIGS])
def test_bad_config(cwd: Path, capsys: pytest.CaptureFixture[str], text: str, problem: str) -> None:
    (cwd / "sched.yaml").write_text(text)
    code, out, err = _run(capsys, "--config", "sched.yaml")
    assert code == 2
    assert out == ""
    assert err.startswith(f"schedsim: error: sched.yaml: {problem}"), err
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    ("path", "problem"),
    [
        ("nope.yaml", "no such file or directory"),
        ("confdir", "cannot read: Is a directory"),
        ("bin.yaml", "not a UTF-8 text file"),
    ],
)
def test_unreadable_config(
    cwd: Path, capsys: pytest.CaptureFixture[str], path: str, problem: str
) -> None:
    (cwd / "confdir").mkdir()
    (cwd / "bin.yaml").write_bytes(b"\xff\xfe\x00kind")
    _assert_one_error_line(*_run(capsys, "--config", path), f"{path}: {problem}")


# --------------------------------------------------------------------------- bad input

C = POD + "spec:\n  containers:\n  - name: c\n    resources: "

BAD_INPUTS: list[tuple[str, str | bytes, str]] = [
    (
        "f.yaml",
        "- a\n- b\n",
        "f.yaml: document 1: expected a Kubernetes object (a mapping), got a list",
    ),
    ("f.yaml", "kind: 5\n", "f.yaml: document 1: kind: expected a string, got a number"),
    (
        "f.yaml",
        "kind: Pod\nmetadata: []\n",
        "f.yaml: Pod (document 1, no name): metadata: expected a mapping, got a list",
    ),
    (
        "f.yaml",
        POD + "spec: {containers: {}}\n",
        "f.yaml: Pod default/p: spec.containers: expected a list, got a mapping",
    ),
    (
        "f.yaml",
        C + '{requests: "x"}\n',
        "f.yaml: Pod default/p: spec.containers[0].resources.requests: expected a mapping, "
        "got a string",
    ),
    (
        "f.yaml",
        C + '{requests: {cpu: "-100m"}}\n',
        'f.yaml: Pod default/p: spec.containers[0].resources.requests[cpu]: quantity "-100m": '
        "must be greater than or equal to 0",
    ),
    (
        "f.yaml",
        C + "{requests: {memory: 1e1001}}\n",
        'f.yaml: Pod default/p: spec.containers[0].resources.requests[memory]: quantity "1e1001": '
        "exponent 1001 too large (at most 1000)",
    ),
    (
        "f.yaml",
        "kind: Pod\nmetadata:\n\tname: p\n",
        "f.yaml: not valid YAML: line 3, column 1: while scanning for the next token found "
        "character that cannot start any token (tabs cannot be used for indentation)",
    ),
    ("f.yaml", bytes(range(256)), "f.yaml: not a UTF-8 text file"),
    (
        "f.yaml",
        "kind: List\nitems: [1, 2]\n",
        "f.yaml: document 1: items[0]: expected a mapping, got a number",
    ),
    (
        "f.yaml",
        "kind: List\nitems: {a: b}\n",
        "f.yaml: document 1: List: items: expected a list, got a mapping",
    ),
    (
        "f.yaml",
        "kind: Pod\nmetadata: {name: p, creationTimestamp: 2024-13-45}\n",
        "f.yaml: Pod default/p: metadata.creationTimestamp: invalid RFC 3339 timestamp "
        "'2024-13-45' (expected e.g. 2024-01-02T03:04:05Z)",
    ),
    (
        "f.yaml",
        "kind: Pod\nmetadata: {name: p, creationTimestamp: 2024-02-30T00:00:00Z}\n",
        "f.yaml: Pod default/p: metadata.creationTimestamp: invalid RFC 3339 timestamp "
        "'2024-02-30T00:00:00Z' (expected e.g. 2024-01-02T03:04:05Z)",
    ),
    (
        "f.yaml",
        "kind: Pod\nmetadata: {name: p, creationTimestamp: 2024-01-02 03:04:05}\n",
        "f.yaml: Pod default/p: metadata.creationTimestamp: invalid RFC 3339 timestamp "
        "'2024-01-02 03:04:05' (expected e.g. 2024-01-02T03:04:05Z)",
    ),
    (
        "f.json",
        '{"kind": "Pod", "metadata": {"name": "p"},}',
        "f.json: not valid JSON: line 1, column 43: Expecting property name enclosed in double "
        "quotes",
    ),
    (
        "f.yaml",
        "kind: Node\nmetadata: {name: n}\n---\nkind: Node\nmetadata: {name: n}\n",
        "f.yaml: Node n: metadata.name: duplicate object (first seen in f.yaml)",
    ),
    (
        "f.yaml",
        "kind: Node\nmetadata: {name: n}\nspec: {taints: [{key: k, effect: Sometimes}]}\n",
        "f.yaml: Node n: spec.taints[0].effect: unsupported value 'Sometimes': want one of "
        "['NoExecute', 'NoSchedule', 'PreferNoSchedule']",
    ),
]


@pytest.mark.parametrize(
    ("name", "content", "expected"), BAD_INPUTS, ids=[e for *_, e in BAD_INPUTS]
)
def test_bad_input(
    cwd: Path, capsys: pytest.CaptureFixture[str], name: str, content: str | bytes, expected: str
) -> None:
    if isinstance(content, bytes):
        (cwd / name).write_bytes(content)
    else:
        (cwd / name).write_text(content)
    for output in ("table", "json"):
        _assert_one_error_line(*_run(capsys, name, "-o", output), expected)


def test_bad_file_after_good_ones_prints_nothing(
    cwd: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (cwd / "good.yaml").write_text(GPU_CLUSTER)
    (cwd / "bad.yaml").write_text(POD + "spec: {priority: high}\n")
    _assert_one_error_line(
        *_run(capsys, "good.yaml", "bad.yaml"),
        "bad.yaml: Pod default/p: spec.priority: expected an integer, got a string",
    )


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["nope.yaml"], "nope.yaml: no such file or directory"),
        (["emptydir"], "emptydir: directory has no .yaml, .yml or .json files"),
        (["textdir"], "textdir: directory has no .yaml, .yml or .json files"),
        ([""], "'': empty path"),
    ],
)
def test_bad_paths(
    cwd: Path, capsys: pytest.CaptureFixture[str], argv: list[str], expected: str
) -> None:
    (cwd / "emptydir").mkdir()
    (cwd / "textdir").mkdir()
    (cwd / "textdir" / "notes.txt").write_text(POD)
    _assert_one_error_line(*_run(capsys, *argv), expected)


def test_unreadable_file(cwd: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = cwd / "f.yaml"
    path.write_text(POD)
    path.chmod(0)
    try:
        if os.access(path, os.R_OK):
            pytest.skip("running with permissions that ignore file modes (root)")
        _assert_one_error_line(*_run(capsys, "f.yaml"), "f.yaml: cannot read: Permission denied")
    finally:
        path.chmod(0o644)


@pytest.mark.parametrize("text", ["", "\n", "# nothing yet\n", "---\n---\n"])
def test_empty_file_is_not_an_error(
    cwd: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    (cwd / "f.yaml").write_text(text)
    code, out, err = _run(capsys, "f.yaml")
    assert (code, err) == (0, "warning: no objects found in f.yaml\n")
    assert "0 scheduled, 0 unschedulable, 0 nodes" in out


def test_unknown_kind_warning(cwd: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (cwd / "app.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\n---\n"
        "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: web}\n---\n"
        + GPU_CLUSTER
    )
    code, out, err = _run(capsys, "app.yaml", "-o", "json")
    assert code == 0
    assert err == ("warning: skipped kinds not modelled by schedsim: 1 ConfigMap, 1 Ingress\n")
    assert _placement(json.loads(out)) == {"ml/trainer": None}


def test_bound_pod_on_unknown_node_warning(cwd: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (cwd / "f.yaml").write_text(POD + "spec: {nodeName: ghost, containers: [{name: c}]}\n")
    code, out, err = _run(capsys, "f.yaml")
    assert code == 0
    assert err == "warning: pod default/p: node 'ghost' is not among the nodes; ignored\n"
    assert "0 scheduled, 0 unschedulable, 0 nodes" in out


def test_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["simulate", "--output", "xml"])
    assert info.value.code == 2
    assert "invalid choice: 'xml'" in capsys.readouterr().err
    code, out, err = _run(capsys, "--feature-gates", "NoSuchGate=true")
    _assert_one_error_line(code, out, err, "--feature-gates: unknown feature gate 'NoSuchGate'")
    code, out, err = _run(capsys, "--feature-gates", "x")
    _assert_one_error_line(code, out, err, "--feature-gates: expected NAME=true|false, got 'x'")


# --------------------------------------------------------------------------- inputs untouched


def _snapshot(root: Path) -> dict[str, tuple[bytes, int, int]]:
    return {
        str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns, p.stat().st_mode)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_inputs_are_not_modified(cwd: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inputs = cwd / "in"
    inputs.mkdir()
    (inputs / "cluster.yaml").write_text(GPU_CLUSTER)
    (inputs / "more.json").write_text(
        json.dumps({"kind": "List", "items": [{"kind": "Pod", "metadata": {"name": "j"}}]})
    )
    (inputs / "deploy.yaml").write_text("kind: ConfigMap\nmetadata: {name: d}\n")
    (inputs / "notes.txt").write_text("not a manifest\n")
    (inputs / "sched.yaml").write_text(NO_TAINT_FILTER)
    (inputs / "bad.yaml").write_text(POD + "spec: []\n")
    os.utime(inputs / "cluster.yaml", ns=(1_000_000_000, 1_000_000_000))
    before = _snapshot(cwd)
    for argv in (
        ["in/cluster.yaml", "in/more.json", "in/deploy.yaml", "--config", "in/sched.yaml"],
        ["in/cluster.yaml", "in/more.json", "-o", "json"],
        ["in/cluster.yaml", "in/bad.yaml"],
    ):
        main(["simulate", *argv])
    capsys.readouterr()
    assert _snapshot(cwd) == before


# --------------------------------------------------------------------------- real inputs


def test_k8s_sims_benchmark(capsys: pytest.CaptureFixture[str]) -> None:
    if not BENCHMARK.is_dir():
        pytest.skip(f"{BENCHMARK} not found (set SCHEDSIM_SHARED_DIR to the shared folder)")
    doc = _json(capsys, str(BENCHMARK))
    assert doc["summary"] == {
        "scheduled": 400,
        "unschedulable": 0,
        "errors": 0,
        "preempted": 0,
        "nodes": 4,
    }
    per_node: dict[str, int] = {}
    for p in doc["pods"]:
        assert p["namespace"] == "default"
        assert (p["reasons"], p["message"]) == ([], "")
        per_node[p["node"]] = per_node.get(p["node"], 0) + 1
    assert sorted(per_node.values()) == [100, 100, 100, 100]


# --------------------------------------------------------------------------- the real command


def _proc(argv: list[str], cwd: Path, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    if "input" not in kwargs:
        # not the runner's stdin: a pipe there makes `simulate` without PATH add its note
        kwargs.setdefault("stdin", subprocess.DEVNULL)
    return subprocess.run(
        [schedsim_script(), "simulate", *FIRST_FIT, *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        **kwargs,
    )


def test_console_script_bad_file_exits_2_without_traceback(cwd: Path) -> None:
    (cwd / "bad.yaml").write_text(C + "{requests: {cpu: abc}}\n")
    proc = _proc(["bad.yaml"], cwd)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith(
        "schedsim: error: bad.yaml: Pod default/p: spec.containers[0].resources.requests[cpu]: "
        'quantity "abc"'
    )
    assert proc.stderr.count("\n") == 1


def test_console_script_runs_the_example(cwd: Path) -> None:
    proc = _proc(["-o", "json"], cwd)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert json.loads(proc.stdout)["pods"] == EXAMPLE_PODS


def test_console_script_stdin(cwd: Path) -> None:
    proc = _proc(["-", "-o", "json"], cwd, input=GPU_CLUSTER)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert _placement(json.loads(proc.stdout)) == {"ml/trainer": None}
    empty = _proc(["-"], cwd, stdin=subprocess.DEVNULL)
    assert (empty.returncode, empty.stderr) == (0, "warning: no objects found in <stdin>\n")


def test_console_script_binary_stdin(cwd: Path) -> None:
    proc = subprocess.run(
        [schedsim_script(), "simulate", *FIRST_FIT, "-"],
        cwd=cwd,
        input=b"kind: Pod\n\xff\xfe\x00",
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stdout == b""
    assert proc.stderr == b"schedsim: error: <stdin>: not a UTF-8 text file\n"


def test_console_script_closed_stdin(cwd: Path) -> None:
    proc = _proc(["-"], cwd, preexec_fn=lambda: os.close(0))
    assert proc.returncode == 2
    assert proc.stderr == "schedsim: error: <stdin>: standard input is closed\n"


def test_console_script_reader_gone_is_one_line(cwd: Path) -> None:
    """`schedsim simulate | head -1` when head exits first: exit 1 and one line (docs/cli.md),
    no traceback."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run(
            [schedsim_script(), "simulate", *FIRST_FIT, "-o", "json"],
            cwd=cwd,
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        os.close(write_end)
    assert proc.returncode == 2
    assert proc.stderr == (
        "schedsim: error: standard output: cannot write the output: the reader went away "
        "(broken pipe) (write it to a file with --output-file FILE instead)\n"
    )
