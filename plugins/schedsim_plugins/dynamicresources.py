"""DynamicResources: mirrors kube-scheduler 1.34's ``DynamicResources`` plugin
(pkg/scheduler/framework/plugins/dynamicresources) on a CA-style DRA snapshot.

Extension points: PreEnqueue and PreFilter resolve the pod's ResourceClaims; PreFilter also
validates the claims to allocate and builds one structured allocator for the attempt; Filter
allocates per node (results kept in the cycle state); PostFilter deallocates a claim that
blocks the pod; Reserve writes the chosen node's allocation into the snapshot (CA's claim
tracker: nothing is "in flight"); Unreserve undoes that; PreBind records what kube-scheduler
writes to the API server: the delete-protection finalizer, the allocation and the pod in
``status.reservedFor``.

Differences from upstream, all deliberate:

* ``filterTimeout`` is enforced on a virtual clock, not the wall clock: a simulation must
  give the same result on every machine, so each device the allocator tries costs
  `MICROSECONDS_PER_DEVICE_TRIED` of the timeout (10s = 1,000,000 devices tried). A node
  whose search runs out is rejected with upstream's "timed out trying to allocate devices".
  The allocator also skips branches that cannot change its answer (`schedsim.dra.Allocator`),
  so inputs that take upstream seconds usually finish long before the timeout here.
* Filter's allocation for a node is reused for later pods whose claims to allocate have
  equal specs while the node's DRA state holds (`schedsim.dra.filter_cache`), and the
  scheduler's ResultCache shares Filter statuses between such pods on nodes whose NodeInfo
  and pools did not change (`filter_reuse_key`, `filter_reuse_refresh`); Reserve then
  allocates on the chosen node if Filter did not run there. Same answers as running the
  allocator every time (tests/dra/test_filter_cache.py); upstream runs it for every node.
* PostFilter picks the first deallocatable claim in pod order (upstream picks at random).
* PreBind cannot wait for binding conditions: a device whose conditions are not all True
  yet fails binding with upstream's timeout message at once.
* Extended resources backed by DRA (``DRAExtendedResource``, alpha): the special claim gets
  a name derived from the pod (see `schedsim.dra.extended`) and is added to the snapshot at
  Reserve (upstream creates it at PreBind), so that the devices count as used for the pods
  scheduled after it; PreBind records ``status.extendedResourceClaimStatus`` in the cycle
  state (`STATE_KEY`), as the pod object is not modified. A special claim that is not
  allocated any more (its pod was unscheduled) is allocated afresh instead of failing with
  "cannot schedule extended resource claim" until PostFilter deletes it.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from fractions import Fraction
from typing import Any, ClassVar, Final, Protocol

import attrs

from schedsim.api.core import Node, OwnerReference, Pod
from schedsim.api.core.nodeaffinity import node_matches
from schedsim.api.resource import (
    AllocationResult,
    Condition,
    Device,
    DeviceClass,
    DeviceRequestAllocationResult,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimSpec,
    ResourceClaimStatus,
    ResourceSlice,
)
from schedsim.dra.allocation_output import share_id
from schedsim.dra.allocator import Allocator
from schedsim.dra.capacity import CapacityCache
from schedsim.dra.cel import CelCache
from schedsim.dra.claims import claim_is_for_pod, claim_reserved_for_pod
from schedsim.dra.exhausted import ExhaustedPools
from schedsim.dra.extended import (
    EXTENDED_RESOURCE_CLAIM_ANNOTATION,
    device_class_mapping,
    device_requests,
    extended_resource_claim_name,
    extended_resource_requests,
    is_dra_extended_resource_name,
    request_mappings,
)
from schedsim.dra.filter_cache import FITS, MISS, AllocationCache
from schedsim.dra.pools import PoolCache
from schedsim.dra.tracker import AllocatedStateTracker
from schedsim.dra.types import AllocationError, AllocationTimeout, DeviceId, DraFeatures
from schedsim.framework import Code, CycleState, Handle, NodeInfo, StateKey, Status
from schedsim.framework.devices import DeviceCandidate, NodeDevice, node_devices
from schedsim.framework.dra_manager import SharedDraManager
from schedsim.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
    as_update,
)

__all__ = [
    "DELETE_PROTECTION_FINALIZER",
    "MICROSECONDS_PER_DEVICE_TRIED",
    "STATE_KEY",
    "DynamicResources",
    "resolve_pod_claims",
]

NAME = "DynamicResources"

DELETE_PROTECTION_FINALIZER = "resource.kubernetes.io/delete-protection"
"""The finalizer the plugin adds to a claim it allocates (``resourceapi.Finalizer``)."""

MICROSECONDS_PER_DEVICE_TRIED = 10
"""The virtual cost of one device tried by the allocator, against ``filterTimeout``: the
default 10s allows 1,000,000 devices tried, about 10 s of CPU for schedsim's allocator on a
2-core build machine (~100,000 devices tried per second, measured)."""

BINDING_TIMEOUT = timedelta(seconds=600)
"""How long a device may wait for its binding conditions (``BindingTimeoutDefaultSeconds``)."""

_SKIP = Status(Code.Skip, (), NAME)
_REUSE_TOKEN = NAME  # FilterTable.refreshed key: the tracker epoch last refreshed


def _unresolvable(message: str) -> Status:
    # statusUnschedulable() upstream: always UnschedulableAndUnresolvable.
    return Status(Code.UnschedulableAndUnresolvable, (message,), NAME)


def _error(message: str) -> Status:
    return Status(Code.Error, (message,), NAME)


_CANNOT_ALLOCATE = _unresolvable("cannot allocate all claims")
_TIMED_OUT = _unresolvable("timed out trying to allocate devices")
_DEALLOCATED = Status(Code.Unschedulable, ("deallocation of ResourceClaim completed",), NAME)
_NOT_AVAILABLE = _unresolvable("resourceclaim not available on the node")
_STALE_EXTENDED_CLAIM = _unresolvable("cannot schedule extended resource claim")
_CANNOT_FIT = _unresolvable("cannot fit resource")


class FilterTable(Protocol):
    """What `DynamicResources.filter_reuse_refresh` uses of the scheduler's FilterTable
    (`schedsim.snapshot.plugin_runner.FilterTable`; plugins do not import the snapshot)."""

    objs: list[Any]
    refreshed: dict[str, object]

    def mark_stale(self, i: int) -> None: ...

    def resize(self, n: int) -> None: ...


class _ResolveError(Exception):
    """A claim of the pod cannot be used; ``status`` says why."""

    def __init__(self, status: Status) -> None:
        super().__init__(status.message)
        self.status = status


def resolve_pod_claims(pod: Pod, manager: SharedDraManager) -> list[ResourceClaim]:
    """The claims ``pod`` uses, in ``spec.resourceClaims`` order (``foreachPodResourceClaim``).

    A template reference takes its claim name from ``status.resourceClaimStatuses``; an entry
    without a name means no claim is needed. A claim referenced twice is returned once.

    Raises:
        _ResolveError: with upstream's message: ``pod "<ns>/<pod>": ResourceClaim not created
            yet``, ``ResourceClaim <ns>/<c> was not created for pod <ns>/<pod> (pod is not
            owner)``, ``pod "<ns>/<pod>", spec.resourceClaim "<name>": none of the supported
            fields are set``, ``resourceclaim.resource.k8s.io "<c>" not found``,
            ``resourceclaim "<c>" is being deleted``.
    """
    out: list[ResourceClaim] = []
    seen: set[str] = set()
    for ref in pod.resource_claims:
        from_template = False
        if ref.resource_claim_name is not None:
            name: str | None = ref.resource_claim_name
        elif ref.resource_claim_template_name is not None:
            from_template = True
            if ref.name not in pod.resource_claim_statuses:
                raise _ResolveError(
                    _unresolvable(f'pod "{pod.key}": ResourceClaim not created yet')
                )
            name = pod.resource_claim_statuses[ref.name]
        else:
            raise _ResolveError(
                _unresolvable(
                    f'pod "{pod.key}", spec.resourceClaim "{ref.name}": none of the supported '
                    f"fields are set"
                )
            )
        if name is None:
            continue  # the claim controller decided no claim is needed
        if name in seen:
            continue
        claim = manager.get_resource_claim(pod.namespace, name)
        if claim is None:
            raise _ResolveError(_unresolvable(f'resourceclaim.resource.k8s.io "{name}" not found'))
        if claim.deletion_timestamp is not None:
            raise _ResolveError(_unresolvable(f'resourceclaim "{name}" is being deleted'))
        if from_template and not claim_is_for_pod(pod, claim):
            raise _ResolveError(
                _unresolvable(
                    f"ResourceClaim {claim.key} was not created for pod {pod.key} "
                    f"(pod is not owner)"
                )
            )
        seen.add(name)
        out.append(claim)
    return out


@attrs.define
class _State:
    """What PreFilter found, shared by Filter, PostFilter, Reserve and PreBind."""

    claims: list[ResourceClaim]
    # Indices into ``claims`` of the claims Filter must allocate, in pod order.
    to_allocate: list[int]
    allocator: Allocator | None
    # The claim specs' key in the plugin's AllocationCache (None: not cached for this pod).
    cache_key: int | None = None
    # All the pod's claims, when every one is to be allocated and the AllocationCache is
    # used for them (Filter's fast path: `AllocationCache.get_kept`); else None.
    cached_claims: list[ResourceClaim] | None = None
    # node name -> one AllocationResult per claim in ``to_allocate``.
    node_allocations: dict[str, list[AllocationResult]] = attrs.field(factory=dict)
    # Indices of allocated claims found unavailable on some node.
    unavailable: set[int] = attrs.field(factory=set)
    # claim UID -> the claim before Reserve wrote its allocation (for Unreserve).
    reserved: dict[str, ResourceClaim] = attrs.field(factory=dict)
    # Indices of claims whose allocation Reserve wrote for this pod.
    allocated_here: set[int] = attrs.field(factory=set)
    # Index in ``claims`` of the special claim for DRA-backed extended resources.
    extended: int | None = None
    # Extended resource name -> DeviceClass name (DRAExtendedResource).
    extended_mapping: dict[str, str] = attrs.field(factory=dict)
    # The pod's non-zero DRA-backed extended resource requests.
    extended_requests: dict[str, Fraction] = attrs.field(factory=dict)
    # The special claim as the snapshot held it before this attempt (None: it did not exist).
    extended_original: ResourceClaim | None = None
    # node name -> the special claim with that node's requests (None: nothing via DRA).
    node_extended: dict[str, ResourceClaim | None] = attrs.field(factory=dict)
    # Set by PreBind: (claim name, [(container, resource, request)]), what upstream writes to
    # pod.status.extendedResourceClaimStatus.
    extended_status: tuple[str, list[tuple[str, str, str]]] | None = None


STATE_KEY: StateKey[_State] = StateKey("PreFilter" + NAME)
"""Where PreFilter leaves the pod's claims and the allocator (``stateKey`` upstream)."""

