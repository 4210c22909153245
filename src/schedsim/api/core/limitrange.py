"""core/v1 LimitRange and what the LimitRanger admission plugin does to a pod created in its
namespace.

Mirrors Kubernetes 1.34:

- Decoding applies ``SetDefaults_LimitRangeItem`` (pkg/apis/core/v1/defaults.go) to a
  ``Container`` item: a resource with a ``max`` and no ``default`` gets ``default: max``; one
  with a ``default`` and no ``defaultRequest`` gets ``defaultRequest: default``; one with a
  ``min`` and still no ``defaultRequest`` gets ``defaultRequest: min``. Then the rules of
  ``ValidateLimitRange`` (pkg/apis/core/validation), every problem reported
  (`limit_range_problems`): a standard or qualified ``type``, once per LimitRange; resource
  names (``validateLimitRangeResourceName``); ``default``/``defaultRequest`` not with type
  ``Pod``; ``min <= defaultRequest <= default <= max``; ``maxLimitRequestRatio`` at least 1
  and at most ``max/min``; default equal to defaultRequest for resources that cannot be
  overcommitted; a ``PersistentVolumeClaim`` item has a storage ``min`` or ``max``.
- Admission (plugin/pkg/admission/limitranger), for each LimitRange of the pod's namespace:
  each container and init container without a limit (request) for a resource gets the
  Container item's ``default`` (``defaultRequest``) for it, and the pod is annotated
  ``kubernetes.io/limit-ranger: LimitRanger plugin set: cpu request for container c; ...``.
  A request the API server's defaulting already copied from a limit is not replaced (the
  decoder copies it: `schedsim.api.meta.default_requests`), as in Kubernetes. Then every
  container and init container is checked against the Container item's ``min``, ``max`` and
  ``maxLimitRequestRatio``, and the pod's totals (``podRequests``/``podLimits``: containers and
  sidecars summed, init containers as maxima) against the Pod item's; a violation refuses the
  pod with upstream's message (``maximum cpu usage per Container is 800m, but limit is
  1500m``). A default limit below the container's request makes the pod invalid
  (``ValidateResourceRequirements``: ``must be less than or equal to cpu limit of 500m``);
  the API server validates the pod before the validating plugins run, so such a pod gets
  that error alone, not LimitRanger's min/max ones as well.

Quantities are compared as ``requestLimitEnforcedValues`` does: in milli-units rounded up
when every value fits, else in units rounded up. Which pods this applies to, and what a
refusal does, is `schedsim.api.loading.admission`'s.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any, Final

import attrs

from schedsim.api.core.containers import Container
from schedsim.api.core.resources import containers_total, is_extended_resource_name
from schedsim.api.errors import FieldError
from schedsim.api.evolve import evolve
from schedsim.api.interning import shared, shared_map
from schedsim.api.labels import qualified_name_problem
from schedsim.api.loading import decode as d
from schedsim.api.meta import ResourceList
from schedsim.api.quantity import format_quantity

__all__ = [
    "LIMIT_RANGER_ANNOTATION",
    "LimitRange",
    "LimitRangeItem",
    "limit_range_changes",
    "limit_range_problems",
]

LIMIT_RANGER_ANNOTATION: Final = "kubernetes.io/limit-ranger"
"""The annotation LimitRanger writes on a pod it set defaults on."""

_STANDARD_TYPES: Final = ("Pod", "Container", "PersistentVolumeClaim")
_MAX_MILLI: Final = (2**63 - 1) // 1000  # resource.MaxMilliValue


def _overcommit_allowed(name: str) -> bool:
    """``helper.IsOvercommitAllowed``: native resources other than hugepages."""
    native = "/" not in name or name.startswith("kubernetes.io/")
    return native and not name.startswith("hugepages-")


@attrs.frozen
class LimitRangeItem:
    """One ``spec.limits[i]`` of a LimitRange (after ``SetDefaults_LimitRangeItem``)."""

    type: str
    max: ResourceList = attrs.field(factory=dict)
    min: ResourceList = attrs.field(factory=dict)
    default: ResourceList = attrs.field(factory=dict)
    default_request: ResourceList = attrs.field(factory=dict)
    max_limit_request_ratio: ResourceList = attrs.field(factory=dict)


@attrs.frozen
class LimitRange:
    """A core/v1 LimitRange (namespaced).

    Attributes:
        limits: ``spec.limits``, defaulted as the API server stores them.
    """

    name: str
    namespace: str = "default"
    limits: tuple[LimitRangeItem, ...] = ()

    @property
    def key(self) -> str:
        """``namespace/name``."""
        return f"{self.namespace}/{self.name}"

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any]) -> LimitRange:
        """Decode a LimitRange, with the API server's defaults (module docstring); its
        ``ValidateLimitRange`` rules are `limit_range_problems`' (every problem of the
        object reported, as the API server's ErrorList has them).

        Raises:
            FieldError: naming the field of a value that cannot be decoded.
        """
        d.check_api_version(raw, "LimitRange", ("v1",))
        meta = d.get_map(raw, "metadata", "")
        name = d.get_str(meta, "name", "metadata")
        if not name:
            raise FieldError("metadata.name", "required")
        namespace = d.get_str(meta, "namespace", "metadata") or "default"
        limits = tuple(
            LimitRangeItem(
                type=kind,
                **{_ATTRS[k]: shared_map(v) for k, v in lists.items()},
            )
            for kind, lists in _decode_items(raw)
        )
        return cls(name=name, namespace=namespace, limits=limits)


_LISTS: Final = ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio")
_ATTRS: Final = {
    "max": "max",
    "min": "min",
    "default": "default",
    "defaultRequest": "default_request",
    "maxLimitRequestRatio": "max_limit_request_ratio",
}


def _decode_items(raw: Mapping[str, Any]) -> list[tuple[str, dict[str, dict[str, Fraction]]]]:
    """Each ``spec.limits[i]``: its type and resource lists, ``SetDefaults_LimitRangeItem``
    applied."""
    spec = d.get_map(raw, "spec", "")
    items = d.get_list(spec, "limits", "spec")
    out = []
    for i in range(len(items)):
        path = f"spec.limits[{i}]"
        item = d.get_mapping_item(items, i, "spec.limits")
        kind = d.get_str(item, "type", path)
        lists = {key: dict(d.get_resource_list(item, key, path)) for key in _LISTS}
        if kind == "Container":  # SetDefaults_LimitRangeItem
            for k, v in lists["max"].items():
                lists["default"].setdefault(k, v)
            for k, v in lists["default"].items():
                lists["defaultRequest"].setdefault(k, v)
            for k, v in lists["min"].items():
                lists["defaultRequest"].setdefault(k, v)
        out.append((kind, lists))
    return out


# helper.IsStandardResourceName (pkg/apis/core/helper/helpers.go standardResources)
_STANDARD_RESOURCES: Final = frozenset(
    {
        "cpu",
        "memory",
        "ephemeral-storage",
        "requests.cpu",
        "requests.memory",
        "requests.ephemeral-storage",
        "limits.cpu",
        "limits.memory",
        "limits.ephemeral-storage",
        "pods",
        "resourcequotas",
        "services",
        "replicationcontrollers",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "storage",
        "requests.storage",
        "services.nodeports",
        "services.loadbalancers",
    }
)


def _resource_name_problems(kind: str, name: str) -> list[str]:
    """``validateLimitRangeResourceName``: ``validateContainerResourceName`` for the Pod and
    Container types, ``validateResourceName`` for the others (pkg/apis/core/validation)."""
    problem = qualified_name_problem(name)
    if problem is not None:
        return [problem]
    out = []
    if "/" not in name and not (
        name in _STANDARD_RESOURCES or name.startswith(("hugepages-", "requests.hugepages-"))
    ):
        out.append("must be a standard resource type or fully qualified")
    if kind not in ("Pod", "Container"):
        return out
    if "/" not in name:
        if name not in ("cpu", "memory", "ephemeral-storage") and not name.startswith("hugepages-"):
            out.append("must be a standard resource for containers")
    elif not _native(name) and not is_extended_resource_name(name):
        out.append("doesn't follow extended resource name standard")
    return out


def _native(name: str) -> bool:
    """``helper.IsNativeResource``."""
    return "/" not in name or "kubernetes.io/" in name


def limit_range_problems(raw: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``ValidateLimitRange``'s spec rules for a LimitRange ``from_manifest`` accepted (module
    docstring), as ``(field, message)`` pairs: every problem, items in order, each item's
    type, then resource names (max, min, default, defaultRequest, then the PVC storage rule,
    then maxLimitRequestRatio), then the per-resource order checks."""
    problems: list[tuple[str, str]] = []
    types: set[str] = set()
    for i, (kind, lists) in enumerate(_decode_items(raw)):
        path = f"spec.limits[{i}]"
        problem = qualified_name_problem(kind)
        if problem is not None:
            problems.append((f"{path}.type", _inv_text(kind, problem)))
        elif "/" not in kind and kind not in _STANDARD_TYPES:
            detail = "must be a standard limit type or fully qualified"
            problems.append((f"{path}.type", _inv_text(kind, detail)))
        if kind in types:
            problems.append((f"{path}.type", f"duplicate value {kind!r}"))
        types.add(kind)

        def names(
            key: str,
            path: str = path,
            kind: str = kind,
            lists: Mapping[str, Mapping[str, Fraction]] = lists,
        ) -> None:
            for k in lists[key]:
                for msg in _resource_name_problems(kind, k):
                    problems.append((d.key_path(f"{path}.{key}", k), _inv_text(k, msg)))

        names("max")
        names("min")
        if kind == "Pod":
            for key in ("default", "defaultRequest"):
                if lists[key]:
                    problems.append(
                        (f"{path}.{key}", "forbidden: may not be specified when `type` is 'Pod'")
                    )
        else:
            names("default")
            names("defaultRequest")
        if kind == "PersistentVolumeClaim" and not (
            "storage" in lists["min"] or "storage" in lists["max"]
        ):
            problems.append(
                (
                    f"{path}.limits",
                    "required: either minimum or maximum storage value is required, but "
                    "neither was provided",
                )
            )
        names("maxLimitRequestRatio")
        if kind == "Pod":  # validated as given: Pod items get no defaults, keys are not read
            lists = {**lists, "default": {}, "defaultRequest": {}}
        _check_item(lists, path, problems)
    return problems


