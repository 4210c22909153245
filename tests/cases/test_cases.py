"""One data-driven runner for Kubernetes' own test cases (../shared/cases, format in its
README; ``SCHEDSIM_CASES_DIR`` points it elsewhere).

Each case is a fact about kube-scheduler 1.34 taken from an upstream test (its ``source``
field names it); a failure means schedsim disagrees with Kubernetes. Groups not implemented
yet are skipped with the issue that brings them; Score cases are expected failures until the
Score extension point exists.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from schedsim.api.loader import decode_objects
from schedsim.framework import (
    Code,
    CycleState,
    FeatureGates,
    Framework,
    Handle,
    Profile,
)
from schedsim.snapshot import PredicateSnapshot
from schedsim_plugins.noderesources import NodeResourcesFit, fits_request

ROOT = Path(__file__).resolve().parents[2]
CASES_DIR = Path(os.environ.get("SCHEDSIM_CASES_DIR") or ROOT.parent / "shared" / "cases")

NOT_YET = {
    "csi-": "NodeVolumeLimits arrives with issue #6 (CSI volume limits)",
    "dra-alloc-": "the structured DRA allocator arrives with issues #4/#5",
    "dra-plugin-": "the DynamicResources plugin arrives with issue #4",
}


def _case_files() -> list[Path]:
    if not CASES_DIR.is_dir():
        return []
    return sorted(CASES_DIR.glob("*.yaml"))


def _params() -> list[Any]:
    files = _case_files()
    if not files:
        return [
            pytest.param(
                None,
                id="no-cases",
                marks=pytest.mark.skip(
                    reason=f"cases directory {CASES_DIR} is absent (set SCHEDSIM_CASES_DIR)"
                ),
            )
        ]
    out = []
    for f in files:
        marks = []
        for prefix, why in NOT_YET.items():
            if f.name.startswith(prefix):
                marks.append(pytest.mark.skip(reason=why))
        if f.name.startswith("fit-"):
            check = yaml.safe_load(f.read_text())["check"]
            if "Score" in check.get("extensionPoints", []):
                marks.append(
                    pytest.mark.xfail(
                        strict=True, reason="Score extension point not implemented yet"
                    )
                )
        out.append(pytest.param(f, id=f.stem, marks=marks))
    return out


def _plugin_case(case: dict[str, Any], source: str) -> dict[str, Any]:
    """Run PreFilter then Filter of one plugin for one pod on one node; return what
    happened in the case file's vocabulary."""
    check = case["check"]
    plugin = check["plugin"]
    points = check.get("extensionPoints", [])
    if "Score" in points:
        raise NotImplementedError("Score extension point")
    manifests = decode_objects(case["objects"], source)
    gates = FeatureGates().with_overrides(check.get("featureGates") or {})
    profile = Profile(
        plugins={"preFilter": (plugin,), "filter": (plugin,), "reserve": ()},
        plugin_args={plugin: check.get("pluginArgs") or {}},
        explicit=frozenset({plugin}),
    )
    framework = Framework(profile, Handle(feature_gates=gates))
    snap = PredicateSnapshot(framework)
    ns, name = check["pod"].split("/")
    pod = next(p for p in manifests.pods if p.namespace == ns and p.name == name)
    bound = [p for p in manifests.pods if p.node_name and p is not pod]
    assert snap.set_cluster_state(manifests.nodes, bound) == []
    state = CycleState()
    _, status, _ = framework.run_pre_filter_plugins(state, pod, snap.list_node_infos())
    got: dict[str, Any] = {}
    if not status.is_success:
        got.update(fits=False, extensionPoint="PreFilter", code=status.code.value)
        got["reasons"] = list(status.reasons)
        return got
    node_info = snap.get_node_info(check["node"])
    status = framework.run_filter_plugins(state, pod, node_info)
    got.update(fits=status.is_success, extensionPoint="Filter")
    if not status.is_success:
        got.update(code=status.code.value, reasons=list(status.reasons))
    fit = framework.plugins.get("NodeResourcesFit")
    if isinstance(fit, NodeResourcesFit):
        got["insufficientResources"] = [
            {
                "resourceName": r.resource_name,
                "reason": r.reason,
                "requested": r.requested,
                "used": r.used,
                "capacity": r.capacity,
                **({"unresolvable": True} if r.unresolvable else {}),
            }
            for r in fits_request(
                fit.compute_pod_request(pod),
                node_info,
                fit.ignored_resources,
                fit.ignored_resource_groups,
            )
        ]
    return got


@pytest.mark.parametrize("path", _params())
def test_case(path: Path) -> None:
    """Run one case and compare every field its ``expect`` gives."""
    case = yaml.safe_load(path.read_text())
    expect = case["expect"]
    got = _plugin_case(case, str(path))
    assert got["fits"] == expect["fits"], got
    for key in ("code", "reasons", "extensionPoint", "insufficientResources"):
        if key in expect:
            assert got.get(key) == expect[key], f"{key}: got {got.get(key)!r}"
    if not expect["fits"]:
        assert got["code"] in {c.value for c in Code}