STATE_NOT_FOUND: Final = "not found"
"""``fwk.ErrNotFound``'s text: what PostFilter returns, as an Error, for a pod whose PreFilter
did not run."""

_DURATION = re.compile(r"^(?:(\d+(?:\.\d+)?)(h|m|s|ms|us|µs|ns))+$")
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)")


def _parse_duration(value: Any, field: str) -> int:
    """A Go ``metav1.Duration`` (``"10s"``, ``"1m30s"``, ``"1ns"``) in nanoseconds, Go's
    resolution (a timedelta would round ``1ns`` to 0); raises ValueError."""
    if not isinstance(value, str) or not _DURATION.match(value):
        raise ValueError(f"{field}: expected a duration such as '10s', got {value!r}")
    unit = {"h": 3600e9, "m": 60e9, "s": 1e9, "ms": 1e6, "us": 1e3, "µs": 1e3, "ns": 1.0}
    return round(sum(float(n) * unit[u] for n, u in _DURATION_PART.findall(value)))


class DynamicResources:
    """Allocates ResourceClaims' devices during scheduling (DynamicResources, 1.34).

    Args:
        args: ``DynamicResourcesArgs``: ``filterTimeout`` (a duration, default 10s; 0
            disables it; enforced as a budget of devices tried while the
            DRASchedulerFilterTimeout gate is on, see the module docstring).
        handle: the framework handle; its ``dra_manager`` (the snapshot) is read during hook
            calls.

    Raises:
        ValueError: unknown args or a bad ``filterTimeout``.

    All rejections are ``UnschedulableAndUnresolvable`` (upstream's ``statusUnschedulable``);
    allocator errors (invalid CEL, missing class, a disabled feature used) are ``Error``.
    """

    name: ClassVar[str] = NAME

    use_allocation_cache: ClassVar[bool] = True
    """Reuse Filter's allocation for later pods with equal claims while the node's DRA state
    holds (`schedsim.dra.filter_cache`); False runs the allocator on every call, as
    kube-scheduler does (the reference of the differential test)."""

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        unknown = sorted(set(args) - {"apiVersion", "kind", "filterTimeout"})
        if unknown:
            raise ValueError(f"unknown DynamicResourcesArgs field(s): {', '.join(unknown)}")
        timeout_ns = _parse_duration(args.get("filterTimeout", "10s"), "filterTimeout")
        if timeout_ns < 0:
            raise ValueError("filterTimeout: must not be negative")
        self.filter_timeout = timedelta(microseconds=timeout_ns / 1000)
        self._handle = handle
        gates = handle.feature_gates
        self.enabled = gates.enabled("DynamicResourceAllocation")
        self.features = DraFeatures.from_gates(gates)
        self.cel_cache = CelCache()
        self.capacity_cache = CapacityCache()
        self.pool_cache = PoolCache()
        self.allocated = AllocatedStateTracker(self.features)
        self.allocation_cache = AllocationCache(self.allocated)
        self.exhausted = ExhaustedPools(self.allocated, self.features)
        # the slices and classes last listed, with the snapshot stamps they belong to
        self._slices_stamp: int | None = None
        self._slices: tuple[ResourceSlice, ...] = ()
        self._classes_stamp: int | None = None
        self._classes: tuple[DeviceClass, ...] = ()
        self._class_map: dict[str, DeviceClass] = {}
        # Any positive timeout limits the search, even one shorter than a device's cost
        # (upstream's 1ns times out at once); 0 turns the limit off.
        self.max_steps: int | None = (
            timeout_ns // (MICROSECONDS_PER_DEVICE_TRIED * 1000)
            if timeout_ns > 0 and gates.enabled("DRASchedulerFilterTimeout")
            else None
        )

    def _manager(self) -> SharedDraManager:
        manager = self._handle.dra_manager
        if manager is None:
            raise RuntimeError("DynamicResources needs a snapshot with DRA state (dra_manager)")
        return manager

    # ------------------------------------------------------------------ queueing hints

    def events_to_register(self) -> tuple[ClusterEventWithHint, ...]:
        """``EventsToRegister`` (dynamicresources.go, 1.34, SchedulerQueueingHints on; none
        with DynamicResourceAllocation off): Node Add|UpdateNodeLabel, ResourceClaim
        Add|Update with `is_schedulable_after_claim_change`, the pod's generated-claim
        update with `is_schedulable_after_pod_change`, DeviceClass and ResourceSlice
        Add|Update without a hint.

        Upstream registers ``Pod UpdatePodGeneratedResourceClaim``; only a pending pod gets
        claims generated, so schedsim registers it for ``UnscheduledPod``. schedsim also
        registers ``AssignedPod Delete``: a simulation reports the deallocation of a leaving
        pod's claims as that pod's delete event (upstream sees the claim update)."""
        if not self.enabled:
            return ()
        r, a = EventResource, ActionType
        return (
            ClusterEventWithHint(ClusterEvent(r.Node, a.Add | a.UpdateNodeLabel)),
            ClusterEventWithHint(
                ClusterEvent(r.ResourceClaim, a.Add | a.Update),
                self.is_schedulable_after_claim_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(r.UnscheduledPod, a.UpdatePodGeneratedResourceClaim),
                self.is_schedulable_after_pod_change,
            ),
            ClusterEventWithHint(ClusterEvent(r.DeviceClass, a.Add | a.Update)),
            ClusterEventWithHint(ClusterEvent(r.ResourceSlice, a.Add | a.Update)),
            ClusterEventWithHint(ClusterEvent(r.AssignedPod, a.Delete)),
        )

    def is_schedulable_after_claim_change(self, pod: Pod, old: object, new: object) -> QueueingHint:
        """``isSchedulableAfterClaimChange``: skip while the pod's claims cannot all be
        resolved (`resolve_pod_claims` fails: the pod is not schedulable anyway); queue when
        a claim was deallocated (its devices are free for any pod); otherwise queue only a
        claim of the pod (same UID) that was added or whose status changed (a finalizer or
        other metadata change is skipped); an object of the wrong type: Queue."""
        typed = as_update(ResourceClaim, old, new)
        if typed is None:
            return QueueingHint.Queue
        original, modified = typed
        try:
            claims = resolve_pod_claims(pod, self._manager())
        except _ResolveError:
            return QueueingHint.QueueSkip
        if (
            original is not None
            and original.status.allocation is not None
            and modified.status.allocation is None
        ):
            return QueueingHint.Queue
        if not any(c.uid == modified.uid for c in claims):
            return QueueingHint.QueueSkip
        if original is None:
            return QueueingHint.Queue
        if original.status == modified.status:
            return QueueingHint.QueueSkip
        return QueueingHint.Queue

    def is_schedulable_after_pod_change(self, pod: Pod, old: object, new: object) -> QueueingHint:
        """``isSchedulableAfterPodChange``: queue when the updated pod is the pending pod
        (same UID) and all its claims now resolve (the claim controller wrote the generated
        names into its status and the claims exist); an object of the wrong type: Queue."""
        typed = as_update(Pod, None, new)
        if typed is None:
            return QueueingHint.Queue
        modified = typed[1]
        if modified.uid != pod.uid:
            return QueueingHint.QueueSkip
        try:
            resolve_pod_claims(modified, self._manager())
        except _ResolveError:
            return QueueingHint.QueueSkip
        return QueueingHint.Queue

    # ------------------------------------------------------------------ PreEnqueue

    def schedsim_pre_enqueue(self, pod: Pod) -> Status | None:
        """Keep the pod out of the queue while a claim is missing, being deleted or not
        owned by the pod (``PreEnqueue``)."""
        if not self.enabled or not pod.resource_claims:
            return None
        try:
            resolve_pod_claims(pod, self._manager())
        except _ResolveError as e:
            return e.status
        return None

    # ------------------------------------------------------------------ PreFilter

    def pre_filter_reusable(self, pod: Pod) -> bool:
        """A pod without claims (and, with DRAExtendedResource, without extended resource
        requests) is skipped after writing an empty state, which Reserve and Unreserve leave
        as it is; nothing of the cluster is read (`schedsim.framework.pre_filter_reuse`)."""
        if not self.enabled:
            return True
        if pod.resource_claims:
            return False
        return not (self.features.extended_resource and extended_resource_requests(pod))

    def schedsim_pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None:
        """Resolve and validate the pod's claims; build the allocator if any claim needs
        allocation (``PreFilter``). A pod without claims is skipped."""
        del nodes
        if not self.enabled:
            return _SKIP
        # An empty state first, as upstream (``state.Write(stateKey, &stateData{})``): a pod
        # that is skipped or rejected here has one, so PostFilter says "no new claims to
        # deallocate"; only a pod whose PreFilter never ran has none.
        state[STATE_KEY] = _State([], [], None)
        manager = self._manager()
        special, mapping, requests = self._extended_claim(pod, manager)
        if not pod.resource_claims and special is None:
            return _SKIP
        try:
            claims = resolve_pod_claims(pod, manager)
        except _ResolveError as e:
            return e.status
        if not claims and special is None:
            return _SKIP
        extended = None
        if special is not None:
            extended = len(claims)
            claims.append(special)
        to_allocate: list[int] = []
        for i, claim in enumerate(claims):
            if claim.status.allocation is not None or i == extended:
                continue
            to_allocate.append(i)
            st = self._validate_requests(claim, manager)
            if st is not None:
                return st
        allocator = None
        cache_key = None
        if to_allocate or extended is not None:
            in_use = self.allocated.sync(manager)
            classes, class_map = self._device_classes(manager)
            slices = self._resource_slices(manager)
            self.pool_cache.bind(slices, self.features)
            live = (
                self.exhausted.live
                if self.use_allocation_cache
                and self.exhausted.begin(self.pool_cache.generation, in_use.devices)
                else None
            )
            allocator = Allocator(
                self.features,
                in_use,
                class_map,
                slices,
                self.cel_cache,
                max_steps=self.max_steps,
                pool_cache=self.pool_cache,
                live_pools=live,
                capacity_cache=self.capacity_cache,
            )
            if (
                self.use_allocation_cache
                and extended is None
                and self.allocation_cache.begin(self.pool_cache.generation, classes)
            ):
                cache_key = self.allocation_cache.spec_key([claims[i] for i in to_allocate])
        state[STATE_KEY] = _State(
            claims,
            to_allocate,
            allocator,
            cache_key=cache_key,
            extended=extended,
            extended_original=(
                None if special is None else manager.get_resource_claim(pod.namespace, special.name)
            ),
            extended_mapping=mapping,
            extended_requests=requests,
            cached_claims=(
                [claims[i] for i in to_allocate]
                if cache_key is not None and extended is None and len(to_allocate) == len(claims)
                else None
            ),
        )
        return None

    def _resource_slices(self, manager: SharedDraManager) -> tuple[ResourceSlice, ...]:
        """Every ResourceSlice, listed again only when the snapshot's `slices_stamp` moved
        (one tuple object while they stay the same: `PoolCache.bind` then costs O(1))."""
        stamp = manager.slices_stamp()
        if stamp != self._slices_stamp:
            self._slices = tuple(manager.list_resource_slices())
            self._slices_stamp = stamp
        return self._slices

    def _device_classes(
        self, manager: SharedDraManager
    ) -> tuple[tuple[DeviceClass, ...], dict[str, DeviceClass]]:
        """Every DeviceClass and the classes by name, listed again only when the snapshot's
        `device_classes_stamp` moved."""
        stamp = manager.device_classes_stamp()
        if stamp != self._classes_stamp:
            self._classes = tuple(manager.list_device_classes())
            self._class_map = {c.name: c for c in self._classes}
            self._classes_stamp = stamp
        return self._classes, self._class_map

    def _extended_claim(
        self, pod: Pod, manager: SharedDraManager
    ) -> tuple[ResourceClaim | None, dict[str, str], dict[str, Fraction]]:
        """The special claim for the pod's DRA-backed extended resources: the one left from
        an earlier attempt, or a new one without requests (``preFilterExtendedResources``);
        None when the feature is off or no requested resource maps to a DeviceClass."""
        if not self.features.extended_resource:
            return None, {}, {}
        requests = extended_resource_requests(pod)
        if not requests:
            return None, {}, {}
        mapping = device_class_mapping(manager.list_device_classes())
        if not any(name in mapping for name in requests):
            return None, {}, {}
        name = extended_resource_claim_name(pod)
        existing = _existing_extended_claim(pod, name, manager)
        if existing is not None:
            if existing.status.allocation is None:
                # Deallocated when the pod was unscheduled (a simulation moving pods):
                # allocate it afresh rather than fail until PostFilter deletes it.
                return attrs.evolve(existing, spec=ResourceClaimSpec()), mapping, requests
            return existing, mapping, requests
        claim = ResourceClaim(
            name=name,
            namespace=pod.namespace,
            uid=str(uuid.uuid5(uuid.NAMESPACE_URL, f"schedsim:extended-resources:{pod.uid}")),
            generate_name=f"{pod.name}-extended-resources-",
            annotations={EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"},
            owner_references=(
                OwnerReference(
                    api_version="v1", kind="Pod", name=pod.name, uid=pod.uid, controller=True
                ),
            ),
        )
        return claim, mapping, requests

    def _validate_requests(self, claim: ResourceClaim, manager: SharedDraManager) -> Status | None:
        for request in claim.spec.requests:
            if request.exactly is not None:
                st = self._validate_class(request.name, request.exactly.device_class_name, manager)
            elif request.first_available:
                if not self.features.prioritized_list:
                    return _unresolvable(
                        f"resource claim {claim.key}, request {request.name}: has subrequests, "
                        f"but the DRAPrioritizedList feature is disabled"
                    )
                st = None
                for sub in request.first_available:
                    st = self._validate_class(
                        f"{request.name}/{sub.name}", sub.device_class_name, manager
                    )
                    if st is not None:
                        break
            else:
                return _unresolvable(
                    f"resource claim {claim.key}, request {request.name}: unknown request type"
                )
            if st is not None:
                return st
        return None

    @staticmethod
    def _validate_class(request: str, class_name: str, manager: SharedDraManager) -> Status | None:
        if not class_name:
            return _error(f"request {request}: unsupported request type")
        if manager.get_device_class(class_name) is None:
            return _unresolvable(f"request {request}: device class {class_name} does not exist")
        return None

    # ------------------------------------------------------------------ Filter

    def schedsim_filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Check allocated claims against the node and allocate the others there
        (``Filter``); the node's results are kept for Reserve."""
        s = state.get(STATE_KEY)
        if s is None:
            return None
        node = node_info.node
        assert node is not None
        cached = s.cached_claims
        if cached is not None:
            # no claim allocated, no extended-resource claim: the answer kept for this node
            # if it still holds (`_allocate`'s first look-up, without the pool gathering)
            assert s.cache_key is not None
            kept = self.allocation_cache.get_kept(s.cache_key, node)
            if kept is FITS:
                return None
            if kept is None:
                return _CANNOT_ALLOCATE
            if kept is not MISS:
                assert isinstance(kept, list)
                if len(kept) != len(cached):
                    return _CANNOT_ALLOCATE
                s.node_allocations[node.name] = kept
                return None
        unavailable: list[int] = []
        for i, claim in enumerate(s.claims):
            allocation = claim.status.allocation
            if allocation is None:
                continue
            if (
                allocation.node_selector is not None
                and not node_matches(allocation.node_selector, node.labels, node.name)
            ) or self._binding_failed(claim):
                unavailable.append(i)
        node_claim = None
        if s.extended is not None:
            st, node_claim = self._filter_extended(s, pod, node_info)
            if st is not None:
                return st
            s.node_extended[node.name] = node_claim
        if s.allocator is not None and (s.to_allocate or node_claim is not None):
            claims = [s.claims[i] for i in s.to_allocate]
            if node_claim is not None:
                claims.append(node_claim)
            results = self._allocate(s, node, claims)
            if isinstance(results, Status):
                return results
            if results is FITS:
                pass  # a look-alike node's verdict: Reserve allocates on the chosen node
            elif not isinstance(results, list) or len(results) != len(claims):
                return _CANNOT_ALLOCATE
            else:
                s.node_allocations[node.name] = results
        if unavailable:
            # Remembered for PostFilter only when the node fails for this reason, as upstream
            # records them after the extended-resource check and the allocation.
            s.unavailable.update(unavailable)
            return _NOT_AVAILABLE
        return None

    # ------------------------------------------------------------------ result reuse

    def filter_reuse_key(self, state: CycleState) -> object | None:
        """What the scheduler's `ResultCache` adds to the pod's class so that Filter
        statuses of pods with equal claims are shared: the claim specs' key and the
        AllocationCache's generation; None (no sharing) when a claim is allocated already
        (Filter then checks it against the node and records it for PostFilter), with the
        extended-resource claim, or when the AllocationCache is not used for the pod."""
        s = state.get(STATE_KEY)
        if s is None or s.cache_key is None or s.extended is not None:
            return None
        if len(s.to_allocate) != len(s.claims):
            return None
        return (NAME, s.cache_key, self.allocation_cache.generation)

    def filter_reuse_refresh(
        self, state: CycleState, table: FilterTable, names: Mapping[str, int]
    ) -> bool:
        """Mark stale the positions of ``table`` (``names``: node name -> position) whose
        nodes see a pool whose devices in use changed since the table was last refreshed.
        When such a pool is not local to one node (or the journal does not reach back that
        far) every node may differ: the table is forgotten and False returned (this pod
        walks the nodes as kube-scheduler does, as far as it needs, instead of refiltering
        the whole table)."""
        del state
        epoch = self.allocated.epoch
        assert epoch is not None
        since = table.refreshed.get(_REUSE_TOKEN)
        if since is None:
            if table.objs:  # filled before the token was kept: nothing is known
                table.resize(len(table.objs))
        elif since != epoch:
            assert isinstance(since, int)
            nodes = self._nodes_changed_since(since)
            if nodes is None:
                # every node may differ: forget the table and let this pod walk as
                # kube-scheduler does (only the nodes it needs, not the whole table)
                table.resize(len(table.objs))
                table.refreshed[_REUSE_TOKEN] = epoch
                return False
            # mark_stale, not just a stale generation: the walk that follows the store's
            # node journal re-checks only the nodes it names and the marked ones, and these
            # nodes' NodeInfos need not have changed (a claim deallocated by PostFilter)
            for name in nodes:
                i = names.get(name)
                if i is not None:
                    table.mark_stale(i)
        table.refreshed[_REUSE_TOKEN] = epoch
        return True

    def _nodes_changed_since(self, epoch: int) -> set[str] | None:
        """The nodes that see a pool whose devices in use changed after ``epoch``; None
        when that may be any node."""
        changed = self.allocated.pools_changed_since(epoch)
        if changed is None:
            return None
        nodes: set[str] = set()
        for pool in set(changed):
            node = self.pool_cache.pool_node(pool)
            if node is None:
                return None
            if node:
                nodes.add(node)
        return nodes

    def _allocate(
        self, s: _State, node: Node, claims: list[ResourceClaim], need_results: bool = False
    ) -> list[AllocationResult] | Status | object | None:
        """The allocator's answer for ``claims`` on ``node`` (an Error or timeout Status on
        failure), from the AllocationCache when an equal pod's answer still holds there;
        without ``need_results`` it may be `FITS` (the claims fit, as on a look-alike node
        in the same DRA state: `AllocationCache.look_alike`; no allocation computed)."""
        allocator = s.allocator
        assert allocator is not None
        key = s.cache_key
        if key is None:
            return self._run_allocator(allocator, node, claims)
        cache = self.allocation_cache
        pools = self.pool_cache.pools(node)
        independent = self.pool_cache.node_independent(pools)
        kept = cache.get(key, node, pools, independent, need_results)
        if kept is not MISS:
            return kept
        name = (
            None
            if independent
            else cache.look_alike(
                key, node, pools, allocator.allocated, allocator.shared_in_use, allocator.max_steps
            )
        )
        if name is not None:
            fits = cache.verdict(name)
            if fits is False or (fits and not need_results):
                kept = FITS if fits else None
                cache.put(key, node, pools, kept, independent)
                return kept
        results = self._run_allocator(allocator, node, claims)
        if not isinstance(results, Status):
            cache.put(key, node, pools, results, independent)
            if name is not None:
                cache.put_verdict(name, results is not None)
        return results

    @staticmethod
    def _run_allocator(
        allocator: Allocator, node: Node, claims: list[ResourceClaim]
    ) -> list[AllocationResult] | Status | None:
        try:
            return allocator.allocate(node, claims)
        except AllocationError as e:
            return _error(str(e))
        except AllocationTimeout:
            return _TIMED_OUT

    def _allocation_for(self, s: _State, node_name: str) -> list[AllocationResult] | None:
        try:
            node = self._handle.shared_lister.node_infos().get(node_name).node
        except LookupError:
            return None
        if node is None:
            return None
        out = self._allocate(s, node, [s.claims[i] for i in s.to_allocate], need_results=True)
        if not isinstance(out, list):
            return None
        s.node_allocations[node_name] = out
        return out

    def _filter_extended(
        self, s: _State, pod: Pod, node_info: NodeInfo
    ) -> tuple[Status | None, ResourceClaim | None]:
        """Which extended resources this node gives through its device plugins and which
        through DRA; the special claim with the DRA ones as requests, or None when the node
        needs none of them (``filterExtendedResources``)."""
        assert s.extended is not None
        special = s.claims[s.extended]
        if special.spec.requests:  # left from an earlier attempt: PostFilter deletes it
            return _STALE_EXTENDED_CLAIM, None
        allocatable = node_info.allocatable.scalar_resources
        via_dra: dict[str, Fraction] = {}
        needs_dra = False
        for name, q in s.extended_requests.items():
            if not is_dra_extended_resource_name(name):
                continue
            if name in s.extended_mapping:
                if allocatable.get(name, 0) > 0:
                    via_dra[name] = Fraction(0)  # a device plugin provides it
                else:
                    via_dra[name] = q
                    needs_dra = True
            elif name not in allocatable:
                return _CANNOT_FIT, None
        if len(s.claims) == 1 and not needs_dra:
            return None, None
        requests = device_requests(pod, via_dra, s.extended_mapping)
        return None, attrs.evolve(special, spec=ResourceClaimSpec(requests=requests))

    def _binding_failed(self, claim: ResourceClaim) -> bool:
        """With binding conditions on: a device's binding failed, or it has not become ready
        within `BINDING_TIMEOUT` of the allocation (``isClaimBindingFailed``/timeout)."""
        if not (self.features.device_binding_conditions and self.features.device_status):
            return False
        allocation = claim.status.allocation
        assert allocation is not None
        ready = True
        for result, conds in _binding_conditions(claim):
            if any(_is_true(conds, t) for t in result.binding_failure_conditions):
                return True
            if not all(_is_true(conds, t) for t in result.binding_conditions):
                ready = False
        if not ready and allocation.allocation_timestamp is not None:
            stamp = allocation.allocation_timestamp
            if stamp.tzinfo is None:
                stamp = stamp.replace(tzinfo=UTC)
            return stamp + BINDING_TIMEOUT < datetime.now(UTC)
        return False

    # ------------------------------------------------------------------ PostFilter

    def schedsim_post_filter(
        self, state: CycleState, pod: Pod, node_to_status: Mapping[str, Status]
    ) -> Status | None:
        """No node passed: deallocate an allocated claim that was unavailable and that no
        other pod uses, or delete a special claim left from an earlier attempt, so a later
        attempt can succeed (``PostFilter``)."""
        del node_to_status
        if not self.enabled:
            return Status(Code.Unschedulable, ("plugin disabled",), NAME)
        s = state.get(STATE_KEY)
        if s is None:
            # PreFilter never ran (an earlier PreFilter plugin returned
            # UnschedulableAndUnresolvable): getStateData's CycleState.Read fails with
            # fwk.ErrNotFound and statusError makes it an Error status (release-1.34).
            return _error(STATE_NOT_FOUND)
        if not s.claims:
            return Status(Code.Unschedulable, ("no new claims to deallocate",), NAME)
        manager = self._manager()
        for i in sorted(s.unavailable):
            claim = s.claims[i]
            reserved = claim.status.reserved_for
            if not reserved or (len(reserved) == 1 and reserved[0].uid == pod.uid):
                manager.update_resource_claim(attrs.evolve(claim, status=ResourceClaimStatus()))
                return _DEALLOCATED
        if s.extended is not None:
            special = s.claims[s.extended]
            if manager.get_resource_claim(special.namespace, special.name) is not None:
                manager.delete_resource_claim(special.namespace, special.name)
                return Status(Code.Unschedulable, ("deletion of ResourceClaim completed",), NAME)
        return Status(Code.Unschedulable, ("still not schedulable",), NAME)

    # ------------------------------------------------------------------ Reserve

    def schedsim_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Write the node's allocation of each claim into the snapshot (``Reserve`` +
        ``SignalClaimPendingAllocation``), with the delete-protection finalizer; the special
        claim for extended resources is added to the snapshot allocated.

        Beyond 1.34: when the profile has a DeviceChoice plugin
        (`schedsim.framework.devices`), the claims are allocated again on the chosen node
        only, trying each request's devices in the plugin's order (`_chosen_allocation`);
        Filter's answer for every node, and its caches, stay upstream's."""
        s = state.get(STATE_KEY)
        if s is None:
            return None
        special = s.node_extended.get(node_name) if s.extended is not None else None
        if not s.to_allocate and special is None:
            return None
        results = s.node_allocations.get(node_name)
        if results is None and s.cache_key is not None and special is None:
            # Filter's status for this node came from the scheduler's ResultCache: allocate
            # now (the AllocationCache answers when its entry still holds).
            results = self._allocation_for(s, node_name)
        if results is None:
            return _error(f"claim allocation not found for node {node_name}")
        framework = self._handle.framework
        if special is None and framework is not None and framework.has_device_choice_plugins:
            chosen = self._chosen_allocation(s, state, pod, node_name)
            if isinstance(chosen, Status):
                return chosen
            results = chosen
        manager = self._manager()
        indices: list[int] = list(s.to_allocate)
        if special is not None and s.extended is not None:
            indices.append(s.extended)
        for i, allocation in zip(indices, results, strict=True):
            claim = special if i == s.extended and special is not None else s.claims[i]
            allocation = _own_share_ids(claim, allocation)
            finalizers = claim.finalizers
            if DELETE_PROTECTION_FINALIZER not in finalizers:
                finalizers = (*finalizers, DELETE_PROTECTION_FINALIZER)
            allocated = attrs.evolve(
                claim,
                finalizers=finalizers,
                status=attrs.evolve(claim.status, allocation=allocation),
            )
            try:
                if i == s.extended:
                    if manager.get_resource_claim(claim.namespace, claim.name) is None:
                        manager.create_resource_claim(allocated)
                    else:
                        manager.update_resource_claim(allocated)
                else:
                    manager.signal_claim_pending_allocation(claim.uid, allocated)
            except ValueError as e:
                return _error(str(e))
            s.reserved[claim.uid] = claim
            s.claims[i] = allocated
            s.allocated_here.add(i)
        return None

    def _chosen_allocation(
        self, s: _State, state: CycleState, pod: Pod, node_name: str
    ) -> list[AllocationResult] | Status:
        """The pod's claims allocated on ``node_name`` with each request's devices tried in
        the DeviceChoice plugins' order (`Framework.run_device_choice_plugins`); candidates
        carry their use from the node's NodeInfo (`node_devices`) where the device is
        node-local, else from the allocated state."""
        assert s.allocator is not None
        framework = self._handle.framework
        assert framework is not None
        try:
            node_info = self._handle.shared_lister.node_infos().get(node_name)
        except LookupError:
            return _error(f"node {node_name} not found")
        node = node_info.node
        assert node is not None
        local = {(d.driver, d.pool, d.name): d for d in node_devices(node_info)}
        allocated = s.allocator.allocated

        def order(
            claim: ResourceClaim,
            request: str,
            entries: Sequence[tuple[DeviceId, Device, ResourceSlice]],
        ) -> list[int] | None:
            candidates = []
            for did, device, _ in entries:
                nd = local.get((did.driver, did.pool, did.device))
                if nd is None:
                    used = allocated.consumed_capacity.get(did, {})
                    nd = NodeDevice(
                        did.driver,
                        did.pool,
                        did.device,
                        {name: c.value for name, c in device.capacity.items()},
                        {k.removeprefix(did.driver + "/"): v for k, v in used.items()},
                        False,
                        1 if used else 0,
                    )
                candidates.append(DeviceCandidate(nd, device.attributes))
            return framework.run_device_choice_plugins(
                state, pod, node_info, claim, request, candidates
            )

        s.allocator.device_order = order
        try:
            results = s.allocator.allocate(node, [s.claims[i] for i in s.to_allocate])
        except (AllocationError, ValueError) as e:
            return _error(str(e))
        except AllocationTimeout:
            return _TIMED_OUT
        finally:
            s.allocator.device_order = None
        if results is None:
            return _CANNOT_ALLOCATE
        s.node_allocations[node_name] = results
        return results

    def schedsim_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Undo Reserve: claims it allocated get their earlier state back (a special claim it
        added is removed); the pod's reservations of allocated claims are dropped
        (``Unreserve``)."""
        del node_name
        s = state.get(STATE_KEY)
        if s is None:
            return
        manager = self._manager()
        for i in sorted(s.allocated_here):
            claim = s.claims[i]
            original = s.reserved.get(claim.uid)
            current = manager.get_resource_claim(claim.namespace, claim.name)
            if current is None or current.uid != claim.uid:
                continue
            if i == s.extended and s.extended_original is None:
                manager.delete_resource_claim(claim.namespace, claim.name)
            elif i == s.extended and s.extended_original is not None:
                manager.update_resource_claim(s.extended_original)
            elif original is not None:
                manager.update_resource_claim(original)
            if original is not None:
                s.claims[i] = original
        s.reserved.clear()
        s.allocated_here.clear()
        for claim in s.claims:
            current = manager.get_resource_claim(claim.namespace, claim.name)
            if current is not None and claim_reserved_for_pod(pod, current):
                kept = tuple(r for r in current.status.reserved_for if r.uid != pod.uid)
                manager.update_resource_claim(
                    attrs.evolve(current, status=attrs.evolve(current.status, reserved_for=kept))
                )

    # ------------------------------------------------------------------ PreBind

    def schedsim_pre_bind_pre_flight(
        self, state: CycleState, pod: Pod, node_name: str
    ) -> Status | None:
        """Skip when the pod has no claims (``PreBindPreFlight``)."""
        del node_name
        s = state.get(STATE_KEY)
        if not self.enabled or s is None or not s.claims:
            return _SKIP
        del pod
        return None

    def schedsim_pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Record the allocation and reserve every claim for the pod (``PreBind``: what
        ``bindClaim`` writes to the API server, written into the snapshot); for the special
        claim also what goes to ``pod.status.extendedResourceClaimStatus``."""
        del node_name
        s = state.get(STATE_KEY)
        if s is None:
            return None
        manager = self._manager()
        consumer = ResourceClaimConsumerReference(
            resource="pods", name=pod.name, uid=pod.uid, api_group=""
        )
        for i, claim in enumerate(s.claims):
            if i == s.extended and i not in s.allocated_here:
                continue  # every extended resource came from device plugins: no claim
            current = manager.get_resource_claim(claim.namespace, claim.name)
            if current is None or current.uid != claim.uid:
                return _error(f"claim {claim.key} got deleted in the meantime")
            if claim_reserved_for_pod(pod, current):
                continue
            if i in s.allocated_here and current.status.allocation != claim.status.allocation:
                return _error(f"claim {claim.key} got allocated elsewhere in the meantime")
            if current.status.allocation is None:
                return _error(f"claim {claim.key} is not allocated")
            bound = attrs.evolve(
                current,
                status=attrs.evolve(
                    current.status, reserved_for=(*current.status.reserved_for, consumer)
                ),
            )
            manager.update_resource_claim(bound)
            s.claims[i] = bound
            if i == s.extended:
                names = [r.name for r in bound.spec.requests]
                s.extended_status = (bound.name, request_mappings(names, pod))
            st = self._binding_status(bound)
            if st is not None:
                return st
        return None

    def _binding_status(self, claim: ResourceClaim) -> Status | None:
        """Binding conditions: all True -> bound; a failure condition True -> Error; else the
        simulator cannot wait for the driver -> Error with upstream's timeout message."""
        if not (self.features.device_binding_conditions and self.features.device_status):
            return None
        for result, conds in _binding_conditions(claim):
            for t in result.binding_failure_conditions:
                if _is_true(conds, t):
                    c = conds[t]
                    return _error(
                        f"claim {claim.key} binding failed: reason={c.reason}, message={c.message}"
                    )
            if not all(_is_true(conds, t) for t in result.binding_conditions):
                return _error(f"claim {claim.key} binding timeout")
        return None


