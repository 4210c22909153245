"""Runs the framework's plugins against the snapshot's NodeInfos.

Mirrors CA ``predicate/plugin_runner.go`` (RunFiltersOnNode, RunFiltersUntilPassingNode,
RunReserveOnNode) with parallelism 1: the result is the first passing node in iteration
order. `diagnose` adds what kube-scheduler's ``findNodesThatFitPod`` records for a pod that
fits nowhere (every node's first failing status), which CA discards.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from schedsim.api.core import Pod
from schedsim.framework.cycle_state import CycleState
from schedsim.framework.fit_error import Diagnosis, FitError
from schedsim.framework.runtime import Framework, PluginError
from schedsim.framework.status import Code, Status
from schedsim.snapshot.errors import NodeNotFoundError, SchedulingError
from schedsim.snapshot.infos import NodeInfo

__all__ = [
    "RESERVE_REJECTED",
    "LastIndexOrderMapping",
    "NodeOrderMapping",
    "SchedulerPluginRunner",
]

RESERVE_REJECTED = "Reserve rejected the pod"
"""``SchedulingError.unexpected_error`` when a Reserve plugin rejected the chosen node."""


class NodeOrderMapping(Protocol):
    """The order in which nodes are tried (CA ``NodeOrderMapping``)."""

    def reset(self, nodes: Sequence[NodeInfo]) -> None:
        """Called at the start of every search."""
        ...

    def at(self, i: int) -> int:
        """Node index for step ``i``; -1 stops the search."""
        ...

    def mark_match(self, index: int) -> None:
        """Called with the chosen node's index."""
        ...


class LastIndexOrderMapping:
    """Round robin: step ``i`` tries node ``(i + offset + last) % n`` where ``last`` is the
    index chosen last (CA ``NewLastIndexOrderMapping``; the runner's default uses offset 1, so
    the search for the next pod starts after the node chosen for the previous one)."""

    __slots__ = ("_last", "_n", "_offset")

    def __init__(self, offset: int = 1) -> None:
        self._offset = offset
        self._last = 0
        self._n = 0

    def reset(self, nodes: Sequence[NodeInfo]) -> None:
        """Remember the node count."""
        self._n = len(nodes)

    def at(self, i: int) -> int:
        """The node index for step ``i`` (-1 for an empty list)."""
        if self._n == 0:
            return -1
        return (i + self._offset + self._last) % self._n

    def mark_match(self, index: int) -> None:
        """Start after ``index`` next time."""
        self._last = index


class _Lister(Protocol):
    def get_node_info(self, node_name: str) -> NodeInfo: ...

    def list_node_infos(self) -> Sequence[NodeInfo]: ...


