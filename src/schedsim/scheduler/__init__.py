"""kube-scheduler's scheduling algorithm over the snapshot: which node a pod lands on.

`Scheduler.schedule_one` runs ``schedulePod`` (PreFilter, Filter over
``numFeasibleNodesToFind`` nodes from a rotating start, PreScore/Score/NormalizeScore,
deterministic host selection) and places the pod through the snapshot's Reserve path.
First fit, the Cluster Autoscaler's placement, stays in the snapshot
(`PredicateSnapshot.schedule_pod_on_any_node_matching`); both share one filter walk.
"""

from schedsim.scheduler.cache import (
    PURE_FILTER_PLUGINS,
    PURE_SCORE_PLUGINS,
    FailingClasses,
    ResultCache,
)
from schedsim.scheduler.explain import PASSED, SKIP, SUCCESS_MESSAGE, Explanation
from schedsim.scheduler.feasible import (
    MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND,
    MIN_FEASIBLE_NODES_TO_FIND,
    num_feasible_nodes_to_find,
)
from schedsim.scheduler.node_tree import node_tree_order, zone_key
from schedsim.scheduler.prioritize import prioritize_nodes
from schedsim.scheduler.schedule_one import Placement, Scheduler, ScheduleResult
from schedsim.scheduler.select import select_host

__all__ = [
    "MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND",
    "MIN_FEASIBLE_NODES_TO_FIND",
    "PASSED",
    "PURE_FILTER_PLUGINS",
    "PURE_SCORE_PLUGINS",
    "SKIP",
    "SUCCESS_MESSAGE",
    "Explanation",
    "FailingClasses",
    "Placement",
    "ResultCache",
    "ScheduleResult",
    "Scheduler",
    "node_tree_order",
    "num_feasible_nodes_to_find",
    "prioritize_nodes",
    "select_host",
    "zone_key",
]
