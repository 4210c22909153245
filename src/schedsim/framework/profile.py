"""Scheduler profiles: which plugins run at each extension point, in which order, with which
args. Read from a KubeSchedulerConfiguration (``profiles[0]``) or the default profile.

Merging follows kube-scheduler (config v1 ``mergePlugins`` and the framework's MultiPoint
expansion, ``expandMultiPointPlugins``): the default plugins are all MultiPoint plugins; for
an extension point the order is: MultiPoint plugins also enabled explicitly there (in that
point's order), then the remaining MultiPoint plugins not disabled there, then plugins enabled
only there. ``"*"`` in a point's ``disabled`` leaves only the plugins enabled there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from schedsim.api import _decode as d
from schedsim.api.errors import FieldError, ManifestError
from schedsim.api.loader import read_documents
from schedsim.framework.extension_points import EXTENSION_POINTS as _ALL_POINTS
from schedsim.framework.extension_points import RUN_POINTS

__all__ = [
    "DEFAULT_PLUGINS",
    "DEFAULT_WEIGHTS",
    "EXTENSION_POINTS",
    "RUN_POINTS",
    "Profile",
    "default_profile",
    "load_scheduler_config",
    "profile_from_config",
]

DEFAULT_PLUGINS: tuple[str, ...] = (
    "SchedulingGates",
    "PrioritySort",
    "NodeUnschedulable",
    "NodeName",
    "TaintToleration",
    "NodeAffinity",
    "NodePorts",
    "NodeResourcesFit",
    "VolumeRestrictions",
    "NodeVolumeLimits",
    "VolumeBinding",
    "VolumeZone",
    "PodTopologySpread",
    "InterPodAffinity",
    "DynamicResources",
    "DefaultPreemption",
    "NodeResourcesBalancedAllocation",
    "ImageLocality",
    "DefaultBinder",
)
"""kube-scheduler 1.34's default MultiPoint plugins, in order (DynamicResources is enabled
by default since DRA is GA)."""

DEFAULT_WEIGHTS: Mapping[str, int] = {
    "TaintToleration": 3,
    "NodeAffinity": 2,
    "NodeResourcesFit": 1,
    "PodTopologySpread": 2,
    "InterPodAffinity": 2,
    "NodeResourcesBalancedAllocation": 1,
    "ImageLocality": 1,
}
"""Score weights of kube-scheduler 1.34's default MultiPoint plugins (config v1
getDefaultPlugins); a Score plugin without a weight gets 1 (getScoreWeights)."""

EXTENSION_POINTS: tuple[str, ...] = RUN_POINTS
"""The KubeSchedulerConfiguration extension points schedsim runs (alias of
`extension_points.RUN_POINTS`)."""

_CONFIG_KINDS = {"KubeSchedulerConfiguration"}


@attrs.frozen
class Profile:
    """One scheduler profile.

    Attributes:
        scheduler_name: ``schedulerName`` of the profile.
        plugins: extension point (``"preEnqueue"``, ``"preFilter"``, ``"filter"``,
            ``"postFilter"``, ``"reserve"``, ``"preBind"``) -> plugin names
            in run order; a plugin runs at a point only if it implements that hook.
        plugin_args: plugin name -> its ``pluginConfig`` args.
        explicit: names the user enabled explicitly (an unknown one is an error, while an
            unknown default plugin is only "not emulated").
        plugin_weights: Score plugin name -> its weight (a positive int); a Score plugin not
            listed weighs 1, as in kube-scheduler's getScoreWeights.
        percentage_of_nodes_to_score: the profile's ``percentageOfNodesToScore`` (0-100), or
            the configuration's global one when the profile has none; ``None`` or 0 means
            kube-scheduler's adaptive default.
    """

    scheduler_name: str = "default-scheduler"
    plugins: Mapping[str, tuple[str, ...]] = attrs.field(
        factory=lambda: {p: DEFAULT_PLUGINS for p in RUN_POINTS}
    )
    plugin_args: Mapping[str, Mapping[str, Any]] = attrs.field(factory=dict)
    explicit: frozenset[str] = frozenset()
    plugin_weights: Mapping[str, int] = attrs.field(factory=lambda: dict(DEFAULT_WEIGHTS))
    percentage_of_nodes_to_score: int | None = None

    def weight(self, plugin: str) -> int:
        """``plugin``'s Score weight (1 when not configured)."""
        return self.plugin_weights.get(plugin, 1)


def default_profile() -> Profile:
    """kube-scheduler's default profile."""
    return Profile()


_INT32_MAX = 2**31 - 1


def _entries(plugin_set: Mapping[str, Any], key: str, path: str) -> list[tuple[str, int | None]]:
    """``(name, weight)`` of each ``Plugin`` in ``plugin_set[key]`` (weight None if absent)."""
    items = d.get_list(plugin_set, key, path)
    out: list[tuple[str, int | None]] = []
    p = d.join(path, key)
    for i in range(len(items)):
        item = d.get_mapping_item(items, i, p)
        ip = f"{p}[{i}]"
        name = d.get_str(item, "name", ip)
        if not name:
            raise FieldError(f"{ip}.name", "required")
        weight: int | None = None
        if item.get("weight") is not None:
            weight = d.get_int(item, "weight", ip)
            if not -_INT32_MAX - 1 <= weight <= _INT32_MAX:
                raise FieldError(f"{ip}.weight", f"{weight} does not fit in an int32")
        out.append((name, weight))
    return out


def _names(plugin_set: Mapping[str, Any], key: str, path: str) -> list[str]:
    return [n for n, _ in _entries(plugin_set, key, path)]


