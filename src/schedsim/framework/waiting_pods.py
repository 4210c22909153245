"""Pods waiting at Permit: `WaitingPod` and the framework's `WaitingPods` map.

Mirrors kube-scheduler 1.34's ``frameworkruntime.waitingPod`` / ``waitingPodsMap``. A pod
some Permit plugin asked to wait keeps its reservation on the node; each waiting plugin has
a deadline. Upstream a timer per plugin rejects the pod when its deadline passes and the
binding goroutine blocks on a channel; schedsim has no goroutines: the scheduling loop asks
`WaitingPods.expire` with the clock's time and binds or fails the pods whose outcome is
decided (`WaitingPod.status`). Plugins reach the map through ``Handle.waiting_pods``
(``IterateOverWaitingPods``, ``GetWaitingPod`` upstream) to allow or reject other pods, e.g.
the last member of a gang allowing the others.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

from schedsim.api.core import Pod
from schedsim.framework.status import SUCCESS, Code, Status

__all__ = ["MAX_PERMIT_TIMEOUT_SECONDS", "WaitingPod", "WaitingPods", "go_duration"]

MAX_PERMIT_TIMEOUT_SECONDS = 15 * 60.0
"""The longest a Permit plugin may make a pod wait (upstream ``maxTimeout``, 15 minutes)."""


def go_duration(seconds: float) -> str:
    """``seconds`` as Go's ``time.Duration.String`` prints it: ``10s``, ``1m30s``, ``15m0s``,
    ``1.5s``, ``0s`` (the timeout message upstream formats a Duration with ``%v``)."""
    if seconds == 0:
        return "0s"
    sign = "-" if seconds < 0 else ""
    total = abs(seconds)
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    sec_text = f"{secs:.9f}".rstrip("0").rstrip(".") or "0"
    if hours:
        return f"{sign}{int(hours)}h{int(minutes)}m{sec_text}s"
    if minutes:
        return f"{sign}{int(minutes)}m{sec_text}s"
    if total < 1:
        ms = total * 1000
        return f"{sign}{ms:.6f}".rstrip("0").rstrip(".") + "ms"
    return f"{sign}{sec_text}s"


class WaitingPod:
    """A reserved pod waiting for Permit plugins (``framework.WaitingPod``).

    Args:
        pod: the pod.
        node_name: the node it is reserved on.
        deadlines: plugin -> when its wait times out (seconds on the run's clock).
        timeouts: plugin -> how long it asked to wait (seconds; for the timeout message).

    Attributes:
        status: None while undecided; `SUCCESS` once every plugin allowed the pod; the
            ``Unschedulable`` rejection (with the plugin) once one rejected it or timed out.
    """

    def __init__(
        self,
        pod: Pod,
        node_name: str,
        deadlines: Mapping[str, float],
        timeouts: Mapping[str, float],
    ) -> None:
        self.pod = pod
        self.node_name = node_name
        self._deadlines = dict(deadlines)
        self._timeouts = dict(timeouts)
        self.status: Status | None = None

    def get_pod(self) -> Pod:
        """The waiting pod (``GetPod``)."""
        return self.pod

    @property
    def timeouts(self) -> Mapping[str, float]:
        """Plugin -> how long it asked to wait (seconds), read-only."""
        return self._timeouts

    def get_pending_plugins(self) -> list[str]:
        """Plugins that have not allowed the pod yet, in the order they asked to wait
        (``GetPendingPlugins``)."""
        return list(self._deadlines)

    def allow(self, plugin_name: str) -> None:
        """``plugin_name`` allows the pod; once no plugin is pending, the pod may be bound
        (``Allow``). Allowing for a plugin that is not pending does nothing."""
        self._deadlines.pop(plugin_name, None)
        if not self._deadlines and self.status is None:
            self.status = SUCCESS

    def reject(self, plugin_name: str, msg: str) -> None:
        """``plugin_name`` rejects the pod with ``msg`` (``Reject``); the first decision
        stands."""
        if self.status is None:
            self.status = Status(Code.Unschedulable, (msg,), plugin_name)

    def next_deadline(self) -> float | None:
        """The earliest deadline of the pending plugins (None when none is pending)."""
        return min(self._deadlines.values(), default=None)

    def expire(self, now: float) -> None:
        """Reject the pod for the first pending plugin whose deadline is at or before
        ``now``, with upstream's message ``rejected due to timeout after waiting <d> at
        plugin <name>``."""
        for plugin, deadline in sorted(self._deadlines.items(), key=lambda kv: kv[1]):
            if deadline <= now:
                waited = go_duration(self._timeouts.get(plugin, 0.0))
                self.reject(
                    plugin, f"rejected due to timeout after waiting {waited} at plugin {plugin}"
                )
                return


class WaitingPods:
    """The framework's waiting pods by pod UID (``waitingPodsMap``), in the order they started
    waiting (deterministic where upstream's goroutines race)."""

    def __init__(self) -> None:
        self._pods: dict[str, WaitingPod] = {}

    def add(self, wp: WaitingPod) -> None:
        """Register a waiting pod (replacing one with the same UID)."""
        self._pods[wp.pod.uid] = wp

    def remove(self, uid: str) -> None:
        """Forget the pod with ``uid`` (no-op when absent)."""
        self._pods.pop(uid, None)

    def clear(self) -> None:
        """Forget every waiting pod (a new run starts)."""
        self._pods.clear()

    def get(self, uid: str) -> WaitingPod | None:
        """The waiting pod with ``uid`` (``GetWaitingPod``), or None."""
        return self._pods.get(uid)

    def iterate(self, callback: Callable[[WaitingPod], None]) -> None:
        """Call ``callback`` for every waiting pod (``IterateOverWaitingPods``)."""
        for wp in list(self._pods.values()):
            callback(wp)

    def __iter__(self) -> Iterator[WaitingPod]:
        return iter(list(self._pods.values()))

    def __len__(self) -> int:
        return len(self._pods)

    def next_deadline(self) -> float | None:
        """The earliest deadline of any undecided waiting pod, or None."""
        times = [
            t
            for wp in self._pods.values()
            if wp.status is None
            for t in (wp.next_deadline(),)
            if t is not None
        ]
        return min(times, default=None)

    def expire(self, now: float) -> None:
        """Time out every undecided pod whose deadline is at or before ``now``."""
        for wp in self._pods.values():
            if wp.status is None:
                wp.expire(now)

    def decided(self) -> list[WaitingPod]:
        """The pods whose outcome is known (allowed by every plugin, or rejected), in the
        order they started waiting."""
        return [wp for wp in self._pods.values() if wp.status is not None]
