"""Feature gates that change plugin behaviour, with kube-scheduler 1.34 defaults.

Each gate carries its 1.34 spec (k8s.io/kubernetes ``pkg/features/kube_features.go``, the
versioned spec in effect at 1.34): default, stage (ALPHA, BETA, GA) and whether it is locked to
its default. Overrides follow component-base's ``featuregate.SetFromMap``, which is what
kube-scheduler's ``--feature-gates`` flag uses:

* an unknown gate is an error;
* a gate locked to its default cannot be set to the other value
  (``cannot set feature gate X to false, feature is locked to true``; kube-scheduler refuses to
  start);
* ``AllAlpha`` / ``AllBeta`` set every gate that is alpha / beta at 1.34 and not set explicitly
  (explicit gates win, whatever the order they are given in).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import attrs

__all__ = [
    "ALL_ALPHA",
    "ALL_BETA",
    "DEFAULT_FEATURE_GATES",
    "FEATURE_GATE_SPECS",
    "FeatureGateError",
    "FeatureGates",
    "GateSpec",
]

Stage = Literal["ALPHA", "BETA", "GA"]

ALL_ALPHA = "AllAlpha"
"""The special gate that sets every alpha gate not set explicitly."""
ALL_BETA = "AllBeta"
"""The special gate that sets every beta gate not set explicitly."""


@attrs.frozen
class GateSpec:
    """A gate's spec at 1.34: its default, its stage and whether it is locked to the default."""

    default: bool
    stage: Stage
    locked: bool = False


FEATURE_GATE_SPECS: Mapping[str, GateSpec] = {
    # GA in 1.33, LockToDefault: true
    "SidecarContainers": GateSpec(True, "GA", locked=True),
    "PodLevelResources": GateSpec(True, "BETA"),
    # GA in 1.34 but not locked until 1.35
    "DynamicResourceAllocation": GateSpec(True, "GA"),
    "DRAExtendedResource": GateSpec(False, "ALPHA"),
    "DRAPrioritizedList": GateSpec(True, "BETA"),
    "DRAAdminAccess": GateSpec(True, "BETA"),
    "DRAPartitionableDevices": GateSpec(False, "ALPHA"),
    "DRADeviceTaints": GateSpec(False, "ALPHA"),
    "DRAConsumableCapacity": GateSpec(False, "ALPHA"),
    "DRADeviceBindingConditions": GateSpec(False, "ALPHA"),
    "DRAResourceClaimDeviceStatus": GateSpec(True, "BETA"),
    "DRASchedulerFilterTimeout": GateSpec(True, "BETA"),
    "InPlacePodVerticalScaling": GateSpec(True, "BETA"),
    # PodTopologySpread / InterPodAffinity
    "MatchLabelKeysInPodTopologySpread": GateSpec(True, "BETA"),
    # kube-apiserver merges matchLabelKeys into labelSelector (no scheduling difference: the
    # scheduler's own merge under MatchLabelKeysInPodTopologySpread selects the same pods)
    "MatchLabelKeysInPodTopologySpreadSelectorMerge": GateSpec(True, "BETA"),
    # GA in 1.33, LockToDefault: true
    "NodeInclusionPolicyInPodTopologySpread": GateSpec(True, "GA", locked=True),
    "MatchLabelKeysInPodAffinity": GateSpec(True, "GA", locked=True),
}
"""The gates schedsim reads, with their kube 1.34 specs."""

DEFAULT_FEATURE_GATES: Mapping[str, bool] = {
    name: spec.default for name, spec in FEATURE_GATE_SPECS.items()
}

_SPECIAL: Mapping[str, Stage] = {ALL_ALPHA: "ALPHA", ALL_BETA: "BETA"}


class FeatureGateError(KeyError):
    """An override names an unknown gate or sets a locked gate to its other value.

    A `KeyError` (as unknown gates always raised), whose message reads as plain text.
    """

    def __str__(self) -> str:
        return str(self.args[0])


@attrs.frozen
class FeatureGates:
    """Feature gate values; unknown names raise KeyError so typos are caught."""

    values: Mapping[str, bool] = attrs.field(factory=lambda: dict(DEFAULT_FEATURE_GATES))

    def enabled(self, name: str) -> bool:
        """Whether gate ``name`` is on; raises KeyError for an unknown gate."""
        try:
            return self.values[name]
        except KeyError:
            raise FeatureGateError(f"unknown feature gate {name!r}") from None

    def with_overrides(
        self, overrides: Mapping[str, bool], *, enforce_locks: bool = True
    ) -> FeatureGates:
        """These gates with ``overrides`` applied, as ``--feature-gates`` applies them.

        Args:
            overrides: gate name -> value; ``AllAlpha`` / ``AllBeta`` set every alpha / beta
                gate that ``overrides`` does not name.
            enforce_locks: False lets a locked gate take the other value, as kube's unit tests
                do when they set ``feature.Features`` fields directly.

        Raises:
            FeatureGateError: (a KeyError) an unknown gate, or a locked gate set to the value it
                is not locked to.
        """
        for name, value in overrides.items():
            if name in _SPECIAL:
                continue
            self.enabled(name)
            spec = FEATURE_GATE_SPECS.get(name)
            if enforce_locks and spec is not None and spec.locked and value != spec.default:
                raise FeatureGateError(
                    f"cannot set feature gate {name} to {_go_bool(value)}, feature is locked "
                    f"to {_go_bool(spec.default)}"
                )
        values = dict(self.values)
        for special, stage in _SPECIAL.items():
            if special in overrides:
                for name, spec in FEATURE_GATE_SPECS.items():
                    if spec.stage == stage and name not in overrides:
                        values[name] = overrides[special]
        values.update((k, v) for k, v in overrides.items() if k not in _SPECIAL)
        return FeatureGates(values)


def _go_bool(value: bool) -> str:
    return "true" if value else "false"
