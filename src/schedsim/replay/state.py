"""`ReplayState`: what a `schedsim.replay.loop.Replay` looks like at one instant (its time,
queue, bound pods, nodes, the autoscaler's upcoming and unneeded nodes)."""

from __future__ import annotations

from collections.abc import Mapping

import attrs


@attrs.frozen
class ReplayState:
    """The replay at one instant (what `Replay.state` returns).

    Attributes:
        time: seconds since the trace's start.
        pending: keys of pods in the scheduling queue, in queue order.
        running: pod key -> node, for pods bound now.
        nodes: ready node -> its node group ("" for none).
        upcoming: node being provisioned -> its node group.
        unneeded: node -> since when the autoscaler finds it unneeded.
        done: the replay has ended.
    """

    time: float
    pending: tuple[str, ...]
    running: Mapping[str, str]
    nodes: Mapping[str, str]
    upcoming: Mapping[str, str]
    unneeded: Mapping[str, float]
    done: bool
