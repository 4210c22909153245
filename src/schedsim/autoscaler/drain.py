"""Which of a node's pods must move, which stay, and which pod keeps the node: Cluster
Autoscaler 1.34's drainability rules (``simulator/drainability/rules``), ``GetPodsToMove``
(``simulator/drain.go``) and the remaining-PodDisruptionBudget tracker
(``core/scaledown/pdb``), offline, as of ``cluster-autoscaler-release-1.34``.

Each rule looks at one pod and answers a `DrainStatus`: undefined (no opinion), drain ok
(the pod moves, or goes with the node), skip (the pod is ignored) or block (the node cannot
be removed, with CA's reason). The rules run in CA 1.34's ``rules.Default()`` order and the
first answer other than undefined wins, so the "interrupting" rules (DaemonSet,
``safe-to-evict: "true"``, terminal) decide before any blocking rule is asked:

1. mirror pods: skip;
2. long-terminating pods (deleted longer ago than their ``terminationGracePeriodSeconds``,
   30 when unset, plus 30 s; only with a drain time, see `DrainContext`): skip;
3. DaemonSet pods: drain ok (they go with the node; not moved);
4. ``cluster-autoscaler.kubernetes.io/safe-to-evict: "true"``: drain ok, before every
   blocking rule, the PodDisruptionBudget rule included (the pod still uses up its budgets
   when its node is removed, as CA's ``RemovePods`` counts every pod to reschedule);
5. terminal pods (CA ``IsPodTerminal``: Failed; Succeeded unless ``restartPolicy`` is
   ``Always``, its default): drain ok;
6. no controller, or one of a kind other than ReplicationController, ReplicaSet, Job and
   StatefulSet (CA's default ``--skip-nodes-with-custom-controller-pods=true``): block,
   ``NotReplicated``;
7. namespace ``kube-system`` and no PodDisruptionBudget matches the pod: block,
   ``UnmovableKubeSystemPod``, unless the pod is older than the blocking-system-pod
   disruption timeout at the drain time (CA ``--blocking-system-pod-distruption-timeout``,
   default 1h; schedsim applies it only when a drain time is given, see `DrainContext`);
8. ``safe-to-evict: "false"``: block, ``NotSafeToEvictAnnotation``;
9. a hostPath or non-memory emptyDir volume not named in
   ``cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes``: block,
   ``LocalStorageRequested``;
10. a matching PodDisruptionBudget with fewer than 1 remaining disruption: block,
   ``NotEnoughPdb``.

Any other ``safe-to-evict`` value is neither "true" nor "false": CA 1.34 has no
``on-completion`` rule (it comes with release 1.37), so a bare pod annotated
``safe-to-evict: "on-completion"`` is ``NotReplicated`` and a Job pod with it moves like any
other.

Budgets match CA's ``RemainingPdbTracker``: a budget matches the pods of its namespace whose
labels its selector matches (policy/v1: an empty selector matches every pod of the
namespace, a missing one none; `PodDisruptionBudget.selects`). The disruptions a budget
allows are its ``status.disruptionsAllowed``; when the input has no status, schedsim uses
what DefaultPreemption uses: the disruption controller's count from the cluster's pods
(`PodDisruptionBudget.resolve_disruptions_allowed`). CA reads the status only (absent: 0).

`default_rules` builds the list for CA's node-delete flags (``--skip-nodes-with-system-pods``,
``--skip-nodes-with-local-storage``, ``--skip-nodes-with-custom-controller-pods``, all true by
default: `DEFAULT_RULES`), as CA's ``rules.Default(deleteOptions)``.

Not modelled (deliberate): the replica-count rule (third in ``rules.Default()``;
``--min-replica-count``, 0 by default, needs the controllers' live objects: it blocks a pod
whose ReplicaSet, Job or ReplicationController is missing from the input, which a list of
pods often is) and rule overrides (no default rule has any). The terminal rule only matters
for a `NodeInfo` built by hand: like CA's scheduled-pod lister, the engine's snapshot holds
no Succeeded or Failed pod.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Final

import attrs

from schedsim.api.core import Pod
from schedsim.api.meta import as_utc
from schedsim.api.policy import PodDisruptionBudget
from schedsim.autoscaler.equivalence import is_daemonset_pod, is_mirror_pod
from schedsim.snapshot.infos import NodeInfo

__all__ = [
    "DEFAULT_BSP_DISRUPTION_TIMEOUT",
    "DEFAULT_RULES",
    "KUBE_SYSTEM_NAMESPACE",
    "REPLICATED_KINDS",
    "SAFE_TO_EVICT_ANNOTATION",
    "SAFE_TO_EVICT_LOCAL_VOLUMES_ANNOTATION",
    "BlockingPod",
    "BlockingPodReason",
    "DrainContext",
    "DrainOutcome",
    "DrainRule",
    "DrainStatus",
    "PodMoveInfo",
    "RemainingPdbTracker",
    "default_rules",
    "drainable",
    "get_pods_to_move",
    "is_pod_long_terminating",
    "pods_to_move",
    "remaining_pdb_tracker",
]

SAFE_TO_EVICT_ANNOTATION: Final = "cluster-autoscaler.kubernetes.io/safe-to-evict"
SAFE_TO_EVICT_LOCAL_VOLUMES_ANNOTATION: Final = (
    "cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes"
)
"""A comma-separated list of a pod's volume names that do not block (CA
``drain.SafeToEvictLocalVolumesKey``)."""
KUBE_SYSTEM_NAMESPACE: Final = "kube-system"
DEFAULT_BSP_DISRUPTION_TIMEOUT: Final = timedelta(hours=1)
"""CA's ``--blocking-system-pod-distruption-timeout`` default."""
POD_LONG_TERMINATING_EXTRA_THRESHOLD: Final = timedelta(seconds=30)
"""CA ``drain.PodLongTerminatingExtraThreshold``: how long past its grace period a deleted pod
is still waited for."""
_DEFAULT_TERMINATION_GRACE_PERIOD: Final = timedelta(seconds=30)  # v1 API default


