"""Test helpers that ship with schedsim, for schedsim's own tests, for plugin authors
(`run_plugin`, `run_plugin_on_nodes`, `snapshot_from_manifests`, `profile_from_config`,
`make_node`, `make_pod`)
and for anyone writing a `schedsim.snapshot.ClusterSnapshotStore` (the conformance suite).

`schedsim.testing.snapshot_conformance` is the store conformance suite: every store must
behave like `schedsim.snapshot.BasicSnapshotStore` under every scenario, through every
fork/commit/revert combination (Cluster Autoscaler's ``predicate_snapshot_test.go`` does the
same for its basic and delta stores). `schedsim.testing.dra_conformance` adds the DRA
scenarios (claims allocated by the DynamicResources plugin, slices, reservations) for every
store and both `schedsim.snapshot.dra.DraSnapshot` designs.
"""

from schedsim.framework.profile import profile_from_config
from schedsim.testing.dra_conformance import (
    DRA_CONFORMANCE_CASES,
    DraConformanceCase,
    check_dra_consistency,
    dump_dra_state,
    run_dra_conformance,
)
from schedsim.testing.plugins import (
    PluginNodesRun,
    PluginRun,
    chosen_devices,
    run_plugin,
    run_plugin_on_nodes,
    snapshot_from_manifests,
)
from schedsim.testing.snapshot_conformance import (
    CONFORMANCE_CASES,
    FORK_MODES,
    MODIFICATION_SCENARIOS,
    ConformanceCase,
    ForkMode,
    ModificationScenario,
    NodeState,
    StoreFactory,
    check_snapshot_consistency,
    dump_state,
    make_node,
    make_pod,
    new_snapshot,
    run_store_conformance,
)

__all__ = [
    "CONFORMANCE_CASES",
    "DRA_CONFORMANCE_CASES",
    "FORK_MODES",
    "MODIFICATION_SCENARIOS",
    "ConformanceCase",
    "DraConformanceCase",
    "ForkMode",
    "ModificationScenario",
    "NodeState",
    "PluginNodesRun",
    "PluginRun",
    "StoreFactory",
    "check_dra_consistency",
    "check_snapshot_consistency",
    "chosen_devices",
    "dump_dra_state",
    "dump_state",
    "make_node",
    "make_pod",
    "new_snapshot",
    "profile_from_config",
    "run_dra_conformance",
    "run_plugin",
    "run_plugin_on_nodes",
    "run_store_conformance",
    "snapshot_from_manifests",
]
