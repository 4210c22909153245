"""Scale-up: how many nodes of which node group the pending pods need.

What Cluster Autoscaler's scale-up does in one loop, offline:

1. filter-out-schedulable (CA ``podlistprocessor/filter_out_schedulable.go``): pending pods
   that fit on existing nodes are placed there (priority order, hints first, through the
   `HintingSimulator`) and need no new node;
2. per node group, the pods left are grouped by equivalence; the group's template is checked
   for one pod of each equivalence group (CA ``SchedulablePodGroups``): a pod that does not
   fit an empty template copy "wouldn't fit", with the predicate's reasons;
3. the binpacking estimator (CA ``estimator/binpacking_estimator.go``) packs the pods that
   would fit onto sanitized template copies ``<template>-e-<i>`` added one at a time in a fork,
   within the group's max size, and counts the copies that received pods; the fork is
   reverted;
4. an expander picks one group among those that help (least-waste by default, as CA's
   ``expander/waste``; or most-pods).

Differences from CA, deliberate: ties between expander options go to the first group in the
file (CA falls back to a random choice); the estimator's fast path, its time limits and the
hostname topology-spread fallback are not emulated (PodTopologySpread is not emulated yet);
similar node groups are not balanced.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Final

import attrs

from schedsim.api.core import Node, Pod
from schedsim.api.resource import ResourceClaimTemplate
from schedsim.api.resources import pod_requests
from schedsim.dra.claim_controller import create_template_claims
from schedsim.framework.resource import Resource
from schedsim.framework.runtime import Framework
from schedsim.framework.volume_listers import StorageListers
from schedsim.simulation.equivalence import group_equivalent_pods
from schedsim.simulation.hinting import HintingSimulator, PodPlacement
from schedsim.simulation.nodegroups import NodeGroup, sanitized_node_info, template_node_info
from schedsim.simulation.scheduling import partition_pods
from schedsim.snapshot.csi import CsiSnapshot
from schedsim.snapshot.dra import DraSnapshot
from schedsim.snapshot.errors import NodeNotFoundError, SchedulingError, SchedulingErrorType
from schedsim.snapshot.infos import NodeInfo
from schedsim.snapshot.predicate import PredicateSnapshot
from schedsim.snapshot.store import ClusterSnapshotStore

__all__ = [
    "EXPANDERS",
    "MAX_SIZE_REACHED",
    "Estimate",
    "GroupOption",
    "ScaleUpResult",
    "UnhelpedPod",
    "choose_option",
    "estimate",
    "scale_up",
]

EXPANDERS: Final = ("least-waste", "most-pods")
"""Expander names `scale_up` accepts."""

MAX_SIZE_REACHED: Final = "max size reached"
"""Why a group does not help a pod when it cannot grow (any more)."""

ProgressCallback = Callable[[int, int], None]
"""Called with (done, total) after each node group or candidate."""


# --------------------------------------------------------------------------- estimator


@attrs.frozen
class Estimate:
    """What the binpacking estimator found for one template.

    Attributes:
        node_count: template copies that received at least one pod (the scale-up size).
        pods: the pods placed on copies, in the order they were placed.
        pods_per_node: copy name -> pods placed on it, for every copy added (0 for a copy
            that was added and stayed empty).
        limit_reached: the estimator wanted another copy beyond ``max_new_nodes``.
    """

    node_count: int
    pods: tuple[Pod, ...]
    pods_per_node: Mapping[str, int]
    limit_reached: bool = False


def _exists(snapshot: PredicateSnapshot, node_name: str) -> bool:
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
        self.last: str | None = None
        self.index = 0
        self.scheduled: list[Pod] = []
        self.new_nodes_allowed = True
        self.limit_reached = False
        self._acceptable: Callable[[NodeInfo], bool] = lambda ni: (
            ni.node is not None and ni.node.name in self.added
        )

    def _placed(self, pod: Pod, node_name: str) -> None:
        self.added[node_name] += 1
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
            if not _exists(self.snapshot, name):
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
        ``tryToScheduleOnNewNodes``). Stops when the last copy is still empty (more copies
        would not help this equivalence group) or when no more copies are allowed."""
        for pod in pods:
            if self.last is not None:
                try:
                    self.snapshot.schedule_pod(pod, self.last)
                except SchedulingError as e:
                    if e.type is SchedulingErrorType.INTERNAL_ERROR:
                        raise
                else:
                    self._placed(pod, self.last)
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
    onto the copies added so far until one fails; the rest go to the copy added last, or to a
    new sanitized copy ``<template>-e-<i>``; a pod that does not fit an empty last copy stops
    the group. All of it happens in a fork that is reverted: ``snapshot`` is unchanged.

    Args:
        snapshot: the cluster (with pods already placed on existing nodes).
        equivalence_groups: pending pods, grouped (see `group_equivalent_pods`).
        template: the node group's template NodeInfo (not added itself).
        max_new_nodes: copies allowed (max size - current size); None: no limit.
        pod_level_resources: the PodLevelResources gate for copied PodInfos and ordering.

    Returns:
        the `Estimate`.

    Raises:
        SchedulingError: INTERNAL_ERROR (a plugin failed); CA abandons the estimate.
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
    snapshot.fork()
    try:
        for group in ordered:
            rest = est.try_existing(group)
            if rest and est.new_nodes_allowed:
                est.try_new(rest)
    finally:
        snapshot.revert()
    return Estimate(
        node_count=sum(1 for n in est.added.values() if n > 0),
        pods=tuple(est.scheduled),
        pods_per_node=dict(est.added),
        limit_reached=est.limit_reached,
    )


