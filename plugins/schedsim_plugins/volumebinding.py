"""VolumeBinding: mirrors kube-scheduler 1.34's ``VolumeBinding`` plugin
(pkg/scheduler/framework/plugins/volumebinding/volume_binding.go and binder.go, with the
component-helpers ``FindMatchingVolume`` / ``CheckNodeAffinity`` rules it relies on).

Bound claims need their PV's node affinity to match the node; unbound claims of an Immediate
class must be bound by the PV controller first; unbound claims of a WaitForFirstConsumer class
are bound by the scheduler: to the smallest matching available PV (class, access modes, volume
mode, selector, capacity, node affinity), else provisioned dynamically where the class's
``allowedTopologies`` and, for CSI drivers with ``storageCapacity: true``, a
CSIStorageCapacity allow. Reserve writes the choice into the snapshot the way the scheduler's
assume caches do (the PV gets the claim's ``claimRef``; a claim to provision gets the
``volume.kubernetes.io/selected-node`` annotation), Unreserve restores it, and PreBind
completes the binding as the PV controller would (the claim gets ``spec.volumeName`` and
``pv.kubernetes.io/bind-completed``). The snapshot keeps PVs and PVCs in patch sets, so a fork's
revert undoes a binding and a later pod cannot take a PV an earlier one took.

PVs and PVCs are read through ``Handle.volume_manager`` (the snapshot), StorageClasses,
CSIDrivers and CSIStorageCapacities through ``Handle.storage_listers``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any, ClassVar, Final

import attrs

from schedsim.api.core import Node, Pod
from schedsim.api.core.nodeaffinity import compile_node_selector
from schedsim.api.labels import go_quote
from schedsim.api.storage import (
    BIND_COMPLETED_ANNOTATION,
    BOUND_BY_CONTROLLER_ANNOTATION,
    NOT_SUPPORTED_PROVISIONER,
    SELECTED_NODE_ANNOTATION,
    ClaimReference,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
)
from schedsim.api.storage.csi import CSIDriver, CSINode, CSIStorageCapacity
from schedsim.api.storage.fields import MIGRATED_PLUGINS_ANNOTATION
from schedsim.framework import (
    Code,
    CycleState,
    Handle,
    NodeInfo,
    PreFilterResult,
    SharedVolumeManager,
    StateKey,
    Status,
)
from schedsim.framework.delegating import DelegatingStorageListers
from schedsim.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
    as_update,
    pod_claim_hint,
)

__all__ = [
    "ERR_REASON_BIND_CONFLICT",
    "ERR_REASON_NODE_CONFLICT",
    "ERR_REASON_NOT_ENOUGH_SPACE",
    "ERR_REASON_PV_NOT_EXIST",
    "ERR_REASON_UNBOUND_IMMEDIATE",
    "STATE_KEY",
    "BindingState",
    "PVIndex",
    "PodVolumeClaims",
    "PodVolumes",
    "VolumeBinding",
    "check_node_affinity",
    "find_matching_volume",
    "local_pv_node_names",
]

NAME = "VolumeBinding"

ERR_REASON_BIND_CONFLICT: Final = "node(s) didn't find available persistent volumes to bind"
"""No PV to bind and no provisioning possible on the node (``ErrReasonBindConflict``)."""
ERR_REASON_NODE_CONFLICT: Final = "node(s) had volume node affinity conflict"
"""A bound PV's node affinity excludes the node (``ErrReasonNodeConflict``)."""
ERR_REASON_NOT_ENOUGH_SPACE: Final = "node(s) did not have enough free storage"
"""No CSIStorageCapacity reachable from the node fits the claim (``ErrReasonNotEnoughSpace``)."""
ERR_REASON_PV_NOT_EXIST: Final = (
    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
)
"""A bound claim's PV does not exist (``ErrReasonPVNotExist``)."""
ERR_REASON_UNBOUND_IMMEDIATE: Final = "pod has unbound immediate PersistentVolumeClaims"
"""PreFilter's reason for an unbound claim of an Immediate class."""

_HOSTNAME = "kubernetes.io/hostname"
_SKIP = Status(Code.Skip, (), NAME)
_UNBOUND_IMMEDIATE = Status(
    Code.UnschedulableAndUnresolvable, (ERR_REASON_UNBOUND_IMMEDIATE,), NAME
)
_NO_STATE = Status(Code.Error, (f'reading "{NAME}" from cycleState: not found',), NAME)


# ------------------------------------------------------------------------------ helpers


def check_node_affinity(pv: PersistentVolume, node: Node) -> bool:
    """Whether the PV's ``spec.nodeAffinity`` admits the node (component-helpers
    ``CheckNodeAffinity``): True without node affinity, else some term matches the node's
    labels (``matchFields`` see the node's name). The compiled selector is memoized per PV."""
    terms = pv.node_affinity
    if terms is None:
        return True
    matcher = _PV_MATCHERS.get(id(pv))
    if matcher is None or matcher[0] is not pv:
        if len(_PV_MATCHERS) > 1 << 16:
            _PV_MATCHERS.clear()
        matcher = (pv, compile_node_selector(terms)[0])
        _PV_MATCHERS[id(pv)] = matcher
    return matcher[1](node.labels, node.name)


