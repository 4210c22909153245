"""`DraSnapshot`: the Dynamic Resource Allocation state of a cluster snapshot.

Mirrors CA ``simulator/dynamicresources/snapshot/snapshot.go`` (``Snapshot``) and
``snapshot_claim_tracker.go`` (the claim tracker the DynamicResources plugin reads); the
helpers of ``dynamicresources/utils/resource_claims.go`` it relies on live in
`schedsim.snapshot.dra_claims` and are re-exported here.

The state lives in three `PatchSet`s that fork, commit and revert together:

* ResourceClaims keyed by ``(namespace, name)``;
* ResourceSlices keyed by node name for node-local slices (``spec.nodeName``), plus one special
  key, `NON_LOCAL_SLICES_KEY`, for every slice that is not node-local (``nodeSelector``,
  ``allNodes``, ``perDeviceNodeSelection``);
* DeviceClasses keyed by name.

Differences from CA, all deliberate:

* Objects are immutable (``attrs.frozen``); every change stores a modified copy made with
  `attrs.evolve`. CA copies a claim before its first write in a fork (``ensureClaimWritable``)
  but edits stored objects in place when unforked, and edits the base object through a pod that
  references the same claim twice (CA defects, sigs issue #33 and PR #104); neither can happen
  here: objects given to the snapshot are never mutated.
* Every mutating method validates everything first and writes afterwards, so a failing call
  (a missing claim, a reservation limit) leaves the snapshot unchanged.
* `pod_claims` returns a claim referenced twice by a pod once (CA returns it twice), and
  resolves ``resourceClaimTemplateName`` references like the scheduler's DynamicResources plugin
  (a missing ``status.resourceClaimStatuses`` entry is an error, an entry without a claim name
  means "no claim needed" and is skipped).
* `remove_pod_owned_claims` skips claims it cannot find (CA, before sigs commit 3f1988389,
  dereferences a nil entry and panics).
* Deallocating a claim clears ``status.devices`` as well as ``status.allocation``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from schedsim.api.core import Pod
from schedsim.api.resource import DeviceClass, ResourceClaim, ResourceSlice
from schedsim.dra.allocated_state import AllocatedState
from schedsim.dra.claims import claim_is_for_pod, claim_reserved_for_pod
from schedsim.dra.extended import extended_resource_claim_name, has_extended_resource_requests
from schedsim.dra.types import DeviceId, DraFeatures
from schedsim.snapshot.change_journal import ChangeJournal, new_stamp
from schedsim.snapshot.cloning import CloningMap
from schedsim.snapshot.dra_claims import (
    RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE,
    ClaimId,
    DraSnapshotError,
    claim_allocated,
    claim_available_on_node,
    claim_fully_reserved,
    claim_id,
    claim_in_use,
    deallocated,
    match_node_selector_terms,
    pod_claim_name,
    with_pod_reservation,
    without_pod_reservation,
)
from schedsim.snapshot.patchset import PatchSet

__all__ = [
    "NON_LOCAL_SLICES_KEY",
    "RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE",
    "ClaimId",
    "DeviceId",
    "DraSnapshot",
    "DraSnapshotError",
    "claim_allocated",
    "claim_available_on_node",
    "claim_fully_reserved",
    "claim_id",
    "claim_in_use",
    "claim_is_for_pod",
    "claim_reserved_for_pod",
    "match_node_selector_terms",
]

NON_LOCAL_SLICES_KEY: Final = "--NON-LOCAL--"
"""Slices key holding every slice that is not node-local (CA ``nonNodeLocalResourceSlicesKey``)."""


# --------------------------------------------------------------------------- snapshot


class DraSnapshot:
    """Claims, slices and device classes in forkable patch sets (CA ``dynamicresources.Snapshot``).

    Complexity notation: C claims, S slices, D device classes, N patches (forks + 1), R claims a
    pod references, V reservations of one claim.
    """

    __slots__ = (
        "_claim_journal",
        "_claims",
        "_classes",
        "_classes_stamp",
        "_slices",
        "_slices_stamp",
        "clone_on_fork",
    )

    def __init__(
        self,
        claims: Iterable[ResourceClaim] = (),
        node_local_slices: Mapping[str, Sequence[ResourceSlice]] | None = None,
        non_local_slices: Sequence[ResourceSlice] = (),
        device_classes: Iterable[DeviceClass] = (),
        *,
        clone_on_fork: bool = False,
    ) -> None:
        """Creates a snapshot (CA ``NewSnapshot``; no arguments: ``NewEmptySnapshot``).

        The objects are stored as given (they are immutable); the containers are copied. As in
        CA, the non-local slices key is always present (possibly with no slices).

        Args:
            claims: ResourceClaims, keyed by (namespace, name).
            node_local_slices: Node name -> the slices local to that node.
            non_local_slices: Every slice that is not node-local.
            device_classes: DeviceClasses, keyed by name.
            clone_on_fork: keep the state in `CloningMap`s instead of `PatchSet`s: every fork
                deep-copies all claims and copies the slice and class maps (CA's design
                before patch sets, PR #8090), the simple reference the benchmarks compare
                against. Same results, different costs.

        Raises:
            DraSnapshotError: Two claims share a (namespace, name), two classes share a name, or
                ``node_local_slices`` uses the reserved non-local key.

        Time: O(C + S + D).
        """
        claim_map: dict[ClaimId, ResourceClaim] = {}
        for claim in claims:
            cid = claim_id(claim)
            if cid in claim_map:
                raise DraSnapshotError(f"claim {cid[0]}/{cid[1]} given twice")
            claim_map[cid] = claim
        slice_map: dict[str, tuple[ResourceSlice, ...]] = {}
        for node_name, slices in (node_local_slices or {}).items():
            if node_name == NON_LOCAL_SLICES_KEY:
                raise DraSnapshotError(f"node name {NON_LOCAL_SLICES_KEY!r} is reserved")
            slice_map[node_name] = tuple(slices)
        slice_map[NON_LOCAL_SLICES_KEY] = tuple(non_local_slices)
        class_map: dict[str, DeviceClass] = {}
        for device_class in device_classes:
            if device_class.name in class_map:
                raise DraSnapshotError(f"DeviceClass {device_class.name!r} given twice")
            class_map[device_class.name] = device_class
        self.clone_on_fork = clone_on_fork
        self._claims: PatchSet[ClaimId, ResourceClaim] | CloningMap[ClaimId, ResourceClaim]
        self._slices: (
            PatchSet[str, tuple[ResourceSlice, ...]] | CloningMap[str, tuple[ResourceSlice, ...]]
        )
        self._classes: PatchSet[str, DeviceClass] | CloningMap[str, DeviceClass]
        if clone_on_fork:
            self._claims = CloningMap(claim_map, deep_copy=True)
            self._slices = CloningMap(slice_map)
            self._classes = CloningMap(class_map)
        else:
            # The maps were built here for the patch sets: hand them over, no second copy.
            self._claims = PatchSet.adopting(claim_map)
            self._slices = PatchSet.adopting(slice_map)
            self._classes = PatchSet.adopting(class_map)
        # the change feed (`claim_changes_since`, `slices_stamp`, `device_classes_stamp`)
        self._claim_journal: ChangeJournal[ClaimId] = ChangeJournal()
        self._slices_stamp = new_stamp()
        self._classes_stamp = new_stamp()

    @classmethod
    def from_objects(
        cls,
        claims: Iterable[ResourceClaim] = (),
        slices: Iterable[ResourceSlice] = (),
        device_classes: Iterable[DeviceClass] = (),
        *,
        clone_on_fork: bool = False,
    ) -> DraSnapshot:
        """A snapshot of the cluster's DRA objects (CA provider ``Snapshot``): slices with
        ``spec.nodeName`` are keyed by that node, every other slice is non-local.

        Raises:
            DraSnapshotError: as the constructor.

        Time: O(C + S + D).
        """
        local: dict[str, list[ResourceSlice]] = {}
        non_local: list[ResourceSlice] = []
        for s in slices:
            if s.node_name:
                local.setdefault(s.node_name, []).append(s)
            else:
                non_local.append(s)
        return cls(claims, local, non_local, device_classes, clone_on_fork=clone_on_fork)

    # ----------------------------------------------------------------- fork / commit / revert

    @property
    def depth(self) -> int:
        """Forks not yet committed or reverted (0 when not forked). Time: O(1)."""
        return self._claims.depth

    def flattened(self) -> DraSnapshot:
        """An unforked snapshot of the current state (the same objects, same design).

        Time: O(C + S + D), plus O(N x changes) to merge the layers.
        """
        slices = self._slices.as_map()
        local = {k: v for k, v in slices.items() if k != NON_LOCAL_SLICES_KEY}
        return DraSnapshot(
            self._claims.as_map().values(),
            local,
            slices.get(NON_LOCAL_SLICES_KEY, ()),
            self._classes.as_map().values(),
            clone_on_fork=self.clone_on_fork,
        )

    def fork(self) -> None:
        """Starts a layer of changes that `revert` can undo (CA ``Fork``). Time: O(1)."""
        self._classes.fork()
        self._claims.fork()
        self._slices.fork()

    def commit(self) -> None:
        """Merges the top layer into the one below (CA ``Commit``); no-op when not forked.

        Time: O(changes in the top layer).
        """
        self._classes.commit()
        self._claims.commit()
        self._slices.commit()

    def revert(self) -> None:
        """Drops the top layer and its changes (CA ``Revert``); no-op when not forked.

        Time: O(changes in the top layer) (see `PatchSet.revert`).
        """
        keys = self._claims.revert_keys()
        if keys is None:
            self._claim_journal.restart()
        else:
            self._claim_journal.record_all(keys)
        if self._slices.revert_keys() != []:
            self._slices_stamp = new_stamp()
        if self._classes.revert_keys() != []:
            self._classes_stamp = new_stamp()
        self._classes.revert()
        self._claims.revert()
        self._slices.revert()

    # ----------------------------------------------------------------- change feed

    def claim_changes_since(self, token: object) -> tuple[object, list[ClaimId] | None]:
        """What changed among the claims since ``token`` (a token this method returned
        before; None on a reader's first call), for readers that keep a view of the claims
        up to date, as `DeltaSnapshotStore.changes_since` does for nodes.

        Returns:
            ``(token, keys)``: the new token, and the (namespace, name) of every claim
            whose visible object may have changed (set, deleted, or brought back by a
            revert), possibly repeated; None when that is not known (the first call, a
            token of another snapshot, a journal restart): read `list_resource_claims`.

        Time: O(1) + O(keys returned).
        """
        return self._claim_journal.changes_since(token)

    def slices_stamp(self) -> int:
        """A number that changes whenever the ResourceSlices may have changed (and is equal
        across calls while they did not; unique across snapshots). Time: O(1)."""
        return self._slices_stamp

    def device_classes_stamp(self) -> int:
        """As `slices_stamp`, for the DeviceClasses. Time: O(1)."""
        return self._classes_stamp

    def _set_claim(self, cid: ClaimId, claim: ResourceClaim) -> None:
        self._claims.set_current(cid, claim)
        self._claim_journal.record(cid)

    def _delete_claim(self, cid: ClaimId) -> None:
        self._claims.delete_current(cid)
        self._claim_journal.record(cid)

    # ----------------------------------------------------------------- claims

    def resource_claim(self, namespace: str, name: str) -> ResourceClaim | None:
        """Returns the claim ``namespace/name``, or None if it is not tracked.

        Time: O(1) cached, O(N) otherwise.
        """
        return self._claims.find_value((namespace, name))

    def get_resource_claim(self, namespace: str, name: str) -> ResourceClaim:
        """Returns the claim ``namespace/name`` (CA claim tracker ``Get``).

        Raises:
            DraSnapshotError: ``claim ns/name not found``.

        Time: O(1) cached, O(N) otherwise.
        """
        claim = self._claims.find_value((namespace, name))
        if claim is None:
            raise DraSnapshotError(f"claim {namespace}/{name} not found")
        return claim

    def list_resource_claims(self) -> list[ResourceClaim]:
        """Returns every tracked claim (CA ``listResourceClaims`` / claim tracker ``List``).

        Time: O(C), plus O(N x changes) the first time (builds the merged view).
        """
        return list(self._claims.as_map().values())

    def add_claims(self, claims: Iterable[ResourceClaim]) -> None:
        """Starts tracking ``claims`` (CA ``AddClaims``).

        Raises:
            DraSnapshotError: ``claim ns/name already tracked in the snapshot`` when any claim
                (or two of the given claims) share a (namespace, name); nothing is added.

        Time: O(len(claims)) lookups.
        """
        new: dict[ClaimId, ResourceClaim] = {}
        for claim in claims:
            cid = claim_id(claim)
            if cid in new or cid in self._claims:
                raise DraSnapshotError(f"claim {cid[0]}/{cid[1]} already tracked in the snapshot")
            new[cid] = claim
        for cid, claim in new.items():
            self._set_claim(cid, claim)

    def update_claim(self, claim: ResourceClaim) -> None:
        """Stores ``claim`` in place of the tracked claim with its namespace and name (what the
        scheduler writes to the API server at PreBind and PostFilter).

        Raises:
            DraSnapshotError: ``claim ns/name not found``; nothing is changed.

        Time: O(1) cached, O(N) otherwise.
        """
        cid = claim_id(claim)
        if cid not in self._claims:
            raise DraSnapshotError(f"claim {cid[0]}/{cid[1]} not found")
        self._set_claim(cid, claim)

    def remove_claim(self, namespace: str, name: str) -> None:
        """Stops tracking the claim ``namespace/name`` (what deleting it in the API server
        does).

        Raises:
            DraSnapshotError: ``claim ns/name not found``.
        """
        if (namespace, name) not in self._claims:
            raise DraSnapshotError(f"claim {namespace}/{name} not found")
        self._delete_claim((namespace, name))

    def pod_claims(self, pod: Pod) -> list[ResourceClaim]:
        """Returns the claims ``pod`` references, in ``spec.resourceClaims`` order (CA
        ``PodClaims``).

        Each entry names its claim directly (``resourceClaimName``) or through a template
        (``resourceClaimTemplateName``): then the claim name comes from the pod's
        ``status.resourceClaimStatuses`` entry of the same name; an entry without a claim name
        means no claim is needed and is skipped. Claims are looked up in the pod's namespace. A
        claim referenced twice is returned once (CA returns it twice). The claim the
        DynamicResources plugin made for the pod's DRA-backed extended resources comes last,
        when it exists.

        Raises:
            DraSnapshotError: An entry sets neither field, a template claim has no status entry
                (``ResourceClaim not created yet``), or a claim is not tracked
                (``couldn't find ResourceClaim in the snapshot``).

        Time: O(R) lookups.
        """
        return [claim for _, claim in self._find_pod_claims(pod, ignore_not_tracked=False)]

    def _find_pod_claims(
        self, pod: Pod, ignore_not_tracked: bool
    ) -> list[tuple[ClaimId, ResourceClaim]]:
        """CA ``findPodClaims``: the pod's claims, deduplicated; with ``ignore_not_tracked``
        unresolvable or missing claims are skipped instead of raising."""
        found: dict[ClaimId, ResourceClaim] = {}
        for ref in pod.resource_claims:
            try:
                name = pod_claim_name(pod, ref)
            except DraSnapshotError:
                if ignore_not_tracked:
                    continue
                raise
            if name is None:
                continue
            cid = (pod.namespace, name)
            if cid in found:
                continue
            claim = self._claims.find_value(cid)
            if claim is None:
                if ignore_not_tracked:
                    continue
                raise DraSnapshotError(
                    f"pod {pod.key}: couldn't find ResourceClaim {pod.namespace}/{name} "
                    f"in the snapshot"
                )
            found[cid] = claim
        if has_extended_resource_requests(pod):
            # The claim DynamicResources made for DRA-backed extended resources, if any.
            cid = (pod.namespace, extended_resource_claim_name(pod))
            claim = self._claims.find_value(cid)
            if claim is not None and cid not in found and claim_is_for_pod(pod, claim):
                found[cid] = claim
        return list(found.items())

    def reserve_pod_claims(self, pod: Pod) -> None:
        """Reserves every claim of ``pod`` for it (CA ``ReservePodClaims``).

        Adds ``{resource: pods, name, uid}`` to each claim's ``status.reservedFor`` unless the pod
        is already there (the scheduler does this in PreBind).

        Raises:
            DraSnapshotError: A claim is missing (see `pod_claims`), or a claim not yet reserved
                for the pod already has 256 reservations; nothing is changed.

        Time: O(R x V).
        """
        claims = self._find_pod_claims(pod, ignore_not_tracked=False)
        for cid, claim in claims:
            if claim_fully_reserved(claim) and not claim_reserved_for_pod(pod, claim):
                raise DraSnapshotError(
                    f"claim {cid[0]}/{cid[1]} already has max number of reservations set, "
                    f"can't add more"
                )
        for cid, claim in claims:
            reserved = with_pod_reservation(claim, pod)
            if reserved is not claim:
                self._set_claim(cid, reserved)

    def unreserve_pod_claims(self, pod: Pod) -> None:
        """Removes ``pod``'s reservation from its claims (CA ``UnreservePodClaims``).

        A claim owned by the pod, or one nobody reserves any more, is also deallocated
        (``status.allocation`` and ``status.devices`` cleared).

        Raises:
            DraSnapshotError: A claim is missing (see `pod_claims`); nothing is changed.

        Time: O(R x V).
        """
        claims = self._find_pod_claims(pod, ignore_not_tracked=False)
        for cid, claim in claims:
            new = without_pod_reservation(claim, pod)
            if claim_is_for_pod(pod, new) or not claim_in_use(new):
                new = deallocated(new)
            if new is not claim:
                self._set_claim(cid, new)

    def remove_pod_owned_claims(self, pod: Pod) -> None:
        """Drops the claims ``pod`` owns and its reservations of shared claims (CA
        ``RemovePodOwnedClaims``, used when the pod's node is removed).

        Claims that cannot be resolved or are not tracked are skipped (CA logs them).

        Time: O(R x V).
        """
        for cid, claim in self._find_pod_claims(pod, ignore_not_tracked=True):
            if claim_is_for_pod(pod, claim):
                self._delete_claim(cid)
                continue
            new = without_pod_reservation(claim, pod)
            if new is not claim:
                self._set_claim(cid, new)

    # ----------------------------------------------------------------- slices

    def node_resource_slices(self, node_name: str) -> tuple[tuple[ResourceSlice, ...], bool]:
        """Returns the slices local to ``node_name`` and whether the node has an entry (CA
        ``NodeResourceSlices``).

        Time: O(1) cached, O(N) otherwise.
        """
        if node_name == NON_LOCAL_SLICES_KEY:
            return (), False
        slices = self._slices.find_value(node_name)
        if slices is None:
            return (), False
        return slices, True

    def add_node_resource_slices(self, node_name: str, slices: Sequence[ResourceSlice]) -> None:
        """Sets the slices local to ``node_name`` (CA ``AddNodeResourceSlices``).

        Raises:
            DraSnapshotError: ``node "X" ResourceSlices already present``, or the node name is the
                reserved non-local key.

        Time: O(len(slices)).
        """
        if node_name == NON_LOCAL_SLICES_KEY:
            raise DraSnapshotError(f"node name {NON_LOCAL_SLICES_KEY!r} is reserved")
        if node_name in self._slices:
            raise DraSnapshotError(f'node "{node_name}" ResourceSlices already present')
        self._slices.set_current(node_name, tuple(slices))
        self._slices_stamp = new_stamp()

    def remove_node_resource_slices(self, node_name: str) -> None:
        """Drops the slices local to ``node_name``; no-op when it has none (CA
        ``RemoveNodeResourceSlices``).

        Time: O(1) cached, O(N) otherwise.
        """
        if node_name == NON_LOCAL_SLICES_KEY or node_name not in self._slices:
            return
        self._slices.delete_current(node_name)
        self._slices_stamp = new_stamp()

    def list_resource_slices(self) -> list[ResourceSlice]:
        """Returns every slice, node-local and not (CA ``listResourceSlices`` /
        ``ListWithDeviceTaintRules``; DeviceTaintRules are not applied).

        Time: O(S + nodes), plus O(N x changes) the first time.
        """
        return [s for slices in self._slices.as_map().values() for s in slices]

    # ----------------------------------------------------------------- device classes

    def device_class(self, name: str) -> DeviceClass | None:
        """Returns the DeviceClass ``name``, or None. Time: O(1) cached, O(N) otherwise."""
        return self._classes.find_value(name)

    def get_device_class(self, name: str) -> DeviceClass:
        """Returns the DeviceClass ``name`` (CA class lister ``Get``).

        Raises:
            DraSnapshotError: ``DeviceClass "x" not found``.

        Time: O(1) cached, O(N) otherwise.
        """
        device_class = self._classes.find_value(name)
        if device_class is None:
            raise DraSnapshotError(f'DeviceClass "{name}" not found')
        return device_class

    def list_device_classes(self) -> list[DeviceClass]:
        """Returns every DeviceClass (CA ``listDeviceClasses``). Time: O(D)."""
        return list(self._classes.as_map().values())

    # ----------------------------------------------------------------- claim tracker

    def list_all_allocated_devices(self) -> frozenset[DeviceId]:
        """Returns the devices allocated to any claim (CA claim tracker
        ``ListAllAllocatedDevices``).

        Results with ``adminAccess: true`` do not make a device busy and are left out (as in the
        scheduler's allocated-device tracking).

        Time: O(C x results per claim).
        """
        # Every result as dedicated, as CA's tracker does: consumable capacity off.
        features = DraFeatures(consumable_capacity=False)
        state = AllocatedState.from_claims(self._claims.as_map().values(), features)
        return frozenset(state.devices)  # already a frozenset: not copied

    def signal_claim_pending_allocation(
        self, claim_uid: str, allocated_claim: ResourceClaim
    ) -> None:
        """Stores ``allocated_claim`` in place of the tracked claim (CA claim tracker
        ``SignalClaimPendingAllocation``, called by the DynamicResources plugin's Reserve).

        CA has no in-flight allocations: the allocation is written into the snapshot at once.

        Raises:
            DraSnapshotError: No claim with the same (namespace, name) is tracked, or the tracked
                claim's UID is not ``claim_uid``; nothing is changed.

        Time: O(1) cached, O(N) otherwise.
        """
        cid = claim_id(allocated_claim)
        claim = self._claims.find_value(cid)
        if claim is None:
            raise DraSnapshotError(f"claim {cid[0]}/{cid[1]} not found")
        if claim.uid != claim_uid:
            raise DraSnapshotError(
                f"claim {cid[0]}/{cid[1]}: snapshot has UID {claim.uid!r}, allocation came for "
                f"UID {claim_uid!r} - shouldn't happen"
            )
        self._set_claim(cid, allocated_claim)

    def get_pending_allocation(self, claim_uid: str) -> ResourceClaim | None:
        """Always None: nothing is ever in flight (CA claim tracker ``GetPendingAllocation``).

        Time: O(1).
        """
        del claim_uid
        return None
