"""Parts every decoded object shares: owner references, RFC 3339 timestamps, resource lists
(``ResourceList``, exact quantities) and the API server's request-from-limit default.

Decoders raise `FieldError` naming the field.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from fractions import Fraction
from typing import Any

import attrs

from schedsim.api.errors import FieldError
from schedsim.api.loading import decode as d

__all__ = [
    "OwnerReference",
    "ResourceList",
    "as_utc",
    "decode_owner_references",
    "default_requests",
    "parse_timestamp",
]

ResourceList = Mapping[str, Fraction]
"""Resource name -> exact quantity (cores for ``cpu``, bytes for memory and storage)."""


_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})")


@attrs.frozen
class OwnerReference:
    """metadata.ownerReferences[i]: who owns an object (used for pod-owned claims and PVCs)."""

    api_version: str
    kind: str
    name: str
    uid: str
    controller: bool = False

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any], path: str) -> OwnerReference:
        """Decode one owner reference; raises FieldError."""
        return cls(
            api_version=d.get_str(raw, "apiVersion", path),
            kind=d.get_str(raw, "kind", path),
            name=d.get_str(raw, "name", path),
            uid=d.get_str(raw, "uid", path),
            controller=d.get_bool(raw, "controller", path),
        )


def decode_owner_references(meta: Mapping[str, Any]) -> tuple[OwnerReference, ...]:
    """Decode ``metadata.ownerReferences``; raises FieldError."""
    items = d.get_list(meta, "ownerReferences", "metadata")
    path = "metadata.ownerReferences"
    return tuple(
        OwnerReference.from_manifest(d.get_mapping_item(items, i, path), f"{path}[{i}]")
        for i in range(len(items))
    )


def as_utc(ts: datetime) -> datetime:
    """``ts`` with a zone: a naive time (a YAML loader's ``2024-01-02 03:04:05``, or one made
    in Python) is UTC, as metav1.Time, so that timestamps compare and sort."""
    return ts if ts.tzinfo is not None else ts.replace(tzinfo=UTC)


def parse_timestamp(raw: Any, field: str) -> datetime | None:
    """Decode an RFC 3339 timestamp (``2024-01-02T03:04:05Z``); None stays None."""
    if raw is None:
        return None
    if isinstance(raw, datetime):  # YAML loaders may already have parsed it
        return raw
    if not isinstance(raw, str):
        raise FieldError(field, f"expected an RFC 3339 timestamp, got {d.type_name(raw)}")
    parsed = _parse_rfc3339(raw)
    if parsed is None:
        problem = f"invalid RFC 3339 timestamp {raw!r} (expected e.g. 2024-01-02T03:04:05Z)"
        raise FieldError(field, problem)
    return parsed


@functools.lru_cache(maxsize=4096)
def _parse_rfc3339(raw: str) -> datetime | None:
    """The time ``raw`` names, or None when it is not RFC 3339 (memoized: the pods of a file
    often share their timestamps; a datetime is immutable)."""
    # the form metav1.Time accepts (Go's time.RFC3339): fromisoformat alone also takes dates
    # without a time and times without a zone
    if _RFC3339.fullmatch(raw) is None:
        return None
    try:
        return datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:  # e.g. month 13
        return None


def default_requests(requests: ResourceList, limits: ResourceList) -> ResourceList:
    """A request left unset defaults to its limit, as the API server's defaulting does."""
    if not limits or all(k in requests for k in limits):
        return requests
    out = dict(limits)
    out.update(requests)
    return out