class BlockingPodReason(enum.Enum):
    """Why a pod cannot be moved (CA ``drain.BlockingPodReason``, same names)."""

    NOT_REPLICATED = "NotReplicated"
    LOCAL_STORAGE_REQUESTED = "LocalStorageRequested"
    NOT_SAFE_TO_EVICT_ANNOTATION = "NotSafeToEvictAnnotation"
    UNMOVABLE_KUBE_SYSTEM_POD = "UnmovableKubeSystemPod"
    NOT_ENOUGH_PDB = "NotEnoughPdb"


@attrs.frozen
class BlockingPod:
    """A pod that keeps its node from being removed.

    Attributes:
        pod: the pod.
        reason: CA's reason.
        message: CA's error text (e.g. ``not enough pod disruption budget to move NS/NAME``).
    """

    pod: Pod
    reason: BlockingPodReason
    message: str = ""


class DrainOutcome(enum.Enum):
    """A rule's answer (CA ``drainability.OutcomeType``)."""

    UNDEFINED = "Undefined"
    DRAIN_OK = "DrainOk"
    BLOCK_DRAIN = "BlockDrain"
    SKIP_DRAIN = "SkipDrain"


@attrs.frozen
class DrainStatus:
    """One rule's verdict on one pod (CA ``drainability.Status``): the outcome, and for
    BLOCK_DRAIN the reason and CA's message."""

    outcome: DrainOutcome
    reason: BlockingPodReason | None = None
    message: str = ""


_UNDEFINED: Final = DrainStatus(DrainOutcome.UNDEFINED)
_DRAIN_OK: Final = DrainStatus(DrainOutcome.DRAIN_OK)
_SKIP: Final = DrainStatus(DrainOutcome.SKIP_DRAIN)


