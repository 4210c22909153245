"""A scheduling cycle over pending pods: what `schedsim simulate` runs.

Pods are taken in kube-scheduler's queue order (PrioritySort: priority descending, then
creation time, then name) and each is placed in one of two modes:

- ``kube-scheduler`` (the default): `schedsim.scheduler.Scheduler`, kube-scheduler's
  schedulePod (Filter over numFeasibleNodesToFind nodes from a rotating start, Score, the
  highest total wins);
- ``first-fit``: the first node that passes, trying nodes round robin from the one after the
  node chosen last (the Cluster Autoscaler's placement, which scale-up and scale-down use).

A pod that fits nowhere gets kube-scheduler's FitError message.

The cyclic garbage collector is paused while the pods are scheduled (`gc_paused`; the
``simulate`` command pauses it for loading too): the cycle creates many small objects and almost no
reference cycles, and each collection of the oldest generation would walk every object of
the loaded cluster (see docs/performance.md for the measured effect).
"""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime

import attrs

from schedsim.api.core import Pod
from schedsim.api.resource import ResourceClaimTemplate
from schedsim.dra.claim_controller import create_template_claims
from schedsim.dra.extended import has_extended_resource_requests
from schedsim.framework.fit_error import FitError
from schedsim.framework.status import Code
from schedsim.scheduler import Explanation, Scheduler
from schedsim.snapshot.dra import claim_available_on_node, claim_reserved_for_pod
from schedsim.snapshot.errors import SchedulingError
from schedsim.snapshot.predicate import PredicateSnapshot

__all__ = [
    "PLACEMENTS",
    "DeviceAllocation",
    "PodOutcome",
    "SimulationResult",
    "gc_paused",
    "partition_pods",
    "pods_on_missing_nodes",
    "queue_order",
    "run_scheduling_cycle",
    "simulate",
]

