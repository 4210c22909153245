"""Cluster events and queueing hints: what moves an unschedulable pod back into the queue.

Mirrors kube-scheduler 1.34's ``framework.ClusterEvent`` (an ``EventResource`` and an
``ActionType``), ``ClusterEventWithHint`` and ``QueueingHintFn`` (``EnqueueExtensions``):
a plugin that rejected a pod says which cluster events could make the pod schedulable again
and, optionally, a hint function that looks at the changed object and answers ``Queue`` or
``QueueSkip``. The scheduling queue (`schedsim.scheduler.queue`) moves a pod out of its
unschedulable pods only for an event one of the pod's rejecting plugins registered, and only
when that plugin's hint (if any) says ``Queue``.

A plugin declares its events with a plain method (not a pluggy hook: it is asked once per
profile, like Go's ``EventsToRegister``)::

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return (ClusterEventWithHint(ClusterEvent(EventResource.AssignedPod, ActionType.Delete)),)

An in-tree plugin without the method gets its upstream events from `IN_TREE_EVENTS`. Any other
plugin without the method is moved on every event (upstream registers ``allClusterEvents``
for a plugin that does not implement EnqueueExtensions); one that returns an empty sequence
is never moved by an event.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

import attrs

from schedsim.api.core import Node, Pod
from schedsim.api.core.containers import host_ports
from schedsim.api.core.nodeaffinity import required_node_affinity
from schedsim.api.core.resources import pod_requests
from schedsim.api.core.taints import Taint
from schedsim.api.storage import PersistentVolumeClaim
from schedsim.framework.resource import Resource
from schedsim.framework.types import HostPortInfo

__all__ = [
    "ALL_EVENTS",
    "ASSIGNED_POD_ADD",
    "ASSIGNED_POD_DELETE",
    "FORCE_ACTIVATE",
    "IN_TREE_EVENTS",
    "NODE_ADD",
    "UNSCHEDULABLE_TIMEOUT",
    "ActionType",
    "ClusterEvent",
    "ClusterEventWithHint",
    "EnqueueExtensions",
    "EventResource",
    "QueueingHint",
    "QueueingHintFn",
    "as_kind",
    "as_update",
    "node_affinity_hint",
    "node_ports_hint",
    "node_resources_fit_node_hint",
    "node_resources_fit_pod_hint",
    "node_resources_fit_unscheduled_pod_hint",
    "node_unschedulable_hint",
    "node_unschedulable_pod_hint",
    "pod_claim_hint",
    "pod_events_by_assignment",
    "pod_scheduling_properties_change",
    "pod_uses_claim",
    "taint_toleration_hint",
    "taint_toleration_pod_hint",
]


class EventResource(enum.Enum):
    """The kind of object an event is about (``framework.EventResource``).

    ``AssignedPod`` / ``UnscheduledPod`` are pods bound / not bound to a node; ``Pod`` matches
    both; ``WildCard`` (``"*"``) matches every resource.
    """

    Pod = "Pod"
    AssignedPod = "AssignedPod"
    UnscheduledPod = "UnscheduledPod"
    Node = "Node"
    PersistentVolume = "PersistentVolume"
    PersistentVolumeClaim = "PersistentVolumeClaim"
    CSINode = "CSINode"
    StorageClass = "StorageClass"
    VolumeAttachment = "VolumeAttachment"
    CSIDriver = "CSIDriver"
    CSIStorageCapacity = "CSIStorageCapacity"
    ResourceClaim = "ResourceClaim"
    ResourceSlice = "ResourceSlice"
    DeviceClass = "DeviceClass"
    WildCard = "*"


class ActionType(enum.Flag):
    """What happened to the object (``framework.ActionType``, a bit set)."""

    Add = 1
    Delete = 2
    UpdateNodeAllocatable = 4
    UpdateNodeLabel = 8
    UpdateNodeTaint = 16
    UpdateNodeCondition = 32
    UpdateNodeAnnotation = 64
    UpdatePodLabel = 128
    UpdatePodScaleDown = 256
    UpdatePodToleration = 512
    UpdatePodSchedulingGatesEliminated = 1024
    UpdatePodGeneratedResourceClaim = 2048
    UpdatePodOther = 4096
    """A pod update none of the specific pod actions describes (upstream's unexported
    ``updatePodOther``): only events registered as a general Pod Update match it."""
    Update = (
        UpdateNodeAllocatable
        | UpdateNodeLabel
        | UpdateNodeTaint
        | UpdateNodeCondition
        | UpdateNodeAnnotation
        | UpdatePodLabel
        | UpdatePodScaleDown
        | UpdatePodToleration
        | UpdatePodSchedulingGatesEliminated
        | UpdatePodGeneratedResourceClaim
        | UpdatePodOther
    )
    All = Add | Delete | Update


_POD_RESOURCES = frozenset({EventResource.AssignedPod, EventResource.UnscheduledPod})


@attrs.frozen
class ClusterEvent:
    """One kind of change (``framework.ClusterEvent``).

    Attributes:
        resource: the object kind.
        action: what happened (one or more `ActionType` bits).
        label: a name for logs and output (upstream's ``CustomLabel``); defaults to
            resource + action, e.g. ``"AssignedPodDelete"``.
    """

    resource: EventResource
    action: ActionType
    label: str = attrs.field(default="", eq=False)

    def __str__(self) -> str:
        if self.label:
            return self.label
        return f"{self.resource.value}{self.action.name or self.action.value}"

    @property
    def is_wildcard(self) -> bool:
        """Whether this is the wildcard event (every resource, every action)."""
        return self.resource is EventResource.WildCard and self.action == ActionType.All

    def match(self, event: ClusterEvent) -> bool:
        """Whether ``event`` (what happened) is covered by this registered event
        (``ClusterEvent.Match``): same resource (``Pod`` covers assigned and unscheduled pods,
        ``WildCard`` covers all) and at least one common action bit."""
        if self.is_wildcard:
            return True
        res = self.resource
        if res is not event.resource and res is not EventResource.WildCard:
            if not (res is EventResource.Pod and event.resource in _POD_RESOURCES):
                return False
        return bool(self.action & event.action)


class QueueingHint(enum.Enum):
    """A hint function's answer (``fwk.QueueingHint``)."""

    QueueSkip = 0
    Queue = 1


QueueingHintFn = Callable[[Pod, object, object], QueueingHint]
"""``(pod, old_obj, new_obj) -> QueueingHint``: whether the event (with the changed object
before and after; None for the missing side of Add/Delete) may make ``pod`` schedulable. An
exception counts as ``Queue``, as upstream treats a hint error."""


@attrs.frozen
class ClusterEventWithHint:
    """A registered event with its optional hint (``fwk.ClusterEventWithHint``).

    Attributes:
        event: the event the plugin cares about.
        hint: None: every matching event queues the pod (upstream's default hint).
    """

    event: ClusterEvent
    hint: QueueingHintFn | None = None


class EnqueueExtensions(Protocol):
    """A plugin that says which events may make the pods it rejected schedulable
    (``framework.EnqueueExtensions``). This is a Protocol: implementations don't inherit
    from it."""

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """The events (and hints) that may help a pod this plugin rejected."""
        ...


ASSIGNED_POD_ADD = ClusterEvent(EventResource.AssignedPod, ActionType.Add, "AssignedPodAdd")
"""A pod was bound to a node (kube-scheduler: the informer saw an assigned pod)."""

ASSIGNED_POD_DELETE = ClusterEvent(
    EventResource.AssignedPod, ActionType.Delete, "AssignedPodDelete"
)
"""A bound (or assumed) pod left its node: deleted, evicted by preemption, or forgotten after a
failed binding cycle."""

NODE_ADD = ClusterEvent(EventResource.Node, ActionType.Add, "NodeAdd")
"""A node joined the cluster."""

UNSCHEDULABLE_TIMEOUT = ClusterEvent(EventResource.WildCard, ActionType.All, "UnschedulableTimeout")
"""A pod stayed in the unschedulable pods longer than podMaxInUnschedulablePodsDuration
(the periodic flush)."""
FORCE_ACTIVATE = ClusterEvent(EventResource.WildCard, ActionType.All, "ForceActivate")
"""``EventForceActivate``: what `SchedulingQueue.activate` records for an in-flight pod (the
pod itself is the event's new object: the event concerns that pod only)."""


def pod_scheduling_properties_change(new: Pod, old: Pod) -> list[ClusterEvent]:
    """The events a pod's update is (``framework.PodSchedulingPropertiesChange``, 1.34):
    label change, scale-down (an effective request lowered or removed), scheduling gates
    all removed, tolerations added, resource-claim statuses changed; none of these:
    ``UpdatePodOther``. The resource is ``AssignedPod`` when the new pod has a node, else
    ``UnscheduledPod``."""
    r = EventResource.AssignedPod if new.node_name else EventResource.UnscheduledPod
    actions = []
    if dict(new.labels) != dict(old.labels):
        actions.append(ActionType.UpdatePodLabel)
    new_req, old_req = pod_requests(new), pod_requests(old)
    if any(name not in new_req or q > new_req[name] for name, q in old_req.items()):
        actions.append(ActionType.UpdatePodScaleDown)
    if old.scheduling_gates and not new.scheduling_gates:
        actions.append(ActionType.UpdatePodSchedulingGatesEliminated)
    if len(new.tolerations) != len(old.tolerations):
        actions.append(ActionType.UpdatePodToleration)
    if dict(new.resource_claim_statuses) != dict(old.resource_claim_statuses):
        actions.append(ActionType.UpdatePodGeneratedResourceClaim)
    if not actions:
        actions.append(ActionType.UpdatePodOther)
    return [ClusterEvent(r, a) for a in actions]


ALL_EVENTS: tuple[ClusterEventWithHint, ...] = (
    ClusterEventWithHint(ClusterEvent(EventResource.WildCard, ActionType.All)),
)
"""What a plugin without `EnqueueExtensions.events_to_register` is registered for."""


def _ev(resource: EventResource, action: ActionType) -> ClusterEventWithHint:
    return ClusterEventWithHint(ClusterEvent(resource, action))


def as_kind(kind: type, old: object, new: object) -> tuple[object, object] | None:
    """``util.As[T](oldObj, newObj)``: both sides when each is a ``kind`` or None (the missing
    side of an Add or Delete); None when either is something else (upstream's hints then
    answer Queue with the error)."""
    for obj in (new, old):
        if obj is not None and not isinstance(obj, kind):
            return None
    return old, new


_T = TypeVar("_T")


def as_update(kind: type[_T], old: object, new: object) -> tuple[_T | None, _T] | None:
    """The objects of an Add (``old`` None) or Update event, typed: None when the new side is
    missing or either side is not a ``kind`` (upstream's hints then answer Queue with the
    error of ``util.As``)."""
    if not isinstance(new, kind):
        return None
    if old is None:
        return None, new
    if not isinstance(old, kind):
        return None
    return old, new


def pod_uses_claim(pod: Pod, namespace: str, name: str) -> bool:
    """Whether ``pod`` reads the PersistentVolumeClaim ``namespace/name``: a
    ``persistentVolumeClaim`` volume naming it, or a generic ephemeral volume whose claim
    (``<pod>-<volume>``, ``ephemeral.VolumeClaimName``) it is, in the pod's namespace. The
    test of the volume plugins' claim-change hints.

    Time: O(volumes of the pod).
    """
    if namespace != pod.namespace:
        return False
    for vol in pod.volumes:
        if vol.persistent_volume_claim is not None:
            if vol.persistent_volume_claim == name:
                return True
        elif vol.ephemeral and f"{pod.name}-{vol.name}" == name:
            return True
    return False


def pod_claim_hint(pod: Pod, old: object, new: object) -> QueueingHint:
    """The claim-change hint of NodeVolumeLimits (``isSchedulableAfterPVCAdded``) and
    VolumeBinding (``isSchedulableAfterPersistentVolumeClaimChange``): queue when the claim as
    it is now (added or updated) is one the pod reads (`pod_uses_claim`); an object of the
    wrong type: Queue."""
    typed = as_update(PersistentVolumeClaim, old, new)
    if typed is None:
        return QueueingHint.Queue
    claim = typed[1]
    if pod_uses_claim(pod, claim.namespace, claim.name):
        return QueueingHint.Queue
    return QueueingHint.QueueSkip


def pod_events_by_assignment(
    actions: ActionType, assigned: QueueingHintFn, unscheduled: QueueingHintFn
) -> tuple[ClusterEventWithHint, ClusterEventWithHint]:
    """Upstream's ``Pod`` registration whose hint tells bound from unscheduled pods by
    ``spec.nodeName``, as schedsim registers it: ``AssignedPod`` events with ``assigned``,
    ``UnscheduledPod`` events with ``unscheduled``. A pod the simulation placed keeps an
    empty ``spec.nodeName`` (its node is the snapshot's), so the event's resource carries
    what upstream reads from the object."""
    return (
        ClusterEventWithHint(ClusterEvent(EventResource.AssignedPod, actions), assigned),
        ClusterEventWithHint(ClusterEvent(EventResource.UnscheduledPod, actions), unscheduled),
    )


_DO_NOT_SCHEDULE = ("NoSchedule", "NoExecute")


def _untolerated(node: Node, pod: Pod) -> bool:
    """``FindMatchingUntoleratedTaint`` with ``DoNotScheduleTaintsFilterFunc``: the node has a
    NoSchedule/NoExecute taint that none of the pod's tolerations tolerates."""
    return any(
        taint.effect in _DO_NOT_SCHEDULE and not any(t.tolerates(taint) for t in pod.tolerations)
        for taint in node.taints
    )


def node_unschedulable_hint(pod: Pod, old: object, new: object) -> QueueingHint:
    """NodeUnschedulable's ``isSchedulableAfterNodeChange``: queue when a schedulable node
    is added, or a node goes from unschedulable to schedulable (an object of the wrong type:
    Queue, as upstream's hint answers with its error)."""
    typed = as_kind(Node, old, new)
    if typed is None or typed[1] is None:
        return QueueingHint.Queue
    before, node = typed
    assert isinstance(node, Node)
    if not node.unschedulable and (before is None or getattr(before, "unschedulable", False)):
        return QueueingHint.Queue
    return QueueingHint.QueueSkip


_UNSCHEDULABLE_TAINT = Taint(key="node.kubernetes.io/unschedulable", effect="NoSchedule")


def node_unschedulable_pod_hint(pod: Pod, old: object, new: object) -> QueueingHint:
    """NodeUnschedulable's ``isSchedulableAfterPodTolerationChange``: queue when the pending
    pod itself (same UID) now tolerates the ``node.kubernetes.io/unschedulable:NoSchedule``
    taint; skip an update of another pod or an unrelated toleration."""
    typed = as_kind(Pod, old, new)
    if typed is None or typed[1] is None:
        return QueueingHint.Queue
    modified = typed[1]
    assert isinstance(modified, Pod)
    if pod.uid == modified.uid and any(
        t.tolerates(_UNSCHEDULABLE_TAINT) for t in modified.tolerations
    ):
        return QueueingHint.Queue
    return QueueingHint.QueueSkip


def taint_toleration_hint(pod: Pod, old: object, new: object) -> QueueingHint:
    """TaintToleration's ``isSchedulableAfterNodeChange``: queue when the node as it is now
    has no NoSchedule/NoExecute taint the pod does not tolerate, and it had one before (an
    added node counts as having had one); an object of the wrong type: Queue."""
    typed = as_kind(Node, old, new)
    if typed is None or typed[1] is None:
        return QueueingHint.Queue
    before, node = typed
    assert isinstance(node, Node)
    was_untolerated = before is None or (isinstance(before, Node) and _untolerated(before, pod))
    if was_untolerated and not _untolerated(node, pod):
        return QueueingHint.Queue
    return QueueingHint.QueueSkip


def taint_toleration_pod_hint(pod: Pod, old: object, new: object) -> QueueingHint:
    """TaintToleration's ``isSchedulableAfterPodChange``: queue when the pending pod itself
    (same UID) got a toleration (tolerations can only be added, so a changed count is
    enough); skip other pods and other updates."""
    typed = as_kind(Pod, old, new)
    if typed is None or typed[1] is None:
        return QueueingHint.Queue
    before, modified = typed
    assert isinstance(modified, Pod)
    before_count = len(before.tolerations) if isinstance(before, Pod) else 0
    if pod.uid == modified.uid and before_count != len(modified.tolerations):
        return QueueingHint.Queue
    return QueueingHint.QueueSkip


def node_affinity_hint(pod: Pod, old: object, new: object) -> QueueingHint:
    """NodeAffinity's ``isSchedulableAfterNodeChange``: queue only if the node as it is now
    matches the pod's nodeSelector and required node affinity (an object of the wrong type:
    Queue, as upstream's hint answers with its error)."""
    typed = as_kind(Node, old, new)
    if typed is None or typed[1] is None:
        return QueueingHint.Queue
    node = typed[1]
    assert isinstance(node, Node)
    if required_node_affinity(pod)(node.labels, node.name):
        return QueueingHint.Queue
    return QueueingHint.QueueSkip


def node_ports_hint(pod: Pod, old: object, new: object) -> QueueingHint:
    """NodePorts' ``isSchedulableAfterPodDeleted`` (node_ports.go), registered for
    ``AssignedPod Delete``: queue only when the deleted pod released a host port the pending
    pod asks for (``fitsPorts`` of the pending pod's host ports against the deleted pod's);
    an object of the wrong type: Queue.

    Upstream registers ``Pod Delete`` and skips a deleted pod with neither ``spec.nodeName``
    nor ``status.nominatedNodeName``. A schedsim pod placed by the simulation keeps its
    empty ``spec.nodeName`` (its node is the snapshot's), so the event's resource says
    whether the pod was bound: unscheduled pods' deletes are not registered."""
    typed = as_kind(Pod, old, new)
    if typed is None or typed[0] is None:
        return QueueingHint.Queue
    deleted = typed[0]
    assert isinstance(deleted, Pod)
    released = host_ports(deleted.init_containers, deleted.containers)
    if not released:
        return QueueingHint.QueueSkip
    in_use = HostPortInfo()
    for ip, protocol, port in released:
        in_use.add(ip, protocol, port)
    wanted = host_ports(pod.init_containers, pod.containers)
    if any(in_use.check_conflict(ip, protocol, port) for ip, protocol, port in wanted):
        return QueueingHint.Queue
    return QueueingHint.QueueSkip


def _requests(pod: Pod) -> Resource:
    """``resource.PodRequests`` in scheduler units (PodLevelResources on, as in 1.34)."""
    return pod.memo(("events.requests",), lambda: Resource.from_resource_list(pod_requests(pod)))


def _fields(r: Resource) -> dict[str, int]:
    out = dict(r.scalar_resources)
    out.update(cpu=r.milli_cpu, memory=r.memory)
    out["ephemeral-storage"] = r.ephemeral_storage
    return out


def node_resources_fit_pod_hint(pod: Pod, old: object, new: object) -> QueueingHint:
    """NodeResourcesFit's ``isSchedulableAfterPodEvent`` (fit.go) for an assigned pod
    (``AssignedPod Delete|UpdatePodScaleDown``), InPlacePodVerticalScaling on (its 1.34
    default): a deletion queues; a scale-down queues when it is the pending pod's own, or
    when the pod's requests of a resource the pending pod requests went down
    (``isSchedulableAfterPodScaleDown``); an object of the wrong type: Queue.

    Upstream registers ``Pod`` and tells bound from unscheduled pods by ``spec.nodeName``
    (and ``status.nominatedNodeName`` for a deletion); schedsim's placed pods keep an empty
    ``spec.nodeName``, so the event's resource tells them apart: this hint for assigned pods,
    `node_resources_fit_unscheduled_pod_hint` for unscheduled ones, and unscheduled pods'
    deletes are not registered."""
    typed = as_kind(Pod, old, new)
    if typed is None or typed[0] is None:
        return QueueingHint.Queue
    original, modified = typed
    assert isinstance(original, Pod)
    if modified is None:
        return QueueingHint.Queue
    assert isinstance(modified, Pod)
    if modified.uid == pod.uid:
        return QueueingHint.Queue
    before, after = _fields(_requests(original)), _fields(_requests(modified))
    for name, q in _fields(_requests(pod)).items():
        if q and before.get(name, 0) > after.get(name, 0):
            return QueueingHint.Queue
    return QueueingHint.QueueSkip


def node_resources_fit_unscheduled_pod_hint(pod: Pod, old: object, new: object) -> QueueingHint:
    """NodeResourcesFit's ``isSchedulableAfterPodEvent`` for an unscheduled pod's scale-down
    (``UnscheduledPod UpdatePodScaleDown``): queue only when it is the pending pod itself
    (same UID); another unscheduled pod frees nothing. An object of the wrong type: Queue."""
    typed = as_kind(Pod, old, new)
    if typed is None or typed[1] is None:
        return QueueingHint.Queue
    modified = typed[1]
    assert isinstance(modified, Pod)
    return QueueingHint.Queue if modified.uid == pod.uid else QueueingHint.QueueSkip


def _fits_empty(request: Resource, alloc: Resource) -> bool:
    """``isFit``: the pod fits a NodeInfo holding only ``node`` (no pods, nothing requested;
    no ignored resources)."""
    if alloc.allowed_pod_number < 1:
        return False
    if request.milli_cpu > alloc.milli_cpu or request.memory > alloc.memory:
        return False
    if request.ephemeral_storage > alloc.ephemeral_storage:
        return False
    scalars = alloc.scalar_resources
    return all(q <= scalars.get(n, 0) for n, q in request.scalar_resources.items())


def node_resources_fit_node_hint(pod: Pod, old: object, new: object) -> QueueingHint:
    """NodeResourcesFit's ``isSchedulableAfterNodeChange`` (fit.go): skip when the pod does
    not fit the node as it is now even when empty (``isFit``); queue an added node it fits;
    for an update queue only when the allowed pod count, or the allocatable of a resource
    the pod requests, went up (``haveAnyRequestedResourcesIncreased``); an object of the
    wrong type: Queue."""
    typed = as_kind(Node, old, new)
    if typed is None or typed[1] is None:
        return QueueingHint.Queue
    original, modified = typed
    assert isinstance(modified, Node)
    request = _requests(pod)
    after = Resource.from_resource_list(modified.allocatable)
    if not _fits_empty(request, after):
        return QueueingHint.QueueSkip
    if original is None:
        return QueueingHint.Queue
    assert isinstance(original, Node)
    before = Resource.from_resource_list(original.allocatable)
    if after.allowed_pod_number > before.allowed_pod_number:
        return QueueingHint.Queue
    was, now = _fields(before), _fields(after)
    for name, q in _fields(request).items():
        if q and now.get(name, 0) > was.get(name, 0):
            return QueueingHint.Queue
    return QueueingHint.QueueSkip


_R, _A = EventResource, ActionType

IN_TREE_EVENTS: dict[str, tuple[ClusterEventWithHint, ...]] = {
    "SchedulingGates": (_ev(_R.UnscheduledPod, _A.UpdatePodSchedulingGatesEliminated),),
    "NodeUnschedulable": (
        ClusterEventWithHint(
            ClusterEvent(_R.Node, _A.Add | _A.UpdateNodeTaint), node_unschedulable_hint
        ),
        ClusterEventWithHint(
            ClusterEvent(_R.UnscheduledPod, _A.UpdatePodToleration), node_unschedulable_pod_hint
        ),
    ),
    "NodeName": (_ev(_R.Node, _A.Add | _A.Update),),
    "TaintToleration": (
        ClusterEventWithHint(
            ClusterEvent(_R.Node, _A.Add | _A.UpdateNodeTaint), taint_toleration_hint
        ),
        ClusterEventWithHint(
            ClusterEvent(_R.UnscheduledPod, _A.UpdatePodToleration), taint_toleration_pod_hint
        ),
    ),
    "NodeAffinity": (
        ClusterEventWithHint(
            ClusterEvent(_R.Node, _A.Add | _A.UpdateNodeLabel), node_affinity_hint
        ),
    ),
    "NodePorts": (
        ClusterEventWithHint(ClusterEvent(_R.AssignedPod, _A.Delete), node_ports_hint),
        _ev(_R.Node, _A.Add),
    ),
    "NodeResourcesFit": (
        ClusterEventWithHint(
            ClusterEvent(_R.AssignedPod, _A.Delete | _A.UpdatePodScaleDown),
            node_resources_fit_pod_hint,
        ),
        ClusterEventWithHint(
            ClusterEvent(_R.UnscheduledPod, _A.UpdatePodScaleDown),
            node_resources_fit_unscheduled_pod_hint,
        ),
        ClusterEventWithHint(
            ClusterEvent(_R.Node, _A.Add | _A.UpdateNodeAllocatable), node_resources_fit_node_hint
        ),
    ),
}
"""The events kube-scheduler 1.34's in-tree plugins register (their ``EventsToRegister``
with SchedulerQueueingHints on, its 1.34 default). NodeUnschedulable and TaintToleration
carry their node-change and pod-toleration-change hints, NodeAffinity its node-change hint,
NodePorts its pod-deletion hint, NodeResourcesFit its pod and node hints; NodeName and
SchedulingGates have none upstream either. The plugins whose hints read their own state or
the cluster's listers (InterPodAffinity, PodTopologySpread, VolumeRestrictions, VolumeZone,
NodeVolumeLimits, VolumeBinding, DynamicResources) register theirs with their own
``events_to_register``. Where upstream registers ``Pod`` and its hint reads
``spec.nodeName``, schedsim registers ``AssignedPod`` / ``UnscheduledPod`` (a placed pod
keeps an empty ``spec.nodeName``). Used for an in-tree plugin that has no
``events_to_register`` method of its own."""
