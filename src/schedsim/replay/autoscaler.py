"""The Cluster Autoscaler's loop on the virtual clock.

Mirrors the parts of CA's ``StaticAutoscaler.RunOnce`` (``core/static_autoscaler.go``) that
decide, once per ``--scan-interval``:

1. **scale-up** when pods are unschedulable: the nodes being provisioned (upcoming nodes) are
   added to a fork of the cluster as template copies, so pods they will take trigger nothing
   (CA's filter-out-schedulable runs with upcoming nodes in the snapshot), then
   `schedsim.simulation.scale_up` (estimator and expander, the code `schedsim scale-up` runs)
   picks a group; its new nodes become ready after the provisioning delay. A successful
   scale-up ends the loop (CA: no scale-down in that iteration). Groups in backoff are not
   tried; a node that is not ready after ``--max-node-provision-time`` is dropped and its
   group backs off (``--initial-node-group-backoff-duration``, doubling up to
   ``--max-node-group-backoff-duration``), as CA's clusterstate does for a failed scale-up.
2. **scale-down**: `schedsim.simulation.scale_down` (the code `schedsim scale-down` runs)
   finds the nodes whose pods could all move elsewhere (in a fork, reverted); a node stays
   *unneeded* from the first loop that finds it so, and is deleted once unneeded for
   ``--scale-down-unneeded-time`` unless scale-down is in cooldown
   (``--scale-down-delay-after-add`` since the last scale-up, ``--scale-down-delay-after-delete``
   since the last deletion, ``--scale-down-delay-after-failure``), at most
   ``--max-scale-down-parallelism`` nodes per loop, empty nodes first.

Cost per loop, O(change) where it can be: the scale-up simulation runs only when pods are
unschedulable; the scale-down plan is recomputed only when the cluster changed since the last
plan (a pod bound or removed, a node added or removed: `mark_changed`), else the unneeded set
and its timers carry over unchanged; a recomputed plan re-evaluates only the nodes that changed
since the previous one (`schedsim.autoscaler.scaledown.ScaleDownCache`: utilization,
eligibility, pods to move), and simulates the removal of every candidate again, as CA does.

Differences from CA, deliberate: nodes are deleted at once (no drain time; their pods are
evicted and return to the scheduling queue); the provisioning delay is one number for every
group (`AutoscalerOptions.node_provision_delay`, no cloud provider); ties between expander
options go to the first group in the file (CA's random fallback); the unremovable-nodes
recheck timeout and the candidate-pool limits are not emulated (every candidate is simulated
when the plan is recomputed). As CA's planner, the removal simulations keep one hinting
simulator for the replay (a pod is tried first on the node it went to in the last two plans;
the older generation is dropped after every plan, CA ``DropOldHints``); a loop that skips the
plan (nothing changed) drops nothing, where CA re-plans and drops.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Final

import attrs

from schedsim.api.apps.workloads import DaemonSet
from schedsim.api.core import Pod
from schedsim.autoscaler.drain import DrainContext, pods_to_move, remaining_pdb_tracker
from schedsim.autoscaler.hinting import HintingSimulator
from schedsim.autoscaler.nodegroups import NodeGroup
from schedsim.autoscaler.sanitize import sanitized_node_info
from schedsim.autoscaler.scaledown import (
    DEFAULT_GPU_UTILIZATION_THRESHOLD,
    DEFAULT_UTILIZATION_THRESHOLD,
    ScaleDownCache,
    scale_down,
)
from schedsim.autoscaler.scaleup import DEFAULT_MAX_NODES_PER_SCALE_UP, EXPANDERS, scale_up
from schedsim.snapshot.infos import NodeInfo
from schedsim.snapshot.predicate import PredicateSnapshot

__all__ = [
    "SCALE_DOWN",
    "SCALE_UP",
    "SCALE_UP_TIMEOUT",
    "Autoscaler",
    "AutoscalerOptions",
    "LoopDecision",
    "OptionError",
    "ScaleEvent",
]

SCALE_UP: Final = "scale-up"
SCALE_DOWN: Final = "scale-down"
SCALE_UP_TIMEOUT: Final = "scale-up-timeout"


class OptionError(ValueError):
    """An `AutoscalerOptions` value out of range.

    Attributes:
        option: the attribute (``scan_interval``), named after CA's flag (``--scan-interval``)
            so that callers can name the flag or spec field the user wrote.
        problem: what is wrong, e.g. ``must be > 0, got 0.0``.
    """

    def __init__(self, option: str, problem: str) -> None:
        self.option = option
        self.problem = problem
        super().__init__(f"{option}: {problem}")


def _check_duration(name: str, value: float) -> None:
    if not value >= 0 or math.isinf(value):
        raise OptionError(name, f"must be a finite number >= 0, got {value}")


def _positive(_: object, attribute: attrs.Attribute[float], value: float) -> None:
    _check_duration(attribute.name, value)


@attrs.frozen
class AutoscalerOptions:
    """The autoscaler's settings, named after CA's flags (durations in seconds).

    Attributes:
        scan_interval: ``--scan-interval`` (CA default 10s); must be > 0.
        scale_down_enabled: ``--scale-down-enabled`` (default true).
        scale_down_unneeded_time: ``--scale-down-unneeded-time`` (10m).
        scale_down_delay_after_add: ``--scale-down-delay-after-add`` (10m).
        scale_down_delay_after_delete: ``--scale-down-delay-after-delete``; None: the scan
            interval, CA's default.
        scale_down_delay_after_failure: ``--scale-down-delay-after-failure`` (3m).
        scale_down_utilization_threshold: ``--scale-down-utilization-threshold`` (0.5).
        scale_down_gpu_utilization_threshold: ``--scale-down-gpu-utilization-threshold`` (0.5).
        max_node_provision_time: ``--max-node-provision-time`` (15m).
        node_provision_delay: how long a new node takes to become ready (not a CA flag: the
            cloud's part; default 60s).
        expander: ``--expander``: ``least-waste`` (default here; CA's default is random) or
            ``most-pods``.
        max_nodes_per_scaleup: ``--max-nodes-per-scaleup`` (1000).
        max_scale_down_parallelism: ``--max-scale-down-parallelism`` (10).
        initial_node_group_backoff_duration: ``--initial-node-group-backoff-duration`` (5m).
        max_node_group_backoff_duration: ``--max-node-group-backoff-duration`` (30m).

    Raises:
        OptionError: a negative or infinite duration, a zero scan interval, an unknown
            expander, a threshold outside [0, 1], a negative max-nodes-per-scaleup, a
            max-scale-down-parallelism below 1.
    """

    scan_interval: float = attrs.field(default=10.0, validator=_positive)
    scale_down_enabled: bool = True
    scale_down_unneeded_time: float = attrs.field(default=600.0, validator=_positive)
    scale_down_delay_after_add: float = attrs.field(default=600.0, validator=_positive)
    scale_down_delay_after_delete: float | None = None
    scale_down_delay_after_failure: float = attrs.field(default=180.0, validator=_positive)
    scale_down_utilization_threshold: float = DEFAULT_UTILIZATION_THRESHOLD
    scale_down_gpu_utilization_threshold: float = DEFAULT_GPU_UTILIZATION_THRESHOLD
    max_node_provision_time: float = attrs.field(default=900.0, validator=_positive)
    node_provision_delay: float = attrs.field(default=60.0, validator=_positive)
    expander: str = "least-waste"
    max_nodes_per_scaleup: int = DEFAULT_MAX_NODES_PER_SCALE_UP
    max_scale_down_parallelism: int = 10
    initial_node_group_backoff_duration: float = attrs.field(default=300.0, validator=_positive)
    max_node_group_backoff_duration: float = attrs.field(default=1800.0, validator=_positive)

    def __attrs_post_init__(self) -> None:
        # checked here, not at the first scale-up: a trace that never scales up must not
        # accept what CA refuses at start-up
        if self.scan_interval <= 0:
            raise OptionError("scan_interval", f"must be > 0, got {self.scan_interval}")
        if self.expander not in EXPANDERS:
            raise OptionError(
                "expander", f"expected one of {', '.join(EXPANDERS)}, got {self.expander!r}"
            )
        for name in ("scale_down_utilization_threshold", "scale_down_gpu_utilization_threshold"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise OptionError(name, f"must be between 0 and 1, got {getattr(self, name)}")
        if self.max_nodes_per_scaleup < 0:
            raise OptionError(
                "max_nodes_per_scaleup", f"must be >= 0, got {self.max_nodes_per_scaleup}"
            )
        if self.max_scale_down_parallelism < 1:
            raise OptionError(
                "max_scale_down_parallelism", f"must be >= 1, got {self.max_scale_down_parallelism}"
            )
        if self.scale_down_delay_after_delete is not None:
            _check_duration("scale_down_delay_after_delete", self.scale_down_delay_after_delete)

    @property
    def delay_after_delete(self) -> float:
        """``--scale-down-delay-after-delete``, the scan interval when unset (CA)."""
        d = self.scale_down_delay_after_delete
        return self.scan_interval if d is None else d


@attrs.frozen
class ScaleEvent:
    """One thing the autoscaler did.

    Attributes:
        time: seconds since the trace's start.
        kind: `SCALE_UP`, `SCALE_DOWN` or `SCALE_UP_TIMEOUT`.
        group: the node group.
        nodes: the nodes added (requested), deleted, or given up.
        reason: why, in words (the pods that triggered a scale-up, the utilization and
            unneeded time of a deleted node).
        pods: keys of the pods involved (those a scale-up is for, those a deletion evicts).
    """

    time: float
    kind: str
    group: str
    nodes: tuple[str, ...]
    reason: str
    pods: tuple[str, ...] = ()


@attrs.frozen
class LoopDecision:
    """What one loop decided; the replay applies it.

    Attributes:
        add: (group, node name, the node's NodeInfo) of nodes requested now.
        delete: node names to delete now.
        events: the scale events (one per scale-up, one per deleted node).
        unhelped: pod key -> why no group helps it (group -> reason), from this loop's
            scale-up simulation.
    """

    add: tuple[tuple[str, str, NodeInfo], ...] = ()
    delete: tuple[str, ...] = ()
    events: tuple[ScaleEvent, ...] = ()
    unhelped: Mapping[str, Mapping[str, str]] = attrs.field(factory=dict)


def _fmt(seconds: float) -> str:
    m, s = divmod(round(seconds), 60)
    h, m = divmod(m, 60)
    return f"{h}h{m}m{s}s" if h else f"{m}m{s}s"


class Autoscaler:
    """The autoscaler's state between loops (see the module docstring).

    Args:
        groups: the node groups (file order).
        templates: group name -> its template NodeInfo (`template_node_info`).
        options: the settings.
        members: node name -> group name for the cluster's nodes at the start.
        taken: every node name of the cluster at the start (new nodes get other names).
        daemon_sets: the cluster's DaemonSets (template nodes run their pods).
        pod_level_resources: the PodLevelResources gate (for template copies).

    Attributes:
        group_of: node name -> group, for ready nodes.
        upcoming: node name -> (group, time it was requested) of nodes being provisioned.
        unneeded_since: node name -> when it was first found unneeded (current plan).
    """

    def __init__(
        self,
        groups: Sequence[NodeGroup],
        templates: Mapping[str, NodeInfo],
        options: AutoscalerOptions,
        members: Mapping[str, str],
        taken: Sequence[str] = (),
        *,
        daemon_sets: Sequence[DaemonSet] = (),
        pod_level_resources: bool = True,
    ) -> None:
        self.groups = tuple(groups)
        self.templates = dict(templates)
        self.options = options
        self.group_of: dict[str, str] = dict(members)
        self.upcoming: dict[str, tuple[str, float]] = {}
        self.unneeded_since: dict[str, float] = {}
        self._unneeded_detail: dict[str, str] = {}
        self.daemon_sets = tuple(daemon_sets)
        self.plr = pod_level_resources
        self.last_scale_up = -math.inf
        self.last_delete = -math.inf
        self.last_failure = -math.inf
        self.backoff_until: dict[str, float] = {}
        self._backoff: dict[str, float] = {}
        self._failed_at: dict[str, float] = {}
        self._counter: dict[str, int] = {}
        self._changed = True
        self._generation = 0  # bumped by every change a scale-up simulation could see
        self._noop: tuple[object, ...] | None = None  # the inputs of the last futile scale-up
        self._noop_unhelped: Mapping[str, Mapping[str, str]] = {}
        self.plans = 0
        self._plan_cache = ScaleDownCache()  # per-node results of the last plan
        # CA's planner keeps one RemovalSimulator (and its hints) for its lifetime
        self._removal_simulator = HintingSimulator()
        self.scale_up_runs = 0
        self.taken: set[str] = set(taken) | set(members)

    # ------------------------------------------------------------------ bookkeeping

    def mark_changed(self) -> None:
        """The cluster changed (a pod bound or removed, a node added or removed): the next
        loop recomputes the scale-down plan."""
        self._changed = True
        self._generation += 1

    def node_ready(self, name: str) -> str:
        """An upcoming node joined the cluster; returns its group."""
        group, _ = self.upcoming.pop(name)
        self.group_of[name] = group
        self._changed = True
        self._generation += 1
        return group

    def provision_timeout(self, name: str, now: float) -> ScaleEvent | None:
        """``--max-node-provision-time`` passed for an upcoming node: it is given up and its
        group backs off (CA clusterstate ``RegisterFailedScaleUp``). None when the node is
        already ready."""
        entry = self.upcoming.pop(name, None)
        if entry is None:
            return None
        group = entry[0]
        self._generation += 1
        o = self.options
        step = self._backoff.get(group, 0.0)
        if self._failed_at.get(group) != now:  # one failed scale-up, however many nodes
            step = (
                o.initial_node_group_backoff_duration
                if step == 0
                else min(step * 2, o.max_node_group_backoff_duration)
            )
            self._failed_at[group] = now
            self._backoff[group] = step
            self.backoff_until[group] = now + step
        return ScaleEvent(
            now,
            SCALE_UP_TIMEOUT,
            group,
            (name,),
            f"not ready after --max-node-provision-time {_fmt(o.max_node_provision_time)}; "
            f"group backs off for {_fmt(step)}",
        )

    def node_removed(self, name: str) -> None:
        """A node left the cluster."""
        self.group_of.pop(name, None)
        self.unneeded_since.pop(name, None)
        self._changed = True
        self._generation += 1

    def sizes(self) -> dict[str, int]:
        """Group -> ready nodes."""
        out = {g.name: 0 for g in self.groups}
        for g in self.group_of.values():
            out[g] = out.get(g, 0) + 1
        return out

    def upcoming_sizes(self) -> dict[str, int]:
        """Group -> nodes being provisioned."""
        out = {g.name: 0 for g in self.groups}
        for g, _ in self.upcoming.values():
            out[g] += 1
        return out

    def _members(self) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {g.name: set() for g in self.groups}
        for node, g in self.group_of.items():
            out[g].add(node)
        return out

    def _new_name(self, group: str) -> str:
        template = self.templates[group].node
        assert template is not None
        while True:
            i = self._counter.get(group, 0)
            self._counter[group] = i + 1
            name = f"{template.name}-{i}"
            if name not in self.taken:
                self.taken.add(name)
                return name

    def _copy(self, group: str, name: str) -> NodeInfo:
        return sanitized_node_info(self.templates[group], name, name, pod_level_resources=self.plr)

    # ------------------------------------------------------------------ the loop

    def run_once(
        self, now: float, snapshot: PredicateSnapshot, unschedulable: Sequence[Pod]
    ) -> LoopDecision:
        """One ``RunOnce`` at ``now`` over the cluster in ``snapshot`` (left unchanged: every
        simulation runs in a fork that is reverted).

        Args:
            now: seconds since the trace's start.
            snapshot: the cluster as it is (ready nodes, bound pods).
            unschedulable: pods kube-scheduler could not place, in queue order.

        Returns:
            the nodes to request and to delete, with their events.

        Raises:
            SchedulingError, SanitizationError: as `scale_up` / `scale_down`.
        """
        if unschedulable:
            decision = self._scale_up(now, snapshot, unschedulable)
            if decision.add:
                return decision
            unhelped = decision.unhelped
        else:
            unhelped = {}
        if not self.options.scale_down_enabled:
            return LoopDecision(unhelped=unhelped)
        self._update_unneeded(now, snapshot)
        deletions, events = self._deletions(now, snapshot)
        return LoopDecision(delete=deletions, events=events, unhelped=unhelped)

    def _scale_up(
        self, now: float, snapshot: PredicateSnapshot, pods: Sequence[Pod]
    ) -> LoopDecision:
        o = self.options
        members = self._members()
        for name, (g, _) in self.upcoming.items():
            members[g].add(name)
        groups = [
            attrs.evolve(g, nodes=frozenset(members[g.name]), node_selector={}, current_size=None)
            for g in self.groups
            if self.backoff_until.get(g.name, -math.inf) <= now
        ]
        if not groups:
            return LoopDecision()
        # The same cluster, the same pods, the same groups: the same (futile) answer.
        inputs = (self._generation, tuple(p.key for p in pods), tuple(g.name for g in groups))
        if inputs == self._noop:
            return LoopDecision(unhelped=self._noop_unhelped)
        self.scale_up_runs += 1
        with snapshot.forked():  # the upcoming nodes count only for this decision
            for name, (g, _) in self.upcoming.items():
                snapshot.add_node_info(self._copy(g, name))
            result = scale_up(
                snapshot,
                pods,
                groups,
                expander=o.expander,
                max_nodes_per_scale_up=o.max_nodes_per_scaleup,
                daemon_sets=self.daemon_sets,
            )
        unhelped = {u.pod.key: dict(u.reasons) for u in result.unhelped}
        chosen = result.chosen_option
        if chosen is None:
            self._noop, self._noop_unhelped = inputs, unhelped
            return LoopDecision(unhelped=unhelped)
        self._generation += 1
        add = []
        for _ in range(chosen.node_count):
            name = self._new_name(chosen.name)
            self.upcoming[name] = (chosen.name, now)
            add.append((chosen.name, name, self._copy(chosen.name, name)))
        self.last_scale_up = now
        keys = tuple(p.key for p in chosen.pods)
        counted = chosen.counted_nodes_note()
        reason = (
            f"{len(keys)} unschedulable pod(s) fit {chosen.node_count} new node(s) "
            f"(expander {o.expander})"
            if not counted
            # CA counts an existing node the hostname-spread step used (newNodesWithPods)
            else f"{len(keys)} unschedulable pod(s) fit {counted}; adding "
            f"{chosen.node_count} node(s), as Cluster Autoscaler counts the existing node(s) "
            f"too (expander {o.expander})"
        )
        event = ScaleEvent(now, SCALE_UP, chosen.name, tuple(n for _, n, _ in add), reason, keys)
        return LoopDecision(add=tuple(add), events=(event,), unhelped=unhelped)

    def _update_unneeded(self, now: float, snapshot: PredicateSnapshot) -> None:
        if not self._changed:
            return
        o = self.options
        members = self._members()
        groups = [
            attrs.evolve(g, nodes=frozenset(members[g.name]), node_selector={}, current_size=None)
            for g in self.groups
        ]
        with snapshot.forked():  # a plan only: its committed removals are undone
            plan = scale_down(
                snapshot,
                (),
                threshold=o.scale_down_utilization_threshold,
                gpu_threshold=o.scale_down_gpu_utilization_threshold,
                node_groups=groups,
                cache=self._plan_cache,
                removal_simulator=self._removal_simulator,
            )
        # CA Planner.UpdateClusterState: p.rs.DropOldHints() after every update
        self._removal_simulator.hints.drop_old()
        self.plans += 1
        self._changed = False
        since: dict[str, float] = {}
        detail: dict[str, str] = {}
        for v in plan.verdicts:
            if not v.removable:
                continue
            since[v.node] = self.unneeded_since.get(v.node, now)
            u = v.utilization
            moved = f"its {len(v.moved)} pod(s) fit elsewhere" if v.moved else "empty"
            detail[v.node] = (
                f"{u.basis} utilization {u.value:.2f} at or below the threshold; {moved}"
                if u is not None
                else moved
            )
        self.unneeded_since = since
        self._unneeded_detail = detail

    def wake_time(self, now: float, pending: bool) -> float:
        """The earliest time at which a loop could act without any new event (a pod or a
        node changing): now when the scale-down plan is stale, when an unneeded node's
        timer and the cooldown allow a deletion, when a backed-off group returns while pods
        wait; infinity when no loop could do anything. The replay skips the loops before it
        (their outcome is known: nothing)."""
        o = self.options
        if self._changed and o.scale_down_enabled:
            return now
        wake = math.inf
        if self.unneeded_since and o.scale_down_enabled:
            cooldown = max(
                self.last_scale_up + o.scale_down_delay_after_add,
                self.last_delete + o.delay_after_delete,
                self.last_failure + o.scale_down_delay_after_failure,
            )
            first = min(self.unneeded_since.values()) + o.scale_down_unneeded_time
            wake = max(first, cooldown)
        if pending:
            for until in self.backoff_until.values():
                if until > now:
                    wake = min(wake, until)
        return wake

    def in_cooldown(self, now: float) -> bool:
        """Scale-down is paused (CA ``isScaleDownInCooldown``): within
        ``--scale-down-delay-after-add`` of the last scale-up, ``-after-delete`` of the last
        deletion or ``-after-failure`` of the last failure."""
        o = self.options
        return (
            now < self.last_scale_up + o.scale_down_delay_after_add
            or now < self.last_delete + o.delay_after_delete
            or now < self.last_failure + o.scale_down_delay_after_failure
        )

    def _deletions(
        self, now: float, snapshot: PredicateSnapshot
    ) -> tuple[tuple[str, ...], tuple[ScaleEvent, ...]]:
        o = self.options
        if not self.unneeded_since or self.in_cooldown(now):
            return (), ()
        ready = [n for n, t in self.unneeded_since.items() if now - t >= o.scale_down_unneeded_time]
        if not ready:
            return (), ()

        # the budgets as the plan read them: a kube-system pod a budget covers moves
        budgets = snapshot.framework.handle.object_listers.pod_disruption_budgets
        drain = DrainContext(remaining_pdb_tracker(budgets))

        def empty(name: str) -> bool:
            movable, blocking = pods_to_move(snapshot.get_node_info(name), drain)
            return blocking is None and not movable

        ready.sort(key=lambda n: not empty(n))  # stable: plan order within each kind
        chosen = ready[: o.max_scale_down_parallelism]
        events = []
        for name in chosen:
            movable, _ = pods_to_move(snapshot.get_node_info(name), drain)
            t = self.unneeded_since[name]
            events.append(
                ScaleEvent(
                    now,
                    SCALE_DOWN,
                    self.group_of.get(name, ""),
                    (name,),
                    f"unneeded for {_fmt(now - t)} (>= --scale-down-unneeded-time "
                    f"{_fmt(o.scale_down_unneeded_time)}): {self._unneeded_detail.get(name, '')}",
                    tuple(p.key for p in movable),
                )
            )
        self.last_delete = now
        return tuple(chosen), tuple(events)
