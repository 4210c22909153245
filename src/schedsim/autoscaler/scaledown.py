"""Scale-down: which nodes could be removed, and where their pods would go.

Mirrors Cluster Autoscaler's scale-down planning (``core/scaledown/eligibility``,
``simulator/cluster.go`` ``SimulateNodeRemoval``, ``simulator/drain.go``,
``simulator/utilization``), offline and in one pass:

0. pending pods that fit on existing nodes are placed there first (priority order, through
   the `HintingSimulator`, in the snapshot itself, not a fork), as CA's loop does before it
   plans scale-down (``RunOnce``: the pod list processor's ``filterOutSchedulableByPacking``
   calls ``TrySchedulePods`` on ``ClusterSnapshot``, and ``scaleDown`` runs later on the same
   snapshot): they count in utilization and must be moved like any other pod;
1. a node is a candidate (CA ``eligibility.FilterOutUnremovable``, `filter_out_unremovable`)
   when it is not being deleted (tainted ``ToBeDeletedByClusterAutoscaler`` less than 5
   minutes ago), not annotated ``cluster-autoscaler.kubernetes.io/scale-down-disabled:
   "true"``, belongs to a node group (when node groups are given), its utilization can be
   computed (cpu and memory allocatable non-zero; complete ResourceSlice pools), it is ready
   unless scale-down of unready nodes is allowed (the default), and its utilization is below
   the threshold (CA ``utilization.Calculate``, one rule per node, never a mix;
   DaemonSet pods left out when told, long-terminating pods always): a GPU node (non-zero
   allocatable of a GPU vendor resource such as ``nvidia.com/gpu``) uses its requested GPUs
   only, against the GPU threshold; else, with DRA enabled, a node with local ResourceSlices
   uses its allocated devices only (the highest pool); else the higher of requested cpu and
   memory. Every node's utilization is computed once, before any removal is simulated, as
   CA's planner does (``categorizeNodes``: ``FilterOutUnremovable`` computes the utilization
   map, then ``SimulateNodeRemoval`` runs per candidate); a node that received pods from an
   earlier removal keeps its verdict and reported utilization;
2. its pods to move and the pod that blocks it come from CA's default drainability rules
   (`schedsim.autoscaler.drain`: DaemonSet and mirror pods stay; ``safe-to-evict: "true"``
   moves; no controller, kube-system without a PodDisruptionBudget, ``safe-to-evict:
   "false"``, local storage, a budget with no disruption left block). The budgets are used
   up across the pass: a removable node's moved pods take one disruption from each budget
   matching them (CA's ``RemainingPdbTracker``), so a later candidate sees what is left;
3. candidates are simulated empty nodes first (CA's default candidate sorting), then in
   cluster order; in a fork, the pods are unscheduled, the node is replaced by an empty copy tainted
   ``ToBeDeletedByClusterAutoscaler:NoSchedule`` that keeps its ResourceSlices and CSINode
   (CA 1.36: the node stays a topology domain), the pods are rescheduled elsewhere through
   the `HintingSimulator` (a pod's earlier destination first; stop at the first pod that fits
   nowhere), the ghost is removed and the fork is committed when every pod found a place
   (later candidates see the result) or reverted otherwise.

A plugin Error status while moving a node's pods (e.g. a CEL runtime error in a claim's
selector) makes the node unremovable (``UnexpectedError``, naming the pod) and is reported in
`ScaleDownResult.errors` (see `schedsim.autoscaler.plugin_errors`).

Differences from CA, deliberate: the node group's min size is checked before the removal is
simulated (CA checks it after, when it picks nodes to delete), so a removal that would break
it is never committed; a budget without ``status.disruptionsAllowed`` allows what the
disruption controller would compute from the cluster's pods (CA reads the status only); the
blocking-system-pod timeout applies only when ``now`` is given; there are no unneeded-time or
unready-time delays; there is
no cloud provider, so a node is a GPU node by its allocatable only (CA also by the provider's
GPU label); device utilization counts devices per pool (CA 1.35+ weighs partitionable
devices by their shared counters).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Final

import attrs

from schedsim.api.core import Node, Pod, Taint
from schedsim.api.meta import as_utc
from schedsim.api.resource import ResourceClaimTemplate
from schedsim.autoscaler.drain import (
    DEFAULT_BSP_DISRUPTION_TIMEOUT,
    BlockingPod,
    BlockingPodReason,
    DrainContext,
    RemainingPdbTracker,
    is_pod_long_terminating,
    pods_to_move,
    remaining_pdb_tracker,
)
from schedsim.autoscaler.equivalence import is_daemonset_pod
from schedsim.autoscaler.events import (
    NODE_MARKED_MESSAGE,
    NODE_REMOVED_MESSAGE,
    POD_EVICTED_MESSAGE,
    SCALE_DOWN,
    Event,
)
from schedsim.autoscaler.hinting import HintingSimulator, PodPlacement
from schedsim.autoscaler.nodegroups import NodeGroup, group_of_nodes
from schedsim.autoscaler.plugin_errors import PluginStatusError, PodError, aborting_plugin_errors
from schedsim.autoscaler.scaleup import pending_pods_with_claims
from schedsim.scheduler.scheduling import pods_on_missing_nodes
from schedsim.snapshot.infos import NodeInfo
from schedsim.snapshot.predicate import PredicateSnapshot

__all__ = [
    "CONTROL_PLANE_LABELS",
    "DEFAULT_GPU_UTILIZATION_THRESHOLD",
    "DEFAULT_UTILIZATION_THRESHOLD",
    "GPU_RESOURCE_NAMES",
    "SCALE_DOWN_DISABLED_ANNOTATION",
    "TO_BE_DELETED_TAINT",
    "BlockingPod",
    "BlockingPodReason",
    "Eligibility",
    "NodeVerdict",
    "ScaleDownCache",
    "ScaleDownResult",
    "UnremovableReason",
    "Utilization",
    "filter_out_unremovable",
    "is_node_being_deleted",
    "node_ready",
    "pods_to_move",
    "scale_down",
    "simulate_node_removal",
    "utilization",
]

DEFAULT_UTILIZATION_THRESHOLD: Final = 0.5
"""CA's ``--scale-down-utilization-threshold`` default."""

