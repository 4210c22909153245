"""Odd input ends or errors cleanly (issue 30, "Hangs and tracebacks on odd input"): each test
is one repro of that list, with the behaviour it mirrors named in its docstring."""

from __future__ import annotations

import json
import os
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


def test_replay_with_no_nodes_scales_up_from_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With a node group, the pod facing no nodes gets one: kube-scheduler's schedulingCycle
    turns ErrNoNodesAvailable into an UnschedulableAndUnresolvable status, so the pod is
    marked PodScheduled=False/Unschedulable (handleSchedulingFailure) while it backs off, and
    the Cluster Autoscaler, which lists pods by that condition, scales up from zero nodes
    (--scale-up-from-zero, default true; actOnEmptyCluster does not stop the loop). The
    replay's autoscaler saw only parked pods, so the pod stayed pending with no node added."""
    trace = tmp_path / "t.yaml"
    trace.write_text(ONE_POD)
    groups = tmp_path / "g.yaml"
    groups.write_text(
        "nodeGroups:\n- name: g\n  maxSize: 2\n  template:\n    node:\n"
        "      metadata: {name: t}\n"
        "      status: {allocatable: {cpu: '4', memory: 8Gi, pods: '10'}}\n"
    )
    out = _json(["replay", str(trace), "--node-groups", str(groups), "-o", "json"], capsys)
    assert out["summary"]["scheduled"] == 1
    assert out["summary"]["nodesAdded"] == 1
    assert out["summary"]["pendingAtEnd"] == 0


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
        (JOB, "activeDeadlineSeconds: -1",  # accepted before (issue 30 audit)
         "Job default/j: spec.activeDeadlineSeconds: invalid value -1: must be greater than or "
         "equal to 0"),
        (JOB, "activeDeadlineSeconds: 9223372036854775808",  # an int64 field
         "Job default/j: spec.activeDeadlineSeconds: invalid value 9223372036854775808: out of "
         "the int64 range"),
        (JOB, "podReplacementPolicy: Sometimes",
         'Job default/j: spec.podReplacementPolicy: unsupported value "Sometimes": supported '
         'values: "TerminatingOrFailed", "Failed"'),
        # validateJobSpec: per-index limits only with completionMode Indexed
        (JOB, "backoffLimitPerIndex: 1",
         "Job default/j: spec.backoffLimitPerIndex: invalid value 1: requires indexed "
         "completion mode"),
        (JOB, "maxFailedIndexes: 0",
         "Job default/j: spec.maxFailedIndexes: invalid value 0: requires indexed "
         "completion mode"),
        # ValidateDeploymentStrategy
        (DEPLOYMENT, "strategy: {type: BlueGreen}",
         'Deployment default/d: spec.strategy.type: unsupported value "BlueGreen": supported '
         'values: "Recreate", "RollingUpdate"'),
        # ValidateDaemonSetUpdateStrategy (not tested before; the StatefulSet's is in
        # tests/unit/test_apps_validation.py)
        (DEPLOYMENT.replace("kind: Deployment", "kind: DaemonSet"),
         "updateStrategy: {type: BlueGreen}",
         'DaemonSet default/d: spec.updateStrategy.type: unsupported value "BlueGreen": '
         'supported values: "RollingUpdate", "OnDelete"'),
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
    "field",
    ["backoffLimit: 0", "backoffLimit: 2147483647", "podReplacementPolicy: Failed",
     "activeDeadlineSeconds: 0", "activeDeadlineSeconds: 9223372036854775807",
     "completionMode: Indexed\n  completions: 2\n  backoffLimitPerIndex: 1\n  maxFailedIndexes: 1"],
)  # fmt: skip
def test_valid_controller_fields_load(
    field: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "w.yaml"
    f.write_text(JOB.replace("FIELD", field))
    assert main(["simulate", str(f), "-o", "json"]) == 0


PROBE = """\
class Probe:
    name = "Probe"
    def __init__(self, args, handle): pass
    def schedsim_filter(self, state, pod, node_info): RAISE
"""
PROFILE = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    multiPoint: {enabled: [{name: Probe}]}
"""
TRACE_ON_A_NODE = (
    """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}
