"""Gang's own tests: gang scheduling through Permit in a simulation (all members or none),
on both snapshot stores (the ``schedsim_store`` fixture of schedsim's pytest plugin).

The behaviour follows kube-scheduler's Permit contract (framework_test.go TestPermitPlugins,
schedule_one_test.go: a waiting pod is bound once every plugin allowed it, rejected with
"rejected due to timeout after waiting <d> at plugin <name>" when its time is up) and the
coscheduling plugin of kubernetes-sigs/scheduler-plugins (a group is bound only with
minMember members; one member's rejection rejects the waiting others).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from schedsim_gang import GROUP_LABEL, MIN_AVAILABLE_ANNOTATION, Gang

from schedsim.engine import Cluster, Engine, EngineConfig
from schedsim.framework import Code, CycleState, Handle, Status
from schedsim.framework.scheduler_config import load_scheduler_configuration
from schedsim.testing import make_pod

HERE = Path(__file__).resolve().parents[1]


def _engine(store: str, gang: bool = True) -> Engine:
    if not gang:
        return Engine(EngineConfig(store=store))
    profile = load_scheduler_configuration(str(HERE / "profile.yaml")).profiles[0]
    return Engine(EngineConfig(profile, plugins=("schedsim_gang:Gang",), store=store))


def _outcomes(engine: Engine) -> dict[str, tuple[str | None, int, str]]:
    result = engine.simulate(Cluster.from_paths([str(HERE / "cluster.yaml")]))
    return {o.pod.name: (o.node_name, o.attempts, o.message) for o in result.outcomes}


def test_complete_group_is_bound_and_short_group_is_not(schedsim_store: str) -> None:
    """pair (min 2, 2 members) is bound: pair-0 waits, pair-1 completes the group and allows
    it. trio (min 3, only 2 slots left) is not: trio-0 and trio-1 wait on the two free slots,
    time out after 30 s and give them back (Unreserve); that pod delete retries trio-2, which
    fit nowhere before (NodeResourcesFit registers pod deletes), and it times out in turn."""
    got = _outcomes(_engine(schedsim_store))
    assert {k: v[:2] for k, v in got.items()} == {
        "pair-0": ("n1", 1),
        "pair-1": ("n2", 1),
        "trio-0": (None, 1),
        "trio-1": (None, 1),
        "trio-2": (None, 2),
    }
    timeout = "0/1 nodes are available: 1 rejected due to timeout after waiting 30s at plugin Gang."
    assert got["trio-0"][2] == timeout
    assert got["trio-2"][2] == timeout


def test_without_gang_a_partial_group_is_bound(schedsim_store: str) -> None:
    """The same cluster without the plugin: two trio members take the last slots."""
    got = _outcomes(_engine(schedsim_store, gang=False))
    assert sum(1 for k, v in got.items() if k.startswith("trio") and v[0]) == 2


def _member(name: str, group: str = "g", min_available: str = "2") -> object:
    return make_pod(
        name,
        labels={GROUP_LABEL: group},
        annotations={MIN_AVAILABLE_ANNOTATION: min_available},
    )


def test_args_are_checked() -> None:
    """permitWaitingTimeSeconds must be a positive number; unknown args are refused."""
    with pytest.raises(ValueError, match="permitWaitingTimeSeconds"):
        Gang({"permitWaitingTimeSeconds": 0}, Handle())
    with pytest.raises(ValueError, match="unknown Gang args"):
        Gang({"minMember": 2}, Handle())


def test_pod_outside_any_group_is_allowed_and_bad_annotation_rejected() -> None:
    """Pods without the group label pass Permit; a malformed min-available annotation is
    UnschedulableAndUnresolvable, naming the annotation."""
    gang = Gang({}, Handle())
    assert gang.schedsim_permit(CycleState(), make_pod("solo"), "n1") is None
    bad = _member("m", min_available="two")
    st = gang.schedsim_permit(CycleState(), bad, "n1")  # type: ignore[arg-type]
    assert isinstance(st, Status) and st.code is Code.UnschedulableAndUnresolvable
    assert MIN_AVAILABLE_ANNOTATION in st.message


# --------------------------------------------------------------------------- CI
# the kit's pytest fixtures, and the conformance check that
# `schedsim check-plugin --plugin schedsim_gang:Gang` runs

CLUSTER = """
apiVersion: v1
kind: Node
metadata: {name: a, labels: {kubernetes.io/hostname: a}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: solo}
spec:
  containers: [{name: c, image: i, resources: {requests: {cpu: "1"}}}]
"""


def test_the_profile_schedules_on_both_stores(
    schedsim_cluster: Callable[[str], Any],
    schedsim_store: str,
    schedsim_run_profile: Callable[..., Any],
) -> None:
    result = schedsim_run_profile(
        schedsim_cluster(CLUSTER), plugins=["schedsim_gang:Gang"], store=schedsim_store
    )
    # a pod of no gang is not held at Permit
    assert [(o.pod.name, o.node_name) for o in result.outcomes] == [("solo", "a")]


def test_conformance(schedsim_check_plugin: Callable[..., list[str]]) -> None:
    assert schedsim_check_plugin("schedsim_gang:Gang") == []
