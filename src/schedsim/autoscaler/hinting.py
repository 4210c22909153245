"""The hinting simulator: schedule pods into a snapshot, trying each pod's last node first.

Mirrors CA ``simulator/scheduling/hinting_simulator.go`` (``TrySchedulePods``), ``hints.go``
and ``similar_pods.go``. It does not fork: placements stay in the snapshot it is given.
Used by filter-out-schedulable (scale-up) and by the removal simulator (scale-down).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

from schedsim.api.core import Pod
from schedsim.autoscaler.equivalence import (
    MAX_GROUPS_PER_CONTROLLER,
    controller_uid,
    is_daemonset_pod,
    scheduling_spec,
)
from schedsim.autoscaler.plugin_errors import PluginStatusError, PodError
from schedsim.snapshot.errors import SchedulingError, SchedulingErrorType
from schedsim.snapshot.infos import NodeInfo
from schedsim.snapshot.predicate import PredicateSnapshot

__all__ = ["HintingSimulator", "Hints", "PodPlacement", "TryScheduleResult", "hint_key"]


def hint_key(pod: Pod) -> str:
    """The pod's UID, or ``namespace/name`` when it has none (CA ``HintKeyFromPod``)."""
    return pod.uid or pod.key


class Hints:
    """Where pods went last: two generations, so hints survive one `drop_old` (CA ``Hints``).

    Time: every method O(1).
    """

    def __init__(self) -> None:
        self._current: dict[str, str] = {}
        self._old: dict[str, str] = {}

    def get(self, key: str) -> str | None:
        """The hinted node name (current generation first), or None."""
        node = self._current.get(key)
        return node if node is not None else self._old.get(key)

    def set(self, key: str, node_name: str) -> None:
        """Record ``node_name`` for ``key`` in the current generation."""
        self._current[key] = node_name

    def drop_old(self) -> None:
        """Forget the old generation; the current one becomes old."""
        self._old = self._current
        self._current = {}


@attrs.frozen
class PodPlacement:
    """A pod and the node the simulator put it on."""

    pod: Pod
    node_name: str


@attrs.frozen
class TryScheduleResult:
    """What `HintingSimulator.try_schedule_pods` did.

    Attributes:
        scheduled: placed pods, in the order they were placed.
        unschedulable: pods that found no node (with ``break_on_failure``: only the first).
        errors: the `SchedulingError` of each unschedulable pod, by hint key (absent for pods
            skipped because a similar pod had already failed).
        unprocessed: pods not attempted because ``break_on_failure`` stopped the run.
        plugin_errors: pods whose attempt a plugin Error status aborted (only inside
            `aborting_plugin_errors`); they are neither scheduled nor unschedulable, and
            with ``break_on_failure`` the first one stops the run.
    """

    scheduled: tuple[PodPlacement, ...]
    unschedulable: tuple[Pod, ...]
    errors: dict[str, SchedulingError]
    unprocessed: tuple[Pod, ...] = ()
    plugin_errors: tuple[PodError, ...] = ()


class _SimilarPods:
    """Specs found unschedulable in this call, per controller (CA ``SimilarPodsScheduling``)."""

    def __init__(self) -> None:
        self._specs: dict[str, list[Pod]] = {}

    def is_similar_unschedulable(self, pod: Pod) -> bool:
        uid = controller_uid(pod)
        if uid is None or uid not in self._specs:
            return False
        spec = scheduling_spec(pod)
        return any(spec == s for s in self._specs[uid])

    def set_unschedulable(self, pod: Pod) -> None:
        uid = controller_uid(pod)
        if uid is None or is_daemonset_pod(pod):  # DaemonSet pods differ per node
            return
        specs = self._specs.setdefault(uid, [])
        if len(specs) < MAX_GROUPS_PER_CONTROLLER:
            specs.append(scheduling_spec(pod))