# --------------------------------------------------------------------------- orchestration


@attrs.frozen
class GroupOption:
    """What one node group could do for the pods left after filter-out-schedulable.

    Attributes:
        name: the node group.
        current_size: its size now.
        max_size: its max size.
        node_count: nodes to add (0: the group does not help).
        pods: pods the new nodes would take.
        pods_per_node: template copy -> pods placed there by the estimator.
        skipped: why the group was not tried at all (`MAX_SIZE_REACHED`), else "".
        rejected: pod key -> reasons an empty template copy rejects that pod (the first
            failing plugin's reasons, in kube-scheduler's words).
        limit_reached: the estimator stopped at the max size.
        waste: least-waste score when the group helps: unused fraction of the new nodes'
            cpu plus unused fraction of their memory (0 = no waste, 2 = all wasted).
    """

    name: str
    current_size: int
    max_size: int
    node_count: int = 0
    pods: tuple[Pod, ...] = ()
    pods_per_node: Mapping[str, int] = attrs.field(factory=dict)
    skipped: str = ""
    rejected: Mapping[str, tuple[str, ...]] = attrs.field(factory=dict)
    limit_reached: bool = False
    waste: float | None = None

    def reason_for(self, pod: Pod) -> str:
        """Why this group does not help ``pod`` ("" when it does)."""
        if any(p is pod for p in self.pods):
            return ""
        if self.skipped:
            return self.skipped
        reasons = self.rejected.get(pod.key)
        if reasons is not None:
            return "wouldn't fit: " + ", ".join(reasons)
        if self.limit_reached:
            return MAX_SIZE_REACHED
        return "not placed on new nodes (does not fit beside the pods packed before it)"


@attrs.frozen
class UnhelpedPod:
    """A pending pod that neither an existing node nor any node group can take.

    Attributes:
        pod: the pod.
        reasons: node group name -> why that group does not help.
    """

    pod: Pod
    reasons: Mapping[str, str]


@attrs.frozen
class ScaleUpResult:
    """The answer to "how many nodes of which group do the pending pods need?".

    Attributes:
        scheduled: pending pods that fit on existing nodes, and where.
        options: one per node group, in file order.
        chosen: the group the expander picked, or None when no group helps.
        expander: the expander used.
        unhelped: pending pods no group helps, with each group's reason.
        pending: pending pods considered.
        warnings: things the user should know (e.g. a missing ResourceClaimTemplate).
    """

    scheduled: tuple[PodPlacement, ...]
    options: tuple[GroupOption, ...]
    chosen: str | None
    expander: str
    unhelped: tuple[UnhelpedPod, ...]
    pending: int
    warnings: tuple[str, ...] = ()

    @property
    def chosen_option(self) -> GroupOption | None:
        """The chosen group's option."""
        return next((o for o in self.options if o.name == self.chosen), None)

    @property
    def awaiting(self) -> tuple[Pod, ...]:
        """Pods some group would help, but not the chosen one (a later loop's business)."""
        chosen = self.chosen_option
        taken = {id(p) for p in chosen.pods} if chosen else set()
        seen: set[int] = set()
        out = []
        for o in self.options:
            for p in o.pods:
                if id(p) not in taken and id(p) not in seen:
                    seen.add(id(p))
                    out.append(p)
        return tuple(out)