class SchedulerPluginRunner:
    """Runs PreFilter/Filter/Reserve of ``framework`` over the NodeInfos of ``snapshot``.

    Args:
        framework: the profile's runtime.
        snapshot: where NodeInfos come from (the `PredicateSnapshot`).
        node_ordering: default ordering for any-node searches (round robin after the last
            chosen node).
        skip_unschedulable_nodes: any-node searches skip cordoned nodes without running
            Filter, as CA does; False leaves them to the NodeUnschedulable plugin, as
            kube-scheduler does (pods tolerating the unschedulable taint, e.g. DaemonSet
            pods, can then land there).
    """

    def __init__(
        self,
        framework: Framework,
        snapshot: _Lister,
        node_ordering: NodeOrderMapping | None = None,
        skip_unschedulable_nodes: bool = True,
    ) -> None:
        self.framework = framework
        self._snapshot = snapshot
        self._ordering = node_ordering or LastIndexOrderMapping(1)
        self._skip_unschedulable = skip_unschedulable_nodes

    def _pre_filter(
        self, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[CycleState, frozenset[str] | None, tuple[str, ...]]:
        """Run PreFilter; returns the state, the allowed node names (None = all) and the
        plugins that narrowed them."""
        state = CycleState()
        result, status, plugins = self.framework.run_pre_filter_plugins(state, pod, nodes)
        if not status.is_success:
            name = status.plugin or ", ".join(plugins)
            raise SchedulingError.failing_predicate(
                pod, name, status.reasons, unexpected_error="PreFilter failed"
            )
        return state, None if result is None else result.node_names, plugins

    def _filter_error(self, pod: Pod, node: NodeInfo, status: Status) -> SchedulingError:
        unexpected = "" if status.is_rejected else f'unexpected filter status "{status.code.value}"'
        name = node.node.name if node.node else ""
        debug = f'nodeName: "{name}"'
        if status.plugin == "TaintToleration" and node.node is not None:
            debug += f", nodeTaints: {list(node.node.taints)!r}"
        return SchedulingError.failing_predicate(
            pod, status.plugin, status.reasons, unexpected_error=unexpected, debug_info=debug
        )

    def run_filters_on_node(self, pod: Pod, node_name: str) -> tuple[NodeInfo, CycleState]:
        """PreFilter then Filter on one node (RunFiltersOnNode).

        Returns:
            the NodeInfo and the CycleState to pass to `run_reserve_on_node`.

        Raises:
            SchedulingError: INTERNAL_ERROR for a missing node; FAILING_PREDICATE naming the
                plugin and its reasons when PreFilter or a Filter rejects (a node left out by
                a PreFilterResult fails with no reasons, named after the narrowing plugins,
                "PreFilter filtered the Node out").
        """
        try:
            node_info = self._snapshot.get_node_info(node_name)
        except NodeNotFoundError as e:
            raise SchedulingError.internal(
                pod, f'error obtaining NodeInfo for name "{node_name}": {e}'
            ) from None
        state, allowed, plugins = self._pre_filter(pod, self._snapshot.list_node_infos())
        if allowed is not None and node_name not in allowed:
            # CA names the plugins that narrowed the node set (strings.Join(..., ", ")).
            raise SchedulingError.failing_predicate(
                pod, ", ".join(plugins), (), unexpected_error="PreFilter filtered the Node out"
            )
        status = self.framework.run_filter_plugins(state, pod, node_info)
        if not status.is_success:
            raise self._filter_error(pod, node_info, status)
        return node_info, state

    def run_filters_until_passing_node(
        self,
        pod: Pod,
        is_node_acceptable: Callable[[NodeInfo], bool] | None = None,
        node_ordering: NodeOrderMapping | None = None,
    ) -> tuple[NodeInfo, CycleState]:
        """PreFilter once, then Filter node by node until one passes
        (RunFiltersUntilPassingNode with parallelism 1).

        Nodes are skipped without running Filter when a PreFilterResult excludes them, when
        ``spec.unschedulable`` is set (as CA does; see ``skip_unschedulable_nodes``) or when
        ``is_node_acceptable`` says no.

        Raises:
            SchedulingError: FAILING_PREDICATE when PreFilter rejects;
                NO_NODES_PASSING_PREDICATES when no node passes.
        """
        nodes = self._snapshot.list_node_infos()
        state, allowed, _ = self._pre_filter(pod, nodes)
        ordering = node_ordering or self._ordering
        ordering.reset(nodes)
        run_filter = self.framework.run_filter_plugins
        for i in range(len(nodes)):
            idx = ordering.at(i)
            if idx < 0:
                break
            ni = nodes[idx]
            node = ni.node
            if node is None or (node.unschedulable and self._skip_unschedulable):
                continue
            if allowed is not None and node.name not in allowed:
                continue
            if is_node_acceptable is not None and not is_node_acceptable(ni):
                continue
            if run_filter(state, pod, ni).code is Code.Success:
                ordering.mark_match(idx)
                return ni, state
        raise SchedulingError.no_nodes_passing(pod)

    def find_node(self, pod: Pod) -> tuple[NodeInfo, CycleState] | FitError:
        """kube-scheduler's schedulePod over the snapshot, in one pass: PreFilter once, then
        Filter node by node (round robin, as `run_filters_until_passing_node`, but cordoned
        nodes are left to the NodeUnschedulable plugin) until one passes, recording why each
        node failed. No node passing gives the FitError kube-scheduler reports, without a
        second pass.

        Returns:
            the passing NodeInfo and its CycleState, or the FitError.

        Raises:
            SchedulingError: INTERNAL_ERROR when a plugin returns an Error status (kube-scheduler
                aborts the attempt).
        """
        nodes = self._snapshot.list_node_infos()
        if not nodes:
            return FitError(0, Diagnosis())
        state = CycleState()
        result, status, plugins = self.framework.run_pre_filter_plugins(state, pod, nodes)
        if not status.is_success:
            if status.code is Code.Error:
                raise SchedulingError.internal(pod, status.message)
            return FitError(len(nodes), Diagnosis(pre_filter_status=status))
        allowed = None if result is None else result.node_names
        ordering = self._ordering
        ordering.reset(nodes)
        run_filter = self.framework.run_filter_plugins
        statuses: dict[str, Status] = {}
        absent = 0
        for i in range(len(nodes)):
            idx = ordering.at(i)
            if idx < 0:
                break
            ni = nodes[idx]
            node = ni.node
            if node is None:
                continue
            if allowed is not None and node.name not in allowed:
                absent += 1
                continue
            st = run_filter(state, pod, ni)
            if st.code is Code.Success:
                ordering.mark_match(idx)
                return ni, state
            if st.code is Code.Error:
                raise SchedulingError.internal(pod, st.message)
            statuses[node.name] = st
        absent_status = None
        if allowed is not None:
            absent_status = Status(
                Code.UnschedulableAndUnresolvable,
                (f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(plugins))}]",),
            )
        return FitError(
            len(nodes),
            Diagnosis(
                node_to_status=statuses, absent_nodes_status=absent_status, absent_nodes=absent
            ),
        )

    def run_reserve_on_node(self, pod: Pod, node_name: str, state: CycleState) -> None:
        """Run Reserve with the CycleState Filter produced for this node (RunReserveOnNode);
        on failure run Unreserve.

        Raises:
            SchedulingError: FAILING_PREDICATE naming the plugin when a Reserve plugin rejects
                the pod (kube-scheduler then reports a FitError for that node; CA reports an
                internal error), with ``unexpected_error`` = `RESERVE_REJECTED`;
                INTERNAL_ERROR ``couldn't reserve node X for pod NS/NAME: ...`` for an Error
                status or a failing Unreserve.
        """
        status = self.framework.run_reserve_plugins_reserve(state, pod, node_name)
        if status.is_success:
            return
        try:
            self.framework.run_reserve_plugins_unreserve(state, pod, node_name)
        except PluginError as e:
            raise SchedulingError.internal(pod, str(e)) from None
        if status.is_rejected:
            raise SchedulingError.failing_predicate(
                pod,
                status.plugin,
                status.reasons,
                unexpected_error=RESERVE_REJECTED,
                debug_info=f'nodeName: "{node_name}"',
                node_name=node_name,
            )
        raise SchedulingError.internal(
            pod, f"couldn't reserve node {node_name} for pod {pod.key}: {status.message}"
        )

    def diagnose(self, pod: Pod) -> FitError:
        """Run PreFilter and every node's Filters and record why each node rejects the pod,
        as kube-scheduler's ``findNodesThatFitPod`` does for its FitError. Does not mutate.
        """
        nodes = self._snapshot.list_node_infos()
        state = CycleState()
        result, status, plugins = self.framework.run_pre_filter_plugins(state, pod, nodes)
        if not status.is_success:
            return FitError(len(nodes), Diagnosis(pre_filter_status=status))
        absent = None
        allowed = None if result is None else result.node_names
        if allowed is not None:
            absent = Status(
                Code.UnschedulableAndUnresolvable,
                (f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(plugins))}]",),
            )
        statuses: dict[str, Status] = {}
        absent_nodes = 0
        run_filter = self.framework.run_filter_plugins
        for ni in nodes:
            node = ni.node
            if node is None:
                continue
            if allowed is not None and node.name not in allowed:
                absent_nodes += 1
                continue
            st = run_filter(state, pod, ni)
            if not st.is_success:
                statuses[node.name] = st
        return FitError(
            len(nodes),
            Diagnosis(
                node_to_status=statuses, absent_nodes_status=absent, absent_nodes=absent_nodes
            ),
        )
