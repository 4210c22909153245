"""Plugin Error statuses in the autoscaling simulations: they fail the pod, never the node.

kube-scheduler aborts a scheduling attempt when a PreFilter or Filter plugin returns an Error
status (e.g. a CEL runtime error in a ResourceClaim's selector, ``no such key``): the pod
gets no node, and it is not marked unschedulable (its PodScheduled condition says
SchedulerError), so Cluster Autoscaler, which scales up for unschedulable pods only, never
scales up for it. CA's own plugin runner (``RunFiltersOnNode`` /
``RunFiltersUntilPassingNode``) treats such a status like a rejection by that node, which
would show the error as a "wouldn't fit" reason, or let the pod land on another node and a
scale-down candidate look removable.

`scale_up` and `scale_down` therefore run inside `aborting_plugin_errors`, which sets the
Framework's plugin-error policy (``Framework.abort_on_plugin_error``): a PreFilter or Filter
Error status raises `PluginStatusError` from the snapshot's search before anything is
changed, the simulators catch it per pod (`HintingSimulator`, the estimator, the template
check), and the pod is reported as a `PodError`, apart from the pods that do not fit.
Outside the context (the library used directly) the snapshot behaves as CA's.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import attrs

from schedsim.api.core import Pod
from schedsim.framework.plugin_results import PluginStatusError
from schedsim.framework.runtime import Framework

__all__ = ["PluginStatusError", "PodError", "aborting_plugin_errors"]


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

    @classmethod
    def from_error(cls, error: PluginStatusError, node_group: str = "") -> PodError:
        """``error`` as a `PodError` (the first line of its message)."""
        return cls(error.pod, error.first_line, node_group)

    def __str__(self) -> str:
        where = f"node group {self.node_group}: " if self.node_group else ""
        return f"pod {self.pod.key}: {where}{self.message}"


@contextmanager
def aborting_plugin_errors(framework: Framework) -> Iterator[None]:
    """While active, ``framework`` aborts on plugin errors: a PreFilter, Filter or Reserve
    Error status (or an Unreserve that raised) raises `PluginStatusError`
    (kube-scheduler's "Error aborts the attempt"; a failing Reserve runs Unreserve first).
    The policy it had is restored on exit (contexts nest).

    Sets ``framework.abort_on_plugin_error``; no method of the framework or of its plugins
    is replaced. Time: nothing on a passing or rejecting run.
    """
    saved = framework.abort_on_plugin_error
    framework.abort_on_plugin_error = True
    try:
        yield
    finally:
        framework.abort_on_plugin_error = saved