DEFAULT_GPU_UTILIZATION_THRESHOLD: Final = 0.5
"""CA's ``--scale-down-gpu-utilization-threshold`` default (used for GPU nodes instead)."""

GPU_RESOURCE_NAMES: Final = (
    "nvidia.com/gpu",
    "habana.ai/gaudi",
    "gpu.intel.com/xe",
    "amd.com/gpu",
    "microsoft.com/directx",
)
"""CA ``utils/gpu`` ``GPUVendorResourceNames``: a node with non-zero allocatable of one of
these is a GPU node (the first found is its GPU resource, ``DetectNodeGPUResourceName``)."""

SCALE_DOWN_DISABLED_ANNOTATION: Final = "cluster-autoscaler.kubernetes.io/scale-down-disabled"
TO_BE_DELETED_TAINT: Final = "ToBeDeletedByClusterAutoscaler"
"""The taint CA puts on a node it deletes (and on the ghost node during the simulation)."""

ProgressCallback = Callable[[int, int], None]

MAX_NODE_DELETION_TIME: Final = timedelta(minutes=5)
"""CA ``IsNodeBeingDeleted``: the longer of ``MaxCloudProviderNodeDeletionTime`` (5 min) and
``MaxKubernetesEmptyNodeDeletionTime`` (3 min) since the ToBeDeleted taint's timestamp."""
_NOT_READY_TAINTS: Final = frozenset(
    {"node.kubernetes.io/not-ready", "node.kubernetes.io/disk-pressure",
     "node.kubernetes.io/network-unavailable"}
)  # fmt: skip

CONTROL_PLANE_LABELS: Final = (
    "node-role.kubernetes.io/control-plane",
    "node-role.kubernetes.io/master",
)
"""Labels of a control-plane node (kubeadm's, and its pre-1.24 name). Without node groups,
such a node is NotAutoscaled: no node group of CA's holds it."""


class UnremovableReason(enum.Enum):
    """Why a node cannot be removed (CA ``simulator.UnremovableReason``, same names)."""

    CURRENTLY_BEING_DELETED = "CurrentlyBeingDeleted"
    SCALE_DOWN_DISABLED_ANNOTATION = "ScaleDownDisabledAnnotation"
    SCALE_DOWN_UNREADY_DISABLED = "ScaleDownUnreadyDisabled"
    NOT_AUTOSCALED = "NotAutoscaled"
    NODE_GROUP_MIN_SIZE_REACHED = "NodeGroupMinSizeReached"
    NOT_UNDERUTILIZED = "NotUnderutilized"
    BLOCKED_BY_POD = "BlockedByPod"
    NO_PLACE_TO_MOVE_PODS = "NoPlaceToMovePods"
    UNEXPECTED_ERROR = "UnexpectedError"


@attrs.frozen
class Utilization:
    """How used a node is, as fractions (CA ``utilization.Info``).

    Attributes:
        cpu: requested milli-CPU / allocatable (0 when allocatable is 0).
        memory: requested memory / allocatable.
        devices: the highest allocated/total device ratio over the node's ResourceSlice
            pools (0 without slices).
        gpu: requested / allocatable of the node's GPU resource (0 on other nodes).
        basis: what the threshold is compared with (CA takes one, never a mix):
            ``"gpu"`` (a GPU node), ``"devices"`` (DRA on and the node has local
            ResourceSlices) or ``"cpu/memory"`` (the higher of the two).
        resource: the resource measured: the GPU resource name, ``driver/pool`` of the
            highest pool, ``cpu`` or ``memory`` (``memory`` when equal, as CA).
    """

    cpu: float
    memory: float
    devices: float = 0.0
    gpu: float = 0.0
    basis: str = "cpu/memory"
    resource: str = ""

    @property
    def value(self) -> float:
        """What the threshold is compared with (see ``basis``)."""
        if self.basis == "gpu":
            return self.gpu
        if self.basis == "devices":
            return self.devices
        return max(self.cpu, self.memory)


def gpu_resource(node: Node) -> str | None:
    """The node's GPU resource (CA ``NodeHasGpuAllocatable``): the first of
    `GPU_RESOURCE_NAMES` with non-zero allocatable, else None."""
    for name in GPU_RESOURCE_NAMES:
        q = node.allocatable.get(name)
        if q is not None and q != 0:
            return name
    return None


