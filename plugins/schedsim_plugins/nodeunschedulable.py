"""NodeUnschedulable: mirrors kube-scheduler's ``NodeUnschedulable`` Filter plugin
(pkg/scheduler/framework/plugins/nodeunschedulable)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from schedsim.api.core import Pod, Taint
from schedsim.framework import Code, CycleState, Handle, NodeInfo, Status
from schedsim.framework.args import no_args

__all__ = ["ERR_REASON_UNKNOWN_CONDITION", "ERR_REASON_UNSCHEDULABLE", "NodeUnschedulable"]

NAME = "NodeUnschedulable"

ERR_REASON_UNKNOWN_CONDITION = "node(s) had unknown conditions"
"""Reason for a NodeInfo without a Node (``ErrReasonUnknownCondition`` upstream)."""
ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
"""Reason for a cordoned node (``ErrReasonUnschedulable`` upstream)."""

_UNKNOWN_CONDITION = Status(
    Code.UnschedulableAndUnresolvable, (ERR_REASON_UNKNOWN_CONDITION,), NAME
)
_UNSCHEDULABLE = Status(Code.UnschedulableAndUnresolvable, (ERR_REASON_UNSCHEDULABLE,), NAME)

_UNSCHEDULABLE_TAINT = Taint(key="node.kubernetes.io/unschedulable", effect="NoSchedule")
"""The taint a pod must tolerate to land on a cordoned node (v1.TaintNodeUnschedulable)."""


class NodeUnschedulable:
    """Mirrors kube-scheduler's ``NodeUnschedulable`` plugin.

    Filter rejects nodes with ``spec.unschedulable: true`` (cordoned) unless the pod tolerates
    the taint ``{key: node.kubernetes.io/unschedulable, effect: NoSchedule}``; the rejection is
    UnschedulableAndUnresolvable ``node(s) were unschedulable``. Takes no args.
    """

    name: ClassVar[str] = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        no_args(NAME, args)

    def schedsim_filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Filter of upstream NodeUnschedulable: cordoned nodes fit only tolerating pods."""
        node = node_info.node
        if node is None:
            return _UNKNOWN_CONDITION
        if not node.unschedulable:
            return None
        for toleration in pod.tolerations:
            if toleration.tolerates(_UNSCHEDULABLE_TAINT):
                return None
        return _UNSCHEDULABLE
