"""Feature-gate hints (issue 20 item 5): a field a disabled 1.34 gate governs is named once
per gate with the ``--feature-gates`` setting that enables it. The gates and their fields are
the ones kube-scheduler 1.34 checks (pkg/features: DRAPartitionableDevices,
DRADeviceTaints, DRAConsumableCapacity, DRAExtendedResource, DRADeviceBindingConditions are
alpha, off by default)."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedsim.api.loading.gate_hints import feature_gate_hints
from schedsim.api.loading.loader import load_text
from schedsim.cli import main
from schedsim.framework.features import FeatureGates

DRA = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec:
  extendedResourceName: example.com/gpu
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-gpus}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 1}
  sharedCounters:
  - name: c
    counters: {memory: {value: 80Gi}}
  devices:
  - name: gpu-0
    consumesCounters:
    - counterSet: c
      counters: {memory: {value: 80Gi}}
    taints: [{key: broken, effect: NoSchedule}]
  - name: gpu-1
    taints: [{key: broken, effect: NoSchedule}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c1}
spec:
  devices:
    requests:
    - name: g
      exactly:
        deviceClassName: gpu
        tolerations: [{key: broken, operator: Exists}]
"""


def _hints(gates: dict[str, bool]) -> list[str]:
    m = load_text(DRA, "f.yaml")
    return feature_gate_hints(
        FeatureGates().with_overrides(gates).enabled,
        device_classes=m.device_classes,
        resource_slices=m.resource_slices,
        resource_claims=m.resource_claims,
        resource_claim_templates=m.resource_claim_templates,
    )


def test_each_disabled_gate_is_named_once_with_its_setting() -> None:
    """Defaults (all three gates off): one line per gate, naming the first object."""
    assert _hints({}) == [
        "ResourceSlice n1-gpus device gpu-0 uses taints, which feature gate DRADeviceTaints "
        "governs (disabled); --feature-gates DRADeviceTaints=true enables it",
        "DeviceClass gpu uses extendedResourceName, which feature gate DRAExtendedResource "
        "governs (disabled); --feature-gates DRAExtendedResource=true enables it",
        "ResourceSlice n1-gpus uses sharedCounters, which feature gate "
        "DRAPartitionableDevices governs (disabled); --feature-gates "
        "DRAPartitionableDevices=true enables it",
    ]


def test_enabled_gates_give_no_hint() -> None:
    assert (
        _hints(
            {"DRAExtendedResource": True, "DRADeviceTaints": True, "DRAPartitionableDevices": True}
        )
        == []
    )


def test_simulate_prints_the_hint_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The CLI prints hints as warnings on stderr, once per gate."""
    f = tmp_path / "dra.yaml"
    f.write_text(DRA)
    assert main(["simulate", str(f), "--feature-gates", "DRADeviceTaints=true"]) == 0
    err = capsys.readouterr().err
    assert err.count("DRADeviceTaints") == 0
    assert err.count("--feature-gates DRAPartitionableDevices=true enables it") == 1
