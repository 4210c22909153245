"""TaintToleration: mirrors kube-scheduler's ``TaintToleration`` plugin
(pkg/scheduler/framework/plugins/tainttoleration): Filter, PreScore, Score, NormalizeScore."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from schedsim.api.core import Pod, Taint, Toleration
from schedsim.framework import (
    MAX_NODE_SCORE,
    Code,
    CycleState,
    Handle,
    NodeInfo,
    StateKey,
    Status,
)
from schedsim.framework.args import no_args
from schedsim_plugins.normalize import default_normalize_score

__all__ = [
    "PRE_SCORE_STATE_KEY",
    "TaintToleration",
    "untolerated_taint_reason",
]

NAME = "TaintToleration"

_DO_NOT_SCHEDULE_EFFECTS = frozenset({"NoSchedule", "NoExecute"})
"""helper.DoNotScheduleTaintsFilterFunc: the effects Filter looks at."""

_NODE_NOT_FOUND = Status(Code.Error, ("node not found",), NAME)

PRE_SCORE_STATE_KEY: StateKey[tuple[Toleration, ...]] = StateKey("PreScore" + NAME)
"""The pod's tolerations that can tolerate a PreferNoSchedule taint (``preScoreStateKey``)."""

_NO_PRE_SCORE_STATE = Status(
    Code.Error, (f'reading "{PRE_SCORE_STATE_KEY.name}" from cycleState: not found',), NAME
)

UNTOLERATED_TAINT_REASON = "node(s) had untolerated taint(s)"
"""The Filter reason of an untolerated NoSchedule/NoExecute taint. kubernetes#134740 ("remove
taint values from unschedulable messages in pod status", cherry-picked to release-1.34 as
#135023, merged November 2025) replaced ``node(s) had untolerated taint {key: value}`` with
this generic text, so a taint's key and value no longer appear in pod status or events
(upstream logs the taint instead). Earlier 1.34 patch releases (1.34.0, 1.34.1) print the old
form."""

_UNTOLERATED = Status(Code.UnschedulableAndUnresolvable, (UNTOLERATED_TAINT_REASON,), NAME)


def untolerated_taint_reason(taint: Taint) -> str:
    """The Filter reason for ``taint``: the same for every taint since kubernetes#134740
    (:data:`UNTOLERATED_TAINT_REASON`); the taint itself is not part of it."""
    return UNTOLERATED_TAINT_REASON


class TaintToleration:
    """Mirrors kube-scheduler's ``TaintToleration`` plugin.

    Filter (``v1helper.FindMatchingUntoleratedTaint`` with ``DoNotScheduleTaintsFilterFunc``):
    the first taint of the node, in ``spec.taints`` order, whose effect is NoSchedule or
    NoExecute and that no toleration of the pod tolerates makes the node
    UnschedulableAndUnresolvable with ``node(s) had untolerated taint(s)`` (kubernetes#134740,
    in release-1.34 as #135023; before it, ``... taint {key: value}``).
    PreferNoSchedule taints are ignored by Filter.

    PreScore keeps the pod's tolerations whose effect is PreferNoSchedule or empty (all
    effects); Score counts the node's PreferNoSchedule taints that none of them tolerates;
    NormalizeScore (``DefaultNormalizeScore`` reversed) gives 100 to the nodes with the
    fewest such taints relative to the most: ``100 - 100 * count / max``. Takes no args.
    """

    name: ClassVar[str] = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        no_args(NAME, args)

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
                return _UNTOLERATED
        return None

    def schedsim_pre_score(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None:
        """PreScore of upstream TaintToleration (``getAllTolerationPreferNoSchedule``)."""
        if not nodes:
            return None
        state[PRE_SCORE_STATE_KEY] = tuple(
            t for t in pod.tolerations if t.effect in ("", "PreferNoSchedule")
        )
        return None

    def schedsim_score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int | Status:
        """Score of upstream TaintToleration: the number of intolerable PreferNoSchedule
        taints (``countIntolerableTaintsPreferNoSchedule``)."""
        tolerations = state.get(PRE_SCORE_STATE_KEY)
        if tolerations is None:
            return _NO_PRE_SCORE_STATE
        node = node_info.node
        if node is None:
            return _NODE_NOT_FOUND
        count = 0
        for taint in node.taints:
            if taint.effect != "PreferNoSchedule":
                continue
            if not any(t.tolerates(taint) for t in tolerations):
                count += 1
        return count

    def schedsim_normalize_score(
        self, state: CycleState, pod: Pod, scores: dict[str, int]
    ) -> Status | None:
        """NormalizeScore of upstream TaintToleration: ``DefaultNormalizeScore(100, reverse)``."""
        default_normalize_score(MAX_NODE_SCORE, True, scores)
        return None
