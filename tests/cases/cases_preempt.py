"""Runner for the ``preempt-*`` cases: DefaultPreemption through its PostFilter.

Called by ``test_cases.py``. As upstream's TestPostFilter / TestDryRunPreemption /
TestPreempt do: the profile's Filter plugins are the case's ``filterPlugins`` (their PreFilter
runs for the pod first, their AddPod/RemovePod extensions during the dry run), the
PostFilter receives ``filterStatuses`` (a node not listed is absent, i.e.
``UnschedulableAndUnresolvable``), and the plugin's result is compared with ``expect``:
code, message, the nominated node ("" = the nomination is cleared; absent = no result at all)
and the victims. The PodDisruptionBudgets reach the plugin through the handle's
`ObjectListers`; nodes and pods through the snapshot (both stores).
"""

from __future__ import annotations

from typing import Any

from schedsim.api.loading.loader import decode_objects
from schedsim.engine import STORES
from schedsim.framework import (
    Code,
    CycleState,
    Framework,
    Handle,
    ObjectListers,
    PostFilterResult,
    Profile,
    Status,
)
from schedsim.snapshot import PredicateSnapshot


def expected_failure(case: dict[str, Any]) -> str | None:
    """Why this case is expected to fail (None: it must pass)."""
    del case
    return None


def run_on(case: dict[str, Any], source: str, store: Any) -> None:
    """Run one case on a snapshot with ``store`` and compare every field ``expect`` gives."""
    check, expect = case["check"], case["expect"]
    m = decode_objects(case["objects"], source)
    filters = tuple(check.get("filterPlugins") or ())
    plugin_name = check["plugin"]
    profile = Profile(
        plugins={"preFilter": filters, "filter": filters, "postFilter": (plugin_name,)},
        plugin_args={plugin_name: check.get("pluginArgs") or {}},
        explicit=frozenset({plugin_name, *filters}),
    )
    framework = Framework(profile, Handle(object_listers=ObjectListers.from_manifests(m)))
    snap = PredicateSnapshot(framework, store=store())
    ns, name = check["pod"].split("/")
    pod = next(p for p in m.pods if p.namespace == ns and p.name == name)
    bound = [p for p in m.pods if p.node_name and p is not pod]
    assert snap.set_cluster_state(m.nodes, bound) == []
    statuses = {
        node: Status(Code(code), ("status from the case",))
        for node, code in (check.get("filterStatuses") or {}).items()
    }
    with snap.bound():
        state = CycleState()
        _, pre, _ = framework.run_pre_filter_plugins(state, pod, snap.list_node_infos())
        assert pre.is_success or pre.code is Code.Unschedulable, pre
        plugin = framework.plugins[plugin_name]
        out = plugin.schedsim_post_filter(state, pod, statuses)
    st = out.status if isinstance(out, PostFilterResult) else out
    assert isinstance(st, Status), out
    where = f"{source} ({store.__name__})"
    assert st.code.value == expect["code"], f"{where}: got {st}"
    if "reasons" in expect:
        assert list(st.reasons) == expect["reasons"], f"{where}: got {st.reasons}"
    if "nominatedNodeName" not in expect:
        assert not isinstance(out, PostFilterResult), f"{where}: unexpected result {out}"
        return
    assert isinstance(out, PostFilterResult), f"{where}: no result, status {st}"
    assert out.nominated_node_name == expect["nominatedNodeName"], f"{where}: got {out}"
    got = sorted(p.key for p in out.victims)
    assert got == sorted(expect.get("victims") or []), f"{where}: victims {got}"


def run(case: dict[str, Any], source: str) -> None:
    """Run one case on both stores."""
    for store in STORES.values():
        run_on(case, source, store)
