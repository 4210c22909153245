"""Feature gates that change plugin behaviour, with kube-scheduler 1.34 defaults."""

from __future__ import annotations

from collections.abc import Mapping

import attrs

__all__ = ["DEFAULT_FEATURE_GATES", "FeatureGates"]

DEFAULT_FEATURE_GATES: Mapping[str, bool] = {
    "SidecarContainers": True,  # GA, locked on
    "PodLevelResources": True,  # beta, on
    "DynamicResourceAllocation": True,  # GA
    "DRAExtendedResource": False,  # alpha
    "DRAPrioritizedList": True,  # beta
    "DRAAdminAccess": True,  # beta
    "DRAPartitionableDevices": False,  # alpha
    "DRADeviceTaints": False,  # alpha
    "DRAConsumableCapacity": False,  # alpha
    "DRADeviceBindingConditions": False,  # alpha
    "DRAResourceClaimDeviceStatus": True,  # beta
    "DRASchedulerFilterTimeout": True,  # beta
    "InPlacePodVerticalScaling": True,  # beta
}


@attrs.frozen
class FeatureGates:
    """Feature gate values; unknown names raise KeyError so typos are caught."""

    values: Mapping[str, bool] = attrs.field(factory=lambda: dict(DEFAULT_FEATURE_GATES))

    def enabled(self, name: str) -> bool:
        """Whether gate ``name`` is on; raises KeyError for an unknown gate."""
        try:
            return self.values[name]
        except KeyError:
            raise KeyError(f"unknown feature gate {name!r}") from None

    def with_overrides(self, overrides: Mapping[str, bool]) -> FeatureGates:
        """These gates with ``overrides`` applied; raises KeyError for an unknown gate."""
        for name in overrides:
            self.enabled(name)
        return FeatureGates({**self.values, **overrides})
