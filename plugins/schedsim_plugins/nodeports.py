"""NodePorts: mirrors kube-scheduler's ``NodePorts`` PreFilter/Filter plugin
(pkg/scheduler/framework/plugins/nodeports)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from schedsim.api.core import Pod
from schedsim.api.core.containers import HostPort
from schedsim.api.core.containers import host_ports as _host_ports
from schedsim.framework import Code, CycleState, Handle, NodeInfo, StateKey, Status
from schedsim.framework.args import no_args

__all__ = ["ERR_REASON", "PRE_FILTER_STATE_KEY", "HostPort", "NodePorts", "host_ports"]

NAME = "NodePorts"

ERR_REASON = "node(s) didn't have free ports for the requested pod ports"
"""Reason for a host-port conflict (``ErrReason`` upstream)."""

PRE_FILTER_STATE_KEY: StateKey[tuple[HostPort, ...]] = StateKey("PreFilter" + NAME)
"""Where PreFilter leaves the pod's host ports for Filter (``preFilterStateKey`` upstream)."""

_SKIP = Status(Code.Skip, (), NAME)
_CONFLICT = Status(Code.Unschedulable, (ERR_REASON,), NAME)
_NO_STATE = Status(
    Code.Error, (f'reading "{PRE_FILTER_STATE_KEY.name}" from cycleState: not found',), NAME
)


def host_ports(pod: Pod) -> tuple[HostPort, ...]:
    """The ports of ``pod`` that occupy node ports (``util.GetHostPorts`` upstream; see
    `schedsim.api.core.containers.host_ports`)."""
    return _host_ports(pod.init_containers, pod.containers)


class NodePorts:
    """Mirrors kube-scheduler's ``NodePorts`` plugin.

    PreFilter collects the pod's host ports into the cycle state and returns Skip when there
    are none. Filter rejects a node where any of them conflicts with a port in use
    (``HostPortInfo.CheckConflict``: same protocol and port, on the same IP or with either
    side on ``0.0.0.0``) as Unschedulable ``node(s) didn't have free ports for the requested
    pod ports``; without PreFilter state it returns an Error status, as upstream does.
    Takes no args.
    """

    name: ClassVar[str] = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        no_args(NAME, args)

    def pre_filter_reusable(self, pod: Pod) -> bool:
        """PreFilter reads the pod's host ports only; Filter only reads the ports it writes
        (`schedsim.framework.pre_filter_reuse`)."""
        del pod
        return True

    def schedsim_pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None:
        """PreFilter of upstream NodePorts: store the host ports, Skip if there are none."""
        ports = host_ports(pod)
        if not ports:
            return _SKIP
        state[PRE_FILTER_STATE_KEY] = ports
        return None

    def schedsim_filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Filter of upstream NodePorts (``fitsPorts``)."""
        ports = state.get(PRE_FILTER_STATE_KEY)
        if ports is None:
            return _NO_STATE
        used = node_info.used_ports
        for ip, protocol, port in ports:
            if used.check_conflict(ip, protocol, port):
                return _CONFLICT
        return None

    def filter_node_fn(self, state: CycleState, pod: Pod) -> Callable[[NodeInfo], Status | None]:
        """`schedsim_filter` for this attempt as a function of the node alone (the ports read
        from ``state`` once): the same status on every node."""
        ports = state.get(PRE_FILTER_STATE_KEY)
        if ports is None:
            return lambda node_info: _NO_STATE

        def fits_ports(node_info: NodeInfo) -> Status | None:
            check = node_info.used_ports.check_conflict
            for ip, protocol, port in ports:
                if check(ip, protocol, port):
                    return _CONFLICT
            return None

        return fits_ports
