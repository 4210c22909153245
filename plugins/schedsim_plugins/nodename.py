"""NodeName: mirrors kube-scheduler's ``NodeName`` Filter plugin
(pkg/scheduler/framework/plugins/nodename)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from schedsim.api.core import Pod
from schedsim.framework import Code, CycleState, Handle, NodeInfo, Status
from schedsim.framework.args import no_args

__all__ = ["ERR_REASON", "NodeName"]

NAME = "NodeName"

ERR_REASON = "node(s) didn't match the requested node name"
"""Reason for a node other than ``spec.nodeName`` (``ErrReason`` upstream)."""

_MISMATCH = Status(Code.UnschedulableAndUnresolvable, (ERR_REASON,), NAME)
_NODE_NOT_FOUND = Status(Code.Error, ("node not found",), NAME)


class NodeName:
    """Mirrors kube-scheduler's ``NodeName`` plugin.

    Filter: a pod with ``spec.nodeName`` set fits only the node of that name (else
    UnschedulableAndUnresolvable ``node(s) didn't match the requested node name``); a pod
    without it fits every node. Takes no args.
    """

    name: ClassVar[str] = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        no_args(NAME, args)

    def schedsim_filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Filter of upstream NodeName (``Fits``): empty nodeName or an equal node name."""
        wanted = pod.node_name
        if not wanted:
            return None
        node = node_info.node
        if node is None:
            return _NODE_NOT_FOUND
        return None if node.name == wanted else _MISMATCH
