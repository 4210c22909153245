"""Odd input ends or errors cleanly (issue 30, "Hangs and tracebacks on odd input"): each test
is one repro of that list, with the behaviour it mirrors named in its docstring."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schedsim.cli import main

NODES_HEADER = "sn,cpu_milli,memory_mib,gpu,model\n"
PODS_HEADER = (
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
    "deletion_time,scheduled_time\n"
)
ONE_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: p
  namespace: default
  creationTimestamp: "2024-01-01T00:00:00Z"
  annotations: {schedsim.io/duration: 10m}
spec:
  containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]
"""


def _json(argv: list[str], capsys: pytest.CaptureFixture[str], code: int = 0) -> dict:
    assert main(argv) == code
    return json.loads(capsys.readouterr().out)


def test_replay_with_no_nodes_ends(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """kube-scheduler fails a pod facing no nodes with ``no nodes available to schedule
    pods`` (ErrNoNodesAvailable, an Error status) and retries it after backoff for ever; with
    nothing else that can change, every retry fails the same way, so the replay ends with the
    pod listed as pending (it used to retry every 10 virtual seconds for ever)."""
    trace = tmp_path / "t.yaml"
    trace.write_text(ONE_POD)
    out = _json(["replay", str(trace), "-o", "json"], capsys)
    assert out["unschedulable"] == {"default/p": "no nodes available to schedule pods"}
    assert out["summary"]["pendingAtEnd"] == 1
    pods = tmp_path / "pods.csv"
    nodes = tmp_path / "nodes.csv"
    pods.write_text(PODS_HEADER + "a,1000,1024,0,0,,BE,Running,10,20,10\n")
    nodes.write_text(NODES_HEADER)
    out = _json(
        ["replay", "--alibaba-pods", str(pods), "--alibaba-nodes", str(nodes), "-o", "json"],
        capsys,
    )
    assert out["unschedulable"] == {"default/a": "no nodes available to schedule pods"}


CLUSTER = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10", example.com/x: "QUANTITY"}}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec: {containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]}
"""


def test_huge_binary_quantity_is_capped_not_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """apimachinery's ParseQuantity takes ``9999999999999999999Ei`` (the slow inf.Dec path)
    and caps a BinarySI amount at 2**63 - 1 (``maxAllowed``); the API server stores it."""
    from schedsim.api.quantity import parse_quantity

    assert parse_quantity("9999999999999999999Ei") == 2**63 - 1
    cluster = tmp_path / "c.yaml"
    cluster.write_text(CLUSTER.replace("QUANTITY", "9999999999999999999Ei"))
    out = _json(["simulate", str(cluster), "-o", "json"], capsys)
    assert out["summary"]["scheduled"] == 1


@pytest.mark.parametrize(
    ("plugins", "where", "protocol"),
    [
        ("score: {enabled: [{name: NodeResourcesFit, weight: 2}, {name: NodeResourcesFit}]}",
         "score.enabled[1]", "ScorePlugin"),
        ("filter: {enabled: [{name: NodeName}, {name: NodeName}]}",
         "filter.enabled[1]", "FilterPlugin"),
        # mergePluginSet keeps the second entry in the default's place and appends the
        # first; expandMultiPointPlugins then meets it again at PreFilter
        ("multiPoint: {enabled: [{name: NodeResourcesFit}, {name: NodeResourcesFit}]}",
         "multiPoint.enabled[1]", "PreFilterPlugin"),
    ],
)  # fmt: skip
def test_plugin_listed_twice_is_refused(
    plugins: str, where: str, protocol: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """kube-scheduler refuses to start: runtime/framework.go updatePluginList (and
    expandMultiPointPlugins) return ``plugin "X" already registered as "ScorePlugin"``; the
    last weight used to win silently."""
    cluster = tmp_path / "c.yaml"
    cluster.write_text(CLUSTER.replace("QUANTITY", "1"))
    config = tmp_path / "s.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        f"profiles:\n- plugins:\n    {plugins}\n"
    )
    assert main(["simulate", str(cluster), "--config", str(config)]) == 2
    err = capsys.readouterr().err
    name = "NodeName" if "NodeName" in plugins else "NodeResourcesFit"
    assert err == (
        f"schedsim: error: {config}: KubeSchedulerConfiguration: profiles[0].plugins.{where}: "
        f'plugin "{name}" already registered as "{protocol}"\n'
    )


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("1500ns", 1.5e-6), ("3us", 3e-6), ("3\u00b5s", 3e-6), ("3\u03bcs", 3e-6),
     ("1h2m3s4ms5us6ns", 3723.004005006)],
)  # fmt: skip
def test_every_go_duration_unit(text: str, seconds: float) -> None:
    """Go's time.ParseDuration unitMap: ns, us, µs (U+00B5), μs (U+03BC), ms, s, m, h."""
    from schedsim.replay import parse_duration

    assert parse_duration(text) == pytest.approx(seconds, rel=1e-12)


JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: j, namespace: default}
spec:
  FIELD
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: x}]
"""
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: d, namespace: default}
spec:
  selector: {matchLabels: {a: b}}
  FIELD
  template:
    metadata: {labels: {a: b}}
    spec:
      containers: [{name: c, image: x}]
"""


@pytest.mark.parametrize(
    ("text", "field", "error"),
    [
        # int32 fields the API server cannot decode
        (JOB, "parallelism: 2147483648",
         "Job default/j: spec.parallelism: invalid value 2147483648: out of the int32 range"),
        (JOB, "completions: 2147483648",
         "Job default/j: spec.completions: invalid value 2147483648: out of the int32 range"),
        # validateJobSpec: ValidateNonnegativeField
        (JOB, "backoffLimit: -1",
         "Job default/j: spec.backoffLimit: invalid value -1: must be greater than or equal to 0"),
        (JOB, "podReplacementPolicy: Sometimes",
         'Job default/j: spec.podReplacementPolicy: unsupported value "Sometimes": supported '
         'values: "TerminatingOrFailed", "Failed"'),
        # ValidateDeploymentStrategy
        (DEPLOYMENT, "strategy: {type: BlueGreen}",
         'Deployment default/d: spec.strategy.type: unsupported value "BlueGreen": supported '
         'values: "Recreate", "RollingUpdate"'),
    ],
)  # fmt: skip
def test_controller_spec_validation(
    text: str, field: str, error: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What pkg/apis/batch/validation and pkg/apis/apps/validation refuse, and int32 widths
    (used to be accepted)."""
    f = tmp_path / "w.yaml"
    f.write_text(text.replace("FIELD", field))
    assert main(["simulate", str(f)]) == 2
    assert capsys.readouterr().err == f"schedsim: error: {f}: {error}\n"


@pytest.mark.parametrize(
    "field", ["backoffLimit: 0", "backoffLimit: 2147483647", "podReplacementPolicy: Failed"]
)
def test_valid_controller_fields_load(
    field: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "w.yaml"
    f.write_text(JOB.replace("FIELD", field))
    assert main(["simulate", str(f), "-o", "json"]) == 0
