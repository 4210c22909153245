"""Fuzz: mutated replay traces, node groups, sweep specs and scheduler configurations.

The same mutations as ``test_fuzz_manifests.py`` (drop, duplicate, replace with an odd
value, retype), applied to the inputs of ``replay`` (the shipped trace and node groups),
``sweep`` (a small spec) and ``simulate --config`` (a KubeSchedulerConfiguration using most
of its fields). The promises (docs/cli.md): the command ends; exit status 0, 1 or 2; no
traceback; the input files are not modified; an output that is written is whole (JSON that
parses). Size: ``SCHEDSIM_FUZZ_EXAMPLES`` (default 40) split over the three tests.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_fuzz_manifests import ACTIONS, EXAMPLES, VALUE, _mutate, _paths, _run

from schedsim.engine import STORES

PER_TEST = max(5, int(os.environ.get("SCHEDSIM_FUZZ_EXAMPLES", "40")) // 3)
SETTINGS = settings(
    max_examples=PER_TEST,
    deadline=None,
    derandomize=not os.environ.get("SCHEDSIM_FUZZ_RANDOM"),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

TRACE = list(yaml.safe_load_all((EXAMPLES / "replay-burst.yaml").read_text()))
GROUPS = yaml.safe_load((EXAMPLES / "replay-node-groups.yaml").read_text())
CLUSTER = (EXAMPLES / "demo-cluster.yaml").read_text()
CONFIG: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "percentageOfNodesToScore": 50,
    "podInitialBackoffSeconds": 1,
    "podMaxBackoffSeconds": 10,
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {
                "multiPoint": {"enabled": [{"name": "NodeResourcesFit", "weight": 2}]},
                "score": {
                    "enabled": [{"name": "ImageLocality", "weight": 3}],
                    "disabled": [{"name": "NodeResourcesBalancedAllocation"}],
                },
                "filter": {"disabled": [{"name": "NodePorts"}]},
            },
            "pluginConfig": [
                {
                    "name": "NodeResourcesFit",
                    "args": {
                        "scoringStrategy": {
                            "type": "MostAllocated",
                            "resources": [{"name": "cpu", "weight": 1}],
                        }
                    },
                },
                {"name": "PodTopologySpread", "args": {"defaultingType": "List"}},
            ],
        }
    ],
}
SPEC: dict[str, Any] = {
    "cluster": ["cluster.yaml"],
    "commands": ["simulate", "scale-up"],
    "axes": {
        "nodeGroups": {"small": "groups.yaml"},
        "featureGates": {"on": {"DRAPrioritizedList": True}, "off": {}},
    },
    "options": {"placement": "first-fit", "maxNodesPerScaleUp": 3, "scanInterval": "10s"},
}


@st.composite
def _mutations(draw: st.DrawFn, doc: Any) -> Any:
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(_paths(doc)))
        doc = _mutate(doc, path, draw(st.sampled_from(ACTIONS)), draw(VALUE))
    return doc


def _check(code: int, out: str, err: str) -> None:
    assert code in (0, 1, 2), err
    assert "Traceback" not in err, err
    if code in (0, 1) and out:
        json.loads(out)  # an output that is written is whole


def _files(d: Path, files: dict[str, str]) -> dict[str, bytes]:
    for name, text in files.items():
        (d / name).write_text(text)
    return {name: (d / name).read_bytes() for name in files}


@st.composite
def _trace_case(draw: st.DrawFn) -> tuple[str, str]:
    docs = list(TRACE)
    i = draw(st.integers(0, len(docs) - 1))
    docs[i] = draw(_mutations(docs[i]))
    groups = draw(st.one_of(st.just(GROUPS), _mutations(GROUPS)))
    return yaml.safe_dump_all(docs, allow_unicode=True), yaml.safe_dump(groups, allow_unicode=True)


@SETTINGS
@given(_trace_case())
def test_mutated_replay_traces(case: tuple[str, str]) -> None:
    """``replay`` on a mutated trace and node groups ends (bounded by ``--until``) with exit
    0, 1 or 2, no traceback, the inputs untouched and complete JSON."""
    trace, groups = case
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        before = _files(d, {"trace.yaml": trace, "groups.yaml": groups})
        argv = ["replay", str(d / "trace.yaml"), "--node-groups", str(d / "groups.yaml")]
        result = _run([*argv, "--until", "2h", "-o", "json"])
        assert {n: (d / n).read_bytes() for n in before} == before
    _check(*result)


@SETTINGS
@given(_mutations(SPEC))
def test_mutated_sweep_specs(spec: Any) -> None:
    """``sweep --serial`` on a mutated spec: exit 0, 1 or 2, no traceback, files untouched."""
    groups = yaml.safe_dump(GROUPS)
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        files = {"cluster.yaml": CLUSTER, "groups.yaml": groups}
        files["sweep.yaml"] = yaml.safe_dump(spec, allow_unicode=True)
        before = _files(d, files)
        result = _run(["sweep", str(d / "sweep.yaml"), "--serial", "-o", "json"])
        assert {n: (d / n).read_bytes() for n in before} == before
    _check(*result)


@SETTINGS
@given(_mutations(CONFIG))
def test_mutated_scheduler_configs(config: Any) -> None:
    """``simulate --config`` with a mutated KubeSchedulerConfiguration: exit 0, 1 or 2, no
    traceback, both stores print the same, files untouched."""
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        text = yaml.safe_dump(config, allow_unicode=True)
        before = _files(d, {"cluster.yaml": CLUSTER, "config.yaml": text})
        argv = ["simulate", str(d / "cluster.yaml"), "--config", str(d / "config.yaml")]
        results = {s: _run([*argv, "--store", s, "-o", "json"]) for s in STORES}
        assert {n: (d / n).read_bytes() for n in before} == before
    for result in results.values():
        _check(*result)
    assert results["delta"] == results["basic"]