class RemainingPdbTracker:
    """The disruptions each PodDisruptionBudget still allows during one planning pass (CA
    ``pdb.RemainingPdbTracker``, its basic implementation).

    Removing a node uses up, for every pod it reschedules, one disruption of each budget
    matching the pod (`remove_pods`); later candidates of the same pass see what is left.
    A budget matches the pods of its namespace its selector matches
    (`PodDisruptionBudget.selects`: an empty selector every pod, a missing one none).

    Args:
        budgets: the budgets with ``disruptions_allowed`` resolved (from their status, or
            `PodDisruptionBudget.resolve_disruptions_allowed`); not modified.

    Raises:
        ValueError: a budget's ``disruptions_allowed`` is None (not resolved).

    Time: `matching_pdbs` O(budgets of the pod's namespace); `can_remove_pods` and
    `remove_pods` O(pods x budgets of their namespaces).
    """

    __slots__ = ("_budgets", "_by_namespace", "_remaining")

    def __init__(self, budgets: Iterable[PodDisruptionBudget] = ()) -> None:
        self._budgets: tuple[PodDisruptionBudget, ...] = tuple(budgets)
        self._remaining: list[int] = []
        self._by_namespace: dict[str, list[int]] = {}
        for i, b in enumerate(self._budgets):
            if b.disruptions_allowed is None:
                raise ValueError(
                    f"PodDisruptionBudget {b.key}: disruptions_allowed is not resolved "
                    "(see PodDisruptionBudget.resolve_disruptions_allowed)"
                )
            self._remaining.append(b.disruptions_allowed)
            self._by_namespace.setdefault(b.namespace, []).append(i)

    def _matching(self, pod: Pod) -> list[int]:
        return [
            i
            for i in self._by_namespace.get(pod.namespace, ())
            if self._budgets[i].selects(pod.namespace, pod.labels)
        ]

    def matching_pdbs(self, pod: Pod) -> tuple[PodDisruptionBudget, ...]:
        """The budgets matching ``pod``, each with ``disruptions_allowed`` set to what it
        still allows (CA ``MatchingPdbs``), in input order."""
        return tuple(
            attrs.evolve(self._budgets[i], disruptions_allowed=self._remaining[i])
            for i in self._matching(pod)
        )

    def selectors(self) -> tuple[tuple[str, object], ...]:
        """``(namespace, selector)`` of each budget, in input order: what decides which pods
        the budgets match (not what they still allow). Time: O(budgets)."""
        return tuple((b.namespace, b.selector) for b in self._budgets)

    def selects_any(self, pods: Iterable[Pod]) -> bool:
        """Whether some budget matches one of ``pods`` (then what the rules say of them can
        change as the pass uses the budgets up). Time: O(1) without budgets, else O(pods x
        budgets of their namespaces)."""
        if not self._budgets:
            return False
        return any(self._matching(pod) for pod in pods)

    def remaining(self, budget_key: str) -> int:
        """What the budget ``namespace/name`` still allows.

        Raises:
            KeyError: no such budget.
        """
        for i, b in enumerate(self._budgets):
            if b.key == budget_key:
                return self._remaining[i]
        raise KeyError(budget_key)

    def can_remove_pods(self, pods: Sequence[Pod]) -> tuple[bool, bool, BlockingPod | None]:
        """Whether ``pods`` can all be evicted (CA ``CanRemovePods``).

        Returns:
            ``(can_remove, in_parallel, blocking pod)``: False with the first pod (per
            budget, in budget order) matching a budget that allows no disruption; otherwise
            True, with ``in_parallel`` False and the pod over the count when a budget allows
            fewer disruptions than it has pods here (the evictions must wait for each other:
            CA marks such a removal risky).
        """
        in_parallel = True
        blocking: BlockingPod | None = None
        for i, b in enumerate(self._budgets):
            count = 0
            for pod in pods:
                if not b.selects(pod.namespace, pod.labels):
                    continue
                count += 1
                if self._remaining[i] < 1:
                    return False, False, _not_enough_pdb(pod)
                if self._remaining[i] < count:
                    in_parallel = False
                    blocking = _not_enough_pdb(pod)
        return True, in_parallel, blocking

    def remove_pods(self, pods: Iterable[Pod]) -> None:
        """Use up one disruption of every budget matching each pod (CA ``RemovePods``; a
        budget may go below zero)."""
        for pod in pods:
            for i in self._matching(pod):
                self._remaining[i] -= 1


