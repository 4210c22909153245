"""NodePorts plugin: cases from upstream node_ports_test.go (TestNodePorts,
TestPreFilterDisabled)."""

from __future__ import annotations

from typing import Any

import pytest

from schedsim.api.core import Node, Pod
from schedsim.framework import Code, CycleState, Handle, Status
from schedsim.snapshot import NodeInfo, PodInfo
from schedsim_plugins.nodeports import PRE_FILTER_STATE_KEY, NodePorts

CONFLICT = Status(
    Code.Unschedulable,
    ("node(s) didn't have free ports for the requested pod ports",),
    "NodePorts",
)
SKIP = Code.Skip

_counter = iter(range(1_000_000))


def _ports(*infos: str) -> list[dict[str, Any]]:
    out = []
    for info in infos:
        protocol, ip, port = info.split("/")
        out.append({"protocol": protocol, "hostIP": ip, "hostPort": int(port)})
    return out


def new_pod(*host_port_infos: str) -> Pod:
    """Upstream ``newPod(host, "PROTO/IP/PORT"...)``: one container with those ports."""
    return Pod.from_manifest(
        {
            "metadata": {"name": f"p{next(_counter)}"},
            "spec": {"containers": [{"name": "c", "ports": _ports(*host_port_infos)}]},
        }
    )


def init_container_pod(sidecar: bool) -> Pod:
    """Upstream ``st.MakePod().InitContainerPort(sidecar, [{8001, 8001, TCP}])``."""
    init: dict[str, Any] = {
        "name": "init",
        "ports": [{"containerPort": 8001, "hostPort": 8001, "protocol": "TCP"}],
    }
    if sidecar:
        init["restartPolicy"] = "Always"
    return Pod.from_manifest(
        {"metadata": {"name": f"p{next(_counter)}"}, "spec": {"initContainers": [init]}}
    )


def node_info(*pods: Pod) -> NodeInfo:
    ni = NodeInfo(Node.from_manifest({"metadata": {"name": "m1"}}))
    for p in pods:
        ni.add_pod_info(PodInfo(p))
    return ni


CASES = [
    pytest.param(Pod.from_manifest({"metadata": {"name": "e"}}), node_info(), SKIP, None,
                 id="skip filter"),
    pytest.param(new_pod("UDP/127.0.0.1/8080"), node_info(new_pod("UDP/127.0.0.1/9090")),
                 None, None, id="other port"),
    pytest.param(new_pod("UDP/127.0.0.1/8080"), node_info(new_pod("UDP/127.0.0.1/8080")),
                 None, CONFLICT, id="same udp port"),
    pytest.param(new_pod("TCP/127.0.0.1/8080"), node_info(new_pod("TCP/127.0.0.1/8080")),
                 None, CONFLICT, id="same tcp port"),
    pytest.param(new_pod("TCP/127.0.0.1/8080"), node_info(new_pod("TCP/127.0.0.2/8080")),
                 None, None, id="different host ip"),
    pytest.param(new_pod("UDP/127.0.0.1/8080"), node_info(new_pod("TCP/127.0.0.1/8080")),
                 None, None, id="different protocol"),
    pytest.param(new_pod("UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"),
                 node_info(new_pod("UDP/127.0.0.1/8080")),
                 None, CONFLICT, id="second udp port conflict"),
    pytest.param(new_pod("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"),
                 node_info(new_pod("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081")),
                 None, CONFLICT, id="first tcp port conflict"),
    pytest.param(new_pod("TCP/0.0.0.0/8001"), node_info(new_pod("TCP/127.0.0.1/8001")),
                 None, CONFLICT, id="first tcp port conflict due to 0.0.0.0 hostIP"),
    pytest.param(new_pod("TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"),
                 node_info(new_pod("TCP/127.0.0.1/8001")),
                 None, CONFLICT, id="TCP hostPort conflict due to 0.0.0.0 hostIP"),
    pytest.param(new_pod("TCP/127.0.0.1/8001"), node_info(new_pod("TCP/0.0.0.0/8001")),
                 None, CONFLICT, id="second tcp port conflict to 0.0.0.0 hostIP"),
    pytest.param(new_pod("UDP/127.0.0.1/8001"), node_info(new_pod("TCP/0.0.0.0/8001")),
                 None, None, id="second different protocol"),
    pytest.param(new_pod("UDP/127.0.0.1/8001"),
                 node_info(new_pod("TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001")),
                 None, CONFLICT, id="UDP hostPort conflict due to 0.0.0.0 hostIP"),
    pytest.param(init_container_pod(sidecar=False), node_info(new_pod("TCP/0.0.0.0/8001")),
                 SKIP, None, id="non-sidecar initContainer using hostPort"),
    pytest.param(init_container_pod(sidecar=True), node_info(new_pod("TCP/0.0.0.0/8001")),
                 None, CONFLICT, id="TCP hostPort conflict from sidecar initContainer"),
]  # fmt: skip


@pytest.mark.parametrize(("pod", "ni", "want_pre_filter", "want_filter"), CASES)
def test_node_ports(
    pod: Pod, ni: NodeInfo, want_pre_filter: Code | None, want_filter: Status | None
) -> None:
    """TestNodePorts: PreFilter, then (unless Skip) Filter."""
    p = NodePorts({}, Handle())
    state = CycleState()
    got_pre = p.schedsim_pre_filter(state, pod, [ni])
    if want_pre_filter is None:
        assert got_pre is None
    else:
        assert got_pre == Status(want_pre_filter, (), "NodePorts")
        assert PRE_FILTER_STATE_KEY not in state
        return
    assert p.schedsim_filter(state, pod, ni) == want_filter
    # the bound form the scheduler's cached walk calls (not upstream): the same status
    assert p.filter_node_fn(state, pod)(ni) == want_filter


def test_pre_filter_disabled() -> None:
    """TestPreFilterDisabled: Filter without PreFilter state is an Error (the bound form too)."""
    p = NodePorts({}, Handle())
    got = p.schedsim_filter(CycleState(), new_pod("TCP/0.0.0.0/80"), node_info())
    assert got == Status(
        Code.Error, ('reading "PreFilterNodePorts" from cycleState: not found',), "NodePorts"
    )
    assert p.filter_node_fn(CycleState(), new_pod("TCP/0.0.0.0/80"))(node_info()) == got


def test_pre_filter_state_contents() -> None:
    """Not upstream: PreFilter stores (ip, protocol, port) of sidecars first, then containers,
    ignoring ports without hostPort and ordinary init containers."""
    pod = Pod.from_manifest(
        {
            "metadata": {"name": "x"},
            "spec": {
                "initContainers": [
                    {"name": "i", "ports": [{"containerPort": 1, "hostPort": 1}]},
                    {
                        "name": "s",
                        "restartPolicy": "Always",
                        "ports": [{"containerPort": 2, "hostPort": 2, "protocol": "UDP"}],
                    },
                ],
                "containers": [
                    {
                        "name": "c",
                        "ports": [
                            {"containerPort": 3},
                            {"containerPort": 4, "hostPort": 4, "hostIP": "10.0.0.1"},
                        ],
                    }
                ],
            },
        }
    )
    state = CycleState()
    assert NodePorts({}, Handle()).schedsim_pre_filter(state, pod, []) is None
    assert state[PRE_FILTER_STATE_KEY] == (("", "UDP", 2), ("10.0.0.1", "TCP", 4))


def test_rejects_args() -> None:
    """The plugin takes no args."""
    with pytest.raises(ValueError, match="takes no args"):
        NodePorts({"foo": 1}, Handle())
