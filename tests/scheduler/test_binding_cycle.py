"""Permit, PreBind, Bind and PostBind in `simulate` (issue 14 item 4), on both stores:
kube-scheduler 1.34's RunPermitPlugins / WaitOnPermit / RunBindPlugins / RunPostBindPlugins
(framework_test.go) and the binding cycle of schedule_one.go (schedule_one_test.go)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest

from schedsim.api.core import Node, Pod
from schedsim.framework import (
    ClusterEventWithHint,
    Code,
    CycleState,
    Framework,
    Handle,
    Status,
    discover_plugins,
)
from schedsim.framework.scheduler_config import scheduler_configuration_from_mapping
from schedsim.scheduler.scheduling import SimulationResult, simulate
from schedsim.snapshot import PredicateSnapshot
from schedsim.testing import StoreFactory
from schedsim.testing.snapshot_conformance import make_node, make_pod

Calls = list[tuple[str, str, str]]


class Probe:
    """A Permit + PreBind + Bind + PostBind + Reserve plugin whose answers a test sets per pod
    name (``permit``, ``pre_bind``, ``bind``), recording every call."""

    name = "Probe"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        self.handle = handle
        self.calls: Calls = []
        self.permit: dict[str, Any] = dict(args.get("permit", {}))
        self.pre_bind: dict[str, Status] = dict(args.get("preBind", {}))
        self.bind: dict[str, Status] = dict(args.get("bind", {}))
        self.on_permit: Callable[[Probe, Pod], None] | None = args.get("onPermit")

    def schedsim_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        self.calls.append(("Reserve", pod.name, node_name))
        return None

    def schedsim_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self.calls.append(("Unreserve", pod.name, node_name))

    def schedsim_permit(self, state: CycleState, pod: Pod, node_name: str) -> Any:
        self.calls.append(("Permit", pod.name, node_name))
        if self.on_permit is not None:
            self.on_permit(self, pod)
        return self.permit.get(pod.name)

    def schedsim_pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        self.calls.append(("PreBind", pod.name, node_name))
        return self.pre_bind.get(pod.name)

    def schedsim_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        self.calls.append(("Bind", pod.name, node_name))
        return self.bind.get(pod.name, Status(Code.Skip))

    def schedsim_post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self.calls.append(("PostBind", pod.name, node_name))

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """No event helps a pod Probe rejected (EnqueueExtensions returning nothing)."""
        return ()


def _run(
    store: StoreFactory,
    nodes: Sequence[Node],
    pods: Sequence[Pod],
    args: Mapping[str, Any] | None = None,
    config: Mapping[str, Any] | None = None,
) -> tuple[SimulationResult, Probe]:
    raw = config or {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        # Probe also enabled at bind: it runs before DefaultBinder there (expandMultiPointPlugins
        # puts a point's explicit overrides first)
        "profiles": [
            {
                "plugins": {
                    "multiPoint": {"enabled": [{"name": "Probe"}]},
                    "bind": {"enabled": [{"name": "Probe"}]},
                }
            }
        ],
    }
    profile = scheduler_configuration_from_mapping(raw).profiles[0]
    made: list[Probe] = []

    def factory(a: Mapping[str, Any], handle: Handle) -> Probe:
        made.append(Probe(args or {}, handle))
        return made[-1]

    fw = Framework(profile, Handle(), discover_plugins(extra={"Probe": factory}))
    fw.validate_profile()
    snap = PredicateSnapshot(fw, store(), skip_unschedulable_nodes=False)
    snap.set_cluster_state(nodes, [])
    return simulate(snap, pods), made[0]


def _by_name(result: SimulationResult) -> dict[str, tuple[str | None, int, str]]:
    return {o.pod.name: (o.node_name, o.attempts, o.message) for o in result.outcomes}


def test_allowed_pod_runs_prebind_bind_postbind_in_order(store: StoreFactory) -> None:
    """A pod every Permit plugin allows goes through PreBind, Bind (Probe skips, DefaultBinder
    binds: RunBindPlugins passes a Skip on) and PostBind, once each, in that order."""
    result, probe = _run(store, [make_node("n1")], [make_pod("p")])
    assert _by_name(result) == {"p": ("n1", 1, "")}
    assert [c[0] for c in probe.calls] == ["Reserve", "Permit", "PreBind", "Bind", "PostBind"]


def test_bind_plugin_that_binds_stops_the_chain(store: StoreFactory) -> None:
    """RunBindPlugins: the first Bind plugin that does not return Skip decides. Probe runs
    before DefaultBinder: a Success from it binds (DefaultBinder is not asked), a rejection
    fails the pod after Unreserve (schedule_one_test.go handleBindingCycleError)."""
    ok, probe = _run(
        store, [make_node("n1")], [make_pod("p")], {"bind": {"p": Status(Code.Success)}}
    )
    assert _by_name(ok)["p"][0] == "n1"
    assert probe.calls[-2:] == [("Bind", "p", "n1"), ("PostBind", "p", "n1")]
    refused = Status(Code.Unschedulable, ("binding refused",))
    bad, probe = _run(store, [make_node("n1")], [make_pod("p")], {"bind": {"p": refused}})
    assert _by_name(bad)["p"] == (None, 1, "0/1 nodes are available: 1 binding refused.")
    assert [c[0] for c in probe.calls][-2:] == ["Bind", "Unreserve"]


def test_every_bind_plugin_skipping_fails_the_pod(store: StoreFactory) -> None:
    """With DefaultBinder disabled and the only Bind plugin skipping, nobody binds: the
    binding cycle fails (an Error, not a placement) and the pod leaves the node."""
    cfg = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "plugins": {
                    "multiPoint": {"enabled": [{"name": "Probe"}]},
                    "bind": {"disabled": [{"name": "DefaultBinder"}]},
                },
            }
        ],
    }
    result, probe = _run(store, [make_node("n1")], [make_pod("p")], config=cfg)
    (o,) = result.outcomes
    assert o.node_name is None and o.error
    assert "no bind plugin bound pod default/p to node n1" in o.message
    assert ("Unreserve", "p", "n1") in probe.calls


def test_permit_reject_unreserves_and_frees_the_node(store: StoreFactory) -> None:
    """RunPermitPlugins returning a rejection: Unreserve runs, the pod leaves the node
    (ForgetPod) and its FitError names one node (schedule_one.go: NumAllNodes 1)."""
    no = Status(Code.Unschedulable, ("not now",))
    result, probe = _run(store, [make_node("n1")], [make_pod("a")], {"permit": {"a": no}})
    assert _by_name(result) == {"a": (None, 1, "0/1 nodes are available: 1 not now.")}
    assert probe.calls[-1] == ("Unreserve", "a", "n1")


def test_pod_leaving_after_reserve_requeues_a_pod_it_blocked(store: StoreFactory) -> None:
    """Requeue on events (handleBindingCycleError: a forgotten assumed pod is
    AssignedPodDelete; NodeResourcesFit registers pod deletes): "a" waits at Permit on the
    only node, "big" fails on NodeResourcesFit and is parked; "a" times out and leaves the
    node, which sends "big" back to the queue: it is placed on its second attempt."""
    nodes = [make_node("n1", cpu="1")]
    pods = [make_pod("a", cpu="600m", priority=10), make_pod("big", cpu="600m")]
    result, _ = _run(store, nodes, pods, {"permit": {"a": (Status(Code.Wait), 5)}})
    got = _by_name(result)
    assert got["big"] == ("n1", 2, "")
    assert got["a"][:2] == (None, 1)


def test_permit_error_fails_the_attempt(store: StoreFactory) -> None:
    """A Permit plugin failing (an exception) is an Error: `running Permit plugin "Probe"`,
    after Unreserve; the pod is not placed."""

    def boom(probe: Probe, pod: Pod) -> None:
        raise RuntimeError("broken")

    result, probe = _run(store, [make_node("n1")], [make_pod("p")], {"onPermit": boom})
    (o,) = result.outcomes
    assert o.node_name is None and o.error
    assert 'running Permit plugin "Probe": RuntimeError: broken' in o.message
    assert ("Unreserve", "p", "n1") in probe.calls


def test_waiting_pod_is_bound_once_allowed(store: StoreFactory) -> None:
    """WaitOnPermit: a pod Probe asks to wait keeps its node; when the next pod's Permit
    allows it (waitingPod.Allow for the last pending plugin) it is bound, after the allowing
    pod (the allowing pod's binding cycle runs first)."""
    wait = (Status(Code.Wait), 30)

    def allow_all(probe: Probe, pod: Pod) -> None:
        if pod.name == "second":
            for wp in probe.handle.waiting_pods:
                wp.allow("Probe")

    nodes = [make_node("n1")]
    pods = [make_pod("first", priority=10), make_pod("second")]
    result, probe = _run(store, nodes, pods, {"permit": {"first": wait}, "onPermit": allow_all})
    assert {k: v[:2] for k, v in _by_name(result).items()} == {
        "first": ("n1", 1),
        "second": ("n1", 1),
    }
    binds = [c[1] for c in probe.calls if c[0] == "Bind"]
    assert binds == ["second", "first"]
    assert len(probe.handle.waiting_pods) == 0


@pytest.mark.parametrize(("seconds", "printed"), [(10, "10s"), (90, "1m30s"), (3600, "15m0s")])
def test_waiting_pod_times_out_on_the_clock(
    store: StoreFactory, seconds: int, printed: str
) -> None:
    """newWaitingPod's timer: a pod nobody allows is rejected when its wait (at most
    maxTimeout, 15 minutes) is over: "rejected due to timeout after waiting <d> at plugin
    <name>" (Go's Duration format), Unreserve runs and the node is free again."""
    nodes = [make_node("n1")]
    result, probe = _run(
        store, nodes, [make_pod("p")], {"permit": {"p": (Status(Code.Wait), seconds)}}
    )
    assert _by_name(result) == {
        "p": (
            None,
            1,
            f"0/1 nodes are available: 1 rejected due to timeout after waiting {printed} at "
            "plugin Probe.",
        )
    }
    assert probe.calls[-1] == ("Unreserve", "p", "n1")


def test_waiting_pod_rejected_by_a_plugin(store: StoreFactory) -> None:
    """waitingPod.Reject: the message given is the pod's reason."""

    def reject(probe: Probe, pod: Pod) -> None:
        if pod.name == "second":
            for wp in probe.handle.waiting_pods:
                wp.reject("Probe", "group broken")

    pods = [make_pod("first", priority=10), make_pod("second")]
    args = {"permit": {"first": (Status(Code.Wait), 30)}, "onPermit": reject}
    result, _ = _run(store, [make_node("n1")], pods, args)
    assert _by_name(result)["first"] == (None, 1, "0/1 nodes are available: 1 group broken.")
    assert _by_name(result)["second"][0] == "n1"
