"""A KWOK recording's changes as a replay's timeline.

``kwokctl snapshot record`` writes the cluster's objects, then one ``ResourcePatch`` per
change its watches saw (`schedsim.api.loading.kwok`): ``method`` create (the object),
patch (a two-way strategic merge patch from the previous recorded state, as KWOK's recorder
makes it with ``CreateTwoWayMergePatchUsingLookupPatchMeta``) or delete, at
``durationNanosecond`` after recording started. `recorded_timeline` turns them into
`RecordedChange` values the replay applies at their time (t = 0 is when recording
started), in recorded order:

Pods
    ``create``: the pod arrives (it enters the scheduling queue; one created with
    ``spec.nodeName`` already set, e.g. a static pod's mirror, runs on that node from then).
    ``delete``: the pod is gone (it leaves its node, or the queue). ``patch`` setting
    ``status.phase`` to ``Succeeded`` or ``Failed``: the pod finished and leaves its node.
    The recorded scheduler's binding (``spec.nodeName``), the kubelet's status
    (``status.*``) and the API server's bookkeeping (``metadata.resourceVersion``,
    ``managedFields``, ``deletionTimestamp`` ...) are not applied: the replay schedules and
    runs the pods itself. A patch of any other pod field (labels, annotations, scheduling
    gates, resources) is not applied either, and named in the warning.
Nodes
    ``create``: the node joins (``NodeAdd``). ``patch``: applied to the node as recorded
    (`schedsim.api.strategic_merge`), and the node is updated (``NodeUpdate`` with the
    action bits of what changed: labels, taints or ``spec.unschedulable``, allocatable,
    conditions, annotations). ``delete``: the node leaves (``NodeDelete``); its pods are
    deleted, as the pod garbage collector deletes pods bound to a node that no longer
    exists (their controllers' replacements are creates of the recording).
Everything else
    (Deployments, ReplicaSets, Events, Leases, ...) is not applied: a controller's effect
    on scheduling is the pods it creates and deletes, which the recording carries. One
    warning line per file counts what is applied and names what is not.

A change that does not decode (a created object the API server would refuse, a patch that
is not one) is an error naming the ResourcePatch, before the replay starts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Final

import attrs

from schedsim.api.core import Node, Pod
from schedsim.api.errors import FieldError, ManifestError
from schedsim.api.loading.kwok import ResourcePatch
from schedsim.api.loading.loader import decode_objects
from schedsim.api.strategic_merge import NODE_MERGE_KEYS, PatchError, apply_strategic_merge_patch

__all__ = ["RecordedChange", "RecordedTimeline", "recorded_timeline"]

POD_CREATE: Final = "pod-create"
POD_DELETE: Final = "pod-delete"
POD_FINISH: Final = "pod-finish"
NODE_CREATE: Final = "node-create"
NODE_UPDATE: Final = "node-update"
NODE_DELETE: Final = "node-delete"

_TERMINAL: Final = frozenset({"Succeeded", "Failed"})
_OWN_METADATA: Final = frozenset(
    {
        "resourceVersion",
        "managedFields",
        "generation",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "finalizers",
        "selfLink",
        "creationTimestamp",
        "uid",
    }
)
"""Pod metadata the API server and the controllers maintain: no scheduling input."""


@attrs.frozen
class RecordedChange:
    """One change to apply at ``time``.

    Attributes:
        time: seconds since recording started.
        action: ``pod-create``, ``pod-delete``, ``pod-finish``, ``node-create``,
            ``node-update`` or ``node-delete``.
        key: the pod's ``namespace/name`` or the node's name.
        label: the ResourcePatch, for messages (`ResourcePatch.label`).
        pod: ``pod-create``: the pod as created.
        node: ``node-create`` / ``node-update``: the node after the change.
        duration: ``pod-create``: the pod's ``schedsim.io/duration`` in seconds (set by
            `schedsim.replay.trace.manifest_trace`), None: until it is deleted or finishes.
    """

    time: float
    action: str
    key: str
    label: str
    pod: Pod | None = None
    node: Node | None = None
    duration: float | None = None


@attrs.frozen
class RecordedTimeline:
    """The changes to apply, and the one warning line per recording."""

    changes: tuple[RecordedChange, ...]
    warnings: tuple[str, ...]


@attrs.define
class _Tally:
    applied: Counter[str] = attrs.field(factory=Counter)
    own: int = 0
    others: Counter[str] = attrs.field(factory=Counter)
    pod_fields: Counter[str] = attrs.field(factory=Counter)

    def line(self, source: str, total: int, last: float) -> str:
        applied = ", ".join(f"{n} {what}" for what, n in sorted(self.applied.items()))
        parts = [
            f"{source}: KWOK recording: {total} ResourcePatch change(s) over {last:g}s: "
            f"to apply on the replay's clock: {applied or 'none'}"
            # counted as read: one the cluster cannot take when its time comes (a pod
            # deleted that is not there) gets its own "...; not applied" warning then
            + (" (a change the cluster cannot take then is named when it comes)" if applied else "")
        ]
        if self.own:
            parts.append(
                f"{self.own} pod binding/status change(s) of the recorded scheduler and "
                "kubelet not applied (the replay schedules and runs the pods itself)"
            )
        if self.pod_fields:
            fields = ", ".join(f"{f} ({n})" for f, n in sorted(self.pod_fields.items()))
            parts.append(f"pod field changes not applied: {fields}")
        if self.others:
            kinds = ", ".join(f"{n} {what}" for what, n in sorted(self.others.items()))
            parts.append(
                f"not applied: {kinds} (a controller acts through the pods it creates and "
                "deletes, which are in the recording)"
            )
        return "; ".join(parts)


def _decoded(patch: ResourcePatch, validate: str) -> tuple[list[Pod], list[Node]]:
    assert patch.template is not None
    m = decode_objects([patch.template], patch.label, validate)
    return m.pods, m.nodes


def _pod_fields(template: Mapping[str, Any]) -> tuple[bool, list[str]]:
    """Whether a pod patch makes the pod finish, and the fields it changes that the replay
    does not apply (``metadata.labels``, ``spec.schedulingGates``)."""
    status = template.get("status")
    finished = isinstance(status, Mapping) and status.get("phase") in _TERMINAL
    fields: list[str] = []
    for part, value in template.items():
        if part == "status" or part.startswith("$"):
            continue
        if not isinstance(value, Mapping):
            fields.append(part)
            continue
        for key in value:
            if part == "metadata" and key in _OWN_METADATA:
                continue
            if part == "spec" and key == "nodeName":
                continue
            fields.append(f"{part}.{key.split('/', 1)[-1] if key.startswith('$') else key}")
    return finished, fields


def _node_change(
    patch: ResourcePatch, nodes: dict[str, Mapping[str, Any]], validate: str
) -> RecordedChange | None:
    key = patch.name
    if patch.method == "delete":
        nodes.pop(key, None)
        return RecordedChange(patch.seconds, NODE_DELETE, key, patch.label)
    assert patch.template is not None
    if patch.method == "create":
        raw: Mapping[str, Any] = patch.template
    else:
        before = nodes.get(key)
        if before is None:
            raise ManifestError(
                f"{patch.label}: target: node {key!r} is not among the recorded nodes "
                "(neither in the objects nor created before)"
            )
        try:
            raw = apply_strategic_merge_patch(before, patch.template, NODE_MERGE_KEYS)
        except PatchError as e:
            raise ManifestError(f"{patch.label}: template.{e.field}: {e.problem}") from None
    try:
        _, decoded = _decoded(attrs.evolve(patch, template=raw), validate)
    except ManifestError as e:
        if patch.method == "create":
            raise
        raise ManifestError(f"{e} (the node after the patch)") from None
    if len(decoded) != 1 or decoded[0].name != key:
        raise ManifestError(
            f"{patch.label}: template: expected the Node {key!r}"
            + ("" if patch.method == "create" else " after the patch")
        )
    nodes[key] = raw
    action = NODE_CREATE if patch.method == "create" else NODE_UPDATE
    return RecordedChange(patch.seconds, action, key, patch.label, node=decoded[0])


def _pod_change(patch: ResourcePatch, validate: str, tally: _Tally) -> RecordedChange | None:
    key = f"{patch.namespace}/{patch.name}"
    if patch.method == "delete":
        return RecordedChange(patch.seconds, POD_DELETE, key, patch.label)
    assert patch.template is not None
    if patch.method == "create":
        pods, _ = _decoded(patch, validate)
        if len(pods) != 1 or pods[0].key != key:
            raise ManifestError(f"{patch.label}: template: expected the Pod {key}")
        return RecordedChange(patch.seconds, POD_CREATE, key, patch.label, pod=pods[0])
    finished, fields = _pod_fields(patch.template)
    for f in fields:
        tally.pod_fields[f] += 1
    if finished:
        return RecordedChange(patch.seconds, POD_FINISH, key, patch.label)
    if not fields:
        tally.own += 1
    return None


def recorded_timeline(
    patches: Sequence[ResourcePatch],
    nodes: Mapping[str, Mapping[str, Any]],
    validate: str = "strict",
) -> RecordedTimeline:
    """The changes of KWOK recordings the replay applies (see the module docstring).

    Args:
        patches: the recordings' ResourcePatches in recorded order
            (`Manifests.kwok_patches`).
        nodes: the recorded Node objects as read, by name (`Manifests.kwok_nodes`): what the
            first patch of each node applies to.
        validate: as the loader's ``--validate`` for created objects.

    Returns:
        the changes sorted by time (recorded order among equal times), one warning line per
        file.

    Raises:
        ManifestError: ``FILE: ResourcePatch (document N): METHOD RESOURCE NAME at Ts:
            FIELD: problem``: a created object that does not decode or that the API server
            refuses, a Node patch for a node never recorded, a patch that is not a strategic
            merge patch.
    """
    current = dict(nodes)
    changes: list[RecordedChange] = []
    tallies: dict[str, _Tally] = {}
    counts: Counter[str] = Counter()
    last: dict[str, float] = {}
    for patch in patches:
        tally = tallies.setdefault(patch.source, _Tally())
        counts[patch.source] += 1
        last[patch.source] = max(last.get(patch.source, 0.0), patch.seconds)
        change: RecordedChange | None = None
        core = patch.group == ""
        try:
            if core and patch.resource == "pods":
                change = _pod_change(patch, validate, tally)
            elif core and patch.resource == "nodes":
                change = _node_change(patch, current, validate)
            else:
                res = f"{patch.resource}.{patch.group}" if patch.group else patch.resource
                tally.others[f"{patch.method} {res}"] += 1
        except FieldError as e:
            raise ManifestError(f"{patch.label}: {e.field}: {e.problem}") from None
        if change is not None:
            changes.append(change)
            tally.applied[change.action] += 1
    changes.sort(key=lambda c: c.time)  # stable: recorded order among equal times
    return RecordedTimeline(
        tuple(changes),
        tuple(t.line(src, counts[src], last[src]) for src, t in tallies.items()),
    )
