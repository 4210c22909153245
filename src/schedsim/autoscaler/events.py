"""The Cluster Autoscaler's own words for scale-up and scale-down outcomes: the reasons and
the events CA 1.34 records, next to schedsim's detail.

Scale-up (``processors/status/eventing_scale_up_processor.go``, CA 1.34.0):

- a pending pod no node group helps gets a ``NotTriggerScaleUp`` event, ``pod didn't
  trigger scale-up: <reasons>`` (line 43), where the reasons are aggregated over the node
  groups (``ReasonsMessage``, lines 63-94): each reason of each rejected group (the failing
  predicate's reasons, e.g. ``Insufficient cpu``) and of each skipped group (e.g.
  ``max node group size reached``, ``core/scaleup/orchestrator/skippedreasons.go`` line 43)
  counted, written ``<count> <reason>`` and joined with ``", "``. CA emits these only on a
  loop without a scale-up (line 40: ``status.Result != ScaleUpSuccessful``).
- each pod the chosen group takes gets ``TriggeredScaleUp``, ``pod triggered scale-up: %v``
  of the scale-up infos (line 52-53), each ``{<group> <current>-><new> (max: <max>)}``
  (``processors/nodegroupset/nodegroup_set_processor.go`` line 43).

Scale-down (``core/scaledown/actuation``, CA 1.34.0): a removed node gets ``ScaleDown``
``marked the node as toBeDeleted/unschedulable`` (``actuator.go`` line 395) and, once
deleted, ``nodes removed by cluster autoscaler`` (``delete_in_batch.go`` line 215); each pod
evicted from it gets ``ScaleDown`` ``deleting pod for node scale down`` (``drain.go`` line
228). Unremovable nodes carry CA's ``simulator.UnremovableReason`` names
(`schedsim.autoscaler.scaledown.UnremovableReason`).

Differences from CA, deliberate: ``ReasonsMessage`` iterates Go maps, so CA's order of the
aggregated reasons varies from loop to loop; schedsim writes them in the order they first
appear, node groups in file order (rejected groups' reasons, then skipped groups'), so the
same input gives the same text.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

import attrs

__all__ = [
    "BACKOFF_REASON",
    "MAX_LIMIT_REACHED_REASON",
    "NODE_MARKED_MESSAGE",
    "NODE_REMOVED_MESSAGE",
    "NOT_READY_REASON",
    "NOT_TRIGGER_SCALE_UP",
    "POD_EVICTED_MESSAGE",
    "SCALE_DOWN",
    "TRIGGERED_SCALE_UP",
    "Event",
    "not_trigger_scale_up_message",
    "reasons_message",
    "scale_up_info",
    "triggered_scale_up_message",
]

MAX_LIMIT_REACHED_REASON: Final = "max node group size reached"
"""A group at its max size is skipped (``MaxLimitReachedReason``, skippedreasons.go:43)."""

BACKOFF_REASON: Final = "in backoff after failed scale-up"
"""``BackoffReason`` (skippedreasons.go:41); schedsim has no failed scale-ups to back off."""

NOT_READY_REASON: Final = "not ready for scale-up"
"""``NotReadyReason`` (skippedreasons.go:45)."""

NOT_TRIGGER_SCALE_UP: Final = "NotTriggerScaleUp"
TRIGGERED_SCALE_UP: Final = "TriggeredScaleUp"
SCALE_DOWN: Final = "ScaleDown"

NODE_MARKED_MESSAGE: Final = "marked the node as toBeDeleted/unschedulable"
"""actuator.go:395, on the node CA starts to remove."""

NODE_REMOVED_MESSAGE: Final = "nodes removed by cluster autoscaler"
"""delete_in_batch.go:215, on the node once deleted."""

POD_EVICTED_MESSAGE: Final = "deleting pod for node scale down"
"""drain.go:228, on each pod evicted from a removed node."""


@attrs.frozen
class Event:
    """A Kubernetes Event CA would record.

    Attributes:
        kind: the involved object's kind (``Pod``, ``Node``).
        name: ``namespace/name`` of a pod, the name of a node.
        type: ``Normal`` or ``Warning``.
        reason: the event's reason (``NotTriggerScaleUp``, ``TriggeredScaleUp``,
            ``ScaleDown``).
        message: its message, in CA's words.
    """

    kind: str
    name: str
    type: str
    reason: str
    message: str


def reasons_message(rejected: Iterable[Sequence[str]], skipped: Iterable[Sequence[str]]) -> str:
    """CA's ``ReasonsMessage``: every reason of every rejected and skipped node group,
    counted, ``<count> <reason>`` joined with ``", "`` (first-appearance order, see the
    module docstring).

    Args:
        rejected: per rejected node group, its reasons (the failing predicate's reasons).
        skipped: per skipped node group, its reasons (e.g. `MAX_LIMIT_REACHED_REASON`).
    """
    counts: dict[str, int] = {}
    for reasons in (*rejected, *skipped):
        for reason in reasons:
            counts[reason] = counts.get(reason, 0) + 1
    return ", ".join(f"{n} {reason}" for reason, n in counts.items())


def not_trigger_scale_up_message(
    rejected: Iterable[Sequence[str]], skipped: Iterable[Sequence[str]]
) -> str:
    """The ``NotTriggerScaleUp`` event message (eventing_scale_up_processor.go:43):
    ``pod didn't trigger scale-up: `` and `reasons_message`."""
    return f"pod didn't trigger scale-up: {reasons_message(rejected, skipped)}"


def scale_up_info(group: str, current: int, new: int, max_size: int) -> str:
    """One ``ScaleUpInfo`` as CA prints it: ``{<group> <current>-><new> (max: <max>)}``."""
    return f"{{{group} {current}->{new} (max: {max_size})}}"


def triggered_scale_up_message(infos: Sequence[str]) -> str:
    """The ``TriggeredScaleUp`` event message (eventing_scale_up_processor.go:53): Go's
    ``%v`` of the scale-up infos, ``[{a 1->3 (max: 10)}]``."""
    return f"pod triggered scale-up: [{' '.join(infos)}]"