def _check_item(
    lists: Mapping[str, Mapping[str, Fraction]], path: str, out: list[tuple[str, str]]
) -> None:
    """``ValidateLimitRange``'s order checks for one item, every problem in ``out``."""
    mn, mx, df, dr = lists["min"], lists["max"], lists["default"], lists["defaultRequest"]
    ratios = lists["maxLimitRequestRatio"]
    q = format_quantity
    keys = dict.fromkeys([*mx, *mn, *df, *dr, *ratios])
    for k in keys:

        def at(key: str, k: str = k) -> str:
            return d.key_path(f"{path}.{key}", k)

        if k in mn and k in mx and mn[k] > mx[k]:
            out.append(
                (
                    at("min"),
                    _inv(mn[k], f"min value {q(mn[k])} is greater than max value {q(mx[k])}"),
                )
            )
        if k in dr and k in mn and mn[k] > dr[k]:
            out.append(
                (
                    at("defaultRequest"),
                    _inv(
                        dr[k],
                        f"min value {q(mn[k])} is greater than default request value {q(dr[k])}",
                    ),
                )
            )
        if k in dr and k in mx and dr[k] > mx[k]:
            out.append(
                (
                    at("defaultRequest"),
                    _inv(
                        dr[k],
                        f"default request value {q(dr[k])} is greater than max value {q(mx[k])}",
                    ),
                )
            )
        if k in dr and k in df and dr[k] > df[k]:
            out.append(
                (
                    at("defaultRequest"),
                    _inv(
                        dr[k],
                        f"default request value {q(dr[k])} is greater than default limit value "
                        f"{q(df[k])}",
                    ),
                )
            )
        if k in df and k in mn and mn[k] > df[k]:
            out.append(
                (
                    at("default"),
                    _inv(mn[k], f"min value {q(mn[k])} is greater than default value {q(df[k])}"),
                )
            )
        if k in df and k in mx and df[k] > mx[k]:
            out.append(
                (
                    at("default"),
                    _inv(mx[k], f"default value {q(df[k])} is greater than max value {q(mx[k])}"),
                )
            )
        if k in ratios and ratios[k] < 1:
            out.append(
                (
                    at("maxLimitRequestRatio"),
                    _inv(ratios[k], f"ratio {q(ratios[k])} is less than 1"),
                )
            )
        if k in ratios and k in mn and k in mx and mn[k] > 0:
            ratio = ratios[k]
            low, high = math.ceil(mn[k]), math.ceil(mx[k])
            value = float(math.ceil(ratio))
            if math.ceil(ratio) < _MAX_MILLI and low < _MAX_MILLI and high < _MAX_MILLI:
                value = math.ceil(ratio * 1000) / 1000
                low, high = math.ceil(mn[k] * 1000), math.ceil(mx[k] * 1000)
            limit = high / low
            if value > limit:
                out.append(
                    (
                        at("maxLimitRequestRatio"),
                        _inv(ratio, f"ratio {q(ratio)} is greater than max/min = {limit:f}"),
                    )
                )
        if not _overcommit_allowed(k) and k in df and k in dr and df[k] != dr[k]:
            out.append(
                (
                    at("defaultRequest"),
                    _inv(
                        dr[k],
                        f"default value {q(df[k])} must equal to defaultRequest value "
                        f"{q(dr[k])} in {k}",
                    ),
                )
            )


