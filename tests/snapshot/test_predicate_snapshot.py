"""PredicateSnapshot over every store: the store conformance suite
(`schedsim.testing.snapshot_conformance`, modelled on CA ``predicate_snapshot_test.go``
``TestForking``/``validTestCases``, ``TestSetClusterState``, ``TestNode404``,
``TestNodeAlreadyExists``, ``TestPVCUsedByPods``, ``TestPVCClearAndFork``, which CA runs for
its basic and delta stores), CA's SchedulingError messages as the plugin runner produces them
(``predicate/plugin_runner.go``), round robin, and ``diagnose``.

Add a store to `schedsim.engine.STORES` and it runs through everything here (the `store`
fixture of tests/conftest.py).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, ClassVar

import pytest

from schedsim.api.core import Pod
from schedsim.framework import (
    Code,
    CycleState,
    Framework,
    Handle,
    NodeInfo,
    PluginFactory,
    Profile,
    Status,
    default_profile,
    discover_plugins,
)
from schedsim.snapshot import (
    BasicSnapshotStore,
    ClusterSnapshotStore,
    PredicateSnapshot,
    SchedulingError,
    SchedulingErrorType,
)
from schedsim.snapshot import NodeInfo as SnapshotNodeInfo
from schedsim.snapshot.store import StoreNodeInfoLister, StoreStorageInfoLister
from schedsim.testing import (
    CONFORMANCE_CASES,
    ConformanceCase,
    dump_state,
    make_node,
    make_pod,
    new_snapshot,
    run_store_conformance,
)


@pytest.fixture(autouse=True)
def _quiet_skipped_pod_warnings(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    caplog.set_level(logging.ERROR, logger="schedsim.snapshot.predicate")
    yield


# --------------------------------------------------------------------------- conformance


@pytest.mark.parametrize("case", CONFORMANCE_CASES, ids=lambda c: c.name)
def test_conformance(case: ConformanceCase, store: Callable[[], ClusterSnapshotStore]) -> None:
    """One case of the store conformance suite (see its name)."""
    case.run(store)


def test_conformance_case_names_are_unique() -> None:
    names = [c.name for c in CONFORMANCE_CASES]
    assert len(names) == len(set(names))


def test_run_store_conformance_accepts_every_store(
    store: Callable[[], ClusterSnapshotStore],
) -> None:
    """The one-call entry point passes for the stores we ship."""
    run_store_conformance(store)


class _Delegating:
    """A store wrapping BasicSnapshotStore through the public protocol only, so that each
    subclass can break one promise."""

    def __init__(self) -> None:
        self.inner = BasicSnapshotStore()

    def node_infos(self) -> StoreNodeInfoLister:
        return self.inner.node_infos()

    def storage_infos(self) -> StoreStorageInfoLister:
        return self.inner.storage_infos()

    def store_node_info(self, node_info: Any) -> None:
        self.inner.store_node_info(node_info)

    def remove_node_info(self, node_name: str) -> None:
        self.inner.remove_node_info(node_name)

    def store_pod_info(self, pod_info: Any, node_name: str) -> None:
        self.inner.store_pod_info(pod_info, node_name)

    def remove_pod_info(self, namespace: str, pod_name: str, node_name: str) -> None:
        self.inner.remove_pod_info(namespace, pod_name, node_name)

    def fork(self) -> None:
        self.inner.fork()

    def revert(self) -> None:
        self.inner.revert()

    def commit(self) -> None:
        self.inner.commit()

    def clear(self) -> None:
        self.inner.clear()


class _RevertIsNoop(_Delegating):
    def revert(self) -> None:
        pass


class _CommitDropsChanges(_Delegating):
    def commit(self) -> None:
        self.inner.revert()


class _NoLayers(_Delegating):
    def fork(self) -> None:
        pass


class _CopyingLister:
    def __init__(self, inner: StoreNodeInfoLister, copy_get: bool, copy_list: bool) -> None:
        self._inner, self._copy_get, self._copy_list = inner, copy_get, copy_list

    def list(self) -> Sequence[Any]:
        got = self._inner.list()
        return list(got) if self._copy_list else got

    def have_pods_with_affinity_list(self) -> Sequence[Any]:
        return self._inner.have_pods_with_affinity_list()

    def have_pods_with_required_anti_affinity_list(self) -> Sequence[Any]:
        return self._inner.have_pods_with_required_anti_affinity_list()

    def get(self, node_name: str) -> Any:
        got = self._inner.get(node_name)
        return got.snapshot() if self._copy_get else got


class _GetReturnsCopies(_Delegating):
    def node_infos(self) -> StoreNodeInfoLister:
        return _CopyingLister(self.inner.node_infos(), copy_get=True, copy_list=False)


class _ListAllocatesEachCall(_Delegating):
    def node_infos(self) -> StoreNodeInfoLister:
        return _CopyingLister(self.inner.node_infos(), copy_get=False, copy_list=True)


class _NoPvcTracking:
    def is_pvc_used_by_pods(self, key: str) -> bool:
        return False


class _ForgetsPvcs(_Delegating):
    def storage_infos(self) -> StoreStorageInfoLister:
        return _NoPvcTracking()


class _ClearKeepsForks(_Delegating):
    def clear(self) -> None:
        for ni in list(self.inner.node_infos().list()):
            assert ni.node is not None
            self.inner.remove_node_info(ni.node.name)


@pytest.mark.parametrize(
    "broken",
    [
        _RevertIsNoop,
        _CommitDropsChanges,
        _NoLayers,
        _GetReturnsCopies,
        _ListAllocatesEachCall,
        _ForgetsPvcs,
        _ClearKeepsForks,
    ],
    ids=lambda c: c.__name__.lstrip("_"),
)
def test_conformance_suite_rejects_broken_stores(broken: Callable[[], Any]) -> None:
    """The suite is not vacuous: a store breaking one promise fails it."""
    with pytest.raises(AssertionError, match=r"store conformance case\(s\) failed"):
        run_store_conformance(broken)


def test_delegating_store_itself_conforms() -> None:
    """...while the same wrapper without the defect passes."""
    run_store_conformance(_Delegating)


# --------------------------------------------------------------------------- SchedulingError text
# CA plugin_runner.go RunFiltersOnNode / RunFiltersUntilPassingNode; formats of
# clustersnapshot/scheduling_error.go (reference section 2.1).


def _snapshot(
    store: Callable[[], ClusterSnapshotStore], nodes: Sequence[Any] = ()
) -> PredicateSnapshot:
    s = new_snapshot(store)
    s.set_cluster_state(list(nodes), [])
    return s


def _raises(fn: Callable[[], object]) -> SchedulingError:
    with pytest.raises(SchedulingError) as info:
        fn()
    return info.value


def test_failing_predicate_message(store: Callable[[], ClusterSnapshotStore]) -> None:
    s = _snapshot(store, [make_node("n1", cpu="1", memory="1Gi")])
    err = _raises(lambda: s.schedule_pod(make_pod("big", cpu="2"), "n1"))
    assert err.type is SchedulingErrorType.FAILING_PREDICATE
    assert err.failing_predicate_name == "NodeResourcesFit"
    assert err.failing_predicate_reasons == ("Insufficient cpu",)
    assert err.reasons == ("Insufficient cpu",)
    assert str(err) == (
        "can't schedule pod default/big: predicate \"NodeResourcesFit\" didn't pass "
        '(predicateReasons=[Insufficient cpu]; debugInfo=nodeName: "n1")'
    )


def test_failing_predicate_message_with_several_reasons(
    store: Callable[[], ClusterSnapshotStore],
) -> None:
    s = _snapshot(store, [make_node("n1", cpu="1", memory="1Gi", pods=1)])
    s.force_add_pod(make_pod("a"), "n1")
    err = _raises(lambda: s.check_predicates(make_pod("big", cpu="2", memory="2Gi"), "n1"))
    assert err.failing_predicate_reasons == (
        "Too many pods",
        "Insufficient cpu",
        "Insufficient memory",
    )
    assert str(err) == (
        "can't schedule pod default/big: predicate \"NodeResourcesFit\" didn't pass "
        "(predicateReasons=[Too many pods, Insufficient cpu, Insufficient memory]; "
        'debugInfo=nodeName: "n1")'
    )


def test_schedule_pod_on_cordoned_node_fails_in_node_unschedulable(
    store: Callable[[], ClusterSnapshotStore],
) -> None:
    """RunFiltersOnNode does not short-circuit spec.unschedulable: the plugin rejects."""
    s = _snapshot(store, [make_node("n1", unschedulable=True)])
    err = _raises(lambda: s.schedule_pod(make_pod("p"), "n1"))
    assert str(err) == (
        "can't schedule pod default/p: predicate \"NodeUnschedulable\" didn't pass "
        '(predicateReasons=[node(s) were unschedulable]; debugInfo=nodeName: "n1")'
    )


def test_taint_toleration_debug_info_names_the_taints(
    store: Callable[[], ClusterSnapshotStore],
) -> None:
    """failingFilterDebugInfo adds the node's taints for TaintToleration (Go's %#v is not
    reproduced; the taint key and value are in it)."""
    taint = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
    s = _snapshot(store, [make_node("n1", taints=[taint])])
    err = _raises(lambda: s.schedule_pod(make_pod("p"), "n1"))
    assert err.failing_predicate_name == "TaintToleration"
    assert err.failing_predicate_reasons == ("node(s) had untolerated taint(s)",)
    assert err.debug_info.startswith('nodeName: "n1", nodeTaints: ')
    assert "dedicated" in err.debug_info and "gpu" in err.debug_info


def test_no_nodes_passing_message(store: Callable[[], ClusterSnapshotStore]) -> None:
    s = _snapshot(store, [make_node("n1", cpu="1"), make_node("n2", cpu="1")])
    err = _raises(lambda: s.schedule_pod_on_any_node_matching(make_pod("big", cpu="2")))
    assert err.type is SchedulingErrorType.NO_NODES_PASSING_PREDICATES
    assert str(err) == (
        "can't schedule pod default/big: couldn't find a matching Node with passing predicates"
    )
    assert err.reasons == (str(err),)
    assert err.failing_predicate_name == "" and err.failing_predicate_reasons == ()


def test_no_nodes_passing_on_empty_snapshot(
    store: Callable[[], ClusterSnapshotStore],
) -> None:
    s = _snapshot(store)
    err = _raises(lambda: s.schedule_pod_on_any_node_matching(make_pod("p")))
    assert err.type is SchedulingErrorType.NO_NODES_PASSING_PREDICATES


def test_missing_node_is_an_internal_error(
    store: Callable[[], ClusterSnapshotStore],
) -> None:
    """``error obtaining NodeInfo for name %q: %v`` (Go's %q: double quotes)."""
    s = _snapshot(store, [make_node("n1")])
    err = _raises(lambda: s.schedule_pod(make_pod("p"), "ghost"))
    assert err.type is SchedulingErrorType.INTERNAL_ERROR
    assert str(err).startswith(
        "can't schedule pod default/p: unexpected error: "
        'error obtaining NodeInfo for name "ghost": '
    )
    assert err.reasons == (str(err),)


_NAME_AFFINITY = {
    "affinity": {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n2"]}]}
                ]
            }
        }
    }
}


