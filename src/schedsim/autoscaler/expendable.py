"""Expendable pods: what Cluster Autoscaler's ``--expendable-pods-priority-cutoff`` leaves out.

Mirrors cluster-autoscaler's ``core/utils.FilterOutExpendablePods`` and
``FilterOutExpendableAndSplit`` (podlistprocessor ``filter_out_expendable.go``) as
``static_autoscaler.go`` uses them: pods with a priority below the cutoff (default -10)

* are left out of the cluster snapshot when they run (``SetClusterState(nodes,
  nonExpendableScheduledPods, ...)``): their node looks free to scale-up's
  filter-out-schedulable and to scale-down, which neither counts them in utilization nor has
  to move them (they never block a node's removal);
* do not trigger a scale-up when pending ("will be scheduled when enough resources is free").

A pod without ``spec.priority`` is never expendable upstream; schedsim's pods always carry a
priority after admission (0 without a class), which is above the default cutoff.
"""

from __future__ import annotations

from collections.abc import Iterable

from schedsim.api.core import Pod

__all__ = ["DEFAULT_EXPENDABLE_PODS_PRIORITY_CUTOFF", "expendable_warnings", "split_expendable"]

DEFAULT_EXPENDABLE_PODS_PRIORITY_CUTOFF = -10
"""Cluster Autoscaler's default ``--expendable-pods-priority-cutoff``."""


def split_expendable(pods: Iterable[Pod], cutoff: int) -> tuple[list[Pod], list[Pod]]:
    """``(kept, expendable)``: pods with priority >= ``cutoff``, and the others, each in
    input order.

    Time: O(pods).
    """
    kept: list[Pod] = []
    expendable: list[Pod] = []
    for p in pods:
        (expendable if p.priority < cutoff else kept).append(p)
    return kept, expendable


def expendable_warnings(expendable: Iterable[Pod], cutoff: int) -> list[str]:
    """One line each for the running and the pending expendable pods (none when there are
    none), so that nothing is left out silently."""
    live = [p for p in expendable if not p.is_terminal]
    running = sum(1 for p in live if p.node_name or p.nominated_node_name)
    pending = len(live) - running
    out = []
    if running:
        out.append(
            f"{running} running pod(s) with priority below the expendable-pods priority cutoff "
            f"({cutoff}) are not counted on their nodes (Cluster Autoscaler leaves them out)"
        )
    if pending:
        out.append(
            f"{pending} pending pod(s) with priority below the expendable-pods priority cutoff "
            f"({cutoff}) are ignored: Cluster Autoscaler does not scale up for them"
        )
    return out