def _inv_text(value: str, detail: str) -> str:
    return f"invalid value {value!r}: {detail}"


def _inv(value: Fraction, detail: str) -> str:
    return f"invalid value {format_quantity(value)!r}: {detail}"


# --------------------------------------------------------------------------- admission


def _merge(
    c: Container, limits: Mapping[str, Fraction], requests: Mapping[str, Fraction], what: str
) -> tuple[Container, list[str]]:
    """``mergeContainerResources``: ``c`` with the default limits and requests it lacks, and
    the annotation parts (``cpu request for container c``)."""
    set_limits = [k for k in limits if k not in c.limits]
    set_requests = [k for k in requests if k not in c.requests]
    if not set_limits and not set_requests:
        return c, []
    new_limits = {**c.limits, **{k: limits[k] for k in set_limits}}
    new_requests = {**c.requests, **{k: requests[k] for k in set_requests}}
    notes = []
    if set_requests:
        notes.append(f"{', '.join(sorted(set_requests))} request for {what} {c.name}")
    if set_limits:
        notes.append(f"{', '.join(sorted(set_limits))} limit for {what} {c.name}")
    lim, req = shared_map(new_limits), shared_map(new_requests)
    key = ("Container", c.name, id(req), id(lim), c.ports, c.restart_policy, c.image)
    return shared(key, evolve(c, requests=req, limits=lim)), notes


