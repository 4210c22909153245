"""Nominated pods: where preemption made room for a pod that is not bound yet.

Mirrors kube-scheduler's ``backend/queue`` nominator (``AddNominatedPod``,
``DeleteNominatedPodIfExists``, ``NominatedPodsForNode``) and the framework's
``RunFilterPluginsWithNominatedPods`` / ``addGENominatedPods``
(``framework/runtime/framework.go``, 1.34).

A pod that preempted victims on a node is *nominated* there (``status.nominatedNodeName``)
until it is bound. While it waits, Filter for every other pod counts it on that node when it
is at least as important (priority greater or equal): a lower-priority pod must not take the
room that was freed for it, an equal or higher one may take room freed for lower ones.

`run_filter_plugins_with_nominated_pods` runs the Filter chain twice on a node with such
nominated pods: first with them added to a copy of the NodeInfo and of the CycleState
(PreFilter AddPod extensions), then, if that passed, on the node as it is (filters such as
pod affinity may need them absent). Nodes without nominated pods run Filter once, as usual.

Differences from kube-scheduler, all deliberate: nominations live in the run (the scheduler
that made them owns the `PodNominator`), not in the API server. Pods of the input that carry
only ``status.nominatedNodeName`` enter the nominator when the scheduling pass queues them
(kube-scheduler placement); the Cluster Autoscaler's placement puts them on that node at
load instead, as CA does.

Cost: `nominated_pods_for_node` is one dict look-up; a node with k nominated pods costs one
NodeInfo copy, one CycleState clone and k AddPod calls per Filter run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from schedsim.api.core import Pod
from schedsim.framework.cycle_state import CycleState
from schedsim.framework.interface import NodeInfo, PodInfo
from schedsim.framework.status import Code, Status

__all__ = ["FilterRunner", "PodNominator", "run_filter_plugins_with_nominated_pods"]


class PodNominator:
    """Nominated pods per node (kube-scheduler's ``nominator``).

    Pods are keyed by UID; a pod is nominated to one node at a time. Lists keep nomination
    order.
    """

    def __init__(self) -> None:
        self._by_node: dict[str, list[PodInfo]] = {}
        self._node_of: dict[str, str] = {}

    def __len__(self) -> int:
        """Number of nominated pods."""
        return len(self._node_of)

    def add_nominated_pod(self, pod_info: PodInfo, node_name: str) -> None:
        """Nominate ``pod_info``'s pod to ``node_name`` (``AddNominatedPod``): an earlier
        nomination of the pod is dropped first; an empty ``node_name`` only drops it.

        Time: O(pods nominated to the earlier node).
        """
        self.delete_nominated_pod_if_exists(pod_info.pod)
        if not node_name:
            return
        self._node_of[pod_info.pod.uid] = node_name
        self._by_node.setdefault(node_name, []).append(pod_info)

    def delete_nominated_pod_if_exists(self, pod: Pod) -> None:
        """Drop ``pod``'s nomination, if any (``DeleteNominatedPodIfExists``: the pod was
        bound, deleted or its nomination cleared).

        Time: O(pods nominated to its node).
        """
        node = self._node_of.pop(pod.uid, None)
        if node is None:
            return
        infos = self._by_node[node]
        infos[:] = [pi for pi in infos if pi.pod.uid != pod.uid]
        if not infos:
            del self._by_node[node]

    def nominated_node_name(self, pod: Pod) -> str:
        """The node ``pod`` is nominated to, "" when none."""
        return self._node_of.get(pod.uid, "")

    def nominated_pods_for_node(self, node_name: str) -> Sequence[PodInfo]:
        """The pods nominated to ``node_name``, in nomination order (``NominatedPodsForNode``).

        Time: O(1); the sequence is read-only and valid until the next change.
        """
        return self._by_node.get(node_name, ())

    def nodes(self) -> Sequence[str]:
        """Names of the nodes that have nominated pods."""
        return tuple(self._by_node)


class FilterRunner(Protocol):
    """The framework operations `run_filter_plugins_with_nominated_pods` needs (the
    `schedsim.framework.Framework` is one). This is a Protocol: implementations don't
    inherit from it."""

    def run_filter_plugins(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """RunFilterPlugins."""
        ...

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo
    ) -> Status:
        """RunPreFilterExtensionAddPod."""
        ...


def _add_ge_nominated_pods(
    framework: FilterRunner,
    nominator: PodNominator,
    pod: Pod,
    state: CycleState,
    node_info: NodeInfo,
) -> tuple[bool, CycleState, NodeInfo] | Status:
    """``addGENominatedPods``: a copy of the node and state with the nominated pods of
    priority >= ``pod``'s (other than ``pod``) added; the original when there are none; an
    Error status when an AddPod extension fails."""
    node = node_info.node
    infos = nominator.nominated_pods_for_node(node.name) if node is not None else ()
    if not infos:
        return False, state, node_info
    priority = pod.priority
    node_out: NodeInfo | None = None
    state_out = state
    for pi in infos:
        other = pi.pod
        if other.priority >= priority and other.uid != pod.uid:
            if node_out is None:
                node_out = node_info.snapshot()
                state_out = state.clone()
            node_out.add_pod_info(pi)
            st = framework.run_pre_filter_extension_add_pod(state_out, pod, pi, node_out)
            if not st.is_success:
                return st
    if node_out is None:
        return False, state, node_info
    return True, state_out, node_out


def run_filter_plugins_with_nominated_pods(
    framework: FilterRunner,
    nominator: PodNominator,
    state: CycleState,
    pod: Pod,
    node_info: NodeInfo,
) -> Status:
    """Filter ``pod`` on ``node_info`` counting the pods nominated there
    (``RunFilterPluginsWithNominatedPods``).

    With nominated pods of priority >= ``pod``'s on the node, Filter runs first with them
    added (to copies: ``node_info`` and ``state`` are not changed) and, if that passed, again
    without them; the pod must pass both. Otherwise Filter runs once.

    Returns:
        `framework.run_filter_plugins`'s status (the first rejection or Error), or the Error
        of a failing AddPod extension.

    Time: one Filter chain, plus one copy and one more chain on nodes with such pods.
    """
    added = _add_ge_nominated_pods(framework, nominator, pod, state, node_info)
    if isinstance(added, Status):
        return added
    pods_added, state_1, node_1 = added
    status = framework.run_filter_plugins(state_1, pod, node_1)
    if not pods_added or status.code is not Code.Success:
        return status
    return framework.run_filter_plugins(state, pod, node_info)
