"""The order kube-scheduler lists nodes in: its cache's node tree, zone by zone.

kube-scheduler's cache keeps nodes in a ``nodeTree`` (``pkg/scheduler/backend/cache/
node_tree.go``): one list per zone, the zones in the order their first node arrived, the
nodes of a zone in the order they arrived. The snapshot's node list, which
``findNodesThatPassFilters`` walks from ``nextStartNodeIndex``, is ``nodeTree.list()``: the
first node of every zone, then the second of every zone, and so on. With more nodes than
``numFeasibleNodesToFind`` this decides which nodes a pod is evaluated on (a 50/50 sample of
two equal zones, not the first zone's nodes), and schedsim's deterministic tie rule (the
first tied node in evaluation order) follows it.

schedsim adds nodes to the tree in input order (a real scheduler adds them in its informer's
order).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import zip_longest
from typing import TypeVar

from schedsim.api.core import Node

__all__ = ["node_tree_order", "zone_key"]

_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
_ZONE = "topology.kubernetes.io/zone"
_BETA_REGION = "failure-domain.beta.kubernetes.io/region"
_REGION = "topology.kubernetes.io/region"

_N = TypeVar("_N", bound=Node)


def zone_key(node: Node) -> str:
    """The node's zone key, as ``utilnode.GetZoneKey``: ``REGION + ":\\x00:" + ZONE`` from the
    beta failure-domain labels when present (even empty), else the ``topology.kubernetes.io``
    ones; ``""`` when both region and zone are empty or absent."""
    labels = node.labels
    zone = labels[_BETA_ZONE] if _BETA_ZONE in labels else labels.get(_ZONE, "")
    region = labels[_BETA_REGION] if _BETA_REGION in labels else labels.get(_REGION, "")
    if not region and not zone:
        return ""
    return region + ":\x00:" + zone


def node_tree_order(nodes: Sequence[_N]) -> list[_N]:
    """``nodes`` in kube-scheduler's node-tree order (mirrors ``nodeTree.addNode`` for each node
    in turn, then ``nodeTree.list``): round robin over the zones in order of first appearance,
    each zone's nodes in their order in ``nodes``.

    Time: O(nodes). A list with one zone (or none labelled) comes back in its own order.
    """
    zones: dict[str, list[_N]] = {}
    for node in nodes:
        zones.setdefault(zone_key(node), []).append(node)
    if len(zones) <= 1:
        return list(nodes)
    return [n for row in zip_longest(*zones.values()) for n in row if n is not None]