def _enforced(*quantities: Fraction | int) -> list[int]:
    """``requestLimitEnforcedValues``: milli-values rounded up when all fit, else values."""
    values = [math.ceil(q) for q in quantities]
    if all(v <= _MAX_MILLI for v in values):
        return [math.ceil(q * 1000) for q in quantities]
    return values


def _min_problem(
    kind: str,
    name: str,
    enforced: Fraction,
    requests: Mapping[str, Fraction],
    limits: Mapping[str, Fraction],
) -> tuple[str, str] | None:
    """``minConstraint``: ``(requests|limits, message)`` or None."""
    q = format_quantity
    req, lim = requests.get(name), limits.get(name)
    r, lm, e = _enforced(req or 0, lim or 0, enforced)
    if req is None:
        return (
            "requests",
            f"minimum {name} usage per {kind} is {q(enforced)}.  No request is specified",
        )
    if r < e:
        return (
            "requests",
            f"minimum {name} usage per {kind} is {q(enforced)}, but request is {q(req)}",
        )
    if lim is not None and lm < e:
        return "limits", f"minimum {name} usage per {kind} is {q(enforced)}, but limit is {q(lim)}"
    return None


def _max_problem(
    kind: str,
    name: str,
    enforced: Fraction,
    requests: Mapping[str, Fraction],
    limits: Mapping[str, Fraction],
) -> tuple[str, str] | None:
    """``maxConstraint``: ``(requests|limits, message)`` or None."""
    q = format_quantity
    req, lim = requests.get(name), limits.get(name)
    r, lm, e = _enforced(req or 0, lim or 0, enforced)
    if lim is None:
        return "limits", f"maximum {name} usage per {kind} is {q(enforced)}.  No limit is specified"
    if lm > e:
        return "limits", f"maximum {name} usage per {kind} is {q(enforced)}, but limit is {q(lim)}"
    if req is not None and r > e:
        return (
            "requests",
            f"maximum {name} usage per {kind} is {q(enforced)}, but request is {q(req)}",
        )
    return None


def _ratio_problem(
    kind: str,
    name: str,
    enforced: Fraction,
    requests: Mapping[str, Fraction],
    limits: Mapping[str, Fraction],
) -> tuple[str, str] | None:
    """``limitRequestRatioConstraint``: ``(requests|limits, message)`` or None."""
    q = format_quantity
    req, lim = requests.get(name), limits.get(name)
    r, lm, _ = _enforced(req or 0, lim or 0, enforced)
    if req is None or r == 0:
        return "requests", (
            f"{name} max limit to request ratio per {kind} is {q(enforced)}, but no request is "
            "specified or request is 0"
        )
    if lim is None or lm == 0:
        return "limits", (
            f"{name} max limit to request ratio per {kind} is {q(enforced)}, but no limit is "
            "specified or limit is 0"
        )
    observed = lm / r
    shown = observed
    allowed = float(math.ceil(enforced))
    if math.ceil(enforced) <= _MAX_MILLI:
        observed *= 1000
        allowed = float(math.ceil(enforced * 1000))
    if observed > allowed:
        return "limits", (
            f"{name} max limit to request ratio per {kind} is {q(enforced)}, but provided "
            f"ratio is {shown:f}"
        )
    return None


