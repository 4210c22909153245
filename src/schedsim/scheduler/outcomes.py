"""What a scheduling pass reports: each pod's outcome (`PodOutcome`: its node or kube-scheduler's
reasons and message, the devices its claims got, preemption, attempts) and the whole result
(`SimulationResult`, with its counts).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

import attrs

from schedsim.api.core import Pod
from schedsim.scheduler import Explanation

__all__ = ["DeviceAllocation", "PodOutcome", "SimulationResult", "skip_deleting_message"]


@attrs.frozen
class DeviceAllocation:
    """One device allocated to a scheduled pod's claim (a ``status.allocation`` result).

    Attributes:
        claim: ``namespace/name`` of the ResourceClaim.
        request: the request (``req`` or ``req/subrequest``).
        driver, pool, device: the device.
        admin_access: the result grants admin access (the device is not exclusive).
    """

    claim: str
    request: str
    driver: str
    pool: str
    device: str
    admin_access: bool = False


@attrs.frozen
class PodOutcome:
    """Where one pending pod landed, or why it did not.

    Attributes:
        pod: the pod (with ``status.resourceClaimStatuses`` filled in when schedsim created
            its claims from templates).
        node_name: the chosen node, or None.
        reasons: distinct reason strings of the rejecting plugins (sorted); empty on success.
        message: kube-scheduler's FitError message (empty on success).
        allocations: the devices of the pod's claims, claim by claim in
            ``spec.resourceClaims`` order (empty when unscheduled or without claims).
        error: a plugin failed with an Error status for this pod (``message`` says which
            and why, e.g. a CEL runtime error); kube-scheduler fails that attempt and goes on
            with the next pod, and so does the cycle.
        explanation: per node, per plugin results of the attempt (kube-scheduler placement,
            pods the caller asked to explain), else None.
        nominated_node: the node preemption nominated the pod to ("" when it did not
            preempt); the pod is then placed on a later attempt, usually there.
        preempted_by: for a running pod that preemption evicted: ``namespace/name`` of the
            preemptor (``node_name`` is then None); "" otherwise.
        attempts: scheduling attempts the pod had in the pass (0: never popped, e.g.
            gated); the outcome is the last attempt's.
        history: the `Explanation` of every explained attempt, oldest first (the last is
            ``explanation``); kube-scheduler-simulator's ``result-history``.
        skipped: the pod is being deleted (``metadata.deletionTimestamp``): popped from the
            queue and not scheduled, as kube-scheduler's skipPodSchedule skips it ("Case 1:
            pod is being deleted"; ``message`` is its FailedScheduling event,
            `skip_deleting_message`); it is neither placed nor unschedulable, and not put
            back in the queue.
    """

    pod: Pod
    node_name: str | None
    reasons: tuple[str, ...] = ()
    message: str = ""
    allocations: tuple[DeviceAllocation, ...] = ()
    error: bool = False
    explanation: Explanation | None = attrs.field(default=None, eq=False)
    attempts: int = 0
    nominated_node: str = ""
    preempted_by: str = ""
    history: tuple[Explanation, ...] = attrs.field(default=(), eq=False)
    skipped: bool = False


def skip_deleting_message(pod: Pod) -> str:
    """kube-scheduler's FailedScheduling event for a pod it skips because it is being deleted
    (schedule_one.go skipPodSchedule: ``skip schedule deleting pod: %v/%v``)."""
    return f"skip schedule deleting pod: {pod.namespace}/{pod.name}"


@attrs.frozen
class SimulationResult:
    """The outcome of a cycle.

    Attributes:
        outcomes: one per pending pod, in queue order.
        nodes: number of nodes in the snapshot.
        skipped_pods: bound pods whose node is not among the nodes (not placed).
        not_emulated: default plugins schedsim does not implement (they did not run).
        other_scheduler_pods: pending pods whose schedulerName is not the profile's; a
            kube-scheduler with this profile leaves them alone, and so does schedsim.
        unchecked: plugin name -> pending pods that use what that plugin checks (volumes,
            pod affinity, topology spread, resource claims) while it is not emulated, so
            their placement did not take it into account.
        warnings: other things the user should know (e.g. a ResourceClaimTemplate that
            does not exist).
    """

    outcomes: tuple[PodOutcome, ...]
    nodes: int
    skipped_pods: tuple[Pod, ...] = ()
    not_emulated: tuple[str, ...] = ()
    other_scheduler_pods: tuple[Pod, ...] = ()
    unchecked: Mapping[str, tuple[Pod, ...]] = attrs.field(factory=dict)
    warnings: tuple[str, ...] = ()

    @property
    def scheduled(self) -> int:
        """Pods placed."""
        return sum(1 for o in self.outcomes if o.node_name is not None)

    @property
    def preempted(self) -> int:
        """Running pods evicted by preemption."""
        return sum(1 for o in self.outcomes if o.preempted_by)

    @property
    def unschedulable(self) -> int:
        """Pending pods not placed because they fit nowhere (pods a plugin failed for are
        `errors`, counted apart, as kube-scheduler reports an Error status apart from
        Unschedulable; victims of preemption are `preempted`; pods being deleted are
        `skipped`)."""
        return sum(
            1
            for o in self.outcomes
            if o.node_name is None and not o.error and not o.preempted_by and not o.skipped
        )

    @property
    def skipped(self) -> int:
        """Pending pods not scheduled because they are being deleted (`PodOutcome.skipped`)."""
        return sum(1 for o in self.outcomes if o.skipped)

    @property
    def errors(self) -> int:
        """Pods whose attempt failed with a plugin error."""
        return sum(1 for o in self.outcomes if o.error)

    def pods_per_node(self) -> dict[str, int]:
        """Node name -> pending pods placed there."""
        return dict(Counter(o.node_name for o in self.outcomes if o.node_name is not None))
