"""Runner for the ``vol-*`` cases (VolumeBinding, VolumeZone, VolumeRestrictions through
PreFilter and Filter; format in ../shared/cases/README.md).

Called by ``test_cases.py``. Like upstream's plugin tests the plugin's own hook methods are
called: PreFilter with every NodeInfo, then Filter per listed node unless PreFilter failed or
returned Skip. The objects are taken as stored (no PV-controller settling). The snapshot,
bound to the plugin's handle for the calls, gives the plugin its PVs, PVCs, classes and PVC
usage. Each listed node is then checked through `PredicateSnapshot.check_predicates` with a
profile of just this plugin, which must agree on whether the pod fits there.
"""

from __future__ import annotations

from typing import Any

from schedsim.api.loading.loader import decode_objects
from schedsim.framework import (
    CycleState,
    FeatureGates,
    Framework,
    Handle,
    PreFilterResult,
    Profile,
    Status,
    StorageListers,
)
from schedsim.snapshot import PredicateSnapshot, SchedulingError
from schedsim.snapshot.csi import CsiSnapshot

PLUGINS = ("VolumeBinding", "VolumeZone", "VolumeRestrictions")


def expected_failure(case: dict[str, Any]) -> str | None:
    """Why this case is expected to fail (None: it must pass)."""
    del case
    return None


def _code(st: Status | PreFilterResult | None) -> str:
    return "Success" if st is None or isinstance(st, PreFilterResult) else st.code.value


def _check(where: str, got: Status | PreFilterResult | None, want: dict[str, Any]) -> None:
    code = _code(got)
    assert code == want["code"], f"{where}: code {code} ({got}), want {want}"
    if "reasons" in want:
        reasons = list(got.reasons) if isinstance(got, Status) else []
        assert reasons == want["reasons"], f"{where}: reasons {reasons}, want {want['reasons']}"


def run(case: dict[str, Any], source: str) -> None:
    """Run one vol case and compare every field its ``expect`` gives."""
    check, expect = case["check"], case["expect"]
    name = check["plugin"]
    assert name in PLUGINS, name
    assert check.get("extensionPoints") == ["PreFilter", "Filter"], check
    m = decode_objects(case["objects"], source, api_rules=False)
    gates = FeatureGates().with_overrides(check.get("featureGates") or {})
    listers = StorageListers.from_objects(
        m.persistent_volumes,
        m.persistent_volume_claims,
        m.storage_classes,
        m.volume_attachments,
        csi_drivers=m.csi_drivers,
        csi_storage_capacities=m.csi_storage_capacities,
    )
    profile = Profile(
        plugins={"preFilter": (name,), "filter": (name,), "reserve": ()},
        plugin_args={name: check.get("pluginArgs") or {}},
        explicit=frozenset({name}),
    )
    snap = PredicateSnapshot(Framework(profile, Handle(feature_gates=gates)))
    ns, pod_name = check["pod"].split("/")
    pod = next(p for p in m.pods if p.namespace == ns and p.name == pod_name)
    bound = [p for p in m.pods if p.node_name and p is not pod]
    skipped = snap.set_cluster_state(
        m.nodes, bound, csi_snapshot=CsiSnapshot(m.csi_nodes), storage_listers=listers
    )
    assert skipped == []
    plugin = snap.framework.plugins[name]
    node_names = check.get("nodes") or [check["node"]]
    state = CycleState()
    fits: dict[str, bool] = {}
    with snap.bound():
        pre = plugin.schedsim_pre_filter(state, pod, snap.list_node_infos())
        _check("preFilter", pre, expect["preFilter"])
        want_names = (expect.get("preFilterResult") or {}).get("nodeNames")
        got_names = pre.node_names if isinstance(pre, PreFilterResult) else None
        assert (None if got_names is None else sorted(got_names)) == (
            None if want_names is None else sorted(want_names)
        ), f"preFilterResult: {got_names}, want {want_names}"
        code = _code(pre)
        if code != "Success":
            assert "filter" not in expect, "Filter does not run after a Skip or a failure"
            fits = {n: code == "Skip" for n in node_names}
        else:
            for n in node_names:
                st = plugin.schedsim_filter(state, pod, snap.get_node_info(n))
                if n in (expect.get("filter") or {}):
                    _check(f"filter.{n}", st, expect["filter"][n])
                fits[n] = _code(st) == "Success" and (got_names is None or n in got_names)
    for n in node_names:  # the scheduler's path through the snapshot agrees
        try:
            snap.check_predicates(pod, n)
        except SchedulingError as e:
            assert not fits[n], f"check_predicates rejected {n}: {e}"
        else:
            assert fits[n], f"check_predicates accepted {n}"
