"""Label selectors (metav1.LabelSelector) and their matching rules."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from schedsim.api import _decode as d
from schedsim.api.errors import FieldError

__all__ = ["LabelSelector", "LabelSelectorRequirement"]

_OPERATORS = frozenset({"In", "NotIn", "Exists", "DoesNotExist"})


@attrs.frozen
class LabelSelectorRequirement:
    """One ``matchExpressions`` entry: ``key operator values``."""

    key: str
    operator: str
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Mirrors apimachinery labels.Requirement.Matches for In/NotIn/Exists/DoesNotExist."""
        if self.operator == "In":
            return self.key in labels and labels[self.key] in self.values
        if self.operator == "NotIn":
            return self.key not in labels or labels[self.key] not in self.values
        if self.operator == "Exists":
            return self.key in labels
        return self.key not in labels


@attrs.frozen
class LabelSelector:
    """metav1.LabelSelector. An empty selector matches everything (as in
    ``metav1.LabelSelectorAsSelector``)."""

    match_labels: Mapping[str, str] = attrs.field(factory=dict)
    match_expressions: tuple[LabelSelectorRequirement, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether ``labels`` satisfy every matchLabels entry and every expression."""
        for k, v in self.match_labels.items():
            if labels.get(k) != v:
                return False
        return all(r.matches(labels) for r in self.match_expressions)

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any], path: str) -> LabelSelector:
        """Decode and validate a label selector (apimachinery ``ValidateLabelSelector``):
        known operators, a key per expression, values for In/NotIn and none for
        Exists/DoesNotExist; raises FieldError naming the field."""
        exprs = d.get_list(raw, "matchExpressions", path)
        ep = d.join(path, "matchExpressions")
        reqs = []
        for i in range(len(exprs)):
            e = d.get_mapping_item(exprs, i, ep)
            ip = f"{ep}[{i}]"
            op = d.get_str(e, "operator", ip)
            if op not in _OPERATORS:
                raise FieldError(f"{ip}.operator", f"unsupported value {op!r}")
            key = d.get_str(e, "key", ip)
            if not key:
                raise FieldError(f"{ip}.key", "required")
            values = d.get_str_list(e, "values", ip)
            # ValidateLabelSelectorRequirement
            if op in ("In", "NotIn") and not values:
                raise FieldError(
                    f"{ip}.values", "required: must be specified when `operator` is 'In' or 'NotIn'"
                )
            if op in ("Exists", "DoesNotExist") and values:
                raise FieldError(
                    f"{ip}.values",
                    "forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                )
            reqs.append(LabelSelectorRequirement(key=key, operator=op, values=frozenset(values)))
        return cls(
            match_labels=d.get_str_map(raw, "matchLabels", path), match_expressions=tuple(reqs)
        )
