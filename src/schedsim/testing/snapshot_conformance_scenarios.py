"""The modification scenarios of the store conformance kit (CA ``validTestCases``): one
operation on a prepared snapshot and the state it must leave, CSI scenarios included."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import attrs

from schedsim.api.core import Node, Pod
from schedsim.api.storage import CSINode, CSINodeDriver
from schedsim.snapshot import (
    NodeAlreadyExistsError,
    NodeInfo,
    PodNotFoundError,
    PredicateSnapshot,
    SchedulingError,
    SchedulingErrorType,
)
from schedsim.snapshot.csi import CsiSnapshotError
from schedsim.testing.snapshot_conformance_objects import make_node, make_pod, on
from schedsim.testing.snapshot_conformance_state import (
    EMPTY,
    GI,
    MI,
    NodeState,
    expect_equal,
    expect_raises,
    expect_true,
    fail,
)

# --------------------------------------------------------------------------- modification scenarios

SPECIAL_NODE = make_node("special", cpu="1", memory="1Gi")
OTHER_NODE = make_node("other", cpu="1", memory="1Gi")
LARGE_NODE = make_node("large", cpu="100", memory="100Gi")
EXTRA_NODE = make_node("extra-node", cpu="1", memory="1Gi")
"""Added in the inner fork by the fork modes (CA's ``specialNode-2``)."""

SPECIAL_POD = make_pod("special-pod", cpu="100m", memory="100Mi")
OTHER_POD = make_pod("other-pod", cpu="200m", memory="200Mi")
LARGE_POD = make_pod("large-pod", cpu="50", memory="50Gi")
ANTI_AFFINITY_POD = make_pod(
    "anti-pod",
    spec={
        "affinity": {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "labelSelector": {"matchLabels": {"app": "anti"}},
                        "topologyKey": "kubernetes.io/hostname",
                    }
                ]
            }
        }
    },
)

_P = ("default/special-pod", 100, 100 * MI)
_OP = ("default/other-pod", 200, 200 * MI)
_LP = ("default/large-pod", 50_000, 50 * GI)
_AP = ("default/anti-pod", 100, 100 * MI)


def ns(*pods: tuple[str, int, int]) -> NodeState:
    return NodeState(
        tuple(sorted(k for k, _, _ in pods)),
        sum(c for _, c, _ in pods),
        sum(m for _, _, m in pods),
        len(pods),
    )


@attrs.frozen
class ModificationScenario:
    """One operation on a snapshot and the states before and after it.

    Attributes:
        name: CA's test case name, or ``extra: ...`` for schedsim's additions.
        op: the operation; it may check its own results (e.g. the chosen node).
        initial: the state built by ``set_cluster_state(nodes, pods)``.
        modified: the state after ``op`` (equal to ``initial`` when ``op`` fails).
        nodes, pods: the initial cluster.
        csi_nodes: the initial cluster's CSINodes (``set_cluster_state(csi_snapshot=...)``).
        error: the exception ``op`` must raise, if any.
        scheduling_error: its `SchedulingErrorType` when it is a `SchedulingError`.
        failing_predicate: ``(plugin, reasons)`` a FAILING_PREDICATE error must name.
    """

    name: str
    op: Callable[[PredicateSnapshot], None]
    initial: Mapping[str, NodeState]
    modified: Mapping[str, NodeState]
    nodes: tuple[Node, ...] = ()
    pods: tuple[Pod, ...] = ()
    csi_nodes: tuple[CSINode, ...] = ()
    error: type[Exception] | None = None
    scheduling_error: SchedulingErrorType | None = None
    failing_predicate: tuple[str, tuple[str, ...]] | None = None

    def run_op(self, snapshot: PredicateSnapshot) -> None:
        """Run ``op`` and check that it raises what it must (and nothing else)."""
        if self.error is None:
            try:
                self.op(snapshot)
            except AssertionError:
                raise
            except Exception as e:
                fail(f"op raised {type(e).__name__}: {e}")
            return
        err = expect_raises("op", lambda: self.op(snapshot), self.error, self.scheduling_error)
        if self.failing_predicate is not None:
            if not isinstance(err, SchedulingError):
                fail(f"op: expected a SchedulingError naming a predicate, got {err!r}")
            expect_equal(
                "failing predicate (name, reasons)",
                (err.failing_predicate_name, err.failing_predicate_reasons),
                self.failing_predicate,
            )


