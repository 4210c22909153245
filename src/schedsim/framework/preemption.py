"""Generic preemption: find the nodes where removing lower-priority pods lets a pod fit, and
pick one.

Mirrors kube-scheduler 1.34 ``pkg/scheduler/framework/preemption/preemption.go``
(``Evaluator.Preempt``, ``findCandidates``, ``DryRunPreemption``, ``SelectCandidate``,
``pickOneNodeForPreemption``). The policy (which pods may be victims, how many nodes to try,
whether the pod may preempt at all) is a `PreemptionPolicy`, as upstream's ``Interface``;
`schedsim_plugins.defaultpreemption` is the default one.

How it works: the nodes whose Filter status is ``Unschedulable`` are the potential nodes (an
``UnschedulableAndUnresolvable`` node, or one absent from the status map, cannot be helped by
removing pods). They are dry-run one by one, from an offset, each on its own copy of the
NodeInfo and of the CycleState (`PreemptionPolicy.select_victims_on_node`), until enough
candidates are found (at least one that violates no PodDisruptionBudget and ``num_candidates``
in all). The candidate kept is the first by `pick_one_node_for_preemption`'s ordered criteria.

Differences from kube-scheduler, all deliberate:

- Potential nodes are taken in snapshot order (upstream iterates a Go map, in random order)
  and dry-run sequentially; the offset comes from the policy (upstream: random; schedsim's
  default policy uses 0 or a seeded generator), so the outcome is reproducible.
- Extenders are not modelled.
- The victims are not deleted here: they are returned in the `PostFilterResult` and the
  scheduler evicts them from the snapshot (upstream deletes them through the API server, and
  clears the nomination of lower-priority pods nominated to the node; schedsim's scheduler
  does the same from the result).
- Asynchronous preemption (``SchedulerAsyncPreemption``) is not modelled: victims are gone
  before the next attempt.

Cost per preemption: O(potential nodes tried x (victims + Filter runs)) as upstream; each
node copy is O(pods on that node), never O(cluster). A node without any pod of lower priority
is not copied (`PreemptionPolicy.has_potential_victims`, O(1) per unchanged node), so a pod
that nobody may make room for costs O(nodes) dictionary look-ups, not a copy of every node.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Protocol

import attrs

from schedsim.api.core import Pod
from schedsim.api.meta import as_utc
from schedsim.api.policy import PodDisruptionBudget
from schedsim.framework.cycle_state import CycleState
from schedsim.framework.fit_error import Diagnosis, FitError
from schedsim.framework.handle import Handle
from schedsim.framework.hookspec import PostFilterResult
from schedsim.framework.interface import NodeInfo
from schedsim.framework.status import Code, Status

__all__ = [
    "NOT_HELPFUL",
    "NO_VICTIMS",
    "Candidate",
    "Evaluator",
    "PreemptionPolicy",
    "nodes_where_preemption_might_help",
    "pick_one_node_for_preemption",
    "pod_start_time",
]

NOT_HELPFUL = "Preemption is not helpful for scheduling"
"""Status of the nodes preemption did not try (absent from its node statuses)."""

NO_VICTIMS = "No preemption victims found for incoming pod"
"""Status of a node without any pod of lower priority (DefaultPreemption's)."""

_NO_VICTIMS = Status(Code.UnschedulableAndUnresolvable, (NO_VICTIMS,))
_ABSENT = Status(Code.UnschedulableAndUnresolvable)
_FAR_FUTURE = datetime.max.replace(tzinfo=UTC)
_INT32_OFFSET = 2**31  # math.MaxInt32 + 1: makes every priority non-negative in sums


def pod_start_time(pod: Pod) -> datetime:
    """``util.GetPodStartTime``: ``status.startTime``, or "now" for a pod not started yet.

    schedsim has no wall clock in a simulation: "now" is a time after every recorded start
    (the far future), so a pod that has not started counts as the latest, as upstream.
    """
    ts = pod.start_time
    if ts is None:
        return _FAR_FUTURE
    return as_utc(ts)


@attrs.frozen
class Candidate:
    """A node where the pod fits once ``victims`` are gone (``preemption.Candidate``).

    Attributes:
        name: the node.
        victims: the pods to preempt, most important first.
        num_pdb_violations: how many of them their PodDisruptionBudgets do not allow.
    """

    name: str
    victims: tuple[Pod, ...]
    num_pdb_violations: int


class PreemptionPolicy(Protocol):
    """What a preemption plugin decides (upstream's ``preemption.Interface``). This is a
    Protocol: implementations don't inherit from it."""

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        """``GetOffsetAndNumCandidates``: where the dry run starts among ``num_nodes``
        potential nodes, and how many candidates it looks for."""
        ...

    def pod_eligible_to_preempt_others(
        self, pod: Pod, nominated_node_status: Status | None
    ) -> tuple[bool, str]:
        """``PodEligibleToPreemptOthers``: whether ``pod`` may preempt, and why not
        (``nominated_node_status``: its nominated node's Filter status; None: upstream's nil
        status, code Success, also when the pod has no nominated node)."""
        ...

    def select_victims_on_node(
        self,
        state: CycleState,
        pod: Pod,
        node_info: NodeInfo,
        pdbs: Sequence[PodDisruptionBudget],
    ) -> tuple[list[Pod], int, Status]:
        """``SelectVictimsOnNode`` on copies of the state and node (it may change both):
        the victims (most important first), how many violate a budget, and the status."""
        ...

    def has_potential_victims(self, node_info: NodeInfo, pod: Pod) -> bool:
        """schedsim's addition: False when ``node_info`` (the original, not a copy) runs no
        pod ``pod`` may preempt; the node is then not copied and gets ``NO_VICTIMS``."""
        ...


def _status_of(node_to_status: Mapping[str, Status], name: str) -> Code:
    st = node_to_status.get(name)
    return Code.UnschedulableAndUnresolvable if st is None else st.code


def nodes_where_preemption_might_help(
    nodes: Sequence[NodeInfo], node_to_status: Mapping[str, Status]
) -> list[NodeInfo]:
    """``nodesWherePreemptionMightHelp``: the nodes whose Filter status is ``Unschedulable``,
    in ``nodes`` order (an ``UnschedulableAndUnresolvable`` node, or one absent from
    ``node_to_status``, cannot be helped by removing pods). Time: O(nodes)."""
    return [
        ni
        for ni in nodes
        if ni.node is not None and _status_of(node_to_status, ni.node.name) is Code.Unschedulable
    ]


class Evaluator:
    """Runs preemption for one plugin (``preemption.Evaluator``).

    Args:
        plugin_name: the plugin's name (its statuses carry it).
        handle: where the nodes (``shared_lister``), the budgets (``object_listers``) and the
            framework (``framework``) are read.
        policy: the plugin's decisions.
    """

    def __init__(self, plugin_name: str, handle: Handle, policy: PreemptionPolicy) -> None:
        self.plugin_name = plugin_name
        self.handle = handle
        self.policy = policy

    def preempt(
        self, state: CycleState, pod: Pod, node_to_status: Mapping[str, Status]
    ) -> PostFilterResult | Status:
        """``Evaluator.Preempt``.

        Args:
            state: the failed attempt's CycleState (PreFilter ran; it is cloned per node).
            pod: the preemptor.
            node_to_status: the Filter status per node; absent nodes count as
                ``UnschedulableAndUnresolvable``.

        Returns:
            a `PostFilterResult`: Success with the node and its victims; or Unschedulable
            with "" (clear any nomination) and the FitError text of the dry run when no
            node can be helped. A bare Unschedulable `Status` when the pod may not preempt
            (its nomination is left as it is), an Error `Status` when a plugin failed.
        """
        nominated = self.handle.nominator.nominated_node_name(pod) or pod.nominated_node_name
        # NodeToStatus.Get: a node the map does not list has the absent-nodes status
        ok, msg = self.policy.pod_eligible_to_preempt_others(
            pod, node_to_status.get(nominated, _ABSENT) if nominated else None
        )
        if not ok:
            return Status(Code.Unschedulable, (msg,), self.plugin_name)
        all_nodes = self.handle.shared_lister.node_infos().list()
        if not all_nodes:
            return Status(Code.Error, ("no nodes available",), self.plugin_name)
        candidates, statuses = self.find_candidates(state, pod, all_nodes, node_to_status)
        if isinstance(candidates, Status):
            return candidates
        if not candidates:
            fit = FitError(
                len(all_nodes),
                Diagnosis(
                    node_to_status=statuses,
                    absent_nodes_status=Status(Code.UnschedulableAndUnresolvable, (NOT_HELPFUL,)),
                    absent_nodes=len(all_nodes) - len(statuses),
                ),
            )
            return PostFilterResult(
                "", Status(Code.Unschedulable, (fit.message,), self.plugin_name)
            )
        best = self.select_candidate(candidates)
        return PostFilterResult(best.name, Status(Code.Success), best.victims)

    def find_candidates(
        self,
        state: CycleState,
        pod: Pod,
        all_nodes: Sequence[NodeInfo],
        node_to_status: Mapping[str, Status],
    ) -> tuple[list[Candidate] | Status, dict[str, Status]]:
        """``findCandidates``: the potential nodes (status ``Unschedulable``, in snapshot
        order), the budgets, the offset and count from the policy, then the dry run.

        Returns:
            the candidates (or an Error status when every node tried failed with an error)
            and the dry run's status per node that yielded no candidate.
        """
        potential = nodes_where_preemption_might_help(all_nodes, node_to_status)
        if not potential:
            return [], {}
        pdbs = self.handle.object_listers.pod_disruption_budgets
        offset, num = self.policy.get_offset_and_num_candidates(len(potential))
        return self.dry_run_preemption(state, pod, potential, pdbs, offset, num)

    def dry_run_preemption(
        self,
        state: CycleState,
        pod: Pod,
        potential_nodes: Sequence[NodeInfo],
        pdbs: Sequence[PodDisruptionBudget],
        offset: int,
        num_candidates: int,
    ) -> tuple[list[Candidate] | Status, dict[str, Status]]:
        """``DryRunPreemption``, sequentially: from ``offset`` round the potential nodes,
        each on a copy of itself and of ``state``, until at least one candidate violates no
        budget and ``num_candidates`` are found (upstream cancels its parallel workers at
        the same point). Non-violating candidates come first.

        Time: O(nodes tried x (pods on the node + Filter runs)).
        """
        non_violating: list[Candidate] = []
        violating: list[Candidate] = []
        statuses: dict[str, Status] = {}
        errors: list[Status] = []
        n = len(potential_nodes)
        for i in range(n):
            original = potential_nodes[(offset + i) % n]
            node = original.node
            assert node is not None
            if not self.policy.has_potential_victims(original, pod):
                statuses[node.name] = _NO_VICTIMS
                continue
            copy = original.snapshot()
            victims, violations, st = self.policy.select_victims_on_node(
                state.clone(), pod, copy, pdbs
            )
            if st.is_success and victims:
                c = Candidate(node.name, tuple(victims), violations)
                (violating if violations else non_violating).append(c)
                if non_violating and len(non_violating) + len(violating) >= num_candidates:
                    break
                continue
            if st.is_success:
                st = Status(
                    Code.Error, (f'expected at least one victim pod on node "{node.name}"',)
                )
            if st.code is Code.Error:
                errors.append(st)
            statuses[node.name] = st
        candidates = non_violating[:num_candidates] + violating[:num_candidates]
        if errors and not candidates:
            message = "; ".join(e.message for e in errors)
            return Status(Code.Error, (message,), self.plugin_name), statuses
        return candidates, statuses

    def select_candidate(self, candidates: Sequence[Candidate]) -> Candidate:
        """``SelectCandidate``: the only one, or `pick_one_node_for_preemption`'s choice."""
        if len(candidates) == 1:
            return candidates[0]
        name = pick_one_node_for_preemption(candidates)
        return next(c for c in candidates if c.name == name)


def _earliest_start_of_highest(victims: Sequence[Pod]) -> datetime:
    """``util.GetEarliestPodStartTime``: the earliest start among the victims of the
    highest priority."""
    top = max(p.priority for p in victims)
    return min(pod_start_time(p) for p in victims if p.priority == top)


def pick_one_node_for_preemption(candidates: Sequence[Candidate]) -> str:
    """``pickOneNodeForPreemption``: the node with, in order, the fewest budget violations,
    the lowest highest-victim priority, the smallest sum of victim priorities (each offset by
    2^31 so negative priorities do not favour more victims), the fewest victims, the latest
    earliest start time among its highest-priority victims; then the first in candidate
    order.

    Args:
        candidates: with victims ordered most important first (non-empty).

    Returns:
        the node name ("" when ``candidates`` is empty).
    """
    if not candidates:
        return ""

    def key(c: Candidate) -> tuple[int, int, int, int, datetime]:
        return (
            -c.num_pdb_violations,
            -c.victims[0].priority,
            -sum(p.priority + _INT32_OFFSET for p in c.victims),
            -len(c.victims),
            _earliest_start_of_highest(c.victims),
        )

    # Upstream narrows criterion by criterion to the tied nodes and keeps the first one left:
    # the first candidate with the lexicographically largest key. max() keeps the first.
    return max(candidates, key=key).name
