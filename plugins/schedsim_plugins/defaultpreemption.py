"""DefaultPreemption: mirrors kube-scheduler 1.34's ``DefaultPreemption`` PostFilter plugin
(pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go).

When no node passed Filter, the plugin looks for a node where removing pods of lower
priority lets the pod fit (the generic search is `schedsim.framework.preemption.Evaluator`;
this module is its policy):

* a pod with ``preemptionPolicy: Never`` never preempts (``not eligible due to
  preemptionPolicy=Never.``), nor does a pod whose nominated node still has a victim of an
  earlier preemption terminating there;
* on each node tried, every pod of lower priority is removed (PreFilter RemovePod
  extensions keep the plugins' state in step), Filter runs with the nominated pods counted;
  then victims are reprieved one by one, most important first (priority, then earlier start
  time), those whose PodDisruptionBudget would be violated first: a pod that still lets the
  preemptor fit goes back on the node;
* the node is chosen by upstream's ordered criteria (`pick_one_node_for_preemption`).

Every message of the plugin is prefixed ``preemption: `` as upstream.

Args (DefaultPreemptionArgs): ``minCandidateNodesPercentage`` (10) and
``minCandidateNodesAbsolute`` (100): how many candidate nodes the dry run looks for.

Differences from upstream, all deliberate: the dry run starts at offset 0 of the potential
nodes (upstream: a random offset), so results are reproducible; victims with equal priority
and start time keep their order on the node (upstream's sort is not stable); a PodDisruption
Budget's allowed disruptions come from its status, or when the input has none from its
``minAvailable``/``maxUnavailable`` over the matching pods at load
(`schedsim.api.PodDisruptionBudget.resolve_disruptions_allowed`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import cmp_to_key
from typing import Any, ClassVar

from schedsim.api.core import Pod
from schedsim.api.policy import PodDisruptionBudget
from schedsim.framework import CycleState, Handle, NodeInfo, PodInfo, PostFilterResult, Status
from schedsim.framework.args import DefaultPreemptionArgs
from schedsim.framework.handle import FrameworkRunner
from schedsim.framework.preemption import NO_VICTIMS, Evaluator, pod_start_time
from schedsim.framework.status import Code

__all__ = [
    "NAME",
    "NO_VICTIMS",
    "DefaultPreemption",
    "filter_pods_with_pdb_violation",
    "more_important_pod",
]

NAME = "DefaultPreemption"

NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."

_NO_VICTIMS = Status(Code.UnschedulableAndUnresolvable, (NO_VICTIMS,))


def more_important_pod(pod1: Pod, pod2: Pod) -> bool:
    """``util.MoreImportantPod``: higher priority, or equal priority and started earlier."""
    if pod1.priority != pod2.priority:
        return pod1.priority > pod2.priority
    return pod_start_time(pod1) < pod_start_time(pod2)


def _importance(pi: PodInfo) -> tuple[int, Any]:
    """Sort key: most important first (`more_important_pod`)."""
    return (-pi.pod.priority, pod_start_time(pi.pod))


def filter_pods_with_pdb_violation(
    pod_infos: Sequence[PodInfo], pdbs: Sequence[PodDisruptionBudget]
) -> tuple[list[PodInfo], list[PodInfo]]:
    """``filterPodsWithPDBViolation``: split pods, keeping their order, into those whose
    eviction would exceed a budget's allowed disruptions and the others.

    Each budget starts at its ``disruptions_allowed``; every matching pod not in its
    ``disrupted_pods`` takes one; a pod that takes a budget below zero is violating. A budget
    matches pods of its namespace with labels its selector matches; a nil or empty selector
    matches nothing here (upstream preemption's rule), and a pod without labels matches none.

    Time: O(pods x budgets).
    """
    allowed = [b.disruptions_allowed or 0 for b in pdbs]
    violating: list[PodInfo] = []
    non_violating: list[PodInfo] = []
    for pi in pod_infos:
        pod = pi.pod
        violated = False
        if pod.labels:
            for i, b in enumerate(pdbs):
                if b.namespace != pod.namespace or b.selector is None or b.selector.is_empty:
                    continue
                if not b.selector.matches(pod.labels) or pod.name in b.disrupted_pods:
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
        (violating if violated else non_violating).append(pi)
    return violating, non_violating


class DefaultPreemption:
    """Mirrors kube-scheduler's ``DefaultPreemption`` PostFilter plugin (see the module).

    Args:
        args: DefaultPreemptionArgs (``minCandidateNodesPercentage``,
            ``minCandidateNodesAbsolute``).
        handle: the framework handle: nodes, budgets, nominated pods and the framework's
            PreFilter extensions and Filter are read through it.

    Raises:
        ArgsError: invalid args (a ValueError naming the field).

    Attributes:
        is_eligible_pod: extra rule on victims beyond lower priority (``IsEligiblePod``;
            default: every lower-priority pod).
        more_important_pod: victim ordering (``MoreImportantPod``).
    """

    name: ClassVar[str] = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        self.args = DefaultPreemptionArgs.from_mapping(args)
        self.handle = handle
        self.evaluator = Evaluator(NAME, handle, self)
        self.is_eligible_pod: Callable[[NodeInfo, PodInfo, Pod], bool] = _any_victim
        self.more_important_pod: Callable[[Pod, Pod], bool] = more_important_pod
        # node name -> (generation, lowest pod priority): a generation names one content
        self._lowest: dict[str, tuple[int, float]] = {}

    # ------------------------------------------------------------------ PostFilter

    def schedsim_post_filter(
        self, state: CycleState, pod: Pod, node_to_status: Mapping[str, Status]
    ) -> Status | PostFilterResult | None:
        """``PostFilter``: run preemption; every message gets the ``preemption: `` prefix."""
        out = self.evaluator.preempt(state, pod, node_to_status)
        st = out.status if isinstance(out, PostFilterResult) else out
        if st.message:
            st = Status(st.code, ("preemption: " + st.message,), NAME)
        if isinstance(out, PostFilterResult):
            return PostFilterResult(out.nominated_node_name, st, out.victims)
        return st

    # ------------------------------------------------------------------ policy

    def calculate_num_candidates(self, num_nodes: int) -> int:
        """``calculateNumCandidates``: ``num_nodes`` x percentage / 100, at least the
        absolute minimum, at most ``num_nodes``."""
        n = num_nodes * self.args.min_candidate_nodes_percentage // 100
        n = max(n, self.args.min_candidate_nodes_absolute)
        return min(n, num_nodes)

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        """``GetOffsetAndNumCandidates`` with offset 0 (upstream: random, see the module)."""
        return 0, self.calculate_num_candidates(num_nodes)

    def _is_preemption_allowed(self, node_info: NodeInfo, victim: PodInfo, preemptor: Pod) -> bool:
        return victim.pod.priority < preemptor.priority and self.is_eligible_pod(
            node_info, victim, preemptor
        )

    def has_potential_victims(self, node_info: NodeInfo, pod: Pod) -> bool:
        """Whether ``node_info`` runs a pod ``pod`` may preempt, without copying the node
        (schedsim's addition: a node without one is answered ``No preemption victims found
        for incoming pod`` at once, as `select_victims_on_node` would).

        Time: O(1) while the node is unchanged (its lowest pod priority is kept per
        generation), O(pods on the node) after a change.
        """
        node = node_info.node
        if node is None or self.is_eligible_pod is not _any_victim:
            return True
        gen = node_info.generation
        seen = self._lowest.get(node.name)
        if seen is None or seen[0] != gen:
            lowest = min((pi.pod.priority for pi in node_info.pods), default=float("inf"))
            seen = self._lowest[node.name] = (gen, lowest)
        return seen[1] < pod.priority

    def pod_eligible_to_preempt_others(
        self, pod: Pod, nominated_node_status: Status | None
    ) -> tuple[bool, str]:
        """``PodEligibleToPreemptOthers``: not with ``preemptionPolicy: Never``; not while a
        lower-priority pod preempted earlier is still terminating on the pod's nominated node,
        unless that node is now ``UnschedulableAndUnresolvable``. ``nominated_node_status``
        None is upstream's nil status, whose code is Success (the Evaluator passes the status
        map's default, UnschedulableAndUnresolvable, for a node the map does not list)."""
        if pod.preemption_policy == "Never":
            return False, NOT_ELIGIBLE_NEVER
        nominated = self.handle.nominator.nominated_node_name(pod) or pod.nominated_node_name
        if not nominated:
            return True, ""
        if (
            nominated_node_status is not None
            and nominated_node_status.code is Code.UnschedulableAndUnresolvable
        ):
            return True, ""
        lister = self.handle.shared_lister.node_infos()
        try:
            node_info = lister.get(nominated)
        except LookupError:
            return True, ""
        for pi in node_info.pods:
            p = pi.pod
            if (
                self._is_preemption_allowed(node_info, pi, pod)
                and p.deletion_timestamp is not None
                and p.preempted_by_scheduler
            ):
                return False, NOT_ELIGIBLE_TERMINATING
        return True, ""

    def select_victims_on_node(
        self,
        state: CycleState,
        pod: Pod,
        node_info: NodeInfo,
        pdbs: Sequence[PodDisruptionBudget],
    ) -> tuple[list[Pod], int, Status]:
        """``SelectVictimsOnNode`` on a copy of the node and of the state: remove every
        lower-priority pod, check the pod fits (Filter with nominated pods), then reprieve
        the victims most important first, budget-violating ones before the others.

        Returns:
            ``(victims most important first, budget violations, status)``; the status is the
            Filter rejection when the pod does not fit even with every victim gone,
            UnschedulableAndUnresolvable ``No preemption victims found for incoming pod``
            when no pod has a lower priority, an Error when an extension failed.

        Time: O(pods on the node) extension calls + O(victims) Filter runs.
        """
        fw = self.handle.framework
        assert fw is not None, "DefaultPreemption needs a Framework built over its handle"
        potential = [pi for pi in node_info.pods if self._is_preemption_allowed(node_info, pi, pod)]
        if not potential:
            return [], 0, _NO_VICTIMS
        for pi in potential:
            st = _remove(fw, state, pod, pi, node_info)
            if st is not None:
                return [], 0, st
        st = fw.run_filter_plugins_with_nominated_pods(state, pod, node_info)
        if not st.is_success:
            return [], 0, st
        if self.more_important_pod is more_important_pod:
            potential.sort(key=_importance)
        else:
            potential = _sorted_by(potential, self.more_important_pod)
        violating, non_violating = filter_pods_with_pdb_violation(potential, pdbs)
        victims: list[PodInfo] = []
        num_violating = 0
        for group, weight in ((violating, 1), (non_violating, 0)):
            for pi in group:
                node_info.add_pod_info(pi)
                st = fw.run_pre_filter_extension_add_pod(state, pod, pi, node_info)
                if not st.is_success:
                    return [], 0, st
                if fw.run_filter_plugins_with_nominated_pods(state, pod, node_info).is_success:
                    continue
                err = _remove(fw, state, pod, pi, node_info)
                if err is not None:
                    return [], 0, err
                victims.append(pi)
                num_violating += weight
        if violating and non_violating:
            victims = _sorted_by(victims, self.more_important_pod)
        return [pi.pod for pi in victims], num_violating, Status(Code.Success)


def _any_victim(node_info: NodeInfo, victim: PodInfo, preemptor: Pod) -> bool:
    """The default ``IsEligiblePod``: every lower-priority pod may be a victim."""
    return True


def _remove(
    fw: FrameworkRunner, state: CycleState, pod: Pod, pi: PodInfo, node_info: NodeInfo
) -> Status | None:
    """Take ``pi`` off the node copy and run the RemovePod extensions; an Error status if
    that fails."""
    try:
        node_info.remove_pod(pi.pod)
    except LookupError as e:
        return Status(Code.Error, (str(e),))
    st = fw.run_pre_filter_extension_remove_pod(state, pod, pi, node_info)
    return None if st.is_success else st


def _sorted_by(infos: list[PodInfo], more_important: Callable[[Pod, Pod], bool]) -> list[PodInfo]:
    """``infos`` most important first by a custom ``more_important`` (stable)."""

    def cmp(a: PodInfo, b: PodInfo) -> int:
        if more_important(a.pod, b.pod):
            return -1
        return 1 if more_important(b.pod, a.pod) else 0

    return sorted(infos, key=cmp_to_key(cmp))
