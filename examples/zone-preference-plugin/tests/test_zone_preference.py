"""ZonePreference's own tests: the model for testing a Score plugin with schedsim.testing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from schedsim.framework import Code
from schedsim.testing import make_node, make_pod, run_plugin, run_plugin_on_nodes
from schedsim_zone_preference import ZONE_LABEL, ZonePreference

NODES = [make_node(f"n-{z}", labels={ZONE_LABEL: f"zone-{z}"}) for z in "abc"]
POD = make_pod("web", annotations={"zone-preference.example.com/zones": "zone-b, zone-a"})


def test_first_listed_zone_scores_highest() -> None:
    run = run_plugin_on_nodes(ZonePreference, POD, nodes=NODES)
    assert run.pre_score is not None and run.pre_score.is_success
    assert run.scores == {"n-a": 1, "n-b": 2, "n-c": 0}  # raw: zone-b 2, zone-a 1
    assert run.normalized_scores == {"n-a": 50, "n-b": 100, "n-c": 0}


def test_pod_without_preference_is_not_scored() -> None:
    run = run_plugin_on_nodes(ZonePreference, make_pod("batch"), nodes=NODES)
    assert run.pre_score is not None and run.pre_score.code is Code.Skip
    assert run.scores == {} and run.normalized_scores == {}


def test_one_node_view() -> None:
    run = run_plugin(ZonePreference, POD, "n-a", nodes=NODES)
    assert (run.score, run.normalized_score) == (1, 50)


def test_custom_annotation() -> None:
    pod = make_pod("api", annotations={"zones": "zone-c"})
    run = run_plugin_on_nodes(ZonePreference, pod, nodes=NODES, args={"annotation": "zones"})
    assert run.normalized_scores == {"n-a": 0, "n-b": 0, "n-c": 100}


# --------------------------------------------------------------------------- CI
# the kit's pytest fixtures, and the conformance check that
# `schedsim check-plugin --plugin schedsim_zone_preference:ZonePreference` runs

CLUSTER = """
apiVersion: v1
kind: Node
metadata: {name: a, labels: {kubernetes.io/hostname: a}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}
---
apiVersion: v1
kind: Node
metadata: {name: b, labels: {kubernetes.io/hostname: b}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers: [{name: c, image: i, resources: {requests: {cpu: "1"}}}]
"""


def test_the_profile_schedules_on_both_stores(
    schedsim_cluster: Callable[[str], Any],
    schedsim_store: str,
    schedsim_run_profile: Callable[..., Any],
) -> None:
    result = schedsim_run_profile(
        schedsim_cluster(CLUSTER),
        plugins=["schedsim_zone_preference:ZonePreference"],
        store=schedsim_store,
    )
    assert [o.node_name is not None for o in result.outcomes] == [True]


def test_conformance(schedsim_check_plugin: Callable[..., list[str]]) -> None:
    assert schedsim_check_plugin("schedsim_zone_preference:ZonePreference") == []
