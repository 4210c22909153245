"""How many feasible nodes a scheduling attempt looks for (kube-scheduler's
``numFeasibleNodesToFind``, pkg/scheduler/schedule_one.go).

kube-scheduler stops filtering once it has found this many feasible nodes and scores only
those: with 5,000 nodes and the adaptive default it scores 10% of them. The walk starts at a
rotating index (``nextStartNodeIndex``) so that every node gets its chance across pods.
"""

from __future__ import annotations

__all__ = [
    "MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND",
    "MIN_FEASIBLE_NODES_TO_FIND",
    "num_feasible_nodes_to_find",
]

MIN_FEASIBLE_NODES_TO_FIND = 100
"""Below this many nodes every node is filtered (``minFeasibleNodesToFind``)."""

MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
"""Floor of the adaptive percentage (``minFeasibleNodesPercentageToFind``)."""


def num_feasible_nodes_to_find(
    num_all_nodes: int,
    profile_percentage: int | None = None,
    global_percentage: int | None = None,
) -> int:
    """Feasible nodes to find before scoring (mirrors kube-scheduler 1.34
    ``Scheduler.numFeasibleNodesToFind``, without extenders).

    Args:
        num_all_nodes: the candidate nodes (after a PreFilterResult narrowed them).
        profile_percentage: the profile's ``percentageOfNodesToScore`` (None: unset); it
            wins over the global one.
        global_percentage: the configuration's ``percentageOfNodesToScore`` (None or 0:
            adaptive).

    Returns:
        ``num_all_nodes`` below 100 nodes; else ``num_all_nodes * p // 100`` with ``p`` the
        percentage (0 means adaptive: ``50 - num_all_nodes // 125``, at least 5), and at least
        100. E.g. 1,213 nodes: p = 41, 497 nodes; 5,000 nodes: p = 10, 500 nodes.
    """
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    percentage = profile_percentage if profile_percentage is not None else global_percentage
    if not percentage:
        percentage = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    num = num_all_nodes * percentage // 100
    return max(num, MIN_FEASIBLE_NODES_TO_FIND)