def remaining_pdb_tracker(
    budgets: Iterable[PodDisruptionBudget], pods: Iterable[Pod] = ()
) -> RemainingPdbTracker:
    """A tracker over ``budgets``, a budget without ``disruptions_allowed`` resolved against
    ``pods`` as DefaultPreemption's budgets are
    (`PodDisruptionBudget.resolve_disruptions_allowed`). Time: O(budgets), plus O(pods) per
    unresolved budget."""
    pods = tuple(pods)
    return RemainingPdbTracker(b.resolve_disruptions_allowed(pods) for b in budgets)


def _not_enough_pdb(pod: Pod) -> BlockingPod:
    return BlockingPod(
        pod,
        BlockingPodReason.NOT_ENOUGH_PDB,
        f"not enough pod disruption budget to move {pod.namespace}/{pod.name}",
    )


@attrs.frozen
class DrainContext:
    """What the rules read besides the pod (CA ``drainability.DrainContext``).

    Attributes:
        tracker: the budgets, as used up so far in this planning pass (default: none).
        now: the drain time (CA's loop timestamp), for the blocking-system-pod disruption
            timeout and the long-terminating rule; None (schedsim has no clock unless told):
            the timeout never passes, so a kube-system pod without a budget always blocks,
            and no deleted pod is long-terminating.
        bsp_disruption_timeout: CA ``--blocking-system-pod-distruption-timeout``.
    """

    tracker: RemainingPdbTracker = attrs.field(factory=RemainingPdbTracker)
    now: datetime | None = None
    bsp_disruption_timeout: timedelta = DEFAULT_BSP_DISRUPTION_TIMEOUT


@attrs.frozen
class DrainRule:
    """One drainability rule: its CA name and its function (context, pod) -> status."""

    name: str
    drainable: Callable[[DrainContext, Pod], DrainStatus]


def _mirror(ctx: DrainContext, pod: Pod) -> DrainStatus:
    return _SKIP if is_mirror_pod(pod) else _UNDEFINED


def is_pod_long_terminating(pod: Pod, now: datetime) -> bool:
    """CA ``drain.IsPodLongTerminating``: the pod was deleted, and its
    ``terminationGracePeriodSeconds`` (30 when unset) plus
    `POD_LONG_TERMINATING_EXTRA_THRESHOLD` ended before ``now``."""
    deleted = pod.deletion_timestamp
    if deleted is None:
        return False
    grace = pod.termination_grace_period_seconds
    period = _DEFAULT_TERMINATION_GRACE_PERIOD if grace is None else timedelta(seconds=grace)
    return as_utc(deleted) + period + POD_LONG_TERMINATING_EXTRA_THRESHOLD < as_utc(now)


def _long_terminating(ctx: DrainContext, pod: Pod) -> DrainStatus:
    if ctx.now is not None and is_pod_long_terminating(pod, ctx.now):
        return _SKIP
    return _UNDEFINED


def _daemonset(ctx: DrainContext, pod: Pod) -> DrainStatus:
    return _DRAIN_OK if is_daemonset_pod(pod) else _UNDEFINED


def _safe_to_evict(ctx: DrainContext, pod: Pod) -> DrainStatus:
    return _DRAIN_OK if pod.annotations.get(SAFE_TO_EVICT_ANNOTATION) == "true" else _UNDEFINED


def _terminal(ctx: DrainContext, pod: Pod) -> DrainStatus:
    """CA ``IsPodTerminal``: Failed, or Succeeded and never restarted (``restartPolicy``
    ``Never`` or ``OnFailure``; unset is the API default ``Always``)."""
    if pod.phase == "Failed":
        return _DRAIN_OK
    if pod.phase == "Succeeded" and pod.restart_policy in ("Never", "OnFailure"):
        return _DRAIN_OK
    return _UNDEFINED