def test_node_filtered_out_by_pre_filter_names_the_plugin(
    store: Callable[[], ClusterSnapshotStore],
) -> None:
    """A PreFilterResult that leaves the node out: FailingPredicateError named after the
    narrowing plugins (CA: ``strings.Join(nodeFilteringPlugins, ", ")``), with
    kube-scheduler's reason for such a node (findNodesThatFitPod's absent-nodes status), the
    one wording simulate and scale-up show too (CA gives no reason)."""
    s = _snapshot(store, [make_node("n1"), make_node("n2")])
    err = _raises(lambda: s.schedule_pod(make_pod("p", spec=_NAME_AFFINITY), "n1"))
    assert err.type is SchedulingErrorType.FAILING_PREDICATE
    assert err.failing_predicate_name == "NodeAffinity"
    assert str(err) == (
        "can't schedule pod default/p: predicate \"NodeAffinity\" didn't pass "
        "(predicateReasons=[node(s) didn't satisfy plugin(s) [NodeAffinity]])"
    )
    s.schedule_pod(make_pod("p", spec=_NAME_AFFINITY), "n2")


def test_pre_filter_rejection_message(store: Callable[[], ClusterSnapshotStore]) -> None:
    """PreFilter rejects the pod: ``unexpectedError=PreFilter failed``, no debug info; the
    any-node variant fails the same way (not with NO_NODES_PASSING_PREDICATES)."""
    conflict = {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": ["n1"]},
                                {"key": "metadata.name", "operator": "In", "values": ["n2"]},
                            ]
                        }
                    ]
                }
            }
        }
    }
    s = _snapshot(store, [make_node("n1"), make_node("n2")])
    pod = make_pod("p", spec=conflict)
    want = (
        "can't schedule pod default/p: predicate \"NodeAffinity\" didn't pass "
        "(predicateReasons=[pod affinity terms conflict]; unexpectedError=PreFilter failed)"
    )
    assert str(_raises(lambda: s.schedule_pod(pod, "n1"))) == want
    assert str(_raises(lambda: s.schedule_pod_on_any_node_matching(pod))) == want