_PV_MATCHERS: dict[int, tuple[PersistentVolume, Any]] = {}


def local_pv_node_names(pv: PersistentVolume) -> frozenset[str]:
    """The node names a PV's node affinity pins it to (``GetLocalPersistentVolumeNodeNames``):
    per term, the intersection of its ``kubernetes.io/hostname In`` values; the union over
    terms. Empty when the PV is not pinned this way."""
    if pv.node_affinity is None:
        return frozenset()
    out: set[str] = set()
    for term in pv.node_affinity:
        nodes: set[str] | None = None
        for req in term.match_expressions:
            if req.key == _HOSTNAME and req.operator == "In":
                nodes = set(req.values) if nodes is None else nodes & set(req.values)
        if nodes:
            out |= nodes
    return frozenset(out)


def _is_bound_to_claim(pv: PersistentVolume, pvc: PersistentVolumeClaim) -> bool:
    """``IsVolumeBoundToClaim``: the PV's claimRef names the claim (and its UID, if set)."""
    ref = pv.claim_ref
    if ref is None or ref.name != pvc.name or ref.namespace != pvc.namespace:
        return False
    return not ref.uid or ref.uid == pvc.uid


def find_matching_volume(
    pvc: PersistentVolumeClaim,
    pvs: Sequence[PersistentVolume],
    node: Node,
    excluded: frozenset[str] | set[str],
) -> PersistentVolume | None:
    """The PV to bind ``pvc`` to on ``node`` (component-helpers ``FindMatchingVolume`` on the
    scheduler path, delayBinding true).

    A PV pre-bound to the claim (its claimRef names it) wins if its node affinity admits the
    node (else None). Otherwise the smallest PV that is not excluded, not bound to another
    claim, at least as large as the request, of the same volume mode, not being deleted, in
    phase ``Available``, matching the claim's selector, of the claim's class, admitting the
    node and offering every access mode the claim asks for; ties keep the first in ``pvs``.
    """
    requested = pvc.requested_storage or Fraction(0)
    requested_class = pvc.storage_class
    selector = pvc.selector
    best: PersistentVolume | None = None
    for pv in pvs:
        if pv.name in excluded:
            continue
        bound_to_claim = _is_bound_to_claim(pv, pvc)
        if pv.claim_ref is not None and not bound_to_claim:
            continue
        if pv.capacity < requested:
            continue
        if pv.volume_mode != pvc.volume_mode:
            continue
        if pv.deletion_timestamp is not None:
            continue
        affinity_ok = check_node_affinity(pv, node)
        if bound_to_claim:
            return pv if affinity_ok else None
        if pv.phase != "Available":
            continue
        if selector is not None and not selector.matches(pv.labels):
            continue
        if pv.storage_class != requested_class:
            continue
        if not affinity_ok:
            continue
        if not all(mode in pv.access_modes for mode in pvc.access_modes):
            continue
        if best is None or best.capacity > pv.capacity:
            best = pv
    return best


def _bytes(q: Fraction) -> int:
    """``Quantity.Value()``: rounded up to a whole number."""
    return math.ceil(q)


def _pinned_hosts(pv: PersistentVolume) -> frozenset[str] | None:
    """The hostname label values a PV can possibly match: for every node affinity term the
    intersection of its ``kubernetes.io/hostname In`` values, united over the terms; None when
    some term has no such requirement (or the PV has no node affinity): any node may match."""
    terms = pv.node_affinity
    if terms is None:
        return None
    out: set[str] = set()
    for term in terms:
        hosts: set[str] | None = None
        for req in term.match_expressions:
            if req.key == _HOSTNAME and req.operator == "In":
                hosts = set(req.values) if hosts is None else hosts & set(req.values)
        if hosts is None:
            return None
        out |= hosts
    return frozenset(out)


