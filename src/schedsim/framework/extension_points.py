"""The one table of extension points: which exist, which hooks implement them, which run.

Mirrors kube-scheduler's ``frameworkImpl.getExtensionPoints`` (the list NewFramework walks to
fill each point's plugin slice from ``KubeSchedulerConfiguration.profiles[i].plugins``), with
every point of the v1 ``Plugins`` type, in scheduling-cycle order. Everything that needs the
list of points reads it from here: the hook reference (docs/hooks.md), the typed protocols,
the runtime's plugin chains, ``Framework.order()`` / ``Framework.extension_points()``,
``schedsim plugins`` and the profile parser, which refuses a config section for a point
schedsim does not run yet by name.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

__all__ = [
    "DEVICE_CHOICE",
    "EXTENSION_POINTS",
    "HOOK_TITLES",
    "POINTS_BY_KEY",
    "RUN_POINTS",
    "ExtensionPoint",
    "Hook",
    "hook_names",
]


@attrs.frozen
class Hook:
    """One hook method a plugin implements for a point.

    Attributes:
        name: the hook spec's name, e.g. ``"schedsim_normalize_score"``.
        title: kube-scheduler's name for it, e.g. ``"NormalizeScore"``.
    """

    name: str
    title: str


@attrs.frozen
class ExtensionPoint:
    """One extension point.

    Attributes:
        key: its field in the v1 ``Plugins`` type (``"preScore"``): the config section.
        title: kube-scheduler's name (``"PreScore"``).
        protocol: the typed protocol in `schedsim.framework.plugin` (``"PreScorePlugin"``).
        hooks: the hooks that implement it, the main one first (Score: Score then
            NormalizeScore); empty for a point schedsim does not run.
        runs: whether schedsim runs the point yet. A config section for a point that does not
            run is refused by name.
    """

    key: str
    title: str
    protocol: str
    hooks: tuple[Hook, ...]
    runs: bool

    @property
    def hook(self) -> str:
        """The main hook's name (its presence decides whether a plugin runs at the point)."""
        return self.hooks[0].name


def _point(key: str, title: str, *hooks: tuple[str, str], runs: bool = True) -> ExtensionPoint:
    return ExtensionPoint(
        key, title, title + "Plugin", tuple(Hook(n, t) for n, t in hooks), runs and bool(hooks)
    )


EXTENSION_POINTS: tuple[ExtensionPoint, ...] = (
    _point("queueSort", "QueueSort", ("schedsim_queue_sort_less", "Less")),
    _point("preEnqueue", "PreEnqueue", ("schedsim_pre_enqueue", "PreEnqueue")),
    _point(
        "preFilter",
        "PreFilter",
        ("schedsim_pre_filter", "PreFilter"),
        ("schedsim_pre_filter_add_pod", "AddPod"),
        ("schedsim_pre_filter_remove_pod", "RemovePod"),
    ),
    _point("filter", "Filter", ("schedsim_filter", "Filter")),
    _point("postFilter", "PostFilter", ("schedsim_post_filter", "PostFilter")),
    _point("preScore", "PreScore", ("schedsim_pre_score", "PreScore")),
    _point(
        "score",
        "Score",
        ("schedsim_score", "Score"),
        ("schedsim_normalize_score", "NormalizeScore"),
    ),
    _point(
        "reserve",
        "Reserve",
        ("schedsim_reserve", "Reserve"),
        ("schedsim_unreserve", "Unreserve"),
    ),
    _point("permit", "Permit", ("schedsim_permit", "Permit")),
    _point(
        "preBind",
        "PreBind",
        ("schedsim_pre_bind", "PreBind"),
        ("schedsim_pre_bind_pre_flight", "PreBindPreFlight"),
    ),
    _point("bind", "Bind", ("schedsim_bind", "Bind")),
    _point("postBind", "PostBind", ("schedsim_post_bind", "PostBind")),
)
"""Every extension point of kube-scheduler 1.34's v1 ``Plugins`` type (besides
``multiPoint``, which expands into these), in the order a pod meets them."""

DEVICE_CHOICE = ExtensionPoint(
    "deviceChoice",
    "DeviceChoice",
    "DeviceChoicePlugin",
    (Hook("schedsim_choose_devices", "ChooseDevices"),),
    True,
)
"""Beyond kube-scheduler 1.34 (which has no such point): rank the devices of the chosen node
for a claim request (`schedsim.framework.devices`). It has no section in a
KubeSchedulerConfiguration (the v1 ``Plugins`` type has none): a plugin enabled at any point
of the profile that implements ``schedsim_choose_devices`` runs here, in profile order. Not
in `EXTENSION_POINTS`, which lists upstream's points only."""

POINTS_BY_KEY: Mapping[str, ExtensionPoint] = {p.key: p for p in EXTENSION_POINTS}
"""Config key -> point."""

RUN_POINTS: tuple[str, ...] = tuple(p.key for p in EXTENSION_POINTS if p.runs)
"""Config keys of the points schedsim runs, in cycle order."""

HOOK_TITLES: Mapping[str, str] = {
    h.name: h.title for p in (*EXTENSION_POINTS, DEVICE_CHOICE) for h in p.hooks
}
"""Hook name -> kube-scheduler's name for it (``schedsim_score`` -> ``Score``), cycle order,
then schedsim's own `DEVICE_CHOICE`."""


def hook_names() -> tuple[str, ...]:
    """Every hook spec's name, in cycle order (main hook of a point first)."""
    return tuple(HOOK_TITLES)
