"""The Run methods of the filtering extension points: PreFilter with its AddPod/RemovePod
extensions, Filter (also counting nominated pods) and PostFilter (``frameworkruntime``
``RunPreFilterPlugins``, ``RunPreFilterExtensionAddPod``/``RemovePod``,
``RunFilterPlugins``, ``RunFilterPluginsWithNominatedPods``, ``RunPostFilterPlugins``).

A mixin of `schedsim.framework.runtime.Framework` (kept apart so that each module stays one
concept, as `schedsim.framework.runtime_binding`): the Framework builds the chains
(``_pre_filter``, ``_pre_filter_add_pod``, ``_pre_filter_remove_pod``, ``_filter``,
``_post_filter``) and the handle whose nominator Filter counts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from schedsim.api.core import Pod
from schedsim.framework.cycle_state import CycleState
from schedsim.framework.handle import Handle
from schedsim.framework.hookspec import PostFilterResult, PreFilterResult
from schedsim.framework.interface import NodeInfo, PodInfo
from schedsim.framework.nominator import run_filter_plugins_with_nominated_pods
from schedsim.framework.plugin_results import describe_exception as _describe
from schedsim.framework.plugin_results import error_status as _error
from schedsim.framework.plugin_results import returned_problem as _returned
from schedsim.framework.status import SUCCESS, Code, Status

__all__ = ["FilterPoints"]

_PRE_FILTER_WANTS = "a Status, a PreFilterResult or None"

FilterFn = Callable[[CycleState, Pod, NodeInfo], "Status | None"]
PreFilterFn = Callable[[CycleState, Pod, Sequence[NodeInfo]], "Status | PreFilterResult | None"]
PostFilterFn = Callable[[CycleState, Pod, Mapping[str, Status]], "Status | PostFilterResult | None"]
PreFilterExtensionFn = Callable[[CycleState, Pod, PodInfo, NodeInfo], "Status | None"]


class FilterPoints:
    """PreFilter, Filter and PostFilter of a Framework (see the module docstring)."""

    handle: Handle
    _pre_filter: tuple[tuple[str, PreFilterFn], ...]
    _pre_filter_add_pod: tuple[tuple[str, PreFilterExtensionFn], ...]
    _pre_filter_remove_pod: tuple[tuple[str, PreFilterExtensionFn], ...]
    _filter: tuple[tuple[str, FilterFn], ...]
    _post_filter: tuple[tuple[str, PostFilterFn], ...]

    def run_pre_filter_plugins(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status, tuple[str, ...]]:
        """Run every PreFilter plugin (RunPreFilterPlugins).

        Returns:
            ``(result, status, narrowing_plugins)``: the merged `PreFilterResult` (None = all
            nodes), `SUCCESS` or the failing status (with its plugin), and the plugins that
            narrowed the node set. ``Skip`` adds the plugin to ``state.skip_filter_plugins``.
        """
        merged: PreFilterResult | None = None
        narrowing: list[str] = []
        rejected: Status | None = None
        for name, fn in self._pre_filter:
            try:
                out = fn(state, pod, nodes)
            except Exception as e:
                return None, _error(f'running PreFilter plugin "{name}": {_describe(e)}', name), ()
            if out is None:
                continue
            if isinstance(out, PreFilterResult):
                if out.node_names is not None:
                    narrowing.append(name)
                    merged = out.merge(merged)
                    if not merged.node_names:
                        msg = (
                            f"node(s) didn't satisfy plugin {narrowing[0]}"
                            if len(narrowing) == 1
                            else "node(s) didn't satisfy plugin(s) "
                            f"[{' '.join(narrowing)}] simultaneously"
                        )
                        return (
                            merged,
                            Status(Code.UnschedulableAndUnresolvable, (msg,), name),
                            tuple(narrowing),
                        )
                continue
            if not isinstance(out, Status):
                bad = _returned(out, _PRE_FILTER_WANTS)
                st = _error(f'running PreFilter plugin "{name}": {bad}', name)
                return None, st, ()
            code = out.code
            if code is Code.Success:
                continue
            if code is Code.Skip:
                state.skip_filter_plugins.add(name)
                continue
            st = out if out.plugin else out.with_plugin(name)
            if code is Code.UnschedulableAndUnresolvable:
                return None, st, ()
            if code is Code.Unschedulable:
                rejected = st  # keep running: preemption would need every PreFilter's state
                continue
            return None, _error(f'running PreFilter plugin "{name}": {out.message}', name), ()
        return merged, rejected or SUCCESS, tuple(narrowing)

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo
    ) -> Status:
        """Run AddPod of every PreFilter plugin that has it and did not Skip, in profile order,
        until one fails (RunPreFilterExtensionAddPod).

        Returns:
            `SUCCESS`, or ``Error`` ``running AddPod on PreFilter plugin "<name>": <message>``.
        """
        skip = state.skip_filter_plugins
        for name, fn in self._pre_filter_add_pod:
            if name in skip:
                continue
            try:
                st = fn(state, pod_to_schedule, pod_info_to_add, node_info)
            except Exception as e:
                st = Status(Code.Error, (_describe(e),))
            if st is not None and not isinstance(st, Status):
                st = Status(Code.Error, (_returned(st),))
            if st is not None and not st.is_success:
                return _error(f'running AddPod on PreFilter plugin "{name}": {st.message}', name)
        return SUCCESS

    def run_pre_filter_extension_remove_pod(
        self,
        state: CycleState,
        pod_to_schedule: Pod,
        pod_info_to_remove: PodInfo,
        node_info: NodeInfo,
    ) -> Status:
        """Run RemovePod of every PreFilter plugin that has it and did not Skip, in profile
        order, until one fails (RunPreFilterExtensionRemovePod).

        Returns:
            `SUCCESS`, or ``Error`` ``running RemovePod on PreFilter plugin "<name>":
            <message>``.
        """
        skip = state.skip_filter_plugins
        for name, fn in self._pre_filter_remove_pod:
            if name in skip:
                continue
            try:
                st = fn(state, pod_to_schedule, pod_info_to_remove, node_info)
            except Exception as e:
                st = Status(Code.Error, (_describe(e),))
            if st is not None and not isinstance(st, Status):
                st = Status(Code.Error, (_returned(st),))
            if st is not None and not st.is_success:
                return _error(f'running RemovePod on PreFilter plugin "{name}": {st.message}', name)
        return SUCCESS

    def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> Status:
        """Filter counting the pods nominated to the node in ``handle.nominator``
        (RunFilterPluginsWithNominatedPods, see `schedsim.framework.nominator`)."""
        return run_filter_plugins_with_nominated_pods(
            self, self.handle.nominator, state, pod, node_info
        )

    def run_filter_plugins(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Run the Filter plugins on one node until one rejects (RunFilterPlugins).

        Returns:
            `SUCCESS`, or the first non-success status with its plugin name; a status that is
            neither success nor a rejection becomes ``Error``
            ``running "<plugin>" filter plugin: <message>``.
        """
        skip = state.skip_filter_plugins
        name = ""
        try:
            for name, fn in self._filter:
                if skip and name in skip:
                    continue
                st = fn(state, pod, node_info)
                if st is None:
                    continue
                if st.__class__ is not Status and not isinstance(st, Status):
                    return _error(f'running "{name}" filter plugin: {_returned(st)}', name)
                if st.code is Code.Success:
                    continue
                if not st.is_rejected:
                    return _error(f'running "{name}" filter plugin: {st.message}', name)
                return st if st.plugin == name else st.with_plugin(name)
        except Exception as e:
            return _error(f'running "{name}" filter plugin: {_describe(e)}', name)
        return SUCCESS

    def run_post_filter_plugins(
        self, state: CycleState, pod: Pod, node_to_status: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status]:
        """Run PostFilter after no node passed (RunPostFilterPlugins).

        Returns:
            ``(result, status)``: the first plugin's result and Success when it succeeds;
            its result and status when it returns ``UnschedulableAndUnresolvable``;
            ``(None, Error)`` for a failing plugin; else the last result that nominates
            (None when no plugin returned one) and ``Unschedulable`` with every plugin's
            reasons, attributed to the first one.

        A plugin whose PreFilter returned Skip for the pod is not run: since 1.33 a pod that
        uses no ResourceClaim no longer gets DynamicResources' "no new claims to deallocate"
        in its message (kubernetes#129823).
        """
        reasons: list[str] = []
        rejector = ""
        last: PostFilterResult | None = None
        skip = state.skip_filter_plugins
        for name, fn in self._post_filter:
            if name in skip:  # nothing to undo for a pod its PreFilter skipped (see above)
                continue
            try:
                out = fn(state, pod, node_to_status)
            except Exception as e:
                return None, _error(f'running PostFilter plugin "{name}": {_describe(e)}', name)
            result: PostFilterResult | None = None
            if out is None:
                return None, SUCCESS
            if isinstance(out, PostFilterResult):
                result, st = out, out.status
            elif isinstance(out, Status):
                st = out
            else:
                want = "a Status, a PostFilterResult or None"
                return None, _error(
                    f'running PostFilter plugin "{name}": {_returned(out, want)}', name
                )
            if st.is_success:
                return result, SUCCESS
            if st.code is Code.UnschedulableAndUnresolvable:
                return result, st if st.plugin == name else st.with_plugin(name)
            if not st.is_rejected:
                return None, _error(f'running PostFilter plugin "{name}": {st.message}', name)
            if result is not None:
                last = result
            reasons.extend(st.reasons)
            rejector = rejector or name
        return last, Status(Code.Unschedulable, tuple(reasons), rejector)
