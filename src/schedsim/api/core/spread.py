"""Pod topology spread constraints (``spec.topologySpreadConstraints``) and pod affinity term
label keys, decoded and validated the way the API server does it.

``TopologySpreadConstraint`` keeps the v1 fields as given (``min_domains`` None when unset,
policies None when unset); the PodTopologySpread plugin applies the scheduler's defaults.
Validation mirrors ``validateTopologySpreadConstraints`` (pkg/apis/core/validation): maxSkew
and minDomains greater than zero, a non-empty qualified topologyKey, a known
whenUnsatisfiable, minDomains only with DoNotSchedule, Honor/Ignore policies, no two
constraints with the same (topologyKey, whenUnsatisfiable), matchLabelKeys only with a
labelSelector and not naming a key the selector already uses.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from schedsim.api.errors import FieldError
from schedsim.api.labels import (
    LabelSelector,
    LabelSelectorRequirement,
    check_label_key,
)
from schedsim.api.loading import decode as d

__all__ = [
    "DO_NOT_SCHEDULE",
    "SCHEDULE_ANYWAY",
    "TopologySpreadConstraint",
    "decode_topology_spread_constraints",
    "label_key_requirements",
]

DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
_ACTIONS = (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY)
_POLICIES = ("Honor", "Ignore")


@attrs.frozen
class TopologySpreadConstraint:
    """One ``spec.topologySpreadConstraints`` entry (v1.TopologySpreadConstraint).

    Attributes:
        max_skew: the largest allowed difference of matching pods between domains (>= 1).
        topology_key: the node label that defines a domain.
        when_unsatisfiable: ``DoNotSchedule`` (Filter) or ``ScheduleAnyway`` (Score).
        label_selector: the pods counted (None: the field is unset, which matches nothing).
        min_domains: the minimum number of eligible domains (None: unset, i.e. 1).
        node_affinity_policy: ``Honor``, ``Ignore`` or None (unset: Honor).
        node_taints_policy: ``Honor``, ``Ignore`` or None (unset: Ignore).
        match_label_keys: pod label keys whose values narrow the selector.
    """

    max_skew: int
    topology_key: str
    when_unsatisfiable: str
    label_selector: LabelSelector | None = None
    min_domains: int | None = None
    node_affinity_policy: str | None = None
    node_taints_policy: str | None = None
    match_label_keys: tuple[str, ...] = ()

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any], path: str) -> TopologySpreadConstraint:
        """Decode and validate one constraint; raises FieldError naming the field."""
        max_skew = d.get_int(raw, "maxSkew", path)
        if max_skew <= 0:
            raise FieldError(d.join(path, "maxSkew"), f"{max_skew}: must be greater than zero")
        key = d.get_str(raw, "topologyKey", path)
        if not key:
            raise FieldError(d.join(path, "topologyKey"), "can not be empty")
        check_label_key(key, d.join(path, "topologyKey"))
        action = d.get_str(raw, "whenUnsatisfiable", path)
        if action not in _ACTIONS:
            raise FieldError(
                d.join(path, "whenUnsatisfiable"),
                f"unsupported value {action!r}: supported values: "
                f'"{DO_NOT_SCHEDULE}", "{SCHEDULE_ANYWAY}"',
            )
        min_domains: int | None = None
        if raw.get("minDomains") is not None:
            min_domains = d.get_int(raw, "minDomains", path)
            if min_domains <= 0:
                raise FieldError(
                    d.join(path, "minDomains"), f"{min_domains}: must be greater than zero"
                )
            if action != DO_NOT_SCHEDULE:
                raise FieldError(
                    d.join(path, "minDomains"),
                    f"{min_domains}: can only use minDomains if "
                    f"whenUnsatisfiable={DO_NOT_SCHEDULE}, not {action}",
                )
        policies: dict[str, str | None] = {}
        for field in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            value = None if raw.get(field) is None else d.get_str(raw, field, path)
            if value is not None and value not in _POLICIES:
                raise FieldError(
                    d.join(path, field),
                    f'unsupported value {value!r}: supported values: "Honor", "Ignore"',
                )
            policies[field] = value
        selector = None
        if raw.get("labelSelector") is not None:
            selector = LabelSelector.from_manifest(
                d.get_map(raw, "labelSelector", path), d.join(path, "labelSelector")
            )
        keys = d.get_str_list(raw, "matchLabelKeys", path)
        _check_label_keys(keys, selector, d.join(path, "matchLabelKeys"))
        return cls(
            max_skew=max_skew,
            topology_key=key,
            when_unsatisfiable=action,
            label_selector=selector,
            min_domains=min_domains,
            node_affinity_policy=policies["nodeAffinityPolicy"],
            node_taints_policy=policies["nodeTaintsPolicy"],
            match_label_keys=keys,
        )


def _check_label_keys(keys: tuple[str, ...], selector: LabelSelector | None, path: str) -> None:
    if not keys:
        return
    if selector is None:
        raise FieldError(path, "must not be specified when labelSelector is not set")
    used = set(selector.match_labels) | {r.key for r in selector.match_expressions}
    for i, key in enumerate(keys):
        check_label_key(key, f"{path}[{i}]")
        if key in used:
            raise FieldError(
                f"{path}[{i}]", f"{key!r}: exists in both matchLabelKeys and labelSelector"
            )


def decode_topology_spread_constraints(
    spec: Mapping[str, Any],
) -> tuple[TopologySpreadConstraint, ...]:
    """Decode ``spec.topologySpreadConstraints``; raises FieldError, also for two constraints
    with the same (topologyKey, whenUnsatisfiable) ("Duplicate value")."""
    items = d.get_list(spec, "topologySpreadConstraints", "spec")
    out: list[TopologySpreadConstraint] = []
    seen: set[tuple[str, str]] = set()
    for i in range(len(items)):
        path = f"spec.topologySpreadConstraints[{i}]"
        c = TopologySpreadConstraint.from_manifest(
            d.get_mapping_item(items, i, "spec.topologySpreadConstraints"), path
        )
        pair = (c.topology_key, c.when_unsatisfiable)
        if pair in seen:
            raise FieldError(
                f"{path}.{{topologyKey, whenUnsatisfiable}}",
                f'Duplicate value: "{{{c.topology_key}, {c.when_unsatisfiable}}}"',
            )
        seen.add(pair)
        out.append(c)
    return tuple(out)


def label_key_requirements(
    keys: tuple[str, ...], labels: Mapping[str, str], operator: str
) -> tuple[LabelSelectorRequirement, ...]:
    """``key operator [labels[key]]`` for each of ``keys`` present in ``labels``: how
    matchLabelKeys (``In``) and mismatchLabelKeys (``NotIn``) become selector requirements."""
    return tuple(
        LabelSelectorRequirement(k, operator, frozenset({labels[k]})) for k in keys if k in labels
    )
