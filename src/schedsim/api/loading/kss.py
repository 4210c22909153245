"""kube-scheduler-simulator exports: reading its ``ResourcesForLoad`` JSON, and writing one.

kube-scheduler-simulator (kubernetes-sigs/kube-scheduler-simulator) exports a cluster from its
web UI as one JSON object (``simulator/snapshot``: ``ResourcesForSnap`` on export,
``ResourcesForLoad`` on import)::

    {"pods": [...], "nodes": [...], "pvs": [...], "pvcs": [...], "storageClasses": [...],
     "priorityClasses": [...], "namespaces": [...], "schedulerConfig": {...}}

The list items are the objects as the API server lists them, without ``apiVersion`` and
``kind`` (a List's items carry none); the simulator sets them on import (``WithAPIVersion``,
``WithKind``), and so does `expand_export`. ``schedulerConfig`` is a
``kubescheduler.config.k8s.io/v1`` KubeSchedulerConfiguration, usually without its own
``apiVersion``/``kind`` either. The export is recognised by its shape (a mapping with no
``kind`` and at least one of those keys), whatever the file is called.

Differences from the simulator, all deliberate: a key it does not know is an error under
``--validate=strict`` (the simulator's decoder ignores it, which hides a misspelled
``pod:``), a warning under ``warn``; an item whose ``kind`` contradicts its list is an error.

`export_document` writes the other direction: the input's objects with each scheduled pod
bound to its node (``spec.nodeName``) and carrying the simulator's scheduling-result
annotations where schedsim has them (``kube-scheduler-simulator.sigs.k8s.io/selected-node``,
and with explanations every key of the last attempt, ``.../filter-result`` to
``.../bind-result``, plus ``.../result-history``: a JSON list of every attempt's annotations,
as the simulator's ``storereflector.updateResultHistory`` appends them), and each
unschedulable pod carrying the ``PodScheduled=False`` condition kube-scheduler writes
(reason ``Unschedulable``, the FitError message), so the file loads into the simulator's web
UI (Import) as the state after the run. Annotation values are JSON as Go's
``encoding/json`` writes it (compact, map keys sorted, ``<``, ``>`` and ``&`` escaped).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

import attrs

from schedsim.api.errors import ManifestError
from schedsim.api.loading.decode import type_name

__all__ = [
    "ANNOTATION_PREFIX",
    "DEFAULT_SCHEDULER_CONFIG",
    "EXPORT_KINDS",
    "RESULT_HISTORY_ANNOTATION",
    "SCHEDULER_CONFIG_API_VERSION",
    "SELECTED_NODE_ANNOTATION",
    "KssExport",
    "KssPodResult",
    "expand_export",
    "export_document",
    "go_json",
    "looks_like_export",
    "scheduler_config_document",
]

EXPORT_KINDS: Final[Mapping[str, tuple[str, str]]] = {
    "pods": ("v1", "Pod"),
    "nodes": ("v1", "Node"),
    "pvs": ("v1", "PersistentVolume"),
    "pvcs": ("v1", "PersistentVolumeClaim"),
    "storageClasses": ("storage.k8s.io/v1", "StorageClass"),
    "priorityClasses": ("scheduling.k8s.io/v1", "PriorityClass"),
    "namespaces": ("v1", "Namespace"),
}
"""Export field -> (apiVersion, kind) of its items, in the simulator's field order."""

_SCHEDULER_CONFIG: Final = "schedulerConfig"
_FIELDS: Final = frozenset({*EXPORT_KINDS, _SCHEDULER_CONFIG})
_WHAT: Final = "kube-scheduler-simulator export"

SCHEDULER_CONFIG_API_VERSION: Final = "kubescheduler.config.k8s.io/v1"

DEFAULT_SCHEDULER_CONFIG: Final[Mapping[str, Any]] = {
    "apiVersion": SCHEDULER_CONFIG_API_VERSION,
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{"schedulerName": "default-scheduler"}],
}
"""Written when the run used kube-scheduler's default profile (kube-scheduler defaults the
rest, as the simulator's own ``DefaultSchedulerConfig`` does)."""

ANNOTATION_PREFIX: Final = "kube-scheduler-simulator.sigs.k8s.io/"
SELECTED_NODE_ANNOTATION: Final = ANNOTATION_PREFIX + "selected-node"
RESULT_HISTORY_ANNOTATION: Final = ANNOTATION_PREFIX + "result-history"
"""Every attempt's annotations, a JSON list of string maps (``ResultsHistoryAnnotation``)."""