class HintingSimulator:
    """Schedules pods with hints; keep one per run so hints carry across calls.

    Attributes:
        hints: where each pod went last (by `hint_key`).
    """

    def __init__(self) -> None:
        self.hints = Hints()

    def try_schedule_pods(
        self,
        snapshot: PredicateSnapshot,
        pods: Sequence[Pod],
        is_node_acceptable: Callable[[NodeInfo], bool] | None = None,
        *,
        break_on_failure: bool = False,
    ) -> TryScheduleResult:
        """Schedule ``pods`` into ``snapshot`` (no fork), highest priority first.

        Pods are grouped by priority (descending; given order within a priority). In each
        group, pods whose hinted node exists, is acceptable and passes the filters go there
        first; the others go to the first acceptable passing node (round robin), unless a
        similar pod (same controller and spec) already failed in this call. A placed pod's
        hint is refreshed.

        Args:
            snapshot: where pods are scheduled; it keeps the placements.
            pods: pods to place (their ``nodeName`` is ignored).
            is_node_acceptable: restricts destinations (None: every node).
            break_on_failure: stop at the first pod that fits nowhere (the removal simulator).

        Returns:
            the placements and the pods that did not fit.

        Inside `aborting_plugin_errors`, a pod whose attempt hits a plugin Error status is
        recorded in ``plugin_errors`` and the run goes on (kube-scheduler fails that attempt
        only); with ``break_on_failure`` it stops the run like a pod that fits nowhere.

        Raises:
            SchedulingError: INTERNAL_ERROR from the snapshot (e.g. a failing Reserve): the
                run stops, as CA's does.
        """
        by_priority: dict[int, list[Pod]] = {}
        for pod in pods:
            by_priority.setdefault(pod.priority, []).append(pod)
        scheduled: list[PodPlacement] = []
        unschedulable: list[Pod] = []
        errors: dict[str, SchedulingError] = {}
        plugin_errors: list[PodError] = []
        similar = _SimilarPods()
        priorities = sorted(by_priority, reverse=True)

        def stopped(rest: Sequence[Pod], gi: int) -> TryScheduleResult:
            later = [p for q in priorities[gi + 1 :] for p in by_priority[q]]
            return TryScheduleResult(
                tuple(scheduled),
                tuple(unschedulable),
                errors,
                (*rest, *later),
                tuple(plugin_errors),
            )

        for gi, prio in enumerate(priorities):
            group = by_priority[prio]
            rest: list[Pod] = []
            for i, pod in enumerate(group):
                try:
                    node = self._try_hint(snapshot, pod, is_node_acceptable)
                except PluginStatusError as e:
                    plugin_errors.append(PodError.from_error(e))
                    if break_on_failure:
                        return stopped([*rest, *group[i + 1 :]], gi)
                    continue
                if node is None:
                    rest.append(pod)
                else:
                    scheduled.append(PodPlacement(pod, node))
            for i, pod in enumerate(rest):
                if similar.is_similar_unschedulable(pod):
                    unschedulable.append(pod)
                else:
                    try:
                        node = snapshot.schedule_pod_on_any_node_matching(pod, is_node_acceptable)
                    except SchedulingError as e:
                        if e.type is SchedulingErrorType.INTERNAL_ERROR:
                            raise
                        similar.set_unschedulable(pod)
                        errors[hint_key(pod)] = e
                        unschedulable.append(pod)
                    except PluginStatusError as e:
                        # not remembered as similar-unschedulable: it is not a fit verdict
                        plugin_errors.append(PodError.from_error(e))
                    else:
                        self.hints.set(hint_key(pod), node)
                        scheduled.append(PodPlacement(pod, node))
                        continue
                if break_on_failure:
                    return stopped(rest[i + 1 :], gi)
        return TryScheduleResult(
            tuple(scheduled), tuple(unschedulable), errors, (), tuple(plugin_errors)
        )

    def _try_hint(
        self,
        snapshot: PredicateSnapshot,
        pod: Pod,
        is_node_acceptable: Callable[[NodeInfo], bool] | None,
    ) -> str | None:
        key = hint_key(pod)
        node_name = self.hints.get(key)
        if node_name is None:
            return None
        try:
            ni = snapshot.get_node_info(node_name)
        except LookupError:
            return None
        if is_node_acceptable is not None and not is_node_acceptable(ni):
            return None
        try:
            snapshot.schedule_pod(pod, node_name)
        except SchedulingError as e:
            if e.type is SchedulingErrorType.INTERNAL_ERROR:  # the node exists: a real error
                raise
            return None
        self.hints.set(key, node_name)
        return node_name