class PVIndex:
    """The PVs of one class as `find_matching_volume` needs them per node, so Filter looks at
    O(PVs that could match the node) instead of every PV of the class (schedsim's; upstream
    walks the whole class per node).

    A PV whose node affinity requires ``kubernetes.io/hostname In [...]`` in every term can only
    match nodes with one of those hostname labels; it is listed under each of them. Other PVs
    are listed for every node, and PVs whose claimRef names a claim are also listed under that
    claim (a PV pre-bound to the claim decides the outcome wherever it is). `candidates`
    returns them in the class's order, so ties break as upstream's walk does.

    Time: construction O(PVs); `candidates` O(k log k) for the k PVs it returns.
    """

    __slots__ = ("_any", "_by_claim", "_by_host")

    def __init__(self, pvs: Sequence[PersistentVolume]) -> None:
        self._by_host: dict[str, list[tuple[int, PersistentVolume]]] = {}
        self._any: list[tuple[int, PersistentVolume]] = []
        self._by_claim: dict[tuple[str, str], list[tuple[int, PersistentVolume]]] = {}
        for i, pv in enumerate(pvs):
            ref = pv.claim_ref
            if ref is not None:
                self._by_claim.setdefault((ref.namespace, ref.name), []).append((i, pv))
            hosts = _pinned_hosts(pv)
            if hosts is None:
                self._any.append((i, pv))
            else:
                for host in hosts:
                    self._by_host.setdefault(host, []).append((i, pv))

    def candidates(self, pvc: PersistentVolumeClaim, node: Node) -> list[PersistentVolume]:
        """The PVs that can match ``pvc`` on ``node`` (a superset), in class order."""
        host = node.labels.get(_HOSTNAME)
        found = dict(self._any)
        if host is not None:
            found.update(self._by_host.get(host, ()))
        found.update(self._by_claim.get((pvc.namespace, pvc.name), ()))
        return [found[i] for i in sorted(found)]


# ------------------------------------------------------------------------------ state


@attrs.frozen
class PodVolumeClaims:
    """The pod's claims sorted by what the binder must do (``PodVolumeClaims``).

    Attributes:
        bound: fully bound claims (their PV's node affinity is checked).
        unbound_immediate: unbound claims of an Immediate class (or without a known class),
            and claims with ``spec.volumeName`` the PV controller has not finished binding.
        unbound_delay_binding: unbound claims of a WaitForFirstConsumer class.
        unbound_volumes_delay_binding: class name -> its PVs, for the delay-binding claims,
            as a `PVIndex`.
    """

    bound: tuple[PersistentVolumeClaim, ...] = ()
    unbound_immediate: tuple[PersistentVolumeClaim, ...] = ()
    unbound_delay_binding: tuple[PersistentVolumeClaim, ...] = ()
    unbound_volumes_delay_binding: Mapping[str, PVIndex] = attrs.field(factory=dict)


@attrs.frozen
class PodVolumes:
    """What binding the pod's claims on one node takes (``PodVolumes``).

    Attributes:
        static_bindings: ``(PV, claim)`` pairs: existing PVs to bind.
        dynamic_provisions: claims to provision on the node.
    """

    static_bindings: tuple[tuple[PersistentVolume, PersistentVolumeClaim], ...] = ()
    dynamic_provisions: tuple[PersistentVolumeClaim, ...] = ()


@attrs.define
class BindingState:
    """The plugin's cycle state (``stateData``).

    Attributes:
        claims: the pod's claims as PreFilter sorted them.
        pod_volumes_by_node: what Filter found per node that passed.
        all_bound: set by Reserve: nothing to bind.
        has_static_bindings: some node needs a static binding (Score would run).
        every_node: set by PreFilter when Filter's answer is the same on every node: every
            claim bound, every PV found and none with node affinity (the PVs cannot change
            during the Filter walk), so Filter records it without looking the PVs up per node.
        assumed: what Reserve replaced in the snapshot, oldest first: the objects as they
            were, for Unreserve to put back.
    """

    claims: PodVolumeClaims
    pod_volumes_by_node: dict[str, PodVolumes] = attrs.field(factory=dict)
    every_node: PodVolumes | None = None
    all_bound: bool = False
    has_static_bindings: bool = False
    assumed: list[PersistentVolume | PersistentVolumeClaim] = attrs.field(factory=list)

    def clone(self) -> BindingState:
        """The same object, as upstream's ``Clone`` (the state is shared by design)."""
        return self


_NO_CLAIMS = PodVolumeClaims()
_ALL_BOUND = PodVolumes()
"""What Filter finds on a node when every claim is bound: nothing to bind."""

STATE_KEY: StateKey[BindingState] = StateKey(NAME)
"""Where PreFilter leaves the `BindingState` (``stateKey`` upstream)."""


class _ClaimError(Exception):
    """An error of ``podHasPVCs`` / ``GetPodVolumeClaims`` (its message is the reason)."""


# ------------------------------------------------------------------------------ plugin


def _volume_limit(capacity: CSIStorageCapacity) -> Fraction | None:
    """``volumeLimit``: the largest volume the capacity admits (bytes), None if unknown."""
    if capacity.maximum_volume_size is not None:
        return capacity.maximum_volume_size
    return capacity.capacity


