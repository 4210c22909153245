"""The Run methods of the queue and binding-cycle extension points: QueueSort, Permit, Bind
and PostBind (``frameworkruntime`` ``QueueSortFunc``, ``RunPermitPlugins``,
``RunBindPlugins``, ``RunPostBindPlugins``), and the profile checks NewFramework makes.

A mixin of `schedsim.framework.runtime.Framework` (kept apart so that each module stays one
concept): the Framework builds the chains (``_queue_sort``, ``_permit``, ``_bind``,
``_post_bind``) and the handle whose ``waiting_pods`` Permit fills.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from schedsim.api.core import Pod
from schedsim.framework.cycle_state import CycleState
from schedsim.framework.events import ALL_EVENTS, IN_TREE_EVENTS, ClusterEventWithHint
from schedsim.framework.handle import Handle
from schedsim.framework.plugin_results import describe_exception, error_status
from schedsim.framework.plugin_results import returned_problem as wrong_result
from schedsim.framework.profile import Profile
from schedsim.framework.queued_pod_info import QueuedPodInfo, priority_sort_key, sorts_by
from schedsim.framework.status import SUCCESS, Code, Status
from schedsim.framework.waiting_pods import MAX_PERMIT_TIMEOUT_SECONDS, WaitingPod

__all__ = ["BindingPoints", "ProfileError", "default_queue_sort_less"]

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


class BindingPoints:
    """QueueSort, Permit, Bind and PostBind of a Framework (see the module docstring)."""

    profile: Profile
    handle: Handle
    plugins: dict[str, Any]

    def order(self) -> dict[str, tuple[str, ...]]:  # implemented by the Framework
        raise NotImplementedError

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
                except Exception as e:
                    raise ProfileError(
                        f"plugin {name!r}: events_to_register: {describe_exception(e)}"
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
            except Exception as e:
                return error_status(
                    f'running Permit plugin "{name}": {describe_exception(e)}', name
                )
            timeout = 0.0
            if isinstance(out, tuple) and len(out) == 2 and isinstance(out[0], Status):
                out, raw = out
                if not isinstance(raw, int | float) or isinstance(raw, bool):
                    return error_status(
                        f'running Permit plugin "{name}": {wrong_result(raw, "seconds")}', name
                    )
                timeout = float(raw)
            if out is None:
                continue
            if not isinstance(out, Status):
                return error_status(
                    f'running Permit plugin "{name}": {wrong_result(out, _PERMIT_WANTS)}', name
                )
            if out.is_success:
                continue
            if out.is_rejected:
                return out if out.plugin == name else out.with_plugin(name)
            if out.code is Code.Wait:
                waits[name] = min(max(timeout, 0.0), MAX_PERMIT_TIMEOUT_SECONDS)
                continue
            return error_status(f'running Permit plugin "{name}": {out.message}', name)
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
            the first non-Skip result: `SUCCESS`, a rejection with its plugin, or ``Error``
            ``running Bind plugin "<name>": <message>``; ``Skip`` when every plugin skipped
            or there is none (the caller fails the binding).
        """
        for name, fn in self._bind:
            try:
                out = fn(state, pod, node_name)
            except Exception as e:
                return error_status(f'running Bind plugin "{name}": {describe_exception(e)}', name)
            if out is None:
                return SUCCESS
            if not isinstance(out, Status):
                return error_status(f'running Bind plugin "{name}": {wrong_result(out)}', name)
            if out.code is Code.Skip:
                continue
            if out.is_success:
                return SUCCESS
            if out.is_rejected:
                return out if out.plugin == name else out.with_plugin(name)
            return error_status(f'running Bind plugin "{name}": {out.message}', name)
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
            except Exception as e:
                problems.append(f'running PostBind plugin "{name}": {describe_exception(e)}')
        return problems