class _Scripted:
    """A test plugin whose PreFilter / Filter return what the test says."""

    name: ClassVar[str] = "Scripted"
    pre_filter: ClassVar[Status | None] = None
    filter: ClassVar[Status | None] = None

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        pass

    def schedsim_pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None:
        return type(self).pre_filter

    def schedsim_filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return type(self).filter


def _scripted_snapshot(
    store: Callable[[], ClusterSnapshotStore],
    pre_filter: Status | None = None,
    filter: Status | None = None,
) -> PredicateSnapshot:
    plugin: type[_Scripted] = type(
        "Scripted", (_Scripted,), {"pre_filter": pre_filter, "filter": filter}
    )
    registry: dict[str, PluginFactory] = {**discover_plugins(), "Scripted": plugin}
    points = ("NodeResourcesFit", "Scripted")
    profile = Profile(plugins={"preFilter": points, "filter": points, "reserve": ()})
    s = PredicateSnapshot(Framework(profile, Handle(), registry), store())
    s.set_cluster_state([make_node("n1")], [])
    return s


def test_filter_error_status_is_an_unexpected_filter_status(
    store: Callable[[], ClusterSnapshotStore],
) -> None:
    """A Filter status that is not a rejection: ``unexpectedError=unexpected filter status
    "Error"``, the reason being the runtime's wrapped message."""
    s = _scripted_snapshot(store, filter=Status(Code.Error, ("boom",)))
    err = _raises(lambda: s.schedule_pod(make_pod("p"), "n1"))
    assert err.failing_predicate_name == "Scripted"
    (reason,) = err.failing_predicate_reasons
    assert reason.endswith("filter plugin: boom") and "Scripted" in reason
    assert str(err) == (
        "can't schedule pod default/p: predicate \"Scripted\" didn't pass "
        f'(predicateReasons=[{reason}]; debugInfo=nodeName: "n1"; '
        'unexpectedError=unexpected filter status "Error")'
    )
    assert not s.get_node_info("n1").pods


