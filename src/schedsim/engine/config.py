"""`EngineConfig`: how to build the scheduler framework, as plain data.

Frozen and picklable (a profile, gate values, plugin import names and a store name; never
plugin objects), so replay and sweeps can ship one config to many worker processes and each
builds the same Framework there. The one place command-line options become a config is
``schedsim.cli``; library users build it directly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Final

import attrs

from schedsim.framework.features import FeatureGates
from schedsim.framework.handle import Handle, PluginFactory
from schedsim.framework.profile import Profile, default_profile
from schedsim.framework.runtime import (
    Framework,
    PluginError,
    PluginTimings,
    ProfileError,
    discover_plugins,
    load_plugin_spec,
)
from schedsim.framework.scheduler_config import (
    SchedulerConfiguration,
    load_scheduler_configuration,
)
from schedsim.snapshot.basic import BasicSnapshotStore
from schedsim.snapshot.delta import DeltaSnapshotStore
from schedsim.snapshot.store import ClusterSnapshotStore

__all__ = ["STORES", "EngineConfig"]

STORES: Final[Mapping[str, Callable[[], ClusterSnapshotStore]]] = {
    "delta": DeltaSnapshotStore,
    "basic": BasicSnapshotStore,
}
"""Store names `EngineConfig.store` accepts: ``delta`` (layered, O(1) fork/revert, the
default) and ``basic`` (clone on fork, the reference)."""


def _gate_pairs(
    value: Mapping[str, bool] | Iterable[tuple[str, bool]],
) -> tuple[tuple[str, bool], ...]:
    items = value.items() if isinstance(value, Mapping) else value
    return tuple(sorted((str(k), bool(v)) for k, v in items))


def _check_store(_: object, __: object, value: str) -> None:
    if value not in STORES:
        raise ValueError(f"store: expected one of {', '.join(sorted(STORES))}, got {value!r}")


@attrs.frozen
class EngineConfig:
    """Everything needed to build a run's Framework and store, as picklable data.

    Attributes:
        profile: the scheduler profile (None: the first of ``scheduler_config``, else
            kube-scheduler's default profile).
        config_file: the KubeSchedulerConfiguration file ``profile`` was read from (error
            messages name it), or None.
        feature_gates: gate overrides over the 1.34 defaults, as sorted ``(name, value)``
            pairs (a mapping is accepted).
        plugins: extra plugins as import names ``module:Class`` (they win over entry-point
            plugins of the same name), loaded where the Framework is built.
        store: ``delta`` (default) or ``basic`` (see `STORES`).
        scheduler_config: the whole KubeSchedulerConfiguration (every profile; the queue's
            backoff seconds), or None. A simulation builds one framework per profile and
            schedules each pod with the profile its ``spec.schedulerName`` names, as
            kube-scheduler's ``frameworkForPod``; ``profile``, when given, replaces the
            profile of the same schedulerName (or is the only one without a
            ``scheduler_config``).

    Raises:
        FeatureGateError: an unknown gate, or a locked gate set to its other value (at
            construction, as ``--feature-gates`` parsing does).
        ValueError: an unknown store.
    """

    profile: Profile | None = None
    config_file: str | None = None
    feature_gates: tuple[tuple[str, bool], ...] = attrs.field(default=(), converter=_gate_pairs)
    plugins: tuple[str, ...] = attrs.field(default=(), converter=tuple)
    store: str = attrs.field(default="delta", validator=_check_store)
    scheduler_config: SchedulerConfiguration | None = None

    def __attrs_post_init__(self) -> None:
        self.gates()  # fail at construction, not in a worker

    @classmethod
    def from_config_file(cls, path: str, **kwargs: object) -> EngineConfig:
        """A config read from a KubeSchedulerConfiguration file (every profile; ``profile``
        is ``profiles[0]``); other fields as keyword arguments.

        Raises:
            ManifestError: ``FILE: KubeSchedulerConfiguration: FIELD: problem``.
        """
        loaded = load_scheduler_configuration(path)
        return cls(loaded.profiles[0], path, scheduler_config=loaded, **kwargs)  # type: ignore[arg-type]

    def profiles(self) -> tuple[Profile, ...]:
        """Every profile, in configuration order (``profile`` replacing the one with its
        schedulerName, or added first when no profile has it)."""
        if self.scheduler_config is None:
            return (self.profile if self.profile is not None else default_profile(),)
        out = list(self.scheduler_config.profiles)
        if self.profile is not None:
            names = [p.scheduler_name for p in out]
            if self.profile.scheduler_name in names:
                out[names.index(self.profile.scheduler_name)] = self.profile
            else:
                out.insert(0, self.profile)
        return tuple(out)

    def gates(self) -> FeatureGates:
        """The feature gates (1.34 defaults with `feature_gates` applied)."""
        return FeatureGates().with_overrides(dict(self.feature_gates))

    def registry(self) -> Mapping[str, PluginFactory]:
        """Entry-point plugins plus `plugins` (which win).

        Raises:
            PluginError: a ``module:Class`` cannot be imported or has no string ``name``.
        """
        extra = dict(load_plugin_spec(spec) for spec in self.plugins)
        return discover_plugins(extra=extra)

    def framework(
        self, timings: PluginTimings | None = None, profile: Profile | None = None
    ) -> Framework:
        """A new Framework over a new Handle (build it once per process and reuse it: runs
        bind their snapshot to it), checked as kube-scheduler's NewFramework checks a profile
        (exactly one QueueSort plugin, at least one Bind plugin), with its plugins' events
        collected once as scheduler.New's buildQueueingHintMap does before kube-scheduler
        starts (an ``events_to_register`` that fails refuses the profile here, naming the
        file, instead of a traceback when the first scheduling queue was built; scale-up
        and scale-down refuse it too, the profile being kube-scheduler's).

        Args:
            timings: when given, every plugin call is timed into it.
            profile: which profile (default: the first of `profiles`).

        Raises:
            PluginError: as `Framework`, or the profile check failed (upstream's message),
                prefixed with `config_file` when there is one.
        """
        profile = profile if profile is not None else self.profiles()[0]
        try:
            fw = Framework(profile, Handle(feature_gates=self.gates()), self.registry(), timings)
            fw.validate_profile()
            fw.events_to_register()
        except (PluginError, ProfileError) as e:
            if self.config_file:  # name the file whose plugins or pluginConfig are wrong
                raise PluginError(f"{self.config_file}: {e}") from None
            raise PluginError(str(e)) from None
        return fw

    def frameworks(self, timings: PluginTimings | None = None) -> dict[str, Framework]:
        """One Framework per profile, by schedulerName, in `profiles` order (each over its own
        Handle, as kube-scheduler builds one framework per profile).

        Raises:
            PluginError: as `framework`.
        """
        return {p.scheduler_name: self.framework(timings, p) for p in self.profiles()}

    def new_store(self) -> ClusterSnapshotStore:
        """A new, empty store of the configured kind."""
        return STORES[self.store]()