def utilization(
    node_info: NodeInfo,
    *,
    dra_enabled: bool = True,
    ignore_daemonsets_utilization: bool = False,
    now: datetime | None = None,
) -> Utilization:
    """The node's utilization (CA ``utilization.Calculate``; every pod counts, DaemonSet
    and mirror pods included, as CA by default; with ``ignore_daemonsets_utilization`` (CA
    ``--ignore-daemonsets-utilization``) DaemonSet pods' requests are left out of both the
    requests and the allocatable; with ``now``, long-terminating pods' requests are left out,
    `schedsim.autoscaler.drain.is_pod_long_terminating`).

    Cpu and memory are always computed (for the report). The basis is one of:

    * ``gpu``: the node has a GPU resource (`gpu_resource`); requested / allocatable of it
      (CA ``GetNodeGpuConfig`` then ``CalculateUtilizationOfResource``; cpu and memory are
      not looked at);
    * ``devices``: ``dra_enabled`` and the node has local ResourceSlices; per ``(driver,
      pool)``, the devices named in allocation results of its pods' claims over the devices
      the pool publishes, the highest pool (CA ``HighestDynamicResourceUtilization``);
    * ``cpu/memory``: the higher of the two.

    Time: O(pods x claims + devices).
    """
    node = node_info.node
    assert node is not None
    req = node_info.requested
    alloc = node_info.allocatable
    req_cpu, req_mem, alloc_cpu, alloc_mem = (
        req.milli_cpu,
        req.memory,
        alloc.milli_cpu,
        alloc.memory,
    )
    if ignore_daemonsets_utilization or now is not None:
        for pi in node_info.pods:
            r = pi.calculate_resource().resource
            if ignore_daemonsets_utilization and is_daemonset_pod(pi.pod):
                alloc_cpu, alloc_mem = alloc_cpu - r.milli_cpu, alloc_mem - r.memory
            elif now is None or not is_pod_long_terminating(pi.pod, now):
                continue
            req_cpu, req_mem = req_cpu - r.milli_cpu, req_mem - r.memory
    cpu = req_cpu / alloc_cpu if alloc_cpu else 0.0
    mem = req_mem / alloc_mem if alloc_mem else 0.0
    gpu_name = gpu_resource(node)
    if gpu_name is not None:
        total = alloc.scalar_resources.get(gpu_name, 0)
        used = req.scalar_resources.get(gpu_name, 0)
        gpu = used / total if total else 0.0
        return Utilization(cpu, mem, gpu=gpu, basis="gpu", resource=gpu_name)
    totals: dict[tuple[str, str], int] = {}
    for s in node_info.local_resource_slices:
        key = (s.driver, s.pool.name)
        totals[key] = totals.get(key, 0) + len(s.devices)
    if dra_enabled and node_info.local_resource_slices:
        allocated: dict[tuple[str, str], set[str]] = {}
        for claim in node_info.resource_claims:
            allocation = getattr(getattr(claim, "status", None), "allocation", None)
            if allocation is None:
                continue
            for r in allocation.results:
                allocated.setdefault((r.driver, r.pool), set()).add(r.device)
        devices, pool = 0.0, ""
        for key, total in totals.items():
            ratio = len(allocated.get(key, ())) / total if total else 0.0
            if not pool or ratio > devices:
                devices, pool = ratio, f"{key[0]}/{key[1]}"
        return Utilization(cpu, mem, devices, basis="devices", resource=pool)
    return Utilization(cpu, mem, resource="cpu" if cpu > mem else "memory")


def is_node_being_deleted(node: Node, now: datetime | None) -> bool:
    """CA ``actuation.IsNodeBeingDeleted``: tainted ``ToBeDeletedByClusterAutoscaler`` with a
    Unix-seconds value less than `MAX_NODE_DELETION_TIME` before ``now`` (a value that is
    not an integer: not being deleted). ``now`` None (no clock): any such taint counts."""
    for t in node.taints:
        if t.key == TO_BE_DELETED_TAINT:
            try:
                since = int(t.value)
            except ValueError:
                return False
            if now is None:
                return True
            return as_utc(now).timestamp() - since < MAX_NODE_DELETION_TIME.total_seconds()
    return False


def node_ready(node: Node) -> bool:
    """CA ``GetNodeReadiness``: a ``Ready`` condition that is not False or Unknown, no
    ``DiskPressure`` or ``NetworkUnavailable`` condition True, no not-ready, disk-pressure
    or network-unavailable taint. A node without a ``Ready`` condition is not ready."""
    ready = node.conditions.get("Ready")
    if ready is None or ready in ("False", "Unknown"):
        return False
    if "True" in (node.conditions.get("DiskPressure"), node.conditions.get("NetworkUnavailable")):
        return False
    return not any(t.key in _NOT_READY_TAINTS for t in node.taints)


def _utilization_error(node_info: NodeInfo, dra_enabled: bool) -> str | None:
    """Why CA's ``utilization.Calculate`` fails for the node (None: it does not): an
    incomplete ResourceSlice pool (its newest generation has fewer slices than
    ``resourceSliceCount``) on a DRA node; a cpu or memory allocatable missing or 0 on a
    cpu/memory node. A GPU node never fails (CA counts an unready GPU as 0)."""
    node = node_info.node
    assert node is not None
    if gpu_resource(node) is not None:
        return None
    if dra_enabled and node_info.local_resource_slices:
        pools: dict[tuple[str, str], list[int]] = {}  # (driver, pool) -> [generation, count]
        wanted: dict[tuple[str, str], int] = {}
        for sl in node_info.local_resource_slices:
            key = (sl.driver, sl.pool.name)
            gen, count = pools.get(key, [-1, 0])
            if sl.pool.generation > gen:
                pools[key], wanted[key] = [sl.pool.generation, 1], sl.pool.resource_slice_count
            elif sl.pool.generation == gen:
                pools[key][1] = count + 1
        for key, (gen, count) in pools.items():
            if count != wanted[key]:
                return (
                    f'pool "{key[1]}" error: newest generation: {gen}, slice count: '
                    f"{wanted[key]} - found only {count} slices"
                )
        return None
    for res in ("cpu", "memory"):
        q = node.allocatable.get(res)
        if q is None:
            return f"failed to get {res} from {node.name}"
        if q == 0:
            return f"{res} is 0 at {node.name}"
    return None


