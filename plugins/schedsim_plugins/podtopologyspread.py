"""PodTopologySpread: mirrors kube-scheduler's ``PodTopologySpread`` plugin
(pkg/scheduler/framework/plugins/podtopologyspread: common.go, filtering.go, scoring.go,
plugin.go) at 1.34: PreFilter (+ AddPod/RemovePod), Filter, PreScore, Score, NormalizeScore.

PreFilter counts matching pods per domain through `schedsim.framework.pod_index.PodIndex`
(pod signatures per node, refreshed by node generation), PreScore/Score through
`SpreadCounter` (per-node counts per selector, recounted only for nodes that changed);
upstream recounts every pod of every node for each pod.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from itertools import repeat
from operator import attrgetter, is_
from typing import Any, ClassVar, cast

from schedsim.api.core import Node, Pod
from schedsim.api.core.nodeaffinity import Matcher, match_all, required_node_affinity
from schedsim.api.core.spread import (
    DO_NOT_SCHEDULE,
    SCHEDULE_ANYWAY,
    TopologySpreadConstraint,
    label_key_requirements,
)
from schedsim.api.labels import LabelSelector
from schedsim.framework import (
    Code,
    CycleState,
    Handle,
    NodeInfo,
    PodInfo,
    StateKey,
    Status,
)
from schedsim.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
    as_kind,
    pod_events_by_assignment,
)
from schedsim_plugins.podtopologyspread_common import (
    LABEL_HOSTNAME,
    SYSTEM_DEFAULT_CONSTRAINTS,
    Constraint,
    DomainCounts,
    SelectorKey,
    SpreadCounter,
    count_pods_match_selector,
    decode_args,
    default_selector,
    labels_match,
    selector_key,
)

__all__ = [
    "ERR_REASON_CONSTRAINTS_NOT_MATCH",
    "ERR_REASON_NODE_LABEL_NOT_MATCH",
    "PRE_FILTER_STATE_KEY",
    "PRE_SCORE_STATE_KEY",
    "SYSTEM_DEFAULT_CONSTRAINTS",
    "PodTopologySpread",
    "PreFilterState",
    "PreScoreState",
    "count_pods_match_selector",
    "default_selector",
]

NAME = "PodTopologySpread"

ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
"""Filter: the skew would exceed maxSkew (``ErrReasonConstraintsNotMatch``)."""
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"
"""Filter: the node lacks a constraint's topology key (``ErrReasonNodeLabelNotMatch``)."""

_MAX_INT32 = 2**31 - 1
_MAX_NODE_SCORE = 100
_INVALID_SCORE = -1

_SKIP = Status(Code.Skip, (), NAME)
_NOT_MATCH = Status(Code.Unschedulable, (ERR_REASON_CONSTRAINTS_NOT_MATCH,), NAME)
_LABEL_NOT_MATCH = Status(
    Code.UnschedulableAndUnresolvable, (ERR_REASON_NODE_LABEL_NOT_MATCH,), NAME
)
_NODE = attrgetter("node")
_LABELS = attrgetter("node.labels")
_DOMAIN_COUNTS_LIMIT = 256  # (namespace, selector, key) entries kept before starting over


# ------------------------------------------------------------------------------ PreFilter state


class CriticalPaths:
    """The two domains with the fewest matching pods (``criticalPaths`` upstream, same update
    rule): ``values[0]``/``nums[0]`` always hold the minimum; slot 1 is at least it."""

    __slots__ = ("nums", "values")

    def __init__(self) -> None:
        self.values = ["", ""]
        self.nums = [_MAX_INT32, _MAX_INT32]

    def clone(self) -> CriticalPaths:
        c = CriticalPaths()
        c.values = list(self.values)
        c.nums = list(self.nums)
        return c

    def update(self, tp_val: str, num: int) -> None:
        values, nums = self.values, self.nums
        i = 0 if tp_val == values[0] else 1 if tp_val == values[1] else -1
        if i >= 0:
            nums[i] = num
            if nums[0] > nums[1]:
                values.reverse()
                nums.reverse()
        elif num < nums[0]:
            values[1], nums[1] = values[0], nums[0]
            values[0], nums[0] = tp_val, num
        elif num < nums[1]:
            values[1], nums[1] = tp_val, num