def _merge(default: Sequence[str], enabled: Sequence[str], disabled: Sequence[str]) -> list[str]:
    """mergePluginSet: defaults minus disabled, in default order, then extra enabled."""
    out = [] if "*" in disabled else [n for n in default if n not in disabled]
    out += [n for n in enabled if n not in out]
    return out


def _percentage(raw: Mapping[str, Any], path: str) -> int | None:
    """``percentageOfNodesToScore``, validated as validatePercentageOfNodesToScore does."""
    if raw.get("percentageOfNodesToScore") is None:
        return None
    value = d.get_int(raw, "percentageOfNodesToScore", path)
    if not 0 <= value <= 100:
        raise FieldError(
            d.join(path, "percentageOfNodesToScore"),
            f"Invalid value: {value}: not in valid range [0-100]",
        )
    return value


def profile_from_config(raw: Mapping[str, Any]) -> Profile:
    """Build a Profile from a decoded KubeSchedulerConfiguration (``profiles[0]``).

    Raises:
        FieldError: a field is malformed (the message names it).
    """
    kind = d.get_str(raw, "kind", "")
    if kind not in _CONFIG_KINDS:
        raise FieldError("kind", f"expected KubeSchedulerConfiguration, got {kind!r}")
    global_percentage = _percentage(raw, "")
    profiles = d.get_list(raw, "profiles", "")
    if not profiles:
        return attrs.evolve(default_profile(), percentage_of_nodes_to_score=global_percentage)
    prof = d.get_mapping_item(profiles, 0, "profiles")
    return _profile(prof, "profiles[0]", global_percentage)


def _profile(prof: Mapping[str, Any], path: str, global_percentage: int | None) -> Profile:
    plugins = d.get_map(prof, "plugins", path)
    pp = d.join(path, "plugins")
    for ep in _ALL_POINTS:
        if not ep.runs and plugins.get(ep.key) is not None:
            raise FieldError(
                d.join(pp, ep.key),
                f"schedsim does not run the {ep.title} extension point yet; remove this section",
            )
    mp = d.get_map(plugins, "multiPoint", pp)
    mpp = d.join(pp, "multiPoint")
    mp_entries = _entries(mp, "enabled", mpp)
    mp_enabled = [n for n, _ in mp_entries]
    multi_point = _merge(DEFAULT_PLUGINS, mp_enabled, _names(mp, "disabled", mpp))
    explicit = set(mp_enabled)
    # Weights as config v1 mergePluginSet then getScoreWeights: a MultiPoint entry replaces
    # the default plugin's entry (weight included, absent meaning 1); an entry enabled at
    # `score` wins over MultiPoint; weight 0 counts as 1.
    mp_weights = {n: w for n, w in mp_entries}
    weights: dict[str, int] = {}
    for name in multi_point:
        if name in mp_weights:
            weights[name] = mp_weights[name] or 1
        elif name in DEFAULT_WEIGHTS:
            weights[name] = DEFAULT_WEIGHTS[name]
    per_point: dict[str, tuple[str, ...]] = {}
    for point in RUN_POINTS:
        ps = d.get_map(plugins, point, pp)
        ptp = d.join(pp, point)
        entries = _entries(ps, "enabled", ptp)
        enabled = [n for n, _ in entries]
        disabled = _names(ps, "disabled", ptp)
        explicit.update(enabled)
        if point == "score":
            for name, w in entries:
                weights[name] = w or 1
        if "*" in disabled:  # no MultiPoint expansion at this point
            per_point[point] = tuple(enabled)
            continue
        # expandMultiPointPlugins: MultiPoint plugins also enabled here ("overrides") first,
        # in this point's order; then the other MultiPoint plugins not disabled here; then
        # the plugins enabled only here.
        overrides = [n for n in enabled if n in multi_point and n not in disabled]
        expanded = [n for n in multi_point if n not in disabled and n not in enabled]
        rest = [n for n in enabled if n not in overrides]
        per_point[point] = tuple(overrides + expanded + rest)
    args: dict[str, Mapping[str, Any]] = {}
    cfg = d.get_list(prof, "pluginConfig", path)
    cp = d.join(path, "pluginConfig")
    for i in range(len(cfg)):
        item = d.get_mapping_item(cfg, i, cp)
        name = d.get_str(item, "name", f"{cp}[{i}]")
        if name in args:  # frameworkruntime.NewFramework refuses this too
            raise FieldError(f"{cp}[{i}].name", f"repeated config for plugin {name}")
        args[name] = d.get_map(item, "args", f"{cp}[{i}]")
    own = _percentage(prof, path)
    return Profile(
        scheduler_name=d.get_str(prof, "schedulerName", path, "default-scheduler"),
        plugins=per_point,
        plugin_args=args,
        explicit=frozenset(explicit),
        plugin_weights=weights,
        percentage_of_nodes_to_score=own if own is not None else global_percentage,
    )


def load_scheduler_config(path: str) -> Profile:
    """Read a KubeSchedulerConfiguration file and return its first profile.

    Raises:
        ManifestError: the file is missing, not YAML, or malformed; the message is
            ``FILE: KubeSchedulerConfiguration: FIELD: problem``.
    """
    docs = [d for d in read_documents(path) if d is not None]
    if len(docs) != 1:
        raise ManifestError(f"{path}: expected one KubeSchedulerConfiguration, found {len(docs)}")
    raw = docs[0]
    if not isinstance(raw, Mapping):
        raise ManifestError(f"{path}: expected a KubeSchedulerConfiguration mapping")
    try:
        return profile_from_config(raw)
    except FieldError as e:
        raise ManifestError(f"{path}: KubeSchedulerConfiguration: {e.field}: {e.problem}") from None