def _waste(option: GroupOption, template: Node, pod_level_resources: bool) -> float:
    """CA least-waste: (available - requested) / available for cpu, plus the same for
    memory, over ``node_count`` template nodes (the node's capacity, else allocatable)."""
    cap = Resource.from_resource_list(template.capacity or template.allocatable)
    req = Resource()
    for pod in option.pods:
        req.add(pod_requests(pod, pod_level_resources=pod_level_resources))
    score = 0.0
    for avail_one, used in ((cap.milli_cpu, req.milli_cpu), (cap.memory, req.memory)):
        avail = avail_one * option.node_count
        if avail > 0:
            score += (avail - used) / avail
    return score


def choose_option(options: Sequence[GroupOption], expander: str) -> GroupOption | None:
    """The option ``expander`` picks among those with ``node_count > 0``.

    ``least-waste``: the smallest `GroupOption.waste` (CA ``expander/waste``);
    ``most-pods``: the most pods helped (CA ``expander/mostpods``). Ties: the first in order.

    Raises:
        ValueError: unknown expander.
    """
    helping = [o for o in options if o.node_count > 0]
    if expander not in EXPANDERS:
        raise ValueError(f"unknown expander {expander!r} (expected one of {', '.join(EXPANDERS)})")
    if not helping:
        return None
    if expander == "most-pods":
        return max(helping, key=lambda o: len(o.pods))  # max keeps the first of equals
    return min(helping, key=lambda o: o.waste if o.waste is not None else 2.0)


def _rejections(
    snapshot: PredicateSnapshot,
    groups: Sequence[Sequence[Pod]],
    template: NodeInfo,
    pod_level_resources: bool,
) -> tuple[list[list[Pod]], dict[str, tuple[str, ...]]]:
    """Check one pod of each equivalence group against an empty template copy, in a fork
    (CA ``SchedulablePodGroups``). Returns the groups that fit and, per pod of the others,
    the rejecting plugin's reasons."""
    assert template.node is not None
    fits: list[list[Pod]] = []
    rejected: dict[str, tuple[str, ...]] = {}
    snapshot.fork()
    try:
        name = f"{template.node.name}-e-0"
        while _exists(snapshot, name):
            name += "-x"
        snapshot.add_node_info(
            sanitized_node_info(template, name, "e-0", pod_level_resources=pod_level_resources)
        )
        for group in groups:
            try:
                snapshot.check_predicates(group[0], name)
            except SchedulingError as e:
                if e.type is SchedulingErrorType.INTERNAL_ERROR:
                    raise
                reasons = e.reasons or (e.failing_predicate_name or str(e),)
                for pod in group:
                    rejected[pod.key] = reasons
            else:
                fits.append(list(group))
    finally:
        snapshot.revert()
    return fits, rejected


