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
from schedsim.framework.profile import Profile, default_profile, load_scheduler_config
from schedsim.framework.runtime import (
    Framework,
    PluginError,
    PluginTimings,
    discover_plugins,
    load_plugin_spec,
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
        profile: the scheduler profile (None: kube-scheduler's default profile).
        config_file: the KubeSchedulerConfiguration file ``profile`` was read from (error
            messages name it), or None.
        feature_gates: gate overrides over the 1.34 defaults, as sorted ``(name, value)``
            pairs (a mapping is accepted).
        plugins: extra plugins as import names ``module:Class`` (they win over entry-point
            plugins of the same name), loaded where the Framework is built.
        store: ``delta`` (default) or ``basic`` (see `STORES`).

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

    def __attrs_post_init__(self) -> None:
        self.gates()  # fail at construction, not in a worker

    @classmethod
    def from_config_file(cls, path: str, **kwargs: object) -> EngineConfig:
        """A config whose profile is read from a KubeSchedulerConfiguration file
        (``profiles[0]``); other fields as keyword arguments.

        Raises:
            ManifestError: ``FILE: KubeSchedulerConfiguration: FIELD: problem``.
        """
        return cls(load_scheduler_config(path), path, **kwargs)  # type: ignore[arg-type]

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

    def framework(self, timings: PluginTimings | None = None) -> Framework:
        """A new Framework over a new Handle (build it once per process and reuse it: runs
        bind their snapshot to it).

        Args:
            timings: when given, every plugin call is timed into it.

        Raises:
            PluginError: as `Framework`, prefixed with `config_file` when there is one.
        """
        profile = self.profile if self.profile is not None else default_profile()
        try:
            return Framework(profile, Handle(feature_gates=self.gates()), self.registry(), timings)
        except PluginError as e:
            if self.config_file:  # name the file whose plugins or pluginConfig are wrong
                raise PluginError(f"{self.config_file}: {e}") from None
            raise

    def new_store(self) -> ClusterSnapshotStore:
        """A new, empty store of the configured kind."""
        return STORES[self.store]()
