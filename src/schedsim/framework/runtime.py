"""The framework runtime: builds a profile's plugins once and runs the extension points.

Plugins are discovered through the ``schedsim.plugins`` entry-point group (the in-tree ones
too), registered with a pluggy ``PluginManager`` (which validates hook names and signatures),
and for each extension point the runtime builds, once, a tuple of bound methods in profile
order. Filter runs through that tuple: a plain loop costs ~40 ns + ~30 ns per plugin where a
pluggy hook call costs ~1 us + ~0.2 us per plugin.

Score runs the same way: one tuple of (name, Score, NormalizeScore, weight) per profile.
Which points exist and which hooks implement them comes from `extension_points`. The whole
runtime is one class, as kube-scheduler's ``frameworkImpl``: the filtering points, the
scoring and reserve points, then the queue and binding points.

Mirrors kube-scheduler's ``frameworkruntime`` (RunPreFilterPlugins,
RunPreFilterExtensionAddPod/RemovePod, RunFilterPlugins, RunPostFilterPlugins,
RunPreScorePlugins, RunScorePlugins, RunReservePluginsReserve, RunReservePluginsUnreserve,
RunPreEnqueuePlugins, RunPreBindPreFlights, RunPreBindPlugins, QueueSortFunc,
RunPermitPlugins, RunBindPlugins, RunPostBindPlugins, RunFilterPluginsWithNominatedPods) and
NewFramework's profile checks.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any, Final

import pluggy

from schedsim.api.core import Pod
from schedsim.api.resource import ResourceClaim
from schedsim.framework import hookspec
from schedsim.framework.cycle_state import CycleState
from schedsim.framework.devices import DeviceCandidate
from schedsim.framework.events import ALL_EVENTS, IN_TREE_EVENTS, ClusterEventWithHint
from schedsim.framework.extension_points import DEVICE_CHOICE, EXTENSION_POINTS, POINTS_BY_KEY
from schedsim.framework.handle import Handle, PluginFactory
from schedsim.framework.hook_binding import HOOK_PREFIX as _HOOK_PREFIX
from schedsim.framework.hook_binding import HookPluginManager as _PluginManager
from schedsim.framework.hook_binding import bind_hook as _bind
from schedsim.framework.hookspec import PROJECT, PostFilterResult, PreFilterResult
from schedsim.framework.interface import NodeInfo, PodInfo
from schedsim.framework.nominator import run_filter_plugins_with_nominated_pods
from schedsim.framework.plugin_results import (
    PLUGIN_FAILURES,
    PluginStatusError,
    attributed,
    failure,
    plugin_error,
)
from schedsim.framework.plugin_results import describe_exception as _describe
from schedsim.framework.plugin_results import returned_problem as _returned
from schedsim.framework.pre_filter_reuse import PreFilterChain, PreFilterReuse
from schedsim.framework.profile import IN_TREE_PLUGINS, Profile
from schedsim.framework.queued_pod_info import QueuedPodInfo, priority_sort_key, sorts_by
from schedsim.framework.registry import (
    ENTRY_POINT_GROUP,
    EntryPointRegistry,
    PluginError,
    discover_plugins,
    load_plugin_spec,
    plugin_sources,
)
from schedsim.framework.score_run import ScoreLink, run_score_links
from schedsim.framework.scores import NodePluginScores
from schedsim.framework.status import SUCCESS, Code, Status
from schedsim.framework.timings import PluginTimings
from schedsim.framework.waiting_pods import MAX_PERMIT_TIMEOUT_SECONDS, WaitingPod

__all__ = [
    "ENTRY_POINT_GROUP",
    "EntryPointRegistry",
    "Framework",
    "PluginError",
    "PluginTimings",
    "ProfileError",
    "default_queue_sort_less",
    "discover_plugins",
    "load_plugin_spec",
    "plugin_sources",
]

ReserveFn = Callable[[CycleState, Pod, str], "Status | None"]
PreEnqueueFn = Callable[[Pod], "Status | None"]
PreScoreFn = Callable[[CycleState, Pod, Sequence[NodeInfo]], "Status | None"]


_NOTHING_TO_BIND: Final = Status(Code.Skip)
"""What `Framework.run_pre_bind_pre_flights` returns when no PreBind plugin has work."""

_PRE_FILTER_WANTS = "a Status, a PreFilterResult or None"

FilterFn = Callable[[CycleState, Pod, NodeInfo], "Status | None"]

PreFilterFn = Callable[[CycleState, Pod, Sequence[NodeInfo]], "Status | PreFilterResult | None"]

PostFilterFn = Callable[[CycleState, Pod, Mapping[str, Status]], "Status | PostFilterResult | None"]

PreFilterExtensionFn = Callable[[CycleState, Pod, PodInfo, NodeInfo], "Status | None"]

_PERMIT_WANTS = "None, a Status or (Status, seconds)"


class ProfileError(ValueError):
    """A profile kube-scheduler would refuse to build (no QueueSort plugin or more than one,
    no Bind plugin); the message is upstream's."""


@sorts_by(priority_sort_key)
def default_queue_sort_less(pod_info1: QueuedPodInfo, pod_info2: QueuedPodInfo) -> bool:
    """PrioritySort's rule (priority descending, then queue timestamp), used by a Framework
    built in code without a QueueSort plugin."""
    p1, p2 = pod_info1.pod.priority, pod_info2.pod.priority
    return p1 > p2 or (p1 == p2 and pod_info1.timestamp < pod_info2.timestamp)


