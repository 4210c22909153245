"""The Cluster Autoscaler's debugging snapshot (``/snapshotz``) as an input.

With ``--debugging-snapshot-enabled`` CA serves its view of the cluster at one loop as JSON
(``debuggingsnapshot.DebuggingSnapshotImpl``, cluster-autoscaler 1.24+)::

    {"NodeList": [{"Node": <v1.Node>, "Pods": [<v1.Pod>, ...]}, ...],
     "UnscheduledPodsCanBeScheduled": [<v1.Pod>, ...],
     "Error": "...",                      # omitted when empty
     "StartTimestamp": "...", "EndTimestamp": "...",
     "TemplateNodes": {"<node group>": {"Node": <v1.Node>, "Pods": [...]}, ...}}

The objects are Go's JSON of the API types, so they carry no ``apiVersion``/``kind``. Read as:

- each ``NodeList`` entry: its Node, and its Pods bound to it (CA's NodeInfo holds them on
  that node; a pod without ``spec.nodeName`` gets the node's name), except the pods that are
  also listed as unscheduled;
- ``UnscheduledPodsCanBeScheduled``: pending pods (CA found a place for them without a
  scale-up; schedsim schedules them again);
- ``TemplateNodes``: one node group per entry, the template node and its pods (DaemonSet and
  static pods) as the group's template, for ``scale-up``/``scale-down`` when no
  ``--node-groups`` is given. The snapshot has no group sizes or members: the groups get
  ``minSize`` 0, ``maxSize`` `TEMPLATE_MAX_SIZE` and no existing nodes, which a warning says;
- a non-empty ``Error`` is a warning; the timestamps say when CA took it and are not read.

Pending pods that triggered a scale-up are not in a snapshot (CA lists only those that can be
scheduled), so a snapshot answers "where do these pods go" and "what could be removed", and
``scale-up`` sees only the pods that already fit.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import attrs

from schedsim.api.errors import ManifestError
from schedsim.api.loading.decode import type_name

__all__ = ["TEMPLATE_MAX_SIZE", "CaSnapshot", "expand_ca_snapshot", "looks_like_ca_snapshot"]

TEMPLATE_MAX_SIZE: Final = 1000
"""``maxSize`` of a node group made from a snapshot's template (the snapshot has none; this is
CA's default ``--max-nodes-per-scaleup``, so an estimate is bounded as CA bounds it)."""

_KEYS: Final = frozenset(
    {
        "NodeList",
        "UnscheduledPodsCanBeScheduled",
        "Error",
        "StartTimestamp",
        "EndTimestamp",
        "TemplateNodes",
    }
)


def looks_like_ca_snapshot(doc: Mapping[str, Any]) -> bool:
    """A mapping without ``kind`` whose keys are the snapshot's and include ``NodeList``."""
    return "kind" not in doc and "NodeList" in doc and set(doc) <= _KEYS


@attrs.frozen
class CaSnapshot:
    """A debugging snapshot, read.

    Attributes:
        items: ``(where, object)`` of every Node and Pod, with ``apiVersion``/``kind``.
        warnings: the snapshot's error, and the note on template node groups.
        node_groups: a node-groups document (`schedsim.autoscaler.nodegroups` format) made
            from ``TemplateNodes``, or None when there are none.
    """

    items: tuple[tuple[str, Mapping[str, Any]], ...]
    warnings: tuple[str, ...]
    node_groups: Mapping[str, Any] | None


def _objects(value: Any, where: str, source: str) -> list[Mapping[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ManifestError(f"{source}: {where}: expected a list, got {type_name(value)}")
    for i, item in enumerate(value):
        if not isinstance(item, Mapping):
            raise ManifestError(
                f"{source}: {where}[{i}]: expected a mapping, got {type_name(item)}"
            )
    return value


def _cluster_node(value: Any, where: str, source: str) -> tuple[Mapping[str, Any], list[Any]]:
    if not isinstance(value, Mapping):
        raise ManifestError(f"{source}: {where}: expected a mapping, got {type_name(value)}")
    node = value.get("Node")
    if not isinstance(node, Mapping):
        raise ManifestError(f"{source}: {where}.Node: required (a Node)")
    return node, _objects(value.get("Pods"), f"{where}.Pods", source)


def _key(pod: Mapping[str, Any]) -> tuple[str, str]:
    meta = pod.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    return str(meta.get("namespace") or "default"), str(meta.get("name") or "")


def _typed(kind: str, obj: Mapping[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": kind, **obj}


def expand_ca_snapshot(doc: Mapping[str, Any], source: str) -> CaSnapshot:
    """Read a debugging snapshot (see the module docstring).

    Raises:
        ManifestError: ``FILE: FIELD: problem`` for a snapshot of the wrong shape.
    """
    items: list[tuple[str, Mapping[str, Any]]] = []
    warnings: list[str] = []
    error = doc.get("Error")
    if error:
        warnings.append(f"{source}: the Cluster Autoscaler's snapshot carries an error: {error}")
    unscheduled = _objects(
        doc.get("UnscheduledPodsCanBeScheduled"), "UnscheduledPodsCanBeScheduled", source
    )
    pending = {_key(p) for p in unscheduled}
    for i, entry in enumerate(_objects(doc.get("NodeList"), "NodeList", source)):
        node, pods = _cluster_node(entry, f"NodeList[{i}]", source)
        items.append((f"NodeList[{i}].Node", _typed("Node", node)))
        meta = node.get("metadata")
        node_name = meta.get("name") if isinstance(meta, Mapping) else None
        for j, pod in enumerate(pods):
            if _key(pod) in pending:  # listed again as unscheduled: schedsim schedules it
                continue
            obj = _typed("Pod", pod)
            spec = pod.get("spec")
            if isinstance(spec, Mapping) and not spec.get("nodeName") and node_name:
                obj["spec"] = {**spec, "nodeName": node_name}  # on this node in CA's snapshot
            items.append((f"NodeList[{i}].Pods[{j}]", obj))
    for i, pod in enumerate(unscheduled):
        items.append((f"UnscheduledPodsCanBeScheduled[{i}]", _typed("Pod", pod)))
    templates = doc.get("TemplateNodes")
    if templates is None or templates == {}:
        return CaSnapshot(tuple(items), tuple(warnings), None)
    if not isinstance(templates, Mapping):
        raise ManifestError(
            f"{source}: TemplateNodes: expected a mapping, got {type_name(templates)}"
        )
    groups = []
    for name in sorted(templates):
        node, pods = _cluster_node(templates[name], f"TemplateNodes[{name}]", source)
        groups.append(
            {
                "name": name,
                "minSize": 0,
                "maxSize": TEMPLATE_MAX_SIZE,
                "template": {"node": _typed("Node", node), "pods": pods},
            }
        )
    warnings.append(
        f"{source}: TemplateNodes: node group(s) {', '.join(sorted(templates))} for scale-up "
        "and scale-down when no --node-groups FILE is given; the snapshot has no sizes or "
        f"members, so each has minSize 0, maxSize {TEMPLATE_MAX_SIZE} and no existing nodes"
    )
    return CaSnapshot(tuple(items), tuple(warnings), {"nodeGroups": groups})