class PreFilterState:
    """What PreFilter leaves for Filter (``preFilterState``): the hard constraints, per
    constraint the matching-pod count per topology value, and the critical paths."""

    __slots__ = ("constraints", "critical_paths", "tp_value_to_match_num")

    def __init__(
        self,
        constraints: tuple[Constraint, ...],
        tp_value_to_match_num: list[dict[str, int]],
        critical_paths: list[CriticalPaths],
    ) -> None:
        self.constraints = constraints
        self.tp_value_to_match_num = tp_value_to_match_num
        self.critical_paths = critical_paths

    def clone(self) -> PreFilterState:
        """A copy whose counts can be updated independently (constraints shared)."""
        return PreFilterState(
            self.constraints,
            [dict(m) for m in self.tp_value_to_match_num],
            [p.clone() for p in self.critical_paths],
        )

    def min_match_num(self, i: int, min_domains: int) -> int:
        """The global minimum, 0 when fewer than minDomains domains are eligible."""
        if len(self.tp_value_to_match_num[i]) < min_domains:
            return 0
        return self.critical_paths[i].nums[0]


class PreScoreState:
    """What PreScore leaves for Score (``preScoreState``)."""

    __slots__ = (
        "constraints",
        "ignored_nodes",
        "node_values",
        "scored_nodes",
        "topology_normalizing_weight",
        "tp_counts",
    )

    def __init__(self) -> None:
        self.constraints: tuple[Constraint, ...] = ()
        self.ignored_nodes: set[str] = set()
        self.tp_counts: list[dict[str, int]] = []
        self.topology_normalizing_weight: list[float] = []
        # the nodes PreScore was given and their topology values (`node_values`)
        self.scored_nodes: Sequence[NodeInfo] = ()
        self.node_values: list[NodeValues] = []


PRE_FILTER_STATE_KEY: StateKey[PreFilterState] = StateKey("PreFilter" + NAME)
PRE_SCORE_STATE_KEY: StateKey[PreScoreState] = StateKey("PreScore" + NAME)

_NO_PRE_FILTER_STATE = Status(
    Code.Error, (f'reading "{PRE_FILTER_STATE_KEY.name}" from cycleState: not found',), NAME
)
_NO_PRE_SCORE_STATE = Status(
    Code.Error, (f'error reading "{PRE_SCORE_STATE_KEY.name}" from cycleState: not found',), NAME
)


# ------------------------------------------------------------------------------ plugin