def _add_empty_node_info(s: PredicateSnapshot) -> None:
    s.add_node_info(NodeInfo(SPECIAL_NODE))


def _add_node_info_with_pods(s: PredicateSnapshot) -> None:
    s.add_node_info(NodeInfo(SPECIAL_NODE, pods=[s.new_pod_info(SPECIAL_POD)]))


def _remove_node_info(s: PredicateSnapshot) -> None:
    s.remove_node_info("special")


def _remove_then_add_back(s: PredicateSnapshot) -> None:
    s.remove_node_info("special")
    s.add_node_info(NodeInfo(SPECIAL_NODE))


def _add_pod_then_remove_node(s: PredicateSnapshot) -> None:
    s.force_add_pod(SPECIAL_POD, "special")
    s.remove_node_info("special")


def _schedule_pod(s: PredicateSnapshot) -> None:
    s.schedule_pod(SPECIAL_POD, "special")


def _schedule_on_any_node(s: PredicateSnapshot) -> None:
    got = s.schedule_pod_on_any_node_matching(LARGE_POD, lambda _ni: True)
    expect_equal("schedule_pod_on_any_node_matching()", got, "large")


def _is_special(ni: NodeInfo) -> bool:
    return ni.node is not None and ni.node.name == "special"


def _schedule_on_any_matching_node(s: PredicateSnapshot) -> None:
    got = s.schedule_pod_on_any_node_matching(SPECIAL_POD, _is_special)
    expect_equal("schedule_pod_on_any_node_matching()", got, "special")


def _schedule_failing(s: PredicateSnapshot) -> None:
    s.schedule_pod(LARGE_POD, "special")


def _schedule_any_failing_everywhere(s: PredicateSnapshot) -> None:
    s.schedule_pod_on_any_node_matching(LARGE_POD, lambda _ni: True)


def _schedule_any_none_matching(s: PredicateSnapshot) -> None:
    s.schedule_pod_on_any_node_matching(SPECIAL_POD, lambda _ni: False)


def _unschedule_pod(s: PredicateSnapshot) -> None:
    s.unschedule_pod("default", "special-pod", "large")


def _force_remove_pod(s: PredicateSnapshot) -> None:
    s.force_remove_pod("default", "special-pod", "large")


def _force_remove_pod_of_other_namespace(s: PredicateSnapshot) -> None:
    s.force_remove_pod("other", "special-pod", "large")


def _remove_pod_info_of_other_namespace(s: PredicateSnapshot) -> None:
    s.store.remove_pod_info("other", "special-pod", "large")


def _unschedule_and_schedule_back(s: PredicateSnapshot) -> None:
    s.unschedule_pod("default", "special-pod", "large")
    s.schedule_pod(on(SPECIAL_POD, "large"), "large")


def _schedule_on_node_with_pods(s: PredicateSnapshot) -> None:
    s.schedule_pod(SPECIAL_POD, "large")


def _add_node_then_schedule_on_it(s: PredicateSnapshot) -> None:
    s.add_node_info(NodeInfo(OTHER_NODE))
    s.schedule_pod(SPECIAL_POD, "other")


def _remove_then_add_back_with_other_pods(s: PredicateSnapshot) -> None:
    s.remove_node_info("special")
    s.add_node_info(NodeInfo(SPECIAL_NODE, pods=[s.new_pod_info(OTHER_POD)]))


def _remove_node_with_pods(s: PredicateSnapshot) -> None:
    s.remove_node_info("large")


def _force_add_anti_affinity_pod(s: PredicateSnapshot) -> None:
    s.force_add_pod(ANTI_AFFINITY_POD, "special")


def _unschedule_missing_pod(s: PredicateSnapshot) -> None:
    s.unschedule_pod("default", "ghost", "special")


def _check_predicates_only(s: PredicateSnapshot) -> None:
    s.check_predicates(SPECIAL_POD, "special")
    expect_raises(
        "check_predicates(large pod)",
        lambda: s.check_predicates(LARGE_POD, "special"),
        SchedulingError,
        SchedulingErrorType.FAILING_PREDICATE,
    )


SPECIAL_CSI = CSINode(
    "special", drivers=(CSINodeDriver("ebs.csi.aws.com", "special", allocatable_count=1),)
)
"""The CSINode of SPECIAL_NODE: at most one AWS EBS volume."""
SPECIAL_CSI_2 = CSINode(
    "special", drivers=(CSINodeDriver("ebs.csi.aws.com", "special", allocatable_count=2),)
)
"""Another CSINode for SPECIAL_NODE: at most two AWS EBS volumes."""


