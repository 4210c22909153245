"""PrioritySort: the default QueueSort plugin (``plugins/queuesort/priority_sort.go``).

Pods with a higher ``spec.priority`` (resolved from their PriorityClass at load) go first;
equal priorities go in the order they entered the queue (``QueuedPodInfo.timestamp``); the
queue keeps insertion order for pods still equal.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from schedsim.framework import Handle
from schedsim.framework.args import no_args
from schedsim.framework.queued_pod_info import QueuedPodInfo, priority_sort_key, sorts_by

__all__ = ["NAME", "PrioritySort"]

NAME = "PrioritySort"


class PrioritySort:
    """Orders the scheduling queue by priority, then queue timestamp.

    Args:
        args: none are accepted (upstream has no PrioritySort args).
        handle: unused.

    Raises:
        ValueError: ``args`` has fields besides ``apiVersion``/``kind``.
    """

    name = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        no_args(NAME, args)

    @sorts_by(priority_sort_key)  # the queue compares the keys instead of calling this
    def schedsim_queue_sort_less(self, pod_info1: QueuedPodInfo, pod_info2: QueuedPodInfo) -> bool:
        """``Less``: higher priority first; equal priority, earlier timestamp first."""
        p1 = pod_info1.pod.priority
        p2 = pod_info2.pod.priority
        return p1 > p2 or (p1 == p2 and pod_info1.timestamp < pod_info2.timestamp)
