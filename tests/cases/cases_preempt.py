"""Runner for the ``preempt-*`` cases: DefaultPreemption through its PostFilter.

Called by ``test_cases.py``. As upstream's TestPostFilter / TestDryRunPreemption /
TestPreempt do: the profile's Filter plugins are the case's ``filterPlugins`` (their PreFilter
runs for the pod first, their AddPod/RemovePod extensions during the dry run), the
PostFilter receives ``filterStatuses`` (a node not listed is absent, i.e.
``UnschedulableAndUnresolvable``), and the plugin's result is compared with ``expect``:
code, message, the nominated node ("" = the nomination is cleared; absent = no result at all)
and the victims. The PodDisruptionBudgets reach the plugin through the handle's
`ObjectListers`; nodes and pods through the snapshot (both stores).

``check.component`` selects a narrower entry point, as upstream's other test functions call
it (format in tests/cases/upstream/README.md, "Preemption components"):
``DryRunPreemption`` (TestDryRunPreemption: the candidates per scheduling cycle),
``SelectCandidate`` (TestSelectBestCandidate: the dry run, then the node chosen),
``CustomSelection`` (TestCustomSelection / TestCustomOrdering: the plugin's ``IsEligiblePod`` /
``MoreImportantPod`` replaced by one of the upstream tests' rules, then every candidate in
the order SelectCandidate picks them, with its victims in order) and
``PodEligibleToPreemptOthers`` (the plugin's eligibility verdict) and
``NodesWherePreemptionMightHelp`` (the potential nodes for the case's ``filterStatuses``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from schedsim.api.core import Pod
from schedsim.api.loading.loader import decode_objects
from schedsim.engine import STORES
from schedsim.framework import (
    Code,
    CycleState,
    Framework,
    Handle,
    NodeInfo,
    ObjectListers,
    PodInfo,
    PostFilterResult,
    Profile,
    Status,
)
from schedsim.framework.preemption import (
    Candidate,
    nodes_where_preemption_might_help,
    pod_start_time,
)
from schedsim.snapshot import PredicateSnapshot


def expected_failure(case: dict[str, Any]) -> str | None:
    """Why this case is expected to fail (None: it must pass)."""
    del case
    return None


def _setup(
    case: dict[str, Any], source: str, store: Any
) -> tuple[Framework, PredicateSnapshot, dict[str, Pod]]:
    """The case's framework (the Filter plugins and the preemption plugin) and a snapshot
    of its nodes and bound pods; the pods by ``ns/name``."""
    check = case["check"]
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
    preemptors = set(check.get("pods") or [check["pod"]])
    pods = {p.key: p for p in m.pods}
    bound = [p for p in m.pods if p.node_name and p.key not in preemptors]
    assert snap.set_cluster_state(m.nodes, bound) == []
    return framework, snap, pods


def _dry_run(
    framework: Framework, snap: PredicateSnapshot, plugin: Any, pod: Pod, offset: int | None
) -> list[Candidate]:
    """PreFilter for ``pod``, then ``DryRunPreemption`` over every node sorted by name (as
    TestDryRunPreemption / TestSelectBestCandidate pass them) with the plugin's offset and
    number of candidates (``offset``: upstream's seeded draw instead)."""
    state = CycleState()
    nodes = sorted(snap.list_node_infos(), key=lambda ni: ni.node.name if ni.node else "")
    _, pre, _ = framework.run_pre_filter_plugins(state, pod, nodes)
    assert pre.is_success, pre
    start, num = plugin.get_offset_and_num_candidates(len(nodes))
    pdbs = framework.handle.object_listers.pod_disruption_budgets
    got, _ = plugin.evaluator.dry_run_preemption(
        state, pod, nodes, pdbs, start if offset is None else offset, num
    )
    assert not isinstance(got, Status), got
    return list(got)


def _eligibility_rule(rule: dict[str, Any]) -> Callable[[NodeInfo, PodInfo, Pod], bool]:
    """One of TestCustomSelection's ``IsEligiblePodFunc``s, by name."""
    ((kind, arg),) = rule.items()
    if kind == "podLabel":  # podLabelIsEligible(key, val)
        return lambda ni, victim, preemptor: victim.pod.labels.get(arg["key"]) == arg["value"]
    if kind == "nodeName":  # nodeNameIsEligible(name)
        return lambda ni, victim, preemptor: ni.node is not None and ni.node.name == arg
    if kind == "preemptorPriorityAtLeast":  # priorityBelowThresholdCannotPreempt(min)
        return lambda ni, victim, preemptor: preemptor.priority >= arg
    assert kind == "victimPriorityAtMost", kind  # priorityAboveThresholdCannotBePreempted(max)
    return lambda ni, victim, preemptor: victim.pod.priority <= arg


# TestCustomOrdering's MoreImportantPodFuncs, by name
_ORDERINGS: dict[str, Callable[[Pod, Pod], bool]] = {
    "oldestStart": lambda a, b: pod_start_time(a) < pod_start_time(b),
    "podName": lambda a, b: a.name < b.name,
}


def _run_component(case: dict[str, Any], source: str, store: Any) -> None:
    """The ``check.component`` cases (see the module)."""
    check, expect = case["check"], case["expect"]
    where = f"{source} ({store.__name__})"
    framework, snap, pods = _setup(case, source, store)
    plugin = framework.plugins[check["plugin"]]
    component = check["component"]
    with snap.bound():
        if component == "PodEligibleToPreemptOthers":
            given = check.get("nominatedNodeStatus")
            status = None if given is None else Status(Code(given["code"]), tuple(given["reasons"]))
            ok, _ = plugin.pod_eligible_to_preempt_others(pods[check["pod"]], status)
            assert ok is expect["eligible"], f"{where}: got {ok}"
            return
        if component == "NodesWherePreemptionMightHelp":
            given = {
                node: Status(Code(code), ("status from the case",))
                for node, code in (check.get("filterStatuses") or {}).items()
            }
            tried = nodes_where_preemption_might_help(snap.list_node_infos(), given)
            names = sorted(ni.node.name for ni in tried if ni.node is not None)
            assert names == expect["nodes"], f"{where}: got {names}"
            return
        if component == "CustomSelection":
            if "isEligiblePod" in check:
                plugin.is_eligible_pod = _eligibility_rule(check["isEligiblePod"])
            if "moreImportantPod" in check:
                plugin.more_important_pod = _ORDERINGS[check["moreImportantPod"]]
            left = _dry_run(framework, snap, plugin, pods[check["pod"]], None)
            picked: dict[str, list[str]] = {}
            while left:  # as upstream: select, record, drop the selected one, again
                best = plugin.evaluator.select_candidate(left)
                picked[best.name] = [p.key for p in best.victims]
                left = [c for c in left if c.name != best.name]
            assert picked == expect["candidates"], f"{where}: got {picked}"
            return
        if component == "SelectCandidate":
            got = _dry_run(framework, snap, plugin, pods[check["pod"]], None)
            assert got, f"{where}: no candidate"
            chosen = plugin.evaluator.select_candidate(got).name
            assert chosen in expect["selectedAnyOf"], f"{where}: chose {chosen}"
            return
        assert component == "DryRunPreemption", component
        offsets = check.get("offsets") or [None] * len(check["pods"])
        for cycle, (key, offset) in enumerate(zip(check["pods"], offsets, strict=True)):
            got = _dry_run(framework, snap, plugin, pods[key], offset)
            table = [
                {
                    "node": c.name,
                    "victims": sorted(p.key for p in c.victims),
                    "numPDBViolations": c.num_pdb_violations,
                }
                for c in sorted(got, key=lambda c: c.name)
            ]
            want = expect["cycles"][cycle]["candidates"]
            assert table == want, f"{where}: cycle {cycle}: candidates {table}"


def run_on(case: dict[str, Any], source: str, store: Any) -> None:
    """Run one case on a snapshot with ``store`` and compare every field ``expect`` gives."""
    check, expect = case["check"], case["expect"]
    if "component" in check:
        _run_component(case, source, store)
        return
    framework, snap, pods = _setup(case, source, store)
    plugin_name = check["plugin"]
    pod = pods[check["pod"]]
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