def scale_up(
    nodes: Sequence[Node],
    pods: Sequence[Pod],
    node_groups: Sequence[NodeGroup],
    framework: Framework,
    store: ClusterSnapshotStore | None = None,
    *,
    expander: str = "least-waste",
    dra_snapshot: DraSnapshot | None = None,
    resource_claim_templates: Sequence[ResourceClaimTemplate] = (),
    csi_snapshot: CsiSnapshot | None = None,
    storage_listers: StorageListers | None = None,
    progress: ProgressCallback | None = None,
) -> ScaleUpResult:
    """One Cluster Autoscaler scale-up decision, offline (see the module docstring).

    Args:
        nodes: the cluster's nodes.
        pods: bound and pending pods (pending: no nodeName/nominatedNodeName, not terminal,
            for this profile's scheduler, without scheduling gates).
        node_groups: the node groups that can grow.
        framework: the scheduler profile.
        store: snapshot store (DeltaSnapshotStore by default).
        expander: ``least-waste`` (default) or ``most-pods``.
        dra_snapshot: the cluster's ResourceClaims, ResourceSlices and DeviceClasses (used,
            not copied); claims pending pods need from ``resource_claim_templates`` are created
            in it first, as the resource-claim controller would. Template pods may reference
            its claims (shared claims).
        resource_claim_templates: the cluster's ResourceClaimTemplates.
        csi_snapshot: the cluster's CSINodes (used, not copied): per-driver volume limits.
        storage_listers: PVs, PVCs, StorageClasses and VolumeAttachments; they become
            ``framework.handle.storage_listers`` (what the volume plugins read).
        progress: called with (groups done, groups) after each node group.

    Returns:
        the `ScaleUpResult`; nothing given is modified.

    Raises:
        ValueError: unknown expander.
        SanitizationError: a template cannot be copied or references a missing claim.
        SchedulingError: INTERNAL_ERROR when a plugin fails.
        DraSnapshotError: a bound pod's claim is missing.
    """
    if expander not in EXPANDERS:
        raise ValueError(f"unknown expander {expander!r} (expected one of {', '.join(EXPANDERS)})")
    plr = framework.handle.feature_gates.enabled("PodLevelResources")
    bound, pending, _ = partition_pods(pods, framework.profile.scheduler_name)
    pending = [p for p in pending if not p.scheduling_gates]
    dra = dra_snapshot if dra_snapshot is not None else DraSnapshot()
    warnings: list[str] = []
    if any(p.resource_claims for p in pending):
        made = create_template_claims(pending, resource_claim_templates, dra.list_resource_claims())
        pending, warnings = list(made.pods), list(made.warnings)
        dra.add_claims(made.claims)
    if storage_listers is not None:
        framework.handle.storage_listers = storage_listers
    snapshot = PredicateSnapshot(framework, store)
    snapshot.set_cluster_state(nodes, bound, dra, csi_snapshot=csi_snapshot)
    cluster_claims = dra.list_resource_claims()
    templates = [
        template_node_info(g.template, cluster_claims, pod_level_resources=plr) for g in node_groups
    ]
    placed = HintingSimulator().try_schedule_pods(snapshot, pending).scheduled
    placed_ids = {id(p.pod) for p in placed}
    left = [p for p in pending if id(p) not in placed_ids]
    groups = group_equivalent_pods(left) if left else []
    options: list[GroupOption] = []
    for i, (ng, template) in enumerate(zip(node_groups, templates, strict=True)):
        size = ng.size(nodes)
        if not left:
            options.append(GroupOption(ng.name, size, ng.max_size))
        elif size >= ng.max_size:
            options.append(GroupOption(ng.name, size, ng.max_size, skipped=MAX_SIZE_REACHED))
        else:
            fits, rejected = _rejections(snapshot, groups, template, plr)
            est = estimate(snapshot, fits, template, ng.max_size - size, pod_level_resources=plr)
            option = GroupOption(
                ng.name,
                size,
                ng.max_size,
                node_count=est.node_count,
                pods=est.pods,
                pods_per_node=est.pods_per_node,
                rejected=rejected,
                limit_reached=est.limit_reached,
            )
            if option.node_count > 0 and template.node is not None:
                option = attrs.evolve(option, waste=_waste(option, template.node, plr))
            options.append(option)
        if progress is not None:
            progress(i + 1, len(node_groups))
    best = choose_option(options, expander)
    helped = {id(p) for o in options for p in o.pods}
    unhelped = tuple(
        UnhelpedPod(pod, {o.name: o.reason_for(pod) for o in options})
        for pod in left
        if id(pod) not in helped
    )
    return ScaleUpResult(
        scheduled=placed,
        options=tuple(options),
        chosen=best.name if best else None,
        expander=expander,
        unhelped=unhelped,
        pending=len(pending),
        warnings=tuple(warnings),
    )