def _blocked(reason: BlockingPodReason, message: str) -> DrainStatus:
    return DrainStatus(DrainOutcome.BLOCK_DRAIN, reason, message)


REPLICATED_KINDS: Final = frozenset({"ReplicationController", "Job", "ReplicaSet", "StatefulSet"})
"""The controller kinds whose pods CA's replicated rule moves, with its default
``--skip-nodes-with-custom-controller-pods=true`` (``replicatedKind``)."""


def _replicated_rule(skip_nodes_with_custom_controller_pods: bool) -> DrainRule:
    """CA's replicated rule: a pod without a controller blocks (``NotReplicated``); with
    ``--skip-nodes-with-custom-controller-pods`` (the default) so does one whose controller
    is not of `REPLICATED_KINDS`."""

    def replicated(ctx: DrainContext, pod: Pod) -> DrainStatus:
        ref = next((r for r in pod.owner_references if r.controller), None)
        custom = ref is not None and ref.kind not in REPLICATED_KINDS
        if ref is None or (custom and skip_nodes_with_custom_controller_pods):
            return _blocked(
                BlockingPodReason.NOT_REPLICATED, f"{pod.namespace}/{pod.name} is not replicated"
            )
        return _UNDEFINED

    return DrainRule("Replicated", replicated)


def _system(ctx: DrainContext, pod: Pod) -> DrainStatus:
    if pod.namespace != KUBE_SYSTEM_NAMESPACE or ctx.tracker.matching_pdbs(pod):
        return _UNDEFINED
    created = pod.creation_timestamp
    if ctx.now is not None and created is not None:
        if as_utc(ctx.now) > as_utc(created) + ctx.bsp_disruption_timeout:
            return _DRAIN_OK
    return _blocked(
        BlockingPodReason.UNMOVABLE_KUBE_SYSTEM_POD,
        f"non-daemonset, non-mirrored, non-pdb-assigned kube-system pod present: {pod.name}",
    )


def _not_safe_to_evict(ctx: DrainContext, pod: Pod) -> DrainStatus:
    if pod.annotations.get(SAFE_TO_EVICT_ANNOTATION) == "false":
        return _blocked(
            BlockingPodReason.NOT_SAFE_TO_EVICT_ANNOTATION,
            f"pod annotated as not safe to evict present: {pod.name}",
        )
    return _UNDEFINED


def _is_local_volume(source: Mapping[str, object]) -> bool:
    if "hostPath" in source:
        return True
    empty = source.get("emptyDir")
    return empty is not None and not (
        isinstance(empty, Mapping) and empty.get("medium") == "Memory"
    )


def _local_storage(ctx: DrainContext, pod: Pod) -> DrainStatus:
    allowed = pod.annotations.get(SAFE_TO_EVICT_LOCAL_VOLUMES_ANNOTATION, "")
    non_blocking = set(allowed.split(",")) if allowed else set()
    for v in pod.volumes:
        if _is_local_volume(v.source) and v.name not in non_blocking:
            return _blocked(
                BlockingPodReason.LOCAL_STORAGE_REQUESTED,
                f"pod with local storage present: {pod.name}",
            )
    return _UNDEFINED


def _pdb(ctx: DrainContext, pod: Pod) -> DrainStatus:
    for b in ctx.tracker.matching_pdbs(pod):
        if b.disruptions_allowed is not None and b.disruptions_allowed < 1:
            s = _not_enough_pdb(pod)
            return _blocked(s.reason, s.message)
    return _UNDEFINED


_REPLICATED: Final = {flag: _replicated_rule(flag) for flag in (True, False)}