def _ebs_pod(name: str, volume_id: str) -> Pod:
    # an inline AWS EBS volume: NodeVolumeLimits counts it as ebs.csi.aws.com/<volume_id> on
    # nodes with a CSINode (migration is on), without any PV or PVC
    return make_pod(
        name, other_volumes=[{"name": "v", "awsElasticBlockStore": {"volumeID": volume_id}}]
    )


EBS_POD_A = _ebs_pod("ebs-a", "vol-a")
EBS_POD_B = _ebs_pod("ebs-b", "vol-b")
POD_EA = ("default/ebs-a", 100, 100 * MI)
POD_EB = ("default/ebs-b", 100, 100 * MI)


def csi(state: NodeState, name: str = "special") -> NodeState:
    return attrs.evolve(state, csi_node=name)


def _add_node_info_with_csi_node(s: PredicateSnapshot) -> None:
    s.add_node_info(NodeInfo(SPECIAL_NODE, csi_node=SPECIAL_CSI))


def _remove_then_add_back_with_other_csi_node(s: PredicateSnapshot) -> None:
    s.remove_node_info("special")
    expect_true("CSINode left after its node was removed", "special" not in s.csi_snapshot)
    s.add_node_info(
        NodeInfo(SPECIAL_NODE, csi_node=SPECIAL_CSI_2, pods=[s.new_pod_info(EBS_POD_A)])
    )
    s.schedule_pod(EBS_POD_B, "special")  # fits the new CSINode's limit of 2


def _schedule_over_volume_limit(s: PredicateSnapshot) -> None:
    s.schedule_pod(EBS_POD_B, "special")


def _add_node_info_with_foreign_csi_node(s: PredicateSnapshot) -> None:
    s.add_node_info(NodeInfo(OTHER_NODE, csi_node=SPECIAL_CSI))


def _add_node_info_with_tracked_csi_node(s: PredicateSnapshot) -> None:
    s.remove_node_info("special")
    s.add_node_info(NodeInfo(SPECIAL_NODE, csi_node=SPECIAL_CSI))
    s.add_node_info(NodeInfo(SPECIAL_NODE, csi_node=SPECIAL_CSI_2))


def _add_pod_then_remove_node_with_csi(s: PredicateSnapshot) -> None:
    s.force_add_pod(EBS_POD_B, "special")
    s.remove_node_info("special")


_ONLY_SPECIAL = {"special": EMPTY}
_SPECIAL_AND_LARGE = {"special": EMPTY, "large": EMPTY}
_SPECIAL_AND_OTHER = {"special": EMPTY, "other": EMPTY}
_LARGE_WITH_TWO = {"large": ns(_P, _LP)}
_LARGE_WITH_TWO_PODS = (on(SPECIAL_POD, "large"), on(LARGE_POD, "large"))

_OTHER_NS_POD = make_pod("special-pod", namespace="other", cpu="200m", memory="200Mi")
_SAME_NAME_PODS = (on(SPECIAL_POD, "large"), on(_OTHER_NS_POD, "large"))
_ONP = ("other/special-pod", 200, 200 * MI)

