"""KubeSchedulerConfiguration (``kubescheduler.config.k8s.io/v1``), decoded strictly.

kube-scheduler decodes its configuration file strictly; so does schedsim, and nothing in it is
lost silently. Every field of the v1 type is either applied (``profiles`` with their
``plugins`` at every point schedsim runs, Score weights, ``pluginConfig``,
``percentageOfNodesToScore`` globally and per profile, ``podInitialBackoffSeconds`` and
``podMaxBackoffSeconds`` for the scheduling queue), accepted with a warning naming it when
it cannot change a simulation's outcome (``leaderElection``, ``clientConnection``, bind
addresses, ``parallelism``, profiling, ``delayCacheUntilActive``), or refused
(``extenders``: not emulated; a section for an extension point schedsim does not run yet).
Unknown fields and other apiVersions are refused.

Plugin merging follows kube-scheduler (config v1 ``mergePlugins`` and the framework's
MultiPoint expansion, ``expandMultiPointPlugins``): the default plugins are all MultiPoint
plugins; for an extension point the order is: MultiPoint plugins also enabled explicitly there
(in that point's order), then the remaining MultiPoint plugins not disabled there, then plugins
enabled only there. ``"*"`` in a point's ``disabled`` leaves only the plugins enabled there.
Score weights follow ``mergePluginSet`` and ``getScoreWeights``: a MultiPoint entry for a
default plugin replaces the default entry (its weight included); an entry enabled at ``score``
wins over MultiPoint; an absent or 0 weight counts as 1.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from schedsim.api.errors import FieldError, ManifestError
from schedsim.api.loading import decode as d
from schedsim.api.loading.loader import read_documents
from schedsim.framework.extension_points import EXTENSION_POINTS, RUN_POINTS
from schedsim.framework.profile import (
    DEFAULT_PLUGINS,
    DEFAULT_WEIGHTS,
    IN_TREE_PLUGINS,
    Profile,
    default_profile,
)

__all__ = [
    "API_VERSION",
    "SchedulerConfiguration",
    "load_scheduler_configuration",
    "scheduler_configuration_from_mapping",
]

API_VERSION = "kubescheduler.config.k8s.io/v1"
"""The only KubeSchedulerConfiguration version kube-scheduler 1.34 reads."""

DEFAULT_SCHEDULER_NAME = "default-scheduler"

_INT32 = (-(2**31), 2**31 - 1)

# Fields that cannot change where pods go in a simulation: accepted (type-checked) with a
# warning that names them. Value: the field's type, or the allowed sub-fields and their types.
_STR, _BOOL, _INT, _NUM = "string", "boolean", "integer", "number"
_NO_EFFECT: Mapping[str, str | Mapping[str, str]] = {
    "parallelism": _INT,
    "leaderElection": {
        "leaderElect": _BOOL,
        "leaseDuration": _STR,
        "renewDeadline": _STR,
        "retryPeriod": _STR,
        "resourceLock": _STR,
        "resourceName": _STR,
        "resourceNamespace": _STR,
    },
    "clientConnection": {
        "kubeconfig": _STR,
        "acceptContentTypes": _STR,
        "contentType": _STR,
        "qps": _NUM,
        "burst": _INT,
    },
    "healthzBindAddress": _STR,
    "metricsBindAddress": _STR,
    "enableProfiling": _BOOL,
    "enableContentionProfiling": _BOOL,
    "podInitialBackoffSeconds": _INT,
    "podMaxBackoffSeconds": _INT,
    "delayCacheUntilActive": _BOOL,
}
_TOP_FIELDS = frozenset(
    {"apiVersion", "kind", "percentageOfNodesToScore", "profiles", "extenders", *_NO_EFFECT}
)
_PROFILE_FIELDS = frozenset(
    {"schedulerName", "percentageOfNodesToScore", "plugins", "pluginConfig"}
)
_PLUGINS_FIELDS = frozenset({"multiPoint", *(p.key for p in EXTENSION_POINTS)})
_PLUGIN_SET_FIELDS = frozenset({"enabled", "disabled"})
_PLUGIN_FIELDS = frozenset({"name", "weight"})
_PLUGIN_CONFIG_FIELDS = frozenset({"name", "args"})

# Applied (the queue's backoff), though type-checked and validated with the fields above.
_APPLIED_QUEUE_FIELDS = frozenset({"podInitialBackoffSeconds", "podMaxBackoffSeconds"})

# validation.invalidPluginsByVersion: removed in v1, refused by name.
_INVALID_IN_V1 = frozenset({"AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits"})


@attrs.frozen
class SchedulerConfiguration:
    """A decoded KubeSchedulerConfiguration: every profile, and what was not applied.

    Frozen and picklable (worker processes get a copy).

    Attributes:
        profiles: the profiles in file order (at least one: kube-scheduler's default
            profile when the file has none); their ``scheduler_name`` values are unique.
        percentage_of_nodes_to_score: the global ``percentageOfNodesToScore`` (None when
            absent); each profile already carries its effective value.
        pod_initial_backoff_seconds: ``podInitialBackoffSeconds`` (v1 default 1).
        pod_max_backoff_seconds: ``podMaxBackoffSeconds`` (v1 default 10).
        warnings: one line per field accepted without effect, weight ignored or plugin not
            emulated yet, each naming the field (``profiles[0].plugins.filter.enabled[0]
            .weight: ...``); the CLI prints them with the file name.
    """

    profiles: tuple[Profile, ...] = attrs.field(factory=lambda: (default_profile(),))
    percentage_of_nodes_to_score: int | None = None
    warnings: tuple[str, ...] = ()
    pod_initial_backoff_seconds: int = 1
    pod_max_backoff_seconds: int = 10

    def profile_for(self, scheduler_name: str) -> Profile | None:
        """The profile whose ``schedulerName`` is ``scheduler_name`` (a pod's
        ``spec.schedulerName``, ``"default-scheduler"`` when unset), or None: kube-scheduler
        leaves such pods to another scheduler."""
        for profile in self.profiles:
            if profile.scheduler_name == scheduler_name:
                return profile
        return None


def _check_fields(raw: Mapping[str, Any], allowed: frozenset[str], path: str) -> None:
    """Refuse a field the v1 type does not have, as the strict decoder does."""
    for key in raw:
        if key not in allowed:
            raise FieldError(d.join(path, str(key)), f'unknown field "{key}"')


def _check_type(value: Any, kind: str, path: str) -> None:
    ok = {
        _STR: isinstance(value, str),
        _BOOL: isinstance(value, bool),
        _INT: isinstance(value, int) and not isinstance(value, bool),
        _NUM: isinstance(value, int | float) and not isinstance(value, bool),
    }[kind]
    if not ok:
        article = "an" if kind == _INT else "a"
        raise FieldError(path, f"expected {article} {kind}, got {d.type_name(value)}")


def _no_effect_fields(raw: Mapping[str, Any]) -> list[str]:
    """Type-check the fields without effect and validate them as
    ValidateKubeSchedulerConfiguration does; return the names present."""
    present = []
    for key, spec in _NO_EFFECT.items():
        value = raw.get(key)
        if value is None:
            continue
        present.append(key)
        if isinstance(spec, str):
            _check_type(value, spec, key)
            continue
        sub = d.get_map(raw, key, "")
        _check_fields(sub, frozenset(spec), key)
        for name, kind in spec.items():
            if sub.get(name) is not None:
                _check_type(sub[name], kind, f"{key}.{name}")
    if raw.get("parallelism") is not None and raw["parallelism"] <= 0:
        raise FieldError(
            "parallelism",
            f"Invalid value: {raw['parallelism']}: should be an integer value greater than zero",
        )
    initial = raw.get("podInitialBackoffSeconds")
    if initial is not None and initial <= 0:
        raise FieldError(
            "podInitialBackoffSeconds", f"Invalid value: {initial}: must be greater than 0"
        )
    top = raw.get("podMaxBackoffSeconds")
    if top is not None and top < (1 if initial is None else initial):  # v1 default: 1 s
        raise FieldError(
            "podMaxBackoffSeconds",
            f"Invalid value: {top}: must be greater than or equal to PodInitialBackoffSeconds",
        )
    le = d.get_map(raw, "leaderElection", "")
    lock = le.get("resourceLock")
    if le.get("leaderElect", True) and lock is not None and lock != "leases":
        raise FieldError(
            "leaderElection.resourceLock",
            f'Invalid value: "{lock}": resourceLock value must be "leases"',
        )
    return present


def _entries(
    plugin_set: Mapping[str, Any], key: str, path: str
) -> list[tuple[str, int | None, str]]:
    """``(name, weight, path)`` of each ``Plugin`` in ``plugin_set[key]`` (weight None if
    absent)."""
    items = d.get_list(plugin_set, key, path)
    out: list[tuple[str, int | None, str]] = []
    p = d.join(path, key)
    for i in range(len(items)):
        item = d.get_mapping_item(items, i, p)
        ip = f"{p}[{i}]"
        _check_fields(item, _PLUGIN_FIELDS, ip)
        name = d.get_str(item, "name", ip)
        if not name:
            raise FieldError(f"{ip}.name", "required")
        weight: int | None = None
        if item.get("weight") is not None:
            weight = d.get_int(item, "weight", ip)
            if not _INT32[0] <= weight <= _INT32[1]:
                raise FieldError(f"{ip}.weight", f"{weight} does not fit in an int32")
        out.append((name, weight, ip))
    return out


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


def _invalid_in_v1(name: str, path: str) -> None:
    if name in _INVALID_IN_V1:
        raise FieldError(
            path,
            f'Invalid value: "{name}": was invalid in version "{API_VERSION}" '
            f'(KubeSchedulerConfiguration is version "{API_VERSION}")',
        )


def _profile(
    prof: Mapping[str, Any], path: str, global_percentage: int | None, warnings: list[str]
) -> Profile:
    _check_fields(prof, _PROFILE_FIELDS, path)
    plugins = d.get_map(prof, "plugins", path)
    pp = d.join(path, "plugins")
    _check_fields(plugins, _PLUGINS_FIELDS, pp)
    for ep in EXTENSION_POINTS:
        if not ep.runs and plugins.get(ep.key) is not None:
            raise FieldError(
                d.join(pp, ep.key),
                f"schedsim does not run the {ep.title} extension point yet; remove this section",
            )
    mp = d.get_map(plugins, "multiPoint", pp)
    mpp = d.join(pp, "multiPoint")
    _check_fields(mp, _PLUGIN_SET_FIELDS, mpp)
    mp_entries = _entries(mp, "enabled", mpp)
    mp_enabled = [n for n, _, _ in mp_entries]
    disabled_entries = _entries(mp, "disabled", mpp)
    multi_point = _merge(DEFAULT_PLUGINS, mp_enabled, [n for n, _, _ in disabled_entries])
    explicit = set(mp_enabled)
    mp_weights = {n: w for n, w, _ in mp_entries}
    weights: dict[str, int] = {}
    for name in multi_point:
        if name in mp_weights:
            weights[name] = mp_weights[name] or 1
        elif name in DEFAULT_WEIGHTS:
            weights[name] = DEFAULT_WEIGHTS[name]
    for _, w, ip in mp_entries:
        if w == 0:
            warnings.append(f"{ip}.weight: 0 counts as 1, as in kube-scheduler")
    per_point: dict[str, tuple[str, ...]] = {}
    enabled_at: dict[str, tuple[tuple[str, str], ...]] = {}
    queue_sort_set: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
    for point in RUN_POINTS:
        ps = d.get_map(plugins, point, pp)
        ptp = d.join(pp, point)
        _check_fields(ps, _PLUGIN_SET_FIELDS, ptp)
        entries = _entries(ps, "enabled", ptp)
        enabled = [n for n, _, _ in entries]
        point_disabled = _entries(ps, "disabled", ptp)
        disabled_entries.extend(point_disabled)
        disabled = [n for n, _, _ in point_disabled]
        for name, w, ip in entries:
            _invalid_in_v1(name, ip)
            if point == "score":
                weights[name] = w or 1
                if w == 0:
                    warnings.append(f"{ip}.weight: 0 counts as 1, as in kube-scheduler")
            elif w is not None:
                warnings.append(f"{ip}.weight: ignored: weights apply at score and multiPoint")
        explicit.update(enabled)
        if entries:
            enabled_at[point] = tuple((n, ip) for n, _, ip in entries)
        if point == "queueSort":
            queue_sort_set = (tuple(enabled), tuple(disabled))
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
    warnings.extend(_no_effect(disabled_entries, explicit))
    args: dict[str, Mapping[str, Any]] = {}
    index: dict[str, int] = {}
    cfg = d.get_list(prof, "pluginConfig", path)
    cp = d.join(path, "pluginConfig")
    for i in range(len(cfg)):
        item = d.get_mapping_item(cfg, i, cp)
        _check_fields(item, _PLUGIN_CONFIG_FIELDS, f"{cp}[{i}]")
        name = d.get_str(item, "name", f"{cp}[{i}]")
        if not name:
            raise FieldError(f"{cp}[{i}].name", "required")
        _invalid_in_v1(name, f"{cp}[{i}]")
        if name in args:  # validatePluginConfig: field.Duplicate
            raise FieldError(f"{cp}[{i}]", f'Duplicate value: "{name}"')
        args[name] = d.get_map(item, "args", f"{cp}[{i}]")
        index[name] = i
    own = _percentage(prof, path)
    name = d.get_str(prof, "schedulerName", path) or DEFAULT_SCHEDULER_NAME  # v1 default
    return Profile(
        scheduler_name=name,
        plugins=per_point,
        plugin_args=args,
        explicit=frozenset(explicit),
        plugin_weights=weights,
        enabled_at=enabled_at,
        multi_point_weights=tuple((n, ip) for n, w, ip in mp_entries if w is not None),
        multi_point_enabled=tuple((n, ip) for n, _, ip in mp_entries),
        queue_sort_set=queue_sort_set,
        percentage_of_nodes_to_score=own if own is not None else global_percentage,
        config_path=path,
        plugin_config_index=index,
    )


def _no_effect(disabled: Sequence[tuple[str, int | None, str]], enabled: set[str]) -> list[str]:
    """One warning per ``disabled`` entry that cannot change anything: a name that is not an
    in-tree plugin and is enabled nowhere in the profile (disabling only removes default or
    enabled plugins; kube-scheduler accepts such an entry without a word, so a typo there
    would go unnoticed)."""
    out = []
    for name, _, where in disabled:
        if name == "*" or name in IN_TREE_PLUGINS or name in enabled:
            continue
        why = (
            f'"{name}" was removed from kube-scheduler'
            if name in _INVALID_IN_V1
            else f'"{name}" is neither an in-tree plugin nor enabled in this profile'
        )
        out.append(f"{where}: {why}; disabling it has no effect")
    return out


def _check_common_queue_sort(profiles: Sequence[Profile]) -> None:
    """validateCommonQueueSort: the ``queueSort`` sections written in the profiles must be the
    same (the queue is shared), and so must the args of the QueueSort plugin the first profile
    enables there. Plugins reaching the point through ``multiPoint`` are not compared here, as
    upstream; the built frameworks' QueueSort plugins are compared when they are built."""
    first = profiles[0]
    canon = first.queue_sort_set
    sort_name = canon[0][0] if canon[0] else ""
    for i, p in enumerate(profiles[1:], start=1):
        mine = p.queue_sort_set
        if mine != canon:
            raise FieldError(
                f"profiles[{i}].plugins.queueSort",
                f"Invalid value: [{' '.join(mine[0])}]: must be the same for all profiles",
            )
        if (
            sort_name
            and sort_name in p.plugin_args
            and p.plugin_args.get(sort_name) != first.plugin_args.get(sort_name)
        ):
            raise FieldError(
                f"profiles[{i}].pluginConfig.args",
                f'Invalid value: "{sort_name}": queueSort must be the same for all profiles',
            )


