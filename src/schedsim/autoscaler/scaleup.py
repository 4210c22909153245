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

The estimator adds at most ``max_nodes_per_scale_up`` copies per group (CA's
``--max-nodes-per-scaleup``, default 1000, enforced by its ``thresholdBasedEstimationLimiter``);
a group that hits it says so (`GroupOption.limit`), as does one whose estimate reaches its
max size. Pods left because of such a limit are not "helped by no group" (CA reports only pods
whose equivalence group fits no template, ``GetRemainingPods``): they are `ScaleUpResult.later`.

A plugin Error status (e.g. a CEL runtime error in a claim's selector) fails that pod's
attempt, as in kube-scheduler: the pod is reported in `ScaleUpResult.errors`, never with a
"wouldn't fit" reason (see `schedsim.autoscaler.plugin_errors`).

Differences from CA, deliberate: ties between expander options go to the first group in the
file (CA falls back to a random choice); the estimator's fast path, its time limit
(``--max-nodegroup-binpacking-duration``, 10s: results would depend on the machine) and the
hostname topology-spread fallback are not emulated (PodTopologySpread is not emulated yet);
similar node groups are not balanced.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Final

import attrs

from schedsim.api.apps.workloads import DaemonSet
from schedsim.api.core import Node, Pod
from schedsim.api.core.resources import pod_requests
from schedsim.api.errors import first_few
from schedsim.api.resource import ResourceClaimTemplate
from schedsim.autoscaler.equivalence import group_equivalent_pods
from schedsim.autoscaler.estimator import estimate, node_exists
from schedsim.autoscaler.events import (
    MAX_LIMIT_REACHED_REASON,
    NOT_TRIGGER_SCALE_UP,
    TRIGGERED_SCALE_UP,
    Event,
    not_trigger_scale_up_message,
    scale_up_info,
    triggered_scale_up_message,
)
from schedsim.autoscaler.hinting import HintingSimulator, PodPlacement
from schedsim.autoscaler.nodegroups import NodeGroup, group_of_nodes
from schedsim.autoscaler.plugin_errors import PluginStatusError, PodError, aborting_plugin_errors
from schedsim.autoscaler.sanitize import sanitized_node_info, template_node_info
from schedsim.dra.claim_controller import create_template_claims
from schedsim.framework.resource import Resource
from schedsim.scheduler.scheduling import partition_pods, pods_on_missing_nodes
from schedsim.snapshot.errors import SchedulingError, SchedulingErrorType
from schedsim.snapshot.infos import NodeInfo
from schedsim.snapshot.predicate import PredicateSnapshot

__all__ = [
    "DEFAULT_MAX_NODES_PER_SCALE_UP",
    "EXPANDERS",
    "LIMIT_MAX_NODES_PER_SCALE_UP",
    "LIMIT_MAX_SIZE",
    "PLUGIN_ERROR",
    "GroupOption",
    "ScaleUpResult",
    "UnhelpedPod",
    "at_max_size",
    "choose_option",
    "max_nodes_per_scale_up_reached",
    "max_size_reached",
    "pending_pods_with_claims",
    "scale_up",
]

EXPANDERS: Final = ("least-waste", "most-pods")
"""Expander names `scale_up` accepts."""

LIMIT_MAX_SIZE: Final = "max-size"
"""`GroupOption.limit_kind` when the estimate stopped at the group's max size."""

LIMIT_MAX_NODES_PER_SCALE_UP: Final = "max-nodes-per-scaleup"
"""`GroupOption.limit_kind` when the estimate stopped at ``--max-nodes-per-scaleup``."""


def at_max_size(max_size: int) -> str:
    """Why a group already at its max size is not tried (CA's skipped node groups)."""
    return f"already at max size {max_size}"


def max_size_reached(max_size: int) -> str:
    """Why a group's estimate stopped: it would take the group beyond ``max_size``."""
    return f"the estimate reached the group's max size {max_size}"


DEFAULT_MAX_NODES_PER_SCALE_UP: Final = 1000
"""CA's ``--max-nodes-per-scaleup`` default (``config/flags/flags.go``)."""

PLUGIN_ERROR: Final = "plugin error (reported among the errors)"
"""A group's reason for a pod whose attempt on its template failed with a plugin error."""


def max_nodes_per_scale_up_reached(limit: int) -> str:
    """Why a group's estimate stopped at ``limit`` new nodes (CA's binpacking limiter)."""
    return f"the estimate reached --max-nodes-per-scaleup {limit}"


ProgressCallback = Callable[[int, int], None]
"""Called with (done, total) after each node group or candidate."""


# --------------------------------------------------------------------------- orchestration


def pending_pods_with_claims(
    snapshot: PredicateSnapshot,
    pods: Sequence[Pod],
    resource_claim_templates: Sequence[ResourceClaimTemplate],
) -> tuple[list[Pod], list[Pod], list[str]]:
    """Split ``pods`` into bound and pending (no nodeName/nominatedNodeName, not terminal,
    for the snapshot's profile's scheduler, without scheduling gates, not being deleted) and
    create the claims pending pods need from their templates in the snapshot's DRA snapshot,
    as the resource-claim controller would.

    A pending pod with ``metadata.deletionTimestamp`` is not counted: CA's
    ``UnschedulablePods`` leaves it out (utils/kubernetes/listers.go isUnschedulable: false
    when ``isDeleted``), so no scale-up is made for it, and kube-scheduler skips it (a bound
    one still counts on its node, as both count it until it is gone).

    Returns:
        ``(bound, pending, warnings)``; the warnings name the pending pods left out because
        they are for another scheduler or being deleted.
    """
    scheduler_name = snapshot.framework.profile.scheduler_name
    bound, pending, others = partition_pods(pods, scheduler_name)
    deleting = [p.key for p in pending if p.deletion_timestamp is not None]
    pending = [p for p in pending if not p.scheduling_gates and p.deletion_timestamp is None]
    dra = snapshot.dra_snapshot
    warnings: list[str] = []
    if deleting:
        warnings.append(
            f"{len(deleting)} pending pod(s) ({first_few(deleting)}) are being deleted "
            "(metadata.deletionTimestamp): skipped, not counted as unschedulable (the Cluster "
            "Autoscaler leaves them out and scales up for none of them)"
        )
    by_name: dict[str, list[str]] = {}
    for p in others:
        by_name.setdefault(p.scheduler_name, []).append(p.key)
    for name, keys in sorted(by_name.items()):
        warnings.append(
            f"{len(keys)} pending pod(s) ({first_few(keys)}) name schedulerName {name!r}, not this "
            f"profile's ({scheduler_name!r}): left out"
        )
    if any(p.resource_claims for p in pending):
        made = create_template_claims(pending, resource_claim_templates, dra.list_resource_claims())
        pending = list(made.pods)
        warnings.extend(made.warnings)
        dra.add_claims(made.claims)
    return bound, pending, warnings


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
        skipped: why the group was not tried at all (`at_max_size`), else "".
        rejected: pod key -> reasons an empty template copy rejects that pod (the first
            failing plugin's reasons, in kube-scheduler's words).
        limit_reached: the estimator stopped at the max size or the max nodes per scale-up.
        limit: which, in words (`max_size_reached` or `max_nodes_per_scale_up_reached`),
            when ``limit_reached``.
        limit_kind: `LIMIT_MAX_SIZE` or `LIMIT_MAX_NODES_PER_SCALE_UP` when
            ``limit_reached``, else "".
        waste: least-waste score when the group helps: unused fraction of the new nodes'
            cpu plus unused fraction of their memory (0 = no waste, 2 = all wasted).
        errors: pods whose attempt on the template, or its copies, failed with a plugin
            error.
        existing_nodes: cluster node -> pods the estimate's hostname-spread step placed on
            it (`Estimate.existing_nodes`); each such node is counted in ``node_count`` as
            CA counts it (``newNodesWithPods``), though it is not new.
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
    limit: str = ""
    errors: tuple[PodError, ...] = ()
    limit_kind: str = ""
    existing_nodes: Mapping[str, int] = attrs.field(factory=dict)

    @property
    def estimated_new_nodes(self) -> int:
        """Template copies the estimate put pods on: ``node_count`` without the existing
        nodes it counted (before the cap at the group's room)."""
        return sum(1 for n in self.pods_per_node.values() if n)

    def counted_nodes_note(self) -> str:
        """What the estimate counted, e.g. ``the estimate's 2 new node(s) + 1 existing node
        (oldnode: 4 pod(s))``; empty when ``node_count`` counts only new nodes."""
        if not self.existing_nodes or not self.node_count:
            return ""
        names = ", ".join(f"{n}: {c} pod(s)" for n, c in sorted(self.existing_nodes.items()))
        k = len(self.existing_nodes)
        return (
            f"the estimate's {self.estimated_new_nodes} new node(s) + {k} existing "
            f"node{'s' if k > 1 else ''} ({names})"
        )

    def fits_template(self, pod: Pod) -> bool:
        """Whether ``pod``'s equivalence group passed the check on this group's template
        (CA ``SchedulablePodGroups`` marks it ``Schedulable``)."""
        if self.skipped or pod.key in self.rejected:
            return False
        return not any(e.pod is pod for e in self.errors)

    def reason_for(self, pod: Pod) -> str:
        """Why this group does not help ``pod`` ("" when it does)."""
        if any(p is pod for p in self.pods):
            return ""
        if self.skipped:
            return self.skipped
        if any(e.pod is pod for e in self.errors):
            return PLUGIN_ERROR
        reasons = self.rejected.get(pod.key)
        if reasons is not None:
            return "wouldn't fit: " + ", ".join(reasons)
        if self.limit_reached:
            return self.limit
        return "not placed on new nodes (does not fit beside the pods packed before it)"

    def ca_reasons(self, pod: Pod) -> tuple[tuple[str, ...] | None, tuple[str, ...] | None]:
        """What CA 1.34 records for ``pod`` and this group: (rejected reasons, skipped
        reasons), None where the group is neither rejected nor skipped for it. Skipped at
        max size: ``max node group size reached`` (``MaxLimitReachedReason``); rejected:
        the failing predicate's reasons (``SchedulingError.Reasons``), or for a plugin
        error its message (a non-predicate SchedulingError's reason is its text)."""
        if self.skipped:
            return None, (MAX_LIMIT_REACHED_REASON,)
        for e in self.errors:
            if e.pod is pod:
                return (e.message,), None
        reasons = self.rejected.get(pod.key)
        return (None if reasons is None else tuple(reasons)), None


@attrs.frozen
class UnhelpedPod:
    """A pending pod that neither an existing node nor any node group can take.

    Attributes:
        pod: the pod.
        reasons: node group name -> why that group does not help (schedsim's detail).
        message: the message of the ``NotTriggerScaleUp`` event CA 1.34 records for it
            (``pod didn't trigger scale-up: 1 max node group size reached, 1 Insufficient
            cpu``; `schedsim.autoscaler.events`); "" for a pod left for a later scale-up,
            which CA records nothing for.
    """

    pod: Pod
    reasons: Mapping[str, str]
    message: str = ""


@attrs.frozen
class ScaleUpResult:
    """The answer to "how many nodes of which group do the pending pods need?".

    Attributes:
        scheduled: pending pods that fit on existing nodes, and where.
        options: one per node group, in file order.
        chosen: the group the expander picked, or None when no group helps.
        expander: the expander used.
        unhelped: pending pods no group helps, with each group's reason: their equivalence
            group fits no group's template (CA ``GetRemainingPods``: ``PodsRemainUnschedulable``,
            the pods of groups not marked ``Schedulable``).
        later: pending pods whose equivalence group fits some template but that no estimate
            placed (e.g. it reached a limit): not "unschedulable by any group" in CA (no
            NotTriggerScaleUp), a later loop's business; with each group's reason.
        pending: pending pods considered.
        warnings: things the user should know (e.g. a missing ResourceClaimTemplate).
        skipped_pods: bound pods whose node is not among the nodes (ignored, as CA does).
        errors: pods whose attempt failed with a plugin error: on the cluster's nodes
            (``node_group`` ""; such a pod is not considered for the groups, since
            kube-scheduler never marks it unschedulable) or on a group's template.
        max_nodes_per_scale_up: the limit the estimates ran with (0: none).
        events: the events CA 1.34's EventingScaleUpStatusProcessor would record for this
            loop: ``TriggeredScaleUp`` for each pod of the chosen group, or, when no group
            is chosen, ``NotTriggerScaleUp`` for each pod no group helps.
    """

    scheduled: tuple[PodPlacement, ...]
    options: tuple[GroupOption, ...]
    chosen: str | None
    expander: str
    unhelped: tuple[UnhelpedPod, ...]
    pending: int
    later: tuple[UnhelpedPod, ...] = ()
    warnings: tuple[str, ...] = ()
    skipped_pods: tuple[Pod, ...] = ()
    errors: tuple[PodError, ...] = ()
    max_nodes_per_scale_up: int = DEFAULT_MAX_NODES_PER_SCALE_UP
    events: tuple[Event, ...] = ()

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
) -> tuple[list[list[Pod]], dict[str, tuple[str, ...]], list[PodError]]:
    """Check one pod of each equivalence group against an empty template copy, in a fork
    (CA ``SchedulablePodGroups``). Returns the groups that fit, per pod of the others the
    rejecting plugin's reasons, and the pods of groups whose check failed with a plugin
    error (one `PodError` per pod, with the checked pod's message)."""
    assert template.node is not None
    fits: list[list[Pod]] = []
    rejected: dict[str, tuple[str, ...]] = {}
    errors: list[PodError] = []
    with snapshot.forked():  # always reverted: the template copy is only for the check
        name = f"{template.node.name}-e-0"
        while node_exists(snapshot, name):
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
            except PluginStatusError as e:
                first = PodError.from_error(e)
                errors.extend(attrs.evolve(first, pod=pod) for pod in group)
            else:
                fits.append(list(group))
    return fits, rejected, errors


