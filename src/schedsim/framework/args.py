"""Typed, validated plugin args: one frozen ``XArgs`` per in-tree plugin that takes args.

Mirrors kube-scheduler's KubeSchedulerConfiguration v1 plugin args: ``XArgs.from_mapping(raw)``
takes the ``pluginConfig[j].args`` mapping as written (v1 field names), applies the v1
defaults (``apis/config/v1/defaults.go``: ``SetDefaults_NodeResourcesFitArgs``, ...) and then
validates as ``apis/config/validation/validation_pluginargs.go`` does, raising `ArgsError`
for the first problem with the field path relative to the args and upstream's wording
(``Invalid value: 0: resource weight of cpu not in valid range (0, 100]``, the body of Go's
``field.Error``). Callers that know where the args came from prefix the path
(``profiles[0].pluginConfig[1].args.scoringStrategy.resources[0].weight``).

Decoding is strict, as kube-scheduler decodes its configuration: an unknown field is an
error (``unknown field``); ``apiVersion`` and ``kind`` are accepted, and ``kind`` must name
the plugin's args type.

Differences from upstream, all deliberate:

- Only the first problem is reported (upstream aggregates every field error).
- ``scoringStrategy.requestedToCapacityRatio.shape`` problems are reported under that path;
  upstream names it ``scoringStrategy.shape`` although no such field exists.
- ``type: RequestedToCapacityRatio`` without ``requestedToCapacityRatio`` is refused as a
  missing shape; upstream's NewFit dereferences the nil field.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import attrs

from schedsim.api.core import NodeAffinity, NodeSelectorTerm, PreferredSchedulingTerm
from schedsim.api.core.nodeaffinity import compile_node_selector, compile_term
from schedsim.api.errors import FieldError, go_value
from schedsim.api.labels import qualified_name_problem
from schedsim.api.loading.decode import join

__all__ = [
    "LEAST_ALLOCATED",
    "MAX_CUSTOM_PRIORITY_SCORE",
    "MOST_ALLOCATED",
    "PLUGIN_ARGS",
    "REQUESTED_TO_CAPACITY_RATIO",
    "ArgsError",
    "DefaultPreemptionArgs",
    "NodeAffinityArgs",
    "NodeResourcesBalancedAllocationArgs",
    "NodeResourcesFitArgs",
    "ResourceSpec",
    "ScoringStrategy",
    "UtilizationShapePoint",
    "go_value",
    "no_args",
]

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
_SCORING_TYPES = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)

MAX_CUSTOM_PRIORITY_SCORE = 10
"""``config.MaxCustomPriorityScore``: shape scores are in [0, 10], scaled x10 when scoring."""

_META = frozenset({"apiVersion", "kind"})


class ArgsError(ValueError):
    """A plugin's args are malformed or invalid.

    Args:
        field: path of the field relative to the args, e.g.
            ``scoringStrategy.resources[0].weight`` (empty for the args as a whole).
        problem: what is wrong, in kube-scheduler's words where it has them, e.g.
            ``Invalid value: 0: resource weight of cpu not in valid range (0, 100]``.
    """

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}" if field else problem)
        self.field = field
        self.problem = problem


# ------------------------------------------------------------------------------ decoding


def _mapping(raw: Any, path: str) -> Mapping[str, Any]:
    if not isinstance(raw, Mapping):
        raise ArgsError(path, f"expected a mapping, got {type(raw).__name__}")
    return raw


def _list(raw: Any, path: str) -> list[Any]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ArgsError(path, f"expected a list, got {type(raw).__name__}")
    return raw


def _int(raw: Any, path: str, default: int = 0) -> int:
    if raw is None:
        return default
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise ArgsError(path, f"expected an integer, got {type(raw).__name__}")
    if not -(2**31) <= raw < 2**31:  # the v1 fields are int32
        raise ArgsError(path, f"Invalid value: {raw}: out of the int32 range")
    return raw


def _str(raw: Any, path: str) -> str:
    if raw is None:
        return ""
    if not isinstance(raw, str):
        raise ArgsError(path, f"expected a string, got {type(raw).__name__}")
    return raw


def _no_unknown(raw: Mapping[str, Any], allowed: frozenset[str], path: str) -> None:
    for key in raw:
        if key not in allowed:
            raise ArgsError(join(path, str(key)), "unknown field")


def _top(raw: Mapping[str, Any] | None, allowed: frozenset[str], kind: str) -> Mapping[str, Any]:
    raw = _mapping({} if raw is None else raw, "")
    _no_unknown(raw, allowed | _META, "")
    got = raw.get("kind")
    if got is not None and got != kind:
        raise ArgsError("kind", f"expected {kind}, got {go_value(got)}")
    return raw


def no_args(plugin: str, args: Mapping[str, Any]) -> None:
    """Refuse args for a plugin that takes none: every field but ``apiVersion`` and ``kind``
    is a problem (refused, never ignored). The one check every such in-tree plugin's
    constructor makes.

    Args:
        plugin: the plugin's name, for the message.
        args: the plugin's ``pluginConfig`` args as given.

    Raises:
        ValueError: ``<plugin> takes no args, got <field>, <field>`` (fields sorted).
    """
    unknown = sorted(k for k in args if k not in _META)
    if unknown:
        raise ValueError(f"{plugin} takes no args, got {', '.join(unknown)}")


# ------------------------------------------------------------------------------ shared types


@attrs.frozen
class ResourceSpec:
    """One scored resource (``config.ResourceSpec``).

    Attributes:
        name: resource name (``cpu``, ``memory``, ``nvidia.com/gpu``, ...).
        weight: its weight in the weighted average (defaulted to 1 when 0 or unset).
    """

    name: str
    weight: int


DEFAULT_RESOURCES = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))
"""``defaultResourceSpec``: cpu and memory, weight 1 each."""


def _resources(raw: Any, path: str) -> tuple[ResourceSpec, ...]:
    """Decode ``resources`` with the v1 defaults: none -> cpu and memory; weight 0 -> 1."""
    items = _list(raw, path)
    if not items:
        return DEFAULT_RESOURCES
    out = []
    for i, item in enumerate(items):
        ip = f"{path}[{i}]"
        item = _mapping(item, ip)
        _no_unknown(item, frozenset({"name", "weight"}), ip)
        weight = _int(item.get("weight"), join(ip, "weight"))
        out.append(ResourceSpec(_str(item.get("name"), join(ip, "name")), weight or 1))
    return tuple(out)


@attrs.frozen
class UtilizationShapePoint:
    """One point of a RequestedToCapacityRatio shape (``config.UtilizationShapePoint``).

    Attributes:
        utilization: percent, 0-100.
        score: 0-10 (`MAX_CUSTOM_PRIORITY_SCORE`), scaled x10 when scoring.
    """

    utilization: int
    score: int


def _validate_shape(shape: Sequence[UtilizationShapePoint], path: str) -> None:
    """``validateFunctionShape``."""
    if not shape:
        raise ArgsError(path, "Required value: at least one point must be specified")
    for i in range(1, len(shape)):
        if shape[i - 1].utilization >= shape[i].utilization:
            raise ArgsError(
                f"{path}[{i}].utilization",
                f"Invalid value: {shape[i].utilization}: values must be sorted in increasing order",
            )
    for i, point in enumerate(shape):
        if not 0 <= point.utilization <= 100:
            raise ArgsError(
                f"{path}[{i}].utilization",
                f"Invalid value: {point.utilization}: not in valid range [0, 100]",
            )
        if not 0 <= point.score <= MAX_CUSTOM_PRIORITY_SCORE:
            raise ArgsError(
                f"{path}[{i}].score",
                f"Invalid value: {point.score}: "
                f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]",
            )


def _shape(raw: Any, path: str) -> tuple[UtilizationShapePoint, ...]:
    out = []
    for i, item in enumerate(_list(raw, path)):
        ip = f"{path}[{i}]"
        item = _mapping(item, ip)
        _no_unknown(item, frozenset({"utilization", "score"}), ip)
        out.append(
            UtilizationShapePoint(
                _int(item.get("utilization"), join(ip, "utilization")),
                _int(item.get("score"), join(ip, "score")),
            )
        )
    return tuple(out)


# ------------------------------------------------------------------------------ NodeResourcesFit


@attrs.frozen
class ScoringStrategy:
    """``NodeResourcesFitArgs.scoringStrategy`` after defaulting.

    Attributes:
        type: `LEAST_ALLOCATED`, `MOST_ALLOCATED` or `REQUESTED_TO_CAPACITY_RATIO`.
        resources: the scored resources with their weights (1-100).
        shape: the RequestedToCapacityRatio shape (empty for the other types).
    """

    type: str = LEAST_ALLOCATED
    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES
    shape: tuple[UtilizationShapePoint, ...] = ()


@attrs.frozen
class NodeResourcesFitArgs:
    """NodeResourcesFitArgs (v1), defaulted and validated.

    Attributes:
        ignored_resources: extended resources Filter does not check.
        ignored_resource_groups: domains (``example.com``) whose extended resources Filter
            does not check.
        scoring_strategy: how Score ranks nodes; defaults to LeastAllocated over cpu and
            memory with weight 1.
    """

    kind: ClassVar[str] = "NodeResourcesFitArgs"

    ignored_resources: frozenset[str] = frozenset()
    ignored_resource_groups: frozenset[str] = frozenset()
    scoring_strategy: ScoringStrategy = ScoringStrategy()

    @classmethod
    def from_mapping(cls, raw: Mapping[str, Any] | None) -> NodeResourcesFitArgs:
        """Decode, default (``SetDefaults_NodeResourcesFitArgs``) and validate
        (``ValidateNodeResourcesFitArgs``) the plugin's args.

        Raises:
            ArgsError: an unknown field, a value of the wrong type, an ignored resource or
                group that is not a qualified name (a group must not contain ``/``), an
                unsupported strategy type, a weight outside (0, 100], or an invalid shape
                (empty, utilization not increasing or outside [0, 100], score outside
                [0, 10]).
        """
        raw = _top(
            raw,
            frozenset({"ignoredResources", "ignoredResourceGroups", "scoringStrategy"}),
            cls.kind,
        )
        ignored = _string_list(raw.get("ignoredResources"), "ignoredResources")
        for i, name in enumerate(ignored):
            problem = qualified_name_problem(name)
            if problem is not None:
                raise ArgsError(
                    f"ignoredResources[{i}]", f"Invalid value: {go_value(name)}: {problem}"
                )
        groups = _string_list(raw.get("ignoredResourceGroups"), "ignoredResourceGroups")
        for i, group in enumerate(groups):
            path = f"ignoredResourceGroups[{i}]"
            if "/" in group:
                raise ArgsError(
                    path, f"Invalid value: {go_value(group)}: resource group name can't contain '/'"
                )
            problem = qualified_name_problem(group)
            if problem is not None:
                raise ArgsError(path, f"Invalid value: {go_value(group)}: {problem}")
        return cls(frozenset(ignored), frozenset(groups), _scoring_strategy(raw))


def _string_list(raw: Any, path: str) -> list[str]:
    items = _list(raw, path)
    for i, item in enumerate(items):
        _str(item, f"{path}[{i}]")
    return items


def _scoring_strategy(raw: Mapping[str, Any]) -> ScoringStrategy:
    sp = "scoringStrategy"
    if raw.get(sp) is None:
        return ScoringStrategy()
    strategy = _mapping(raw[sp], sp)
    _no_unknown(strategy, frozenset({"type", "resources", "requestedToCapacityRatio"}), sp)
    stype = _str(strategy.get("type"), f"{sp}.type")
    if stype not in _SCORING_TYPES:
        supported = ", ".join(go_value(t) for t in sorted(_SCORING_TYPES))
        raise ArgsError(
            f"{sp}.type", f"Unsupported value: {go_value(stype)}: supported values: {supported}"
        )
    resources = _resources(strategy.get("resources"), f"{sp}.resources")
    for i, res in enumerate(resources):
        if not 0 < res.weight <= 100:
            raise ArgsError(
                f"{sp}.resources[{i}].weight",
                f"Invalid value: {res.weight}: resource weight of {res.name} "
                "not in valid range (0, 100]",
            )
    rp = f"{sp}.requestedToCapacityRatio"
    shape: tuple[UtilizationShapePoint, ...] = ()
    if strategy.get("requestedToCapacityRatio") is not None:
        ratio = _mapping(strategy["requestedToCapacityRatio"], rp)
        _no_unknown(ratio, frozenset({"shape"}), rp)
        shape = _shape(ratio.get("shape"), f"{rp}.shape")
        _validate_shape(shape, f"{rp}.shape")
    elif stype == REQUESTED_TO_CAPACITY_RATIO:
        raise ArgsError(f"{rp}.shape", "Required value: at least one point must be specified")
    return ScoringStrategy(stype, resources, shape if stype == REQUESTED_TO_CAPACITY_RATIO else ())


# ------------------------------------------------------------------------------ BalancedAllocation


@attrs.frozen
class NodeResourcesBalancedAllocationArgs:
    """NodeResourcesBalancedAllocationArgs (v1), defaulted and validated.

    Attributes:
        resources: the resources whose usage fractions are balanced (weights are all 1);
            defaults to cpu and memory.
    """

    kind: ClassVar[str] = "NodeResourcesBalancedAllocationArgs"

    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES

    @classmethod
    def from_mapping(cls, raw: Mapping[str, Any] | None) -> NodeResourcesBalancedAllocationArgs:
        """Decode, default (``SetDefaults_NodeResourcesBalancedAllocationArgs``) and validate
        (``ValidateNodeResourcesBalancedAllocationArgs``) the plugin's args.

        Raises:
            ArgsError: an unknown field, a value of the wrong type, a resource named twice
                (``Duplicate value``) or a weight other than 1 (``must be 1``).
        """
        raw = _top(raw, frozenset({"resources"}), cls.kind)
        resources = _resources(raw.get("resources"), "resources")
        seen: set[str] = set()
        for i, res in enumerate(resources):
            if res.name in seen:
                raise ArgsError(f"resources[{i}].name", f"Duplicate value: {go_value(res.name)}")
            seen.add(res.name)
            if res.weight != 1:
                raise ArgsError(f"resources[{i}].weight", f"Invalid value: {res.weight}: must be 1")
        return cls(resources)


# ------------------------------------------------------------------------------ NodeAffinity

_ADDED_KEYS = frozenset(
    {
        "requiredDuringSchedulingIgnoredDuringExecution",
        "preferredDuringSchedulingIgnoredDuringExecution",
    }
)


def _raise_first(errs: Sequence[str]) -> None:
    """Selector compile errors come as ``FIELD: problem`` strings; raise the first."""
    if errs:
        field, _, problem = errs[0].partition(": ")
        raise ArgsError(field, problem)


def _term(raw: Any, path: str) -> NodeSelectorTerm:
    try:
        return NodeSelectorTerm.from_manifest(_mapping(raw, path), path)
    except FieldError as e:
        raise ArgsError(e.field, e.problem) from None


def _added_affinity(raw: Any, path: str) -> NodeAffinity:
    raw = _mapping(raw, path)
    _no_unknown(raw, _ADDED_KEYS, path)
    required: tuple[NodeSelectorTerm, ...] | None = None
    rp = f"{path}.requiredDuringSchedulingIgnoredDuringExecution"
    if raw.get("requiredDuringSchedulingIgnoredDuringExecution") is not None:
        req = _mapping(raw["requiredDuringSchedulingIgnoredDuringExecution"], rp)
        _no_unknown(req, frozenset({"nodeSelectorTerms"}), rp)
        tp = f"{rp}.nodeSelectorTerms"
        required = tuple(
            _term(item, f"{tp}[{i}]")
            for i, item in enumerate(_list(req.get("nodeSelectorTerms"), tp))
        )
        _raise_first(compile_node_selector(required, rp)[1])
    pp = f"{path}.preferredDuringSchedulingIgnoredDuringExecution"
    preferred = []
    for i, item in enumerate(_list(raw.get("preferredDuringSchedulingIgnoredDuringExecution"), pp)):
        ip = f"{pp}[{i}]"
        item = _mapping(item, ip)
        _no_unknown(item, frozenset({"weight", "preference"}), ip)
        weight = _int(item.get("weight"), join(ip, "weight"))
        pref = item.get("preference")
        term = _term({} if pref is None else pref, join(ip, "preference"))
        # NewPreferredSchedulingTerms skips weight-0 and empty terms without parsing them.
        if weight != 0:
            _raise_first(compile_term(term, ip)[1])
        preferred.append(PreferredSchedulingTerm(weight=weight, preference=term))
    return NodeAffinity(required=required, preferred=tuple(preferred))


@attrs.frozen
class NodeAffinityArgs:
    """NodeAffinityArgs (v1), validated.

    Attributes:
        added_affinity: a node affinity every pod must also satisfy (required terms) and
            that adds to every pod's score (preferred terms); None when not given.
    """

    kind: ClassVar[str] = "NodeAffinityArgs"

    added_affinity: NodeAffinity | None = None

    @classmethod
    def from_mapping(cls, raw: Mapping[str, Any] | None) -> NodeAffinityArgs:
        """Decode and validate (``ValidateNodeAffinityArgs``) the plugin's args: the
        ``addedAffinity`` selectors must compile as ``nodeaffinity.NewNodeSelector`` /
        ``NewPreferredSchedulingTerms`` require.

        Raises:
            ArgsError: an unknown field, a malformed ``addedAffinity``, or an invalid
                requirement (bad operator, key, values), named by its path.
        """
        raw = _top(raw, frozenset({"addedAffinity"}), cls.kind)
        if raw.get("addedAffinity") is None:
            return cls()
        return cls(_added_affinity(raw["addedAffinity"], "addedAffinity"))


# ------------------------------------------------------------------------------ DefaultPreemption


@attrs.frozen
class DefaultPreemptionArgs:
    """DefaultPreemptionArgs (v1), defaulted and validated.

    Attributes:
        min_candidate_nodes_percentage: at least this percentage of the potential nodes is
            dry-run for candidates (default 10).
        min_candidate_nodes_absolute: and at least this many nodes (default 100).
    """

    kind: ClassVar[str] = "DefaultPreemptionArgs"

    min_candidate_nodes_percentage: int = 10
    min_candidate_nodes_absolute: int = 100

    @classmethod
    def from_mapping(cls, raw: Mapping[str, Any] | None) -> DefaultPreemptionArgs:
        """Decode, default (``SetDefaults_DefaultPreemptionArgs``) and validate
        (``ValidateDefaultPreemptionArgs``) the plugin's args.

        Raises:
            ArgsError: an unknown field, a value of the wrong type, a percentage outside
                [0, 100] (``not in valid range [0, 100]``), a negative absolute (``not in
                valid range [0, inf)``), or both zero (``cannot be zero at the same time as
                ...``).
        """
        keys = ("minCandidateNodesPercentage", "minCandidateNodesAbsolute")
        raw = _top(raw, frozenset(keys), cls.kind)
        pct = _int(raw.get(keys[0]), keys[0], 10)
        absolute = _int(raw.get(keys[1]), keys[1], 100)
        if not 0 <= pct <= 100:
            raise ArgsError(keys[0], f"Invalid value: {pct}: not in valid range [0, 100]")
        if absolute < 0:
            raise ArgsError(keys[1], f"Invalid value: {absolute}: not in valid range [0, inf)")
        if pct == 0 and absolute == 0:
            raise ArgsError(
                keys[0],
                "Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute",
            )
        return cls(pct, absolute)


PLUGIN_ARGS: Mapping[str, Any] = {
    "DefaultPreemption": DefaultPreemptionArgs,
    "NodeResourcesFit": NodeResourcesFitArgs,
    "NodeResourcesBalancedAllocation": NodeResourcesBalancedAllocationArgs,
    "NodeAffinity": NodeAffinityArgs,
}
"""Plugin name -> its args type (each has ``from_mapping``)."""
