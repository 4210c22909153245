"""`Cluster`: a loaded cluster, the one place where manifests become simulation state.

Every command, replay and sweep starts from a Cluster: it holds the objects read from the
inputs (immutable, picklable, so a process pool can ship it to workers once) and builds, per
run, the fresh state a run mutates: the `DraSnapshot`, the `CsiSnapshot`, the
`StorageListers` and the ready `PredicateSnapshot` holding the nodes and bound pods.
Nothing else wires stores or DRA/CSI snapshots by hand.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

from schedsim.api.apps.workloads import (
    DaemonSet,
    Deployment,
    Job,
    ReplicaSet,
    ReplicationController,
    StatefulSet,
)
from schedsim.api.core import Node, Pod
from schedsim.api.core.limitrange import LimitRange
from schedsim.api.loading.loader import Manifests, load_paths, load_text
from schedsim.api.policy import Namespace, PodDisruptionBudget, PriorityClass, Service
from schedsim.api.resource import DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice
from schedsim.api.runtimeclass import RuntimeClass
from schedsim.api.storage import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    VolumeAttachment,
)
from schedsim.dra.validation import check_cel_selectors
from schedsim.framework.object_listers import ObjectListers
from schedsim.framework.runtime import Framework
from schedsim.framework.volume_listers import StorageListers
from schedsim.snapshot.csi import CsiSnapshot
from schedsim.snapshot.dra import DraSnapshot
from schedsim.snapshot.predicate import PredicateSnapshot
from schedsim.snapshot.store import ClusterSnapshotStore

__all__ = ["Cluster"]


def _tuple(items: Sequence[object]) -> tuple[object, ...]:
    return tuple(items)


@attrs.frozen
class Cluster:
    """The objects of a cluster, as read (frozen and picklable; runs never change it).

    Build it with `from_manifests`, `from_paths` or `from_text`; or directly from objects
    (``Cluster(nodes=[...], pods=[...], resource_claims=[...])``: sequences become tuples).

    Attributes:
        nodes: the Nodes, in input order.
        pods: bound and pending Pods, in input order (terminal ones included; runs skip them).
        device_classes, resource_claims, resource_claim_templates, resource_slices: the DRA
            objects (resource.k8s.io/v1).
        csi_nodes: the CSINodes (per-driver volume limits).
        persistent_volumes, persistent_volume_claims, storage_classes, volume_attachments:
            the storage objects the volume plugins read through informer-like listers.
        csi_drivers, csi_storage_capacities: the other storage.k8s.io kinds.
        namespaces, services, priority_classes, pod_disruption_budgets: what spreading,
            affinity, preemption and drain rules read.
        limit_ranges, runtime_classes: what loading admitted the pods with (their defaults,
            overhead and scheduling are in ``pods`` already).
        replica_sets, replication_controllers, deployments, stateful_sets, daemon_sets,
            jobs: the workload controllers (their pods are in ``pods`` once expanded).
        warnings: what loading had to say (skipped kinds, unknown nodes), one line each.
        origin: the `Manifests` the cluster was made from (names files in error messages),
            or None; not compared.
    """

    nodes: tuple[Node, ...] = attrs.field(default=(), converter=_tuple)
    pods: tuple[Pod, ...] = attrs.field(default=(), converter=_tuple)
    device_classes: tuple[DeviceClass, ...] = attrs.field(default=(), converter=_tuple)
    resource_claims: tuple[ResourceClaim, ...] = attrs.field(default=(), converter=_tuple)
    resource_claim_templates: tuple[ResourceClaimTemplate, ...] = attrs.field(
        default=(), converter=_tuple
    )
    resource_slices: tuple[ResourceSlice, ...] = attrs.field(default=(), converter=_tuple)
    csi_nodes: tuple[CSINode, ...] = attrs.field(default=(), converter=_tuple)
    persistent_volumes: tuple[PersistentVolume, ...] = attrs.field(default=(), converter=_tuple)
    persistent_volume_claims: tuple[PersistentVolumeClaim, ...] = attrs.field(
        default=(), converter=_tuple
    )
    storage_classes: tuple[StorageClass, ...] = attrs.field(default=(), converter=_tuple)
    volume_attachments: tuple[VolumeAttachment, ...] = attrs.field(default=(), converter=_tuple)
    csi_drivers: tuple[CSIDriver, ...] = attrs.field(default=(), converter=_tuple)
    csi_storage_capacities: tuple[CSIStorageCapacity, ...] = attrs.field(
        default=(), converter=_tuple
    )
    namespaces: tuple[Namespace, ...] = attrs.field(default=(), converter=_tuple)
    services: tuple[Service, ...] = attrs.field(default=(), converter=_tuple)
    priority_classes: tuple[PriorityClass, ...] = attrs.field(default=(), converter=_tuple)
    pod_disruption_budgets: tuple[PodDisruptionBudget, ...] = attrs.field(
        default=(), converter=_tuple
    )
    limit_ranges: tuple[LimitRange, ...] = attrs.field(default=(), converter=_tuple)
    runtime_classes: tuple[RuntimeClass, ...] = attrs.field(default=(), converter=_tuple)
    replica_sets: tuple[ReplicaSet, ...] = attrs.field(default=(), converter=_tuple)
    replication_controllers: tuple[ReplicationController, ...] = attrs.field(
        default=(), converter=_tuple
    )
    deployments: tuple[Deployment, ...] = attrs.field(default=(), converter=_tuple)
    stateful_sets: tuple[StatefulSet, ...] = attrs.field(default=(), converter=_tuple)
    daemon_sets: tuple[DaemonSet, ...] = attrs.field(default=(), converter=_tuple)
    jobs: tuple[Job, ...] = attrs.field(default=(), converter=_tuple)
    warnings: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    origin: Manifests | None = attrs.field(default=None, eq=False, repr=False)

    # ------------------------------------------------------------------ named constructors

    @classmethod
    def from_manifests(cls, manifests: Manifests) -> Cluster:
        """The cluster of objects read by `schedsim.api.load_paths` / ``decode_objects``:
        every kind `Manifests` keeps, in input order.

        Time: O(objects); the objects are shared, not copied.
        """
        kinds = {f.name: getattr(manifests, f.name) for f in _OBJECT_FIELDS}
        return cls(**kinds, origin=manifests)

    @classmethod
    def from_paths(
        cls,
        paths: Sequence[str],
        stdin_text: Callable[[], str] | None = None,
        *,
        expand_workloads: bool = True,
        validate: str = "strict",
        keep_raw: bool = False,
        workload_scale: float = 1.0,
    ) -> Cluster:
        """Load files, directories (their ``.yaml``/``.yml``/``.json`` files) and ``-`` (stdin).

        With ``expand_workloads`` (the default) the workload controllers' pods are created
        (`schedsim.api.apps.controllers.expand_workloads`). ``validate`` (``strict``, ``warn``,
        ``ignore``: unknown fields), ``keep_raw`` and ``workload_scale`` (every workload
        controller's size times this, `schedsim.api.apps.workload_scale`) are
        `schedsim.api.load_paths`'s.

        Raises:
            ManifestError: ``FILE: KIND NS/NAME: FIELD: problem`` (see `schedsim.api.load_paths`).
        """
        return cls.from_manifests(
            load_paths(
                paths,
                stdin_text,
                expand_workloads=expand_workloads,
                validate=validate,
                keep_raw=keep_raw,
                workload_scale=workload_scale,
            )
        )

    @classmethod
    def from_text(
        cls,
        text: str,
        source: str = "<text>",
        *,
        expand_workloads: bool = True,
        validate: str = "strict",
        keep_raw: bool = False,
    ) -> Cluster:
        """Parse manifest text (YAML; JSON when ``source`` ends in ``.json``); the options as
        in `from_paths`.

        Raises:
            ManifestError: as `from_paths`, naming ``source``.
        """
        return cls.from_manifests(
            load_text(
                text,
                source,
                expand_workloads=expand_workloads,
                validate=validate,
                keep_raw=keep_raw,
            )
        )

    # ------------------------------------------------------------------ checks

    def check(self, *, consumable_capacity: bool = False) -> None:
        """What the API server would refuse that loading cannot check alone: CEL selectors
        that do not compile (their environment depends on the DRAConsumableCapacity gate).

        Raises:
            ManifestError: ``FILE: KIND NS/NAME: ...selectors[k].cel.expression: problem``.
        """
        source = self.origin
        if source is None:  # made from objects: no file names
            source = Manifests(
                device_classes=list(self.device_classes),
                resource_claims=list(self.resource_claims),
                resource_claim_templates=list(self.resource_claim_templates),
            )
        check_cel_selectors(source, consumable_capacity=consumable_capacity)

    # ------------------------------------------------------------------ per-run state

    def bound_pods(self, *, place_nominated: bool = True) -> list[Pod]:
        """Live pods with ``spec.nodeName``, else ``status.nominatedNodeName`` (as CA places
        them; ``place_nominated=False``: only ``spec.nodeName``, as kube-scheduler, for which a
        nominated pod is still pending), in input order."""
        return _bound(self.pods, place_nominated)

    def dra_snapshot(self) -> DraSnapshot:
        """A new DRA snapshot of the claims, slices and device classes (runs mutate it).

        Raises:
            DraSnapshotError: two claims, slices or classes share a name.
        """
        return DraSnapshot.from_objects(
            self.resource_claims, self.resource_slices, self.device_classes
        )

    def csi_snapshot(self) -> CsiSnapshot:
        """A new CSI snapshot of the CSINodes."""
        return CsiSnapshot(self.csi_nodes)

    def storage_listers(self) -> StorageListers:
        """The PVs, PVCs, StorageClasses, VolumeAttachments, CSIDrivers and
        CSIStorageCapacities, indexed; pre-bound claims and PV phases settled as the PV
        controller would (`schedsim.api.storage.pvcontroller.complete_bindings`: hand-written
        manifests rarely carry the bind-completed annotation and PV phase that VolumeBinding
        reads).

        Raises:
            ValueError: two objects of one kind share a name.
        """
        return StorageListers.from_objects(
            self.persistent_volumes,
            self.persistent_volume_claims,
            self.storage_classes,
            self.volume_attachments,
            csi_drivers=self.csi_drivers,
            csi_storage_capacities=self.csi_storage_capacities,
            pv_controller=True,
        )

    def object_listers(self) -> ObjectListers:
        """The Namespaces, Services, ReplicationControllers, ReplicaSets and StatefulSets,
        indexed (what PodTopologySpread and InterPodAffinity read through
        ``handle.object_listers``), and the PodDisruptionBudgets with their allowed
        disruptions resolved against the cluster's pods (what DefaultPreemption reads).

        Raises:
            ValueError: two objects of one kind share a name.
        """
        return ObjectListers.from_objects(
            self.namespaces,
            self.services,
            self.replication_controllers,
            self.replica_sets,
            self.stateful_sets,
            [b.resolve_disruptions_allowed(self.pods) for b in self.pod_disruption_budgets],
        )

    def snapshot(
        self,
        framework: Framework,
        store: ClusterSnapshotStore | None = None,
        *,
        skip_unschedulable_nodes: bool = True,
        dra_snapshot: DraSnapshot | None = None,
        csi_snapshot: CsiSnapshot | None = None,
        storage_listers: StorageListers | None = None,
        pods: Sequence[Pod] | None = None,
        nodes: Sequence[Node] | None = None,
        place_nominated: bool = True,
    ) -> tuple[PredicateSnapshot, list[Pod]]:
        """A ready snapshot: the nodes with their bound pods (`bound_pods`), the DRA, CSI and
        storage state, scheduling through ``framework`` (bound to it per operation, never
        written into it).

        Args:
            framework: the profile to schedule with (built once, shared by many snapshots).
            store: the store (a new delta store by default).
            skip_unschedulable_nodes: see `PredicateSnapshot`.
            dra_snapshot, csi_snapshot, storage_listers: per-run state to use (not copied)
                instead of new ones built from the cluster's objects (`dra_snapshot`,
                `csi_snapshot`, `storage_listers`), e.g. state a test built by hand.
            pods: where the running pods come from instead of the cluster's pods (e.g.
                without the expendable ones).
            nodes: the cluster's nodes in another order (the snapshot lists them in this
                order, e.g. kube-scheduler's node tree, `schedsim.scheduler.node_tree_order`).
            place_nominated: place unbound pods with ``status.nominatedNodeName`` on that
                node, as the Cluster Autoscaler does (True); False leaves them out, for
                kube-scheduler placement, which schedules them as pending pods.

        Returns:
            the snapshot, and the bound pods whose node is not among the nodes (skipped).

        Raises:
            DraSnapshotError: the DRA objects are inconsistent, or a bound pod's claim is
                missing.
            ValueError: two storage objects of one kind share a name.
            NodeAlreadyExistsError: two nodes share a name.
        """
        snap = PredicateSnapshot(
            framework, store, skip_unschedulable_nodes=skip_unschedulable_nodes
        )
        skipped = snap.set_cluster_state(
            self.nodes if nodes is None else nodes,
            _bound(self.pods if pods is None else pods, place_nominated),
            dra_snapshot if dra_snapshot is not None else self.dra_snapshot(),
            csi_snapshot=csi_snapshot if csi_snapshot is not None else self.csi_snapshot(),
            storage_listers=storage_listers
            if storage_listers is not None
            else self.storage_listers(),
        )
        return snap, skipped


def _bound(pods: Sequence[Pod], place_nominated: bool = True) -> list[Pod]:
    if not place_nominated:
        return [p for p in pods if not p.is_terminal and p.node_name]
    # CA: a pod bound (spec.nodeName), being deleted or not, counts on its node; one only
    # nominated is placed there unless it is being deleted (not among CA's unschedulable pods)
    return [
        p
        for p in pods
        if not p.is_terminal
        and (p.node_name or (p.nominated_node_name and p.deletion_timestamp is None))
    ]


_OBJECT_FIELDS = tuple(f for f in attrs.fields(Cluster) if f.name != "origin")
