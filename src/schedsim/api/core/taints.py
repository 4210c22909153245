"""Node taints and pod tolerations (core/v1 ``Taint``, ``Toleration``), as the scheduler
reads them. Decoders raise `FieldError` naming the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from schedsim.api.errors import FieldError
from schedsim.api.loading import decode as d

__all__ = ["TAINT_EFFECTS", "Taint", "Toleration"]

TAINT_EFFECTS = frozenset({"NoSchedule", "PreferNoSchedule", "NoExecute"})


# --------------------------------------------------------------------------- taints


@attrs.frozen
class Taint:
    """spec.taints[i] of a Node: ``{key, value, effect}``."""

    key: str
    effect: str
    value: str = ""

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any], path: str) -> Taint:
        """Decode one taint; raises FieldError for a missing key or an unknown effect."""
        key = d.get_str(raw, "key", path)
        if not key:
            raise FieldError(f"{path}.key", "required")
        effect = d.get_str(raw, "effect", path)
        if effect not in TAINT_EFFECTS:
            raise FieldError(
                f"{path}.effect",
                f"unsupported value {effect!r}: want one of {sorted(TAINT_EFFECTS)}",
            )
        return cls(key=key, effect=effect, value=d.get_str(raw, "value", path))


@attrs.frozen
class Toleration:
    """spec.tolerations[i] of a Pod."""

    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any], path: str) -> Toleration:
        """Decode one toleration; raises FieldError."""
        operator = d.get_str(raw, "operator", path, "Equal") or "Equal"  # "" defaults to Equal
        if operator not in ("Equal", "Exists"):
            raise FieldError(f"{path}.operator", f"unsupported value {operator!r}")
        effect = d.get_str(raw, "effect", path)
        if effect and effect not in TAINT_EFFECTS:
            raise FieldError(f"{path}.effect", f"unsupported value {effect!r}")
        seconds = raw.get("tolerationSeconds")
        return cls(
            key=d.get_str(raw, "key", path),
            operator=operator,
            value=d.get_str(raw, "value", path),
            effect=effect,
            toleration_seconds=None
            if seconds is None
            else d.get_int(raw, "tolerationSeconds", path),
        )

    def tolerates(self, taint: Taint) -> bool:
        """Whether this toleration tolerates ``taint``.

        Mirrors k8s.io/api core/v1 ``Toleration.ToleratesTaint``: an empty effect matches all
        effects; an empty key with operator Exists matches every taint; Exists ignores the
        value; Equal compares values.
        """
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        return self.value == taint.value
