"""A scheduling cycle over pending pods: what `schedsim simulate` runs.

Pods are taken in kube-scheduler's queue order (PrioritySort: priority descending, then
creation time, then name) and each is placed on the first node that passes, trying nodes
round robin from the one after the node chosen last (CA's default ordering). A pod that fits
nowhere gets kube-scheduler's FitError message.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime

import attrs

from schedsim.api.core import Node, Pod
from schedsim.framework.fit_error import FitError
from schedsim.framework.runtime import Framework
from schedsim.snapshot.predicate import PredicateSnapshot
from schedsim.snapshot.store import ClusterSnapshotStore

__all__ = [
    "PodOutcome",
    "SimulationResult",
    "partition_pods",
    "queue_order",
    "run_scheduling_cycle",
    "simulate",
]

_FAR_FUTURE = datetime.max.replace(tzinfo=UTC)


def queue_order(pods: Iterable[Pod]) -> list[Pod]:
    """Pods in scheduling-queue order: priority descending, then creation time (pods without a
    timestamp last, as if created now), then name, then namespace."""

    def key(p: Pod) -> tuple[int, datetime, str, str]:
        ts = p.creation_timestamp
        if ts is not None and ts.tzinfo is None:
            ts = ts.replace(tzinfo=UTC)
        return (-p.priority, ts or _FAR_FUTURE, p.name, p.namespace)

    return sorted(pods, key=key)


@attrs.frozen
class PodOutcome:
    """Where one pending pod landed, or why it did not.

    Attributes:
        pod: the pod.
        node_name: the chosen node, or None.
        reasons: distinct reason strings of the rejecting plugins (sorted); empty on success.
        message: kube-scheduler's FitError message (empty on success).
    """

    pod: Pod
    node_name: str | None
    reasons: tuple[str, ...] = ()
    message: str = ""


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
    """

    outcomes: tuple[PodOutcome, ...]
    nodes: int
    skipped_pods: tuple[Pod, ...] = ()
    not_emulated: tuple[str, ...] = ()
    other_scheduler_pods: tuple[Pod, ...] = ()
    unchecked: Mapping[str, tuple[Pod, ...]] = attrs.field(factory=dict)

    @property
    def scheduled(self) -> int:
        """Pods placed."""
        return sum(1 for o in self.outcomes if o.node_name is not None)

    @property
    def unschedulable(self) -> int:
        """Pods that fit nowhere."""
        return len(self.outcomes) - self.scheduled

    def pods_per_node(self) -> dict[str, int]:
        """Node name -> pending pods placed there."""
        return dict(Counter(o.node_name for o in self.outcomes if o.node_name is not None))


# What the not-yet-emulated default plugins would check, per pod.
_NEEDS: Mapping[str, Callable[[Pod], bool]] = {
    "InterPodAffinity": lambda p: (
        p.affinity is not None and p.affinity.has_pod_affinity_or_anti_affinity
    ),
    "PodTopologySpread": lambda p: p.hard_topology_spread_constraints > 0,
    "VolumeBinding": lambda p: any(v.persistent_volume_claim or v.ephemeral for v in p.volumes),
    "VolumeRestrictions": lambda p: any(v.persistent_volume_claim for v in p.volumes),
    "NodeVolumeLimits": lambda p: any(v.persistent_volume_claim or v.ephemeral for v in p.volumes),
    "VolumeZone": lambda p: any(v.persistent_volume_claim for v in p.volumes),
    "DynamicResources": lambda p: bool(p.resource_claims),
}


def _gated(pod: Pod) -> PodOutcome:
    # The SchedulingGates PreEnqueue plugin's status (Go %v of a []string).
    msg = f"waiting for scheduling gates: [{' '.join(pod.scheduling_gates)}]"
    return PodOutcome(pod, None, (msg,), msg)


def partition_pods(
    pods: Iterable[Pod], scheduler_name: str
) -> tuple[list[Pod], list[Pod], tuple[Pod, ...]]:
    """Split pods the way every simulation reads them.

    Succeeded/Failed pods are dropped.

    Returns:
        ``(bound, pending, others)``: pods with ``spec.nodeName`` (else
        ``status.nominatedNodeName``, as CA does), in input order; unbound pods for
        ``scheduler_name`` in `queue_order`; unbound pods for another scheduler.
    """
    live = [p for p in pods if not p.is_terminal]
    bound = [p for p in live if p.node_name or p.nominated_node_name]
    unbound = [p for p in live if not (p.node_name or p.nominated_node_name)]
    pending = queue_order(p for p in unbound if p.scheduler_name == scheduler_name)
    others = tuple(p for p in unbound if p.scheduler_name != scheduler_name)
    return bound, pending, others


def run_scheduling_cycle(snapshot: PredicateSnapshot, pending: Sequence[Pod]) -> list[PodOutcome]:
    """Schedule ``pending`` (in the given order) into ``snapshot``, which keeps the result.

    Pods with scheduling gates are not attempted (kube-scheduler's SchedulingGates).

    Raises:
        SchedulingError: INTERNAL_ERROR when a plugin fails with an Error status (in
            kube-scheduler that aborts the attempt: it is not a FitError).
    """
    out = []
    for pod in pending:
        if pod.scheduling_gates:
            out.append(_gated(pod))
            continue
        found = snapshot.schedule_pod_or_explain(pod)
        if isinstance(found, FitError):
            out.append(PodOutcome(pod, None, found.reasons, found.message))
        else:
            out.append(PodOutcome(pod, found))
    return out


def simulate(
    nodes: Sequence[Node],
    pods: Sequence[Pod],
    framework: Framework,
    store: ClusterSnapshotStore | None = None,
) -> SimulationResult:
    """Load the cluster and schedule every pending pod.

    Bound pods (``spec.nodeName``, else ``status.nominatedNodeName``, as CA does) are placed
    first; Succeeded/Failed pods are ignored; pending pods for this profile's schedulerName
    are scheduled in queue order, each on the first node that passes the Filter plugins,
    round robin after the node chosen last. Cordoned nodes are left to the
    NodeUnschedulable plugin, as in kube-scheduler.

    Args:
        nodes: the cluster's nodes.
        pods: bound and pending pods.
        framework: the scheduler profile to run.
        store: snapshot store (DeltaSnapshotStore by default).

    Returns:
        the outcome per pending pod.
    """
    bound, pending, others = partition_pods(pods, framework.profile.scheduler_name)
    unchecked = {
        plugin: tuple(p for p in pending if needs(p))
        for plugin, needs in _NEEDS.items()
        if plugin in framework.not_emulated
    }
    snapshot = PredicateSnapshot(framework, store, skip_unschedulable_nodes=False)
    skipped = snapshot.set_cluster_state(nodes, bound)
    outcomes = run_scheduling_cycle(snapshot, pending)
    return SimulationResult(
        outcomes=tuple(outcomes),
        nodes=len(snapshot.list_node_infos()),
        skipped_pods=tuple(skipped),
        not_emulated=framework.not_emulated,
        other_scheduler_pods=others,
        unchecked={k: v for k, v in unchecked.items() if v},
    )