def scale_up(
    snapshot: PredicateSnapshot,
    pods: Sequence[Pod],
    node_groups: Sequence[NodeGroup],
    *,
    expander: str = "least-waste",
    resource_claim_templates: Sequence[ResourceClaimTemplate] = (),
    progress: ProgressCallback | None = None,
    max_nodes_per_scale_up: int = DEFAULT_MAX_NODES_PER_SCALE_UP,
    daemon_sets: Sequence[DaemonSet] = (),
) -> ScaleUpResult:
    """One Cluster Autoscaler scale-up decision, offline (see the module docstring).

    Args:
        snapshot: the cluster, ready (`schedsim.engine.Cluster.snapshot`): its nodes with the
            bound pods, its DRA, CSI and storage state; the scheduler profile is its
            framework's. Claims pending pods need from ``resource_claim_templates`` are
            created in its DRA snapshot first, as the resource-claim controller would;
            template pods may reference its claims (shared claims). Pending pods that fit
            existing nodes stay placed in it; the estimates are reverted.
        pods: the cluster's pods, bound and pending (pending: no nodeName/nominatedNodeName,
            not terminal, for this profile's scheduler, without scheduling gates).
        node_groups: the node groups that can grow (in file order: errors name
            ``nodeGroups[i]``).
        expander: ``least-waste`` (default) or ``most-pods``.
        resource_claim_templates: the cluster's ResourceClaimTemplates.
        progress: called with (groups done, groups) after each node group.
        max_nodes_per_scale_up: new nodes one group's estimate may add (CA
            ``--max-nodes-per-scaleup``, default 1000); 0: no limit, as in CA.
        daemon_sets: the cluster's DaemonSets: each template node also runs the pods of those
            that target it (CA adds DaemonSet pods to template nodes).

    Returns:
        the `ScaleUpResult`; ``pods`` and ``node_groups`` are not modified.

    Raises:
        ValueError: unknown expander, or a negative ``max_nodes_per_scale_up``.
        NodeGroupError: a node is in two groups.
        SanitizationError: a template cannot be copied or references a missing claim (the
            error's ``field`` is ``nodeGroups[i].template...``).
        SchedulingError: INTERNAL_ERROR when a plugin fails other than with an Error status
            from PreFilter or Filter (e.g. in Reserve).
    """
    if expander not in EXPANDERS:
        raise ValueError(f"unknown expander {expander!r} (expected one of {', '.join(EXPANDERS)})")
    if max_nodes_per_scale_up < 0:
        raise ValueError(f"max nodes per scale-up must be >= 0, got {max_nodes_per_scale_up}")
    framework = snapshot.framework
    nodes = [ni.node for ni in snapshot.list_node_infos() if ni.node is not None]
    group_of_nodes(node_groups, nodes)  # a node in two groups is an error
    plr = framework.handle.feature_gates.enabled("PodLevelResources")
    bound, pending, warnings = pending_pods_with_claims(snapshot, pods, resource_claim_templates)
    skipped = pods_on_missing_nodes(snapshot, bound)
    cluster_claims = snapshot.dra_snapshot.list_resource_claims()
    templates = [
        template_node_info(
            g.template,
            cluster_claims,
            pod_level_resources=plr,
            path=f"nodeGroups[{i}].template",
            group=g.name,
            daemon_sets=daemon_sets,
        )
        for i, g in enumerate(node_groups)
    ]
    with aborting_plugin_errors(framework):
        tried = HintingSimulator().try_schedule_pods(snapshot, pending)
        placed = tried.scheduled
        errors = list(tried.plugin_errors)
        done = {id(p.pod) for p in placed} | {id(e.pod) for e in errors}
        left = [p for p in pending if id(p) not in done]
        groups = group_equivalent_pods(left) if left else []
        options: list[GroupOption] = []
        for i, (ng, template) in enumerate(zip(node_groups, templates, strict=True)):
            options.append(
                _option(snapshot, ng, ng.size(nodes), template, left, groups,
                        max_nodes_per_scale_up, plr)
            )  # fmt: skip
            errors.extend(options[-1].errors)
            if progress is not None:
                progress(i + 1, len(node_groups))
    best = choose_option(options, expander)
    helped = {id(p) for o in options for p in o.pods}
    unhelped: list[UnhelpedPod] = []
    later: list[UnhelpedPod] = []
    for pod in left:
        if id(pod) in helped:
            continue
        reasons = {o.name: o.reason_for(pod) for o in options}
        if any(o.fits_template(pod) for o in options):
            later.append(UnhelpedPod(pod, reasons))
            continue
        unhelped.append(UnhelpedPod(pod, reasons, _not_triggered(pod, options)))
    events: list[Event] = []
    if best is not None:
        info = scale_up_info(
            best.name, best.current_size, best.current_size + best.node_count, best.max_size
        )
        message = triggered_scale_up_message([info])
        events += [Event("Pod", p.key, "Normal", TRIGGERED_SCALE_UP, message) for p in best.pods]
    else:  # CA records NotTriggerScaleUp only on a loop without a scale-up
        events += [
            Event("Pod", u.pod.key, "Normal", NOT_TRIGGER_SCALE_UP, u.message) for u in unhelped
        ]
    return ScaleUpResult(
        scheduled=placed,
        options=tuple(options),
        chosen=best.name if best else None,
        expander=expander,
        unhelped=tuple(unhelped),
        pending=len(pending),
        later=tuple(later),
        warnings=tuple(warnings),
        skipped_pods=tuple(skipped),
        errors=tuple(errors),
        max_nodes_per_scale_up=max_nodes_per_scale_up,
        events=tuple(events),
    )


