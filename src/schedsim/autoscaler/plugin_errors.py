"""Plugin Error statuses in the autoscaling simulations: they fail the pod, never the node.

kube-scheduler aborts a scheduling attempt when a PreFilter or Filter plugin returns an Error
status (e.g. a CEL runtime error in a ResourceClaim's selector, ``no such key``): the pod
gets no node, and it is not marked unschedulable (its PodScheduled condition says
SchedulerError), so Cluster Autoscaler, which scales up for unschedulable pods only, never
scales up for it. CA's own plugin runner (``RunFiltersOnNode`` /
``RunFiltersUntilPassingNode``) treats such a status like a rejection by that node, which
would show the error as a "wouldn't fit" reason, or let the pod land on another node and a
scale-down candidate look removable.

`scale_up` and `scale_down` therefore run inside `aborting_plugin_errors`: a PreFilter or
Filter Error status raises `PluginStatusError` from the snapshot's search before anything is
changed, the simulators catch it per pod (`HintingSimulator`, the estimator, the template
check), and the pod is reported as a `PodError`, apart from the pods that do not fit.
Outside the context (the library used directly) the snapshot behaves as CA's.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import attrs

from schedsim.api.core import Pod
from schedsim.framework.cycle_state import CycleState
from schedsim.framework.hookspec import PreFilterResult
from schedsim.framework.runtime import Framework, PluginError
from schedsim.framework.status import Code, Status
from schedsim.snapshot.infos import NodeInfo

__all__ = ["PluginStatusError", "PodError", "aborting_plugin_errors"]


def _first_line(message: str) -> str:
    lines = message.strip().splitlines()
    return lines[0].rstrip() if lines else ""


class PluginStatusError(Exception):
    """A PreFilter or Filter plugin returned an Error status for ``pod`` (inside
    `aborting_plugin_errors` only).

    Attributes:
        pod: the pod being scheduled.
        message: the status message (``running "X" filter plugin: ...``), possibly several
            lines (CEL compile errors add the expression and a caret line).
    """

    def __init__(self, pod: Pod, message: str) -> None:
        self.pod = pod
        self.message = message
        super().__init__(f"pod {pod.key}: {_first_line(message)}")

    def pod_error(self, node_group: str = "") -> PodError:
        """This error as a `PodError` (first line of the message)."""
        return PodError(self.pod, _first_line(self.message), node_group)


@attrs.frozen
class PodError:
    """A pod whose scheduling attempt failed with a plugin error.

    Attributes:
        pod: the pod.
        message: the first line of the plugin's message.
        node_group: the node group whose template (or template copies) the attempt ran
            against; "" for the cluster's own nodes.
    """

    pod: Pod
    message: str
    node_group: str = ""

    def __str__(self) -> str:
        where = f"node group {self.node_group}: " if self.node_group else ""
        return f"pod {self.pod.key}: {where}{self.message}"


@contextmanager
def aborting_plugin_errors(framework: Framework) -> Iterator[None]:
    """While active, a PreFilter, Filter or Reserve Error status from ``framework`` (or an
    Unreserve that raised) raises `PluginStatusError` (kube-scheduler's "Error aborts the
    attempt"); a failing Reserve runs Unreserve first. The framework is restored on exit.

    The wrappers are set on the framework instance (the snapshot's plugin runner looks the
    methods up on each search), so the plugins themselves are untouched. Time: one extra
    call and one comparison per PreFilter or Filter run.
    """
    saved = {k: framework.__dict__[k] for k in _WRAPPED if k in framework.__dict__}
    run_filter = framework.run_filter_plugins
    run_pre_filter = framework.run_pre_filter_plugins
    run_reserve = framework.run_reserve_plugins_reserve
    run_unreserve = framework.run_reserve_plugins_unreserve

    def filter_plugins(state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        status = run_filter(state, pod, node_info)
        if status.code is Code.Error:
            raise PluginStatusError(pod, status.message)
        return status

    def pre_filter_plugins(
        state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status, tuple[str, ...]]:
        out = run_pre_filter(state, pod, nodes)
        if out[1].code is Code.Error:
            raise PluginStatusError(pod, out[1].message)
        return out

    def reserve_plugins(state: CycleState, pod: Pod, node_name: str) -> Status:
        status = run_reserve(state, pod, node_name)
        if status.code is Code.Error:  # undo the other Reserves first, as the runner would
            message = status.message
            try:
                run_unreserve(state, pod, node_name)
            except PluginError as e:
                message = f"{message}; {e}"
            raise PluginStatusError(pod, message)
        return status

    def unreserve_plugins(state: CycleState, pod: Pod, node_name: str) -> None:
        try:
            run_unreserve(state, pod, node_name)
        except PluginError as e:  # an Unreserve raised: the pod's attempt failed
            raise PluginStatusError(pod, str(e)) from None

    setattr(framework, "run_reserve_plugins_reserve", reserve_plugins)  # noqa: B010
    setattr(framework, "run_reserve_plugins_unreserve", unreserve_plugins)  # noqa: B010
    setattr(framework, "run_filter_plugins", filter_plugins)  # noqa: B010
    setattr(framework, "run_pre_filter_plugins", pre_filter_plugins)  # noqa: B010
    try:
        yield
    finally:
        for k in _WRAPPED:
            if k in saved:
                setattr(framework, k, saved[k])
            else:
                delattr(framework, k)


_WRAPPED = (
    "run_filter_plugins",
    "run_pre_filter_plugins",
    "run_reserve_plugins_reserve",
    "run_reserve_plugins_unreserve",
)
