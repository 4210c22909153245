"""Runner for the ``fit-*`` cases (NodeResourcesFit through PreFilter and Filter; the
Score cases, and Filter cases without PreFilter, go to the generic plugin-case checker,
``cases_plugin``).

Called by ``test_cases.py``; each function asserts what the case's ``expect`` gives.
"""

from __future__ import annotations

from typing import Any

import cases_plugin

from schedsim.api.core import Pod
from schedsim.api.loading.loader import decode_objects
from schedsim.framework import (
    Code,
    CycleState,
    FeatureGates,
    Framework,
    Handle,
    Profile,
)
from schedsim.snapshot import PredicateSnapshot
from schedsim.snapshot.dra import DraSnapshot
from schedsim_plugins.noderesources import DRA_EXTENDED_STATE_KEY, NodeResourcesFit, fits_request


def _generic(case: dict[str, Any]) -> bool:
    points = case["check"].get("extensionPoints", [])
    return "Score" in points or "PreFilter" not in points


def expected_failure(case: dict[str, Any]) -> str | None:
    """Why this case is expected to fail (None: it must pass)."""
    if _generic(case):
        return cases_plugin.expected_failure(case)
    return None


def _plugin_case(case: dict[str, Any], source: str) -> dict[str, Any]:
    """Run PreFilter then Filter of one plugin for one pod on one node; return what
    happened in the case file's vocabulary."""
    check = case["check"]
    plugin = check["plugin"]
    manifests = decode_objects(case["objects"], source, api_rules=False)
    # upstream sets feature.Features fields directly, so a locked gate (SidecarContainers)
    # may take its other value there
    gates = FeatureGates().with_overrides(check.get("featureGates") or {}, enforce_locks=False)
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
    dra = DraSnapshot.from_objects(
        manifests.resource_claims, manifests.resource_slices, manifests.device_classes
    )
    assert snap.set_cluster_state(manifests.nodes, bound, dra) == []
    with snap.bound():  # plugins read the snapshot through the handle
        return _result(framework, snap, pod, check)


def _result(
    framework: Framework, snap: PredicateSnapshot, pod: Pod, check: dict[str, Any]
) -> dict[str, Any]:
    state = CycleState()
    _, status, _ = framework.run_pre_filter_plugins(state, pod, snap.list_node_infos())
    got: dict[str, Any] = {}
    if not status.is_success:
        got.update(fits=False, extensionPoint="PreFilter", code=status.code.value)
        got["reasons"] = list(status.reasons)
        return got
    node_info = snap.get_node_info(check["node"])
    status = framework.run_filter_plugins(state, pod, node_info)
    # the chain bound to the attempt (NodeResourcesFit's ``filter_node_fn``, what the
    # scheduler's cached walk runs) gives the same status on every case
    assert framework.filter_chain(state, pod)(node_info) == status
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
                state.get(DRA_EXTENDED_STATE_KEY) or frozenset(),
            )
        ]
    return got


def run(case: dict[str, Any], source: str) -> None:
    """Run one fit case and compare every field its ``expect`` gives."""
    if _generic(case):
        cases_plugin.run(case, source)
        return
    expect = case["expect"]
    got = _plugin_case(case, source)
    assert got["fits"] == expect["fits"], got
    for key in ("code", "reasons", "extensionPoint", "insufficientResources"):
        if key in expect:
            assert got.get(key) == expect[key], f"{key}: got {got.get(key)!r}"
    if not expect["fits"]:
        assert got["code"] in {c.value for c in Code}
