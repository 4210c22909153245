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

__all__ = [
    "DEFAULT_PLUGINS",
    "EXTENSION_POINTS",
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

EXTENSION_POINTS: tuple[str, ...] = (
    "preEnqueue",
    "preFilter",
    "filter",
    "postFilter",
    "reserve",
    "preBind",
)
"""The KubeSchedulerConfiguration extension points schedsim runs."""

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
    """

    scheduler_name: str = "default-scheduler"
    plugins: Mapping[str, tuple[str, ...]] = attrs.field(
        factory=lambda: {p: DEFAULT_PLUGINS for p in EXTENSION_POINTS}
    )
    plugin_args: Mapping[str, Mapping[str, Any]] = attrs.field(factory=dict)
    explicit: frozenset[str] = frozenset()


def default_profile() -> Profile:
    """kube-scheduler's default profile."""
    return Profile()


def _names(plugin_set: Mapping[str, Any], key: str, path: str) -> list[str]:
    items = d.get_list(plugin_set, key, path)
    out = []
    p = d.join(path, key)
    for i in range(len(items)):
        item = d.get_mapping_item(items, i, p)
        name = d.get_str(item, "name", f"{p}[{i}]")
        if not name:
            raise FieldError(f"{p}[{i}].name", "required")
        out.append(name)
    return out


def _merge(default: Sequence[str], enabled: Sequence[str], disabled: Sequence[str]) -> list[str]:
    """mergePluginSet: defaults minus disabled, in default order, then extra enabled."""
    out = [] if "*" in disabled else [n for n in default if n not in disabled]
    out += [n for n in enabled if n not in out]
    return out


def profile_from_config(raw: Mapping[str, Any]) -> Profile:
    """Build a Profile from a decoded KubeSchedulerConfiguration (``profiles[0]``).

    Raises:
        FieldError: a field is malformed (the message names it).
    """
    kind = d.get_str(raw, "kind", "")
    if kind not in _CONFIG_KINDS:
        raise FieldError("kind", f"expected KubeSchedulerConfiguration, got {kind!r}")
    profiles = d.get_list(raw, "profiles", "")
    if not profiles:
        return default_profile()
    prof = d.get_mapping_item(profiles, 0, "profiles")
    path = "profiles[0]"
    plugins = d.get_map(prof, "plugins", path)
    pp = d.join(path, "plugins")
    mp = d.get_map(plugins, "multiPoint", pp)
    mpp = d.join(pp, "multiPoint")
    mp_enabled = _names(mp, "enabled", mpp)
    multi_point = _merge(DEFAULT_PLUGINS, mp_enabled, _names(mp, "disabled", mpp))
    explicit = set(mp_enabled)
    per_point: dict[str, tuple[str, ...]] = {}
    for point in EXTENSION_POINTS:
        ps = d.get_map(plugins, point, pp)
        ptp = d.join(pp, point)
        enabled = _names(ps, "enabled", ptp)
        disabled = _names(ps, "disabled", ptp)
        explicit.update(enabled)
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
    return Profile(
        scheduler_name=d.get_str(prof, "schedulerName", path, "default-scheduler"),
        plugins=per_point,
        plugin_args=args,
        explicit=frozenset(explicit),
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
