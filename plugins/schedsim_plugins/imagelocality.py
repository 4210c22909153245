"""ImageLocality: favour nodes that already have the pod's container images.

Mirrors kube-scheduler 1.34 ``imagelocality/image_locality.go`` (Score; no NormalizeScore).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from operator import attrgetter
from typing import Any, ClassVar

from schedsim.api.core import Node, Pod
from schedsim.framework import MAX_NODE_SCORE, Code, CycleState, Handle, NodeInfo, StateKey, Status
from schedsim.framework.args import no_args

__all__ = [
    "MAX_CONTAINER_THRESHOLD",
    "MIN_THRESHOLD",
    "PRE_SCORE_STATE_KEY",
    "ImageLocality",
    "calculate_priority",
    "normalized_image_name",
]

NAME = "ImageLocality"

_MB = 1024 * 1024
MIN_THRESHOLD = 23 * _MB
"""Bytes below which image presence does not count (``minThreshold``)."""
MAX_CONTAINER_THRESHOLD = 1000 * _MB
"""Bytes per container above which more image does not count (``maxContainerThreshold``)."""

PRE_SCORE_STATE_KEY: StateKey[_PodImages] = StateKey("PreScore" + NAME)
"""The pod's images with their spread over the cluster (schedsim's PreScore)."""

_NODE = attrgetter("node")

_NO_SNAPSHOT = Status(Code.Error, ("ImageLocality: no snapshot to list the nodes of",), NAME)


def normalized_image_name(name: str) -> str:
    """``normalizedImageName``: add ``:latest`` when the name has no tag (no ``:`` after the
    last ``/``); a digest (``@sha256:...``) counts as a tag."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    """``calculatePriority``: clamp the summed image score to
    [`MIN_THRESHOLD`, `MAX_CONTAINER_THRESHOLD` * containers] and scale it to [0, 100]."""
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    sum_scores = min(max(sum_scores, MIN_THRESHOLD), max_threshold)
    return MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)


class _PodImages:
    """Per pod: the normalized name of each container image (init containers first, as
    written, duplicates kept) and, for each distinct name, the fraction of the cluster's
    nodes that have it."""

    __slots__ = ("names", "num_containers", "spread")

    def __init__(self, pod: Pod, with_images: Sequence[Node], total: int) -> None:
        containers = (*pod.init_containers, *pod.containers)
        self.names = tuple(normalized_image_name(c.image) for c in containers)
        self.num_containers = len(containers)
        counts = dict.fromkeys(self.names, 0)
        for node in with_images:
            images = node.images
            for name in counts:
                if name in images:
                    counts[name] += 1
        self.spread = {n: c / total for n, c in counts.items() if c} if total else {}


class ImageLocality:
    """Mirrors kube-scheduler's ``ImageLocality`` plugin.

    Score: for each container and init container of the pod whose image (normalized with
    `normalized_image_name`) the node lists in ``status.images``, add
    ``int(size * nodes having the image / all nodes)``; the sum goes through
    `calculate_priority`. Images spread over few nodes count less, so pods do not pile onto
    the one node that happens to have an image.

    Upstream reads each image's node count from the scheduler cache (``ImageStateSummary``).
    schedsim counts it per pod instead, in a PreScore of its own (upstream's plugin has none),
    over the nodes that list any image (that list is rebuilt only when the snapshot's Node
    objects differ from the last call's, one C-level comparison), so Score stays
    O(pod's images); Score without PreScore counts it itself. The size is the one the node
    reports for the image (upstream: the one the cache saw first; they agree unless nodes
    report different sizes for one name).

    Takes no args.
    """

    name: ClassVar[str] = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        no_args(NAME, args)
        self._handle = handle
        self._nodes: list[Node | None] = []
        self._with_images: list[Node] = []
        self._node_by_name: dict[str, Node] = {}
        self._journal: object = None  # the snapshot's change-journal token for _nodes
        # (containers, init containers, node count) -> (those, the pod's _PodImages) for the
        # current _with_images: pods of one template share one (it is read-only)
        self._images: dict[tuple[int, int, int], tuple[object, object, _PodImages]] = {}

    def _pod_images(self, pod: Pod) -> _PodImages | None:
        lister = self._handle.shared_lister
        if lister is None:
            return None
        node_infos = lister.node_infos()
        infos = node_infos.list()
        # the snapshot's change journal, when it keeps one, names the nodes written since
        # the last call: the Node objects are checked there only (O(changes)), else all
        changes = getattr(node_infos, "changes_since", None)
        token, written = (None, None) if changes is None else changes(self._journal)
        if written is None or any(
            node_infos.get(name).node is not self._node_by_name.get(name) for name in written
        ):
            nodes = list(map(_NODE, infos))
            if nodes != self._nodes:  # C-level, identity first: the Node objects changed
                self._nodes = nodes
                self._with_images = [n for n in nodes if n is not None and n.images]
                self._node_by_name = {n.name: n for n in nodes if n is not None}
                self._images = {}
        self._journal = token
        # _PodImages reads the pod's containers and init containers only
        containers, init = pod.containers, pod.init_containers
        key = (id(containers), id(init), len(infos))
        hit = self._images.get(key)
        if hit is not None and hit[0] is containers and hit[1] is init:
            return hit[2]
        images = _PodImages(pod, self._with_images, len(infos))
        if len(self._images) >= 1024:
            self._images = {}
        self._images[key] = (containers, init, images)
        return images

    def schedsim_pre_score(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None:
        """Count, once per pod, how many nodes of the cluster have each of its images."""
        images = self._pod_images(pod)
        if images is None:
            return _NO_SNAPSHOT
        state[PRE_SCORE_STATE_KEY] = images
        return None

    def score_reuse_token(self, state: CycleState) -> object:
        """What this plugin's raw score reads beyond the pod and the node (the scheduler's
        raw score reuse, `schedsim.scheduler.ResultCache`): the spread of the pod's images
        over the cluster from this attempt's PreScore, or None (no PreScore state: no
        reuse)."""
        images = state.get(PRE_SCORE_STATE_KEY)
        return None if images is None else images.spread

    def schedsim_score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int | Status:
        """Score of upstream ImageLocality."""
        images = state.get(PRE_SCORE_STATE_KEY)
        if images is None:
            images = self._pod_images(pod)
            if images is None:
                return _NO_SNAPSHOT
        node = node_info.node
        total = 0
        if node is not None and node.images:
            sizes = node.images
            spread = images.spread
            for name in images.names:
                size = sizes.get(name)
                if size is not None:
                    total += int(size * spread.get(name, 0.0))
        return calculate_priority(total, images.num_containers)