class VolumeBinding:
    """Mirrors kube-scheduler's ``VolumeBinding`` plugin (see the module docstring).

    PreFilter: Skip for a pod without PVC or generic ephemeral volumes; UnschedulableAndUnresolvable
    for a missing claim (``persistentvolumeclaim "x" not found``; for an ephemeral volume
    ``waiting for ephemeral volume controller to create the persistentvolumeclaim "x"``), a
    claim in phase Lost (``persistentvolumeclaim "x" bound to non-existent persistentvolume
    "y"``), one being deleted, an ephemeral claim the pod does not own, and for an unbound
    claim of an Immediate class (``pod has unbound immediate PersistentVolumeClaims``). Bound
    claims whose PVs are pinned to nodes by ``kubernetes.io/hostname In`` node affinity narrow
    the nodes (a `PreFilterResult`).

    Filter: UnschedulableAndUnresolvable with, in this order, ``node(s) had volume node
    affinity conflict`` (a bound PV's node affinity), ``node(s) didn't find available
    persistent volumes to bind``, ``node(s) did not have enough free storage`` and ``node(s)
    unavailable due to one or more pvc(s) bound to non-existent pv(s)``. A claim whose
    provisioning node was already selected fits only that node.

    Reserve / Unreserve / PreBind: see the module docstring. Score (StorageCapacityScoring,
    alpha and off in 1.34) is not implemented: with the gate off upstream's PreScore returns
    Skip, which is what not scoring amounts to.

    Args (VolumeBindingArgs): ``bindTimeoutSeconds`` (an integer >= 0, unused: binding in
    the snapshot is immediate); ``shape`` is refused (it needs StorageCapacityScoring).
    """

    name: ClassVar[str] = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        unknown = sorted(k for k in args if k not in ("apiVersion", "kind", "bindTimeoutSeconds"))
        if unknown:
            raise ValueError(
                f"{NAME} args: unknown or unsupported field(s) {', '.join(unknown)} "
                "(shape needs the StorageCapacityScoring feature gate, not emulated)"
            )
        timeout = args.get("bindTimeoutSeconds", 600)
        if isinstance(timeout, bool) or not isinstance(timeout, int) or timeout < 0:
            raise ValueError(
                f"{NAME} args: bindTimeoutSeconds: Invalid value: {timeout!r}: "
                "must be a non-negative integer"
            )
        self._handle = handle

    def _volumes(self) -> SharedVolumeManager:
        return self._handle.volume_manager

    # ----------------------------------------------------------------- queueing hints

    def events_to_register(self) -> tuple[ClusterEventWithHint, ...]:
        """``EventsToRegister`` (volume_binding.go, 1.34, SchedulerQueueingHints on):
        StorageClass Add|Update with `is_schedulable_after_storage_class_change`,
        PersistentVolumeClaim Add|Update with
        `schedsim.framework.events.pod_claim_hint`, PersistentVolume Add|Update
        and Node Add|UpdateNodeLabel without a hint (with hints on, upstream no longer
        registers UpdateNodeTaint), CSINode Add|Update with
        `is_schedulable_after_csi_node_change`, CSIDriver Update with
        `is_schedulable_after_csi_driver_change`, CSIStorageCapacity Add|Update with
        `is_schedulable_after_csi_storage_capacity_change`."""
        add_update = ActionType.Add | ActionType.Update
        r = EventResource
        return (
            ClusterEventWithHint(
                ClusterEvent(r.StorageClass, add_update),
                self.is_schedulable_after_storage_class_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(r.PersistentVolumeClaim, add_update),
                pod_claim_hint,
            ),
            ClusterEventWithHint(ClusterEvent(r.PersistentVolume, add_update)),
            ClusterEventWithHint(ClusterEvent(r.Node, ActionType.Add | ActionType.UpdateNodeLabel)),
            ClusterEventWithHint(
                ClusterEvent(r.CSINode, add_update), self.is_schedulable_after_csi_node_change
            ),
            ClusterEventWithHint(
                ClusterEvent(r.CSIDriver, ActionType.Update),
                self.is_schedulable_after_csi_driver_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(r.CSIStorageCapacity, add_update),
                self.is_schedulable_after_csi_storage_capacity_change,
            ),
        )

    def is_schedulable_after_csi_node_change(
        self, pod: Pod, old: object, new: object
    ) -> QueueingHint:
        """``isSchedulableAfterCSINodeChange``: queue an added CSINode, or an update of its
        ``storage.alpha.kubernetes.io/migrated-plugins`` annotation (what in-tree PVs
        translate to); an object of the wrong type: Queue."""
        typed = as_update(CSINode, old, new)
        if typed is None:
            return QueueingHint.Queue
        before, after = typed
        if before is None:
            return QueueingHint.Queue
        if before.annotations.get(MIGRATED_PLUGINS_ANNOTATION) != after.annotations.get(
            MIGRATED_PLUGINS_ANNOTATION
        ):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_storage_class_change(
        self, pod: Pod, old: object, new: object
    ) -> QueueingHint:
        """``isSchedulableAfterStorageClassChange``: queue an added class, or an update of
        its ``allowedTopologies`` (``volumeBindingMode`` is immutable); an object of the
        wrong type: Queue."""
        typed = as_update(StorageClass, old, new)
        if typed is None:
            return QueueingHint.Queue
        before, after = typed
        if before is None:
            return QueueingHint.Queue
        if before.allowed_topologies != after.allowed_topologies:
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_csi_storage_capacity_change(
        self, pod: Pod, old: object, new: object
    ) -> QueueingHint:
        """``isSchedulableAfterCSIStorageCapacityChange``: queue an added capacity, or an
        update that raises its volume limit (``maximumVolumeSize`` if set, else
        ``capacity``) or sets one where there was none; an object of the wrong type:
        Queue."""
        typed = as_update(CSIStorageCapacity, old, new)
        if typed is None:
            return QueueingHint.Queue
        before, after = typed
        if before is None:
            return QueueingHint.Queue
        was, now = _volume_limit(before), _volume_limit(after)
        if now is not None and (was is None or now > was):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_csi_driver_change(
        self, pod: Pod, old: object, new: object
    ) -> QueueingHint:
        """``isSchedulableAfterCSIDriverChange``: queue when the pod has an inline ``csi``
        volume of the driver and the update turned ``storageCapacity`` off; an object of the
        wrong type: Queue."""
        typed = as_update(CSIDriver, old, new)
        if typed is None:
            return QueueingHint.Queue
        before, after = typed
        if before is None:
            return QueueingHint.Queue
        for vol in pod.volumes:
            if vol.csi is None or vol.csi.driver != after.name:
                continue
            if before.storage_capacity and not after.storage_capacity:
                return QueueingHint.Queue
        return QueueingHint.QueueSkip

    # ----------------------------------------------------------------- PreFilter

    def _claims(self, pod: Pod) -> PodVolumeClaims | None:
        """``podHasPVCs`` then ``GetPodVolumeClaims``; None when the pod has no claims.

        Raises:
            _ClaimError: a claim is missing, lost, being deleted or not the pod's.
        """
        volumes = self._volumes()
        listers = self._handle.storage_listers
        found: list[PersistentVolumeClaim] = []
        for vol in pod.volumes:
            if vol.persistent_volume_claim is not None:
                name, ephemeral = vol.persistent_volume_claim, False
            elif vol.ephemeral:
                name, ephemeral = f"{pod.name}-{vol.name}", True
            else:
                continue
            pvc = volumes.get_persistent_volume_claim(pod.namespace, name)
            if pvc is None:
                if ephemeral:
                    raise _ClaimError(
                        "waiting for ephemeral volume controller to create the "
                        f"persistentvolumeclaim {go_quote(name)}"
                    )
                raise _ClaimError(f"persistentvolumeclaim {go_quote(name)} not found")
            if pvc.phase == "Lost":
                raise _ClaimError(
                    f'persistentvolumeclaim "{pvc.name}" bound to non-existent '
                    f'persistentvolume "{pvc.volume_name}"'
                )
            if pvc.deletion_timestamp is not None:
                raise _ClaimError(f'persistentvolumeclaim "{pvc.name}" is being deleted')
            if ephemeral and not pvc.is_controlled_by(pod.uid):
                raise _ClaimError(
                    f"PVC {pvc.namespace}/{pvc.name} was not created for pod "
                    f"{pod.namespace}/{pod.name} (pod is not owner)"
                )
            found.append(pvc)
        if not found:
            return None
        bound: list[PersistentVolumeClaim] = []
        immediate: list[PersistentVolumeClaim] = []
        delay: list[PersistentVolumeClaim] = []
        for pvc in found:
            if pvc.is_fully_bound:
                bound.append(pvc)
            elif _is_delay_binding(pvc, listers) and not pvc.volume_name:
                delay.append(pvc)
            else:  # prebound claims are treated as unbound immediate ones
                immediate.append(pvc)
        by_class = {
            pvc.storage_class: PVIndex(volumes.list_persistent_volumes(pvc.storage_class))
            for pvc in delay
        }
        return PodVolumeClaims(tuple(bound), tuple(immediate), tuple(delay), by_class)

    def pre_filter_reusable(self, pod: Pod) -> bool:
        """A pod without volumes is skipped without reading any claim, after writing a state
        without claims; of that state, Reserve only sets ``all_bound`` (read by PreBind
        alone, after Reserve) to True, the value every attempt's Reserve gives it, so
        attempts may share it (`schedsim.framework.pre_filter_reuse`)."""
        return not pod.volumes

    def schedsim_pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | PreFilterResult | None:
        """PreFilter of upstream VolumeBinding (see the class docstring)."""
        if not pod.volumes:
            state[STATE_KEY] = BindingState(_NO_CLAIMS)  # Reserve then finds nothing to bind
            return _SKIP
        try:
            claims = self._claims(pod)
        except _ClaimError as e:
            return Status(Code.UnschedulableAndUnresolvable, (str(e),), NAME)
        if claims is None:
            state[STATE_KEY] = BindingState(_NO_CLAIMS)
            return _SKIP
        if claims.unbound_immediate:
            return _UNBOUND_IMMEDIATE
        s = BindingState(claims)
        if not claims.unbound_delay_binding and self._bound_without_affinity(claims.bound):
            s.every_node = _ALL_BOUND
        state[STATE_KEY] = s
        eligible = self._eligible_nodes(claims.bound)
        return None if eligible is None else PreFilterResult(eligible)

    def _bound_without_affinity(self, bound: Sequence[PersistentVolumeClaim]) -> bool:
        """Whether `_check_bound_claims` passes on every node: each PV exists and has no
        node affinity (O(claims) once per pod instead of per node)."""
        volumes = self._volumes()
        for pvc in bound:
            pv = volumes.get_persistent_volume(pvc.volume_name)
            if pv is None or pv.node_affinity is not None:
                return False
        return True

    def _eligible_nodes(self, bound: Sequence[PersistentVolumeClaim]) -> frozenset[str] | None:
        """``GetEligibleNodes``: the intersection of the bound PVs' pinned node names; None
        (all nodes) when none is pinned or a PV is missing."""
        volumes = self._volumes()
        eligible: frozenset[str] | None = None
        for pvc in bound:
            pv = volumes.get_persistent_volume(pvc.volume_name)
            if pv is None:
                return None
            names = local_pv_node_names(pv)
            if names:
                eligible = names if eligible is None else eligible & names
        return eligible

    # ----------------------------------------------------------------- Filter

    def schedsim_filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Filter of upstream VolumeBinding (``FindPodVolumes``; see the class docstring)."""
        s = state.get(STATE_KEY)
        if s is None:
            return _NO_STATE
        node = node_info.node
        if node is None:
            return None
        if s.every_node is not None:
            s.pod_volumes_by_node[node.name] = s.every_node
            return None
        try:
            found = self._find_pod_volumes(s.claims, node)
        except _ClaimError as e:
            return Status(Code.Error, (str(e),), NAME)
        if isinstance(found, Status):
            return found
        s.pod_volumes_by_node[node.name] = found
        if found.static_bindings:
            s.has_static_bindings = True
        return None

    def _find_pod_volumes(self, claims: PodVolumeClaims, node: Node) -> PodVolumes | Status:
        """``FindPodVolumes``: the bindings for ``node``, or the rejecting status."""
        bound_ok = unbound_ok = storage_ok = pvs_found = True
        static: tuple[tuple[PersistentVolume, PersistentVolumeClaim], ...] = ()
        dynamic: tuple[PersistentVolumeClaim, ...] = ()
        if claims.bound:
            bound_ok, pvs_found = self._check_bound_claims(claims.bound, node)
        if claims.unbound_delay_binding:
            to_match: list[PersistentVolumeClaim] = []
            to_provision: list[PersistentVolumeClaim] = []
            fast_fail = False
            for pvc in claims.unbound_delay_binding:
                selected = pvc.annotations.get(SELECTED_NODE_ANNOTATION)
                if selected is not None:
                    if selected != node.name:
                        fast_fail = True  # provisioning was started for another node
                        break
                    to_provision.append(pvc)
                else:
                    to_match.append(pvc)
            if fast_fail:
                unbound_ok = False
            else:
                if to_match:
                    unbound_ok, static, left = _find_matching_volumes(
                        to_match, claims.unbound_volumes_delay_binding, node
                    )
                    to_provision.extend(left)
                if to_provision:
                    unbound_ok, storage_ok, dynamic = self._check_volume_provisions(
                        to_provision, node
                    )
        reasons = []
        if not bound_ok:
            reasons.append(ERR_REASON_NODE_CONFLICT)
        if not unbound_ok:
            reasons.append(ERR_REASON_BIND_CONFLICT)
        if not storage_ok:
            reasons.append(ERR_REASON_NOT_ENOUGH_SPACE)
        if not pvs_found:
            reasons.append(ERR_REASON_PV_NOT_EXIST)
        if reasons:
            return _rejection(tuple(reasons))
        return PodVolumes(static, dynamic)

    def _check_bound_claims(
        self, bound: Sequence[PersistentVolumeClaim], node: Node
    ) -> tuple[bool, bool]:
        """``checkBoundClaims``: (node affinity satisfied, every PV found)."""
        volumes = self._volumes()
        for pvc in bound:
            pv = volumes.get_persistent_volume(pvc.volume_name)
            if pv is None:
                return True, False
            if not check_node_affinity(pv, node):
                return False, True
        return True, True

    def _check_volume_provisions(
        self, claims: Sequence[PersistentVolumeClaim], node: Node
    ) -> tuple[bool, bool, tuple[PersistentVolumeClaim, ...]]:
        """``checkVolumeProvisions``: (provisioning possible, enough storage, claims to
        provision).

        Raises:
            _ClaimError: a claim has no class, or its class does not exist (Error upstream).
        """
        listers = self._handle.storage_listers
        out: list[PersistentVolumeClaim] = []
        for pvc in claims:
            class_name = pvc.storage_class
            if not class_name:
                raise _ClaimError(f'no class for claim "{pvc.key}"')
            sc = listers.storage_class(class_name)
            if sc is None:
                raise _ClaimError(f'failed to find storage class "{class_name}"')
            provisioner = sc.provisioner
            if not provisioner or provisioner == NOT_SUPPORTED_PROVISIONER:
                return False, True, ()
            if not sc.allows_topology(node.labels):
                return False, True, ()
            if not _has_enough_capacity(listers, provisioner, pvc, sc, node):
                return True, False, ()
            out.append(pvc)
        return True, True, tuple(out)

    # ----------------------------------------------------------------- Reserve

    def schedsim_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Reserve of upstream VolumeBinding (``AssumePodVolumes``): write the node's static
        bindings (the PV's claimRef) and provisioning choices (the claim's selected-node
        annotation) into the snapshot."""
        s = state.get(STATE_KEY)
        if s is None:
            return _NO_STATE
        found = s.pod_volumes_by_node.get(node_name)
        if found is None:
            s.all_bound = True  # the pod references no PVC
            return None
        volumes = self._volumes()
        if self._all_bound(pod, volumes):
            s.all_bound = True
            return None
        static = []
        for pv, pvc in found.static_bindings:
            new_pv = _bind_volume_to_claim(pv, pvc)
            if new_pv is not pv:
                current = volumes.get_persistent_volume(pv.name)
                if current is None:
                    self._revert(s)
                    return Status(Code.Error, (f'persistentvolume "{pv.name}" not found',), NAME)
                volumes.assume_persistent_volume(new_pv)
                s.assumed.append(current)
            static.append((new_pv, pvc))
        dynamic = []
        for pvc in found.dynamic_provisions:
            current_pvc = volumes.get_persistent_volume_claim(pvc.namespace, pvc.name)
            if current_pvc is None:
                self._revert(s)
                return Status(Code.Error, (f'persistentvolumeclaim "{pvc.name}" not found',), NAME)
            new_pvc = attrs.evolve(
                pvc, annotations={**pvc.annotations, SELECTED_NODE_ANNOTATION: node_name}
            )
            volumes.assume_persistent_volume_claim(new_pvc)
            s.assumed.append(current_pvc)
            dynamic.append(new_pvc)
        s.pod_volumes_by_node[node_name] = PodVolumes(tuple(static), tuple(dynamic))
        s.all_bound = False
        return None

    @staticmethod
    def _all_bound(pod: Pod, volumes: SharedVolumeManager) -> bool:
        """``arePodVolumesBound``: every PVC volume's claim is fully bound now."""
        for vol in pod.volumes:
            if vol.persistent_volume_claim is not None:
                name = vol.persistent_volume_claim
            elif vol.ephemeral:
                name = f"{pod.name}-{vol.name}"
            else:
                continue
            pvc = volumes.get_persistent_volume_claim(pod.namespace, name)
            if pvc is None or not pvc.is_fully_bound:
                return False
        return True

    def _revert(self, s: BindingState) -> None:
        volumes = self._volumes()
        for old in reversed(s.assumed):
            if isinstance(old, PersistentVolume):
                volumes.assume_persistent_volume(old)
            else:
                volumes.assume_persistent_volume_claim(old)
        s.assumed.clear()

    def schedsim_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Unreserve of upstream VolumeBinding (``RevertAssumedPodVolumes``): put back what
        Reserve replaced; idempotent."""
        s = state.get(STATE_KEY)
        if s is not None:
            self._revert(s)

    # ----------------------------------------------------------------- PreBind

    def schedsim_pre_bind_pre_flight(
        self, state: CycleState, pod: Pod, node_name: str
    ) -> Status | None:
        """PreBindPreFlight of upstream VolumeBinding: Skip when everything is bound."""
        s = state.get(STATE_KEY)
        if s is None or s.all_bound:
            return _SKIP
        return None

    def schedsim_pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """PreBind of upstream VolumeBinding (``BindPodVolumes``) followed by what the PV
        controller does with it: each statically bound claim gets ``spec.volumeName``, the
        bind-completed annotation and phase Bound, its PV phase Bound. Claims to provision
        keep their selected node (the provisioner, not simulated, would create their PV)."""
        s = state.get(STATE_KEY)
        if s is None:
            return _NO_STATE
        if s.all_bound:
            return None
        found = s.pod_volumes_by_node.get(node_name)
        if found is None:
            return Status(Code.Error, (f'no pod volumes found for node "{node_name}"',), NAME)
        volumes = self._volumes()
        for pv, pvc in found.static_bindings:
            current = volumes.get_persistent_volume_claim(pvc.namespace, pvc.name)
            if current is None:
                return Status(Code.Error, (f'persistentvolumeclaim "{pvc.name}" not found',), NAME)
            annotations = {**current.annotations, BIND_COMPLETED_ANNOTATION: "yes"}
            if BOUND_BY_CONTROLLER_ANNOTATION in pv.annotations:
                annotations[BOUND_BY_CONTROLLER_ANNOTATION] = "yes"
            volumes.assume_persistent_volume_claim(
                attrs.evolve(current, volume_name=pv.name, annotations=annotations, phase="Bound")
            )
            volumes.assume_persistent_volume(attrs.evolve(pv, phase="Bound"))
        s.assumed.clear()  # bound: Unreserve no longer undoes it (the API writes are done)
        return None


def _rejection(reasons: tuple[str, ...]) -> Status:
    cached = _REJECTIONS.get(reasons)
    if cached is None:
        cached = _REJECTIONS[reasons] = Status(Code.UnschedulableAndUnresolvable, reasons, NAME)
    return cached


_REJECTIONS: dict[tuple[str, ...], Status] = {}


def _is_delay_binding(pvc: PersistentVolumeClaim, listers: DelegatingStorageListers) -> bool:
    """``IsDelayBindingMode``: the claim's class exists and is WaitForFirstConsumer (no class
    or an unknown class: Immediate)."""
    class_name = pvc.storage_class
    if not class_name:
        return False
    sc = listers.storage_class(class_name)
    return sc is not None and sc.volume_binding_mode == "WaitForFirstConsumer"


def _find_matching_volumes(
    claims: Sequence[PersistentVolumeClaim],
    pvs_by_class: Mapping[str, PVIndex],
    node: Node,
) -> tuple[
    bool,
    tuple[tuple[PersistentVolume, PersistentVolumeClaim], ...],
    tuple[PersistentVolumeClaim, ...],
]:
    """``findMatchingVolumes``: claims in increasing request size each take the smallest
    matching PV not chosen yet. Returns (all matched, bindings, claims left unmatched)."""
    ordered = sorted(claims, key=lambda c: c.requested_storage or Fraction(0))
    chosen: set[str] = set()
    bindings: list[tuple[PersistentVolume, PersistentVolumeClaim]] = []
    left: list[PersistentVolumeClaim] = []
    for pvc in ordered:
        index = pvs_by_class.get(pvc.storage_class)
        pvs = index.candidates(pvc, node) if index is not None else ()
        pv = find_matching_volume(pvc, pvs, node, chosen)
        if pv is None:
            left.append(pvc)
            continue
        chosen.add(pv.name)
        bindings.append((pv, pvc))
    return not left, tuple(bindings), tuple(left)


def _bind_volume_to_claim(pv: PersistentVolume, pvc: PersistentVolumeClaim) -> PersistentVolume:
    """``GetBindVolumeToClaim``: the PV with the claim in its claimRef and, when the
    scheduler (not the user) made the binding, the bound-by-controller annotation; ``pv``
    itself when nothing changes."""
    ref = pv.claim_ref
    set_by_controller = not _is_bound_to_claim(pv, pvc)
    changes: dict[str, Any] = {}
    if ref is None or ref.name != pvc.name or ref.namespace != pvc.namespace or ref.uid != pvc.uid:
        changes["claim_ref"] = ClaimReference(pvc.namespace, pvc.name, pvc.uid)
    if set_by_controller and BOUND_BY_CONTROLLER_ANNOTATION not in pv.annotations:
        changes["annotations"] = {**pv.annotations, BOUND_BY_CONTROLLER_ANNOTATION: "yes"}
    return attrs.evolve(pv, **changes) if changes else pv


def _has_enough_capacity(
    listers: DelegatingStorageListers,
    provisioner: str,
    pvc: PersistentVolumeClaim,
    sc: StorageClass,
    node: Node,
) -> bool:
    """``hasEnoughCapacity``: True without a storage request, or when the provisioner is not
    a CSIDriver with ``storageCapacity: true``; else some CSIStorageCapacity of the class,
    reachable from the node (its ``nodeTopology`` selects the node's labels), has a
    ``maximumVolumeSize`` (else ``capacity``) of at least the request."""
    if pvc.requested_storage is None:
        return True
    driver = listers.csi_driver(provisioner)
    if driver is None or not driver.storage_capacity:
        return True
    size = _bytes(pvc.requested_storage)
    for cap in listers.csi_storage_capacities:
        if cap.storage_class_name != sc.name:
            continue
        limit = cap.maximum_volume_size if cap.maximum_volume_size is not None else cap.capacity
        if limit is None or _bytes(limit) < size:
            continue
        if cap.node_topology is not None and cap.node_topology.matches(node.labels):
            return True
    return False