_CHECKS: Final = (
    ("min", _min_problem),
    ("max", _max_problem),
    ("max_limit_request_ratio", _ratio_problem),
)


def _check(
    item: LimitRangeItem,
    kind: str,
    requests: Mapping[str, Fraction],
    limits: Mapping[str, Fraction],
    path: str,
    out: list[tuple[str, str]],
) -> None:
    for attr, check in _CHECKS:
        for name, enforced in getattr(item, attr).items():
            found = check(kind, name, enforced, requests, limits)
            if found is not None:
                which, message = found
                field = path if kind == "Pod" else d.key_path(f"{path}.{which}", name)
                out.append((field, message))


def _requests(c: Container) -> ResourceList:
    return c.requests


def _limits(c: Container) -> ResourceList:
    return c.limits


def limit_range_changes(
    containers: tuple[Container, ...],
    init_containers: tuple[Container, ...],
    ranges: Sequence[LimitRange],
) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """What LimitRanger sets on a pod with these containers (at create) in a namespace with
    ``ranges``, and why it would refuse the pod (module docstring).

    Returns:
        ``(changes, problems)``: the `Pod` fields to set (``containers``,
        ``init_containers``, and ``limit_ranger_note``: the annotation's value, for the
        caller to put in the annotations; empty when nothing changes) and ``(field,
        message)`` pairs, one per violated constraint, LimitRanges in the order given.
    """
    changes: dict[str, Any] = {}
    cs, ics = containers, init_containers
    for lr in ranges:
        lim: dict[str, Fraction] = {}
        req: dict[str, Fraction] = {}
        for item in lr.limits:
            if item.type == "Container":
                req.update(item.default_request)
                lim.update(item.default)
        if not lim and not req:
            continue
        notes: list[str] = []
        merged = []
        for c in cs:
            nc, n = _merge(c, lim, req, "container")
            merged.append(nc)
            notes.extend(n)
        merged_init = []
        for c in ics:
            nc, n = _merge(c, lim, req, "init container")
            merged_init.append(nc)
            notes.extend(n)
        if notes:
            cs, ics = tuple(merged), tuple(merged_init)
            changes["limit_ranger_note"] = "LimitRanger plugin set: " + "; ".join(notes)
    if cs is not containers:
        changes["containers"] = shared(("containers", *map(id, cs)), cs)
    if ics is not init_containers:
        changes["init_containers"] = shared(("containers", *map(id, ics)), ics)
    # The API server validates the pod (ValidatePodCreate: ValidateResourceRequirements) after
    # the mutating plugins and before the validating ones, so a default limit below a given
    # request makes the pod invalid and LimitRanger's Validate never sees it
    problems: list[tuple[str, str]] = []
    for key, new, old in (("containers", cs, containers), ("initContainers", ics, init_containers)):
        for i, (c, before) in enumerate(zip(new, old, strict=True)):
            if c is before:
                continue
            for name, limit in c.limits.items():
                if name in before.limits or name not in c.requests:
                    continue
                request = c.requests[name]
                if request == limit:
                    continue
                if not _overcommit_allowed(name):
                    detail = f"must be equal to {name} limit of {format_quantity(limit)}"
                elif request > limit:
                    detail = (
                        f"must be less than or equal to {name} limit of {format_quantity(limit)}"
                    )
                else:
                    continue
                problems.append((f"spec.{key}[{i}].resources.requests", _inv(request, detail)))
    if problems:
        return changes, problems
    for lr in ranges:
        for item in lr.limits:
            if item.type == "Container":
                for key, group in (("containers", cs), ("initContainers", ics)):
                    for i, c in enumerate(group):
                        path = f"spec.{key}[{i}].resources"
                        _check(item, "Container", c.requests, c.limits, path, problems)
            elif item.type == "Pod":
                _check(
                    item,
                    "Pod",
                    containers_total(cs, ics, _requests),
                    containers_total(cs, ics, _limits),
                    "spec.containers",
                    problems,
                )
    return changes, problems
