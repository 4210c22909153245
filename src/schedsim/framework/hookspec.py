"""Extension points of the scheduling cycle, as pluggy hook specifications.

A plugin is a class with a ``name`` and methods named after these hooks (the ``schedsim_``
prefix is enough; ``@hookimpl`` is optional). An implementation may accept fewer arguments
than the spec, so specs can grow. The runtime calls the hooks of the plugins enabled in the
active profile, in profile order. Filter and Score run once per (pod, node), so the runtime
calls every hook through chains of bound methods built once per profile rather than through
pluggy. Which hooks exist and which extension point each belongs to is the table in
`schedsim.framework.extension_points`.

Return ``None`` for success: it allocates nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs
import pluggy

from schedsim.api.core import Pod
from schedsim.api.resource import ResourceClaim
from schedsim.framework.cycle_state import CycleState
from schedsim.framework.devices import DeviceCandidate
from schedsim.framework.extension_points import hook_names
from schedsim.framework.interface import NodeInfo, PodInfo
from schedsim.framework.queued_pod_info import QueuedPodInfo
from schedsim.framework.status import SUCCESS, Status

__all__ = ["PROJECT", "PostFilterResult", "PreFilterResult", "hookimpl", "hookspec"]

PROJECT = "schedsim"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@attrs.frozen
class PreFilterResult:
    """A PreFilter narrowing: only ``node_names`` can fit (``framework.PreFilterResult``).

    ``node_names = None`` means all nodes.
    """

    node_names: frozenset[str] | None = None

    def merge(self, other: PreFilterResult | None) -> PreFilterResult:
        """The intersection of two results (all-nodes is the identity)."""
        if other is None or other.node_names is None:
            return self
        if self.node_names is None:
            return other
        return PreFilterResult(self.node_names & other.node_names)


@attrs.frozen
class PostFilterResult:
    """What a PostFilter plugin proposes (``framework.PostFilterResult`` with its
    ``NominatingInfo`` in ``ModeOverride``; returning no result is ``ModeNoop``).

    Attributes:
        nominated_node_name: the node the pod is nominated to (``status.nominatedNodeName``);
            "" clears an earlier nomination.
        status: the plugin's status: Success when it made room, else why not (a result
            with "" and Unschedulable clears the nomination of a pod preemption cannot help).
        victims: the pods to delete so that the pod fits on ``nominated_node_name``, most
            important first. schedsim's addition: upstream the plugin deletes them through
            the API server; here the scheduler evicts them from the snapshot, so a plugin
            never writes into the cluster it reads.
    """

    nominated_node_name: str = ""
    status: Status = SUCCESS
    victims: tuple[Pod, ...] = ()


# -------------------------------------------------------------------------------------------
# QueueSort
# -------------------------------------------------------------------------------------------


@hookspec
def schedsim_queue_sort_less(pod_info1: QueuedPodInfo, pod_info2: QueuedPodInfo) -> bool:
    """Order the scheduling queue: whether ``pod_info1`` goes before ``pod_info2``.

    Called by the queue's heap whenever it compares two pods (O(log n) times per push and
    pop), for the one QueueSort plugin of the profiles (kube-scheduler requires exactly one,
    shared by every profile). Pods that are not ordered either way keep insertion order.

    :param pod_info1: a queued pod (`QueuedPodInfo`: pod, timestamp, attempts, ...).
    :param pod_info2: another one.
    :returns: ``True`` if ``pod_info1`` is scheduled first (kube-scheduler's ``Less``). An
        exception aborts the run: the queue cannot be ordered without it.
    """
    raise NotImplementedError  # a spec: never called (pluggy calls the implementations)


# -------------------------------------------------------------------------------------------
# PreEnqueue
# -------------------------------------------------------------------------------------------


@hookspec
def schedsim_pre_enqueue(pod: Pod) -> Status | None:
    """Decide whether a pending pod may enter the scheduling queue at all.

    Called once per pod before its first attempt, for each enabled plugin in profile order,
    until one rejects (kube-scheduler's PreEnqueue: scheduling gates, DRA claims not created
    yet).

    :param pod: the pending pod.
    :returns: ``None`` to admit the pod; a rejection (``UnschedulableAndUnresolvable``) keeps
        it out of this run with the status's reasons; ``Error`` or an exception aborts.
    """


# -------------------------------------------------------------------------------------------
# PreFilter
# -------------------------------------------------------------------------------------------


@hookspec
def schedsim_pre_filter(
    state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
) -> Status | PreFilterResult | None:
    """Check the pod once per scheduling attempt and precompute what Filter needs.

    Called once per pod per attempt, before Filter, for each enabled plugin in profile order.
    Write per-pod data into ``state`` under the plugin's own `StateKey`.

    :param state: the attempt's cycle state.
    :param pod: the pod being scheduled.
    :param nodes: every NodeInfo of the snapshot.
    :returns: ``None`` (success, all nodes), a `PreFilterResult` (success, only those nodes
        can fit), or a `Status`: ``Skip`` (do not run this plugin's Filter for the attempt),
        ``Unschedulable`` / ``UnschedulableAndUnresolvable`` (the pod fits nowhere), or
        ``Error``. An exception is turned into an ``Error`` status.
    """


@hookspec
def schedsim_pre_filter_add_pod(
    state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo
) -> Status | None:
    """Update this plugin's PreFilter state as if ``pod_info_to_add`` ran on ``node_info``.

    kube-scheduler's ``PreFilterExtensions.AddPod``: preemption's dry runs and nominated pods
    evaluate Filter with pods added to or removed from a node without re-running PreFilter.
    Called only for plugins enabled at PreFilter whose PreFilter did not return Skip for the
    attempt, in profile order, until one fails.

    :param state: a cycle state the caller may have cloned (`CycleState.clone`); update the
        plugin's own data in it, never data shared with the original.
    :param pod_to_schedule: the pod being scheduled.
    :param pod_info_to_add: the pod to count as running on the node.
    :param node_info: the node it is added to (a copy the caller owns, or the snapshot's).
    :returns: ``None`` for success; any other status fails the operation and becomes
        ``Error`` ``running AddPod on PreFilter plugin "<name>": <message>``.
    """


@hookspec
def schedsim_pre_filter_remove_pod(
    state: CycleState, pod_to_schedule: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo
) -> Status | None:
    """Update this plugin's PreFilter state as if ``pod_info_to_remove`` left ``node_info``.

    kube-scheduler's ``PreFilterExtensions.RemovePod`` (preemption removes victims this way).
    Called like `schedsim_pre_filter_add_pod`.

    :param state: the (usually cloned) cycle state.
    :param pod_to_schedule: the pod being scheduled.
    :param pod_info_to_remove: the pod to count as gone from the node.
    :param node_info: the node it is removed from.
    :returns: ``None`` for success; any other status becomes ``Error``
        ``running RemovePod on PreFilter plugin "<name>": <message>``.
    """


# -------------------------------------------------------------------------------------------
# Filter
# -------------------------------------------------------------------------------------------


@hookspec
def schedsim_filter(state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
    """Decide whether the pod can run on one node.

    Called once per (pod, node) for each enabled plugin in profile order, until a plugin
    rejects; it is the hot path, so keep it cheap and return module-level `Status`
    constants for rejections.

    :param state: the attempt's cycle state, shared by all nodes (do not write per node).
    :param pod: the pod being scheduled.
    :param node_info: the snapshot's own NodeInfo: read-only.
    :returns: ``None`` for success, else a `Status` whose reasons are kube-scheduler's strings.
        Codes other than Unschedulable / UnschedulableAndUnresolvable / Pending are turned
        into ``Error``.
    """


# -------------------------------------------------------------------------------------------
# PostFilter
# -------------------------------------------------------------------------------------------


@hookspec
def schedsim_post_filter(
    state: CycleState, pod: Pod, node_to_status: Mapping[str, Status]
) -> Status | PostFilterResult | None:
    """Try to make the pod schedulable after no node passed Filter (preemption, DRA
    deallocation).

    Called in profile order until one plugin returns Success or UnschedulableAndUnresolvable;
    never called when a node passed (kube-scheduler's RunPostFilterPlugins).

    :param state: the attempt's cycle state (clone it before changing it per node).
    :param pod: the pod that fits nowhere.
    :param node_to_status: node name -> the status that rejected it; a node of the snapshot
        that is not in it counts as ``UnschedulableAndUnresolvable`` (1.34's
        NodeToStatusReader: it was left out by a PreFilterResult, or not evaluated).
    :returns: ``None`` / Success (the plugin made room: a later attempt may succeed), or
        ``Unschedulable`` with a message saying what it did or why it could not help (e.g.
        DynamicResources' ``deallocation of ResourceClaim completed``); ``Error`` aborts.
        A `PostFilterResult` carries a status too, plus the node to nominate the pod to
        (preemption) and the victims to delete.
    """


# -------------------------------------------------------------------------------------------
# PreScore
# -------------------------------------------------------------------------------------------


@hookspec
def schedsim_pre_score(state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
    """Prepare what Score needs, once per pod, from the nodes that passed Filter.

    Called once per scheduling attempt that found more than one feasible node, for each
    enabled plugin in profile order (kube-scheduler's PreScore). Write per-pod data into
    ``state`` under the plugin's own `StateKey`.

    :param state: the attempt's cycle state.
    :param pod: the pod being scheduled.
    :param nodes: the feasible nodes, in the order Filter found them.
    :returns: ``None`` for success; ``Skip`` when this plugin has nothing to score for the
        pod (its Score and NormalizeScore are not run, as ``state.skip_score_plugins``
        records); any other status, or an exception, becomes ``Error``
        ``running PreScore plugin "<name>": <message>`` and aborts the attempt.
    """


# -------------------------------------------------------------------------------------------
# Score
# -------------------------------------------------------------------------------------------


@hookspec
def schedsim_score(state: CycleState, pod: Pod, node_info: NodeInfo) -> int | Status:
    """Rank one feasible node for the pod.

    Called once per (pod, feasible node) for each enabled plugin whose PreScore did not
    return Skip; it is a hot path like Filter.

    :param state: the attempt's cycle state (read what PreScore wrote; do not write per node).
    :param pod: the pod being scheduled.
    :param node_info: the snapshot's own NodeInfo: read-only.
    :returns: the raw score, an ``int`` in any range the plugin's NormalizeScore maps into
        [`MIN_NODE_SCORE`, `MAX_NODE_SCORE`] (without NormalizeScore it must already be in
        that range). A `Status` means failure: the attempt aborts with ``Error``
        ``running Score plugins: plugin "<name>" failed with: <message>``.
    """
    raise NotImplementedError  # a spec: never called (pluggy calls the implementations)


@hookspec
def schedsim_normalize_score(state: CycleState, pod: Pod, scores: dict[str, int]) -> Status | None:
    """Map this plugin's raw scores for all feasible nodes into [0, 100], in place.

    kube-scheduler's ``ScoreExtensions.NormalizeScore``: called once per attempt after the
    plugin's Score ran on every feasible node, before its weight is applied.

    :param state: the attempt's cycle state.
    :param pod: the pod being scheduled.
    :param scores: node name -> raw score, in feasible-node order; assign the normalized
        values to the same keys (do not add or remove keys).
    :returns: ``None`` for success; any other status becomes ``Error``
        ``running Normalize on Score plugins: plugin "<name>" failed with: <message>``. A
        normalized score outside [0, 100] is an ``Error`` too.
    """


# -------------------------------------------------------------------------------------------
# Reserve
# -------------------------------------------------------------------------------------------


@hookspec
def schedsim_reserve(state: CycleState, pod: Pod, node_name: str) -> Status | None:
    """Claim node-level resources for the pod after Filter chose ``node_name``.

    Called once per scheduled pod, in profile order. If any plugin fails, every Reserve
    plugin's Unreserve is called in reverse order.

    :param state: the cycle state the chosen node's Filter saw.
    :param pod: the pod being scheduled.
    :param node_name: the chosen node.
    :returns: ``None`` for success; a rejection (``Unschedulable``,
        ``UnschedulableAndUnresolvable``) makes the pod unschedulable with the FitError
        ``0/1 nodes are available: <reasons>.`` (as kube-scheduler's scheduling cycle does);
        ``Error``, an exception or a result of another type fails that pod's attempt
        (``running Reserve plugin "<name>": ...``), after Unreserve ran. Plugin state
        lives outside the snapshot: reverting a fork does not undo what Reserve recorded.
    """


@hookspec
def schedsim_unreserve(state: CycleState, pod: Pod, node_name: str) -> None:
    """Undo what Reserve did; must be idempotent and must not fail.

    Called in reverse profile order when Reserve or a later step fails.

    :param state: the cycle state.
    :param pod: the pod being scheduled.
    :param node_name: the node Reserve was called for.
    """


# -------------------------------------------------------------------------------------------
# PreBind
# -------------------------------------------------------------------------------------------


@hookspec
def schedsim_pre_bind_pre_flight(state: CycleState, pod: Pod, node_name: str) -> Status | None:
    """Say whether this plugin's PreBind has anything to do for the pod (PreBindPreFlight).

    :returns: ``None`` / Success (PreBind will run), ``Skip`` (nothing to do), or ``Error``.
    """


@hookspec
def schedsim_pre_bind(state: CycleState, pod: Pod, node_name: str) -> Status | None:
    """Write what binding needs before the pod is bound (kube-scheduler's PreBind).

    Called once per scheduled pod after Reserve, in profile order, for plugins whose pre-flight
    did not return Skip. In the simulator the effect is on the snapshot (e.g. DynamicResources
    records the claims' allocation and ``reservedFor``), not on an API server.

    :returns: ``None`` for success; any other status fails binding (Unreserve runs).
    """


# -------------------------------------------------------------------------------------------
# Permit
# -------------------------------------------------------------------------------------------


@hookspec
def schedsim_permit(
    state: CycleState, pod: Pod, node_name: str
) -> Status | tuple[Status, float] | None:
    """Approve, delay or reject the binding of a reserved pod (kube-scheduler's Permit).

    Called once per pod after Reserve succeeded, in profile order, until one plugin rejects.
    A pod some plugin asks to wait becomes a waiting pod (``Handle.waiting_pods``): it keeps
    its place on the node and is bound once every waiting plugin allowed it
    (``WaitingPod.allow``, e.g. from the Permit of the last member of a gang); it is rejected
    (Unreserve runs, the pod goes back to the queue) when a plugin rejects it
    (``WaitingPod.reject``) or a plugin's timeout passes on the simulation's clock.

    :param state: the pod's cycle state.
    :param pod: the reserved pod.
    :param node_name: the node it is reserved on.
    :returns: ``None`` / Success (allow); ``(Status(Code.Wait), seconds)`` to wait at most
        that long (capped at 15 minutes, as upstream's maxTimeout; a bare ``Wait`` status
        waits 0 s); a rejection (``Unschedulable``, ``UnschedulableAndUnresolvable``) makes
        the pod unschedulable on that node (``0/1 nodes are available: <reasons>.``); anything
        else, or an exception, is ``Error`` ``running Permit plugin "<name>": <message>``.
    """


# -------------------------------------------------------------------------------------------
# Bind
# -------------------------------------------------------------------------------------------


@hookspec
def schedsim_bind(state: CycleState, pod: Pod, node_name: str) -> Status | None:
    """Bind the pod to the node (kube-scheduler's Bind; DefaultBinder writes
    ``spec.nodeName`` through the API, which in the simulator is the snapshot that already
    holds the pod).

    Called once per pod after PreBind, in profile order, until a plugin does not return
    ``Skip``: the first plugin that handles the pod binds it.

    :returns: ``None`` / Success (bound), ``Skip`` (not mine: the next Bind plugin decides),
        a rejection, or ``Error``. When every plugin skips, binding fails.
    """


# -------------------------------------------------------------------------------------------
# PostBind
# -------------------------------------------------------------------------------------------


@hookspec
def schedsim_post_bind(state: CycleState, pod: Pod, node_name: str) -> None:
    """Be told that the pod was bound (kube-scheduler's PostBind: informational, e.g. to
    clean up). Called once per bound pod, in profile order; its result is ignored and an
    exception is reported as a warning, never failing the pod.
    """


# -------------------------------------------------------------------------------------------
# DeviceChoice (beyond kube-scheduler 1.34)
# -------------------------------------------------------------------------------------------


@hookspec(firstresult=True)
def schedsim_choose_devices(
    state: CycleState,
    pod: Pod,
    node_info: NodeInfo,
    claim: ResourceClaim,
    request: str,
    candidates: Sequence[DeviceCandidate],
) -> Sequence[int] | None:
    """Rank the devices of the chosen node for one request of one of the pod's claims.

    Not a kube-scheduler extension point: upstream's allocator takes the first device that
    fits, in slice order. Called at Reserve by DynamicResources, once per (claim, request)
    of a pod whose claims it allocates on the chosen node, when the profile has a plugin
    implementing this hook (enabled at any point; there is no config section for it). The
    allocator then tries the devices in the returned order and stays complete: it still
    backtracks over every device, so a ranking changes which solution is found first, never
    whether one is. Without such a plugin the order is exactly upstream's.

    :param state: the attempt's cycle state (what PreScore and Score wrote).
    :param pod: the pod being scheduled.
    :param node_info: the chosen node's NodeInfo: read-only
        (`schedsim.framework.devices.node_devices` gives per-device use).
    :param claim: the claim being allocated (its ``spec.devices.requests``).
    :param request: the request's name in the claim.
    :param candidates: the devices of the pools searched for this node that are not
        allocated exclusively, in upstream's order, each with its use before this pod.
    :returns: indices into ``candidates``, best first (devices left out follow in upstream's
        order; a repeated or out-of-range index is an error); ``None``: no preference, the
        next plugin is asked. Stops at first non-None result.
    """


def reference_markdown() -> str:
    """The hook reference (docs/hooks.md), generated from the hook specs above so the two
    cannot drift apart (a test compares them)."""
    import inspect

    out = [
        "# Hook reference",
        "",
        "Generated from `schedsim.framework.hookspec` by "
        "`python -c 'from schedsim.framework.hookspec import reference_markdown as r; "
        'print(r(), end="")\' > docs/hooks.md`; a test keeps it in step.',
        "",
    ]
    for name in hook_names():
        fn = globals()[name]
        sig = str(inspect.signature(fn)).replace("'", "")
        out += [f"## `{name}{sig}`", "", inspect.cleandoc(fn.__doc__ or ""), ""]
    return "\n".join(out)
