"""Plugin Error statuses in scale-up and scale-down: the pod's attempt fails, as in
kube-scheduler (an Error status aborts the scheduling attempt; the pod is never marked
Unschedulable, so CA never scales up for it), and the simulators go on with the other pods.
The error is reported per pod, never as a "wouldn't fit" reason, and a node whose pods hit
one while moving is never removable. A test plugin returns the Error here; the CLI tests
use the real DynamicResources plugin with a CEL runtime error."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import pytest
from sim_loaded import loaded

from schedsim.api.core import Node, Pod
from schedsim.autoscaler.hinting import HintingSimulator
from schedsim.autoscaler.nodegroups import NodeGroup, NodeTemplate
from schedsim.autoscaler.plugin_errors import PluginStatusError, aborting_plugin_errors
from schedsim.autoscaler.scaledown import UnremovableReason, scale_down
from schedsim.autoscaler.scaleup import PLUGIN_ERROR, scale_up
from schedsim.framework import Framework, Handle
from schedsim.framework.cycle_state import CycleState
from schedsim.framework.handle import PluginFactory
from schedsim.framework.profile import DEFAULT_PLUGINS, EXTENSION_POINTS, Profile
from schedsim.framework.runtime import PluginError, discover_plugins
from schedsim.framework.status import Code, Status
from schedsim.snapshot import (
    ClusterSnapshotStore,
    NodeInfo,
    PredicateSnapshot,
    SchedulingError,
    SchedulingErrorType,
)

BOOM = 'running "Boom" filter plugin: boom on'


class _Boom:
    """Filter: an Error status (two lines) for a pod labelled ``boom: X`` on nodes whose
    name starts with X."""

    name: ClassVar[str] = "Boom"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        pass

    def schedsim_filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        target = pod.labels.get("boom")
        assert node_info.node is not None
        if target and node_info.node.name.startswith(target):
            return Status(Code.Error, (f"boom on {node_info.node.name}\n  | detail line",))
        return None


class _BadReserve:
    """Reserve: an Error status for every pod; Unreserve raises (it must not fail)."""

    name: ClassVar[str] = "BadReserve"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        self.unreserved: list[str] = []

    def schedsim_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return Status(Code.Error, ("no room in the ledger",))

    def schedsim_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self.unreserved.append(node_name)
        raise RuntimeError("ledger locked")


class _BadPreFilter:
    """PreFilter: an Error status for a pod labelled ``boom``."""

    name: ClassVar[str] = "BadPreFilter"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        pass

    def schedsim_pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None:
        return Status(Code.Error, ("cannot read",)) if pod.labels.get("boom") else None


def fw(extra: PluginFactory = _Boom, abort_on_plugin_error: bool = False) -> Framework:
    name: str = getattr(extra, "name")  # noqa: B009
    registry: dict[str, PluginFactory] = {**discover_plugins(), name: extra}
    profile = Profile(plugins={p: (*DEFAULT_PLUGINS, name) for p in EXTENSION_POINTS})
    return Framework(profile, Handle(), registry, abort_on_plugin_error=abort_on_plugin_error)


def node(name: str, cpu: str = "1", labels: Mapping[str, str] | None = None) -> Node:
    return Node.from_manifest(
        {
            "metadata": {
                "name": name,
                "labels": {"kubernetes.io/hostname": name, **(labels or {})},
            },
            "status": {"allocatable": {"cpu": cpu, "memory": "1000", "pods": "110"}},
        }
    )


def pod(name: str, cpu: str = "500m", node_name: str = "", boom: str = "", rs: bool = True) -> Pod:
    meta: dict[str, Any] = {"name": name, "namespace": "default", "uid": name}
    if boom:
        meta["labels"] = {"boom": boom}
    if rs:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs",
                                    "uid": f"rs-{name}", "controller": True}]  # fmt: skip
    return Pod.from_manifest(
        {
            "metadata": meta,
            "spec": {
                "nodeName": node_name,
                "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}],
            },
        }
    )


def group(name: str, cpu: str) -> NodeGroup:
    return NodeGroup(name, 0, 10, NodeTemplate(node(f"{name}-template", cpu)))


def test_context_raises_only_inside_and_restores_the_framework(
    store: Callable[[], ClusterSnapshotStore],
) -> None:
    """Outside the context the snapshot behaves as CA's runner (an Error status is a node
    that does not pass); inside, it aborts the attempt before anything changes."""
    framework = fw()
    snap = PredicateSnapshot(framework, store())
    snap.set_cluster_state([node("n1"), node("n2", cpu="100m")], [])
    bad = pod("bad", boom="n1")
    with aborting_plugin_errors(framework):
        with pytest.raises(PluginStatusError) as e:
            snap.schedule_pod_on_any_node_matching(bad)
        assert str(e.value) == "pod default/bad: " + BOOM + " n1"  # first line only
        assert not any(ni.pods for ni in snap.list_node_infos())
    assert "run_filter_plugins" not in vars(framework)
    with pytest.raises(SchedulingError) as e2:  # CA: n1 just does not pass
        snap.schedule_pod_on_any_node_matching(bad)
    assert e2.value.type is SchedulingErrorType.NO_NODES_PASSING_PREDICATES


_RUNS = ("run_pre_filter_plugins", "run_filter_plugins", "run_reserve_plugins_reserve",
         "run_reserve_plugins_unreserve")  # fmt: skip


def test_the_context_replaces_no_method() -> None:
    """The policy is a Framework parameter that the context flips and restores (nested
    contexts too); every Run method stays the class's own, on the instance and on the
    plugins, so nothing is patched."""
    framework = fw()
    boom = framework.plugins["Boom"]
    plugin_filter = vars(type(boom))["schedsim_filter"]
    assert framework.abort_on_plugin_error is False
    with aborting_plugin_errors(framework):
        assert framework.abort_on_plugin_error is True
        with aborting_plugin_errors(framework):
            assert framework.abort_on_plugin_error is True
        assert framework.abort_on_plugin_error is True
        for run in _RUNS:
            assert run not in vars(framework)
            assert getattr(framework, run).__func__ is vars(Framework)[run]
        assert "schedsim_filter" not in vars(boom)
        assert vars(type(boom))["schedsim_filter"] is plugin_filter
    assert framework.abort_on_plugin_error is False


def test_the_policy_as_a_constructor_parameter(store: Callable[[], ClusterSnapshotStore]) -> None:
    """``Framework(..., abort_on_plugin_error=True)`` aborts without the context: a
    PreFilter Error (kube-scheduler's RunPreFilterPlugins wording ``running PreFilter plugin
    "X": ...``, framework.go) raises before any node is tried."""
    snap = PredicateSnapshot(fw(_BadPreFilter, abort_on_plugin_error=True), store())
    snap.set_cluster_state([node("n1")], [])
    with pytest.raises(PluginStatusError) as e:
        snap.schedule_pod_on_any_node_matching(pod("bad", boom="x"))
    assert e.value.message == 'running PreFilter plugin "BadPreFilter": cannot read'
    assert not snap.get_node_info("n1").pods
    snap.schedule_pod_on_any_node_matching(pod("good"))
    assert [p.pod.name for p in snap.get_node_info("n1").pods] == ["good"]


def test_a_reserve_error_runs_unreserve_then_aborts(
    store: Callable[[], ClusterSnapshotStore],
) -> None:
    """A Reserve Error status: Unreserve runs first (kube-scheduler's schedulingCycle calls
    RunReservePluginsUnreserve when RunReservePluginsReserve fails, schedule_one.go); what
    Unreserve raised is added to the message. Outside the context, an Unreserve that raises
    is a `PluginError`; inside, a `PluginStatusError` for the pod."""
    framework = fw(_BadReserve)
    bad_reserve = framework.plugins["BadReserve"]
    snap = PredicateSnapshot(framework, store())
    snap.set_cluster_state([node("n1")], [])
    p = pod("p")
    with aborting_plugin_errors(framework):
        with pytest.raises(PluginStatusError) as e:
            snap.schedule_pod_on_any_node_matching(p)
        assert e.value.message == (
            'running Reserve plugin "BadReserve": no room in the ledger; '
            'running Unreserve plugin "BadReserve": RuntimeError: ledger locked'
        )
        assert bad_reserve.unreserved == ["n1"]
        with pytest.raises(PluginStatusError) as e2:
            framework.run_reserve_plugins_unreserve(CycleState(), p, "n1")
        unreserve = 'running Unreserve plugin "BadReserve": RuntimeError: ledger locked'
        assert e2.value.message == unreserve
    assert not snap.get_node_info("n1").pods
    with pytest.raises(PluginError, match="ledger locked"):
        framework.run_reserve_plugins_unreserve(CycleState(), p, "n1")
    with pytest.raises(SchedulingError) as e3:  # CA's RunReserveOnNode: an internal error
        snap.schedule_pod_on_any_node_matching(p)
    assert e3.value.type is SchedulingErrorType.INTERNAL_ERROR
    assert unreserve in str(e3.value)


def test_hinting_reports_the_pod_and_goes_on(store: Callable[[], ClusterSnapshotStore]) -> None:
    framework = fw()
    snap = PredicateSnapshot(framework, store())
    snap.set_cluster_state([node("n1")], [])
    pods = [pod("bad", boom="n1"), pod("good")]
    with aborting_plugin_errors(framework):
        r = HintingSimulator().try_schedule_pods(snap, pods)
        assert [p.pod.name for p in r.scheduled] == ["good"]
        assert [(e.pod.name, e.message) for e in r.plugin_errors] == [("bad", BOOM + " n1")]
        assert not r.unschedulable
        r = HintingSimulator().try_schedule_pods(snap, pods, break_on_failure=True)
        assert [p.name for p in r.unprocessed] == ["good"] and not r.scheduled


def test_scale_up_error_on_existing_nodes(store: Callable[[], ClusterSnapshotStore]) -> None:
    """kube-scheduler fails the attempt, so the pod is neither placed nor considered for any
    group (although the group would take it); the others are."""
    r = scale_up(
        *loaded(
            [node("n1"), node("n2", cpu="100m")],
            [pod("bad", boom="n1"), pod("big", cpu="2")],
            fw(),
            store(),
        ),
        [group("large", "4")],
    )
    assert [(e.pod.name, e.node_group, e.message) for e in r.errors] == [("bad", "", BOOM + " n1")]
    assert not r.scheduled and not r.unhelped
    assert r.chosen == "large" and [p.name for p in r.options[0].pods] == ["big"]


def test_scale_up_error_on_a_template_is_not_a_fit_reason(
    store: Callable[[], ClusterSnapshotStore],
) -> None:
    """An Error on group t's template copy: reported for group t, and t's reason for the
    pod is `PLUGIN_ERROR`, never "wouldn't fit"; group u is judged as usual."""
    r = scale_up(
        *loaded([], [pod("p", cpu="2", boom="t-")], fw(), store()),
        [group("t", "4"), group("u", "1")],
    )
    assert [(e.pod.name, e.node_group) for e in r.errors] == [("p", "t")]
    assert r.errors[0].message == BOOM + " t-template-e-0"
    [u] = r.unhelped
    assert u.reasons == {"t": PLUGIN_ERROR, "u": "wouldn't fit: Insufficient cpu"}
    assert r.chosen is None


def test_scale_down_error_while_moving_pods_is_never_removable(
    store: Callable[[], ClusterSnapshotStore],
) -> None:
    """n1's pod could only go to n2, where the plugin fails: n1 is not removable
    (UnexpectedError, naming the pod), the error is reported, the others are judged."""
    nodes = [node("n1"), node("n2"), node("n3", cpu="100m")]
    pods = [pod("p", cpu="300m", node_name="n1", boom="n2"),
            pod("pinned", cpu="100m", node_name="n2", rs=False)]  # fmt: skip
    r = scale_down(*loaded(nodes, pods, fw(), store()))
    v = r.verdicts[0]
    assert (v.node, v.removable, v.reason) == ("n1", False, UnremovableReason.UNEXPECTED_ERROR)
    assert v.pod is not None and v.pod.name == "p"
    assert v.detail == f"plugin error moving pod default/p: {BOOM} n2"
    assert [(e.pod.name, e.message) for e in r.errors] == [("p", BOOM + " n2")]
    assert [(x.node, x.removable) for x in r.verdicts[1:]] == [("n2", False), ("n3", True)]
