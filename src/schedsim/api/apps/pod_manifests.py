"""The manifests of the objects workload controllers create, for writing them out.

`expand_workloads` (``schedsim.api.apps.controllers``) makes typed Pods and
PersistentVolumeClaims; an export (``simulate --output kss``) needs them as the API server
would store them. `controller_manifests` writes each one from its controller's template as
read, with what the controller changes, the way the controllers build them:

- every pod: ``metadata.name``/``namespace``, the labels and annotations the controller put on
  it (template labels plus ``pod-template-hash``, the StatefulSet pod-name/index/revision
  labels, the Job completion index, the DaemonSet ``controller-revision-hash``), and the
  ownerReference ``metav1.NewControllerRef`` makes (``controller: true``,
  ``blockOwnerDeletion: true``); ``spec`` is the template's ``spec`` (``CreatePodTemplate``
  copies it);
- StatefulSet pods: each ``volumeClaimTemplates`` entry as a ``persistentVolumeClaim`` volume
  of the claim ``<template>-<set>-<ordinal>`` (``updateStorage``), replacing a template
  volume of the same name;
- DaemonSet pods: the controller's tolerations added when the template lacks them
  (``util.AddOrUpdateDaemonPodTolerations``) and the required node affinity replaced by
  ``matchFields metadata.name In [node]`` (``ReplaceDaemonSetPodNodeNameNodeAffinity``; the
  preferred terms are kept);
- StatefulSet claims: the claim template's metadata and spec with the claim's name and
  namespace, owned by the set when ``persistentVolumeClaimRetentionPolicy.whenDeleted`` is
  ``Delete`` (``getPersistentVolumeClaims``, ``updateClaimOwnerRefForSetAndPod``).

The API server's defaults are not written (a loader applies them again on import, as the API
server does). Differences from Kubernetes: pods carry no ``uid`` (the API server assigns one;
schedsim derives the same one from the name again).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from schedsim.api.apps.workloads import DaemonSet, StatefulSet, Workload
from schedsim.api.core import OwnerReference, Pod, Toleration
from schedsim.api.core.nodeaffinity import OBJECT_NAME_FIELD

if TYPE_CHECKING:
    from schedsim.api.loading.manifests import Manifests

__all__ = [
    "ControllerManifests",
    "controller_manifests",
    "owner_reference_manifest",
    "toleration_manifest",
]

Key = tuple[str, str]
"""(namespace, name)."""


def owner_reference_manifest(ref: OwnerReference) -> dict[str, Any]:
    """An ownerReference as the API server stores it; a controller reference also blocks
    owner deletion, as ``metav1.NewControllerRef`` sets it."""
    out: dict[str, Any] = {
        "apiVersion": ref.api_version,
        "kind": ref.kind,
        "name": ref.name,
        "uid": ref.uid,
    }
    if ref.controller:
        out["controller"] = True
        out["blockOwnerDeletion"] = True
    return out


def toleration_manifest(t: Toleration) -> dict[str, Any]:
    """A toleration as a manifest writes it (unset fields left out)."""
    out: dict[str, Any] = {}
    if t.key:
        out["key"] = t.key
    out["operator"] = t.operator
    if t.value:
        out["value"] = t.value
    if t.effect:
        out["effect"] = t.effect
    if t.toleration_seconds is not None:
        out["tolerationSeconds"] = t.toleration_seconds
    return out


def _daemon_spec(spec: dict[str, Any], pod: Pod) -> None:
    """Tolerations and node affinity of a DaemonSet pod (see the module docstring), in
    place on a copy of the template spec."""
    written = list(spec.get("tolerations") or [])
    have = {(t.get("key", ""), t.get("effect", "")) for t in written if isinstance(t, Mapping)}
    for t in pod.tolerations:
        if (t.key, t.effect) not in have:
            written.append(toleration_manifest(t))
            have.add((t.key, t.effect))
    spec["tolerations"] = written
    node = ""
    na = pod.affinity.node_affinity if pod.affinity else None
    for term in (na.required or ()) if na else ():
        for req in term.match_fields:
            if req.key == OBJECT_NAME_FIELD and req.operator == "In" and len(req.values) == 1:
                node = req.values[0]
    if not node:
        return
    affinity = dict(spec.get("affinity") or {})
    node_affinity = dict(affinity.get("nodeAffinity") or {})
    node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {
        "nodeSelectorTerms": [
            {"matchFields": [{"key": OBJECT_NAME_FIELD, "operator": "In", "values": [node]}]}
        ]
    }
    affinity["nodeAffinity"] = node_affinity
    spec["affinity"] = affinity


def _stateful_set_volumes(spec: dict[str, Any], pod: Pod, ss: StatefulSet) -> None:
    names = {t for t, _, _ in ss.volume_claim_templates}
    volumes = [
        v
        for v in spec.get("volumes") or []
        if not (isinstance(v, Mapping) and v.get("name") in names)
    ]
    for v in pod.volumes:
        if v.name in names and v.persistent_volume_claim:
            volumes.append(
                {"name": v.name, "persistentVolumeClaim": {"claimName": v.persistent_volume_claim}}
            )
    spec["volumes"] = volumes


def workload_pod_manifest(pod: Pod, owner: Workload) -> dict[str, Any]:
    """``pod`` (created by ``owner``) as a Pod manifest (see the module docstring).

    Args:
        pod: a pod `expand_workloads` made for ``owner``.
        owner: its controller (for a Deployment's pod, the ReplicaSet).

    Returns:
        a new mapping; the template is not modified.
    """
    spec: dict[str, Any] = copy.deepcopy(dict(owner.template.raw.get("spec") or {}))
    if isinstance(owner, StatefulSet) and owner.volume_claim_templates:
        _stateful_set_volumes(spec, pod, owner)
    if isinstance(owner, DaemonSet):
        _daemon_spec(spec, pod)
    meta: dict[str, Any] = {"name": pod.name, "namespace": pod.namespace}
    if pod.labels:
        meta["labels"] = dict(pod.labels)
    if pod.annotations:
        meta["annotations"] = dict(pod.annotations)
    meta["ownerReferences"] = [owner_reference_manifest(r) for r in pod.owner_references]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def _claim_manifest(
    ss: StatefulSet, raw: Mapping[str, Any], name: str, owners: Iterable[OwnerReference]
) -> dict[str, Any]:
    meta = dict(raw.get("metadata") or {})
    meta.pop("generateName", None)
    meta.update({"name": name, "namespace": ss.namespace})
    refs = [owner_reference_manifest(r) for r in owners]
    if refs:
        meta["ownerReferences"] = refs
    out: dict[str, Any] = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta}
    out["spec"] = copy.deepcopy(dict(raw.get("spec") or {}))
    return out


class ControllerManifests:
    """The manifests of the pods and claims the controllers of a `Manifests` created.

    Attributes:
        pods: (namespace, name) -> Pod manifest, for every pod whose controller is in the
            input (or was made for a Deployment); pods of an owner the input lacks are absent.
        claims: (namespace, name) -> PersistentVolumeClaim manifest of each StatefulSet claim.
    """

    def __init__(self, pods: dict[Key, dict[str, Any]], claims: dict[Key, dict[str, Any]]):
        self.pods = pods
        self.claims = claims


def controller_manifests(
    m: Manifests, pods: Iterable[Pod], claims: Iterable[tuple[str, str, tuple[OwnerReference, ...]]]
) -> ControllerManifests:
    """Manifests of ``pods`` and ``claims`` from the controllers of ``m``.

    Args:
        m: the loaded manifests (its workload lists, with the ReplicaSets made for
            Deployments).
        pods: the pods to write (those without a manifest of their own).
        claims: (namespace, name, owner references) of claims to write.

    Returns:
        what could be written; a pod whose controller ``m`` does not hold is left out.
    """
    owners: dict[tuple[str, str, str], Workload] = {}
    for w in (
        *m.replica_sets,
        *m.replication_controllers,
        *m.stateful_sets,
        *m.daemon_sets,
        *m.jobs,
    ):
        owners[(w.kind, w.namespace, w.name)] = w
    out_pods: dict[Key, dict[str, Any]] = {}
    for pod in pods:
        ref = next((r for r in pod.owner_references if r.controller), None)
        owner = None if ref is None else owners.get((ref.kind, pod.namespace, ref.name))
        if owner is not None:
            out_pods[(pod.namespace, pod.name)] = workload_pod_manifest(pod, owner)
    templates: dict[Key, tuple[StatefulSet, Mapping[str, Any]]] = {}
    for ss in m.stateful_sets:
        for ordinal in range(ss.ordinals_start, ss.ordinals_start + ss.replicas):
            for tname, _, raw in ss.volume_claim_templates:
                templates[(ss.namespace, f"{tname}-{ss.name}-{ordinal}")] = (ss, raw)
    out_claims: dict[Key, dict[str, Any]] = {}
    for namespace, name, refs in claims:
        found = templates.get((namespace, name))
        if found is not None:
            out_claims[(namespace, name)] = _claim_manifest(found[0], found[1], name, refs)
    return ControllerManifests(out_pods, out_claims)