def test_pre_filter_unschedulable_from_a_plugin(
    store: Callable[[], ClusterSnapshotStore],
) -> None:
    s = _scripted_snapshot(store, pre_filter=Status(Code.Unschedulable, ("nope", "never")))
    err = _raises(lambda: s.schedule_pod(make_pod("p"), "n1"))
    assert (err.failing_predicate_name, err.failing_predicate_reasons) == (
        "Scripted",
        ("nope", "never"),
    )
    assert str(err) == (
        "can't schedule pod default/p: predicate \"Scripted\" didn't pass "
        "(predicateReasons=[nope, never]; unexpectedError=PreFilter failed)"
    )


def test_scheduling_failures_do_not_modify_the_snapshot(
    store: Callable[[], ClusterSnapshotStore],
) -> None:
    s = _snapshot(store, [make_node("n1", cpu="1"), make_node("n2", cpu="1")])
    s.force_add_pod(make_pod("a"), "n1")
    before = dump_state(s)
    listed = s.list_node_infos()
    for fn in (
        lambda: s.schedule_pod(make_pod("big", cpu="2"), "n1"),
        lambda: s.schedule_pod(make_pod("p"), "ghost"),
        lambda: s.schedule_pod_on_any_node_matching(make_pod("big", cpu="2")),
        lambda: s.check_predicates(make_pod("big", cpu="2"), "n2"),
    ):
        _raises(fn)
    s.check_predicates(make_pod("small"), "n2")
    assert dump_state(s) == before
    assert s.list_node_infos() is listed


# --------------------------------------------------------------------------- round robin


def test_round_robin_starts_at_index_one_and_follows_the_last_choice(
    store: Callable[[], ClusterSnapshotStore],
) -> None:
    """CA NewLastIndexOrderMapping(1), one per runner: n2, n3, n4, n1, n2, ..."""
    s = _snapshot(store, [make_node(f"n{i}") for i in range(1, 5)])
    got = [s.schedule_pod_on_any_node_matching(make_pod(f"p{i}")) for i in range(9)]
    assert got == ["n2", "n3", "n4", "n1", "n2", "n3", "n4", "n1", "n2"]


def test_round_robin_skips_full_nodes_and_resumes_after_the_chosen_one(
    store: Callable[[], ClusterSnapshotStore],
) -> None:
    """n3 is full: the search from n3 goes on to n4, and the next one starts after n4."""
    s = _snapshot(store, [make_node(f"n{i}", cpu="1") for i in range(1, 5)])
    s.force_add_pod(make_pod("filler", cpu="1"), "n3")
    got = [s.schedule_pod_on_any_node_matching(make_pod(f"p{i}")) for i in range(4)]
    assert got == ["n2", "n4", "n1", "n2"]