def default_rules(
    *,
    skip_nodes_with_system_pods: bool = True,
    skip_nodes_with_local_storage: bool = True,
    skip_nodes_with_custom_controller_pods: bool = True,
) -> tuple[DrainRule, ...]:
    """CA 1.34 ``rules.Default(deleteOptions)`` in its order: the system and local-storage
    rules only with their ``--skip-nodes-with-...`` flag, the replicated rule with its
    custom-controller flag (see the module docstring for the rule schedsim does not model).
    """
    rules = [
        DrainRule("Mirror", _mirror),
        DrainRule("LongTerminating", _long_terminating),
        # interrupting checks
        DrainRule("DaemonSet", _daemonset),
        DrainRule("SafeToEvict", _safe_to_evict),
        DrainRule("Terminal", _terminal),
        # blocking checks
        _REPLICATED[skip_nodes_with_custom_controller_pods],
    ]
    if skip_nodes_with_system_pods:
        rules.append(DrainRule("System", _system))
    rules.append(DrainRule("NotSafeToEvict", _not_safe_to_evict))
    if skip_nodes_with_local_storage:
        rules.append(DrainRule("LocalStorage", _local_storage))
    rules.append(DrainRule("PDB", _pdb))
    return tuple(rules)


DEFAULT_RULES: Final = default_rules()
"""CA 1.34 ``rules.Default()`` with its default flags, in its order."""


def drainable(
    ctx: DrainContext, pod: Pod, rules: Sequence[DrainRule] = DEFAULT_RULES
) -> DrainStatus:
    """The first answer other than undefined, in rule order (CA ``Rules.Drainable``), or
    undefined (the pod moves)."""
    for rule in rules:
        status = rule.drainable(ctx, pod)
        if status.outcome is not DrainOutcome.UNDEFINED:
            return status
    return _UNDEFINED


@attrs.frozen
class PodMoveInfo:
    """What removing a node does to its pods (CA ``simulator.PodMoveInfo``).

    Attributes:
        pods: the pods to reschedule elsewhere (in the node's pod order).
        daemonset_pods: DaemonSet pods (they go with the node).
        blocking: the first pod that keeps the node (then both lists are empty).
    """

    pods: tuple[Pod, ...] = ()
    daemonset_pods: tuple[Pod, ...] = ()
    blocking: BlockingPod | None = None


def get_pods_to_move(
    node_info: NodeInfo,
    ctx: DrainContext | None = None,
    rules: Sequence[DrainRule] = DEFAULT_RULES,
) -> PodMoveInfo:
    """Sort a node's pods by the rules (CA 1.34 ``GetPodsToMove``), stopping at the first pod
    that blocks.

    Undefined or drain ok: DaemonSet pods to ``daemonset_pods``, the others (terminal pods
    too, as CA 1.34) to ``pods``; skip: nowhere; block: ``blocking`` alone (both lists
    empty, as CA returns none).

    Time: O(pods x budgets of their namespaces).
    """
    ctx = ctx if ctx is not None else DrainContext()
    pods: list[Pod] = []
    daemonset: list[Pod] = []
    for pi in node_info.pods:
        pod = pi.pod
        status = drainable(ctx, pod, rules)
        outcome = status.outcome
        if outcome is DrainOutcome.BLOCK_DRAIN:
            assert status.reason is not None
            return PodMoveInfo(blocking=BlockingPod(pod, status.reason, status.message))
        if outcome is not DrainOutcome.SKIP_DRAIN:
            if is_daemonset_pod(pod):
                daemonset.append(pod)
            else:
                pods.append(pod)
    return PodMoveInfo(tuple(pods), tuple(daemonset))


def pods_to_move(
    node_info: NodeInfo, ctx: DrainContext | None = None
) -> tuple[list[Pod], BlockingPod | None]:
    """The pods that must find another node, or the first pod that cannot be moved (CA
    ``GetPodsToMove`` with the default rules; see `get_pods_to_move`).

    Args:
        node_info: the node.
        ctx: the budgets and drain time; None: no budgets, no drain time.

    Returns:
        ``(pods, None)`` or ``([], blocking pod)``.
    """
    info = get_pods_to_move(node_info, ctx)
    if info.blocking is not None:
        return [], info.blocking
    return list(info.pods), None