def go_json(value: Any) -> str:
    """``value`` as Go's ``json.Marshal`` writes it: compact, map keys sorted, and ``<``,
    ``>``, ``&``, U+2028 and U+2029 escaped (its default HTML-safe escaping)."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True)
    for char, escaped in _GO_ESCAPES:
        text = text.replace(char, escaped)
    return text


_GO_ESCAPES: Final = (
    ("<", "\\u003c"),
    (">", "\\u003e"),
    ("&", "\\u0026"),
    ("\u2028", "\\u2028"),
    ("\u2029", "\\u2029"),
)


@attrs.frozen
class KssExport:
    """An export split into objects the loader decodes and the scheduler configuration.

    Attributes:
        items: (where, object) in the simulator's field order, each object a copy with
            ``apiVersion`` and ``kind`` filled in; ``where`` is e.g. ``pods[3]``.
        scheduler_config: the embedded KubeSchedulerConfiguration (``apiVersion`` and
            ``kind`` filled in when absent), or None when the export has none.
        warnings: unknown top-level keys under ``validate="warn"``.
    """

    items: list[tuple[str, Mapping[str, Any]]]
    scheduler_config: Mapping[str, Any] | None
    warnings: list[str]


def looks_like_export(doc: Mapping[str, Any]) -> bool:
    """Whether a parsed document is a kube-scheduler-simulator export (no ``kind``, and at
    least one of the export's keys)."""
    return "kind" not in doc and any(key in _FIELDS for key in doc)


def scheduler_config_document(raw: Mapping[str, Any]) -> Mapping[str, Any]:
    """``raw`` as a KubeSchedulerConfiguration document: ``apiVersion``/``kind`` of v1 filled
    in when absent (the simulator's export omits them), and the empty plugin sets the
    simulator writes for every extension point (``"queueSort": {}``: Go marshals the
    defaulted struct whole) dropped, since an empty set changes nothing. A copy; ``raw`` is
    not modified."""
    out = {"apiVersion": SCHEDULER_CONFIG_API_VERSION, "kind": "KubeSchedulerConfiguration", **raw}
    profiles = out.get("profiles")
    if isinstance(profiles, list):
        out["profiles"] = [_without_empty_plugin_sets(p) for p in profiles]
    return out


def _without_empty_plugin_sets(profile: Any) -> Any:
    if not isinstance(profile, Mapping) or not isinstance(profile.get("plugins"), Mapping):
        return profile
    plugins = {k: v for k, v in profile["plugins"].items() if v not in ({}, None)}
    return {**profile, "plugins": plugins}


def expand_export(doc: Mapping[str, Any], source: str, validate: str = "strict") -> KssExport:
    """Split an export (see the module docstring) into objects and its scheduler config.

    Args:
        doc: the parsed export.
        source: the file name used in messages.
        validate: ``strict`` (an unknown top-level key is an error), ``warn`` or ``ignore``.

    Returns:
        the objects and the configuration.

    Raises:
        ManifestError: ``FILE: kube-scheduler-simulator export: FIELD: problem`` when a list
            is not a list, an item is not a mapping or names another kind, the configuration
            is not a mapping, or (strict) a top-level key is unknown.
    """
    warnings: list[str] = []
    unknown = [str(k) for k in doc if k not in _FIELDS]
    if unknown and validate != "ignore":
        known = ", ".join([*EXPORT_KINDS, _SCHEDULER_CONFIG])
        for key in unknown:
            message = f'{source}: {_WHAT}: {key}: unknown field "{key}" (known: {known})'
            if validate == "strict":
                raise ManifestError(message)
            warnings.append(message + " (ignored)")
    items: list[tuple[str, Mapping[str, Any]]] = []
    for field, (api_version, kind) in EXPORT_KINDS.items():
        objects = doc.get(field)
        if objects is None:
            continue
        if not isinstance(objects, list):
            raise ManifestError(
                f"{source}: {_WHAT}: {field}: expected a list, got {type_name(objects)}"
            )
        for i, obj in enumerate(objects):
            where = f"{field}[{i}]"
            if not isinstance(obj, Mapping):
                raise ManifestError(
                    f"{source}: {_WHAT}: {where}: expected a mapping, got {type_name(obj)}"
                )
            given = obj.get("kind")
            if given is not None and given != kind:
                raise ManifestError(
                    f"{source}: {_WHAT}: {where}.kind: expected {kind}, got {given!r}"
                )
            items.append((where, {"apiVersion": api_version, "kind": kind, **obj}))
    config = doc.get(_SCHEDULER_CONFIG)
    if config is not None and not isinstance(config, Mapping):
        raise ManifestError(
            f"{source}: {_WHAT}: {_SCHEDULER_CONFIG}: expected a mapping, got {type_name(config)}"
        )
    return KssExport(
        items=items,
        scheduler_config=None if config is None else scheduler_config_document(config),
        warnings=warnings,
    )


@attrs.frozen
class KssPodResult:
    """What one scheduling attempt gives a pod in the export.

    Attributes:
        node: the chosen node, or None when the pod fits nowhere.
        message: kube-scheduler's FitError message when ``node`` is None.
        annotations: the simulator's result annotations (key -> JSON text), e.g.
            ``kube-scheduler-simulator.sigs.k8s.io/filter-result``; the selected-node one is
            added by `export_document`.
        reason: the PodScheduled condition's reason when ``node`` is None: ``Unschedulable``,
            or ``SchedulerError`` when a plugin failed (kube-scheduler's two reasons).
        history: the annotations of every attempt, oldest first (the last one is
            ``annotations``); written as ``result-history`` when not empty.
    """

    node: str | None
    message: str = ""
    annotations: Mapping[str, str] = attrs.field(factory=dict)
    reason: str = "Unschedulable"
    history: tuple[Mapping[str, str], ...] = ()


def _pod_key(pod: Mapping[str, Any]) -> tuple[str, str]:
    meta = pod.get("metadata") or {}
    return (meta.get("namespace") or "default", meta.get("name") or "")


def _with_result(pod: Mapping[str, Any], result: KssPodResult) -> dict[str, Any]:
    """A copy of ``pod`` bound to ``result.node`` (or marked unschedulable) with the
    simulator's annotations; nested mappings that change are copied, never modified."""
    out = dict(pod)
    meta = dict(out.get("metadata") or {})
    annotations = dict(meta.get("annotations") or {})
    annotations.update(result.annotations)
    annotations[SELECTED_NODE_ANNOTATION] = result.node or ""
    if result.history:
        annotations[RESULT_HISTORY_ANNOTATION] = go_json([dict(h) for h in result.history])
    meta["annotations"] = annotations
    out["metadata"] = meta
    status = dict(out.get("status") or {})
    conditions = [
        c
        for c in status.get("conditions") or []
        if not (isinstance(c, Mapping) and c.get("type") == "PodScheduled")
    ]
    if result.node is not None:
        # the API server's binding (pod storage assignPod) sets spec.nodeName and
        # PodScheduled=True
        out["spec"] = {**(out.get("spec") or {}), "nodeName": result.node}
        conditions.append({"type": "PodScheduled", "status": "True"})
    else:
        # kube-scheduler's handleSchedulingFailure: PodScheduled=False with the failure's
        # reason and message
        conditions.append(
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": result.reason,
                "message": result.message,
            }
        )
    status["conditions"] = conditions
    status.setdefault("phase", "Pending")
    out["status"] = status
    return out


