"""The command line's side of kube-scheduler-simulator exports (`schedsim.api.loading.kss`): the
profile of an export's embedded ``schedulerConfig``, and ``simulate --output kss``.

The embedded configuration is used unless ``--config`` is given (as the simulator's import
restarts its scheduler with it, ``snapshot.Service.Load``); it is decoded by the same function
as a ``--config`` file (`schedsim.framework.scheduler_config`).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any

from schedsim.api.apps.pod_manifests import controller_manifests, toleration_manifest
from schedsim.api.core.limitrange import LIMIT_RANGER_ANNOTATION
from schedsim.api.errors import FieldError, ManifestError
from schedsim.api.loading.kss import KssPodResult, export_document, scheduler_config_document
from schedsim.api.loading.loader import read_documents
from schedsim.api.loading.manifests import Manifests
from schedsim.api.quantity import format_quantity
from schedsim.cli.options import EMBEDDED_CONFIG_HINT
from schedsim.cli.output import warn
from schedsim.engine import Cluster
from schedsim.framework.scheduler_config import (
    SchedulerConfiguration,
    scheduler_configuration_from_mapping,
)
from schedsim.scheduler.scheduling import SimulationResult

__all__ = ["embedded_profile", "to_kss"]


def embedded_profile(
    config_file: str | None, cluster: Cluster
) -> tuple[SchedulerConfiguration, str] | None:
    """The export's ``schedulerConfig`` (every profile) and the file it came from; None
    without one, or when ``config_file`` (``--config``) overrides it (a note on stderr says
    so). The decoder's warnings (fields without effect on a simulation) go to stderr.

    Raises:
        ManifestError: ``FILE: kube-scheduler-simulator export: schedulerConfig.FIELD:
            problem`` for a configuration kube-scheduler would refuse.
    """
    manifests = cluster.origin
    raw = None if manifests is None else manifests.scheduler_config
    if manifests is None or raw is None:
        return None
    source = manifests.scheduler_config_source
    if config_file:
        print(
            f"note: --config {config_file} is used instead of the schedulerConfig of {source}",
            file=sys.stderr,
        )
        return None
    where = f"{source}: kube-scheduler-simulator export: schedulerConfig"
    try:
        config = scheduler_configuration_from_mapping(raw)
    except FieldError as e:
        # kube-scheduler 1.34 would refuse this configuration, so no --validate mode relaxes
        # it; --config replaces it
        raise ManifestError(f"{where}.{e.field}: {e.problem}; {EMBEDDED_CONFIG_HINT}") from None
    for w in config.warnings:
        warn(f"{where}: {w}")
    return config, source


def to_kss(config_file: str | None, cluster: Cluster, result: SimulationResult) -> str:
    """The input as a kube-scheduler-simulator export after the run (JSON text); pods
    preemption evicted are left out (kube-scheduler deletes them).

    Every pod the run placed or failed is written: the input's own as read, and those
    schedsim created from workload controllers (and StatefulSet claims) as the controllers
    would have created them (`schedsim.api.apps.pod_manifests`). A pod with explanations
    carries the simulator's full annotation set for its last attempt and ``result-history``
    for all its attempts.

    The cluster must have been loaded with ``keep_raw=True``. Kinds the format has no place
    for are left out with a warning on stderr. A pod that LimitRanger or RuntimeClass
    admission applies to is written as an API server stores it (`_as_admitted`), since the
    LimitRanges and RuntimeClasses themselves are left out.
    """
    # victims of preemption are deleted, as kube-scheduler deletes them
    preempted = {(o.pod.namespace, o.pod.name) for o in result.outcomes if o.preempted_by}
    results = {
        (o.pod.namespace, o.pod.name): KssPodResult(
            node=o.node_name,
            message=o.message,
            reason="SchedulerError" if o.error else "Unschedulable",
            annotations={} if o.explanation is None else o.explanation.kss_annotations(),
            history=tuple(e.kss_annotations() for e in o.history),
        )
        for o in result.outcomes
        # gated: never attempted; being deleted: skipped (skipPodSchedule returns before any
        # status update): kube-scheduler writes no result for either
        if not o.pod.scheduling_gates and not o.preempted_by and not o.skipped
    }
    left_out = {
        "DeviceClass": len(cluster.device_classes),
        "ResourceClaim": len(cluster.resource_claims),
        "ResourceClaimTemplate": len(cluster.resource_claim_templates),
        "ResourceSlice": len(cluster.resource_slices),
        "CSINode": len(cluster.csi_nodes),
        "VolumeAttachment": len(cluster.volume_attachments),
        "CSIDriver": len(cluster.csi_drivers),
        "CSIStorageCapacity": len(cluster.csi_storage_capacities),
        "Service": len(cluster.services),
        "PodDisruptionBudget": len(cluster.pod_disruption_budgets),
        "LimitRange": len(cluster.limit_ranges),
        "RuntimeClass": len(cluster.runtime_classes),
    }
    dropped = ", ".join(f"{n} {kind}" for kind, n in left_out.items() if n)
    if dropped:
        warn(
            f"--output kss: kube-scheduler-simulator exports have no place for "
            f"{dropped} object(s); left out of the output"
        )
    manifests = cluster.origin
    objects = [] if manifests is None else list(manifests.raw_objects)
    if manifests is not None:
        objects += _created_objects(manifests, cluster, objects)
    objects = _as_admitted(objects, cluster)
    if preempted:
        objects = [
            (k, o)
            for k, o in objects
            if k != "Pod"
            or (
                (o.get("metadata") or {}).get("namespace") or "default",
                (o.get("metadata") or {}).get("name"),
            )
            not in preempted
        ]
    written = {_key(o) for k, o in objects if k == "Pod"}
    missing = [key for key in results if key not in written]
    if missing:
        warn(
            f"--output kss: {len(missing)} pod(s) (e.g. {missing[0][0]}/{missing[0][1]}) "
            "have neither a manifest nor a controller in the input to write them from; "
            "left out"
        )
    config: Mapping[str, Any] | None
    if config_file:
        docs = [d for d in read_documents(config_file) if d is not None]
        config = scheduler_config_document(docs[0])
    else:
        config = None if manifests is None else manifests.scheduler_config
    return json.dumps(export_document(objects, results, config), indent=2) + "\n"


def _key(obj: Mapping[str, Any]) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return (meta.get("namespace") or "default", meta.get("name") or "")


def _created_objects(
    manifests: Manifests, cluster: Cluster, read: list[tuple[str, Mapping[str, Any]]]
) -> list[tuple[str, Mapping[str, Any]]]:
    """The pods and claims schedsim created from controllers, as manifests, in the
    cluster's order (claims first, so an import has them before the pods that use them)."""
    have = {(k, _key(o)) for k, o in read}
    pods = [p for p in cluster.pods if ("Pod", (p.namespace, p.name)) not in have]
    claims = [
        (c.namespace, c.name, c.owner_references)
        for c in cluster.persistent_volume_claims
        if ("PersistentVolumeClaim", (c.namespace, c.name)) not in have
    ]
    made = controller_manifests(manifests, pods, claims)
    out: list[tuple[str, Mapping[str, Any]]] = [
        ("PersistentVolumeClaim", c) for c in made.claims.values()
    ]
    out += [("Pod", p) for p in made.pods.values()]
    return out


