"""Score cost per (pod, node), per default score plugin, against Filter-only, same run.

Each benchmark scores one pending pod on the same 100 nodes: ``filter-only`` runs the default
profile's whole Filter chain per node (the work every placement does); each ``score-<plugin>``
runs that plugin's PreScore once and its Score per node (and NormalizeScore once, where it has
one) with the plugin's methods called directly, as the runtime's chains do. The ratio
score-<plugin> / filter-only is what docs/performance.md records.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from conftest import make_nodes

from schedsim.api.core import Node, Pod
from schedsim.framework import CycleState, Framework, Handle, default_profile, discover_plugins
from schedsim.snapshot import PredicateSnapshot

NODES = 100
SCORE_PLUGINS = (
    "NodeResourcesFit",
    "NodeResourcesBalancedAllocation",
    "TaintToleration",
    "NodeAffinity",
    "ImageLocality",
)


def _nodes() -> list[Node]:
    out = []
    for i, n in enumerate(make_nodes(NODES)):
        raw: dict[str, Any] = {
            "metadata": {"name": n.name, "labels": dict(n.labels)},
            "spec": {
                "taints": [{"key": t.key, "value": t.value, "effect": t.effect} for t in n.taints]
                + (
                    [{"key": "spot", "value": "true", "effect": "PreferNoSchedule"}]
                    if i % 4 == 0
                    else []
                )
            },
            "status": {
                "allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110"},
                "images": [{"names": ["registry.example/app:1.0"], "sizeBytes": 300 * 2**20}]
                if i % 2 == 0
                else [],
            },
        }
        out.append(Node.from_manifest(raw))
    return out


POD = Pod.from_manifest(
    {
        "metadata": {"name": "pending"},
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "registry.example/app:1.0",
                    "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}},
                }
            ],
            "affinity": {
                "nodeAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 10,
                            "preference": {
                                "matchExpressions": [
                                    {"key": "zone", "operator": "In", "values": ["z1"]}
                                ]
                            },
                        }
                    ]
                }
            },
        },
    }
)


@pytest.fixture(scope="module")
def setup() -> Iterator[Any]:
    handle = Handle()
    fw = Framework(default_profile(), handle)
    snap = PredicateSnapshot(fw)
    assert snap.set_cluster_state(_nodes(), []) == []
    nodes = snap.list_node_infos()
    registry = discover_plugins()
    plugins = {name: registry[name]({}, handle) for name in SCORE_PLUGINS}
    with snap.bound():  # plugins read the snapshot through the handle
        yield fw, nodes, plugins


@pytest.mark.benchmark(group="score-per-node")
def test_filter_only(benchmark: Any, setup: Any) -> None:
    """Baseline: PreFilter once, the default Filter chain on every node."""
    fw, nodes, _ = setup

    def run() -> int:
        state = CycleState()
        fw.run_pre_filter_plugins(state, POD, nodes)
        return sum(1 for ni in nodes if fw.run_filter_plugins(state, POD, ni).is_success)

    assert benchmark(run) == 90  # every 10th node has a NoSchedule taint


@pytest.mark.benchmark(group="score-per-node")
@pytest.mark.parametrize("plugin", SCORE_PLUGINS)
def test_score(benchmark: Any, setup: Any, plugin: str) -> None:
    """One plugin: PreScore once, Score on every node, NormalizeScore once."""
    _, nodes, plugins = setup
    p = plugins[plugin]
    normalize = getattr(p, "schedsim_normalize_score", None)
    names = [ni.node.name for ni in nodes]

    def run() -> dict[str, int]:
        state = CycleState()
        p.schedsim_pre_score(state, POD, nodes)
        pairs = zip(names, nodes, strict=True)
        scores = {name: p.schedsim_score(state, POD, ni) for name, ni in pairs}
        if normalize is not None:
            normalize(state, POD, scores)
        return scores

    scores = benchmark(run)
    assert len(scores) == NODES and all(0 <= s <= 100 for s in scores.values())