def export_document(
    objects: Sequence[tuple[str, Mapping[str, Any]]],
    results: Mapping[tuple[str, str], KssPodResult],
    scheduler_config: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """A ``ResourcesForLoad`` document: ``objects`` grouped by kind, each pod in ``results``
    bound or marked as its result says.

    Args:
        objects: (kind, object as read) in input order; kinds outside `EXPORT_KINDS` are left
            out (the simulator has no place for them).
        results: (namespace, name) -> the result of the pod's scheduling attempt; pods absent
            here (bound in the input, not scheduled) are written as read.
        scheduler_config: the KubeSchedulerConfiguration of the run, or None for
            `DEFAULT_SCHEDULER_CONFIG`.

    Returns:
        the document (JSON-serializable when the objects are).
    """
    field_of = {kind: field for field, (_, kind) in EXPORT_KINDS.items()}
    out: dict[str, Any] = {field: [] for field in EXPORT_KINDS}
    for kind, obj in objects:
        field = field_of.get(kind)
        if field is None:
            continue
        if kind == "Pod":
            result = results.get(_pod_key(obj))
            if result is not None:
                obj = _with_result(obj, result)
        out[field].append(obj)
    out[_SCHEDULER_CONFIG] = dict(scheduler_config or DEFAULT_SCHEDULER_CONFIG)
    return out