def _resource_list(resources: Mapping[str, Any]) -> dict[str, str]:
    return {name: format_quantity(q) for name, q in resources.items()}


def _as_admitted(
    objects: list[tuple[str, Mapping[str, Any]]], cluster: Cluster
) -> list[tuple[str, Mapping[str, Any]]]:
    """``objects`` with each pod that LimitRanger or RuntimeClass admission applies to (one
    without ``spec.priority`` naming a RuntimeClass or in a namespace with a LimitRange,
    `schedsim.api.loading.admission`) written as the API server stores it: ``spec.priority``
    and ``preemptionPolicy`` (which mark it as stored, so an import does not admit it again),
    and what admission set: ``spec.overhead``, ``nodeSelector``, ``tolerations``, the
    containers' requests and limits, the ``kubernetes.io/limit-ranger`` annotation. The
    export has no place for the LimitRanges and RuntimeClasses, so without this an import
    would lose their effect (or refuse a pod naming a RuntimeClass it lacks)."""
    limited = {lr.namespace for lr in cluster.limit_ranges}
    admitted = {
        (p.namespace, p.name): p
        for p in cluster.pods
        if not p.priority_given and (p.runtime_class_name or p.namespace in limited)
    }
    if not admitted:
        return objects
    out: list[tuple[str, Mapping[str, Any]]] = []
    for kind, obj in objects:
        pod = admitted.get(_key(obj)) if kind == "Pod" else None
        if pod is None:
            out.append((kind, obj))
            continue
        spec = dict(obj.get("spec") or {})
        spec["priority"] = pod.priority
        if pod.preemption_policy:
            spec["preemptionPolicy"] = pod.preemption_policy
        if pod.overhead:
            spec["overhead"] = _resource_list(pod.overhead)
        if pod.node_selector:
            spec["nodeSelector"] = dict(pod.node_selector)
        if pod.tolerations:
            spec["tolerations"] = [toleration_manifest(t) for t in pod.tolerations]
        for key, typed in (("containers", pod.containers), ("initContainers", pod.init_containers)):
            raw = spec.get(key)
            if not isinstance(raw, list) or len(raw) != len(typed):
                continue
            written = []
            for c, container in zip(raw, typed, strict=True):
                c = dict(c)
                resources = dict(c.get("resources") or {})
                for field, values in (
                    ("requests", container.requests),
                    ("limits", container.limits),
                ):
                    if values:
                        resources[field] = _resource_list(values)
                if resources:
                    c["resources"] = resources
                written.append(c)
            spec[key] = written
        new = {**obj, "spec": spec}
        note = pod.annotations.get(LIMIT_RANGER_ANNOTATION)
        if note is not None:
            meta = dict(obj.get("metadata") or {})
            meta["annotations"] = {**(meta.get("annotations") or {}), LIMIT_RANGER_ANNOTATION: note}
            new["metadata"] = meta
        out.append((kind, new))
    return out