class Framework:
    """A profile's plugins, instantiated once, with its extension points ready to run.

    Args:
        profile: which plugins run where, and their args.
        handle: passed to every plugin factory.
        registry: plugin name -> factory; defaults to `discover_plugins()`.
        timings: when given, every plugin call is timed into it.
        abort_on_plugin_error: the plugin-error policy (see the attribute).

    Raises:
        PluginError: a plugin the user enabled explicitly is not registered, a factory
            rejects its args, or a plugin's hook methods do not match the hook specs.

    Attributes:
        pm: the pluggy PluginManager holding the plugin instances (for cold hooks, docs and
            validation; the hot path does not use it).
        plugins: instantiated plugins by name.
        not_emulated: in-tree plugins of the profile (default or enabled explicitly) that
            schedsim has no implementation for; they do not run.
        abort_on_plugin_error: the plugin-error policy. False (the default): an Error status
            from PreFilter, Filter or Reserve is returned like any other status, as
            kube-scheduler's runtime returns it and CA's plugin runner reads it (a node that
            does not pass). True: `run_pre_filter_plugins`, `run_filter_plugins` and
            `run_reserve_plugins_reserve` raise `PluginStatusError` instead of returning it
            (a failing Reserve runs Unreserve first), and `run_reserve_plugins_unreserve`
            raises it instead of `PluginError`: kube-scheduler's "an Error aborts the
            attempt", which the autoscaling simulations need
            (`schedsim.autoscaler.plugin_errors`). Read only on those error paths, so it
            may be flipped between runs; it costs a passing or rejecting run nothing.
    """

    def __init__(
        self,
        profile: Profile,
        handle: Handle | None = None,
        registry: Mapping[str, PluginFactory] | None = None,
        timings: PluginTimings | None = None,
        abort_on_plugin_error: bool = False,
    ) -> None:
        self.profile = profile
        self.abort_on_plugin_error = abort_on_plugin_error
        self._timings = timings
        self.handle = handle if handle is not None else Handle()
        self.handle.framework = self  # kube-scheduler's framework is its plugins' Handle
        registry = discover_plugins() if registry is None else registry
        self.pm = _PluginManager(PROJECT)
        self.pm.add_hookspecs(hookspec)
        self.plugins: dict[str, Any] = {}
        missing: list[str] = []
        for point in profile.plugins.values():
            for name in point:
                if name in self.plugins or name in missing:
                    continue
                factory = registry.get(name)
                if factory is None:
                    if name in profile.explicit and name not in IN_TREE_PLUGINS:
                        known = ", ".join(sorted(registry)) or "none"
                        raise PluginError(
                            f"plugin {name!r} is not registered (known plugins: {known})"
                        )
                    missing.append(name)  # an in-tree plugin schedsim does not emulate yet
                    continue
                try:
                    plugin = factory(profile.plugin_args.get(name, {}), self.handle)
                except (ValueError, TypeError, KeyError) as e:  # bad args
                    raise PluginError(_args_problem(profile, name, e)) from e
                except PLUGIN_FAILURES as e:  # a bug in the plugin's constructor
                    raise PluginError(f"plugin {name!r}: {_describe(e)}") from e
                unknown = sorted(
                    a
                    for a in dir(plugin)
                    if a.startswith(_HOOK_PREFIX) and not hasattr(hookspec, a)
                )
                if unknown:  # name the plugin, not its repr, as pluggy would
                    raise PluginError(f"plugin {name!r}: unknown hook(s) {', '.join(unknown)}")
                try:
                    self.pm.register(plugin, name=name)
                except pluggy.PluginValidationError as e:
                    raise PluginError(f"plugin {name!r}: {e}") from e
                self.plugins[name] = plugin
        try:
            self.pm.check_pending()
        except pluggy.PluginValidationError as e:
            raise PluginError(str(e)) from e
        self.not_emulated: tuple[str, ...] = tuple(missing)
        self.config_warnings: tuple[str, ...] = self._check_points(profile)
        self._pre_filter = self._chain("preFilter")
        self._pre_filter_reuse: PreFilterReuse | None = None  # built on first use
        self._filter = self._chain("filter")
        self._reserve: tuple[tuple[str, ReserveFn], ...] = self._chain("reserve")
        self._unreserve: tuple[tuple[str, ReserveFn], ...] = tuple(
            reversed(self._chain("reserve", "schedsim_unreserve"))
        )
        self._pre_enqueue: tuple[tuple[str, PreEnqueueFn], ...] = self._chain("preEnqueue")
        self._post_filter = self._chain("postFilter")
        self._pre_bind_pre_flight: tuple[tuple[str, ReserveFn], ...] = self._chain(
            "preBind", "schedsim_pre_bind_pre_flight"
        )
        self._pre_bind: tuple[tuple[str, ReserveFn], ...] = self._chain("preBind")
        self._pre_filter_add_pod = self._chain("preFilter", "schedsim_pre_filter_add_pod")
        self._pre_filter_remove_pod = self._chain("preFilter", "schedsim_pre_filter_remove_pod")
        self._pre_score: tuple[tuple[str, PreScoreFn], ...] = self._chain("preScore")
        self._queue_sort = self._chain("queueSort")
        self._permit = self._chain("permit")
        self._bind = self._chain("bind")
        self._post_bind = self._chain("postBind")
        self._device_choice = self._device_choice_chain()
        normalize = dict(self._chain("score", "schedsim_normalize_score"))
        self._score: tuple[ScoreLink, ...] = tuple(
            (name, fn, normalize.get(name), profile.weight(name))
            for name, fn in self._chain("score")
        )

    def _check_points(self, profile: Profile) -> tuple[str, ...]:
        """kube-scheduler's updatePluginList: a plugin enabled explicitly at a point must
        implement one of its hooks (PluginError otherwise). Returns one warning per
        ``multiPoint`` weight given to a plugin that has no Score (kube-scheduler ignores it
        without a word)."""
        implementing: dict[str, set[str]] = {}
        for point in _UPSTREAM_POINT_ORDER:
            ep = POINTS_BY_KEY[point]
            # Any hook of the point counts: schedsim plugins implement hooks one by one (an
            # Unreserve-only plugin belongs at reserve), where Go needs the whole interface.
            implementing[point] = {
                i.plugin_name
                for h in ep.hooks
                for i in getattr(self.pm.hook, h.name).get_hookimpls()
            }
        for point in _UPSTREAM_POINT_ORDER:
            ep = POINTS_BY_KEY[point]
            seen: set[str] = set()
            for name, where in profile.enabled_at.get(point, ()):
                if name not in self.plugins:
                    continue
                if name not in implementing[point]:
                    problem = f'plugin "{name}" does not extend {ep.protocol} plugin'
                    raise PluginError(_config_problem(profile, where, problem))
                if name in seen:
                    problem = f'plugin "{name}" already registered as "{ep.protocol}"'
                    raise PluginError(_config_problem(profile, where, problem))
                seen.add(name)
        self._check_multi_point_duplicates(profile, implementing)
        scoring = {i.plugin_name for i in self.pm.hook.schedsim_score.get_hookimpls()}
        return tuple(
            f"{_config_where(profile, where)}.weight: ignored: {name} has no Score extension"
            for name, where in profile.multi_point_weights
            if name in self.plugins and name not in scoring
        )

    def _check_multi_point_duplicates(
        self, profile: Profile, implementing: Mapping[str, set[str]]
    ) -> None:
        """expandMultiPointPlugins: a plugin listed twice in ``multiPoint.enabled`` is
        refused at the first point (upstream order) it implements and is not enabled at
        explicitly there (PluginError, kube-scheduler's "already registered")."""
        listed: dict[str, int] = {}
        for name, where in profile.multi_point_enabled:
            listed[name] = listed.get(name, 0) + 1
            if listed[name] != 2 or name not in self.plugins:
                continue
            for point in _UPSTREAM_POINT_ORDER:
                explicit = {n for n, _ in profile.enabled_at.get(point, ())}
                if name in implementing[point] and name not in explicit:
                    protocol = POINTS_BY_KEY[point].protocol
                    problem = f'plugin "{name}" already registered as "{protocol}"'
                    raise PluginError(_config_problem(profile, where, problem))

    def _chain(self, point: str, hook_name: str | None = None) -> tuple[tuple[str, Any], ...]:
        """Bound methods implementing the point's hook (default: its main hook), in profile
        order; an implementation whose parameters differ from the spec's is adapted once."""
        hook_name = hook_name or POINTS_BY_KEY[point].hook
        hook = getattr(self.pm.hook, hook_name)
        spec_args = tuple(inspect.signature(getattr(hookspec, hook_name)).parameters)
        impls = {impl.plugin_name: impl for impl in hook.get_hookimpls()}
        out = []
        for name in self.profile.plugins.get(point, ()):
            impl = impls.get(name)
            if impl is None:
                continue
            fn = _bind(impl.function, spec_args, name, hook_name)
            if self._timings is not None:
                fn = self._timings.wrap(name, hook_name.removeprefix(_HOOK_PREFIX), fn)
            out.append((name, fn))
        return tuple(out)

    def _device_choice_chain(self) -> tuple[tuple[str, Any], ...]:
        """DeviceChoice (schedsim's, `extension_points.DEVICE_CHOICE`): every plugin of the
        profile that implements ``schedsim_choose_devices``, wherever it is enabled, in
        profile order (the order plugins were built in)."""
        hook_name = DEVICE_CHOICE.hook
        spec_args = tuple(inspect.signature(getattr(hookspec, hook_name)).parameters)
        impls = {i.plugin_name: i for i in getattr(self.pm.hook, hook_name).get_hookimpls()}
        out = []
        for name in self.plugins:
            impl = impls.get(name)
            if impl is not None:
                out.append((name, _bind(impl.function, spec_args, name, hook_name)))
        return tuple(out)

    @property
    def has_device_choice_plugins(self) -> bool:
        """Whether a plugin of the profile implements DeviceChoice (schedsim's own point)."""
        return bool(self._device_choice)

    def run_device_choice_plugins(
        self,
        state: CycleState,
        pod: Pod,
        node_info: NodeInfo,
        claim: ResourceClaim,
        request: str,
        candidates: Sequence[DeviceCandidate],
    ) -> list[int] | None:
        """The first ranking a DeviceChoice plugin returns (profile order), completed to a
        permutation of ``range(len(candidates))`` (devices it left out follow in their
        order), or None when no plugin has a preference.

        Raises:
            ValueError: a ranking with an index that is not an int in range, or repeated
                (``plugin "<name>": ChooseDevices: ...``).
        """
        n = len(candidates)
        for name, fn in self._device_choice:
            ranking = fn(state, pod, node_info, claim, request, candidates)
            if ranking is None:
                continue
            seen: set[int] = set()
            out: list[int] = []
            for i in ranking:
                if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < n or i in seen:
                    raise ValueError(
                        f'plugin "{name}": ChooseDevices: invalid index {i!r} for {n} '
                        "candidate(s) (each index in range, at most once)"
                    )
                seen.add(i)
                out.append(i)
            if len(out) < n:
                out.extend(i for i in range(n) if i not in seen)
            return out
        return None

    def _point_chains(self) -> dict[str, tuple[str, ...]]:
        chains: dict[str, tuple[tuple[str, Any], ...]] = {
            "queueSort": self._queue_sort,
            "preEnqueue": self._pre_enqueue,
            "preFilter": self._pre_filter,
            "filter": self._filter,
            "postFilter": self._post_filter,
            "preScore": self._pre_score,
            "reserve": self._reserve,
            "preBind": self._pre_bind,
            "permit": self._permit,
            "bind": self._bind,
            "postBind": self._post_bind,
        }
        out = {}
        for point in EXTENSION_POINTS:
            if point.key == "score":
                out[point.title] = tuple(link[0] for link in self._score)
            elif point.runs:
                out[point.title] = tuple(n for n, _ in chains[point.key])
        return out

    def extension_points(self, plugin: str) -> tuple[str, ...]:
        """The extension points ``plugin`` runs at in this profile, in cycle order, e.g.
        ``("PreFilter", "Filter", "PreScore", "Score")``."""
        return tuple(point for point, names in self._point_chains().items() if plugin in names)

    def order(self) -> dict[str, tuple[str, ...]]:
        """Extension point -> plugins that run there, in order (what the profile resolved to),
        for every point schedsim runs, in cycle order (`extension_points.RUN_POINTS`)."""
        return self._point_chains()

    @property
    def score_weights(self) -> dict[str, int]:
        """Score plugin -> its weight in this profile, in run order."""
        return {link[0]: link[3] for link in self._score}

    @property
    def score_links(self) -> tuple[ScoreLink, ...]:
        """The Score chain: (name, Score, NormalizeScore or None, weight) per plugin, in run
        order (for bulk scorers such as `schedsim.scheduler.scoring.score_totals`)."""
        return self._score

    @property
    def normalize_score_plugin_names(self) -> tuple[str, ...]:
        """Score plugins that also implement NormalizeScore, in run order."""
        return tuple(link[0] for link in self._score if link[2] is not None)

    @property
    def has_score_plugins(self) -> bool:
        """Whether any enabled plugin implements Score."""
        return bool(self._score)

    @property
    def timed(self) -> bool:
        """Every plugin call is timed (``timings``): callers then use no method of a plugin
        bound for one attempt (``filter_node_fn``, ``score_node_fn``), only the chains."""
        return self._timings is not None

    @property
    def filter_plugin_names(self) -> tuple[str, ...]:
        """Names of the Filter plugins, in run order."""
        return tuple(n for n, _ in self._filter)

    @property
    def has_reserve_plugins(self) -> bool:
        """Whether any enabled plugin implements Reserve."""
        return bool(self._reserve)

    @property
    def has_post_filter_plugins(self) -> bool:
        """Whether any enabled plugin implements PostFilter."""
        return bool(self._post_filter)

    @property
    def has_pre_bind_plugins(self) -> bool:
        """Whether any enabled plugin implements PreBind."""
        return bool(self._pre_bind)

    def run_pre_enqueue_plugins(self, pod: Pod) -> Status:
        """Run PreEnqueue in profile order until one rejects (RunPreEnqueuePlugins).

        Returns:
            `SUCCESS`, the first rejecting status (with its plugin), or ``Error``
            ``running PreEnqueue plugin "<name>": <message>``.
        """
        for name, fn in self._pre_enqueue:
            try:
                st = fn(pod)
            except PLUGIN_FAILURES as e:
                return plugin_error("PreEnqueue", name, _describe(e))
            if st is None:
                continue
            if not isinstance(st, Status):
                return plugin_error("PreEnqueue", name, _returned(st))
            if st.is_success:
                continue
            if st.is_rejected:
                return attributed(st, name)
            return plugin_error("PreEnqueue", name, st.message)
        return SUCCESS

    def run_pre_bind_pre_flights(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Ask each PreBind plugin whether it has work (RunPreBindPreFlights).

        Returns:
            Success if any plugin has work, ``Skip`` if none has (or none is enabled), or the
            first ``Error``. Plugins that returned Skip are recorded in
            ``state.skip_pre_bind_plugins``.
        """
        result = _NOTHING_TO_BIND  # a Status is immutable: one shared
        for name, fn in self._pre_bind_pre_flight:
            try:
                st = fn(state, pod, node_name)
            except PLUGIN_FAILURES as e:
                return plugin_error("PreBindPreFlight", name, _describe(e))
            if st is not None and not isinstance(st, Status):
                return plugin_error("PreBindPreFlight", name, _returned(st))
            if st is None or st.is_success:
                result = SUCCESS
            elif st.code is Code.Skip:
                state.skip_pre_bind_plugins.add(name)
            else:
                return plugin_error("PreBindPreFlight", name, st.message)
        return result

    def run_pre_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Run PreBind in profile order, skipping plugins whose pre-flight said Skip
        (RunPreBindPlugins).

        Returns:
            `SUCCESS`, or the first failure: a rejection keeps its code and plugin, anything
            else becomes ``Error`` ``running PreBind plugin "<name>": <message>``.
        """
        skip = state.skip_pre_bind_plugins
        for name, fn in self._pre_bind:
            if name in skip:
                continue
            try:
                st = fn(state, pod, node_name)
            except PLUGIN_FAILURES as e:
                return plugin_error("PreBind", name, _describe(e))
            if st is None:
                continue
            if not isinstance(st, Status):
                return plugin_error("PreBind", name, _returned(st))
            if st.is_success:
                continue
            if st.is_rejected:
                return attributed(st, name)
            return plugin_error("PreBind", name, st.message)
        return SUCCESS

    def run_pre_score_plugins(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status:
        """Run PreScore in profile order (RunPreScorePlugins).

        A plugin returning ``Skip`` is added to ``state.skip_score_plugins``: its Score and
        NormalizeScore are not run for this attempt.

        Args:
            state: the attempt's cycle state.
            pod: the pod being scheduled.
            nodes: the feasible nodes.

        Returns:
            `SUCCESS`, or the first failure as ``Error``
            ``running PreScore plugin "<name>": <message>`` (any code but Success and Skip).
        """
        skip = state.skip_score_plugins
        for name, fn in self._pre_score:
            try:
                st = fn(state, pod, nodes)
            except PLUGIN_FAILURES as e:
                return plugin_error("PreScore", name, _describe(e))
            if st is None:
                continue
            if not isinstance(st, Status):
                return plugin_error("PreScore", name, _returned(st))
            code = st.code
            if code is Code.Success:
                continue
            if code is Code.Skip:
                skip.add(name)
                continue
            return plugin_error("PreScore", name, st.message)
        return SUCCESS

    def run_score_plugins(
        self,
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        raw: dict[str, dict[str, int]] | None = None,
        reuse: Mapping[str, dict[NodeInfo, tuple[int, int]]] | None = None,
        detail: bool = True,
    ) -> tuple[list[NodePluginScores], Status]:
        """Score the feasible nodes (RunScorePlugins).

        For each Score plugin not in ``state.skip_score_plugins``, in profile order: Score on
        every node, then the plugin's NormalizeScore (if it has one) over all of them, then
        each node's score must be in [`MIN_NODE_SCORE`, `MAX_NODE_SCORE`] and is multiplied
        by the plugin's weight.

        Args:
            state: the attempt's cycle state (after `run_pre_score_plugins`).
            pod: the pod being scheduled.
            nodes: the feasible nodes; the result keeps their order.
            raw: when given (``--explain``), filled with plugin -> node -> raw score (before
                NormalizeScore and weight); ``None`` costs nothing.
            reuse: plugin -> NodeInfo -> (generation, raw score) from earlier identical pods:
                a plugin listed here takes a node's raw score from it while the NodeInfo's
                generation matches, and records the ones it computes. The caller vouches that
                the plugin's Score depends on the pod and the node alone
                (`schedsim.scheduler.ResultCache`).
            detail: False when only the totals matter (host selection without
                ``--explain``): each `NodePluginScores` then has an empty ``scores`` tuple,
                which saves building one `PluginScore` per (node, plugin).

        Returns:
            ``(scores, status)``: one `NodePluginScores` per node and `SUCCESS`; or ``[]`` and
            an ``Error`` in kube-scheduler's words: ``running Score plugins: plugin "<name>"
            failed with: <message>`` (a Score that returned a Status or raised),
            ``running Normalize on Score plugins: plugin "<name>" failed with: <message>``,
            or ``applying score defaultWeights on Score plugins: plugin "<name>" returns an
            invalid score <n>, it should in the range of [0, 100] after normalizing``.
        """
        skip = state.skip_score_plugins
        links = [link for link in self._score if link[0] not in skip] if skip else self._score
        return run_score_links(links, state, pod, nodes, raw, reuse, detail)

    def run_reserve_plugins_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Run Reserve in profile order (RunReservePluginsReserve).

        Returns:
            `SUCCESS`; the plugin's own status (with its name) when it rejects the pod
            (Unschedulable, UnschedulableAndUnresolvable, Pending); otherwise an ``Error``
            status ``running Reserve plugin "<name>": <message>``. The caller runs
            `run_reserve_plugins_unreserve` on failure.

        Raises:
            PluginStatusError: instead of returning an ``Error`` status, when
                ``abort_on_plugin_error`` is set, after running every Unreserve (the
                message then ends with ``; <what Unreserve raised>``, if one raised).
        """
        for name, fn in self._reserve:
            try:
                st = fn(state, pod, node_name)
            except PLUGIN_FAILURES as e:
                detail = _describe(e)
                break
            if st is not None and not isinstance(st, Status):
                detail = _returned(st)
                break
            if st is not None and not st.is_success:
                if st.is_rejected:
                    return attributed(st, name)
                detail = st.message
                break
        else:
            return SUCCESS
        if self.abort_on_plugin_error:  # undo the other Reserves first, as the caller would
            failed = self._unreserve_all(state, pod, node_name)
            raise PluginStatusError(pod, "; ".join((failure("Reserve", name, detail), *failed)))
        return plugin_error("Reserve", name, detail)

    def run_reserve_plugins_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Run Unreserve in reverse profile order (RunReservePluginsUnreserve).

        Raises:
            PluginError: an Unreserve raised (it must not fail); the others still ran.
            PluginStatusError: instead of `PluginError`, when ``abort_on_plugin_error`` is
                set (the pod's attempt failed).
        """
        failed = self._unreserve_all(state, pod, node_name)
        if failed:
            if self.abort_on_plugin_error:
                raise PluginStatusError(pod, "; ".join(failed))
            raise PluginError("; ".join(failed))

    def _unreserve_all(self, state: CycleState, pod: Pod, node_name: str) -> list[str]:
        """Run every Unreserve; one problem per plugin that raised."""
        failed = []
        for name, fn in self._unreserve:
            try:
                fn(state, pod, node_name)
            except PLUGIN_FAILURES as e:  # keep undoing the others first
                failed.append(failure("Unreserve", name, _describe(e)))
        return failed

    _pre_filter: tuple[tuple[str, PreFilterFn], ...]
    _pre_filter_add_pod: tuple[tuple[str, PreFilterExtensionFn], ...]
    _pre_filter_remove_pod: tuple[tuple[str, PreFilterExtensionFn], ...]
    _filter: tuple[tuple[str, FilterFn], ...]
    _post_filter: tuple[tuple[str, PostFilterFn], ...]

    def run_pre_filter_plugins_reusing(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status, tuple[str, ...]]:
        """`run_pre_filter_plugins`, with the outcomes of the PreFilters that depend on the
        pod alone given back from an earlier attempt of the same pod object instead of
        calling those plugins again (`schedsim.framework.pre_filter_reuse`): the same
        result, status, Skip set and CycleState values. Used by the autoscaler's placement
        simulations, which place the same pods again at every plan."""
        reuse = self._pre_filter_reuse
        if reuse is None:
            reuse = self._pre_filter_reuse = PreFilterReuse(self._pre_filter, self.plugins)
        if self._timings is not None or not reuse.active:
            return self.run_pre_filter_plugins(state, pod, nodes)
        chain = reuse.chain_for(pod)
        if chain is not None:
            return self.run_pre_filter_plugins(state, pod, nodes, chain)
        chain, keep = reuse.recording(pod)
        out = self.run_pre_filter_plugins(state, pod, nodes, chain)
        if out[1] is SUCCESS:
            keep()
        return out

    def run_pre_filter_plugins(
        self,
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        chain: PreFilterChain | None = None,
    ) -> tuple[PreFilterResult | None, Status, tuple[str, ...]]:
        """Run every PreFilter plugin (RunPreFilterPlugins).

        Args:
            chain: the (name, function) pairs to run instead of the profile's PreFilter
                chain (`run_pre_filter_plugins_reusing`'s, with kept outcomes).

        Returns:
            ``(result, status, narrowing_plugins)``: the merged `PreFilterResult` (None = all
            nodes), `SUCCESS` or the failing status (with its plugin), and the plugins that
            narrowed the node set. ``Skip`` adds the plugin to ``state.skip_filter_plugins``.

        Raises:
            PluginStatusError: instead of returning an ``Error`` status, when
                ``abort_on_plugin_error`` is set.
        """
        merged: PreFilterResult | None = None
        narrowing: list[str] = []
        rejected: Status | None = None
        for name, fn in self._pre_filter if chain is None else chain:
            try:
                out = fn(state, pod, nodes)
            except PLUGIN_FAILURES as e:
                st = plugin_error("PreFilter", name, _describe(e))
                return None, self._failed(pod, st), ()
            if out is None:
                continue
            if out.__class__ is Status:  # the common case first: Skip or Success
                code = out.code
                if code is Code.Skip:
                    state.skip_filter_plugins.add(name)
                    continue
                if code is Code.Success:
                    continue
            elif isinstance(out, PreFilterResult):
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
                st = plugin_error("PreFilter", name, bad)
                return None, self._failed(pod, st), ()
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
            st = plugin_error("PreFilter", name, out.message)
            return None, self._failed(pod, st), ()
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
            except PLUGIN_FAILURES as e:
                st = Status(Code.Error, (_describe(e),))
            if st is not None and not isinstance(st, Status):
                st = Status(Code.Error, (_returned(st),))
            if st is not None and not st.is_success:
                return plugin_error("PreFilterAddPod", name, st.message)
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
            except PLUGIN_FAILURES as e:
                st = Status(Code.Error, (_describe(e),))
            if st is not None and not isinstance(st, Status):
                st = Status(Code.Error, (_returned(st),))
            if st is not None and not st.is_success:
                return plugin_error("PreFilterRemovePod", name, st.message)
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

        Raises:
            PluginStatusError: that Error, when ``abort_on_plugin_error`` is set.
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
                    detail = _returned(st)
                    break
                if st.code is Code.Success:
                    continue
                if not st.is_rejected:
                    detail = st.message
                    break
                return attributed(st, name)
            else:
                return SUCCESS
        except PLUGIN_FAILURES as e:
            detail = _describe(e)
        return self._failed(pod, plugin_error("Filter", name, detail))

    def filter_chain(self, state: CycleState, pod: Pod) -> Callable[[NodeInfo], Status]:
        """`run_filter_plugins` for this attempt as a function of the node, for the plugins
        ``state.skip_filter_plugins`` leaves now: the set is read once, here, not per node
        (for a walk over many nodes during which it does not change). A plugin with a
        ``filter_node_fn(state, pod)`` method gives its Filter bound to the attempt there
        (a function of the node returning what its Filter returns). Same statuses, same
        errors."""
        skip = state.skip_filter_plugins
        plugins = {} if self._timings is not None else self.plugins
        links: list[tuple[str, Callable[[NodeInfo], Status | None]]] = []
        for name, fn in self._filter:
            if name in skip:
                continue
            bound = None
            bind = getattr(plugins.get(name), "filter_node_fn", None)
            if bind is not None:
                try:
                    bound = bind(state, pod)
                except PLUGIN_FAILURES:
                    bound = None  # its Filter, per node, reports it
            links.append((name, bound if bound is not None else partial(fn, state, pod)))
        failed = self._failed
        success = Code.Success
        if len(links) == 1:  # the same checks, without the loop
            only, fn1 = links[0]

            def run_one(node_info: NodeInfo) -> Status:
                try:
                    st = fn1(node_info)
                    if st is None or (st.__class__ is Status and st.code is success):
                        return SUCCESS
                    if st.__class__ is not Status and not isinstance(st, Status):
                        detail = _returned(st)
                    elif st.code is success:
                        return SUCCESS
                    elif not st.is_rejected:
                        detail = st.message
                    else:
                        return attributed(st, only)
                except PLUGIN_FAILURES as e:
                    detail = _describe(e)
                return failed(pod, plugin_error("Filter", only, detail))

            return run_one

        def run(node_info: NodeInfo) -> Status:
            name = ""
            try:
                for name, fn in links:
                    st = fn(node_info)
                    if st is None:
                        continue
                    if st.__class__ is not Status and not isinstance(st, Status):
                        detail = _returned(st)
                        break
                    if st.code is success:
                        continue
                    if not st.is_rejected:
                        detail = st.message
                        break
                    return attributed(st, name)
                else:
                    return SUCCESS
            except PLUGIN_FAILURES as e:
                detail = _describe(e)
            return failed(pod, plugin_error("Filter", name, detail))

        return run

    def _failed(self, pod: Pod, status: Status) -> Status:
        """``status`` (an Error), or `PluginStatusError` raised with its message when
        ``abort_on_plugin_error`` is set. Called outside the runs' ``try`` blocks, so the
        raise is never taken for the plugin's own exception."""
        if self.abort_on_plugin_error:
            raise PluginStatusError(pod, status.message)
        return status

    def run_post_filter_plugins(
        self,
        state: CycleState,
        pod: Pod,
        node_to_status: Mapping[str, Status],
        *,
        statuses: dict[str, Status] | None = None,
    ) -> tuple[PostFilterResult | None, Status]:
        """Run PostFilter after no node passed (RunPostFilterPlugins).

        Returns:
            ``(result, status)``: the first plugin's result and Success when it succeeds;
            its result and status when it returns ``UnschedulableAndUnresolvable``;
            ``(None, Error)`` for a failing plugin; else the last result that nominates
            (None when no plugin returned one) and ``Unschedulable`` with every plugin's
            reasons, attributed to the first one.

        Every PostFilter plugin runs, a plugin whose PreFilter returned Skip for the pod too
        (RunPostFilterPlugins reads no SkipFilterPlugins, release-1.34): a pod that uses no
        ResourceClaim gets DynamicResources' "no new claims to deallocate" in its message
        (kubernetes#129823's fast path was replaced in 1.34 by the claim store, which reads
        the cycle state first). An Error status a plugin returns keeps its message
        (``AsStatus(s.AsError()).WithPlugin``, no "running" prefix); one it raises, or a
        value of the wrong type, is worded as the other points' failures.

        Args:
            statuses: when given, filled with plugin -> the status it returned, for the
                plugins that ran (``--explain``).
        """
        reasons: list[str] = []
        rejector = ""
        last: PostFilterResult | None = None
        for name, fn in self._post_filter:
            try:
                out = fn(state, pod, node_to_status)
            except PLUGIN_FAILURES as e:
                return None, _noted(statuses, name, plugin_error("PostFilter", name, _describe(e)))
            result: PostFilterResult | None = None
            if out is None:
                _noted(statuses, name, SUCCESS)
                return None, SUCCESS
            if isinstance(out, PostFilterResult):
                result, st = out, out.status
            elif isinstance(out, Status):
                st = out
            else:
                want = "a Status, a PostFilterResult or None"
                failed = plugin_error("PostFilter", name, _returned(out, want))
                return None, _noted(statuses, name, failed)
            _noted(statuses, name, st)
            if st.is_success:
                return result, SUCCESS
            if st.code is Code.UnschedulableAndUnresolvable:
                return result, attributed(st, name)
            if not st.is_rejected:
                return None, Status(Code.Error, (st.message,), name)
            if result is not None:
                last = result
            reasons.extend(st.reasons)
            rejector = rejector or name
        return last, Status(Code.Unschedulable, tuple(reasons), rejector)

    _queue_sort: tuple[tuple[str, Callable[..., Any]], ...]
    _permit: tuple[tuple[str, Callable[..., Any]], ...]
    _bind: tuple[tuple[str, Callable[..., Any]], ...]
    _post_bind: tuple[tuple[str, Callable[..., Any]], ...]

    def validate_profile(self) -> None:
        """Refuse a profile kube-scheduler's NewFramework refuses.

        Raises:
            ProfileError: ``only one queue sort plugin required for profile with scheduler
                name "<name>", but got <n>``; ``at least one bind plugin is needed for
                profile with scheduler name "<name>"``.
        """
        name = self.profile.scheduler_name
        if len(self._queue_sort) != 1:
            raise ProfileError(
                "only one queue sort plugin required for profile with scheduler name "
                f'"{name}", but got {len(self._queue_sort)}'
            )
        if not self._bind:
            raise ProfileError(
                f'at least one bind plugin is needed for profile with scheduler name "{name}"'
            )

    def events_to_register(self) -> dict[str, tuple[ClusterEventWithHint, ...]]:
        """Plugin -> the cluster events (with hints) that may make a pod it rejected
        schedulable, for every plugin that can reject a pod (PreEnqueue, PreFilter, Filter,
        Reserve, Permit, PreBind), as buildQueueingHintMap collects them: a plugin's
        ``events_to_register()``; without one, an in-tree plugin's upstream events
        (`IN_TREE_EVENTS`), any other plugin's `ALL_EVENTS`.

        Raises:
            ProfileError: ``events_to_register`` raised or returned something else than
                `ClusterEventWithHint` objects.
        """
        points = ("PreEnqueue", "PreFilter", "Filter", "Reserve", "Permit", "PreBind")
        order = self.order()
        out: dict[str, tuple[ClusterEventWithHint, ...]] = {}
        for point in points:
            for name in order.get(point, ()):
                plugin = self.plugins.get(name)
                if plugin is None or name in out:
                    continue
                method = getattr(plugin, "events_to_register", None)
                if method is None:
                    out[name] = IN_TREE_EVENTS.get(name, ALL_EVENTS)
                    continue
                try:
                    events = tuple(method())
                except PLUGIN_FAILURES as e:
                    raise ProfileError(
                        f"plugin {name!r}: events_to_register: {_describe(e)}"
                    ) from e
                if not all(isinstance(ev, ClusterEventWithHint) for ev in events):
                    raise ProfileError(
                        f"plugin {name!r}: events_to_register must return ClusterEventWithHint "
                        "objects"
                    )
                out[name] = events
        return out

    @property
    def queue_sort_plugin_name(self) -> str:
        """The QueueSort plugin's name ("" when the profile has none)."""
        return self._queue_sort[0][0] if self._queue_sort else ""

    def queue_sort_less(self) -> Callable[[QueuedPodInfo, QueuedPodInfo], bool]:
        """The QueueSort plugin's ``Less`` (``QueueSortFunc``), called directly by the queue's
        heap; `default_queue_sort_less` when the profile has no QueueSort plugin (a profile
        built in code; `validate_profile` refuses it)."""
        if not self._queue_sort:
            return default_queue_sort_less
        fn: Callable[[QueuedPodInfo, QueuedPodInfo], bool] = self._queue_sort[0][1]
        return fn

    def run_permit_plugins(self, state: CycleState, pod: Pod, node_name: str, now: float) -> Status:
        """Run Permit in profile order (RunPermitPlugins).

        Args:
            now: the clock's time (seconds): a waiting plugin's deadline is ``now`` plus its
                timeout, capped at `MAX_PERMIT_TIMEOUT_SECONDS`.

        Returns:
            `SUCCESS`; the first rejection (with its plugin); ``Error`` ``running Permit plugin
            "<name>": <message>``; or ``Wait`` (``one or more plugins asked to wait and no
            plugin rejected pod "<name>"``) after registering a `WaitingPod` in
            ``handle.waiting_pods``.
        """
        waits: dict[str, float] = {}
        for name, fn in self._permit:
            try:
                out = fn(state, pod, node_name)
            except PLUGIN_FAILURES as e:
                return plugin_error("Permit", name, _describe(e))
            timeout = 0.0
            if isinstance(out, tuple) and len(out) == 2 and isinstance(out[0], Status):
                out, raw = out
                if not isinstance(raw, int | float) or isinstance(raw, bool):
                    return plugin_error("Permit", name, _returned(raw, "seconds"))
                timeout = float(raw)
            if out is None:
                continue
            if not isinstance(out, Status):
                return plugin_error("Permit", name, _returned(out, _PERMIT_WANTS))
            if out.is_success:
                continue
            if out.is_rejected:
                return attributed(out, name)
            if out.code is Code.Wait:
                waits[name] = min(max(timeout, 0.0), MAX_PERMIT_TIMEOUT_SECONDS)
                continue
            return plugin_error("Permit", name, out.message)
        if not waits:
            return SUCCESS
        deadlines = {n: now + t for n, t in waits.items()}
        self.handle.waiting_pods.add(WaitingPod(pod, node_name, deadlines, waits))
        return Status(
            Code.Wait,
            (f'one or more plugins asked to wait and no plugin rejected pod "{pod.name}"',),
        )

    def run_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Run Bind in profile order until one does not skip (RunBindPlugins).

        Returns:
            the first non-Skip result: success naming the plugin that bound, a rejection with
            its plugin, or ``Error``
            ``running Bind plugin "<name>": <message>``; ``Skip`` when every plugin skipped
            or there is none (the caller fails the binding).
        """
        for name, fn in self._bind:
            try:
                out = fn(state, pod, node_name)
            except PLUGIN_FAILURES as e:
                return plugin_error("Bind", name, _describe(e))
            if out is None:
                return attributed(SUCCESS, name)
            if not isinstance(out, Status):
                return plugin_error("Bind", name, _returned(out))
            if out.code is Code.Skip:
                continue
            if out.is_success:
                return attributed(out if out.plugin == name else SUCCESS, name)
            if out.is_rejected:
                return attributed(out, name)
            return plugin_error("Bind", name, out.message)
        return Status(Code.Skip)

    def run_post_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> list[str]:
        """Run PostBind in profile order (RunPostBindPlugins); results are ignored.

        Returns:
            one problem per plugin that raised (``running PostBind plugin "<name>": ...``),
            for the caller to report as warnings; the pod stays bound.
        """
        problems = []
        for name, fn in self._post_bind:
            try:
                fn(state, pod, node_name)
            except PLUGIN_FAILURES as e:
                problems.append(failure("PostBind", name, _describe(e)))
        return problems


def _noted(statuses: dict[str, Status] | None, name: str, status: Status) -> Status:
    """``status``, recorded under ``name`` in ``statuses`` when one is given."""
    if statuses is not None:
        statuses[name] = status
    return status


def _config_where(profile: Profile, where: str) -> str:
    """``KubeSchedulerConfiguration: <path>`` for a profile read from a file, else ``<path>``."""
    return f"KubeSchedulerConfiguration: {where}" if profile.config_path else where


_UPSTREAM_POINT_ORDER: Final = (
    "preFilter",
    "filter",
    "postFilter",
    "reserve",
    "preScore",
    "score",
    "preBind",
    "bind",
    "postBind",
    "permit",
    "preEnqueue",
    "queueSort",
)
"""The extension points in the order kube-scheduler's NewFramework configures them
(getExtensionPoints), so that the first configuration error found is upstream's."""


def _config_problem(profile: Profile, where: str, problem: str) -> str:
    return f"{_config_where(profile, where)}: {problem}"


def _args_problem(profile: Profile, name: str, e: Exception) -> str:
    """A factory's args error, naming the config field when both are known: an error with
    ``field`` and ``problem`` (``framework.args.ArgsError``) from args read from
    ``profiles[i].pluginConfig[j]`` becomes ``KubeSchedulerConfiguration:
    profiles[i].pluginConfig[j].args.<field>: <problem>``."""
    field = getattr(e, "field", None)
    problem = getattr(e, "problem", None)
    j = profile.plugin_config_index.get(name)
    if isinstance(field, str) and isinstance(problem, str) and profile.config_path:
        args = f"{profile.config_path}.pluginConfig[{j}].args" if j is not None else ""
        if args:
            where = f"{args}.{field}" if field else args
            return f"KubeSchedulerConfiguration: {where}: {problem}"
    return f"plugin {name!r}: {e}"
