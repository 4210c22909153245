"""The binpacking estimator: how many copies of a node group's template pending pods need.

Mirrors Cluster Autoscaler's ``estimator/binpacking_estimator.go``
(``BinpackingNodeEstimator.Estimate``): the pods, grouped by equivalence and sorted by
their share of a template node (CA's ``decreasingPodOrderer``), are tried first on the
copies already added (the last added first), then on new sanitized copies
``<template>-e-<i>`` added one at a time in a fork, within the group's max size and
``--max-nodes-per-scaleup``. A pod with a ``kubernetes.io/hostname`` spread constraint that the
last copy rejects for the spread goes to any other node that takes it (the cluster's own nodes
included) before a copy is added (CA 1.34 ``tryToScheduleOnNewNodes``); the nodes that received
pods are the estimate. The caller forks and reverts around it (`schedsim.autoscaler.scaleup`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import attrs

from schedsim.api.core import Node, Pod
from schedsim.api.core.resources import pod_requests
from schedsim.autoscaler.plugin_errors import PluginStatusError, PodError
from schedsim.autoscaler.sanitize import HOSTNAME_LABEL, sanitized_node_info
from schedsim.framework.resource import Resource
from schedsim.snapshot.errors import NodeNotFoundError, SchedulingError, SchedulingErrorType
from schedsim.snapshot.infos import NodeInfo
from schedsim.snapshot.predicate import PredicateSnapshot

__all__ = ["Estimate", "estimate", "node_exists"]

# PodTopologySpread's ErrReasonConstraintsNotMatch (what CA's hasTopologyConstraintError looks for)
_SPREAD_NOT_MATCH = "node(s) didn't match pod topology spread constraints"


@attrs.frozen
class Estimate:
    """What the binpacking estimator found for one template.

    Attributes:
        node_count: nodes that received at least one pod (the scale-up size): the template
            copies, and, as CA 1.34 counts them (``newNodesWithPods``), any of the cluster's
            own nodes that the hostname-spread step placed a pod on.
        pods: the pods placed, in the order they were placed.
        pods_per_node: copy name -> pods placed on it, for every copy added (0 for a copy
            that was added and stayed empty).
        existing_nodes: cluster node name -> pods the hostname-spread step placed on it.
        limit_reached: the estimator wanted another copy beyond ``max_new_nodes``.
        errors: pods whose attempt a plugin Error status aborted (inside
            `aborting_plugin_errors`); the rest of their equivalence group is not tried.
    """

    node_count: int
    pods: tuple[Pod, ...]
    pods_per_node: Mapping[str, int]
    limit_reached: bool = False
    errors: tuple[PodError, ...] = ()
    existing_nodes: Mapping[str, int] = attrs.field(factory=dict)


def node_exists(snapshot: PredicateSnapshot, node_name: str) -> bool:
    try:
        snapshot.get_node_info(node_name)
    except NodeNotFoundError:
        return False
    return True


def _pod_score(pod: Pod, node: Node, pod_level_resources: bool) -> float:
    """CA ``DecreasingPodOrderer``: cpu and memory requests as fractions of the template's."""
    req = Resource.from_resource_list(pod_requests(pod, pod_level_resources=pod_level_resources))
    alloc = Resource.from_resource_list(node.allocatable)
    score = 0.0
    if alloc.milli_cpu:
        score += req.milli_cpu / alloc.milli_cpu
    if alloc.memory:
        score += req.memory / alloc.memory
    return score