PLACEMENTS = ("kube-scheduler", "first-fit")
"""Placement modes of `simulate`: kube-scheduler's (scores, the default) or the Cluster
Autoscaler's first fit."""


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector off inside the block, back to its previous state after.

    Reference counting still frees everything that is not in a cycle; cycles made inside are
    collected at the next collection after the block.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


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
    """

    pod: Pod
    node_name: str | None
    reasons: tuple[str, ...] = ()
    message: str = ""
    allocations: tuple[DeviceAllocation, ...] = ()
    error: bool = False
    explanation: Explanation | None = attrs.field(default=None, eq=False)


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
    def unschedulable(self) -> int:
        """Pods not placed because they fit nowhere (pods a plugin failed for are `errors`,
        counted apart, as kube-scheduler reports an Error status apart from Unschedulable)."""
        return sum(1 for o in self.outcomes if o.node_name is None and not o.error)

    @property
    def errors(self) -> int:
        """Pods whose attempt failed with a plugin error."""
        return sum(1 for o in self.outcomes if o.error)

    def pods_per_node(self) -> dict[str, int]:
        """Node name -> pending pods placed there."""
        return dict(Counter(o.node_name for o in self.outcomes if o.node_name is not None))


_EXCLUSIVE_DISKS = frozenset({"gcePersistentDisk", "awsElasticBlockStore"})

# What the not-yet-emulated default plugins would check, per pod (NodeVolumeLimits, the
# CSI volume limits, is emulated).
_NEEDS: Mapping[str, Callable[[Pod], bool]] = {
    "InterPodAffinity": lambda p: (
        p.affinity is not None and p.affinity.has_pod_affinity_or_anti_affinity
    ),
    "PodTopologySpread": lambda p: p.hard_topology_spread_constraints > 0,
    "VolumeBinding": lambda p: any(v.persistent_volume_claim or v.ephemeral for v in p.volumes),
    # PVC access modes (ReadWriteOncePod) and disks that one node may not mount twice
    "VolumeRestrictions": lambda p: any(
        v.persistent_volume_claim
        or (v.in_tree is not None and v.in_tree.field in _EXCLUSIVE_DISKS)
        or "rbd" in v.source
        or "iscsi" in v.source
        for v in p.volumes
    ),
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


def pods_on_missing_nodes(snapshot: PredicateSnapshot, bound: Iterable[Pod]) -> list[Pod]:
    """The bound pods whose node (``spec.nodeName``, else ``status.nominatedNodeName``) is not
    in ``snapshot``: `PredicateSnapshot.set_cluster_state` skipped them, as CA does.

    Time: O(nodes + pods).
    """
    names = {ni.node.name for ni in snapshot.list_node_infos() if ni.node is not None}
    return [p for p in bound if (p.node_name or p.nominated_node_name) not in names]


def run_scheduling_cycle(
    snapshot: PredicateSnapshot,
    pending: Sequence[Pod],
    scheduler: Scheduler | None = None,
    explain: Callable[[Pod], bool] | None = None,
) -> list[PodOutcome]:
    """Schedule ``pending`` (in the given order) into ``snapshot``, which keeps the result.

    Args:
        snapshot: the cluster; its framework is the profile.
        pending: the pods, in queue order.
        scheduler: kube-scheduler placement through this `Scheduler` (over ``snapshot``);
            None: first fit (`PredicateSnapshot.schedule_pod_or_explain`).
        explain: which pods get an `Explanation` (kube-scheduler placement only); None: none,
            and nothing is collected.

    Pods with scheduling gates are not attempted (kube-scheduler's SchedulingGates), nor
    pods a PreEnqueue plugin rejects (its status message is the outcome's).

    A plugin Error status (e.g. a CEL runtime error in a claim's selector) fails that pod's
    attempt only, as in kube-scheduler: its outcome has ``error`` set and the cycle goes on.
    """
    with snapshot.bound():  # PreEnqueue runs here, outside the snapshot's own operations
        return _cycle(snapshot, pending, scheduler, explain)


def _cycle(
    snapshot: PredicateSnapshot,
    pending: Sequence[Pod],
    scheduler: Scheduler | None,
    explain: Callable[[Pod], bool] | None,
) -> list[PodOutcome]:
    out = []
    framework = snapshot.framework
    for pod in pending:
        if pod.scheduling_gates:
            out.append(_gated(pod))
            continue
        st = framework.run_pre_enqueue_plugins(pod)
        if st.code is Code.Error:
            out.append(PodOutcome(pod, None, (st.message,), st.message, error=True))
            continue
        if not st.is_success:  # kept out of the queue, e.g. a ResourceClaim not created yet
            out.append(PodOutcome(pod, None, st.reasons, st.message))
            continue
        explanation = None
        try:
            if scheduler is None:
                found = snapshot.schedule_pod_or_explain(pod)
            else:
                placed = scheduler.schedule_one(pod, explain=explain is not None and explain(pod))
                if placed.node_name is not None:
                    found = placed.node_name
                else:
                    assert placed.fit_error is not None
                    found = placed.fit_error
                explanation = placed.explanation
        except SchedulingError as e:
            # An Error status fails this attempt only (the snapshot is unchanged).
            msg = e.internal_message or str(e)
            out.append(PodOutcome(pod, None, (msg,), msg, error=True))
            continue
        if isinstance(found, FitError):
            out.append(PodOutcome(pod, None, found.reasons, found.message, explanation=explanation))
        else:
            out.append(PodOutcome(pod, found, explanation=explanation))
    return out


def _allocations(snapshot: PredicateSnapshot, pod: Pod) -> tuple[DeviceAllocation, ...]:
    out: list[DeviceAllocation] = []
    for claim in snapshot.dra_snapshot.pod_claims(pod):
        allocation = claim.status.allocation
        if allocation is None:
            continue
        out.extend(
            DeviceAllocation(claim.key, r.request, r.driver, r.pool, r.device, bool(r.admin_access))
            for r in allocation.results
        )
    return tuple(out)


def _bound_claim_warnings(
    snapshot: PredicateSnapshot, bound: Sequence[Pod], skipped: Sequence[Pod]
) -> list[str]:
    """Running pods whose claims are not allocated for their node or not reserved for them:
    a state the API server and kube-scheduler never produce (CA's snapshot refuses it when
    adding such a node), usually a stale or partial export. The claims are used as they are."""
    out = []
    skipped_uids = {p.uid for p in skipped}
    for pod in bound:
        # Nominated pods have not been through Reserve: their claims may be unallocated.
        if not pod.resource_claims or not pod.node_name or pod.uid in skipped_uids:
            continue
        target = pod.node_name
        node = snapshot.get_node_info(target).node
        assert node is not None
        for claim in snapshot.dra_snapshot.pod_claims(pod):
            if not claim_available_on_node(claim, node):
                problem = (
                    "is not allocated"
                    if claim.status.allocation is None
                    else "is allocated for other nodes"
                )
                out.append(
                    f"pod {pod.key} runs on {target} but its ResourceClaim {claim.key} "
                    f"{problem}; used as it is"
                )
            elif not claim_reserved_for_pod(pod, claim):
                out.append(
                    f"pod {pod.key} runs on {target} but its ResourceClaim {claim.key} is not "
                    f"reserved for it (status.reservedFor); used as it is"
                )
    return out


def simulate(
    snapshot: PredicateSnapshot,
    pods: Sequence[Pod],
    *,
    resource_claim_templates: Sequence[ResourceClaimTemplate] = (),
    placement: str = "kube-scheduler",
    seed: int | None = None,
    explain: Callable[[Pod], bool] | None = None,
) -> SimulationResult:
    """Schedule every pending pod of a loaded cluster.

    Pending pods for the snapshot's profile (its schedulerName) are scheduled in queue order
    as kube-scheduler places them (``placement`` ``"kube-scheduler"``) or on the first node
    that passes the Filter plugins, round robin after the node chosen last
    (``"first-fit"``); Succeeded/Failed pods are ignored. A snapshot built with
    ``skip_unschedulable_nodes=False`` leaves cordoned nodes to the NodeUnschedulable plugin,
    as kube-scheduler does (what `schedsim.engine.Engine.simulate` builds).

    Args:
        snapshot: the cluster, ready (`schedsim.engine.Cluster.snapshot`): its nodes with the
            bound pods (``spec.nodeName``, else ``status.nominatedNodeName``, as CA places
            them), its DRA, CSI and storage state; it keeps the result. Claims that pending
            pods need from ``resource_claim_templates`` are created in its DRA snapshot
            first, as the resource-claim controller would.
        pods: the cluster's pods, bound and pending (the bound ones are in the snapshot).
        resource_claim_templates: the cluster's ResourceClaimTemplates.
        placement: one of `PLACEMENTS`.
        seed: kube-scheduler placement: None breaks score ties by taking the first tied node
            in evaluation order; an int samples among them like upstream, seeded.
        explain: which pending pods get an `Explanation` (kube-scheduler placement).

    Returns:
        the outcome per pending pod, with the devices allocated to its claims.

    Raises:
        ValueError: an unknown ``placement``.
    """
    if placement not in PLACEMENTS:
        raise ValueError(f"placement {placement!r}: expected one of {', '.join(PLACEMENTS)}")
    framework = snapshot.framework
    bound, pending, others = partition_pods(pods, framework.profile.scheduler_name)
    dra = snapshot.dra_snapshot
    warnings: list[str] = []
    if any(p.resource_claims for p in pending):
        made = create_template_claims(pending, resource_claim_templates, dra.list_resource_claims())
        pending, warnings = made.pods, made.warnings
        dra.add_claims(made.claims)
    unchecked = {
        plugin: tuple(p for p in pending if needs(p))
        for plugin, needs in _NEEDS.items()
        if plugin in framework.not_emulated
    }
    skipped = pods_on_missing_nodes(snapshot, bound)
    if snapshot.dra_enabled:
        warnings.extend(_bound_claim_warnings(snapshot, bound, skipped))
    with gc_paused():
        scheduler = Scheduler(snapshot, seed=seed) if placement == "kube-scheduler" else None
        cycle = run_scheduling_cycle(snapshot, pending, scheduler, explain)
        outcomes = [
            attrs.evolve(o, allocations=_allocations(snapshot, o.pod))
            if o.node_name is not None
            and snapshot.dra_enabled
            and (o.pod.resource_claims or has_extended_resource_requests(o.pod))
            else o
            for o in cycle
        ]
    return SimulationResult(
        outcomes=tuple(outcomes),
        nodes=len(snapshot.list_node_infos()),
        skipped_pods=tuple(skipped),
        not_emulated=framework.not_emulated,
        other_scheduler_pods=others,
        unchecked={k: v for k, v in unchecked.items() if v},
        warnings=tuple(warnings),
    )
