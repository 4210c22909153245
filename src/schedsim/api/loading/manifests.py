"""`Manifests`: the objects read from the inputs, by kind, in input order, with the file each
came from; and the table of the kinds schedsim decodes (`KINDS`: decoder, `Manifests` list,
namespaced or not). Two objects of one kind, namespace and name are an error
(``duplicate object``), as the API server refuses creating the second.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from typing import Any

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
from schedsim.api.errors import ManifestError, first_few
from schedsim.api.loading.kwok import ResourcePatch
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

__all__ = ["KINDS", "NOT_RUN", "ManifestObject", "Manifests", "describe_object", "object_key"]

ManifestObject = (
    Node
    | Pod
    | DeviceClass
    | ResourceClaim
    | ResourceClaimTemplate
    | ResourceSlice
    | CSINode
    | PersistentVolume
    | PersistentVolumeClaim
    | StorageClass
    | VolumeAttachment
    | CSIDriver
    | CSIStorageCapacity
    | Namespace
    | Service
    | PriorityClass
    | PodDisruptionBudget
    | LimitRange
    | RuntimeClass
    | ReplicaSet
    | ReplicationController
    | Deployment
    | StatefulSet
    | DaemonSet
    | Job
)

# kind -> (decoder, Manifests attribute, namespaced). Cluster-scoped kinds ignore
# metadata.namespace, as the API server does; namespaced ones default it to "default".
KINDS: Mapping[str, tuple[Callable[[Mapping[str, Any]], ManifestObject], str, bool]] = {
    "Node": (Node.from_manifest, "nodes", False),
    "Pod": (Pod.from_manifest, "pods", True),
    "DeviceClass": (DeviceClass.from_manifest, "device_classes", False),
    "ResourceClaim": (ResourceClaim.from_manifest, "resource_claims", True),
    "ResourceClaimTemplate": (
        ResourceClaimTemplate.from_manifest,
        "resource_claim_templates",
        True,
    ),
    "ResourceSlice": (ResourceSlice.from_manifest, "resource_slices", False),
    "CSINode": (CSINode.from_manifest, "csi_nodes", False),
    "PersistentVolume": (PersistentVolume.from_manifest, "persistent_volumes", False),
    "PersistentVolumeClaim": (
        PersistentVolumeClaim.from_manifest,
        "persistent_volume_claims",
        True,
    ),
    "StorageClass": (StorageClass.from_manifest, "storage_classes", False),
    "VolumeAttachment": (VolumeAttachment.from_manifest, "volume_attachments", False),
    "CSIDriver": (CSIDriver.from_manifest, "csi_drivers", False),
    "CSIStorageCapacity": (CSIStorageCapacity.from_manifest, "csi_storage_capacities", True),
    "Namespace": (Namespace.from_manifest, "namespaces", False),
    "Service": (Service.from_manifest, "services", True),
    "PriorityClass": (PriorityClass.from_manifest, "priority_classes", False),
    "PodDisruptionBudget": (PodDisruptionBudget.from_manifest, "pod_disruption_budgets", True),
    "LimitRange": (LimitRange.from_manifest, "limit_ranges", True),
    "RuntimeClass": (RuntimeClass.from_manifest, "runtime_classes", False),
    "ReplicaSet": (ReplicaSet.from_manifest, "replica_sets", True),
    "ReplicationController": (
        ReplicationController.from_manifest,
        "replication_controllers",
        True,
    ),
    "Deployment": (Deployment.from_manifest, "deployments", True),
    "StatefulSet": (StatefulSet.from_manifest, "stateful_sets", True),
    "DaemonSet": (DaemonSet.from_manifest, "daemon_sets", True),
    "Job": (Job.from_manifest, "jobs", True),
}
_ATTRIBUTE = {
    getattr(decoder, "__self__"): attr  # noqa: B009 (bound classmethod -> its class)
    for decoder, attr, _ in KINDS.values()
}
_NAMESPACED = frozenset(kind for kind, (_, _, namespaced) in KINDS.items() if namespaced)

# Kinds that are read but deliberately not run, with why (one warning line each).
NOT_RUN = {
    "CronJob": "CronJobs create Jobs on a schedule, which schedsim does not run; give the "
    "Job (or its pods) instead",
}


def object_key(obj: ManifestObject) -> tuple[str, str, str]:
    """(kind, namespace, name) identifying an object for the duplicate check."""
    namespace = getattr(obj, "namespace", "") if type(obj).__name__ in _NAMESPACED else ""
    return (type(obj).__name__, namespace, obj.name)


@attrs.define
class Manifests:
    """Objects read from the inputs, in input order.

    Attributes:
        nodes: decoded Nodes.
        pods: decoded Pods (bound and pending), then the pods of workload controllers
            (`schedsim.api.apps.controllers.expand_workloads`).
        warnings: things the user should know, one line each: kinds not modelled, in one
            line with counts (``skipped kinds not modelled by schedsim: 2 ConfigMap,
            1 Ingress``); CronJobs; ``no objects found in FILE``; and (from `load_paths`)
            one line per node-local ResourceSlice or CSINode whose node is not among the
            nodes.
        device_classes: decoded DeviceClasses (resource.k8s.io).
        resource_claims: decoded ResourceClaims.
        resource_claim_templates: decoded ResourceClaimTemplates.
        resource_slices: decoded ResourceSlices.
        csi_nodes: decoded CSINodes (storage.k8s.io).
        persistent_volumes: decoded PersistentVolumes.
        persistent_volume_claims: decoded PersistentVolumeClaims (and the pending claims of
            StatefulSet volumeClaimTemplates).
        storage_classes: decoded StorageClasses.
        volume_attachments: decoded VolumeAttachments.
        csi_drivers: decoded CSIDrivers.
        csi_storage_capacities: decoded CSIStorageCapacities.
        namespaces: decoded Namespaces.
        services: decoded Services.
        priority_classes: decoded PriorityClasses.
        pod_disruption_budgets: decoded PodDisruptionBudgets (policy/v1).
        limit_ranges: decoded LimitRanges (their defaults and limits apply to the pods
            created in their namespace: `schedsim.api.loading.admission`).
        runtime_classes: decoded RuntimeClasses (node.k8s.io/v1; their overhead and
            scheduling apply to the pods that name them).
        replica_sets: decoded ReplicaSets (and those created for Deployments).
        replication_controllers: decoded ReplicationControllers.
        deployments: decoded Deployments.
        stateful_sets: decoded StatefulSets.
        daemon_sets: decoded DaemonSets.
        jobs: decoded Jobs.
        skipped: kind -> number of objects of a kind schedsim does not model.
        scheduler_config: the KubeSchedulerConfiguration embedded in a kube-scheduler-simulator
            export (``apiVersion``/``kind`` filled in), or None.
        scheduler_config_source: the file it came from.
        ca_node_groups: the node-groups document made from a Cluster Autoscaler debugging
            snapshot's ``TemplateNodes`` (`schedsim.api.loading.ca_snapshot`), or None.
        ca_node_groups_source: the file it came from.
        kwok_patches: the ``ResourcePatch`` changes of KWOK recordings
            (`schedsim.api.loading.kwok`), in input order; not applied to the objects.
        kwok_nodes: the Node objects (as read) of the files with such changes, by name: what
            a recorded Node patch applies to.
        kwok_warnings: the warning line of each such file (also in `warnings`), which a
            replay, applying the changes, does not repeat.
        raw_objects: with ``keep_raw=True``, (kind, object as read) of every Pod, Node,
            PersistentVolume, PersistentVolumeClaim, StorageClass, PriorityClass and
            Namespace in input order (what ``--output kss`` writes back); else empty.
    """

    nodes: list[Node] = attrs.field(factory=list)
    pods: list[Pod] = attrs.field(factory=list)
    warnings: list[str] = attrs.field(factory=list)
    device_classes: list[DeviceClass] = attrs.field(factory=list)
    resource_claims: list[ResourceClaim] = attrs.field(factory=list)
    resource_claim_templates: list[ResourceClaimTemplate] = attrs.field(factory=list)
    resource_slices: list[ResourceSlice] = attrs.field(factory=list)
    csi_nodes: list[CSINode] = attrs.field(factory=list)
    persistent_volumes: list[PersistentVolume] = attrs.field(factory=list)
    persistent_volume_claims: list[PersistentVolumeClaim] = attrs.field(factory=list)
    storage_classes: list[StorageClass] = attrs.field(factory=list)
    volume_attachments: list[VolumeAttachment] = attrs.field(factory=list)
    csi_drivers: list[CSIDriver] = attrs.field(factory=list)
    csi_storage_capacities: list[CSIStorageCapacity] = attrs.field(factory=list)
    namespaces: list[Namespace] = attrs.field(factory=list)
    services: list[Service] = attrs.field(factory=list)
    priority_classes: list[PriorityClass] = attrs.field(factory=list)
    pod_disruption_budgets: list[PodDisruptionBudget] = attrs.field(factory=list)
    limit_ranges: list[LimitRange] = attrs.field(factory=list)
    runtime_classes: list[RuntimeClass] = attrs.field(factory=list)
    replica_sets: list[ReplicaSet] = attrs.field(factory=list)
    replication_controllers: list[ReplicationController] = attrs.field(factory=list)
    deployments: list[Deployment] = attrs.field(factory=list)
    stateful_sets: list[StatefulSet] = attrs.field(factory=list)
    daemon_sets: list[DaemonSet] = attrs.field(factory=list)
    jobs: list[Job] = attrs.field(factory=list)
    skipped: dict[str, int] = attrs.field(factory=dict)
    # read from the inputs, not object lists (a Cluster reaches them through its origin)
    scheduler_config: Mapping[str, Any] | None = attrs.field(default=None, init=False)
    scheduler_config_source: str = attrs.field(default="", init=False)
    ca_node_groups: Mapping[str, Any] | None = attrs.field(default=None, init=False)
    ca_node_groups_source: str = attrs.field(default="", init=False)
    kwok_patches: list[ResourcePatch] = attrs.field(factory=list, init=False)
    kwok_nodes: dict[str, Mapping[str, Any]] = attrs.field(factory=dict, init=False)
    kwok_warnings: list[str] = attrs.field(factory=list, init=False)
    raw_objects: list[tuple[str, Mapping[str, Any]]] = attrs.field(factory=list, init=False)
    _not_run: dict[str, list[str]] = attrs.field(factory=dict, init=False, repr=False)
    _seen: dict[tuple[str, str, str], str] = attrs.field(factory=dict, init=False, repr=False)

    def extend(self, other: Manifests) -> None:
        """Append another batch, checking for duplicate objects across files."""
        for _, attr, _ in KINDS.values():
            for obj in getattr(other, attr):
                self._add(obj, other._seen[object_key(obj)])
        self.warnings.extend(other.warnings)
        for kind, n in other.skipped.items():
            self.skipped[kind] = self.skipped.get(kind, 0) + n
        for kind, names in other._not_run.items():
            self._not_run.setdefault(kind, []).extend(names)
        self.raw_objects.extend(other.raw_objects)
        if other.scheduler_config is not None:
            self._set_scheduler_config(other.scheduler_config, other.scheduler_config_source)
        if other.ca_node_groups is not None:
            self._set_ca_node_groups(other.ca_node_groups, other.ca_node_groups_source)
        self.kwok_patches.extend(other.kwok_patches)
        self.kwok_nodes.update(other.kwok_nodes)
        self.kwok_warnings.extend(other.kwok_warnings)

    def _set_ca_node_groups(self, groups: Mapping[str, Any], source: str) -> None:
        if self.ca_node_groups is not None:
            raise ManifestError(
                f"{source}: Cluster Autoscaler snapshot: TemplateNodes: a second snapshot's "
                f"node groups (the first are in {self.ca_node_groups_source}); give one "
                "snapshot, or --node-groups FILE"
            )
        self.ca_node_groups, self.ca_node_groups_source = groups, source

    def _set_scheduler_config(self, config: Mapping[str, Any], source: str) -> None:
        if self.scheduler_config is not None:
            raise ManifestError(
                f"{source}: kube-scheduler-simulator export: schedulerConfig: a second "
                f"scheduler configuration (the first is in {self.scheduler_config_source}); "
                "give one export, or --config"
            )
        self.scheduler_config, self.scheduler_config_source = config, source

    def source_of(self, obj: ManifestObject) -> str:
        """The file (or ``<stdin>``, ``<example ...>``) ``obj`` was read from; ``?`` for an
        object that did not come through this Manifests."""
        return self._seen.get(object_key(obj), "?")

    def add(self, obj: ManifestObject, source: str) -> None:
        """Record ``obj`` (one of the decoded kinds) read from, or made for an object of,
        ``source``.

        Raises:
            ManifestError: an object of that kind, namespace and name is already there.
        """
        self._add(obj, source)

    def _add(self, obj: ManifestObject, source: str) -> None:
        """Record ``obj`` read from ``source``; a duplicate raises ManifestError."""
        self._claim(object_key(obj), source)
        getattr(self, _ATTRIBUTE[type(obj)]).append(obj)

    def _claim(self, key: tuple[str, str, str], source: str) -> None:
        first = self._seen.get(key)
        if first is not None:
            kind, ns, name = key
            raise ManifestError(
                f"{source}: {describe_object(kind, ns, name)}: metadata.name: duplicate object "
                f"(first seen in {first})"
            )
        self._seen[key] = source

    def summary_warnings(self) -> list[str]:
        """The aggregated lines for kinds not modelled and kinds not run (CronJob)."""
        out = []
        if self.skipped:
            counts = ", ".join(
                f"{n} {kind}{_did_you_mean(kind)}" for kind, n in sorted(self.skipped.items())
            )
            out.append(f"skipped kinds not modelled by schedsim: {counts}")
        for kind, names in sorted(self._not_run.items()):
            shown = first_few(names)
            out.append(f"skipped {len(names)} {kind} object(s) ({shown}): {NOT_RUN[kind]}")
        return out


def _did_you_mean(kind: str) -> str:
    """`` (did you mean Pod?)`` for a skipped kind one typo away from a kind schedsim reads
    (kinds are case-sensitive: ``pod`` is not ``Pod`` for the API server either)."""
    close = difflib.get_close_matches(kind, KINDS, n=1, cutoff=0.75)
    if not close:
        close = [k for k in KINDS if k.lower() == kind.lower()]
    return f" (did you mean {close[0]}?)" if close else ""


def describe_object(kind: str, namespace: str, name: str) -> str:
    """``KIND NS/NAME``; a name or namespace that is not printable is shown escaped (a
    terminal escape sequence in a name is never printed raw)."""
    key = f"{namespace}/{name}" if namespace else name
    return f"{kind} {key if key.isprintable() else repr(key)}"
