"""Runner for the ``csi-*`` cases (NodeVolumeLimits through PreFilter and Filter).

Called by ``test_cases.py``. Like upstream ``TestCSILimits`` the plugin's own PreFilter and
Filter are called (so an Error status carries the plugin's message, not the runtime's
``running "NodeVolumeLimits" filter plugin: ...`` wrapper); Filter runs only when PreFilter
succeeded. The same pod is then checked through `PredicateSnapshot.check_predicates`, which
must agree on whether it fits: the CSINodes reach the plugin through the snapshot, the PVs,
PVCs, StorageClasses and VolumeAttachments through the handle's storage listers.
"""

from __future__ import annotations

from typing import Any

from schedsim.api.loading.loader import decode_objects
from schedsim.framework import (
    CycleState,
    FeatureGates,
    Framework,
    Handle,
    Profile,
    StorageListers,
)
from schedsim.snapshot import PredicateSnapshot, SchedulingError, SchedulingErrorType
from schedsim.snapshot.csi import CsiSnapshot
from schedsim_plugins.nodevolumelimits import NodeVolumeLimits


def expected_failure(case: dict[str, Any]) -> str | None:
    """Why this case is expected to fail (None: it must pass)."""
    del case
    return None


def _build(case: dict[str, Any], source: str) -> tuple[PredicateSnapshot, Any, str]:
    check = case["check"]
    plugin = check["plugin"]
    assert plugin == NodeVolumeLimits.name, plugin
    assert check.get("extensionPoints", []) == ["PreFilter", "Filter"], check
    m = decode_objects(case["objects"], source, api_rules=False)
    gates = FeatureGates().with_overrides(check.get("featureGates") or {})
    listers = StorageListers.from_objects(
        m.persistent_volumes, m.persistent_volume_claims, m.storage_classes, m.volume_attachments
    )
    profile = Profile(
        plugins={"preFilter": (plugin,), "filter": (plugin,), "reserve": ()},
        plugin_args={plugin: check.get("pluginArgs") or {}},
        explicit=frozenset({plugin}),
    )
    framework = Framework(profile, Handle(feature_gates=gates))
    snap = PredicateSnapshot(framework)
    ns, name = check["pod"].split("/")
    pod = next(p for p in m.pods if p.namespace == ns and p.name == name)
    bound = [p for p in m.pods if p.node_name and p is not pod]
    csi = CsiSnapshot(m.csi_nodes)
    assert snap.set_cluster_state(m.nodes, bound, csi_snapshot=csi, storage_listers=listers) == []
    return snap, pod, check["node"]


def run(case: dict[str, Any], source: str) -> None:
    """Run one csi case and compare every field its ``expect`` gives."""
    expect = case["expect"]
    snap, pod, node_name = _build(case, source)
    plugin = snap.framework.plugins[NodeVolumeLimits.name]
    assert isinstance(plugin, NodeVolumeLimits)
    state = CycleState()
    got: dict[str, Any]
    with snap.bound():  # the plugin reads the snapshot through the handle
        pre = plugin.schedsim_pre_filter(state, pod, snap.list_node_infos())
        if pre is not None and not pre.is_success:
            got = {
                "fits": not pre.is_rejected and pre.code.value == "Skip",
                "extensionPoint": "PreFilter",
                "code": pre.code.value,
                "reasons": list(pre.reasons),
            }
        else:
            st = plugin.schedsim_filter(state, pod, snap.get_node_info(node_name))
            got = {"fits": st is None or st.is_success, "extensionPoint": "Filter"}
            if st is not None and not st.is_success:
                got.update(code=st.code.value, reasons=list(st.reasons))
    assert got["fits"] == expect["fits"], got
    for key in ("code", "reasons", "extensionPoint"):
        if key in expect:
            assert got.get(key) == expect[key], f"{key}: got {got.get(key)!r}"
    # the scheduler's path through the snapshot agrees
    try:
        snap.check_predicates(pod, node_name)
    except SchedulingError as e:
        assert not expect["fits"], f"check_predicates rejected a fitting pod: {e}"
        # CA RunFiltersOnNode: any non-success Filter status is a failing predicate; an Error
        # one also says "unexpected filter status"
        assert e.type is SchedulingErrorType.FAILING_PREDICATE, e
        assert e.failing_predicate_name == NodeVolumeLimits.name, e
        assert ("unexpected filter status" in e.unexpected_error) == (
            expect.get("code") == "Error"
        ), e
    else:
        assert expect["fits"], "check_predicates accepted a pod that does not fit"