@attrs.frozen
class Eligibility:
    """Whether a node is a scale-down candidate (CA ``FilterOutUnremovable``'s verdict).

    Attributes:
        node: the node name.
        reason: why it is not (None: it is, it is "unneeded" if its removal succeeds).
        utilization: its utilization (None when not computed: being deleted, annotated,
            not autoscaled, or the computation failed).
        detail: a human-readable explanation of ``reason``.
    """

    node: str
    reason: UnremovableReason | None
    utilization: Utilization | None = None
    detail: str = ""


def filter_out_unremovable(
    snapshot: PredicateSnapshot,
    *,
    threshold: float = DEFAULT_UTILIZATION_THRESHOLD,
    gpu_threshold: float = DEFAULT_GPU_UTILIZATION_THRESHOLD,
    node_groups: Sequence[NodeGroup] | None = None,
    dra_enabled: bool = False,
    ignore_daemonsets_utilization: bool = False,
    scale_down_unready: bool = True,
    now: datetime | None = None,
) -> list[Eligibility]:
    """CA 1.34 ``eligibility.FilterOutUnremovable``, per node of the snapshot in its order,
    the checks in CA's order: being deleted (`is_node_being_deleted`,
    ``CurrentlyBeingDeleted``), ``scale-down-disabled`` annotation, not in a node group (or a
    control-plane node without groups: ``NotAutoscaled``), utilization that cannot be computed
    (``UnexpectedError``), unready with ``scale_down_unready`` False (CA
    ``--scale-down-unready-enabled``, `node_ready`: ``ScaleDownUnreadyDisabled``),
    utilization above the threshold (``NotUnderutilized``; a node exactly at the threshold is
    underutilized, as CA 1.34's ``isNodeAtOrBelowUtilizationThreshold`` keeps it).

    Args:
        snapshot: the cluster.
        threshold, gpu_threshold: CA ``--scale-down-utilization-threshold`` and
            ``--scale-down-gpu-utilization-threshold`` (0..1, not checked here).
        node_groups: as `scale_down`'s.
        dra_enabled: CA ``--enable-dynamic-resource-allocation``: DRA nodes are measured by
            their devices.
        ignore_daemonsets_utilization: CA ``--ignore-daemonsets-utilization``.
        scale_down_unready: CA ``--scale-down-unready-enabled`` (default true).
        now: CA's loop time (deletion taints, long-terminating pods); None: see
            `is_node_being_deleted`.

    Raises:
        NodeGroupError: a node is in two groups.

    Time: O(nodes x pods on them).
    """
    nodes = [ni.node for ni in snapshot.list_node_infos() if ni.node is not None]
    groups_of = group_of_nodes(node_groups, nodes) if node_groups is not None else {}
    rules = _EligibilityRules(
        threshold,
        gpu_threshold,
        dra_enabled,
        node_groups is not None,
        now,
        ignore_daemonsets_utilization,
        scale_down_unready,
    )
    return [
        _eligibility(snapshot.get_node_info(n.name), rules, groups_of.get(n.name)) for n in nodes
    ]


@attrs.frozen
class _EligibilityRules:
    """Everything `filter_out_unremovable` reads besides the node, its pods and its group
    (`filter_out_unremovable`'s arguments; ``grouped``: node groups were given). Part of
    `ScaleDownCache`'s key, so an entry is never reused under other rules."""

    threshold: float
    gpu_threshold: float
    dra_enabled: bool
    grouped: bool
    now: datetime | None
    ignore_daemonsets_utilization: bool
    scale_down_unready: bool


def _eligibility(
    node_info: NodeInfo, rules: _EligibilityRules, group: NodeGroup | None
) -> Eligibility:
    node = node_info.node
    assert node is not None
    name = node.name
    now = rules.now
    if is_node_being_deleted(node, now):
        return Eligibility(
            name,
            UnremovableReason.CURRENTLY_BEING_DELETED,
            detail=f"tainted {TO_BE_DELETED_TAINT}: the node is being deleted",
        )
    if node.annotations.get(SCALE_DOWN_DISABLED_ANNOTATION) == "true":
        return Eligibility(
            name,
            UnremovableReason.SCALE_DOWN_DISABLED_ANNOTATION,
            detail=f"annotated {SCALE_DOWN_DISABLED_ANNOTATION}=true",
        )
    if rules.grouped and group is None:
        return Eligibility(name, UnremovableReason.NOT_AUTOSCALED, detail="not in any node group")
    role = next((label for label in CONTROL_PLANE_LABELS if label in node.labels), None)
    if not rules.grouped and role is not None:
        # CA removes only nodes of the node groups its cloud provider reports
        # (NodeGroupForNode nil: NotAutoscaled); no provider puts the control plane there
        return Eligibility(
            name,
            UnremovableReason.NOT_AUTOSCALED,
            detail=f"control-plane node (label {role}): in no node group, so Cluster "
            "Autoscaler never removes it (node groups say which nodes it manages)",
        )
    error = _utilization_error(node_info, rules.dra_enabled)
    if error is not None:
        return Eligibility(name, UnremovableReason.UNEXPECTED_ERROR, detail=f"utilization: {error}")
    util = utilization(
        node_info,
        dra_enabled=rules.dra_enabled,
        ignore_daemonsets_utilization=rules.ignore_daemonsets_utilization,
        now=now,
    )
    if not rules.scale_down_unready and not node_ready(node):
        return Eligibility(
            name,
            UnremovableReason.SCALE_DOWN_UNREADY_DISABLED,
            util,
            "unready, and scale-down of unready nodes is disabled",
        )
    # CA eligibility.isNodeAtOrBelowUtilizationThreshold: GPU nodes use the GPU threshold;
    # only a utilization above it is NotUnderutilized (a node at it stays a candidate).
    limit, which = (
        (rules.gpu_threshold, "GPU threshold")
        if util.basis == "gpu"
        else (rules.threshold, "threshold")
    )
    if util.value > limit:
        return Eligibility(
            name,
            UnremovableReason.NOT_UNDERUTILIZED,
            util,
            f"{_measured(util)} utilization {util.value:.2f} > {which} {limit:g}",
        )
    return Eligibility(name, None, util)