class _Estimation:
    """One estimation's state (CA ``estimationState``)."""

    def __init__(
        self,
        snapshot: PredicateSnapshot,
        template: NodeInfo,
        max_new_nodes: int | None,
        pod_level_resources: bool,
    ) -> None:
        self.snapshot = snapshot
        self.template = template
        assert template.node is not None
        self.template_name = template.node.name
        self.max_new_nodes = max_new_nodes
        self.pod_level_resources = pod_level_resources
        self.added: dict[str, int] = {}  # copy name -> pods placed there, in add order
        self.existing: dict[str, int] = {}  # cluster node -> pods the spread step put there
        self.last: str | None = None
        self.index = 0
        self.scheduled: list[Pod] = []
        self.new_nodes_allowed = True
        self.limit_reached = False
        self._acceptable: Callable[[NodeInfo], bool] = lambda ni: (
            ni.node is not None and ni.node.name in self.added
        )

    def _placed(self, pod: Pod, node_name: str) -> None:
        if node_name in self.added:
            self.added[node_name] += 1
        else:
            self.existing[node_name] = self.existing.get(node_name, 0) + 1
        self.scheduled.append(pod)

    def try_existing(self, pods: Sequence[Pod]) -> Sequence[Pod]:
        """Place pods on copies added so far that already hold pods, until one fails; return
        the rest (CA ``tryToScheduleOnExistingNodes``). The copy added last is tried first and
        directly (it is the one likely to have room; CA ``scheduleOnExistingNewNodes``), then
        the others, round robin; an empty last copy is left for `try_new`."""
        if not self.added:
            return pods
        for i, pod in enumerate(pods):
            try:
                node = self._on_existing(pod)
            except SchedulingError as e:
                if e.type is SchedulingErrorType.INTERNAL_ERROR:
                    raise
                return pods[i:]
            self._placed(pod, node)
        return ()

    def _on_existing(self, pod: Pod) -> str:
        last = self.last
        if last is not None and self.added[last] > 0:
            try:
                self.snapshot.schedule_pod(pod, last)
            except SchedulingError as e:
                if e.type is SchedulingErrorType.INTERNAL_ERROR:
                    raise
            else:
                return last
        added = self.added
        return self.snapshot.schedule_pod_on_any_node_matching(
            pod, lambda ni: ni.node is not None and ni.node.name != last and ni.node.name in added
        )

    def _add_copy(self) -> str:
        while True:
            suffix = f"e-{self.index}"
            name = f"{self.template_name}-{suffix}"
            self.index += 1
            if not node_exists(self.snapshot, name):
                break
        copy = sanitized_node_info(
            self.template, name, suffix, pod_level_resources=self.pod_level_resources
        )
        self.snapshot.add_node_info(copy)
        self.added[name] = 0
        self.last = name
        return name

    def try_new(self, pods: Sequence[Pod]) -> None:
        """Each pod goes to the copy added last, else to a new copy (CA
        ``tryToScheduleOnNewNodes``). A pod with a hostname spread constraint that the last
        copy rejects for the spread is first tried on every other node (copies and the
        cluster's own nodes, round robin), as CA 1.34 does: placing it there keeps the skew
        without a new domain. Stops when the last copy is still empty (more copies would not
        help this equivalence group) or when no more copies are allowed."""
        for pod in pods:
            if self.last is not None:
                try:
                    self.snapshot.schedule_pod(pod, self.last)
                except SchedulingError as e:
                    if e.type is SchedulingErrorType.INTERNAL_ERROR:
                        raise
                    placed = self._retroactive(pod, e)
                else:
                    placed = self.last
                if placed is not None:
                    self._placed(pod, placed)
                    continue
                if self.added[self.last] == 0:
                    return
            if self.max_new_nodes is not None and len(self.added) >= self.max_new_nodes:
                self.new_nodes_allowed = False
                self.limit_reached = True
                return
            name = self._add_copy()
            try:
                self.snapshot.schedule_pod(pod, name)
            except SchedulingError as e:
                if e.type is SchedulingErrorType.INTERNAL_ERROR:
                    raise
                return
            self._placed(pod, name)

    def _retroactive(self, pod: Pod, failed: SchedulingError) -> str | None:
        """CA 1.34: when the last copy fails a pod with a ``kubernetes.io/hostname`` spread
        constraint because of PodTopologySpread (isPodUsingHostNameTopologyKey,
        hasTopologyConstraintError), schedule it on any node but the last copy; the node's
        name, or None."""
        if _SPREAD_NOT_MATCH not in failed.failing_predicate_reasons:
            return None
        if not any(c.topology_key == HOSTNAME_LABEL for c in pod.topology_spread_constraints):
            return None
        last = self.last
        try:
            return self.snapshot.schedule_pod_on_any_node_matching(
                pod, lambda ni: ni.node is not None and ni.node.name != last
            )
        except SchedulingError as e:
            if e.type is SchedulingErrorType.INTERNAL_ERROR:
                raise
            return None


def estimate(
    snapshot: PredicateSnapshot,
    equivalence_groups: Sequence[Sequence[Pod]],
    template: NodeInfo,
    max_new_nodes: int | None = None,
    *,
    pod_level_resources: bool = True,
) -> Estimate:
    """How many copies of ``template`` the pods need (CA ``BinpackingNodeEstimator.Estimate``).

    Equivalence groups are taken largest first (CA's decreasing pod orderer: cpu plus memory
    request as fractions of the template's allocatable). For each group: its pods first-fit
    onto the copies added so far until one fails; the rest go to the copy added last, or (a
    pod with a hostname spread constraint the last copy fails for the spread) to any other
    node, or to a new sanitized copy ``<template>-e-<i>``; a pod that does not fit an empty
    last copy stops the group. All of it happens in a fork that is reverted: ``snapshot`` is
    unchanged.

    Args:
        snapshot: the cluster (with pods already placed on existing nodes).
        equivalence_groups: pending pods, grouped (see `group_equivalent_pods`).
        template: the node group's template NodeInfo (not added itself).
        max_new_nodes: copies allowed (the smaller of max size - current size and the
            max nodes per scale-up); None: no limit.
        pod_level_resources: the PodLevelResources gate for copied PodInfos and ordering.

    Returns:
        the `Estimate`.

    Raises:
        SchedulingError: INTERNAL_ERROR (e.g. a failing Reserve); CA abandons the estimate.
        SanitizationError: the template cannot be copied.
    """
    if template.node is None:
        raise ValueError("template NodeInfo has no Node")
    node = template.node
    ordered = sorted(
        equivalence_groups,
        key=lambda g: _pod_score(g[0], node, pod_level_resources) if g else 0.0,
        reverse=True,
    )
    est = _Estimation(snapshot, template, max_new_nodes, pod_level_resources)
    errors: list[PodError] = []
    with snapshot.forked():  # always reverted: an estimate changes nothing
        for group in ordered:
            try:
                rest = est.try_existing(group)
                if rest and est.new_nodes_allowed:
                    est.try_new(rest)
            except PluginStatusError as e:  # the attempt failed before changing anything
                errors.append(PodError.from_error(e))
    return Estimate(
        node_count=sum(1 for n in est.added.values() if n > 0) + len(est.existing),
        pods=tuple(est.scheduled),
        pods_per_node=dict(est.added),
        limit_reached=est.limit_reached,
        errors=tuple(errors),
        existing_nodes=dict(est.existing),
    )
