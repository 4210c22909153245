"""TaintToleration: mirrors the Filter of kube-scheduler's ``TaintToleration`` plugin
(pkg/scheduler/framework/plugins/tainttoleration)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from schedsim.api.core import Pod, Taint
from schedsim.framework import Code, CycleState, Handle, NodeInfo, Status

__all__ = ["TaintToleration", "untolerated_taint_reason"]

NAME = "TaintToleration"

_DO_NOT_SCHEDULE_EFFECTS = frozenset({"NoSchedule", "NoExecute"})
"""helper.DoNotScheduleTaintsFilterFunc: the effects Filter looks at."""

_NODE_NOT_FOUND = Status(Code.Error, ("node not found",), NAME)

# One Status per distinct (key, value), built on first use, so a rejection allocates nothing
# after the first node carrying that taint. Bounded by the taints present in the cluster.
_UNTOLERATED: dict[tuple[str, str], Status] = {}


def untolerated_taint_reason(taint: Taint) -> str:
    """The Filter reason for ``taint``, as upstream formats it:
    ``node(s) had untolerated taint {key: value}``."""
    return f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}"


def _untolerated(taint: Taint) -> Status:
    k = (taint.key, taint.value)
    status = _UNTOLERATED.get(k)
    if status is None:
        status = Status(Code.UnschedulableAndUnresolvable, (untolerated_taint_reason(taint),), NAME)
        _UNTOLERATED[k] = status
    return status


class TaintToleration:
    """Mirrors kube-scheduler's ``TaintToleration`` plugin (Filter only).

    Filter (``v1helper.FindMatchingUntoleratedTaint`` with ``DoNotScheduleTaintsFilterFunc``):
    the first taint of the node, in ``spec.taints`` order, whose effect is NoSchedule or
    NoExecute and that no toleration of the pod tolerates makes the node
    UnschedulableAndUnresolvable with ``node(s) had untolerated taint {key: value}``.
    PreferNoSchedule taints are ignored by Filter. Takes no args.
    """

    name: ClassVar[str] = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        unknown = sorted(k for k in args if k not in ("apiVersion", "kind"))
        if unknown:
            raise ValueError(f"{NAME} takes no args, got {', '.join(unknown)}")

    def schedsim_filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Filter of upstream TaintToleration: reject on the first untolerated hard taint."""
        node = node_info.node
        if node is None:
            return _NODE_NOT_FOUND
        taints = node.taints
        if not taints:
            return None
        tolerations = pod.tolerations
        for taint in taints:
            if taint.effect not in _DO_NOT_SCHEDULE_EFFECTS:
                continue
            for toleration in tolerations:
                if toleration.tolerates(taint):
                    break
            else:
                return _untolerated(taint)
        return None
