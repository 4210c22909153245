"""Why a pod fits nowhere: the Diagnosis and kube-scheduler's FitError message."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

import attrs

from schedsim.framework.status import Code, Status

__all__ = ["Diagnosis", "FitError"]


@attrs.frozen
class Diagnosis:
    """Per-node outcome of one failed scheduling attempt (``framework.Diagnosis``).

    Attributes:
        node_to_status: node name -> the status of the first plugin that rejected it.
        pre_filter_status: set when PreFilter rejected the pod outright (then no node ran).
        absent_nodes_status: status of the nodes a PreFilterResult left out.
        absent_nodes: how many nodes that is.
        post_filter_msg: the PostFilter plugins' message (``PostFilterMsg``, e.g.
            DefaultPreemption's ``preemption: ...``), appended to the FitError message.
    """

    node_to_status: Mapping[str, Status] = attrs.field(factory=dict)
    pre_filter_status: Status | None = None
    absent_nodes_status: Status | None = None
    absent_nodes: int = 0
    post_filter_msg: str = ""

    @property
    def unschedulable_plugins(self) -> frozenset[str]:
        """Plugins that rejected at least one node."""
        plugins = {s.plugin for s in self.node_to_status.values() if s.plugin}
        if self.pre_filter_status is not None and self.pre_filter_status.plugin:
            plugins.add(self.pre_filter_status.plugin)
        return frozenset(plugins)


@attrs.frozen
class FitError:
    """A pod that fits on no node (``framework.FitError``). ``str()`` gives `message`, as
    ``FitError.Error()`` does upstream.

    Attributes:
        num_all_nodes: number of nodes in the snapshot.
        diagnosis: why each node was rejected.
    """

    num_all_nodes: int
    diagnosis: Diagnosis

    def reason_histogram(self) -> dict[str, int]:
        """Reason string -> number of nodes it was given for."""
        if self.diagnosis.pre_filter_status is not None:
            return {}
        counts: Counter[str] = Counter()
        for st in self.diagnosis.node_to_status.values():
            counts.update(st.reasons)
        absent = self.diagnosis.absent_nodes
        if absent > 0 and self.diagnosis.absent_nodes_status is not None:
            for r in self.diagnosis.absent_nodes_status.reasons:
                counts[r] += absent
        return dict(counts)

    @property
    def error_status(self) -> Status | None:
        """An ``Error`` status among the diagnosis (a plugin failed), or None."""
        pre = self.diagnosis.pre_filter_status
        if pre is not None and pre.code is Code.Error:
            return pre
        return next(
            (s for s in self.diagnosis.node_to_status.values() if s.code is Code.Error), None
        )

    @property
    def reasons(self) -> tuple[str, ...]:
        """The distinct reason strings, sorted (the PreFilter's when it rejected)."""
        pre = self.diagnosis.pre_filter_status
        if pre is not None:
            return pre.reasons
        return tuple(sorted(self.reason_histogram()))

    @property
    def message(self) -> str:
        """kube-scheduler's message, e.g.
        ``0/4 nodes are available: 1 node(s) had untolerated taint(s), 3 Insufficient cpu.``

        Mirrors ``FitError.Error()`` (and ``ErrNoNodesAvailable`` for an empty cluster): with a
        PreFilter rejection, its message; otherwise per
        reason ``"<count> <reason>"``, sorted as strings, joined with ``", "``; then the
        PostFilter message, e.g. ``... 3 Insufficient cpu. preemption: 0/3 nodes are
        available: 3 No preemption victims found for incoming pod.``
        """
        if self.num_all_nodes == 0:
            return "no nodes available to schedule pods"  # ErrNoNodesAvailable
        msg = f"0/{self.num_all_nodes} nodes are available:"
        pre = self.diagnosis.pre_filter_status
        if pre is not None:
            msg += f" {pre.message}."
        else:
            parts = sorted(f"{n} {r}" for r, n in self.reason_histogram().items())
            if parts:
                msg += f" {', '.join(parts)}."
        if self.diagnosis.post_filter_msg:
            msg += f" {self.diagnosis.post_filter_msg}"  # its own final period
        return msg

    def __str__(self) -> str:
        return self.message
