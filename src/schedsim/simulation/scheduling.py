"""A scheduling cycle over pending pods: what `schedsim simulate` runs.

Pods are taken in kube-scheduler's queue order (PrioritySort: priority descending, then
creation time, then name) and each is placed on the first node that passes, trying nodes
round robin from the one after the node chosen last (CA's default ordering). A pod that fits
nowhere gets kube-scheduler's FitError message.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

import attrs

from schedsim.api.core import Node, Pod
from schedsim.framework.runtime import Framework
from schedsim.snapshot.errors import SchedulingError, SchedulingErrorType
from schedsim.snapshot.predicate import PredicateSnapshot
from schedsim.snapshot.store import ClusterSnapshotStore

__all__ = ["PodOutcome", "SimulationResult", "queue_order", "run_scheduling_cycle", "simulate"]

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
    """

    outcomes: tuple[PodOutcome, ...]
    nodes: int
    skipped_pods: tuple[Pod, ...] = ()
    not_emulated: tuple[str, ...] = ()

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


def run_scheduling_cycle(snapshot: PredicateSnapshot, pending: Sequence[Pod]) -> list[PodOutcome]:
    """Schedule ``pending`` (in the given order) into ``snapshot``, which keeps the result.

    Raises:
        SchedulingError: an INTERNAL_ERROR (e.g. a plugin failed with an Error status).
    """
    out = []
    for pod in pending:
        try:
            node = snapshot.schedule_pod_on_any_node_matching(pod)
        except SchedulingError as e:
            if e.type is SchedulingErrorType.INTERNAL_ERROR:
                raise
            fit = snapshot.diagnose(pod)
            out.append(PodOutcome(pod, None, fit.reasons, fit.message))
        else:
            out.append(PodOutcome(pod, node))
    return out


def simulate(
    nodes: Sequence[Node],
    pods: Sequence[Pod],
    framework: Framework,
    store: ClusterSnapshotStore | None = None,
) -> SimulationResult:
    """Load the cluster and schedule every pending pod.

    Bound pods (``spec.nodeName``, else ``status.nominatedNodeName``) are placed first;
    Succeeded/Failed pods are ignored; the rest are scheduled in queue order.

    Args:
        nodes: the cluster's nodes.
        pods: bound and pending pods.
        framework: the scheduler profile to run.
        store: snapshot store (DeltaSnapshotStore by default).

    Returns:
        the outcome per pending pod.
    """
    live = [p for p in pods if not p.is_terminal]
    bound = [p for p in live if p.node_name or p.nominated_node_name]
    pending = queue_order(p for p in live if not (p.node_name or p.nominated_node_name))
    snapshot = PredicateSnapshot(framework, store)
    skipped = snapshot.set_cluster_state(nodes, bound)
    outcomes = run_scheduling_cycle(snapshot, pending)
    return SimulationResult(
        outcomes=tuple(outcomes),
        nodes=len(snapshot.list_node_infos()),
        skipped_pods=tuple(skipped),
        not_emulated=framework.not_emulated,
    )
