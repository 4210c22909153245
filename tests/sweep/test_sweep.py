"""`schedsim.sweep`: the 12-scenario spec of conftest.py gives the same rows serially, on the
process pool and on Ray; failures, resume and bad specs.

Expected values follow kube-scheduler's documented NodeResourcesFit scoring strategies
(LeastAllocated, the default, spreads; MostAllocated packs: "Resource Bin Packing" in the
Kubernetes docs) and the Cluster Autoscaler's scale-up (FAQ "How does scale-up work?":
pending pods that fit existing nodes are filtered out, the estimator bin-packs the rest onto
template copies up to the group's max size).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from schedsim.api.errors import ManifestError
from schedsim.sweep import (
    PoolExecutor,
    ResultStore,
    ScenarioResult,
    SerialExecutor,
    load_clusters,
    load_spec,
    run_sweep,
    scenario_count,
    scenarios,
    to_csv,
    to_json,
)
from schedsim.sweep.executors import IN_FLIGHT_PER_WORKER

EXPECTED = {
    # two 4-core nodes; pods small-1, small-2 (2 cores), whole-node (4), extra-1..3 (3 each)
    # LeastAllocated spreads the small pods over both nodes: nothing else fits
    "capped+spread+simulate": (2, 4, 0, 0, 0, 0),
    # MostAllocated packs them on one node, whole-node takes the other
    "capped+packed+simulate": (3, 3, 0, 0, 0, 0),
    # scale-up: CA's first fit leaves whole-node and the extras pending; 4-core templates,
    # max 3 nodes (2 exist): one node, for one pod
    "capped+spread+scale-up": (3, 3, 0, 0, 1, 0),
    "capped+packed+scale-up": (3, 3, 0, 0, 1, 0),
    # max 10: one new node per pending pod
    "roomy+spread+scale-up": (6, 0, 0, 0, 4, 0),
    "roomy+packed+scale-up": (6, 0, 0, 0, 4, 0),
    # 8-core templates: whole-node + an extra, then two extras: two nodes
    "large+spread+scale-up": (6, 0, 0, 0, 2, 0),
    "large+packed+scale-up": (6, 0, 0, 0, 2, 0),
}


def _metrics(results: list[ScenarioResult]) -> list[tuple[object, ...]]:
    return [r.metrics() for r in results]


def test_spec_makes_twelve_scenarios(sweep_dir: Path) -> None:
    """3 node-group variants x 2 scheduler configurations x 2 commands, named by their
    variants, the command varying fastest."""
    names = [s.name for s in scenarios(load_spec(str(sweep_dir / "sweep.yaml")))]
    assert len(names) == 12
    assert names[:3] == [
        "capped+spread+simulate",
        "capped+spread+scale-up",
        "capped+packed+simulate",
    ]
    assert len(set(names)) == 12


def test_serial_and_pool_give_the_same_rows(sweep_dir: Path) -> None:
    """The expected headline metrics, identical on one process and on a 2-worker pool."""
    spec = load_spec(str(sweep_dir / "sweep.yaml"))
    serial = run_sweep(spec, SerialExecutor())
    assert all(r.ok for r in serial)
    got = {r.name: r.metrics()[2:8] for r in serial}
    for name, metrics in EXPECTED.items():
        assert got[name] == metrics, name
    # the node groups do not change a simulate run
    assert got["large+spread+simulate"] == got["capped+spread+simulate"]
    pool = run_sweep(spec, PoolExecutor(2))
    assert _metrics(pool) == _metrics(serial)
    assert [r.index for r in pool] == list(range(12))


@pytest.mark.skipif(
    importlib.util.find_spec("ray") is None,
    reason="ray is not installed (pip install 'schedsim[ray]')",
)
def test_local_ray_gives_the_same_rows(sweep_dir: Path) -> None:
    """A local Ray instance (``ray.init(num_cpus=2)``) returns the serial run's rows."""
    import ray

    from schedsim.sweep.ray import RayExecutor

    spec = load_spec(str(sweep_dir / "sweep.yaml"))
    serial = run_sweep(spec, SerialExecutor())
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        on_ray = run_sweep(spec, RayExecutor())
    finally:
        ray.shutdown()
    assert _metrics(on_ray) == _metrics(serial)


BAD_PLUGIN = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    score:
      enabled: [{name: NoSuchPlugin}]