def _own_share_ids(claim: ResourceClaim, allocation: AllocationResult) -> AllocationResult:
    """``allocation`` with the claim's own shareIDs (DRAConsumableCapacity,
    `schedsim.dra.allocation_output.share_id`): Filter's results may come from the
    AllocationCache, made for another pod's claim, and each shared allocation needs its own
    ID. Deterministic, so a simulation's output does not change from run to run (upstream
    draws a random UUID). The same object when the IDs are the claim's already."""
    if all(r.share_id is None for r in allocation.results):
        return allocation
    ids = [
        None if r.share_id is None else share_id(claim, j) for j, r in enumerate(allocation.results)
    ]
    if all(r.share_id == i for r, i in zip(allocation.results, ids, strict=True)):
        return allocation
    results = tuple(
        r if i is None else attrs.evolve(r, share_id=i)
        for r, i in zip(allocation.results, ids, strict=True)
    )
    return attrs.evolve(allocation, results=results)


def _existing_extended_claim(
    pod: Pod, name: str, manager: SharedDraManager
) -> ResourceClaim | None:
    """The special claim left from an earlier attempt (``findExtendedResourceClaim``): a claim
    of the pod's namespace with the extended-resource annotation whose controller is the pod.
    The name schedsim gives such claims is tried first (O(1)); a claim named otherwise (made by
    kube-scheduler, with a random suffix) is found by a scan of the claims, O(claims), as
    upstream lists them."""
    claim = manager.get_resource_claim(pod.namespace, name)
    if claim is not None and _is_extended_claim_for(pod, claim):
        return claim
    for claim in manager.list_resource_claims():
        if _is_extended_claim_for(pod, claim):
            return claim
    return None


def _is_extended_claim_for(pod: Pod, claim: ResourceClaim) -> bool:
    return claim.annotations.get(EXTENDED_RESOURCE_CLAIM_ANNOTATION) == "true" and claim_is_for_pod(
        pod, claim
    )


def _binding_conditions(
    claim: ResourceClaim,
) -> Iterator[tuple[DeviceRequestAllocationResult, dict[str, Condition]]]:
    """Each allocated device that has binding conditions, with its ``status.devices``
    conditions by type."""
    allocation = claim.status.allocation
    assert allocation is not None
    by_device = {(d.driver, d.pool, d.device): d.conditions for d in claim.status.devices}
    for result in allocation.results:
        if result.binding_conditions:
            conditions = by_device.get((result.driver, result.pool, result.device), ())
            yield result, {c.type: c for c in conditions}


def _is_true(conditions: Mapping[str, Condition], type_: str) -> bool:
    c = conditions.get(type_)
    return c is not None and c.status == "True"
