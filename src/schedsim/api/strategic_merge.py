"""Applying a strategic merge patch to an object, as the API server does for
``application/strategic-merge-patch+json`` (k8s.io/apimachinery
``pkg/util/strategicpatch``, ``StrategicMergePatch`` / ``mergeMap``).

A patch is a map merged into the object: a key set to ``null`` is removed; a map value is
merged recursively; a list is replaced whole unless the field's Go type declares
``patchStrategy:"merge"``: then a list of objects is merged element by element on the
field's ``patchMergeKey`` (an element ``{"$patch": "delete", KEY: V}`` removes the element
with that key), and a list of primitives is the union of both (``$deleteFromPrimitiveList/F``
removes values). Directives: ``$patch: replace`` (the map replaces the original whole),
``$patch: delete`` (the map is removed), ``$retainKeys`` (only these keys of the original
survive), ``$setElementOrder/F`` (the merged list's order: the listed elements first, in
that order, then the others as they were; upstream interleaves the others more finely, an
order no scheduling rule reads).

Which lists merge is in the Go struct tags, not in the patch: callers pass the merge keys of
the fields they patch (`NODE_MERGE_KEYS`, from core/v1 ``types.go``). This is what KWOK's
recorder produces (``CreateTwoWayMergePatchUsingLookupPatchMeta``) and what
`schedsim.replay` applies to a recorded Node.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from schedsim.api.loading.decode import join

__all__ = ["NODE_MERGE_KEYS", "PatchError", "apply_strategic_merge_patch"]

NODE_MERGE_KEYS: Final[Mapping[str, str]] = {
    "metadata.ownerReferences": "uid",  # ObjectMeta: patchStrategy:"merge" patchMergeKey:"uid"
    "metadata.finalizers": "",  # patchStrategy:"merge" (a list of strings)
    "spec.podCIDRs": "",  # NodeSpec: patchStrategy:"merge"
    "status.conditions": "type",  # NodeStatus: patchStrategy:"merge" patchMergeKey:"type"
    "status.addresses": "type",  # NodeStatus: patchStrategy:"merge" patchMergeKey:"type"
}
"""The merging lists of a core/v1 Node, by field path -> merge key (``""``: a list of
primitives). Every other list of a Node, ``spec.taints`` and ``status.images`` included, has
no patch strategy and is replaced whole."""

_PATCH: Final = "$patch"
_RETAIN: Final = "$retainKeys"
_ORDER: Final = "$setElementOrder/"
_DELETE_PRIMITIVE: Final = "$deleteFromPrimitiveList/"


class PatchError(ValueError):
    """A patch the API server would refuse; ``field`` is the path, ``problem`` the reason."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")
        self.field = field
        self.problem = problem


def apply_strategic_merge_patch(
    original: Mapping[str, Any], patch: Mapping[str, Any], merge_keys: Mapping[str, str]
) -> dict[str, Any]:
    """The object after ``patch`` (neither argument is changed).

    Args:
        original: the object as stored (a decoded JSON/YAML map).
        patch: the strategic merge patch.
        merge_keys: field path (``status.conditions``) -> the ``patchMergeKey`` of each list
            field with ``patchStrategy:"merge"`` (``""`` for a list of primitives), e.g.
            `NODE_MERGE_KEYS`.

    Raises:
        PatchError: an unknown ``$patch`` value, a ``$patch: delete`` list element without
            its merge key, a directive whose value has the wrong shape.
    """
    merged = _merge_map(original, patch, merge_keys, "")
    return merged if merged is not None else {}


def _merge_map(
    original: Mapping[str, Any], patch: Mapping[str, Any], keys: Mapping[str, str], path: str
) -> dict[str, Any] | None:
    directive = patch.get(_PATCH)
    if directive == "delete":
        return None
    if directive == "replace":
        return {k: v for k, v in patch.items() if k != _PATCH}
    if directive is not None and directive != "merge":
        raise PatchError(join(path, _PATCH), f"unknown patch type: {directive!r}")
    out = dict(original)
    retain = patch.get(_RETAIN)
    if retain is not None:
        if not isinstance(retain, list):
            raise PatchError(join(path, _RETAIN), "must be a list of field names")
        out = {k: v for k, v in out.items() if k in retain}
    orders: dict[str, Any] = {}
    for key, value in patch.items():
        if key in (_PATCH, _RETAIN):
            continue
        if key.startswith(_ORDER):
            orders[key.removeprefix(_ORDER)] = value
            continue
        if key.startswith(_DELETE_PRIMITIVE):
            field = key.removeprefix(_DELETE_PRIMITIVE)
            if not isinstance(value, list):
                raise PatchError(join(path, key), "must be a list")
            current = out.get(field)
            if isinstance(current, list):
                out[field] = [v for v in current if v not in value]
            continue
        sub = join(path, key)
        if value is None:
            out.pop(key, None)
        elif isinstance(value, Mapping):
            before = out.get(key)
            merged = _merge_map(before if isinstance(before, Mapping) else {}, value, keys, sub)
            if merged is None:
                out.pop(key, None)
            else:
                out[key] = merged
        elif isinstance(value, list) and sub in keys:
            before = out.get(key)
            out[key] = _merge_list(before if isinstance(before, list) else [], value, keys, sub)
        else:
            out[key] = value
    for field, order in orders.items():
        current = out.get(field)
        if isinstance(current, list) and isinstance(order, list):
            out[field] = _ordered(current, order, keys.get(join(path, field), ""))
    return out


def _merge_list(
    original: Sequence[Any], patch: Sequence[Any], keys: Mapping[str, str], path: str
) -> list[Any]:
    key = keys[path]
    if not key:  # a list of primitives: the union, original order first
        return [*original, *(v for v in patch if v not in original)]
    for item in patch:  # {"$patch": "replace"} as an element: the rest replaces the list
        if isinstance(item, Mapping) and item.get(_PATCH) == "replace" and len(item) == 1:
            return [v for v in patch if v is not item]
    out = [dict(v) if isinstance(v, Mapping) else v for v in original]
    for item in patch:
        if not isinstance(item, Mapping):
            raise PatchError(path, f"an element is not an object (merge key {key!r})")
        if key not in item:
            raise PatchError(path, f"an element has no merge key {key!r}")
        at = next(
            (i for i, v in enumerate(out) if isinstance(v, Mapping) and v.get(key) == item[key]),
            None,
        )
        if item.get(_PATCH) == "delete":
            if at is not None:
                del out[at]
            continue
        if at is None:
            merged = _merge_map({}, item, keys, f"{path}[]")
            if merged is not None:
                out.append(merged)
        else:
            merged = _merge_map(out[at], item, keys, f"{path}[]")
            if merged is None:
                del out[at]
            else:
                out[at] = merged
    return out


def _ordered(current: list[Any], order: Sequence[Any], key: str) -> list[Any]:
    def ident(v: Any) -> Any:
        return v.get(key) if key and isinstance(v, Mapping) else v

    rank = {repr(ident(v)): i for i, v in enumerate(order)}
    listed = sorted(
        (v for v in current if repr(ident(v)) in rank), key=lambda v: rank[repr(ident(v))]
    )
    return [*listed, *(v for v in current if repr(ident(v)) not in rank)]
