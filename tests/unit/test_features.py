"""Feature gates: 1.34 specs, locked gates, AllAlpha / AllBeta (component-base featuregate)."""

from __future__ import annotations

import pytest

from schedsim.framework.features import (
    DEFAULT_FEATURE_GATES,
    FEATURE_GATE_SPECS,
    FeatureGateError,
    FeatureGates,
)


def test_locked_gate_cannot_take_its_other_value() -> None:
    """Mirrors featuregate.unsafeSetFromMap: ``LockToDefault && Default != v`` is an error
    (SidecarContainers is GA and locked to true since 1.33, so kube-scheduler 1.34 refuses
    ``--feature-gates SidecarContainers=false``)."""
    with pytest.raises(KeyError) as e:
        FeatureGates().with_overrides({"SidecarContainers": False})
    assert str(e.value) == (
        "cannot set feature gate SidecarContainers to false, feature is locked to true"
    )
    assert FeatureGates().with_overrides({"SidecarContainers": True}).enabled("SidecarContainers")


def test_locked_gate_may_be_overridden_programmatically() -> None:
    """Kube's unit tests set feature.Features fields directly, bypassing the lock."""
    gates = FeatureGates().with_overrides({"SidecarContainers": False}, enforce_locks=False)
    assert not gates.enabled("SidecarContainers")


def test_dynamic_resource_allocation_is_ga_but_not_locked_in_134() -> None:
    """Mirrors kube_features.go: DynamicResourceAllocation is GA in 1.34 (default true) and
    only LockToDefault from 1.35, so 1.34 still accepts DynamicResourceAllocation=false."""
    assert FEATURE_GATE_SPECS["DynamicResourceAllocation"].locked is False
    gates = FeatureGates().with_overrides({"DynamicResourceAllocation": False})
    assert not gates.enabled("DynamicResourceAllocation")


def test_unknown_gate() -> None:
    """Mirrors featuregate: an unrecognized gate is an error."""
    with pytest.raises(FeatureGateError, match="unknown feature gate 'Nope'"):
        FeatureGates().with_overrides({"Nope": True})


def test_all_alpha_sets_every_alpha_gate_explicit_wins() -> None:
    """Mirrors featuregate setUnsetAlphaGates: AllAlpha sets each gate that is alpha at the
    emulated version and not set explicitly; beta and GA gates keep their values."""
    gates = FeatureGates().with_overrides({"AllAlpha": True, "DRADeviceTaints": False})
    for name, spec in FEATURE_GATE_SPECS.items():
        want = spec.default
        if spec.stage == "ALPHA":
            want = name != "DRADeviceTaints"
        assert gates.enabled(name) is want, name
    # explicit gates win whatever the order
    gates = FeatureGates().with_overrides({"DRADeviceTaints": False, "AllAlpha": True})
    assert not gates.enabled("DRADeviceTaints")
    assert gates.enabled("DRAExtendedResource")


def test_all_beta_false_turns_beta_gates_off() -> None:
    """Mirrors featuregate setUnsetBetaGates: AllBeta=false disables every beta gate not set
    explicitly, and does not touch GA gates."""
    gates = FeatureGates().with_overrides({"AllBeta": False, "DRAAdminAccess": True})
    assert not gates.enabled("PodLevelResources")
    assert not gates.enabled("DRAPrioritizedList")
    assert gates.enabled("DRAAdminAccess")
    assert gates.enabled("SidecarContainers")
    assert gates.enabled("DynamicResourceAllocation")
    assert not gates.enabled("DRAExtendedResource")  # alpha: untouched


def test_defaults_follow_the_specs() -> None:
    assert DEFAULT_FEATURE_GATES == {n: s.default for n, s in FEATURE_GATE_SPECS.items()}
    assert FeatureGates().values == DEFAULT_FEATURE_GATES