class PodTopologySpread:
    """Mirrors kube-scheduler's ``PodTopologySpread`` plugin (1.34).

    Constraints: the pod's ``topologySpreadConstraints`` of the extension point's kind
    (DoNotSchedule for PreFilter/Filter, ScheduleAnyway for PreScore/Score); a pod without
    any gets the plugin's default constraints (``defaultingType: System`` = hostname maxSkew
    3 and zone maxSkew 5, both ScheduleAnyway; ``List`` = ``defaultConstraints``) with the
    selector `default_selector` builds, and none when that selector is empty. matchLabelKeys
    add ``key In [pod's value]`` (gate MatchLabelKeysInPodTopologySpread); minDomains
    defaults to 1, nodeAffinityPolicy to Honor, nodeTaintsPolicy to Ignore.

    PreFilter: Skip without hard constraints; else, over every node having all topology keys
    (and passing each constraint's inclusion policies), count the pod's namespace's
    non-terminating pods the selector matches per topology value. Filter: a node without a
    topology key -> UnschedulableAndUnresolvable "... (missing required label)"; matching
    pods in the node's domain + 1 if the pod matches itself - the global minimum (0 when
    fewer than minDomains domains) > maxSkew -> Unschedulable
    "node(s) didn't match pod topology spread constraints". AddPod/RemovePod update the
    counts for preemption's dry runs.

    Score: per soft constraint, count matching pods per domain over all nodes (hostname
    domains per node at Score) and score ``round(sum(count * ln(domains + 2) + maxSkew - 1))``;
    nodes lacking a topology key are ignored (score 0) unless the constraints are the system
    defaults. NormalizeScore: ``100 * (max + min - score) / max`` (100 for all when max is 0).

    Args (PodTopologySpreadArgs): ``defaultConstraints``, ``defaultingType`` (List|System,
    default System).
    """

    name: ClassVar[str] = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        self.default_constraints, self.system_defaulted = decode_args(args)
        self._handle = handle
        gates = handle.feature_gates
        self.enable_node_inclusion_policy = gates.enabled("NodeInclusionPolicyInPodTopologySpread")
        self.enable_match_label_keys = gates.enabled("MatchLabelKeysInPodTopologySpread")
        self.counter = SpreadCounter()
        # shared with the other plugins of the framework: refreshed once per pod
        self.index = handle.pod_index
        # (namespace, selector, topology key) -> its matching pods per domain
        self._counts: dict[tuple[str, SelectorKey, tuple[tuple[str, ...], int]], DomainCounts] = {}
        # topology keys -> (the Node objects, zero counts per domain, node -> domain)
        self._domain_cache: dict[
            tuple[str, ...], tuple[list[Node | None], list[dict[str, int]], list[dict[str, str]]]
        ] = {}

    # -------------------------------------------------------------- constraints

    def _filter_constraints(
        self,
        constraints: Sequence[TopologySpreadConstraint],
        pod_labels: Mapping[str, str],
        action: str,
    ) -> list[Constraint]:
        """``filterTopologySpreadConstraints``."""
        out = []
        for c in constraints:
            if c.when_unsatisfiable != action:
                continue
            selector = c.label_selector
            if self.enable_match_label_keys and c.match_label_keys:
                extra = label_key_requirements(c.match_label_keys, pod_labels, "In")
                if extra:
                    selector = (
                        LabelSelector(match_expressions=extra)
                        if selector is None
                        else selector.with_requirements(extra)
                    )
            tsc = Constraint(c.max_skew, c.topology_key, selector)
            if c.min_domains is not None:
                tsc.min_domains = c.min_domains
            if self.enable_node_inclusion_policy:
                if c.node_affinity_policy is not None:
                    tsc.honor_node_affinity = c.node_affinity_policy == "Honor"
                if c.node_taints_policy is not None:
                    tsc.honor_node_taints = c.node_taints_policy == "Honor"
            out.append(tsc)
        return out

    def _constraints(self, pod: Pod, action: str) -> tuple[Constraint, ...]:
        """The pod's constraints of kind ``action``, or its default ones
        (``getConstraints`` / ``buildDefaultConstraints``)."""
        if pod.topology_spread_constraints:
            return tuple(
                self._filter_constraints(pod.topology_spread_constraints, pod.labels, action)
            )
        constraints = self._filter_constraints(self.default_constraints, pod.labels, action)
        if not constraints:
            return ()
        selector = default_selector(pod, self._handle.object_listers)
        if selector.is_empty:
            return ()
        key = selector_key(selector)
        for c in constraints:
            c.selector = selector
            c.selector_key = key
        return tuple(constraints)

    # -------------------------------------------------------------- queueing hints

    def events_to_register(self) -> tuple[ClusterEventWithHint, ...]:
        """``EventsToRegister`` (plugin.go, 1.34, SchedulerQueueingHints on): pod Add,
        UpdatePodLabel, UpdatePodToleration and Delete with the pod hint, Node Add, Delete,
        UpdateNodeLabel and UpdateNodeTaint with `is_schedulable_after_node_change`.

        Upstream registers ``Pod`` and its hint (``involvedInTopologySpreading``) counts a
        pod with ``spec.nodeName`` in the pending pod's namespace, or the pending pod itself;
        a pod the simulation placed keeps an empty ``spec.nodeName`` (its node is the
        snapshot's), so schedsim registers ``AssignedPod`` events with
        `is_schedulable_after_pod_change` and ``UnscheduledPod`` events with
        `is_schedulable_after_unscheduled_pod_change`."""
        pod_actions = (
            ActionType.Add
            | ActionType.UpdatePodLabel
            | ActionType.UpdatePodToleration
            | ActionType.Delete
        )
        node_actions = (
            ActionType.Add
            | ActionType.Delete
            | ActionType.UpdateNodeLabel
            | ActionType.UpdateNodeTaint
        )
        return (
            *pod_events_by_assignment(
                pod_actions,
                self.is_schedulable_after_pod_change,
                self.is_schedulable_after_unscheduled_pod_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.Node, node_actions),
                self.is_schedulable_after_node_change,
            ),
        )

    def is_schedulable_after_pod_change(self, pod: Pod, old: object, new: object) -> QueueingHint:
        """``isSchedulableAfterPodChange`` for an assigned pod: a pod of another namespace
        (not the pending pod) is skipped; then `_pod_change_hint`. An object of the wrong
        type: Queue."""
        typed = as_kind(Pod, old, new)
        if typed is None:
            return QueueingHint.Queue
        for p in typed:
            if isinstance(p, Pod) and p.uid != pod.uid and p.namespace != pod.namespace:
                return QueueingHint.QueueSkip
        return self._pod_change_hint(pod, typed[0], typed[1])

    def is_schedulable_after_unscheduled_pod_change(
        self, pod: Pod, old: object, new: object
    ) -> QueueingHint:
        """``isSchedulableAfterPodChange`` for an unscheduled pod: only the pending pod itself
        (same UID) is involved in its spreading; then `_pod_change_hint`."""
        typed = as_kind(Pod, old, new)
        if typed is None:
            return QueueingHint.Queue
        for p in typed:
            if isinstance(p, Pod) and p.uid != pod.uid:
                return QueueingHint.QueueSkip
        return self._pod_change_hint(pod, typed[0], typed[1])

    def _pod_change_hint(self, pod: Pod, original: object, modified: object) -> QueueingHint:
        """The rest of ``isSchedulableAfterPodChange`` over the pending pod's hard
        constraints (``getConstraints``): an update queues when the pending pod itself got
        other tolerations and a constraint honors node taints, or when some constraint's
        selector matches the labels before xor after; an added or deleted pod queues when
        some constraint's selector matches its labels."""
        constraints = self._constraints(pod, DO_NOT_SCHEDULE)
        if isinstance(original, Pod) and isinstance(modified, Pod):
            if (
                modified.uid == pod.uid
                and modified.tolerations != original.tolerations
                and any(c.honor_node_taints for c in constraints)
            ):
                return QueueingHint.Queue
            if modified.labels == original.labels:
                return QueueingHint.QueueSkip
            for c in constraints:
                if c.matches(original.labels) != c.matches(modified.labels):
                    return QueueingHint.Queue
            return QueueingHint.QueueSkip
        changed = modified if isinstance(modified, Pod) else original
        assert isinstance(changed, Pod)
        if any(c.matches(changed.labels) for c in constraints):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_node_change(self, pod: Pod, old: object, new: object) -> QueueingHint:
        """``isSchedulableAfterNodeChange``: a node "matches" when it has every topology key
        of the pending pod's hard constraints. Queue an added or deleted node that matches;
        an update that changes whether the node matches, or of a matching node that changes
        a topology key's value or its taints. An object of the wrong type: Queue."""
        typed = as_kind(Node, old, new)
        if typed is None:
            return QueueingHint.Queue
        original, modified = typed
        constraints = self._constraints(pod, DO_NOT_SCHEDULE)
        was = isinstance(original, Node) and labels_match(constraints, original.labels)
        now = isinstance(modified, Node) and labels_match(constraints, modified.labels)
        if isinstance(original, Node) and isinstance(modified, Node):
            if was != now:
                return QueueingHint.Queue
            if now and (
                any(
                    original.labels.get(c.topology_key) != modified.labels.get(c.topology_key)
                    for c in constraints
                )
                or original.taints != modified.taints
            ):
                return QueueingHint.Queue
            return QueueingHint.QueueSkip
        return QueueingHint.Queue if (now or was) else QueueingHint.QueueSkip

    # -------------------------------------------------------------- PreFilter / Filter

    def pre_filter_reusable(self, pod: Pod) -> bool:
        """A pod without constraints of its own, under default constraints none of which is
        DoNotSchedule, is skipped without reading the listers or the nodes
        (`schedsim.framework.pre_filter_reuse`)."""
        return not pod.topology_spread_constraints and all(
            c.when_unsatisfiable != DO_NOT_SCHEDULE for c in self.default_constraints
        )

    def schedsim_pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None:
        """PreFilter of upstream PodTopologySpread (``calPreFilterState``); matching pods are
        counted through the handle's `PodIndex`."""
        constraints = self._constraints(pod, DO_NOT_SCHEDULE)
        if not constraints:
            return _SKIP
        required = required_node_affinity(pod)
        zero, domains = self._domains(pod, constraints, nodes, required)
        counts = [dict(z) for z in zero]
        pairs = list(zip(constraints, counts, domains, strict=True))
        # matching pods per domain, from the index (kept per domain map, `DomainCounts`)
        idx = self.index
        bound = self._handle.shared_lister.delegate
        idx.refresh(nodes, None if bound is None else bound.node_infos())
        ns = pod.namespace
        keys = tuple(c.topology_key for c in constraints)
        for i, (c, m, dom) in enumerate(pairs):
            if c.selector is None:
                continue
            for v, cnt in self._domain_counts(ns, c, (keys, i), dom).items():
                m[v] += cnt  # every value of ``dom`` is in ``m``
        paths = []
        for m in counts:
            p = CriticalPaths()
            for value, num in m.items():
                p.update(value, num)
            paths.append(p)
        state[PRE_FILTER_STATE_KEY] = PreFilterState(constraints, counts, paths)
        return None

    def _domains(
        self,
        pod: Pod,
        constraints: tuple[Constraint, ...],
        nodes: Sequence[NodeInfo],
        required: Matcher,
    ) -> tuple[list[dict[str, int]], list[dict[str, str]]]:
        """Per constraint: the eligible domains (value -> 0, in node order) and eligible node
        -> its domain. Eligible: the node has every topology key and passes the constraint's
        inclusion policies (without NodeInclusionPolicyInPodTopologySpread: the pod's
        required node affinity).

        For pods without required node affinity and constraints that ignore taints, the
        answer depends on the Node objects only, and is reused while ``nodes`` holds the
        same Node objects (checked by identity, in C): placing pods does not change it.
        """
        cacheable = required is match_all and not any(c.honor_node_taints for c in constraints)
        key = tuple(c.topology_key for c in constraints)
        node_objs: list[Node | None] = []
        if cacheable:
            node_objs = list(map(_NODE, nodes))
            hit = self._domain_cache.get(key)
            if (
                hit is not None
                and len(hit[0]) == len(node_objs)
                and all(map(is_, hit[0], node_objs))
            ):
                return hit[1], hit[2]
        zero: list[dict[str, int]] = [{} for _ in constraints]
        domains: list[dict[str, str]] = [{} for _ in constraints]
        nip = self.enable_node_inclusion_policy
        pairs = list(zip(constraints, zero, domains, strict=True))
        for ni in nodes:
            node = ni.node
            if node is None:
                continue
            labels = node.labels
            if not nip and not required(labels, node.name):
                continue
            if not labels_match(constraints, labels):
                continue
            name = node.name
            for c, m, dom in pairs:
                if nip and not c.includes_node(pod, node, required):
                    continue
                value = labels[c.topology_key]
                if value not in m:
                    m[value] = 0
                dom[name] = value
        if cacheable:
            self._domain_cache[key] = (node_objs, zero, domains)
        return zero, domains

    def filter_topology_keys(self, state: CycleState) -> tuple[str, ...] | None:
        """The node labels Filter reads for this attempt (the constraints' topology keys),
        or None without a PreFilter state: the verdict on a node is a function of those
        label values and ``state`` alone, which lets the scheduler's class cache run Filter
        once per distinct value tuple (`schedsim.scheduler.cache.ResultCache`)."""
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return None
        return tuple(c.topology_key for c in s.constraints)

    def schedsim_filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Filter of upstream PodTopologySpread."""
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return _NO_PRE_FILTER_STATE
        if not s.constraints:
            return None
        node = node_info.node
        labels = node.labels if node is not None else {}
        pod_labels = pod.labels
        for i, c in enumerate(s.constraints):
            tp_val = labels.get(c.topology_key)
            if tp_val is None:
                return _LABEL_NOT_MATCH
            min_match = s.min_match_num(i, c.min_domains)
            self_match = 1 if c.matches(pod_labels) else 0
            match = s.tp_value_to_match_num[i].get(tp_val, 0)
            if match + self_match - min_match > c.max_skew:
                return _NOT_MATCH
        return None

    def _update_with_pod(
        self, s: PreFilterState, updated: Pod, preemptor: Pod, node: Node | None, delta: int
    ) -> None:
        """``updateWithPod``."""
        if updated.namespace != preemptor.namespace or node is None:
            return
        labels = node.labels
        if not labels_match(s.constraints, labels):
            return
        required = required_node_affinity(preemptor)
        nip = self.enable_node_inclusion_policy
        if not nip and not required(labels, node.name):
            return
        for i, c in enumerate(s.constraints):
            if not c.matches(updated.labels):
                continue
            if nip and not c.includes_node(preemptor, node, required):
                continue
            v = labels[c.topology_key]
            m = s.tp_value_to_match_num[i]
            m[v] = m.get(v, 0) + delta
            s.critical_paths[i].update(v, m[v])

    def schedsim_pre_filter_add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        """AddPod of upstream PodTopologySpread's PreFilterExtensions."""
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return _NO_PRE_FILTER_STATE
        self._update_with_pod(s, pod_info_to_add.pod, pod_to_schedule, node_info.node, 1)
        return None

    def schedsim_pre_filter_remove_pod(
        self,
        state: CycleState,
        pod_to_schedule: Pod,
        pod_info_to_remove: PodInfo,
        node_info: NodeInfo,
    ) -> Status | None:
        """RemovePod of upstream PodTopologySpread's PreFilterExtensions."""
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return _NO_PRE_FILTER_STATE
        self._update_with_pod(s, pod_info_to_remove.pod, pod_to_schedule, node_info.node, -1)
        return None

    # -------------------------------------------------------------- PreScore / Score

    def schedsim_pre_score(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None:
        """PreScore of upstream PodTopologySpread (``initPreScoreState`` + counting). The
        feasible nodes are read once per distinct tuple of their topology values."""
        all_nodes = self._handle.shared_lister.node_infos().list()
        if not all_nodes:
            return _SKIP
        s = PreScoreState()
        require_all = bool(pod.topology_spread_constraints) or not self.system_defaulted
        s.constraints = self._constraints(pod, SCHEDULE_ANYWAY)
        if not s.constraints:
            return _SKIP
        s.tp_counts = [{} for _ in s.constraints]
        topo_size = [0] * len(s.constraints)
        values = node_values(nodes, tuple(c.topology_key for c in s.constraints))
        s.scored_nodes, s.node_values = nodes, values
        k = len(s.constraints)
        distinct = {v: _as_tuple(v, k) for v in dict.fromkeys(values) if v is not NO_NODE}
        if require_all:
            # nodes without every topology key are ignored (score 0)
            missing = {v for v, t in distinct.items() if None in t}
            if missing:
                s.ignored_nodes = {
                    ni.node.name
                    for ni, v in zip(nodes, values, strict=True)
                    if v in missing and ni.node is not None
                }
                for v in missing:
                    del distinct[v]
        hostname = [c.topology_key == LABEL_HOSTNAME for c in s.constraints]
        for t in distinct.values():
            for i, v in enumerate(t):
                if hostname[i]:
                    continue
                m = s.tp_counts[i]
                if v is None:
                    v = ""  # Go's zero value for a missing label (only without require_all)
                if v not in m:
                    m[v] = 0
                    topo_size[i] += 1
        for i, c in enumerate(s.constraints):
            size = topo_size[i]
            if c.topology_key == LABEL_HOSTNAME:
                size = len(nodes) - len(s.ignored_nodes)
            s.topology_normalizing_weight.append(math.log(size + 2))

        required = required_node_affinity(pod)
        if require_all:
            self._count_by_index(pod, s, all_nodes, required)
            state[PRE_SCORE_STATE_KEY] = s
            return None
        nip = self.enable_node_inclusion_policy
        ns = pod.namespace
        counter = self.counter
        tables = [counter.table(ns, c) for c in s.constraints]
        for ni in all_nodes:
            node = ni.node
            if node is None:
                continue
            labels = node.labels
            if not nip and not required(labels, node.name):
                continue
            if require_all and not labels_match(s.constraints, labels):
                continue
            for i, c in enumerate(s.constraints):
                if nip and not c.includes_node(pod, node, required):
                    continue
                m = s.tp_counts[i]
                value = labels.get(c.topology_key, "")
                if value not in m:
                    continue  # no candidate node in this domain (or a hostname constraint)
                m[value] += counter.count(tables[i], ni, node.name, ns, c)
        state[PRE_SCORE_STATE_KEY] = s
        return None

    def _count_by_index(
        self, pod: Pod, s: PreScoreState, all_nodes: Sequence[NodeInfo], required: Matcher
    ) -> None:
        """PreScore's matching-pod counts per domain when every node must carry every
        topology key (``requireAllTopologies``): the eligible nodes are PreFilter's
        (`_domains`, cached while the Node objects stay), and the pods are counted through
        the handle's `PodIndex` signatures, not node by node. Same counts as the walk over
        every node (``countPodsMatchSelector`` on the eligible nodes whose domain has a
        candidate node)."""
        _, domains = self._domains(pod, s.constraints, all_nodes, required)
        idx = self.index
        lister = self._handle.shared_lister
        idx.refresh(all_nodes, lister.node_infos())
        ns = pod.namespace
        keys = tuple(c.topology_key for c in s.constraints)
        for i, (c, m, dom) in enumerate(zip(s.constraints, s.tp_counts, domains, strict=True)):
            if c.selector is None or c.topology_key == LABEL_HOSTNAME:
                continue  # hostname: Score counts the node itself
            for v, cnt in self._domain_counts(ns, c, (keys, i), dom).items():
                if v in m:  # a domain with a node being scored
                    m[v] += cnt

    def _domain_counts(
        self, ns: str, c: Constraint, slot: tuple[tuple[str, ...], int], dom: Mapping[str, str]
    ) -> Mapping[str, int]:
        """Matching pods of ``ns`` per domain of ``dom`` (eligible node -> value, the map of
        constraint ``slot[1]`` among constraints with topology keys ``slot[0]``) for ``c``'s
        selector, brought up to date with the refreshed index (`DomainCounts`: O(nodes
        changed) while ``dom`` is `_domains`' cached map of the same Node objects)."""
        assert c.selector is not None
        key = (ns, c.selector_key, slot)
        dc = self._counts.get(key)
        if dc is None or not dc.follows(dom):
            if len(self._counts) >= _DOMAIN_COUNTS_LIMIT:
                self._counts.clear()
            dc = self._counts[key] = DomainCounts(ns, c.selector, dom)
        return dc.counts(self.index)

    def schedsim_score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int | Status:
        """Score of upstream PodTopologySpread: the (weighted) matching pods of the node's
        domains; lower is better, NormalizeScore inverts it."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            return _NO_PRE_SCORE_STATE
        node = node_info.node
        if node is None or node.name in s.ignored_nodes:
            return 0
        labels = node.labels
        score = 0.0
        for i, c in enumerate(s.constraints):
            tp_val = labels.get(c.topology_key)
            if tp_val is None:
                continue
            if c.topology_key == LABEL_HOSTNAME:
                table = self.counter.table(pod.namespace, c)
                cnt = self.counter.count(table, node_info, node.name, pod.namespace, c)
            else:
                cnt = s.tp_counts[i][tp_val]
            score += cnt * s.topology_normalizing_weight[i] + (c.max_skew - 1)
        return _round_half_away(score)

    def score_nodes(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> list[int] | None:
        """`schedsim_score` of each of ``nodes``, in order, in one call (the same values:
        each node's score is a function of its values of the constraints' topology keys and
        the PreScore state, so it is computed once per distinct value tuple; per node only
        for a hostname constraint, whose count is the node's own pods). None without a
        PreScore state (the caller runs Score per node, which reports the error).

        Raises what `schedsim_score` would (KeyError for a node of a domain PreScore did not
        see). Time: O(nodes) C-level + O(distinct value tuples) (+ O(nodes) with a hostname
        constraint)."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            return None
        constraints = s.constraints
        values = (
            s.node_values
            if nodes is s.scored_nodes
            else node_values(nodes, tuple(c.topology_key for c in constraints))
        )
        weights = s.topology_normalizing_weight
        counts = s.tp_counts
        ignored = s.ignored_nodes
        host = [c.topology_key == LABEL_HOSTNAME for c in constraints]
        k = len(constraints)
        if not any(host):
            # None: a domain PreScore did not count (Score raises KeyError on such a node;
            # ignored nodes have them and score 0 without looking)
            by_value: dict[NodeValues, int | None] = {NO_NODE: 0}
            for value in dict.fromkeys(values):
                if value is NO_NODE:
                    continue
                t = _as_tuple(value, k)
                score = 0.0
                try:
                    for i, c in enumerate(constraints):
                        v = t[i]
                        if v is not None:
                            score += counts[i][v] * weights[i] + (c.max_skew - 1)
                except KeyError:
                    by_value[value] = None
                    continue
                by_value[value] = _round_half_away(score)
            if not ignored:
                found = list(map(by_value.__getitem__, values))
            else:
                found = [
                    0 if ni.node is None or ni.node.name in ignored else by_value[v]
                    for ni, v in zip(nodes, values, strict=True)
                ]
            if None in found:
                raise KeyError("a node's domain has no PreScore count")
            return cast(list[int], found)
        # a hostname constraint: each node is its own domain, counted on the node
        ns = pod.namespace
        counter = self.counter
        tables = [
            counter.table(ns, c) if h else None for c, h in zip(constraints, host, strict=True)
        ]
        out: list[int] = []
        for ni, value in zip(nodes, values, strict=True):
            node = ni.node
            if node is None or node.name in ignored:
                out.append(0)
                continue
            t = _as_tuple(value, k)
            score = 0.0
            for i, c in enumerate(constraints):
                v = t[i]
                if v is None:
                    continue
                table = tables[i]
                if table is not None:
                    cnt = counter.count(table, ni, node.name, ns, c)
                else:
                    cnt = counts[i][v]
                score += cnt * weights[i] + (c.max_skew - 1)
            out.append(_round_half_away(score))
        return out

    def schedsim_normalize_score(
        self, state: CycleState, pod: Pod, scores: dict[str, int]
    ) -> Status | None:
        """NormalizeScore of upstream PodTopologySpread: ignored nodes 0; the others
        ``100 * (max + min - score) / max`` (min and max over the others, max at least 0;
        100 when max is 0). Computed once per distinct raw score."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            return _NO_PRE_SCORE_STATE
        ignored = s.ignored_nodes.intersection(scores) if s.ignored_nodes else ()
        kept = {n: v for n, v in scores.items() if n not in ignored} if ignored else scores
        raw = list(kept.values())
        if raw and min(raw) < 0:
            return self._normalize_each(s, scores)  # Go's truncating division, invalidScore
        min_score = min(raw, default=2**63 - 1)
        max_score = max(0, max(raw, default=0))
        if max_score == 0:
            normalized = [_MAX_NODE_SCORE] * len(raw)
        else:
            by_score = {
                v: _MAX_NODE_SCORE * (max_score + min_score - v) // max_score for v in set(raw)
            }
            normalized = list(map(by_score.__getitem__, raw))
        scores.update(zip(list(kept), normalized, strict=True))
        if ignored:
            scores.update(dict.fromkeys(ignored, 0))
        return None

    @staticmethod
    def _normalize_each(s: PreScoreState, scores: dict[str, int]) -> None:
        """NormalizeScore node by node, as upstream writes it (for raw scores below 0: a
        raw -1 is taken for ``invalidScore``)."""
        min_score = 2**63 - 1
        max_score = 0
        for name, score in scores.items():
            if name in s.ignored_nodes:
                scores[name] = _INVALID_SCORE
                continue
            min_score = min(min_score, score)
            max_score = max(max_score, score)
        for name, score in scores.items():
            if score == _INVALID_SCORE:
                scores[name] = 0
            elif max_score == 0:
                scores[name] = _MAX_NODE_SCORE
            else:
                scores[name] = _go_div(_MAX_NODE_SCORE * (max_score + min_score - score), max_score)


def _go_div(a: int, b: int) -> int:
    """Go's integer division (truncates toward zero; Python's ``//`` floors)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


NodeValues = object
"""A node's values of some label keys (`node_values`): the value (or None) for one key, the
tuple of them for several, `NO_NODE` for a NodeInfo without a Node."""

NO_NODE: NodeValues = object()


def node_values(nodes: Sequence[NodeInfo], keys: tuple[str, ...]) -> list[NodeValues]:
    """Each node's values of the labels ``keys`` (None for a missing label; `NodeValues`),
    in ``nodes`` order. Time: O(nodes x keys), C-level."""
    try:
        label_maps = list(map(_LABELS, nodes))
        columns = [list(map(dict.get, label_maps, repeat(k, len(label_maps)))) for k in keys]
    except (AttributeError, TypeError):  # a NodeInfo without a Node, labels not a dict
        return [NO_NODE if ni.node is None else _values_of(ni.node.labels, keys) for ni in nodes]
    if len(columns) == 1:
        return cast(list[NodeValues], columns[0])
    return list(zip(*columns, strict=True))


def _values_of(labels: Mapping[str, str], keys: tuple[str, ...]) -> NodeValues:
    if len(keys) == 1:
        return labels.get(keys[0])
    return tuple(map(labels.get, keys))


def _as_tuple(v: NodeValues, n: int) -> tuple[str | None, ...]:
    """`NodeValues` of ``n`` keys (not `NO_NODE`) as a tuple."""
    return cast(tuple[str | None, ...], v) if n > 1 else (cast(str | None, v),)


def _round_half_away(x: float) -> int:
    """Go's ``math.Round``: halves away from zero (Python's round is to even)."""
    return math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)