"""


@pytest.mark.parametrize("executor", [SerialExecutor(), PoolExecutor(2)], ids=["serial", "pool"])
def test_a_failing_scenario_is_reported_and_the_others_finish(
    sweep_dir: Path, executor: SerialExecutor | PoolExecutor
) -> None:
    """A configuration whose plugin does not exist fails its own scenarios with the error;
    every other scenario still runs."""
    (sweep_dir / "broken.yaml").write_text(BAD_PLUGIN)
    spec_file = sweep_dir / "sweep.yaml"
    spec_file.write_text(
        spec_file.read_text().replace(
            "packed: packed.yaml}", "packed: packed.yaml, broken: broken.yaml}"
        )
    )
    results = run_sweep(load_spec(str(spec_file)), executor)
    assert len(results) == 18
    failed = [r for r in results if not r.ok]
    assert {r.name for r in failed} == {
        f"{g}+broken+{c}" for g in ("capped", "roomy", "large") for c in ("simulate", "scale-up")
    }
    assert all("NoSuchPlugin" in (r.error or "") for r in failed)
    assert {r.name: r.metrics()[2:8] for r in results if r.ok}["roomy+packed+scale-up"] == (
        EXPECTED["roomy+packed+scale-up"]
    )


def test_resume_skips_done_scenarios(sweep_dir: Path, tmp_path: Path) -> None:
    """A rerun with the same resume directory runs only the scenarios without a stored
    result (here: one removed, one stale because its input changed); the rows are equal."""
    spec = load_spec(str(sweep_dir / "sweep.yaml"))
    store = ResultStore(str(tmp_path / "state"))
    first = run_sweep(spec, SerialExecutor(), store=store)
    assert len(list((tmp_path / "state").glob("*.json"))) == 12
    (tmp_path / "state" / "roomy+packed+simulate.json").unlink()
    ran: list[str] = []

    class Recording(SerialExecutor):
        def run(self, cluster, todo):  # type: ignore[no-untyped-def]
            todo = list(todo)
            ran.extend(s.name for s in todo)
            return super().run(cluster, todo)

    again = run_sweep(spec, Recording(), store=store)
    assert ran == ["roomy+packed+simulate"]
    assert _metrics(again) == _metrics(first)
    assert sum(r.resumed for r in again) == 11
    # a changed node-groups file makes its scenarios stale
    (sweep_dir / "large.yaml").write_text((sweep_dir / "large.yaml").read_text() + "\n# v2\n")
    ran.clear()
    run_sweep(load_spec(str(sweep_dir / "sweep.yaml")), Recording(), store=store)
    assert sorted(ran) == sorted(
        s
        for s in EXPECTED | {"large+spread+simulate": 0, "large+packed+simulate": 0}
        if s.startswith("large+")
    )


def test_grid_streamed(sweep_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The grid is streamed (issue 30: a 973,360-scenario sweep built its whole list before
    running the first): the serial executor runs scenario 0 when only it has been built,
    the pool keeps at most IN_FLIGHT_PER_WORKER per worker submitted ahead; same results."""
    import schedsim.sweep as sweep_pkg

    spec = load_spec(str(sweep_dir / "sweep.yaml"))
    assert scenario_count(spec) == 12
    built = [0]
    real = sweep_pkg.iter_scenarios

    def counting(spec_: Any) -> Any:
        for s in real(spec_):
            built[0] += 1
            yield s

    monkeypatch.setattr(sweep_pkg, "iter_scenarios", counting)
    seen: list[int] = []
    serial = run_sweep(spec, SerialExecutor(), on_result=lambda r, total: seen.append(built[0]))
    assert seen[0] == 1 and seen == list(range(1, 13))
    seen.clear()
    built[0] = 0
    pooled = run_sweep(spec, PoolExecutor(1), on_result=lambda r, total: seen.append(built[0]))
    assert seen[0] <= IN_FLIGHT_PER_WORKER + 1 < 12
    assert _metrics(pooled) == _metrics(serial)


def test_outputs(sweep_dir: Path) -> None:
    """JSON rows and CSV lines come in scenario order with the axes and metrics."""
    results = run_sweep(load_spec(str(sweep_dir / "sweep.yaml")), SerialExecutor())
    doc = json.loads(to_json(results))
    assert doc["failed"] == 0
    row = doc["scenarios"][5]
    assert row["axes"] == {
        "nodeGroups": "roomy",
        "schedulerConfig": "spread",
        "command": "scale-up",
    }
    assert (row["scheduled"], row["nodesAdded"], row["status"]) == (6, 4, "ok")
    assert (row["cost"], row["latencyP50Seconds"], row["preempted"]) == (None, None, 0)
    assert ScenarioResult.from_dict(row).metrics() == results[5].metrics()
    lines = to_csv(results).splitlines()
    assert lines[0] == (
        "scenario,nodeGroups,schedulerConfig,command,status,scheduled,unschedulable,"
        "pluginErrors,preempted,nodesAdded,nodesRemoved,cost,latencyP50Seconds,"
        "latencyP90Seconds,latencyP99Seconds,wallSeconds,error"
    )
    assert lines[6].startswith("roomy+spread+scale-up,roomy,spread,scale-up,ok,6,0,0,0,4,0,,,,,")