@attrs.frozen
class NodeVerdict:
    """Whether one node could be removed.

    Attributes:
        node: the node name.
        removable: True when its pods all found a place (or it has none to move).
        reason: why not (None when removable).
        utilization: the node's utilization on the cluster as given (computed before any
            removal is simulated, as CA does).
        moved: where each pod would go (removable nodes).
        pod: the pod that blocks or found no place (BlockedByPod, NoPlaceToMovePods).
        detail: a human-readable explanation of ``reason``.
    """

    node: str
    removable: bool
    reason: UnremovableReason | None = None
    utilization: Utilization | None = None
    moved: tuple[PodPlacement, ...] = ()
    pod: Pod | None = None
    detail: str = ""


@attrs.frozen
class ScaleDownResult:
    """Verdicts for every node, in cluster order.

    Attributes:
        verdicts: one per node.
        threshold: the utilization threshold used.
        skipped_pods: bound pods whose node is not among the nodes (ignored, as CA does).
        errors: pods whose move failed with a plugin error (their node is unremovable,
            ``UnexpectedError``), and pending pods whose placement did.
        pending_placed: pending pods placed on existing nodes before planning (CA's
            filter-out-schedulable), and where; they are moved like the others.
        pending_unplaced: pending pods that fit no existing node (a scale-up's business).
        gpu_threshold: the threshold used for GPU nodes.
        warnings: things the user should know (e.g. a missing ResourceClaimTemplate).
    """

    verdicts: tuple[NodeVerdict, ...]
    threshold: float
    skipped_pods: tuple[Pod, ...] = ()
    errors: tuple[PodError, ...] = ()
    pending_placed: tuple[PodPlacement, ...] = ()
    pending_unplaced: tuple[Pod, ...] = ()
    gpu_threshold: float = DEFAULT_GPU_UTILIZATION_THRESHOLD
    warnings: tuple[str, ...] = ()

    @property
    def removable(self) -> tuple[str, ...]:
        """Names of the removable nodes."""
        return tuple(v.node for v in self.verdicts if v.removable)

    @property
    def events(self) -> tuple[Event, ...]:
        """The events CA 1.34's actuator records removing the removable nodes
        (`schedsim.autoscaler.events`): per node, ``ScaleDown`` ``marked the node as
        toBeDeleted/unschedulable``, ``deleting pod for node scale down`` on each pod it
        moves, then ``nodes removed by cluster autoscaler``."""
        out: list[Event] = []
        for v in self.verdicts:
            if not v.removable:
                continue
            out.append(Event("Node", v.node, "Normal", SCALE_DOWN, NODE_MARKED_MESSAGE))
            out += [
                Event("Pod", p.pod.key, "Normal", SCALE_DOWN, POD_EVICTED_MESSAGE) for p in v.moved
            ]
            out.append(Event("Node", v.node, "Normal", SCALE_DOWN, NODE_REMOVED_MESSAGE))
        return tuple(out)


@attrs.frozen
class _PlanSettings:
    """What every cached per-node result also depends on (`ScaleDownCache`): the
    eligibility rules, and what `pods_to_move` reads besides the node's pods (the drain
    time is ``rules.now``)."""

    rules: _EligibilityRules
    bsp_disruption_timeout: timedelta
    budgets: tuple[tuple[str, object], ...]


@attrs.define
class _NodeEntry:
    generation: int
    group: str | None
    eligibility: Eligibility
    early: NodeVerdict | None
    drain: tuple[tuple[Pod, ...], BlockingPod | None] | None = None


class ScaleDownCache:
    """The part of a scale-down plan that depends on one node alone, kept from one plan to
    the next (a replay plans at every loop that follows a change, and most nodes did not
    change): each node's utilization, the verdict it gets before any removal is simulated
    (`filter_out_unremovable`'s: being deleted, scale-down disabled, in no node group,
    control plane, utilization not computable, unready, not underutilized) and the pods its
    removal would move or the pod that blocks it.

    An entry is reused while the node's NodeInfo has the ``generation`` it was computed at
    (every pod added or removed and every new Node, so every change of its taints,
    annotations, labels, conditions or allocatable, gives it a new one; a copy-on-write copy
    keeps it, with the same contents) and the plan's settings are the same (thresholds, the
    DRA gate, node groups given or not, the loop time, which deletion taints and
    long-terminating pods are measured against, the budgets' selectors,
    ``ignore_daemonsets_utilization``, ``scale_down_unready``); the node's group is part of
    the entry. So a plan re-evaluates only the nodes that changed since the previous one, and
    decides exactly what it decides without the cache. Never kept: the eligibility of a node
    with ResourceSlices when DRA is enabled (its devices' utilization and its pools'
    completeness: claims and slices change without the node's generation), and the pods to
    move of a node with a pod some PodDisruptionBudget selects (they depend on what
    the pass has used up). The removal simulations themselves always run: where a moved pod
    lands depends on the whole cluster and on the round-robin start that every earlier
    first-fit search moved (see docs/performance.md, "Replay: a simulated day").

    Pass one to `scale_down` per sequence of plans over one cluster (e.g. one replay); it
    holds nodes of the last plan only. Time: O(1) per unchanged node; memory O(nodes).
    """

    __slots__ = ("_entries", "_settings")

    def __init__(self) -> None:
        self._settings: _PlanSettings | None = None
        self._entries: dict[str, _NodeEntry] = {}

    def _start(self, settings: _PlanSettings) -> dict[str, _NodeEntry]:
        """The entries of the previous plan when its settings were these (else none); the
        plan keeps only the nodes it sees (`_keep`)."""
        if settings != self._settings:
            self._settings = settings
            self._entries = {}
        previous, self._entries = self._entries, {}
        return previous

    def _keep(self, name: str, entry: _NodeEntry) -> None:
        self._entries[name] = entry


