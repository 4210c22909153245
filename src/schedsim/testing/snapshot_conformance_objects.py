"""Objects of the store conformance kit: `make_node` and `make_pod` (CA's ``BuildTestNode``
/ ``BuildTestPod``), and `new_snapshot` over a store from a factory."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from schedsim.api.core import Node, Pod
from schedsim.framework import Framework, Handle, PluginFactory, default_profile
from schedsim.framework.runtime import discover_plugins
from schedsim.snapshot import (
    PredicateSnapshot,
)
from schedsim.testing.snapshot_conformance_state import StoreFactory

# --------------------------------------------------------------------------- objects


def make_node(
    name: str,
    *,
    cpu: str = "4",
    memory: str = "8Gi",
    pods: int = 110,
    unschedulable: bool = False,
    taints: Sequence[Mapping[str, str]] = (),
    labels: Mapping[str, str] | None = None,
    allocatable: Mapping[str, str] | None = None,
    images: Mapping[str, int] | None = None,
) -> Node:
    """A Node with ``status.allocatable`` cpu, memory and pods (CA's ``BuildTestNode``).

    Args:
        allocatable: further allocatable resources (e.g. ``{"example.com/gpu": "2"}``).
        images: ``status.images``: image name -> size in bytes (ImageLocality reads them).
    """
    status: dict[str, Any] = {
        "allocatable": {"cpu": cpu, "memory": memory, "pods": str(pods), **(allocatable or {})}
    }
    if images:
        status["images"] = [{"names": [n], "sizeBytes": size} for n, size in images.items()]
    return Node.from_manifest(
        {
            "metadata": {"name": name, "labels": dict(labels or {})},
            "spec": {"unschedulable": unschedulable, "taints": [dict(t) for t in taints]},
            "status": status,
        }
    )


def make_pod(
    name: str,
    *,
    cpu: str | None = "100m",
    memory: str | None = "100Mi",
    namespace: str = "default",
    node_name: str = "",
    nominated_node_name: str = "",
    pvcs: Sequence[str] = (),
    ephemeral_volumes: Sequence[str] = (),
    other_volumes: Sequence[Mapping[str, Any]] = (),
    spec: Mapping[str, Any] | None = None,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    tolerations: Sequence[Mapping[str, str]] = (),
    node_selector: Mapping[str, str] | None = None,
    image: str = "",
    priority: int | None = None,
    scheduler_name: str = "",
) -> Pod:
    """A one-container Pod (CA's ``BuildTestPod``).

    Args:
        cpu, memory: the container's requests (None: not requested).
        pvcs: claim names, mounted as volumes ``pvc-<i>``.
        ephemeral_volumes: names of generic ephemeral volumes (claim ``<pod>-<volume>``).
        other_volumes: further raw volume entries.
        spec: further raw spec fields (e.g. ``affinity``); they win over the arguments.
        labels, annotations: ``metadata.labels`` / ``metadata.annotations``.
        tolerations: ``spec.tolerations`` (raw entries, as for make_node's ``taints``).
        node_selector: ``spec.nodeSelector``.
        image: the container's image.
        priority: ``spec.priority``.
        scheduler_name: ``spec.schedulerName`` (empty: default-scheduler).
    """
    requests = {}
    if cpu is not None:
        requests["cpu"] = cpu
    if memory is not None:
        requests["memory"] = memory
    volumes: list[Mapping[str, Any]] = [
        {"name": f"pvc-{i}", "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(pvcs)
    ]
    volumes += [{"name": v, "ephemeral": {"volumeClaimTemplate": {}}} for v in ephemeral_volumes]
    volumes += list(other_volumes)
    container: dict[str, Any] = {"name": "c", "resources": {"requests": requests}}
    if image:
        container["image"] = image
    extra: dict[str, Any] = {}
    if tolerations:
        extra["tolerations"] = [dict(t) for t in tolerations]
    if node_selector:
        extra["nodeSelector"] = dict(node_selector)
    if priority is not None:
        extra["priority"] = priority
    if scheduler_name:
        extra["schedulerName"] = scheduler_name
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels:
        metadata["labels"] = dict(labels)
    if annotations:
        metadata["annotations"] = dict(annotations)
    return Pod.from_manifest(
        {
            "metadata": metadata,
            "spec": {
                "nodeName": node_name,
                "containers": [container],
                "volumes": volumes,
                **extra,
                **(spec or {}),
            },
            "status": {"nominatedNodeName": nominated_node_name},
        }
    )


def on(pod: Pod, node_name: str) -> Pod:
    """``pod`` with ``spec.nodeName`` set (CA's ``withNodeName``)."""
    return attrs.evolve(pod, node_name=node_name)


@functools.cache
def _registry() -> Mapping[str, PluginFactory]:
    return discover_plugins()


def new_snapshot(make_store: StoreFactory) -> PredicateSnapshot:
    """A `PredicateSnapshot` over ``make_store()`` with the default profile."""
    return PredicateSnapshot(Framework(default_profile(), Handle(), _registry()), make_store())
