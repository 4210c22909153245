"""A scheduling cycle over pending pods: what `schedsim simulate` runs.

Pods are taken in kube-scheduler's queue order (PrioritySort: priority descending, then
creation time, then name) and each is placed in one of two modes:

- ``kube-scheduler`` (the default): `schedsim.scheduler.Scheduler`, kube-scheduler's
  schedulePod (Filter over numFeasibleNodesToFind nodes from a rotating start, Score, the
  highest total wins);
- ``first-fit``: the first node that passes, trying nodes round robin from the one after the
  node chosen last (the Cluster Autoscaler's placement, which scale-up and scale-down use).

A pod that fits nowhere gets kube-scheduler's FitError message. With kube-scheduler
placement PostFilter then runs (DefaultPreemption): when it makes room by preempting running
pods of lower priority, the victims are evicted from the snapshot and reported
(``preempted_by``), each eviction is an ``AssignedPodDelete`` event for the queue, and the
pod, nominated to the node, is placed on its next attempt. Victims are not rescheduled:
upstream they are deleted, and only their controllers would make new pods.

The cyclic garbage collector is paused while the pods are scheduled (`gc_paused`; the
``simulate`` command pauses it for loading too): the cycle creates many small objects and almost no
reference cycles, and each collection of the oldest generation would walk every object of
the loaded cluster (see docs/performance.md for the measured effect).

The pass itself (`SchedulingPass`, `run_scheduling_cycle`) is in
`schedsim.scheduler.scheduling_pass`, what it reports (`PodOutcome`, `SimulationResult`) in
`schedsim.scheduler.outcomes`; both are importable from here too.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime

import attrs

from schedsim.api.core import Pod
from schedsim.api.meta import as_utc
from schedsim.api.resource import ResourceClaimTemplate
from schedsim.dra.claim_controller import create_template_claims
from schedsim.dra.extended import has_extended_resource_requests
from schedsim.framework.runtime import Framework
from schedsim.scheduler import Scheduler
from schedsim.scheduler.outcomes import DeviceAllocation, PodOutcome, SimulationResult
from schedsim.scheduler.scheduling_pass import (
    MAX_ATTEMPTS_PER_POD,
    QueueOptions,
    SchedulingPass,
    run_scheduling_cycle,
)
from schedsim.snapshot.dra import claim_available_on_node, claim_reserved_for_pod
from schedsim.snapshot.errors import NodeNotFoundError, PodNotFoundError
from schedsim.snapshot.predicate import PredicateSnapshot

__all__ = [
    "MAX_ATTEMPTS_PER_POD",
    "PLACEMENTS",
    "DeviceAllocation",
    "PodOutcome",
    "QueueOptions",
    "SchedulingPass",
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

    Reference counting still frees everything that is not in a cycle. On leaving the
    outermost block, the objects still alive are moved to the oldest generation without a
    collection (``gc.freeze()`` then ``gc.unfreeze()``, skipped when the program froze
    objects itself): otherwise the first allocation after the block starts a young
    collection that walks every object the block made (~0.19 s CPU after loading and
    scheduling the GCDA-sized cluster) only to promote them. Cycles made inside are still
    collected, at the next collection of the oldest generation.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()


_FAR_FUTURE = datetime.max.replace(tzinfo=UTC)


def queue_order(pods: Iterable[Pod]) -> list[Pod]:
    """Pods in scheduling-queue order: priority descending, then creation time (pods without a
    timestamp last, as if created now), then name, then namespace."""

    def key(p: Pod) -> tuple[int, datetime, str, str]:
        ts = p.creation_timestamp
        return (-p.priority, as_utc(ts) if ts is not None else _FAR_FUTURE, p.name, p.namespace)

    return sorted(pods, key=key)


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


def partition_pods(
    pods: Iterable[Pod],
    scheduler_name: str | Collection[str],
    *,
    place_nominated: bool = True,
) -> tuple[list[Pod], list[Pod], tuple[Pod, ...]]:
    """Split pods the way every simulation reads them.

    Succeeded/Failed pods are dropped.

    Args:
        place_nominated: True (the Cluster Autoscaler): a pod with only
            ``status.nominatedNodeName`` counts as bound to that node (CA's
            ``FilterOutExpendableAndSplit`` keeps such pods, waiting for lower-priority
            victims to go, out of the pending ones and adds them to its snapshot on that
            node; not a pod being deleted, which CA's ``UnschedulablePods`` never lists:
            utils/kubernetes/listers.go isUnschedulable). False (kube-scheduler): only
            ``spec.nodeName`` binds; a nominated pod is pending and goes through the
            scheduling cycle (its nominated node tried first).

    Returns:
        ``(bound, pending, others)``: pods with ``spec.nodeName`` (else
        ``status.nominatedNodeName`` when ``place_nominated``), in input order; unbound pods
        for ``scheduler_name`` (or any of several names) in `queue_order`; unbound pods for
        another scheduler.
    """
    names = {scheduler_name} if isinstance(scheduler_name, str) else set(scheduler_name)
    live = [p for p in pods if not p.is_terminal]
    if place_nominated:
        bound = [p for p in live if p.node_name or _nominated_live(p)]
        unbound = [p for p in live if not (p.node_name or _nominated_live(p))]
    else:
        bound = [p for p in live if p.node_name]
        unbound = [p for p in live if not p.node_name]
    pending = queue_order(p for p in unbound if p.scheduler_name in names)
    others = tuple(p for p in unbound if p.scheduler_name not in names)
    return bound, pending, others


def _nominated_live(pod: Pod) -> bool:
    """A pod CA places on its ``status.nominatedNodeName``: nominated and not being deleted
    (a pod with a deletionTimestamp is not among CA's unschedulable pods, so
    FilterOutExpendableAndSplit never sees it)."""
    return bool(pod.nominated_node_name) and pod.deletion_timestamp is None


def _unplace_nominated(snapshot: PredicateSnapshot, pending: Iterable[Pod]) -> None:
    """Take the pending pods that carry only ``status.nominatedNodeName`` off that node when
    the snapshot placed them there (one built with ``place_nominated=True``, as CA reads
    them): for kube-scheduler they are pending, not running. Time: O(nominated pods)."""
    for pod in pending:
        if pod.nominated_node_name and not pod.node_name:
            try:
                snapshot.unschedule_pod(pod.namespace, pod.name, pod.nominated_node_name)
            except (NodeNotFoundError, PodNotFoundError):
                pass  # not placed (a snapshot built for kube-scheduler, or no such node)


def pods_on_missing_nodes(snapshot: PredicateSnapshot, bound: Iterable[Pod]) -> list[Pod]:
    """The bound pods whose node (``spec.nodeName``, else ``status.nominatedNodeName``) is not
    in ``snapshot``: `PredicateSnapshot.set_cluster_state` skipped them, as CA does.

    Time: O(nodes + pods).
    """
    names = {ni.node.name for ni in snapshot.list_node_infos() if ni.node is not None}
    return [p for p in bound if (p.node_name or p.nominated_node_name) not in names]


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


def _report_progress(
    progress: Callable[[int, int, int], None], total: int, attempted: int, bound: int
) -> None:
    progress(attempted, bound, total)


def simulate(
    snapshot: PredicateSnapshot,
    pods: Sequence[Pod],
    *,
    resource_claim_templates: Sequence[ResourceClaimTemplate] = (),
    placement: str = "kube-scheduler",
    seed: int | None = None,
    explain: Callable[[Pod], bool] | None = None,
    other_profiles: Mapping[str, Framework] | None = None,
    queue_options: QueueOptions | None = None,
    progress: Callable[[int, int, int], None] | None = None,
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
        other_profiles: the frameworks of the configuration's other profiles, by
            schedulerName: their pods are scheduled too, each by its own profile, through
            views of ``snapshot`` (`PredicateSnapshot.with_framework`).
        queue_options: the queue's backoff seconds (KubeSchedulerConfiguration).
        progress: called after each scheduling attempt with (pending pods attempted at least
            once, pods bound now, pending pods in all); for a progress bar.

    Returns:
        the outcome per pending pod, with the devices allocated to its claims; pods naming a
        schedulerName no profile has are left alone (``other_scheduler_pods``), as
        kube-scheduler leaves them to that scheduler.

    Raises:
        ValueError: an unknown ``placement``.
    """
    if placement not in PLACEMENTS:
        raise ValueError(f"placement {placement!r}: expected one of {', '.join(PLACEMENTS)}")
    framework = snapshot.framework
    profiles = {framework.profile.scheduler_name: framework, **(other_profiles or {})}
    first_fit = placement != "kube-scheduler"
    bound, pending, others = partition_pods(pods, profiles, place_nominated=first_fit)
    if not first_fit:
        _unplace_nominated(snapshot, pending)
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
        scheduler = Scheduler(snapshot, seed=seed, first_fit=first_fit)
        more = {
            name: Scheduler(snapshot.with_framework(fw), seed=seed, first_fit=first_fit)
            for name, fw in profiles.items()
            if fw is not framework
        }
        cycle = run_scheduling_cycle(
            snapshot,
            pending,
            scheduler,
            explain,
            options=queue_options,
            warnings=warnings,
            other_schedulers=more,
            progress=None
            if progress is None
            else functools.partial(_report_progress, progress, len(pending)),
        )
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