# Node object id -> (the node, its ghost): every removal simulation of one Node object
# (each plan of a replay re-simulates its candidates) shares one ghost; the entry holds the
# node, so its id cannot be reused while the entry exists
_GHOSTS: dict[int, tuple[Node, Node]] = {}
_GHOSTS_LIMIT = 4096


def _ghost(node: Node) -> Node:
    """``node`` tainted ``ToBeDeletedByClusterAutoscaler=0:NoSchedule``, made once per Node
    object (Nodes never change: an equal copy, shared)."""
    hit = _GHOSTS.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    taint = Taint(key=TO_BE_DELETED_TAINT, effect="NoSchedule", value="0")
    ghost = attrs.evolve(node, taints=(*node.taints, taint))
    if len(_GHOSTS) >= _GHOSTS_LIMIT:
        _GHOSTS.clear()
    _GHOSTS[id(node)] = (node, ghost)
    return ghost


def _unbound(pod: Pod) -> Pod:
    """``pod`` with ``nodeName`` and ``nominatedNodeName`` cleared, as CA reschedules it. One
    copy per pod object, kept in the pod's memo: every later simulation moving the same pod
    (each plan of a replay) reuses it, and with it the values the copy memoizes (its request
    sums). Time: O(1) after the first call."""
    if not pod.node_name and not pod.nominated_node_name:
        return pod
    return pod.memo(
        "scaledown:unbound", lambda: attrs.evolve(pod, node_name="", nominated_node_name="")
    )


def simulate_node_removal(
    snapshot: PredicateSnapshot,
    node_name: str,
    pods: Sequence[Pod],
    hinting: HintingSimulator,
    *,
    persist: bool = True,
) -> tuple[tuple[PodPlacement, ...], Pod | None]:
    """Remove ``node_name`` and reschedule ``pods`` elsewhere, in a fork (CA
    ``RemovalSimulator.findPlaceFor``).

    The pods are unscheduled, the node is replaced by an empty ghost tainted
    ``ToBeDeletedByClusterAutoscaler:NoSchedule`` with the same ResourceSlices and CSINode,
    the pods (with ``nodeName`` cleared) are scheduled on other nodes, hints first, stopping
    at the first that fits nowhere; then the ghost is removed.

    Args:
        snapshot: the cluster; changed only when the removal succeeds and ``persist``.
        node_name: the node to remove.
        pods: its pods to move (see `pods_to_move`).
        hinting: the run's hinting simulator (its hints carry across candidates).
        persist: commit a successful removal (later candidates see it); False reverts.

    Returns:
        ``(placements, None)`` on success, ``((), first pod that found no place)`` otherwise.

    Raises:
        NodeNotFoundError: the node is not in the snapshot.
        SchedulingError: INTERNAL_ERROR (e.g. a failing Reserve); the fork is reverted.
        PluginStatusError: inside `aborting_plugin_errors`, a pod's attempt hit a plugin
            Error status; the fork is reverted.
    """
    node_info = snapshot.get_node_info(node_name)
    node = node_info.node
    assert node is not None
    slices = list(node_info.local_resource_slices)
    csi_node = node_info.csi_node
    with snapshot.forked() as fork:  # reverted unless committed below (WithForkedSnapshot)
        snapshot.unschedule_pods_and_remove_node(node_name, pods)
        snapshot.add_node_info(NodeInfo(_ghost(node), slices, csi_node))
        moving = [_unbound(p) for p in pods]
        result = hinting.try_schedule_pods(
            snapshot,
            moving,
            lambda ni: ni.node is not None and ni.node.name != node_name,
            break_on_failure=True,
        )
        if result.plugin_errors:
            first = result.plugin_errors[0]
            raise PluginStatusError(first.pod, first.message)
        if result.unschedulable:
            return (), result.unschedulable[0]
        snapshot.remove_node_info(node_name)
        if persist:
            fork.commit()
        return result.scheduled, None


