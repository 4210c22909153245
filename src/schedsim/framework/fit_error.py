"""Why a pod fits nowhere: the Diagnosis and kube-scheduler's FitError message."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

import attrs

from schedsim.framework.status import Status

__all__ = ["Diagnosis", "FitError"]


@attrs.frozen
class Diagnosis:
    """Per-node outcome of one failed scheduling attempt (``framework.Diagnosis``).

    Attributes:
        node_to_status: node name -> the status of the first plugin that rejected it.
        pre_filter_status: set when PreFilter rejected the pod outright (then no node ran).
        absent_nodes_status: status of the nodes a PreFilterResult left out.
    """

    node_to_status: Mapping[str, Status] = attrs.field(factory=dict)
    pre_filter_status: Status | None = None
    absent_nodes_status: Status | None = None

    @property
    def unschedulable_plugins(self) -> frozenset[str]:
        """Plugins that rejected at least one node."""
        plugins = {s.plugin for s in self.node_to_status.values() if s.plugin}
        if self.pre_filter_status is not None and self.pre_filter_status.plugin:
            plugins.add(self.pre_filter_status.plugin)
        return frozenset(plugins)


@attrs.frozen
class FitError:
    """A pod that fits on no node (``framework.FitError``).

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
        absent = self.num_all_nodes - len(self.diagnosis.node_to_status)
        if absent > 0 and self.diagnosis.absent_nodes_status is not None:
            for r in self.diagnosis.absent_nodes_status.reasons:
                counts[r] += absent
        return dict(counts)

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
        ``0/4 nodes are available: 1 node(s) had untolerated taint {k: v}, 3 Insufficient cpu.``

        Mirrors ``FitError.Error()``: with a PreFilter rejection, its message; otherwise per
        reason ``"<count> <reason>"``, sorted as strings, joined with ``", "``. (schedsim does
        not run preemption, so the ``preemption: ...`` PostFilter part is never added.)
        """
        msg = f"0/{self.num_all_nodes} nodes are available:"
        pre = self.diagnosis.pre_filter_status
        if pre is not None:
            return f"{msg} {pre.message}."
        parts = sorted(f"{n} {r}" for r, n in self.reason_histogram().items())
        if parts:
            msg += f" {', '.join(parts)}."
        return msg