def test_round_robin_skips_cordoned_and_unacceptable_nodes(
    store: Callable[[], ClusterSnapshotStore],
) -> None:
    nodes = [make_node(f"n{i}", unschedulable=i == 3) for i in range(1, 5)]
    s = _snapshot(store, nodes)
    got = [s.schedule_pod_on_any_node_matching(make_pod(f"p{i}")) for i in range(5)]
    assert got == ["n2", "n4", "n1", "n2", "n4"]

    def not_n1(ni: NodeInfo) -> bool:
        return ni.node is not None and ni.node.name != "n1"

    got = [s.schedule_pod_on_any_node_matching(make_pod(f"q{i}"), not_n1) for i in range(3)]
    assert got == ["n2", "n4", "n2"]


def test_round_robin_index_wraps_when_nodes_are_removed(
    store: Callable[[], ClusterSnapshotStore],
) -> None:
    """The remembered index is taken modulo the current node count."""
    s = _snapshot(store, [make_node(f"n{i}") for i in range(1, 5)])
    got = [s.schedule_pod_on_any_node_matching(make_pod(f"p{i}")) for i in range(3)]
    assert got == ["n2", "n3", "n4"]  # last index 3
    s.remove_node_info("n2")
    s.remove_node_info("n3")  # [n1, n4]: next start (0 + 1 + 3) % 2 = 0
    got = [s.schedule_pod_on_any_node_matching(make_pod(f"q{i}")) for i in range(3)]
    assert got == ["n1", "n4", "n1"]


# --------------------------------------------------------------------------- diagnose


def test_diagnose_message_is_kube_schedulers_fit_error(
    store: Callable[[], ClusterSnapshotStore],
) -> None:
    taint = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
    nodes = [
        make_node("n1", cpu="4", taints=[taint]),
        make_node("n2", cpu="1"),
        make_node("n3", cpu="1"),
        make_node("n4", cpu="4", unschedulable=True),
        make_node("n5", cpu="1"),
    ]
    s = _snapshot(store, nodes)
    before = dump_state(s)
    fit = s.diagnose(make_pod("big", cpu="2"))
    assert fit.num_all_nodes == 5
    assert fit.message == (
        "0/5 nodes are available: 1 node(s) had untolerated taint(s), "
        "1 node(s) were unschedulable, 3 Insufficient cpu."
    )
    assert fit.reason_histogram() == {
        "node(s) had untolerated taint(s)": 1,
        "node(s) were unschedulable": 1,
        "Insufficient cpu": 3,
    }
    assert {n: st.plugin for n, st in fit.diagnosis.node_to_status.items()} == {
        "n1": "TaintToleration",
        "n2": "NodeResourcesFit",
        "n3": "NodeResourcesFit",
        "n4": "NodeUnschedulable",
        "n5": "NodeResourcesFit",
    }
    assert dump_state(s) == before


def test_diagnose_counts_every_reason_of_a_node(
    store: Callable[[], ClusterSnapshotStore],
) -> None:
    """A node failing cpu and memory counts once under each reason."""
    s = _snapshot(store, [make_node(f"n{i}", cpu="1", memory="1Gi") for i in range(3)])
    fit = s.diagnose(make_pod("big", cpu="2", memory="2Gi"))
    assert fit.message == "0/3 nodes are available: 3 Insufficient cpu, 3 Insufficient memory."


def test_diagnose_pre_filter_rejection(store: Callable[[], ClusterSnapshotStore]) -> None:
    """A PreFilter rejection: its message alone, after the node count."""
    s = _scripted_snapshot(store, pre_filter=Status(Code.UnschedulableAndUnresolvable, ("nope",)))
    s.add_node_info(SnapshotNodeInfo(make_node("n2")))
    fit = s.diagnose(make_pod("p"))
    assert fit.message == "0/2 nodes are available: nope."
    assert fit.diagnosis.node_to_status == {}


def test_diagnose_nodes_left_out_by_pre_filter(
    store: Callable[[], ClusterSnapshotStore],
) -> None:
    """Nodes a PreFilterResult excludes count under ``didn't satisfy plugin(s) [...]``."""
    s = _snapshot(store, [make_node("n1"), make_node("n2", cpu="1"), make_node("n3")])
    fit = s.diagnose(make_pod("p", cpu="2", spec=_NAME_AFFINITY))
    assert fit.message == (
        "0/3 nodes are available: 1 Insufficient cpu, "
        "2 node(s) didn't satisfy plugin(s) [NodeAffinity]."
    )


def test_default_profile_used_by_the_suite() -> None:
    """The suite builds snapshots with kube-scheduler's default profile."""
    s = new_snapshot(BasicSnapshotStore)
    assert s.framework.profile == default_profile()
