"""The store conformance suite: one behaviour for every `ClusterSnapshotStore`.

Every check here builds a `schedsim.snapshot.PredicateSnapshot` over a fresh store from a
factory and drives it through its public API, so the same suite proves that a new store (the
delta store) behaves exactly like `schedsim.snapshot.BasicSnapshotStore`. It mirrors Cluster
Autoscaler's ``clustersnapshot/predicate/predicate_snapshot_test.go`` (``TestForking`` with
``validTestCases``, ``TestSetClusterState``, ``TestNode404``, ``TestNodeAlreadyExists``,
``TestPVCUsedByPods``, ``TestPVCClearAndFork``), which CA runs against its basic and delta
stores, plus schedsim's own promises: get/list return the stored objects (identity), writes
in a fork never touch the objects of the layer below, NodeInfos are listed in insertion order
and the any-node search goes round robin. CSI scenarios (``csi: ...``) check that a NodeInfo's
CSINode joins and leaves the CSI snapshot with its node through every fork mode, that copies of
a NodeInfo keep it, and that the NodeVolumeLimits limit it sets follows forks.

States are compared through a canonical dump (`dump_state`: node name -> sorted pod keys,
requested milli-CPU and memory, pod count), never by object identity, and every comparison
also runs `check_snapshot_consistency` (get/list/lister caches agree with each other).

Use it in one call (all failures are reported together)::

    from schedsim.testing import run_store_conformance

    def test_my_store_conforms() -> None:
        run_store_conformance(MyStore)

or as one pytest test per case (what ``tests/snapshot`` does)::

    from schedsim.testing import CONFORMANCE_CASES, ConformanceCase

    @pytest.mark.parametrize("case", CONFORMANCE_CASES, ids=lambda c: c.name)
    def test_conformance(case: ConformanceCase) -> None:
        case.run(MyStore)

A check signals a failure by raising `AssertionError` with a message naming the step.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable

import attrs

from schedsim.testing.snapshot_conformance_forks import FORK_MODES, ForkMode, run_modification
from schedsim.testing.snapshot_conformance_objects import make_node, make_pod, new_snapshot
from schedsim.testing.snapshot_conformance_promises import (
    check_add_node_info_identity,
    check_clear,
    check_csi_clear,
    check_csi_copies_keep_csi_node,
    check_csi_set_cluster_state,
    check_csi_volume_limit_in_fork,
    check_fork_isolation,
    check_fork_shares_objects,
    check_get_identity,
    check_list_identity,
    check_list_order,
    check_pod_identity,
    check_revert_restores_objects,
    check_round_robin,
    check_round_robin_across_revert,
    check_round_robin_cordoned,
    check_round_robin_nodes_added_in_fork,
)
from schedsim.testing.snapshot_conformance_scenarios import (
    MODIFICATION_SCENARIOS,
    ModificationScenario,
)
from schedsim.testing.snapshot_conformance_state import (
    NodeState,
    StoreFactory,
    check_snapshot_consistency,
    dump_state,
    failure_of,
    report_failures,
)
from schedsim.testing.snapshot_conformance_tables import (
    NODE_404_OPS,
    NODE_404_SITUATIONS,
    NODE_EXISTS_OPS,
    NODE_EXISTS_SITUATIONS,
    PVC_TABLE,
    check_node_404,
    check_node_exists,
    check_pvc_ephemeral,
    check_pvc_fork_revert,
    check_pvc_namespaced,
    check_pvc_node_removal,
    check_pvc_set_cluster_state,
    check_pvc_table,
    check_set_cluster_state_clears,
    check_set_cluster_state_drops_forks,
    check_set_cluster_state_duplicate_node,
    check_set_cluster_state_many,
    check_set_cluster_state_order_and_identity,
    check_set_cluster_state_replaces,
    check_set_cluster_state_skips_unknown,
    check_set_cluster_state_targets,
)

__all__ = [
    "CONFORMANCE_CASES",
    "FORK_MODES",
    "MODIFICATION_SCENARIOS",
    "ConformanceCase",
    "ForkMode",
    "ModificationScenario",
    "NodeState",
    "StoreFactory",
    "check_snapshot_consistency",
    "dump_state",
    "make_node",
    "make_pod",
    "new_snapshot",
    "run_store_conformance",
]

# --------------------------------------------------------------------------- the suite


@attrs.frozen
class ConformanceCase:
    """One self-contained check of a store.

    Attributes:
        name: unique, e.g. ``modification: schedule pod [fork & revert]``.
        check: runs the check on stores from the factory; raises AssertionError.
        invariant: what the check is a variant of (e.g. ``modification: schedule pod``,
            shared by its fork modes); `run_store_conformance` reports one failure per
            invariant. Empty: the name.
    """

    name: str
    check: Callable[[StoreFactory], None] = attrs.field(repr=False)
    invariant: str = ""

    def run(self, make_store: StoreFactory) -> None:
        """Run the check against stores built by ``make_store``."""
        self.check(make_store)


def _cases() -> tuple[ConformanceCase, ...]:
    out = [
        ConformanceCase(
            f"modification: {sc.name} [{mode.name}]",
            functools.partial(run_modification, sc, mode),
            f"modification: {sc.name}",
        )
        for sc in MODIFICATION_SCENARIOS
        for mode in FORK_MODES
    ]
    out += [
        ConformanceCase(
            f"node 404: {op} [{sit}]",
            functools.partial(check_node_404, op, sit),
            f"node 404: {op}",
        )
        for op in NODE_404_OPS
        for sit in NODE_404_SITUATIONS
    ]
    out += [
        ConformanceCase(
            f"node already exists: {op} [{sit}]",
            functools.partial(check_node_exists, op, sit),
            f"node already exists: {op}",
        )
        for op in NODE_EXISTS_OPS
        for sit in NODE_EXISTS_SITUATIONS
    ]
    out += [
        ConformanceCase(f"pvc used by pods: {desc}", functools.partial(check_pvc_table, desc))
        for desc in PVC_TABLE
    ]
    singles: list[tuple[str, Callable[[StoreFactory], None]]] = [
        (
            "set_cluster_state: pods go to nodeName, else nominatedNodeName",
            check_set_cluster_state_targets,
        ),
        (
            "set_cluster_state: pods of unknown nodes are skipped and returned",
            check_set_cluster_state_skips_unknown,
        ),
        ("set_cluster_state: drops all forks", check_set_cluster_state_drops_forks),
        ("set_cluster_state: clear in base and in a fork", check_set_cluster_state_clears),
        ("set_cluster_state: replaces the previous state", check_set_cluster_state_replaces),
        ("set_cluster_state: pod order and identity", check_set_cluster_state_order_and_identity),
        ("set_cluster_state: duplicate node names", check_set_cluster_state_duplicate_node),
        ("set_cluster_state: many nodes and pods, fork, clear", check_set_cluster_state_many),
        ("pvc used by pods: fork, revert, commit", check_pvc_fork_revert),
        ("pvc used by pods: set_cluster_state", check_pvc_set_cluster_state),
        ("pvc used by pods: node removal and unschedule", check_pvc_node_removal),
        ("pvc used by pods: namespaced keys", check_pvc_namespaced),
        ("pvc used by pods: ephemeral volumes", check_pvc_ephemeral),
        ("identity: get_node_info returns the stored object", check_get_identity),
        ("identity: list_node_infos returns the stored objects", check_list_identity),
        ("identity: add_node_info stores the caller's objects", check_add_node_info_identity),
        ("identity: pods are stored as given", check_pod_identity),
        ("identity: a fork shares Node and PodInfo objects", check_fork_shares_objects),
        ("identity: revert restores the stored objects", check_revert_restores_objects),
        ("isolation: writes in a fork leave lower layers' objects alone", check_fork_isolation),
        ("order: NodeInfos are listed in insertion order", check_list_order),
        ("round robin: n2, n3, n4, n1, ...", check_round_robin),
        ("round robin: cordoned nodes are skipped", check_round_robin_cordoned),
        ("round robin: nodes added in a fork", check_round_robin_nodes_added_in_fork),
        ("round robin: continues across revert", check_round_robin_across_revert),
        ("clear: empties and drops forks", check_clear),
        ("csi: set_cluster_state attaches CSINodes by node name", check_csi_set_cluster_state),
        ("csi: NodeInfo copies keep the CSINode", check_csi_copies_keep_csi_node),
        ("csi: clear and set_cluster_state drop CSINodes", check_csi_clear),
        ("csi: the volume limit follows forks", check_csi_volume_limit_in_fork),
    ]
    out += [ConformanceCase(name, fn) for name, fn in singles]
    return tuple(out)


CONFORMANCE_CASES: tuple[ConformanceCase, ...] = _cases()
"""Every check of the suite: each modification scenario in each fork mode, then the
node-404, node-exists, PVC, set_cluster_state, identity, isolation, order, round-robin and CSI
checks."""


def run_store_conformance(
    make_store: StoreFactory, cases: Iterable[ConformanceCase] | None = None
) -> None:
    """Run the conformance cases (default: `CONFORMANCE_CASES`) on stores from
    ``make_store`` (e.g. the store class).

    Raises:
        AssertionError: one ``- `` item per broken invariant: its first failing case and
            message (more lines indented), and how many other variants of it (fork modes,
            situations) failed too.
    """
    failed: dict[str, list[str]] = {}
    for case in CONFORMANCE_CASES if cases is None else cases:
        message = failure_of(case.name, case.run, make_store)
        if message is not None:
            failed.setdefault(case.invariant or case.name, []).append(message)
    report_failures("store", failed)