---
"""
    + ONE_POD
)


@pytest.mark.parametrize(
    ("statement", "why"),
    [("raise GeneratorExit", "GeneratorExit"), ("raise SystemExit(0)", "SystemExit: 0")],
)
@pytest.mark.parametrize("command", ["simulate", "replay"])
def test_plugin_raising_a_base_exception_fails_the_pod(
    statement: str,
    why: str,
    command: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A Filter raising GeneratorExit (a traceback before) or SystemExit(0) (exit 0 with no
    output before) is the plugin failing: the pod's attempt fails with an Error naming the
    plugin, the output is complete, and both commands exit 1 (replay used to exit 0 when a
    plugin failed; simulate exits 1)."""
    module = f"probe_{command}_{why.split(':')[0].lower()}"
    (tmp_path / f"{module}.py").write_text(PROBE.replace("RAISE", statement))
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "config.yaml").write_text(PROFILE)
    trace = tmp_path / "t.yaml"
    trace.write_text(TRACE_ON_A_NODE)
    argv = [command, str(trace), "--config", str(tmp_path / "config.yaml")]
    code = main([*argv, "--plugin", f"{module}:Probe", "-o", "json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    assert code == 1, err
    doc = json.loads(out)
    want = f'running "Probe" filter plugin: {why}'
    if command == "simulate":
        [pod] = doc["pods"]
        assert pod["error"] is True and want in pod["message"]
    else:
        assert doc["summary"]["scheduled"] == 0
        assert want in err  # the warning naming the pod's failed attempt
        assert "a plugin failed for 1 pod(s)" in err


def test_infinite_price_is_refused_and_json_stays_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``price: .inf`` made ``replay -o json`` print ``Infinity`` (not JSON); a node group's
    price is a finite number (the error spells the value as YAML does, ``.inf``, not Python's
    ``inf``), and the JSON writer never writes a non-finite number."""
    from schedsim.replay.export import _finite

    groups = tmp_path / "g.yaml"
    groups.write_text(
        "nodeGroups:\n- name: g\n  maxSize: 1\n  price: .inf\n  template:\n    node:\n"
        "      metadata: {name: t}\n"
        "      status: {allocatable: {cpu: '4', memory: 8Gi, pods: '10'}}\n"
    )
    trace = tmp_path / "t.yaml"
    trace.write_text(ONE_POD)
    assert main(["replay", str(trace), "--node-groups", str(groups), "-o", "json"]) == 2
    assert capsys.readouterr().err == (
        f"schedsim: error: {groups}: nodeGroups[0].price: must be a finite number >= 0, got .inf\n"
    )
    assert _finite({"a": [float("inf"), float("nan"), 1.5], "b": 2}) == {
        "a": [None, None, 1.5],
        "b": 2,
    }


def test_output_to_a_fifo_and_through_a_symlink(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The write-to-temp-then-rename is for regular files only: a FIFO's reader gets the
    whole output (it used to get 0 bytes and the FIFO became a file); a symlink stays a
    symlink and its target gets the output."""
    import os
    import threading

    from schedsim.cli.output import deliver

    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    deliver("hello\n", str(fifo))
    reader.join(10)
    assert got == [b"hello\n"]
    assert fifo.is_fifo()
    target = tmp_path / "real.txt"
    target.write_text("old\n")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    deliver("new\n", str(link))
    assert link.is_symlink() and target.read_text() == "new\n"


def test_long_scenario_names_have_bounded_file_names(tmp_path: Path) -> None:
    """A 300-character scenario name gave ``OSError: [Errno 36] File name too long`` in
    ``sweep --resume``: result files are named by a bounded, collision-free stem."""
    from schedsim.sweep.results import ResultStore, file_stem

    long_a, long_b = "a" * 300, "a" * 299 + "b"
    assert len(file_stem(long_a).encode()) <= 200
    assert file_stem(long_a) != file_stem(long_b)
    assert file_stem("short+name") == "short+name"
    store = ResultStore(str(tmp_path))
    assert store._path(long_a) != store._path(long_b)
    assert len(os.path.basename(store._path(long_a))) < 255


def test_dev_zero_input_ends_with_a_yaml_error(capsys: pytest.CaptureFixture[str]) -> None:
    """``/dev/zero`` as input ended in MemoryError: reading stops at the first NUL (YAML
    allows none) and the parser reports it (libyaml's message)."""
    assert main(["simulate", "/dev/zero"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("schedsim: error: /dev/zero: not valid YAML: unacceptable character")
    assert err.count("\n") == 1


def test_endless_input_is_refused_at_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """A stream that never ends (a FIFO kept open, ``yes | schedsim -``) is refused once it
    passes the input limit instead of filling memory."""
    import io

    from schedsim.api.errors import ManifestError
    from schedsim.api.loading import loader

    monkeypatch.setattr(loader, "MAX_INPUT_BYTES", 3 << 20)

    class Endless(io.RawIOBase):
        def readable(self) -> bool:
            return True

        def readinto(self, b: bytearray) -> int:  # type: ignore[override]
            b[:] = b"a" * len(b)
            return len(b)

    with pytest.raises(ManifestError, match=r"^<x>: larger than 3,145,728 bytes"):
        loader.read_text_stream(io.BufferedReader(Endless()), "<x>")


def test_gpu_count_checked_before_devices_are_built(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``gpu`` = 10^9 under ``--gpu-as dra`` built 10^9 device objects before the
    128-devices-per-slice check (ResourceSliceMaxDevices); it is now checked first, with the
    same message as for 129."""
    pods = tmp_path / "pods.csv"
    pods.write_text(PODS_HEADER + "a,1000,1024,0,0,,BE,Running,10,20,10\n")
    for gpus in (129, 10**9):
        nodes = tmp_path / "nodes.csv"
        nodes.write_text(NODES_HEADER + f"n1,4000,4096,{gpus},V100\n")
        argv = ["replay", "--alibaba-pods", str(pods), "--alibaba-nodes", str(nodes)]
        assert main([*argv, "--gpu-as", "dra"]) == 2
        assert capsys.readouterr().err == (
            f"schedsim: error: {nodes} (--gpu-as dra): ResourceSlice n1-gpu: spec.devices: "
            f"must have at most 128 items, got {gpus}\n"
        )


def test_huge_sweep_grid_is_refused_before_it_is_built(tmp_path: Path) -> None:
    """A sweep of 973,360 scenarios built the whole list silently before running the first:
    the grid's size is counted from the axes and refused over the limit, before any variant
    file is read."""
    from schedsim.api.errors import ManifestError
    from schedsim.sweep import load_spec

    (tmp_path / "c.yaml").write_text(CLUSTER.replace("QUANTITY", "1"))
    gates = "{" + ", ".join(f"g{i}: {{}}" for i in range(1000)) + "}"
    groups = "{" + ", ".join(f"n{i}: missing-{i}.yaml" for i in range(200)) + "}"
    spec = tmp_path / "sweep.yaml"
    spec.write_text(
        f"cluster: [c.yaml]\ncommands: [simulate]\n"
        f"axes: {{featureGates: {gates}, nodeGroups: {groups}}}\n"
    )
    with pytest.raises(ManifestError) as e:
        load_spec(str(spec))
    assert str(e.value) == (
        f"{spec}: axes: 200,000 scenarios (200 nodeGroups x 1000 featureGates x 1 command(s)), "
        "more than one sweep runs (100,000); split the grid into several specs"
    )


def test_every_decoder_problem_of_a_file_is_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """cli.md: "Every problem of a file is reported, one line each": a decoder's refusal of
    one object (a Deployment's negative replicas, as apps/v1 validation refuses them) no
    longer hides the next object's (a Job without restartPolicy)."""
    path = tmp_path / "wl.yaml"
    path.write_text(
        """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: d1, namespace: default}
spec:
  replicas: -1
  selector: {matchLabels: {app: a}}
  template:
    metadata: {labels: {app: a}}
    spec: {containers: [{name: c, image: x}]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: j1, namespace: default}
spec:
  template:
    spec: {containers: [{name: c, image: x}]}
"""
    )
    assert main(["simulate", str(path)]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        f"schedsim: error: {path}: Deployment default/d1: spec.replicas: invalid value -1: "
        "must be greater than or equal to 0",
        f"schedsim: error: {path}: Job default/j1: spec.template.spec.restartPolicy: "
        'required: valid values: "OnFailure", "Never"',
    ]


def test_a_workload_scale_past_the_limit_names_the_variant(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A sweep's ``workloadScale`` variant that takes a valid manifest past the 1,000,000
    expanded-pods limit: the error names the spec's variant as well as the manifest."""
    (tmp_path / "c.yaml").write_text(
        """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: big, namespace: default}
spec:
  replicas: 1000
  selector: {matchLabels: {app: a}}
  template:
    metadata: {labels: {app: a}}
    spec: {containers: [{name: c, image: x}]}
"""
    )
    spec = tmp_path / "s.yaml"
    spec.write_text(
        "cluster: [c.yaml]\ncommands: [simulate]\naxes: {workloadScale: {huge: 10000}}\n"
    )
    assert main(["sweep", str(spec)]) == 2
    err = capsys.readouterr().err
    assert "c.yaml: Deployment default/big: spec.replicas: 10000000 pods" in err
    assert f"{spec}: axes.workloadScale[huge]: the manifests above, with every workload " in err


def test_a_template_without_allocatable_pods_is_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A template Node without ``status.allocatable[pods]`` allows no pod (kube-scheduler's
    AllowedPodNumber is 0, NodeResourcesFit says ``Too many pods``): the run says why."""
    groups = tmp_path / "ng.yaml"
    groups.write_text(
        "nodeGroups:\n- name: g\n  maxSize: 3\n  template:\n    node:\n"
        "      apiVersion: v1\n      kind: Node\n      metadata: {name: t}\n"
        '      status: {allocatable: {cpu: "4", memory: 8Gi}}\n'
    )
    assert main(["scale-up", "--node-groups", str(groups)]) == 0
    err = capsys.readouterr().err
    assert (
        f'warning: {groups}: nodeGroups[0].template.status.allocatable: no "pods": '
        "kube-scheduler allows no pod on such a node (NodeResourcesFit: Too many pods)"
    ) in err


@pytest.mark.parametrize("flag", ["--report", "--output-file"])
def test_an_empty_output_path_is_a_usage_error(
    flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--report ''`` wrote nothing and exited 0 (attack finding): an empty path is refused
    by the parser, with the fix."""
    with pytest.raises(SystemExit) as e:
        main(["simulate", flag, ""])
    assert e.value.code == 2
    assert f"argument {flag}: an empty path: give a file name" in capsys.readouterr().err


@pytest.mark.parametrize("text", [" 5m", "5m ", "\t10s"])
def test_a_duration_with_surrounding_space_is_refused_as_go_does(text: str) -> None:
    """Go's time.ParseDuration (and CA's duration flags) refuse surrounding space; it was
    stripped (attack finding: ``schedsim.io/duration: ' 5m'`` accepted)."""
    from schedsim.replay import parse_duration

    with pytest.raises(ValueError, match="invalid duration"):
        parse_duration(text)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("9223372036854775807ns", 9223372036.854775807),
     ("2562047h47m16.854775807s", 9223372036.854775807),
     ("-9223372036854775808ns", -9223372036.854775808),
     ("1.5ns", 1e-9), ("1.s", 1.0), (".5s", 0.5)],
)  # fmt: skip
def test_a_duration_is_whole_nanoseconds_up_to_int64(text: str, seconds: float) -> None:
    """Go's time.ParseDuration counts whole nanoseconds in an int64: the largest duration is
    2^63 - 1 ns (``2562047h47m16.854775807s``), a negative one may reach -2^63 ns, and a
    fraction is truncated to the nanosecond (``1.5ns`` is 1ns); ``1.s`` and ``.5s`` parse."""
    from schedsim.replay import parse_duration

    assert parse_duration(text) == pytest.approx(seconds, rel=1e-15, abs=1e-15)


@pytest.mark.parametrize(
    "text",
    ["9223372036854775808ns", "2562047h47m16.854775808s", "-9223372036854775809ns",
     "2562047h48m"],
)  # fmt: skip
def test_a_duration_past_int64_nanoseconds_is_refused(
    text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One nanosecond past Go's int64 limit is ``time: invalid duration`` in ParseDuration;
    the float sum used to round 2^63 ns down to 2^63 - 1 and take it."""
    from schedsim.replay import parse_duration

    with pytest.raises(ValueError, match="out of range"):
        parse_duration(text)
    trace = tmp_path / "t.yaml"
    trace.write_text(ONE_POD.replace("duration: 10m", f"duration: {text}"))
    assert main(["replay", str(trace), "-o", "json"]) == 2
    assert capsys.readouterr().err == (
        f"schedsim: error: {trace}: Pod default/p: metadata.annotations[schedsim.io/duration]: "
        f"invalid duration '{text}': out of range (at most 2562047h)\n"
    )


@pytest.mark.parametrize(
    ("body", "error"),
    [("commands: [simulate]\naxes: []\n", "axes: expected a mapping of axis -> variants"),
     ("commands: true\n", "commands: expected a list of simulate, scale-up, scale-down, "
      "replay, experiment, got a boolean"),
     ("cluster: 5\ncommands: [simulate]\n",
      "cluster: expected a list of manifest files or directories, got a number"),
     ("cluster: {a: 1}\ncommands: [simulate]\n",
      "cluster: expected a list of manifest files or directories, got a mapping")],
)  # fmt: skip
def test_a_sweep_spec_field_of_the_wrong_type_is_named(
    body: str, error: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Wrong-typed sweep spec fields, like ``true`` where a number goes: ``axes: []`` ran a
    sweep with no axes (an empty list read as no mapping), and ``cluster: 5`` or
    ``commands: true`` were reported as missing."""
    (tmp_path / "c.yaml").write_text(CLUSTER.replace("QUANTITY", "1"))
    spec = tmp_path / "sweep.yaml"
    spec.write_text(("" if body.startswith("cluster") else "cluster: [c.yaml]\n") + body)
    assert main(["sweep", "--serial", str(spec)]) == 2
    assert capsys.readouterr().err == f"schedsim: error: {spec}: {error}\n"


def test_output_through_a_symlink_loop_or_to_a_directory_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """open(2) on a symlink loop fails with ELOOP ("Too many levels of symbolic links"), and
    on a directory with EISDIR; the rename used to replace the looped link with a regular
    file (exit 0), and ``DIR/`` was reported as "Not a directory". A dangling link still
    creates its target, as a shell redirection does."""
    (tmp_path / "c.yaml").write_text(CLUSTER.replace("QUANTITY", "1"))
    a, b = tmp_path / "a", tmp_path / "b"
    a.symlink_to(b)
    b.symlink_to(a)
    cluster = str(tmp_path / "c.yaml")
    assert main(["simulate", cluster, "--output-file", str(a)]) == 2
    assert capsys.readouterr().err == (
        f"schedsim: error: {a}: cannot write the output: Too many levels of symbolic links"
        " (give a path that can be written)\n"
    )
    assert a.is_symlink() and b.is_symlink()
    for where in (str(tmp_path), f"{tmp_path}/"):
        assert main(["simulate", cluster, "--output-file", where]) == 2
        assert capsys.readouterr().err == (
            f"schedsim: error: {where}: cannot write the output: Is a directory"
            " (give a path that can be written)\n"
        )
    dangling = tmp_path / "out"
    dangling.symlink_to("made.txt")
    assert main(["simulate", cluster, "--output-file", str(dangling)]) == 0
    assert dangling.is_symlink() and "POD" in (tmp_path / "made.txt").read_text()


BAD_AFFINITY_POD = """\
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2, labels: {kubernetes.io/hostname: n2}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
  affinity:
    podAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - topologyKey: kubernetes.io/hostname
        labelSelector:
          matchExpressions: [{key: service, operator: In, values: ["{{.bad-value.}}"]}]
"""
PARSING_POD = (
    'parsing pod: requiredAffinityTerms: values[0][service]: Invalid value: "{{.bad-value.}}": '
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)


def test_a_pre_filter_rejection_before_dynamic_resources_ends_with_its_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """kube-scheduler 1.34: InterPodAffinity's PreFilter returns UnschedulableAndUnresolvable
    (``parsing pod: ...``), so RunPreFilterPlugins returns before DynamicResources' PreFilter
    (after InterPodAffinity in the default order) writes its cycle state; RunPostFilterPlugins
    runs every PostFilter plugin (no SkipFilterPlugins there) and DynamicResources' PostFilter
    fails in getStateData with fwk.ErrNotFound, an Error status: RunPostFilterPlugins stops
    (DefaultPreemption does not run) and schedulingCycle puts its message on the FitError
    (``... . not found``, as 1.34 clusters print for ``pod has unbound immediate
    PersistentVolumeClaims. not found``). It used to say "no new claims to deallocate" and
    run preemption."""
    f = tmp_path / "c.yaml"
    f.write_text(BAD_AFFINITY_POD)
    doc = _json(["simulate", str(f), "--explain", "-o", "json"], capsys)
    [pod] = doc["pods"]
    assert pod["message"] == f"0/2 nodes are available: {PARSING_POD}. not found"
    assert pod["results"]["postFilter"] == {"DynamicResources": "not found"}
    assert pod["results"]["preFilter"]["InterPodAffinity"] == PARSING_POD
    assert doc["summary"]["unschedulable"] == 1  # still Unschedulable, not a plugin error


def test_a_pod_without_claims_gets_dynamic_resources_post_filter_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """kube-scheduler 1.34: DynamicResources' PreFilter writes an empty state and returns Skip
    for a pod without claims, and its PostFilter (run: RunPostFilterPlugins skips nothing)
    returns Unschedulable "no new claims to deallocate" (``state.claims.empty()``; upstream's
    dynamicresources_test "empty" case); DefaultPreemption's reasons follow. Per plugin in
    ``--explain``: each plugin's own status, not the joined message."""
    f = tmp_path / "c.yaml"
    f.write_text(CLUSTER.replace("QUANTITY", "1").replace('cpu: "1"', 'cpu: "5"'))
    doc = _json(["simulate", str(f), "--explain", "-o", "json"], capsys)
    [pod] = doc["pods"]
    # 5 cpu over 4 allocatable: UnschedulableAndUnresolvable, no node for preemption to try
    preemption = "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    assert pod["message"] == (
        f"0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, {preemption}"
    )
    assert pod["results"]["postFilter"] == {
        "DynamicResources": "no new claims to deallocate",
        "DefaultPreemption": preemption,
    }


def test_explain_table_after_a_pre_filter_rejection_is_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The ``--explain`` table of a pod PreFilter rejected has no grid (no node was
    evaluated): the title is one line (it was folded at the empty grid's 8 columns), then the
    PreFilter and PostFilter results, one line each, as in the JSON's ``results``."""
    f = tmp_path / "c.yaml"
    f.write_text(BAD_AFFINITY_POD)
    assert main(["simulate", str(f), "--explain"]) == 0
    out = capsys.readouterr().out
    tail = out[out.index("default/p: not scheduled") :]
    assert tail == (
        "default/p: not scheduled (0 of 2 nodes evaluated, 0 feasible, 0 not evaluated)\n"
        f"  PreFilter InterPodAffinity: {PARSING_POD}\n"
        "  PostFilter DynamicResources: not found\n"
    )


def _spread_cluster(tmp_path: Path, pods: int) -> tuple[str, str]:
    """CA 1.34 TestBinpackingEstimate's hostname-spread pods (20m, maxSkew 1, minDomains 3)
    and its 100m ``oldnode``; a group of 1000m/5000Mi templates."""
    docs = [
        "apiVersion: v1\nkind: Node\nmetadata: {name: oldnode, labels: "
        "{kubernetes.io/hostname: oldnode}}\n"
        'status: {allocatable: {cpu: 100m, memory: 100Mi, pods: "10"}}\n'
    ]
    for i in range(pods):
        docs.append(
            f"apiVersion: v1\nkind: Pod\nmetadata: {{name: estimatee-{i}, namespace: universe, "
            "labels: {app: estimatee}}\nspec:\n"
            "  containers: [{name: c, image: x, resources: "
            '{requests: {cpu: 20m, memory: "100"}}}]\n'
            "  topologySpreadConstraints:\n  - {maxSkew: 1, topologyKey: kubernetes.io/hostname, "
            "whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: estimatee}}, "
            "minDomains: 3}\n"
        )
    cluster, groups = tmp_path / "c.yaml", tmp_path / "g.yaml"
    cluster.write_text("---\n".join(docs))
    groups.write_text(
        "nodeGroups:\n- name: g\n  maxSize: 10\n  template:\n    node:\n"
        "      metadata: {name: template}\n"
        '      status: {allocatable: {cpu: "1", memory: 5000Mi, pods: "10"}}\n'
    )
    return str(cluster), str(groups)


def test_scale_up_says_an_existing_node_was_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """CA 1.34's binpacking estimator counts an existing node the hostname-spread step put
    pods on (``newNodesWithPods``) in the node count, and its --max-nodes-per-scaleup limiter
    counts only the nodes it adds: with the cap at 2, 2 template copies and oldnode make 3.
    The output used to say "NEW NODES 3 ... capped by --max-nodes-per-scaleup 2": now it says
    what the 3 are made of, that the cap is on new nodes, and by how much the group grows; the
    JSON says the same per group (newNodesInEstimate, existingNodesCounted)."""
    cluster, groups = _spread_cluster(tmp_path, 20)
    argv = ["scale-up", cluster, "--node-groups", groups, "--max-nodes-per-scaleup", "2"]
    doc = _json([*argv, "-o", "json"], capsys)
    assert doc["scaleUp"] == {"nodeGroup": "g", "nodes": 3}
    [g] = doc["nodeGroups"]
    assert (g["nodes"], g["newNodesInEstimate"], g["existingNodesCounted"]) == (
        3, 2, {"oldnode": 4},
    )  # fmt: skip
    assert main(argv) == 0
    out = " ".join(capsys.readouterr().out.split())  # the table's wrapping aside
    assert (
        "the estimate's 2 new node(s) + 1 existing node (oldnode: 4 pod(s)), counted alike by"
        " Cluster Autoscaler; the group grows by 3" in out
    )
    assert "estimate capped at 2 new node(s) by --max-nodes-per-scaleup 2" in out
    assert "capped by --max-nodes-per-scaleup 2" not in out
    assert "estimate stopped at 2 new node(s), --max-nodes-per-scaleup 2" in out


def test_replay_scale_up_event_says_an_existing_node_was_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The replay's scale-up event added 3 nodes with "16 unschedulable pod(s) fit 3 new
    node(s)", though the estimate had 2 new nodes and counted oldnode (CA 1.34
    ``newNodesWithPods``): it now says so."""
    cluster, groups = _spread_cluster(tmp_path, 20)
    doc = _json(
        ["replay", cluster, "--node-groups", groups, "--max-nodes-per-scaleup", "2", "-o", "json"],
        capsys,
    )
    up = doc["events"][0]
    assert (up["kind"], len(up["nodes"])) == ("scale-up", 3)
    assert up["reason"] == (
        "16 unschedulable pod(s) fit the estimate's 2 new node(s) + 1 existing node (oldnode: 4"
        " pod(s)); adding 3 node(s), as Cluster Autoscaler counts the existing node(s) too"
        " (expander least-waste)"
    )


def test_a_huge_reason_is_cut_in_tables_with_a_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """rich's wrapping grows faster than the text: a 6.4 MB reason took 43.5 s as a table
    (3.9 s as JSON). A table cell (and an --explain line) now holds at most CELL_LIMIT
    characters, then says how many more there are and that -o json has them; the JSON keeps
    the whole message."""
    import time

    from schedsim.cli.table import CELL_LIMIT, clip, table_text

    cell = "x y " * 250_000  # 1 MB
    start = time.perf_counter()
    text = table_text([("POD", "fold"), ("REASON", "ellipsis")], [["a", cell]])
    assert time.perf_counter() - start < 5  # was ~5 s for this size, growing faster
    note = f"... [{len(cell) - CELL_LIMIT:,} more characters; -o json has the whole text]"
    words = " ".join(text.replace("│", " ").split())  # the cell's lines, unwrapped
    assert clip(cell) == cell[:CELL_LIMIT] + note and note in words
    value = "{" + "x y " * 50_000 + "}"
    f = tmp_path / "c.yaml"
    f.write_text(BAD_AFFINITY_POD.replace("{{.bad-value.}}", value))
    doc = _json(["simulate", str(f), "-o", "json"], capsys)
    [pod] = doc["pods"]
    assert value in pod["message"]  # whole in JSON
    assert main(["simulate", str(f), "--explain"]) == 0
    out = capsys.readouterr().out
    cut = len(pod["message"]) - CELL_LIMIT
    words = " ".join(out.replace("│", " ").split())
    assert f"[{cut:,} more characters; -o json has the whole text]" in words
    [line] = [ln for ln in out.splitlines() if ln.startswith("  PreFilter InterPodAffinity: ")]
    assert line.endswith("more characters; -o json has the whole text]")
    assert len(line) < CELL_LIMIT + 200


@pytest.mark.parametrize(
    ("body", "error"),
    [("commands: [replay]\noptions: {utilizationThreshold: true}\n",
      "options.utilizationThreshold: expected a number in [0, 1], got true"),
     ("commands: [replay]\noptions: {scanInterval: false}\n",
      "options.scanInterval: expected a duration (10s, 10m, 1h) or seconds, got false"),
     ("commands: [replay]\naxes: {seeds: [1, true]}\n",
      "axes.seeds: expected integers, got true"),
     ("commands: [true]\n",
      "commands[0]: unknown command true (expected simulate, scale-up, scale-down, replay, "
      "experiment)"),
     ("commands: [replay]\noptions: {utilizationThreshold: .inf}\n",
      "options.utilizationThreshold: expected a number in [0, 1], got .inf"),
     ("commands: [replay]\noptions: {gpuUtilizationThreshold: null}\n",
      "options.gpuUtilizationThreshold: expected a number in [0, 1], got null")],
)  # fmt: skip
def test_a_sweep_spec_error_spells_values_as_yaml(
    body: str, error: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A value a sweep spec error quotes is written as the spec's YAML spells it (``true``,
    ``null``, ``.inf``), not as Python prints it (``True``, ``None``, ``inf``)."""
    (tmp_path / "c.yaml").write_text(CLUSTER.replace("QUANTITY", "1"))
    spec = tmp_path / "sweep.yaml"
    spec.write_text("cluster: [c.yaml]\n" + body)
    assert main(["sweep", "--serial", str(spec)]) == 2
    assert capsys.readouterr().err == f"schedsim: error: {spec}: {error}\n"


@pytest.mark.parametrize("text", ["10", "1.5", ".5", "0.0", "1h30", "-10", "+300"])
def test_a_go_duration_needs_a_unit(
    text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Go's time.ParseDuration: a number without a unit is ``time: missing unit in
    duration`` (``1h30`` too), except ``0``; ``10`` was read as 10 seconds. The trace
    annotation and the replay's duration flags say so, with how to write it."""
    from schedsim.replay import parse_duration

    why = (
        f"invalid duration '{text}': missing unit, as in Go's time.ParseDuration (give every "
        "number a unit: ns, us, ms, s, m or h, e.g. 90s)"
    )
    with pytest.raises(ValueError) as e:
        parse_duration(text)
    assert str(e.value) == why
    trace = tmp_path / "t.yaml"
    trace.write_text(ONE_POD.replace("duration: 10m", f'duration: "{text}"'))
    assert main(["replay", str(trace), "-o", "json"]) == 2
    assert capsys.readouterr().err == (
        f"schedsim: error: {trace}: Pod default/p: metadata.annotations[schedsim.io/duration]: "
        f"{why}\n"
    )
    with pytest.raises(SystemExit) as exit_:
        main(["replay", str(trace), "--scan-interval", text])
    assert exit_.value.code == 2
    assert why in capsys.readouterr().err


@pytest.mark.parametrize("text", ["0", "+0", "-0"])
def test_a_zero_duration_needs_no_unit(text: str) -> None:
    """ParseDuration's special case: ``0`` (after an optional sign) is zero."""
    from schedsim.replay import parse_duration

    assert parse_duration(text) == 0.0


@pytest.mark.parametrize(
    ("times", "column"),
    [("1e300,,", "creation_time"), ("0,1e300,", "deletion_time"), ("0,,1e19", "scheduled_time"),
     ("9223372036.9,,", "creation_time")],
)  # fmt: skip
def test_an_alibaba_time_past_go_durations_is_refused(
    times: str, column: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A trace time past Go's longest duration (2^63 - 1 ns, about 292 years) is refused with
    its file, line and column; ``1e300`` was taken and the replay ran 1e300 virtual seconds
    (JSON ``simulatedSeconds: 1e+300``)."""
    pods, nodes = tmp_path / "pods.csv", tmp_path / "nodes.csv"
    pods.write_text(PODS_HEADER + f"a,1000,1024,0,0,,BE,Running,{times}\n")
    nodes.write_text(NODES_HEADER + "n1,8000,16384,0,\n")
    argv = ["replay", "--alibaba-pods", str(pods), "--alibaba-nodes", str(nodes), "-o", "json"]
    assert main(argv) == 2
    got = next(v for v in times.split(",") if v and v != "0")
    assert capsys.readouterr().err == (
        f"schedsim: error: {pods}:2: {column}: out of range, got '{got}' (at most "
        "9223372036.854775807 seconds, Go's longest duration, about 292 years: give the times "
        "in seconds)\n"
    )


@pytest.mark.parametrize("flag", ["--output-file", "--report"])
@pytest.mark.parametrize("through_link", [False, True])
def test_an_output_over_an_input_file_is_refused(
    flag: str, through_link: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``simulate in.yaml --output-file in.yaml`` replaced the manifest and exited 0
    (fresh-user attack): an output that is (or links to) an input file is refused, naming
    both, and the input is untouched."""
    cluster = tmp_path / "in.yaml"
    cluster.write_text(ONE_POD)
    out = cluster
    if through_link:
        out = tmp_path / "link.yaml"
        out.symlink_to(cluster)
    assert main(["simulate", str(cluster), flag, str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{out}: cannot write the output ({flag}): " in err
    assert f"input {cluster}" in err or f"input file {cluster}" in err
    assert "never replaces an input" in err
    assert cluster.read_text() == ONE_POD


def test_two_outputs_naming_one_file_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--output-file X --report X``: the second write replaced the first (attack finding);
    refused before running, nothing written."""
    cluster = tmp_path / "in.yaml"
    cluster.write_text(ONE_POD)
    x = tmp_path / "x"
    assert main(["simulate", str(cluster), "--output-file", str(x), "--report", str(x)]) == 2
    err = capsys.readouterr().err
    assert f"--report {x} and --output-file {x} name the same file" in err
    assert not x.exists()


def test_a_sweep_output_over_a_file_its_spec_names_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The cluster a sweep spec names is an input too: ``--report`` over it is refused."""
    cluster = tmp_path / "c.yaml"
    cluster.write_text(ONE_POD)
    spec = tmp_path / "s.yaml"
    spec.write_text(f"cluster: [{cluster}]\ncommands: [simulate]\n")
    assert main(["sweep", str(spec), "--serial", "--report", str(cluster)]) == 2
    assert f"{cluster}: cannot write the output (--report): it is the input file" in (
        capsys.readouterr().err
    )
    assert cluster.read_text() == ONE_POD


@pytest.mark.parametrize(
    ("spec", "field", "problem"),
    [
        (
            "axes: {schedulerConfig: {bad: nofile.yaml}}",
            "axes.schedulerConfig[bad]",
            "no such file",
        ),
        ("axes: {nodeGroups: {bad: c.yaml}}", "axes.nodeGroups[bad]", "expected one YAML document"),
        ("cluster: [nope.yaml]", "cluster[0]", "no such file"),
    ],
)
def test_a_sweep_file_error_names_the_spec_field(
    spec: str, field: str, problem: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A missing or wrong file a sweep spec names said only ``nofile.yaml: no such file or
    directory`` (fresh-user attack); docs/cli.md promises ``SPEC: FIELD: problem``."""
    (tmp_path / "c.yaml").write_text(ONE_POD + "---\n" + ONE_POD.replace("name: p", "name: q"))
    text = spec if spec.startswith("cluster") else f"cluster: [c.yaml]\n{spec}"
    command = "scale-up" if "nodeGroups" in spec else "simulate"
    (tmp_path / "s.yaml").write_text(f"{text}\ncommands: [{command}]\n")
    assert main(["sweep", str(tmp_path / "s.yaml"), "--serial"]) == 2
    err = capsys.readouterr().err
    assert f"schedsim: error: {tmp_path / 's.yaml'}: {field}: {tmp_path}/" in err
    assert problem in err


def test_a_sweep_option_no_command_uses_is_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``options: {expander, until}`` on a simulate-only spec was silently ignored: each
    option no command of the spec uses (docs/cli.md's spec: expander is scale-up's and
    replay's, until replay's) is a warning naming it; one that is used is not."""
    (tmp_path / "c.yaml").write_text(ONE_POD)
    spec = tmp_path / "s.yaml"
    spec.write_text(
        "cluster: [c.yaml]\ncommands: [simulate]\n"
        "options: {expander: most-pods, until: 1h, placement: kube-scheduler}\n"
    )
    doc = _json(["sweep", str(spec), "--serial", "-o", "json"], capsys)
    messages = [w["message"] for w in doc["warnings"]]
    assert messages == [
        f"{spec}: options.expander: ignored: used only by scale-up, replay, and the spec runs "
        "simulate (remove it, or add such a command)",
        f"{spec}: options.until: ignored: used only by replay, and the spec runs simulate "
        "(remove it, or add such a command)",
    ]


def test_every_sweep_option_says_which_commands_use_it() -> None:
    from schedsim.sweep import spec

    assert set(spec._OPTION_COMMANDS) == set(spec._OPTIONS)


def test_a_map_key_with_dots_or_slashes_is_written_in_brackets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Field paths named a map key two ways (``metadata.annotations[schedsim.io/duration]``
    here, ``metadata.annotations[schedsim.io/duration]`` in replay): apimachinery's
    ``field.Path.Key`` form, brackets, is used."""
    cluster = tmp_path / "c.yaml"
    cluster.write_text(ONE_POD.replace("schedsim.io/duration: 10m", "schedsim.io/duration: 10"))
    assert main(["simulate", str(cluster)]) == 2
    assert (
        "Pod default/p: metadata.annotations[schedsim.io/duration]: expected a string, got a "
        "number" in capsys.readouterr().err
    )


@pytest.mark.parametrize(
    ("statement", "why"),
    [("raise ValueError('boom')", "ValueError: boom"), ("raise SystemExit(0)", "SystemExit: 0")],
)
@pytest.mark.parametrize("command", ["simulate", "replay"])
def test_a_plugin_whose_events_fail_is_refused_at_start(
    statement: str,
    why: str,
    command: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """kube-scheduler does not start when a plugin's EventsToRegister fails (scheduler.New
    returns buildQueueingHintMap's error): exit 2 naming the profile's file and the plugin,
    no traceback (it was a ProfileError traceback, exit 1, when the first scheduling queue
    was built)."""
    module = f"events_{command}_{why.split(':')[0].lower()}"
    (tmp_path / f"{module}.py").write_text(
        "class Probe:\n    name = 'Probe'\n    def __init__(self, args, handle): pass\n"
        "    def schedsim_filter(self, state, pod, node_info): return None\n"
        f"    def events_to_register(self): {statement}\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    config = tmp_path / "config.yaml"
    config.write_text(PROFILE)
    trace = tmp_path / "t.yaml"
    trace.write_text(TRACE_ON_A_NODE)
    code = main([command, str(trace), "--config", str(config), "--plugin", f"{module}:Probe"])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err == f"schedsim: error: {config}: plugin 'Probe': events_to_register: {why}\n"


@pytest.mark.parametrize("which", ["--alibaba-pods", "--alibaba-nodes"])
def test_dev_zero_as_an_alibaba_csv_ends_with_an_error(
    which: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``/dev/zero`` as a trace CSV file grew one endless line (6.7 GB in 15 s) where the
    manifest reader stops at the first NUL: a NUL is refused on its line, exit 2."""
    pods = tmp_path / "pods.csv"
    pods.write_text(PODS_HEADER + "a,1000,1024,0,0,,BE,Running,10,20,10\n")
    nodes = tmp_path / "nodes.csv"
    nodes.write_text(NODES_HEADER + "n1,4000,4096,0,\n")
    files = {"--alibaba-pods": str(pods), "--alibaba-nodes": str(nodes), which: "/dev/zero"}
    argv = ["replay", *(x for kv in files.items() for x in kv)]
    assert main(argv) == 2
    assert capsys.readouterr().err == (
        "schedsim: error: /dev/zero:1: a NUL character: not a text file (give the trace's CSV "
        "file)\n"
    )


def test_an_alibaba_csv_line_or_stream_past_the_limits_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file without line ends is refused at `MAX_LINE_CHARS`, an endless stream of short
    lines at the input limit, before either fills memory; a quoted cell over two lines is
    still one row."""
    from schedsim.api.loading import loader
    from schedsim.replay import alibaba

    nodes = tmp_path / "nodes.csv"
    nodes.write_text(NODES_HEADER + '"n1",4000,4096,0,"a' + "x" * 300 + '"\n')
    monkeypatch.setattr(alibaba, "MAX_LINE_CHARS", 200)
    with pytest.raises(alibaba.TraceError, match=r":2: a line longer than 200 characters: "):
        alibaba.read_nodes(str(nodes))
    monkeypatch.setattr(alibaba, "MAX_LINE_CHARS", 1 << 20)
    monkeypatch.setattr(loader, "MAX_INPUT_BYTES", 100)
    with pytest.raises(alibaba.TraceError, match=r"nodes.csv: larger than 100 bytes, "):
        alibaba.read_nodes(str(nodes))
    monkeypatch.setattr(loader, "MAX_INPUT_BYTES", 1 << 30)
    nodes.write_text(NODES_HEADER + 'n1,4000,4096,0,""\nn2,4000,"40\n96",0,\n')
    with pytest.raises(alibaba.TraceError, match=r"nodes.csv:4: memory_mib: expected a number"):
        alibaba.read_nodes(str(nodes))


@pytest.mark.parametrize("option", ["--output-file", "--report"])
def test_output_to_a_device_writes_the_device(
    option: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As root, ``--report /dev/full`` turned the machine's /dev/full into an HTML file (the
    write-to-temp-then-rename was applied to any path): a device is opened and written, and
    stays the device. A null device made in tmp_path (mknod needs root) stands for it, so
    the machine's own devices are never at risk; the output goes nowhere, exit 0."""
    import stat

    device = tmp_path / "null"
    try:
        os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except (PermissionError, OSError) as e:
        pytest.skip(f"cannot make a device node here: {e}")
    cluster = tmp_path / "c.yaml"
    cluster.write_text(CLUSTER.replace("QUANTITY", "1"))
    assert main(["simulate", str(cluster), option, str(device), "-o", "json"]) == 0
    capsys.readouterr()
    mode = os.lstat(device).st_mode
    assert stat.S_ISCHR(mode) and os.major(os.lstat(device).st_rdev) == 1
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".null.")] == []


@pytest.mark.parametrize("flag", ["--output-file", "--report"])
@pytest.mark.parametrize("command", ["simulate", "replay", "sweep"])
@pytest.mark.parametrize("where", ["missing", "file"], ids=["no-such-dir", "dir-is-a-file"])
def test_an_unwritable_output_fails_before_the_run(
    flag: str, command: str, where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """F15: an ``--output-file``/``--report`` whose directory does not exist (or is a file)
    was found only once the whole run was done (a typo in ``--report runs/fgd.html`` cost a
    1,020-experiment sweep): refused first, exit 2, with the message the final write gives
    (``FILE: cannot write the output: No such file or directory (give a path that can be
    written)``). The input here is bad as well: the output's error is the only one, so the
    run (which would refuse the input) never started."""
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: [x]}\n")
    if command == "sweep":
        spec = tmp_path / "s.yaml"
        spec.write_text(f"cluster: [{bad}]\ncommands: [simulate]\n")
        argv = ["sweep", str(spec), "--serial"]
    else:
        argv = [command, str(bad)]
    if where == "missing":
        out, problem = tmp_path / "no-such-dir" / "out.html", "No such file or directory"
    else:
        (tmp_path / "plain").write_text("")
        out, problem = tmp_path / "plain" / "out.html", "Not a directory"
    assert main([*argv, flag, str(out)]) == 2
    assert capsys.readouterr().err == (
        f"schedsim: error: {out}: cannot write the output: {problem} (give a path that can "
        "be written)\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [
            "bad.yaml",
            *(["s.yaml"] if command == "sweep" else []),
            *(["plain"] if where == "file" else []),
        ]
    )


@pytest.mark.parametrize("failing", ["--output-file", "--report"])
@pytest.mark.parametrize("command", ["simulate", "scale-up", "replay"])
def test_when_one_output_cannot_be_written_neither_is_left(
    failing: str,
    command: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """F11: ``--output-file`` failing at its write left ``--report``'s file behind (the
    report was put in place during the command), while the reverse order wrote nothing:
    both files are written and put in place only together, so a failed run (exit 2) leaves
    neither, whichever failed, and any previous content of both stays. The failure is a
    write of one file's temporary file (as a full disk or a file size limit makes it)."""
    from schedsim.cli import output

    out, report = tmp_path / "out.json", tmp_path / "report.html"
    out.write_text("previous out\n")
    report.write_text("previous report\n")
    bad = {"--output-file": str(out), "--report": str(report)}[failing]
    real = output.write_all

    def write_all(fd: int, data: bytes, where: str) -> None:
        if where == bad:
            raise output.OutputError(output.output_problem(where, "No space left on device"))
        real(fd, data, where)

    monkeypatch.setattr(output, "write_all", write_all)
    argv = [command, "--output-file", str(out), "--report", str(report), "-o", "json"]
    assert main(argv) == 2
    assert capsys.readouterr().err.endswith(
        f"schedsim: error: {bad}: cannot write the output: No space left on device (give a "
        "path that can be written)\n"
    )
    assert out.read_text() == "previous out\n"
    assert report.read_text() == "previous report\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json", "report.html"]
    monkeypatch.setattr(output, "write_all", real)
    assert main(argv) == 0  # and without the failure both are written
    capsys.readouterr()
    assert json.loads(out.read_text()) and "<html" in report.read_text().lower()


@pytest.mark.parametrize("failing", ["--output-file", "--report"])
def test_a_full_device_output_leaves_the_other_output_unwritten(
    failing: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """F11's repro with a full device (``/dev/full``'s major/minor, made in tmp_path as in
    `test_output_to_a_device_writes_the_device`): the other output is not written."""
    import stat

    full = tmp_path / "full"
    try:
        os.mknod(full, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
    except (PermissionError, OSError) as e:
        pytest.skip(f"cannot make a device node here: {e}")
    other = tmp_path / "other"
    paths = {"--output-file": str(other), "--report": str(other), failing: str(full)}
    argv = ["simulate", "-o", "json"]
    for flag, path in paths.items():
        argv += [flag, path]
    assert main(argv) == 2
    assert f"{full}: cannot write the output: No space left on device" in (capsys.readouterr().err)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["full"]


@pytest.mark.parametrize("resume", ["cl", "cl/sub"], ids=["is", "inside"])
def test_sweep_resume_into_an_input_directory_is_refused(
    resume: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """F6: ``sweep s.yaml --resume cl`` where the spec's cluster is the directory ``cl/``
    wrote ``a+simulate.json`` into it, and the next run (and ``simulate cl``) failed on it
    (``document 1: kind: required``): refused before the run, as an output over an input
    file is, and the directory is untouched."""
    (tmp_path / "cl").mkdir()
    (tmp_path / "cl" / "c.yaml").write_text(ONE_POD)
    spec = tmp_path / "s.yaml"
    spec.write_text("kind: Sweep\ncluster: [cl/]\ncommands: [simulate]\n")
    where = "it is" if resume == "cl" else "it is inside"
    argv = ["sweep", str(spec), "--serial", "--resume", str(tmp_path / resume)]
    assert main(argv) == 2
    assert capsys.readouterr().err == (
        f"schedsim: error: --resume {tmp_path / resume}: {where} the input directory "
        f"{tmp_path}/cl/ of the spec: its result files would be read as manifests (give "
        "another directory: schedsim never writes into an input)\n"
    )
    assert sorted(p.name for p in (tmp_path / "cl").iterdir()) == ["c.yaml"]
    assert main(["sweep", str(spec), "--serial", "--resume", str(tmp_path / "res")]) == 0


@pytest.mark.parametrize("flag", ["--output-file", "--report"])
@pytest.mark.parametrize("command", ["simulate", "sweep"])
def test_an_output_into_an_input_directory_is_refused(
    flag: str, command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """F6: ``simulate din -o yaml --output-file din/result.yaml`` exited 0 and the next
    ``simulate din`` failed on the result read as a manifest: an output with a name the
    directory is read for (.yaml, .yml, .json: the loader's) inside an input directory is
    refused before the run; one it is not read for (an .html report) is written."""
    din = tmp_path / "din"
    din.mkdir()
    (din / "c.yaml").write_text(ONE_POD)
    if command == "sweep":
        spec = tmp_path / "s.yaml"
        spec.write_text("kind: Sweep\ncluster: [din]\ncommands: [simulate]\n")
        argv, shown = ["sweep", str(spec), "--serial"], f"{tmp_path}/din"
    else:
        argv, shown = ["simulate", str(din)], str(din)
    out = din / "result.yaml"
    assert main([*argv, "-o", "json", flag, str(out)]) == 2
    assert capsys.readouterr().err == (
        f"schedsim: error: {out}: cannot write the output ({flag}): it is inside the input "
        f"directory {shown}, and would be read as an input next time (write it to another "
        "path: schedsim never writes into an input)\n"
    )
    assert sorted(p.name for p in din.iterdir()) == ["c.yaml"]
    assert main([*argv, flag, str(din / "r.html")]) == 0
    capsys.readouterr()
    assert main(argv) == 0  # the directory still reads


@pytest.mark.parametrize("spec", ["", "spec: null\n", "spec: {}\n", "spec: ~\n"])
def test_a_pod_without_a_spec_is_refused(
    spec: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """F1: a Pod with no ``spec`` (or ``spec: null``) was accepted (and reported as "no
    nodes available") while ``spec: {}`` was refused: the API server decodes all three to
    the zero PodSpec, and ValidatePodSpec's validateContainers (pkg/apis/core/validation/
    validation.go) refuses it with ``spec.containers: Required value``; so does schedsim,
    the same line for each."""
    pod = tmp_path / "p.yaml"
    pod.write_text(f"apiVersion: v1\nkind: Pod\nmetadata: {{name: x}}\n{spec}")
    assert main(["simulate", str(pod)]) == 2
    assert capsys.readouterr().err == (
        f"schedsim: error: {pod}: Pod default/x: spec.containers: required\n"
    )


@pytest.mark.parametrize(
    "rows", ["", "a,1000,1024,5000,1000,,LS,Running,10,20,10\n"], ids=["no-pods", "tuned-away"]
)
def test_inflate_with_no_pod_to_place_warns(
    rows: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """F9: ``--inflate`` on a header-only pod list (or one whose only pod asks for more GPU
    than 1.3 x the cluster has, which the tuning removes) ran to an empty curve, rc 0,
    without a word: a warning names why (as simulate warns ``no objects found in FILE``
    for an empty manifest); still exit 0."""
    pods, nodes = tmp_path / "pods.csv", tmp_path / "nodes.csv"
    pods.write_text(PODS_HEADER + rows)
    nodes.write_text(NODES_HEADER + "n1,32000,65536,2,V100M16\n")
    argv = ["replay", "--alibaba-pods", str(pods), "--alibaba-nodes", str(nodes)]
    assert main([*argv, "--gpu-as", "dra", "--inflate", "1.3", "-o", "json"]) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    if rows:
        why = (
            "tuned to 1.3 x the cluster's GPU capacity (2 GPUs), the workload kept none of the "
            f"1 pod(s) of {pods} (they ask for more GPU than that)"
        )
    else:
        why = f"{pods} has no pods"
    message = f"--inflate: no pod to place: {why}; the curve is empty"
    assert f"warning: {message}\n" in captured.err
    assert out["experiment"]["pods"] == 0