HEAD = "cluster: [cluster.yaml]\ncommands: [simulate]\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            HEAD + "extra: 1\n",
            "sweep.yaml: extra: unknown field",
        ),
        ("commands: [simulate]\n", "sweep.yaml: cluster: required"),
        (
            HEAD + "options: {scanInterval: 0s}\n",
            "sweep.yaml: options.scanInterval: must be > 0",
        ),
        (
            HEAD + "options: {until: soon}\n",
            "sweep.yaml: options.until: ",
        ),
        (
            HEAD + "axes: {traces: {a: []}}\n",
            "sweep.yaml: axes.traces[a]: expected a file path or a list of them",
        ),
        (
            "cluster: [cluster.yaml]\ncommands: [replay-all]\n",
            "sweep.yaml: commands[0]: unknown command 'replay-all'",
        ),
        (
            "cluster: [cluster.yaml]\ncommands: [scale-up]\n",
            "sweep.yaml: axes.nodeGroups: scale-up needs a node-groups file",
        ),
        (
            HEAD + "axes: {gates: {a: {}}}\n",
            "sweep.yaml: axes.gates: unknown axis",
        ),
        (
            HEAD + "axes: {featureGates: {x: {NoGate: true}}}\n",
            "sweep.yaml: axes.featureGates[x]: unknown feature gate",
        ),
        (
            HEAD + "axes: {featureGates: {x: {A: yes-ish}}}\n",
            "sweep.yaml: axes.featureGates[x][A]: expected true or false",
        ),
        (
            HEAD + "options: {expander: cheapest}\n",
            "sweep.yaml: options.expander: expected one of",
        ),
        (
            HEAD + "axes: {nodeGroups: {a: missing.yaml}}\n",
            "missing.yaml",
        ),
        (
            HEAD + "axes: {nodeGroups: {'a/b': x.yaml}}\n",
            "sweep.yaml: axes.nodeGroups[a/b]: variant names are",
        ),
    ],
)
def test_bad_spec(sweep_dir: Path, text: str, message: str) -> None:
    """A malformed spec is one ``FILE: FIELD: problem`` error, before anything runs."""
    (sweep_dir / "sweep.yaml").write_text(text)
    with pytest.raises(ManifestError) as e:
        load_spec(str(sweep_dir / "sweep.yaml"))
    assert message in str(e.value)
    assert str(e.value).startswith(str(sweep_dir))


def test_errors_name_paths_as_given(
    sweep_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Files the spec names appear in messages relative, as the user gave them (the spec's
    directory joined to the spec's own path), not made absolute."""
    monkeypatch.chdir(sweep_dir.parent)
    rel = f"{sweep_dir.name}/sweep.yaml"
    (sweep_dir / "sweep.yaml").write_text(HEAD + "axes: {nodeGroups: {a: missing.yaml}}\n")
    with pytest.raises(ManifestError) as e:
        load_spec(rel)
    assert f"{sweep_dir.name}/missing.yaml" in str(e.value)
    assert str(sweep_dir) not in str(e.value)
    (sweep_dir / "broken.yaml").write_text("apiVersion: v1\nkind: Node\nmetadata: {}\n")
    (sweep_dir / "sweep.yaml").write_text(
        "cluster: [cluster.yaml]\ncommands: [simulate]\naxes: {traces: {b: broken.yaml}}\n"
    )
    with pytest.raises(ManifestError) as e:
        load_clusters(load_spec(rel))
    assert str(e.value).startswith(f"{sweep_dir.name}/broken.yaml: ")


WEB = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 16Gi, pods: "110"}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: c, image: i, resources: {requests: {cpu: "1"}}}
"""


def test_workload_scale_axis(tmp_path: Path) -> None:
    """``workloadScale`` multiplies each controller's replicas before its pods are made, as
    ``kubectl scale`` would: 3 replicas x 0.5 -> 2 (half up), x 1 -> 3, x 2 -> 6; on one
    4-core node with 1-core pods (NodeResourcesFit) 4 of 6 fit."""
    (tmp_path / "web.yaml").write_text(WEB)
    (tmp_path / "sweep.yaml").write_text(
        "cluster: [web.yaml]\ncommands: [simulate]\n"
        "axes: {workloadScale: {half: 0.5, today: 1, double: 2}}\n"
    )
    spec = load_spec(str(tmp_path / "sweep.yaml"))
    rows = {r.name: (r.scheduled, r.unschedulable) for r in run_sweep(spec, SerialExecutor())}
    assert rows == {
        "half+simulate": (2, 0),
        "today+simulate": (3, 0),
        "double+simulate": (4, 2),
    }
    assert len(load_clusters(spec)) == 3


@pytest.mark.parametrize(
    ("value", "problem"),
    [("-1", "expected a finite number >= 0, got -1"), ("'2'", "expected a number >= 0, got '2'")],
)
def test_workload_scale_must_be_a_number(tmp_path: Path, value: str, problem: str) -> None:
    (tmp_path / "web.yaml").write_text(WEB)
    (tmp_path / "sweep.yaml").write_text(
        f"cluster: [web.yaml]\ncommands: [simulate]\naxes: {{workloadScale: {{x: {value}}}}}\n"
    )
    with pytest.raises(ManifestError) as e:
        load_spec(str(tmp_path / "sweep.yaml"))
    assert str(e.value).endswith(f"sweep.yaml: axes.workloadScale[x]: {problem}")