def scheduler_configuration_from_mapping(raw: Mapping[str, Any]) -> SchedulerConfiguration:
    """Decode a KubeSchedulerConfiguration (v1) strictly.

    Args:
        raw: the decoded YAML document.

    Returns:
        every profile (the default profile when there are none, as v1 defaulting adds it)
        and the warnings.

    Raises:
        FieldError: the kind or apiVersion is wrong, a field is unknown or malformed, a
            section names an extension point schedsim does not run yet, extenders are
            configured, two profiles share a schedulerName, profiles sort the queue
            differently (validateCommonQueueSort), or a value fails
            ValidateKubeSchedulerConfiguration's checks (the message names the field).
    """
    kind = d.get_str(raw, "kind", "")
    if kind != "KubeSchedulerConfiguration":
        raise FieldError("kind", f"expected KubeSchedulerConfiguration, got {kind!r}")
    version = raw.get("apiVersion")
    if version is None:
        raise FieldError("apiVersion", f"required: use {API_VERSION}")
    if version != API_VERSION:
        raise FieldError(
            "apiVersion",
            f"unsupported version {version!r}: kube-scheduler 1.34 reads only {API_VERSION}",
        )
    _check_fields(raw, _TOP_FIELDS, "")
    if d.get_list(raw, "extenders", ""):
        raise FieldError(
            "extenders", "not supported: schedsim does not emulate scheduler extenders"
        )
    warnings: list[str] = []
    ignored = [k for k in _no_effect_fields(raw) if k not in _APPLIED_QUEUE_FIELDS]
    backoff = {
        "pod_initial_backoff_seconds": raw.get("podInitialBackoffSeconds") or 1,
        "pod_max_backoff_seconds": raw.get("podMaxBackoffSeconds") or 10,
    }
    if ignored:
        warnings.append(f"{', '.join(ignored)}: accepted, no effect on a simulation")
    global_percentage = _percentage(raw, "")
    items = d.get_list(raw, "profiles", "")
    if not items:
        profile = attrs.evolve(default_profile(), percentage_of_nodes_to_score=global_percentage)
        return SchedulerConfiguration((profile,), global_percentage, tuple(warnings), **backoff)
    profiles: list[Profile] = []
    seen: dict[str, int] = {}
    for i in range(len(items)):
        prof = d.get_mapping_item(items, i, "profiles")
        # v1 defaulting names only a lone profile whose schedulerName is absent; validation
        # then wants every name non-empty (ValidateKubeSchedulerConfiguration).
        if len(items) > 1 or "schedulerName" in prof:
            if not d.get_str(prof, "schedulerName", f"profiles[{i}]"):
                raise FieldError(f"profiles[{i}].schedulerName", "Required value")
        profile = _profile(prof, f"profiles[{i}]", global_percentage, warnings)
        if profile.scheduler_name in seen:
            raise FieldError(
                f"profiles[{i}].schedulerName",
                f'Duplicate value: "{profile.scheduler_name}" (also '
                f"profiles[{seen[profile.scheduler_name]}].schedulerName)",
            )
        seen[profile.scheduler_name] = i
        profiles.append(profile)
    _check_common_queue_sort(profiles)
    return SchedulerConfiguration(tuple(profiles), global_percentage, tuple(warnings), **backoff)


def load_scheduler_configuration(path: str) -> SchedulerConfiguration:
    """Read a KubeSchedulerConfiguration file (see `scheduler_configuration_from_mapping`).

    Raises:
        ManifestError: the file is missing, not YAML, or refused; the message is
            ``FILE: KubeSchedulerConfiguration: FIELD: problem``.
    """
    docs = [doc for doc in read_documents(path) if doc is not None]
    if len(docs) != 1:
        raise ManifestError(f"{path}: expected one KubeSchedulerConfiguration, found {len(docs)}")
    raw = docs[0]
    if not isinstance(raw, Mapping):
        raise ManifestError(f"{path}: expected a KubeSchedulerConfiguration mapping")
    try:
        return scheduler_configuration_from_mapping(raw)
    except FieldError as e:
        raise ManifestError(f"{path}: KubeSchedulerConfiguration: {e.field}: {e.problem}") from None
