"""ZonePreference: an example out-of-tree Score plugin for schedsim.

A pod lists the zones it prefers, best first, in an annotation
(``zone-preference.example.com/zones: "zone-b,zone-a"``); nodes in the first zone score
highest, nodes in no listed zone score 0. Pods without the annotation are not scored by this
plugin at all (PreScore returns Skip).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from schedsim.api.core import Pod
from schedsim.framework import (
    MAX_NODE_SCORE,
    Code,
    CycleState,
    Handle,
    NodeInfo,
    StateKey,
    Status,
)

__all__ = ["ZONE_LABEL", "ZonePreference"]

ZONE_LABEL = "topology.kubernetes.io/zone"
_SKIP = Status(Code.Skip)
_RANKS: StateKey[dict[str, int]] = StateKey("PreScoreZonePreference")


class ZonePreference:
    """Scores nodes by how early their zone comes in the pod's list of preferred zones.

    Args (``pluginConfig``): ``annotation``, the pod annotation to read (default
    ``zone-preference.example.com/zones``).
    """

    name: ClassVar[str] = "ZonePreference"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        annotation = args.get("annotation", "zone-preference.example.com/zones")
        if not isinstance(annotation, str) or not annotation:
            raise ValueError("annotation: must be a non-empty string")
        self.annotation = annotation

    def schedsim_pre_score(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None:
        """Once per pod: zone -> raw score (the first listed zone gets the most)."""
        listed = [z.strip() for z in pod.annotations.get(self.annotation, "").split(",")]
        zones = [z for z in listed if z]
        if not zones:
            return _SKIP  # nothing to prefer: Score and NormalizeScore are not run
        state[_RANKS] = {zone: len(zones) - i for i, zone in enumerate(zones)}
        return None

    def schedsim_score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int | Status:
        """Once per feasible node: the raw score of the node's zone (0 if not listed)."""
        node = node_info.node
        zone = node.labels.get(ZONE_LABEL, "") if node is not None else ""
        return state[_RANKS].get(zone, 0)

    def schedsim_normalize_score(
        self, state: CycleState, pod: Pod, scores: dict[str, int]
    ) -> Status | None:
        """Scale in place so the best node scores MAX_NODE_SCORE (100)."""
        best = max(scores.values(), default=0)
        if best:
            for node_name, raw in scores.items():
                scores[node_name] = raw * MAX_NODE_SCORE // best
        return None