def scale_down(
    snapshot: PredicateSnapshot,
    pods: Sequence[Pod],
    *,
    threshold: float = DEFAULT_UTILIZATION_THRESHOLD,
    gpu_threshold: float = DEFAULT_GPU_UTILIZATION_THRESHOLD,
    node_groups: Sequence[NodeGroup] | None = None,
    resource_claim_templates: Sequence[ResourceClaimTemplate] = (),
    progress: ProgressCallback | None = None,
    now: datetime | None = None,
    bsp_disruption_timeout: timedelta = DEFAULT_BSP_DISRUPTION_TIMEOUT,
    ignore_daemonsets_utilization: bool = False,
    scale_down_unready: bool = True,
    cache: ScaleDownCache | None = None,
    removal_simulator: HintingSimulator | None = None,
) -> ScaleDownResult:
    """Which nodes Cluster Autoscaler could remove (see the module docstring).

    Args:
        snapshot: the cluster, ready (`schedsim.engine.Cluster.snapshot`): its nodes
            (considered in their order) with the bound pods, its DRA state (moved pods get
            new allocations, devices count in utilization), CSI and storage state; pods are
            rescheduled with its framework's profile. Claims pending pods need from
            ``resource_claim_templates`` are created in its DRA snapshot. Removals that
            succeed are committed in it.
        pods: the cluster's pods, bound and pending; pending pods (as `scale_up` reads them)
            that fit on existing nodes are placed there first, as CA's filter-out-schedulable
            does.
        threshold: a node is a candidate when its utilization is at or below this (0..1).
        gpu_threshold: the same for GPU nodes (CA ``--scale-down-gpu-utilization-threshold``).
        node_groups: when given, nodes outside every group are NotAutoscaled and no group
            goes below its min size; None: every node is a candidate, without min sizes.
        resource_claim_templates: the cluster's ResourceClaimTemplates.
        progress: called with (nodes done, nodes) after each node.
        now: the drain time (CA's loop timestamp): a kube-system pod without a
            PodDisruptionBudget stops blocking once it is older than
            ``bsp_disruption_timeout`` (CA ``--blocking-system-pod-distruption-timeout``);
            None: it always blocks.
        bsp_disruption_timeout: see ``now``.
        ignore_daemonsets_utilization: CA ``--ignore-daemonsets-utilization`` (see
            `utilization`).
        scale_down_unready: CA ``--scale-down-unready-enabled``: False makes unready nodes
            unremovable (``ScaleDownUnreadyDisabled``).
        cache: the per-node results of the previous plan over the same cluster, reused for
            the nodes that did not change since and updated with this plan's
            (`ScaleDownCache`; the verdicts are the same with or without it).
        removal_simulator: the hinting simulator the removal simulations place pods with,
            kept by the caller from one plan to the next as CA's planner keeps its
            ``RemovalSimulator`` (its hints persist; CA drops the old generation after each
            update, ``DropOldHints``, which is the caller's to do: `Hints.drop_old`). None: a
            fresh one, with no hints, for this call.

    The PodDisruptionBudgets are the framework's (``handle.object_listers``, allowed
    disruptions resolved as DefaultPreemption reads them; a budget without a resolved count
    is resolved against ``pods``); removals use them up, in candidate order (see
    `schedsim.autoscaler.drain.RemainingPdbTracker`).

    Returns:
        a verdict per node; ``pods`` and ``node_groups`` are not modified.

    Raises:
        ValueError: ``threshold`` or ``gpu_threshold`` outside [0, 1].
        NodeGroupError: a node is in two groups.
        SchedulingError: INTERNAL_ERROR when a plugin fails other than with an Error status
            from PreFilter or Filter (e.g. in Reserve).
    """
    for what, t in (("utilization", threshold), ("GPU utilization", gpu_threshold)):
        if not 0.0 <= t <= 1.0:
            raise ValueError(f"{what} threshold must be between 0 and 1, got {t}")
    framework = snapshot.framework
    nodes = [ni.node for ni in snapshot.list_node_infos() if ni.node is not None]
    bound, pending, warnings = pending_pods_with_claims(snapshot, pods, resource_claim_templates)
    groups_of: dict[str, NodeGroup] = {}
    sizes: dict[str, int] = {}
    if node_groups is not None:
        groups_of = group_of_nodes(node_groups, nodes)
        sizes = {g.name: g.size(nodes) for g in node_groups}
    skipped = pods_on_missing_nodes(snapshot, bound)
    errors: list[PodError] = []
    with aborting_plugin_errors(framework):
        # CA's RunOnce: filter-out-schedulable places pending pods in the cluster snapshot
        # itself (TrySchedulePods, no fork); scale-down planning then runs on that snapshot.
        tried = HintingSimulator().try_schedule_pods(snapshot, pending)
    errors.extend(tried.plugin_errors)
    # CA's RemovalSimulator has its own, separate from filter-out-schedulable's
    hinting = removal_simulator if removal_simulator is not None else HintingSimulator()
    gates = framework.handle.feature_gates
    dra_enabled = (
        gates.enabled("DynamicResourceAllocation") and "DynamicResources" in framework.plugins
    )
    # CA's planner: one tracker for the pass (RemainingPdbTracker.SetPdbs in RunOnce)
    budgets = framework.handle.object_listers.pod_disruption_budgets
    drain = DrainContext(remaining_pdb_tracker(budgets, pods), now, bsp_disruption_timeout)
    # CA decides eligibility and computes every candidate's utilization once, before
    # simulating any removal (planner.categorizeNodes -> eligibility.FilterOutUnremovable);
    # with a cache, only for the nodes that changed since the previous plan.
    rules = _EligibilityRules(
        threshold,
        gpu_threshold,
        dra_enabled,
        node_groups is not None,
        now,
        ignore_daemonsets_utilization,
        scale_down_unready,
    )
    settings = _PlanSettings(rules, bsp_disruption_timeout, drain.tracker.selectors())
    previous = cache._start(settings) if cache is not None else {}
    entries: dict[str, _NodeEntry] = {}
    for n in nodes:
        ni = snapshot.get_node_info(n.name)
        group = groups_of.get(n.name)
        group_name = group.name if group is not None else None
        # measured on devices, or its pools' completeness checked: never kept (claims and
        # slices change without the node's generation)
        on_devices = dra_enabled and bool(ni.local_resource_slices)
        entry = previous.get(n.name)
        if (
            entry is None
            or entry.generation != ni.generation
            or entry.group != group_name
            or on_devices
        ):
            eligibility = _eligibility(ni, rules, group)
            entry = _NodeEntry(ni.generation, group_name, eligibility, _early_verdict(eligibility))
        entries[n.name] = entry
        if cache is not None and not on_devices:
            cache._keep(n.name, entry)

    # Empty nodes first (CA's default candidate sorting, ``emptycandidates``): removing them
    # moves nothing, and the pods of other candidates must not take their place.
    def is_empty(node: Node) -> bool:
        entry = entries[node.name]
        if entry.early is not None:
            return False  # never a candidate: its place in the order changes nothing
        if entry.drain is not None:  # nothing was removed yet: the node is as the entry saw it
            return entry.drain[1] is None and not entry.drain[0]
        movable, blocking = _pods_to_move(entry, snapshot.get_node_info(node.name), drain)
        return blocking is None and not movable

    order = sorted(nodes, key=lambda n: not is_empty(n))
    verdicts: dict[str, NodeVerdict] = {}
    moved_from: dict[str, str] = {}  # pod key -> the node a removal in this pass moved it from
    with aborting_plugin_errors(framework):
        for i, node in enumerate(order):
            entry = entries[node.name]
            try:
                verdicts[node.name] = (
                    entry.early
                    if entry.early is not None
                    else _consider(
                        snapshot, node, entry, groups_of, sizes, hinting, drain, moved_from
                    )
                )
            except PluginStatusError as e:
                error = PodError.from_error(e)
                errors.append(error)
                verdicts[node.name] = NodeVerdict(
                    node.name,
                    False,
                    UnremovableReason.UNEXPECTED_ERROR,
                    entry.eligibility.utilization,
                    pod=e.pod,
                    detail=f"plugin error moving pod {e.pod.key}: {error.message}",
                )
            if progress is not None:
                progress(i + 1, len(nodes))
    return ScaleDownResult(
        tuple(verdicts[n.name] for n in nodes),
        threshold,
        tuple(skipped),
        tuple(errors),
        pending_placed=tried.scheduled,
        pending_unplaced=tried.unschedulable,
        gpu_threshold=gpu_threshold,
        warnings=tuple(warnings),
    )