MODIFICATION_SCENARIOS: tuple[ModificationScenario, ...] = (
    # CA predicate_snapshot_test.go validTestCases (the non-DRA ones), same names.
    ModificationScenario("add empty nodeInfo", _add_empty_node_info, {}, {"special": EMPTY}),
    ModificationScenario("add nodeInfo", _add_node_info_with_pods, {}, {"special": ns(_P)}),
    ModificationScenario(
        "remove nodeInfo", _remove_node_info, _ONLY_SPECIAL, {}, nodes=(SPECIAL_NODE,)
    ),
    ModificationScenario(
        "remove nodeInfo, then add it back",
        _remove_then_add_back,
        _ONLY_SPECIAL,
        _ONLY_SPECIAL,
        nodes=(SPECIAL_NODE,),
    ),
    ModificationScenario(
        "add pod, then remove nodeInfo",
        _add_pod_then_remove_node,
        _ONLY_SPECIAL,
        {},
        nodes=(SPECIAL_NODE,),
    ),
    ModificationScenario(
        "schedule pod", _schedule_pod, _ONLY_SPECIAL, {"special": ns(_P)}, nodes=(SPECIAL_NODE,)
    ),
    ModificationScenario(
        "schedule pod on any Node (scheduling predicates only work for one)",
        _schedule_on_any_node,
        _SPECIAL_AND_LARGE,
        {"special": EMPTY, "large": ns(_LP)},
        nodes=(SPECIAL_NODE, LARGE_NODE),
    ),
    ModificationScenario(
        "schedule pod on any Node matching (matching only works for one)",
        _schedule_on_any_matching_node,
        _SPECIAL_AND_LARGE,
        {"special": ns(_P), "large": EMPTY},
        nodes=(SPECIAL_NODE, LARGE_NODE),
    ),
    ModificationScenario(
        "scheduling pod with failing predicates is an error",
        _schedule_failing,
        _ONLY_SPECIAL,
        _ONLY_SPECIAL,
        nodes=(SPECIAL_NODE,),
        error=SchedulingError,
        scheduling_error=SchedulingErrorType.FAILING_PREDICATE,
        failing_predicate=("NodeResourcesFit", ("Insufficient cpu", "Insufficient memory")),
    ),
    ModificationScenario(
        "scheduling pod on any Node with failing predicates on all Nodes is an error",
        _schedule_any_failing_everywhere,
        _SPECIAL_AND_OTHER,
        _SPECIAL_AND_OTHER,
        nodes=(SPECIAL_NODE, OTHER_NODE),
        error=SchedulingError,
        scheduling_error=SchedulingErrorType.NO_NODES_PASSING_PREDICATES,
    ),
    ModificationScenario(
        "scheduling pod on any matching Node with no Nodes matching is an error",
        _schedule_any_none_matching,
        _SPECIAL_AND_OTHER,
        _SPECIAL_AND_OTHER,
        nodes=(SPECIAL_NODE, OTHER_NODE),
        error=SchedulingError,
        scheduling_error=SchedulingErrorType.NO_NODES_PASSING_PREDICATES,
    ),
    ModificationScenario(
        "unschedule pod",
        _unschedule_pod,
        _LARGE_WITH_TWO,
        {"large": ns(_LP)},
        nodes=(LARGE_NODE,),
        pods=_LARGE_WITH_TWO_PODS,
    ),
    # schedsim additions.
    ModificationScenario(
        "extra: force remove pod",
        _force_remove_pod,
        _LARGE_WITH_TWO,
        {"large": ns(_LP)},
        nodes=(LARGE_NODE,),
        pods=_LARGE_WITH_TWO_PODS,
    ),
    ModificationScenario(
        "extra: force remove pod keeps the same-named pod of another namespace",
        _force_remove_pod_of_other_namespace,
        {"large": ns(_P, _ONP)},
        {"large": ns(_P)},
        nodes=(LARGE_NODE,),
        pods=_SAME_NAME_PODS,
    ),
    ModificationScenario(
        "extra: store.remove_pod_info matches namespace and name",
        _remove_pod_info_of_other_namespace,
        {"large": ns(_P, _ONP)},
        {"large": ns(_P)},
        nodes=(LARGE_NODE,),
        pods=_SAME_NAME_PODS,
    ),
    ModificationScenario(
        "extra: unschedule pod and schedule it back",
        _unschedule_and_schedule_back,
        _LARGE_WITH_TWO,
        _LARGE_WITH_TWO,
        nodes=(LARGE_NODE,),
        pods=_LARGE_WITH_TWO_PODS,
    ),
    ModificationScenario(
        "extra: schedule pod on a Node that already has pods",
        _schedule_on_node_with_pods,
        {"large": ns(_LP)},
        _LARGE_WITH_TWO,
        nodes=(LARGE_NODE,),
        pods=(on(LARGE_POD, "large"),),
    ),
    ModificationScenario(
        "extra: add nodeInfo, then schedule pod on it",
        _add_node_then_schedule_on_it,
        _ONLY_SPECIAL,
        {"special": EMPTY, "other": ns(_P)},
        nodes=(SPECIAL_NODE,),
    ),
    ModificationScenario(
        "extra: remove nodeInfo with pods, then add it back with other pods",
        _remove_then_add_back_with_other_pods,
        {"special": ns(_P)},
        {"special": ns(_OP)},
        nodes=(SPECIAL_NODE,),
        pods=(on(SPECIAL_POD, "special"),),
    ),
    ModificationScenario(
        "extra: remove nodeInfo with pods",
        _remove_node_with_pods,
        {"special": EMPTY, **_LARGE_WITH_TWO},
        {"special": EMPTY},
        nodes=(SPECIAL_NODE, LARGE_NODE),
        pods=_LARGE_WITH_TWO_PODS,
    ),
    ModificationScenario(
        "extra: force add pod with required anti-affinity",
        _force_add_anti_affinity_pod,
        _ONLY_SPECIAL,
        {"special": ns(_AP)},
        nodes=(SPECIAL_NODE,),
    ),
    ModificationScenario(
        "extra: unscheduling a pod that is not on the Node is an error",
        _unschedule_missing_pod,
        {"special": ns(_P)},
        {"special": ns(_P)},
        nodes=(SPECIAL_NODE,),
        pods=(on(SPECIAL_POD, "special"),),
        error=PodNotFoundError,
    ),
    # CSI (CA: the CSINode of a NodeInfo joins and leaves the CSI snapshot with its node).
    ModificationScenario(
        "csi: add nodeInfo with CSINode",
        _add_node_info_with_csi_node,
        {},
        {"special": csi(EMPTY)},
    ),
    ModificationScenario(
        "csi: remove nodeInfo with CSINode",
        _remove_node_info,
        {"special": csi(EMPTY)},
        {},
        nodes=(SPECIAL_NODE,),
        csi_nodes=(SPECIAL_CSI,),
    ),
    ModificationScenario(
        "csi: add pod, then remove nodeInfo with CSINode",
        _add_pod_then_remove_node_with_csi,
        {"special": csi(EMPTY)},
        {},
        nodes=(SPECIAL_NODE,),
        csi_nodes=(SPECIAL_CSI,),
    ),
    ModificationScenario(
        "csi: remove nodeInfo, add it back with a larger volume limit, schedule on it",
        _remove_then_add_back_with_other_csi_node,
        {"special": csi(ns(POD_EA))},
        {"special": csi(ns(POD_EA, POD_EB))},
        nodes=(SPECIAL_NODE,),
        pods=(on(EBS_POD_A, "special"),),
        csi_nodes=(SPECIAL_CSI,),
    ),
    ModificationScenario(
        "csi: schedule pod on a node with CSINode (the copy keeps it)",
        _schedule_pod,
        {"special": csi(ns(POD_EA))},
        {"special": csi(ns(POD_EA, _P))},
        nodes=(SPECIAL_NODE,),
        pods=(on(EBS_POD_A, "special"),),
        csi_nodes=(SPECIAL_CSI,),
    ),
    ModificationScenario(
        "csi: scheduling a pod over the node's volume limit is an error",
        _schedule_over_volume_limit,
        {"special": csi(ns(POD_EA))},
        {"special": csi(ns(POD_EA))},
        nodes=(SPECIAL_NODE,),
        pods=(on(EBS_POD_A, "special"),),
        csi_nodes=(SPECIAL_CSI,),
        error=SchedulingError,
        scheduling_error=SchedulingErrorType.FAILING_PREDICATE,
        failing_predicate=("NodeVolumeLimits", ("node(s) exceed max volume count",)),
    ),
    ModificationScenario(
        "csi: adding a nodeInfo with another node's CSINode is an error",
        _add_node_info_with_foreign_csi_node,
        {"special": csi(EMPTY)},
        {"special": csi(EMPTY)},
        nodes=(SPECIAL_NODE,),
        csi_nodes=(SPECIAL_CSI,),
        error=CsiSnapshotError,
    ),
    ModificationScenario(
        "csi: adding a nodeInfo that exists, with a CSINode, is NodeAlreadyExistsError",
        _add_node_info_with_tracked_csi_node,
        {"special": csi(EMPTY)},
        {"special": csi(EMPTY)},
        nodes=(SPECIAL_NODE,),
        csi_nodes=(SPECIAL_CSI,),
        error=NodeAlreadyExistsError,
    ),
    ModificationScenario(
        "extra: check_predicates does not modify the snapshot",
        _check_predicates_only,
        _ONLY_SPECIAL,
        _ONLY_SPECIAL,
        nodes=(SPECIAL_NODE,),
    ),
)
"""The modification scenarios; each is run through every `ForkMode`."""
