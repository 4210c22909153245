"""KWOK's ``kwokctl snapshot record`` output as an input.

A recording is one YAML stream: the cluster's objects as they were when recording started
(ordinary manifests, read like any others), then one document per change seen afterwards,
``action.kwok.x-k8s.io/v1alpha1`` ``ResourcePatch`` (sigs.k8s.io/kwok
``pkg/apis/action/v1alpha1``)::

    apiVersion: action.kwok.x-k8s.io/v1alpha1
    kind: ResourcePatch
    resource: {group: apps, version: v1, resource: deployments}   # group omitted for core
    target: {name: web, namespace: shop}                          # namespace omitted if none
    durationNanosecond: 1500000000      # since the recording started
    method: create | patch | delete
    template: {...}                     # create: the object; patch: a strategic merge patch

The objects are the cluster of ``simulate``, ``scale-up`` and ``scale-down`` (the state when
recording started). The patches are decoded into `ResourcePatch` values in recorded order,
kept on `schedsim.api.loading.manifests.Manifests.kwok_patches` (with the file's Node objects
as read, `Manifests.kwok_nodes`, for the Node patches), and one warning line per file says how
many there are and that those commands do not apply them; ``schedsim replay`` applies them
on its clock (`schedsim.replay.recording`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Final

import attrs

from schedsim.api.errors import FieldError
from schedsim.api.loading import decode as d

__all__ = ["KWOK_ACTION_API", "ResourcePatch", "is_resource_patch", "timeline_warning"]

KWOK_ACTION_API: Final = "action.kwok.x-k8s.io/v1alpha1"
_METHODS: Final = ("create", "patch", "delete")


def is_resource_patch(doc: Mapping[str, Any]) -> bool:
    """A KWOK recording's ``ResourcePatch`` document."""
    return doc.get("kind") == "ResourcePatch" and doc.get("apiVersion") == KWOK_ACTION_API


@attrs.frozen
class ResourcePatch:
    """One recorded change.

    Attributes:
        seconds: when, in seconds since the recording started (``durationNanosecond`` / 1e9).
        method: ``create``, ``patch`` or ``delete``.
        group: the API group (``""`` for core).
        version: the API version.
        resource: the plural resource (``pods``).
        namespace: the target's namespace (``""`` when cluster-scoped).
        name: the target's name.
        template: ``create``: the object; ``patch``: the strategic merge patch; ``delete``:
            None.
        source: the file it was read from.
        where: its place in the file (``document 31``).
    """

    seconds: float
    method: str
    group: str
    version: str
    resource: str
    namespace: str
    name: str
    template: Mapping[str, Any] | None
    source: str = ""
    where: str = ""

    @property
    def label(self) -> str:
        """``FILE: ResourcePatch (document N): METHOD RESOURCE[.GROUP] [NS/]NAME at Ts``, for
        messages."""
        res = f"{self.resource}.{self.group}" if self.group else self.resource
        target = f"{self.namespace}/{self.name}" if self.namespace else self.name
        return (
            f"{self.source}: ResourcePatch ({self.where}): {self.method} {res} {target} "
            f"at {self.seconds:g}s"
        )

    @classmethod
    def from_manifest(
        cls, raw: Mapping[str, Any], source: str = "", where: str = ""
    ) -> ResourcePatch:
        """Decode one ``ResourcePatch`` document (``source`` and ``where`` name it in
        messages).

        Raises:
            FieldError: a required field is missing or malformed (``resource.version``,
                ``target.name``, ``method`` not create/patch/delete, a negative duration,
                a create or patch without a ``template`` mapping).
        """
        res = d.get_map(raw, "resource", "")
        target = d.get_map(raw, "target", "")
        version = d.get_str(res, "version", "resource")
        resource = d.get_str(res, "resource", "resource")
        name = d.get_str(target, "name", "target")
        for field, value in (
            ("resource.version", version),
            ("resource.resource", resource),
            ("target.name", name),
        ):
            if not value:
                raise FieldError(field, "required")
        method = d.get_str(raw, "method", "")
        if method not in _METHODS:
            raise FieldError(
                "method",
                f'unsupported value "{method}": supported values: "create", "patch", "delete"',
            )
        nanos = d.get_int(raw, "durationNanosecond", "")
        if nanos < 0:
            raise FieldError("durationNanosecond", f"invalid value {nanos}: must be >= 0")
        template = raw.get("template")
        if method != "delete" and not isinstance(template, Mapping):
            raise FieldError("template", f"required for method {method} (a mapping)")
        return cls(
            seconds=nanos / 1e9,
            method=method,
            group=d.get_str(res, "group", "resource"),
            version=version,
            resource=resource,
            namespace=d.get_str(target, "namespace", "target"),
            name=name,
            template=template if method != "delete" else None,
            source=source,
            where=where,
        )


def timeline_warning(source: str, patches: Sequence[ResourcePatch]) -> str:
    """The one line saying a file's recorded changes are read but not applied."""
    methods = Counter(p.method for p in patches)
    counts = ", ".join(f"{methods[m]} {m}" for m in _METHODS if methods[m])
    last = max(p.seconds for p in patches)
    return (
        f"{source}: KWOK recording: {len(patches)} ResourcePatch change(s) ({counts}) over "
        f"{last:g}s after the recorded objects are not applied: the run is the cluster as "
        "recording started (schedsim replay applies them)"
    )