def _measured(util: Utilization) -> str:
    return f"devices ({util.resource})" if util.basis == "devices" else util.resource


def _early_verdict(eligibility: Eligibility) -> NodeVerdict | None:
    """The verdict a node gets before anything is simulated (`filter_out_unremovable`'s:
    it depends on the node, its pods, its group and the plan's settings only), or None: it
    is a candidate."""
    if eligibility.reason is None:
        return None
    return NodeVerdict(
        eligibility.node,
        False,
        eligibility.reason,
        eligibility.utilization,
        detail=eligibility.detail,
    )


def _pods_to_move(
    entry: _NodeEntry, node_info: NodeInfo, drain: DrainContext
) -> tuple[list[Pod], BlockingPod | None]:
    """`pods_to_move`, from ``entry`` while the node is as the entry saw it; kept there when
    no budget selects one of its pods (the answer then depends on the pods alone)."""
    same = entry.generation == node_info.generation
    if same and entry.drain is not None:
        movable, blocking = entry.drain
        return list(movable), blocking
    found, blocking = pods_to_move(node_info, drain)
    if same and not drain.tracker.selects_any(pi.pod for pi in node_info.pods):
        entry.drain = (tuple(found), blocking)
    return found, blocking


def _consider(
    snapshot: PredicateSnapshot,
    node: Node,
    entry: _NodeEntry,
    groups_of: Mapping[str, NodeGroup],
    sizes: dict[str, int],
    hinting: HintingSimulator,
    drain: DrainContext,
    moved_from: dict[str, str],
) -> NodeVerdict:
    """The verdict of a candidate (``entry.early`` is None)."""
    name = node.name
    util = entry.eligibility.utilization
    group = groups_of.get(name)
    if group is not None and sizes[group.name] <= group.min_size:
        return NodeVerdict(
            name,
            False,
            UnremovableReason.NODE_GROUP_MIN_SIZE_REACHED,
            util,
            detail=f"node group {group.name} at min size {group.min_size}",
        )
    movable, blocking = _pods_to_move(entry, snapshot.get_node_info(name), drain)
    if blocking is not None:
        return NodeVerdict(
            name,
            False,
            UnremovableReason.BLOCKED_BY_POD,
            util,
            pod=blocking.pod,
            detail=_blocking_detail(blocking, drain.tracker, moved_from.get(blocking.pod.key)),
        )
    try:
        placed, failed = simulate_node_removal(snapshot, name, movable, hinting)
    except (LookupError, ValueError) as e:
        return NodeVerdict(name, False, UnremovableReason.UNEXPECTED_ERROR, util, detail=str(e))
    if failed is not None:
        return NodeVerdict(
            name,
            False,
            UnremovableReason.NO_PLACE_TO_MOVE_PODS,
            util,
            pod=failed,
            detail=f"no place for pod {failed.key}",
        )
    if group is not None:
        sizes[group.name] -= 1
    drain.tracker.remove_pods(movable)  # CA planner: RemainingPdbTracker.RemovePods
    moved_from.update((p.key, name) for p in movable)
    return NodeVerdict(name, True, None, util, moved=placed)


def _blocking_detail(
    blocking: BlockingPod, tracker: RemainingPdbTracker, moved_from: str | None
) -> str:
    """``pod NS/NAME: Reason``, or ``pod NS/NAME (moved here from NODE in this pass):
    Reason`` for a pod an earlier removal of the pass moved onto the node; for NotEnoughPdb,
    the budgets used up, with what they still allow (``PodDisruptionBudget NS/NAME allows N
    more disruption(s)``)."""
    where = f" (moved here from {moved_from} in this pass)" if moved_from else ""
    detail = f"pod {blocking.pod.key}{where}: {blocking.reason.value}"
    if blocking.reason is BlockingPodReason.NOT_ENOUGH_PDB:
        spent = [
            f"PodDisruptionBudget {b.key} allows {max(b.disruptions_allowed or 0, 0)} more "
            "disruption(s)"
            for b in tracker.matching_pdbs(blocking.pod)
            if (b.disruptions_allowed or 0) < 1
        ]
        detail += f" ({'; '.join(spent)})"
    return detail