def _not_triggered(pod: Pod, options: Sequence[GroupOption]) -> str:
    rejected: list[tuple[str, ...]] = []
    skipped: list[tuple[str, ...]] = []
    for o in options:
        r, s = o.ca_reasons(pod)
        if r is not None:
            rejected.append(r)
        if s is not None:
            skipped.append(s)
    return not_trigger_scale_up_message(rejected, skipped)


def _option(
    snapshot: PredicateSnapshot,
    ng: NodeGroup,
    size: int,
    template: NodeInfo,
    left: Sequence[Pod],
    groups: Sequence[Sequence[Pod]],
    max_nodes_per_scale_up: int,
    plr: bool,
) -> GroupOption:
    """What ``ng`` can do for the pods ``left`` (grouped by equivalence in ``groups``)."""
    if not left:
        return GroupOption(ng.name, size, ng.max_size)
    if size >= ng.max_size:
        return GroupOption(ng.name, size, ng.max_size, skipped=at_max_size(ng.max_size))
    room = ng.max_size - size
    capped = 0 < max_nodes_per_scale_up < room
    fits, rejected, errors = _rejections(snapshot, groups, template, plr)
    est = estimate(
        snapshot,
        fits,
        template,
        max_nodes_per_scale_up if capped else room,
        pod_level_resources=plr,
    )
    option = GroupOption(
        ng.name,
        size,
        ng.max_size,
        # An existing node that took a hostname-spread pod counts in the estimate
        # (CA newNodesWithPods), so it can pass the group's room; CA caps the request at the
        # group's max size (BalanceScaleUpBetweenGroups, "exceeds node group set capacity").
        node_count=min(est.node_count, room),
        pods=est.pods,
        pods_per_node=est.pods_per_node,
        rejected=rejected,
        limit_reached=est.limit_reached,
        limit=""
        if not est.limit_reached
        else max_nodes_per_scale_up_reached(max_nodes_per_scale_up)
        if capped
        else max_size_reached(ng.max_size),
        limit_kind=""
        if not est.limit_reached
        else LIMIT_MAX_NODES_PER_SCALE_UP
        if capped
        else LIMIT_MAX_SIZE,
        errors=tuple(attrs.evolve(e, node_group=ng.name) for e in (*errors, *est.errors)),
        existing_nodes=dict(est.existing_nodes),
    )
    if option.node_count > 0 and template.node is not None:
        option = attrs.evolve(option, waste=_waste(option, template.node, plr))
    return option
