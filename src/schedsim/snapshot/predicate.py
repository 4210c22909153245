"""`PredicateSnapshot`: the ClusterSnapshot users call. A store plus the scheduler framework.

Mirrors CA ``clustersnapshot/predicate/predicate_snapshot.go`` (>= 1.36, the embedding
model): get/list return the stored NodeInfos; schedule runs PreFilter + Filter (+ Reserve when
a plugin implements it) and stores a PodInfo only on success; force variants skip plugins.

The DRA state (claims, slices, device classes) lives in a `DraSnapshot` beside the store and
forks, commits and reverts with it; NodeInfos carry their node-local slices and PodInfos the
claims their pods need, both kept in sync by every mutation here (CA's ``draEnabled`` paths).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager

from schedsim.api.core import Node, Pod
from schedsim.api.resource import DeviceClass, ResourceClaim, ResourceSlice
from schedsim.api.storage import CSINode, PersistentVolume, PersistentVolumeClaim
from schedsim.dra.extended import has_extended_resource_requests
from schedsim.dra.types import DeviceId
from schedsim.framework.cycle_state import CycleState
from schedsim.framework.delegating import Binding
from schedsim.framework.fit_error import Diagnosis, FitError
from schedsim.framework.runtime import Framework, PluginError
from schedsim.framework.status import Code, Status
from schedsim.framework.volume_listers import StorageListers
from schedsim.snapshot.csi import CsiSnapshot, CsiSnapshotError
from schedsim.snapshot.delta import DeltaSnapshotStore
from schedsim.snapshot.dra import (
    DraSnapshot,
    DraSnapshotError,
    claim_available_on_node,
    claim_is_for_pod,
)
from schedsim.snapshot.errors import (
    NodeAlreadyExistsError,
    NodeNotFoundError,
    PodNotFoundError,
    SchedulingError,
)
from schedsim.snapshot.forked import Forked
from schedsim.snapshot.infos import NodeInfo, PodInfo
from schedsim.snapshot.plugin_runner import (
    RESERVE_REJECTED,
    NodeOrderMapping,
    SchedulerPluginRunner,
)
from schedsim.snapshot.store import (
    ClusterSnapshotStore,
    StoreNodeInfoLister,
    StoreStorageInfoLister,
)
from schedsim.snapshot.volumes import VolumeSnapshot

__all__ = ["PredicateSnapshot"]

log = logging.getLogger(__name__)


_SHARED_POD_INFO = "snapshot:PodInfo"
"""The pod memo key of `PredicateSnapshot._shared_pod_info`."""


class PredicateSnapshot:
    """A forkable cluster snapshot that schedules pods through a scheduler profile.

    Args:
        framework: the profile's plugins. The snapshot binds itself to the framework's
            handle for each operation that runs plugins and unbinds afterwards (CA's
            delegating lister), so several snapshots may share one Framework; code that calls
            the framework's Run methods itself does it inside `bound`.
        store: where NodeInfos live; `DeltaSnapshotStore` (O(1) fork/revert) by default;
            `BasicSnapshotStore` is the simple reference.
        skip_unschedulable_nodes: any-node scheduling skips cordoned nodes (CA's behaviour,
            the default); False lets the NodeUnschedulable plugin decide (kube-scheduler's).

    Everything get/list return is the stored object, read-only, valid until the next
    mutation. Implements the framework's ``SharedLister``, ``SharedDraManager`` (the
    DynamicResources plugin reads and writes `dra_snapshot` through it) and
    ``SharedCsiManager``: a `schedsim.framework.delegating.BindableSnapshot`.

    Attributes:
        dra_snapshot: the DRA objects; replaced by `set_cluster_state`, emptied by `clear`.
        csi_snapshot: the CSINodes (plugins read them through ``Handle.csi_manager``, which
            is this snapshot); replaced by `set_cluster_state`, emptied by `clear`.
        storage_listers: the cluster's PVs, PVCs, StorageClasses and VolumeAttachments (what
            the handle's ``storage_listers`` give plugins while this snapshot is bound); they
            do not fork; replaced by `set_cluster_state`, emptied by `clear`.
        volume_snapshot: the PVs and PVCs of `storage_listers` with the bindings
            VolumeBinding made (plugins read and write them through ``Handle.volume_manager``
            while this snapshot is bound); forks, commits and reverts with the rest; replaced
            by `set_cluster_state`, emptied by `clear`.

    Mutations are transactional (CA's are not): a call that raises leaves the snapshot
    exactly as it was, in every fork state.
    """

    def __init__(
        self,
        framework: Framework,
        store: ClusterSnapshotStore | None = None,
        *,
        skip_unschedulable_nodes: bool = True,
    ) -> None:
        self.framework = framework
        self.store: ClusterSnapshotStore = store if store is not None else DeltaSnapshotStore()
        self.csi_snapshot = CsiSnapshot()
        self.storage_listers = StorageListers()
        self.volume_snapshot = VolumeSnapshot()
        self._binding = framework.handle.bind(self)
        self.dra_snapshot = DraSnapshot()
        gates = framework.handle.feature_gates
        # Claims are tracked when DRA is on and a profile runs DynamicResources: with the
        # plugin disabled, kube-scheduler binds pods without looking at their claims.
        self._dra_enabled = (
            gates.enabled("DynamicResourceAllocation") and "DynamicResources" in framework.plugins
        )
        self._dra_extended = gates.enabled("DRAExtendedResource")
        self._runner = SchedulerPluginRunner(
            framework, self, skip_unschedulable_nodes=skip_unschedulable_nodes
        )
        self._pod_level_resources = framework.handle.feature_gates.enabled("PodLevelResources")
        self._skip_unschedulable = skip_unschedulable_nodes

    def with_framework(self, framework: Framework) -> PredicateSnapshot:
        """A snapshot over this one's state (store, DRA, CSI, storage listers, volumes) that
        runs ``framework``'s plugins: another scheduler profile over the same cluster, as
        kube-scheduler's profiles share one cache. Changes through either are seen by both.
        `set_cluster_state` and `clear` replace the DRA/CSI/storage objects of the snapshot
        they are called on only: call them before making views, not while views are used.

        Time: O(1).
        """
        view = PredicateSnapshot(
            framework, self.store, skip_unschedulable_nodes=self._skip_unschedulable
        )
        view.dra_snapshot = self.dra_snapshot
        view.csi_snapshot = self.csi_snapshot
        view.storage_listers = self.storage_listers
        view.volume_snapshot = self.volume_snapshot
        return view

    def bound(self) -> Binding:
        """A context manager during which the framework's handle reads this snapshot (CA's
        ``UpdateDelegate`` / ``defer ResetDelegate``); bindings nest. Every method here that
        runs plugins binds itself; use it to call the framework's Run methods directly (e.g.
        PreEnqueue) or a plugin's hooks."""
        return self._binding

    # ------------------------------------------------------------------ SharedLister

    def node_infos(self) -> StoreNodeInfoLister:
        """The store's NodeInfo lister."""
        return self.store.node_infos()

    def storage_infos(self) -> StoreStorageInfoLister:
        """The store's PVC lister."""
        return self.store.storage_infos()

    # ------------------------------------------------------------------ state

    def new_pod_info(self, pod: Pod) -> PodInfo:
        """A PodInfo for ``pod`` computed with this snapshot's feature gates, holding the
        claims the pod needs as the DRA snapshot has them now (CA ``createPodInfo``).

        Raises:
            DraSnapshotError: a claim of the pod is missing (see `DraSnapshot.pod_claims`).
        """
        return self._pod_info(pod, self.dra_snapshot)

    @property
    def dra_enabled(self) -> bool:
        """Whether ResourceClaims are tracked: DynamicResourceAllocation is on and the profile
        runs DynamicResources."""
        return self._dra_enabled

    def _uses_dra(self, pod: Pod) -> bool:
        """The pod has claims, or DRA-backed extended resources may have given it one."""
        if not self._dra_enabled:
            return False
        return bool(pod.resource_claims) or (
            self._dra_extended and has_extended_resource_requests(pod)
        )

    def _shared_pod_info(self, pod: Pod) -> PodInfo:
        """`new_pod_info` of a pod that holds no claims (``_uses_dra`` false), made once per
        pod object and setting (kept in the pod's memo): every simulation that places the
        same pod (a removal simulation of each plan, a scale-up estimate) stores the same
        PodInfo, which depends on the pod and the PodLevelResources gate only and is never
        changed (PodInfos are shared by a store's layers anyway)."""
        table = pod.memo_table()
        key = (_SHARED_POD_INFO, self._pod_level_resources)
        info = table.get(key)
        if info is None:
            info = table[key] = PodInfo(pod, (), pod_level_resources=self._pod_level_resources)
        return info

    def _pod_info(self, pod: Pod, dra: DraSnapshot) -> PodInfo:
        claims = dra.pod_claims(pod) if self._uses_dra(pod) else ()
        return PodInfo(pod, claims, pod_level_resources=self._pod_level_resources)

    def set_cluster_state(
        self,
        nodes: Iterable[Node],
        scheduled_pods: Iterable[Pod],
        dra_snapshot: DraSnapshot | None = None,
        csi_snapshot: CsiSnapshot | None = None,
        storage_listers: StorageListers | None = None,
        volume_snapshot: VolumeSnapshot | None = None,
    ) -> list[Pod]:
        """Replace everything and drop all forks (CA ``SetClusterState``).

        Each pod goes to ``spec.nodeName``, else ``status.nominatedNodeName``. Each NodeInfo
        gets the node-local slices of ``dra_snapshot``, each PodInfo its pod's claims; claims
        are taken as they are (no reservation or allocation is changed).

        Args:
            dra_snapshot: the cluster's DRA objects (None: empty); it becomes this snapshot's
                `dra_snapshot` and is used, not copied (a forked one is flattened into an
                unforked copy first: no fork survives).
            csi_snapshot: the cluster's CSINodes (None: empty); it becomes this snapshot's
                `csi_snapshot` and is used, not copied. Each NodeInfo gets the CSINode named
                like its node (none when absent: the node has no volume limits; CA with
                CSI-aware scheduling on requires one per node instead).
            storage_listers: the cluster's PVs, PVCs, StorageClasses and VolumeAttachments
                (None: none); they become this snapshot's `storage_listers`.
            volume_snapshot: the PVs and PVCs with their current bindings (None: those of
                ``storage_listers``); used, not copied (a forked one is flattened first).

        Returns:
            pods whose target node is not among ``nodes``: skipped (logged), as CA does.

        Raises:
            NodeAlreadyExistsError: two nodes share a name.
            DraSnapshotError: a scheduled pod's claim is missing.
            In both cases the snapshot is left unchanged (CA leaves it half-built).
        """
        dra = dra_snapshot if dra_snapshot is not None else DraSnapshot()
        if dra.depth:  # a forked snapshot: its current state, flattened, is the new base
            dra = dra.flattened()
        csi = csi_snapshot if csi_snapshot is not None else CsiSnapshot()
        if csi.depth:  # a forked snapshot: take its current state, flattened, as the base
            csi = CsiSnapshot(csi.list())
        if volume_snapshot is None:
            volumes = VolumeSnapshot.from_listers(
                storage_listers if storage_listers is not None else StorageListers()
            )
        else:
            volumes = volume_snapshot.flattened() if volume_snapshot.depth else volume_snapshot
        infos: dict[str, NodeInfo] = {}
        for node in nodes:
            if node.name in infos:
                raise NodeAlreadyExistsError(node.name)  # before anything is cleared
            slices = dra.node_resource_slices(node.name)[0] if self._dra_enabled else ()
            infos[node.name] = NodeInfo(node, slices, csi.get_csi_node(node.name))
        skipped = []
        for pod in scheduled_pods:
            target = pod.node_name or pod.nominated_node_name
            ni = infos.get(target)
            if ni is None:
                log.debug("pod %s: node %r is not in the snapshot; skipped", pod.key, target)
                skipped.append(pod)
                continue
            ni.add_pod_info(self._pod_info(pod, dra))
        self.store.clear()
        self.dra_snapshot = dra
        self.csi_snapshot = csi
        self._set_storage_listers(
            storage_listers if storage_listers is not None else StorageListers()
        )
        self.volume_snapshot = volumes
        for ni in infos.values():
            self.store.store_node_info(ni)
        return skipped

    @contextmanager
    def _dra_transaction(self) -> Iterator[None]:
        """DRA changes inside are committed if the block succeeds and reverted if it raises,
        so a failing mutation leaves the snapshot unchanged (CA's are not transactional)."""
        with Forked(self.dra_snapshot) as fork:
            fork.commit()  # kept unless the block raises
            yield

    @staticmethod
    def _verify_pod_claims(pod: Pod, node: Node, claims: Sequence[ResourceClaim]) -> None:
        """Every claim of a scheduled pod is allocated and available on its node (CA
        ``verifyScheduledPodResourceClaims``); raises DraSnapshotError."""
        for claim in claims:
            if not claim_available_on_node(claim, node):
                raise DraSnapshotError(
                    f"pod {pod.key}: claim {claim.key} is not allocated or not available "
                    f"on node {node.name}"
                )

    def add_node_info(self, node_info: NodeInfo) -> None:
        """Add a node with its pods, without running plugins. The object itself is stored.

        With DRA: the node's ``local_resource_slices`` join the DRA snapshot; claims its pods
        own are added, every pod's claims are reserved for it and must be allocated and
        available on the node (CA ``AddNodeInfo``).

        Raises:
            NodeAlreadyExistsError: the node is already in the snapshot.
            DraSnapshotError: the node's slices or a pod-owned claim are already tracked, a
                claim is missing, fully reserved, unallocated or allocated for other nodes.
            CsiSnapshotError: the NodeInfo's ``csi_node`` is already in the CSI snapshot, or is
                not named like its node.
            Nothing is changed when it raises.

        The NodeInfo's ``csi_node``, if any, joins the CSI snapshot (CA ``AddNodeInfo`` with
        CSI-aware scheduling).
        """
        node = node_info.node
        csi_node = node_info.csi_node
        if csi_node is not None:
            self._check_new_csi_node(node, csi_node)
        if self._dra_enabled and node is not None:
            self._check_node_absent(node.name)
            with self._dra_transaction():
                dra = self.dra_snapshot
                if node_info.local_resource_slices:
                    dra.add_node_resource_slices(node.name, node_info.local_resource_slices)
                for pi in node_info.pods:
                    if not pi.needed_resource_claims:
                        continue
                    pod = pi.pod
                    dra.add_claims(c for c in pi.needed_resource_claims if claim_is_for_pod(pod, c))
                    dra.reserve_pod_claims(pod)
                    self._verify_pod_claims(pod, node, dra.pod_claims(pod))
                self.store.store_node_info(node_info)
        else:
            self.store.store_node_info(node_info)
        if csi_node is not None:
            self.csi_snapshot.add_csi_node(csi_node)  # checked above: cannot fail

    def _check_node_absent(self, node_name: str) -> None:
        """Raise NodeAlreadyExistsError before any DRA/CSI change if the node is stored."""
        try:
            self.store.node_infos().get(node_name)
        except NodeNotFoundError:
            return
        raise NodeAlreadyExistsError(node_name)

    def _check_new_csi_node(self, node: Node | None, csi_node: CSINode) -> None:
        """Raise what `add_node_info` raises for ``csi_node``, before anything changes."""
        if node is not None:
            if csi_node.name != node.name:
                raise CsiSnapshotError(
                    f"csi node {csi_node.name} does not belong to node {node.name}"
                )
            self._check_node_absent(node.name)
        if csi_node.name in self.csi_snapshot:
            raise CsiSnapshotError(f"csi node {csi_node.name} already in snapshot")

    def remove_node_info(self, node_name: str) -> None:
        """Remove a node and its pods; with DRA also its node-local slices, the claims its pods
        own and their reservations of shared claims; its CSINode, if the NodeInfo has one, leaves
        the CSI snapshot (CA ``RemoveNodeInfo``).

        Raises:
            NodeNotFoundError: nothing is changed.
        """
        node_info = self.store.node_infos().get(node_name)
        self.store.remove_node_info(node_name)
        if self._dra_enabled:
            dra = self.dra_snapshot
            dra.remove_node_resource_slices(node_name)
            for pi in node_info.pods:
                if self._uses_dra(pi.pod):
                    dra.remove_pod_owned_claims(pi.pod)
        if node_info.csi_node is not None:
            self.csi_snapshot.remove_csi_node(node_name)

    def get_node_info(self, node_name: str) -> NodeInfo:
        """The stored NodeInfo (not a copy). Raises NodeNotFoundError."""
        return self.store.node_infos().get(node_name)

    def list_node_infos(self) -> Sequence[NodeInfo]:
        """The stored NodeInfos (not copies); no allocation per call."""
        return self.store.node_infos().list()

    def node_changes_since(self, token: object) -> tuple[object, list[str] | None]:
        """The store's change journal (`DeltaSnapshotStore.changes_since`): a new token and
        the names of the nodes whose NodeInfo may have changed since ``token``, or None when
        unknown (the store keeps no journal, or the node set changed)."""
        return self.store.changes_since(token)

    def force_add_pod(self, pod: Pod, node_name: str) -> None:
        """Add a pod to a node without running plugins; its PodInfo holds its claims as they
        are (CA ``ForceAddPod``: no reservation).

        Raises:
            NodeNotFoundError, DraSnapshotError (a claim of the pod is missing).
        """
        self.store.store_pod_info(self.new_pod_info(pod), node_name)

    def force_remove_pod(self, namespace: str, pod_name: str, node_name: str) -> None:
        """Remove a pod without running plugins. Raises NodeNotFoundError, PodNotFoundError."""
        self.store.remove_pod_info(namespace, pod_name, node_name)

    # ------------------------------------------------------------------ scheduling

    def _store_scheduled(self, pod: Pod, node_name: str, state: CycleState) -> None:
        """Reserve, then (with DRA) reserve the pod's claims and check they are allocated for
        the node, then store the PodInfo with its claims as they are now (CA
        ``SchedulePod``). The scheduler reserves claims at PreBind; CA does it here."""
        if not self._uses_dra(pod):
            if self.framework.has_reserve_plugins:
                self._runner.run_reserve_on_node(pod, node_name, state)
            try:
                self.store.store_pod_info(self._shared_pod_info(pod), node_name)
            except (NodeNotFoundError, ValueError) as e:
                raise SchedulingError.internal(pod, str(e)) from None
            return
        with self._dra_transaction():
            if self.framework.has_reserve_plugins:
                self._runner.run_reserve_on_node(pod, node_name, state)
            try:
                node = self.store.node_infos().get(node_name).node
                assert node is not None
                self.dra_snapshot.reserve_pod_claims(pod)
                claims = self.dra_snapshot.pod_claims(pod)  # as reserved: verify and store them
                self._verify_pod_claims(pod, node, claims)
                pod_info = PodInfo(pod, claims, pod_level_resources=self._pod_level_resources)
                self.store.store_pod_info(pod_info, node_name)
            except (NodeNotFoundError, ValueError) as e:
                message = str(e)
                if self.framework.has_reserve_plugins:
                    try:
                        self.framework.run_reserve_plugins_unreserve(state, pod, node_name)
                    except PluginError as failed:  # an Unreserve raised: report it too
                        message = f"{message}; {failed}"
                raise SchedulingError.internal(pod, message) from None

    def schedule_pod(self, pod: Pod, node_name: str) -> None:
        """Run PreFilter and Filter for ``node_name`` and, if they pass, Reserve and store the
        pod there. The pod object is stored as given (its nodeName is not changed).

        Raises:
            SchedulingError: FAILING_PREDICATE (plugin name and reasons) or INTERNAL_ERROR.
        """
        with self._binding:
            _, state = self._runner.run_filters_on_node(pod, node_name)
            self._store_scheduled(pod, node_name, state)

    def schedule_pod_on_any_node_matching(
        self,
        pod: Pod,
        is_node_acceptable: Callable[[NodeInfo], bool] | None = None,
        node_ordering: NodeOrderMapping | None = None,
    ) -> str:
        """Schedule on the first node that passes, trying nodes round robin from the one after
        the node chosen last (CA's default ordering).

        Returns:
            the chosen node's name.

        Raises:
            SchedulingError: NO_NODES_PASSING_PREDICATES, FAILING_PREDICATE (PreFilter) or
                INTERNAL_ERROR.
        """
        with self._binding:
            node_info, state = self._runner.run_filters_until_passing_node(
                pod, is_node_acceptable, node_ordering
            )
            assert node_info.node is not None
            name = node_info.node.name
            self._store_scheduled(pod, name, state)
        return name

    def schedule_pod_or_explain(self, pod: Pod) -> str | FitError:
        """Schedule the way kube-scheduler's scheduling cycle does (schedulePod + Reserve):
        the first node that passes, round robin after the node chosen last, cordoned nodes
        left to NodeUnschedulable.

        Returns:
            the chosen node's name, or the FitError whose ``message`` is kube-scheduler's
            (``0/N nodes are available: ...``), when no node passes, PreFilter rejects, or a
            Reserve plugin rejects the chosen node (``0/1 nodes are available: ...``).

        Raises:
            SchedulingError: INTERNAL_ERROR when a plugin fails with an Error status.
        """
        with self._binding:
            return self._schedule_or_explain(pod)

    def _schedule_or_explain(self, pod: Pod) -> str | FitError:
        found = self._runner.find_node(pod)
        if isinstance(found, FitError):
            return found
        node_info, state = found
        assert node_info.node is not None
        name = node_info.node.name
        return self.assume_pod(pod, name, state) or name

    def assume_pod(self, pod: Pod, node_name: str, state: CycleState) -> FitError | None:
        """Place ``pod`` on the node a scheduler chose, with the CycleState its PreFilter and
        Filter produced, without running Filter again: Reserve, then (with DRA) reserve the
        pod's claims and check they are allocated for the node (what kube-scheduler's PreBind
        writes), then store the PodInfo. Used after host selection (`schedsim.scheduler`).

        Returns:
            None when placed; the FitError ``0/1 nodes are available: ...`` when a Reserve
            plugin rejects the node (kube-scheduler's scheduling cycle reports it so).

        Raises:
            SchedulingError: INTERNAL_ERROR for an Error status or a node that vanished; the
                snapshot is unchanged.
        """
        try:
            with self._binding:
                self._store_scheduled(pod, node_name, state)
        except SchedulingError as e:
            if e.unexpected_error != RESERVE_REJECTED:
                raise
            status = Status(
                Code.Unschedulable, e.failing_predicate_reasons, e.failing_predicate_name
            )
            return FitError(1, Diagnosis(node_to_status={node_name: status}))
        return None

    @property
    def plugin_runner(self) -> SchedulerPluginRunner:
        """The runner of this snapshot's framework over its NodeInfos (the filter walk)."""
        return self._runner

    def unschedule_pod(self, namespace: str, pod_name: str, node_name: str) -> None:
        """Remove a scheduled pod from its node; with DRA its reservations are removed and
        claims it owns, or that nobody reserves any more, are deallocated (CA
        ``UnschedulePod``).

        Raises:
            NodeNotFoundError, PodNotFoundError, DraSnapshotError (a claim of the pod is
            missing); nothing is changed when it raises.
        """
        if self._dra_enabled:
            node_info = self.store.node_infos().get(node_name)
            for pi in node_info.pods:
                pod = pi.pod
                if pod.namespace == namespace and pod.name == pod_name:
                    if self._uses_dra(pod):
                        self.dra_snapshot.unreserve_pod_claims(pod)
                    break
        self.store.remove_pod_info(namespace, pod_name, node_name)

    def unschedule_pods_and_remove_node(self, node_name: str, pods: Sequence[Pod]) -> None:
        """`unschedule_pod` for each of ``pods`` (in order), then `remove_node_info`
        (what a removal simulation does first, CA ``findPlaceFor``): the same end state and
        the same first error, without removing from the node one by one the pods that hold
        no claims (the node goes with them). Time: O(pods on the node) plus one
        `unschedule_pod` per pod with claims; was a search and a copy-on-write per pod.

        Raises:
            NodeNotFoundError, PodNotFoundError, DraSnapshotError: as `unschedule_pod` and
                `remove_node_info` would; the changes made before are not undone (fork
                first, as a removal simulation does).
        """
        on_node = self.store.node_infos().get(node_name).pods
        names = {(pi.pod.namespace, pi.pod.name) for pi in on_node}
        if len({pi.pod.uid for pi in on_node}) != len(on_node) or len(names) != len(on_node):
            # two pods share a UID or a name: unschedule_pod removes by UID what it finds by
            # name, so only the one-by-one path says which pods stay
            for pod in pods:
                self.unschedule_pod(pod.namespace, pod.name, node_name)
            self.remove_node_info(node_name)
            return
        gone: set[tuple[str, str]] = set()
        for pod in pods:
            key = (pod.namespace, pod.name)
            if key not in names or key in gone:
                raise PodNotFoundError(pod.namespace, pod.name, node_name)
            gone.add(key)
            if self._dra_enabled and self._uses_dra(pod):
                self.unschedule_pod(pod.namespace, pod.name, node_name)
        self.remove_node_info(node_name)

    def check_predicates(self, pod: Pod, node_name: str) -> None:
        """Run PreFilter and Filter for one node without changing anything.

        Raises:
            SchedulingError: the pod does not fit (or the node is missing).
        """
        with self._binding:
            self._runner.run_filters_on_node(pod, node_name)

    def diagnose(self, pod: Pod) -> FitError:
        """Why ``pod`` fits nowhere: a `schedsim.framework.FitError` with every node's
        first failing status (kube-scheduler's Diagnosis). Does not mutate."""
        with self._binding:
            return self._runner.diagnose(pod)

    # ------------------------------------------------------------------ forking

    def fork(self) -> None:
        """Start a layer of changes that `revert` can undo (store, DRA, CSI and volume
        state)."""
        self.store.fork()
        self.dra_snapshot.fork()
        self.csi_snapshot.fork()
        self.volume_snapshot.fork()

    def forked(self) -> Forked:
        """A block of changes that ends committed or reverted (CA's ``WithForkedSnapshot``):

        .. code-block:: python

            with snapshot.forked() as fork:
                snapshot.schedule_pod(pod, "n1")
                fork.commit()  # keep it; without this call the block is reverted

        `fork` on entry; on exit `commit` when `Forked.commit` was called and the block
        raised nothing, else `revert` (exceptions included). Blocks nest. See
        `schedsim.snapshot.forked`.
        """
        return Forked(self)

    def revert(self) -> None:
        """Undo the changes since the last `fork` (no-op when not forked)."""
        self.store.revert()
        self.dra_snapshot.revert()
        self.csi_snapshot.revert()
        self.volume_snapshot.revert()

    def commit(self) -> None:
        """Keep the changes of the top layer in the layer below (no-op when not forked)."""
        self.store.commit()
        self.dra_snapshot.commit()
        self.csi_snapshot.commit()
        self.volume_snapshot.commit()

    def clear(self) -> None:
        """Empty and unforked, with empty DRA, CSI, storage and volume states."""
        self.store.clear()
        self.dra_snapshot = DraSnapshot(clone_on_fork=self.dra_snapshot.clone_on_fork)
        self.csi_snapshot = CsiSnapshot()
        self._set_storage_listers(StorageListers())
        self.volume_snapshot = VolumeSnapshot()

    def _set_storage_listers(self, listers: StorageListers) -> None:
        self.storage_listers = listers
        handle = self.framework.handle
        if handle.shared_lister.delegate is self:  # replaced during a binding: seen at once
            handle.storage_listers.delegate = listers

    def get_csi_node(self, name: str) -> CSINode | None:
        """The CSINode ``name`` now (the plugins' ``CSIManager``), or None."""
        return self.csi_snapshot.get_csi_node(name)

    def list_csi_nodes(self) -> Sequence[CSINode]:
        """Every CSINode now."""
        return self.csi_snapshot.list()

    def get_persistent_volume(self, name: str) -> PersistentVolume | None:
        """The PV ``name`` now (bindings made in the snapshot included), or None."""
        return self.volume_snapshot.get_persistent_volume(name)

    def get_persistent_volume_claim(
        self, namespace: str, name: str
    ) -> PersistentVolumeClaim | None:
        """The PVC ``namespace/name`` now, or None."""
        return self.volume_snapshot.get_persistent_volume_claim(namespace, name)

    def list_persistent_volumes(self, storage_class: str) -> Sequence[PersistentVolume]:
        """The PVs of class ``storage_class`` now, in input order."""
        return self.volume_snapshot.list_persistent_volumes(storage_class)

    def assume_persistent_volume(self, pv: PersistentVolume) -> None:
        """Replace a PV (VolumeBinding's Reserve/PreBind); undone by `revert`. Raises
        KeyError for an unknown PV."""
        self.volume_snapshot.assume_persistent_volume(pv)

    def assume_persistent_volume_claim(self, pvc: PersistentVolumeClaim) -> None:
        """Replace a PVC (VolumeBinding's Reserve/PreBind); undone by `revert`. Raises
        KeyError for an unknown PVC."""
        self.volume_snapshot.assume_persistent_volume_claim(pvc)

    def get_resource_claim(self, namespace: str, name: str) -> ResourceClaim | None:
        """The claim ``namespace/name`` now, or None."""
        return self.dra_snapshot.resource_claim(namespace, name)

    def list_resource_claims(self) -> Sequence[ResourceClaim]:
        """Every claim."""
        return self.dra_snapshot.list_resource_claims()

    def list_all_allocated_devices(self) -> frozenset[DeviceId]:
        """Devices allocated to any claim (admin-access results excluded)."""
        return self.dra_snapshot.list_all_allocated_devices()

    def claim_changes_since(self, token: object) -> tuple[object, Sequence[tuple[str, str]] | None]:
        """The DRA snapshot's claim change feed (`DraSnapshot.claim_changes_since`)."""
        return self.dra_snapshot.claim_changes_since(token)

    def slices_stamp(self) -> int:
        """The DRA snapshot's `DraSnapshot.slices_stamp`."""
        return self.dra_snapshot.slices_stamp()

    def device_classes_stamp(self) -> int:
        """The DRA snapshot's `DraSnapshot.device_classes_stamp`."""
        return self.dra_snapshot.device_classes_stamp()

    def signal_claim_pending_allocation(
        self, claim_uid: str, allocated_claim: ResourceClaim
    ) -> None:
        """Write the allocation Reserve made into the DRA snapshot; raises DraSnapshotError."""
        self.dra_snapshot.signal_claim_pending_allocation(claim_uid, allocated_claim)

    def update_resource_claim(self, claim: ResourceClaim) -> None:
        """Replace a claim (PreBind / PostFilter writes); raises DraSnapshotError."""
        self.dra_snapshot.update_claim(claim)

    def create_resource_claim(self, claim: ResourceClaim) -> None:
        """Add a claim made by a plugin; raises DraSnapshotError if it exists."""
        self.dra_snapshot.add_claims((claim,))

    def delete_resource_claim(self, namespace: str, name: str) -> None:
        """Remove a claim; raises DraSnapshotError if it is unknown."""
        self.dra_snapshot.remove_claim(namespace, name)

    def list_resource_slices(self) -> Sequence[ResourceSlice]:
        """Every ResourceSlice."""
        return self.dra_snapshot.list_resource_slices()

    def get_device_class(self, name: str) -> DeviceClass | None:
        """The DeviceClass ``name``, or None."""
        return self.dra_snapshot.device_class(name)

    def list_device_classes(self) -> Sequence[DeviceClass]:
        """Every DeviceClass."""
        return self.dra_snapshot.list_device_classes()
