"""DRA scenarios for the store conformance suite: claims and slices through every fork mode.

Every scenario builds a `schedsim.snapshot.PredicateSnapshot` with the default profile (so the
real DynamicResources plugin allocates devices in Filter/Reserve) over a fresh store, gives it
a cluster with ResourceSlices, DeviceClasses and ResourceClaims through ``set_cluster_state``,
runs one operation and compares the result through two canonical dumps: the nodes and pods
(`schedsim.testing.snapshot_conformance.dump_state`) and the DRA state (`dump_dra_state`: per
claim its allocated devices, the node its allocation is for and its ``reservedFor``; per node
the names of its local slices). Every comparison also runs `check_dra_consistency`: NodeInfos'
``local_resource_slices`` and PodInfos' ``needed_resource_claims`` agree with the DRA snapshot,
and ``reservedFor`` entries name exactly the stored pods using each claim.

The scenarios mirror Cluster Autoscaler's ``predicate_snapshot_test.go`` DRA cases (``TestForking``
``validTestCases`` whose names start with "add nodeInfo with LocalResourceSlices", "schedule pod
with claims", "unschedule pod with claims", ...), CA's ``dynamicresources/snapshot`` semantics
(``ReservePodClaims``, ``UnreservePodClaims``, ``RemovePodOwnedClaims``) and the Kubernetes
behaviour they emulate; each scenario's ``description`` says which. Every scenario runs in every
`DRA_FORK_MODES` mode (no fork; fork; fork & revert; fork & commit; nested forks with a node
that has its own slices added in the inner fork, as CA's ``TestForking`` does), with the DRA
snapshot on patch sets (``clone_on_fork=False``) or on clones (``clone_on_fork=True``). A
failing operation must leave everything exactly as it was (schedsim's mutations are
transactional; CA's are not): the claim objects, the slices, the NodeInfos and their PodInfos.

Use it like the main suite::

    from schedsim.testing.dra_conformance import run_dra_conformance

    def test_my_store_conforms_with_dra() -> None:
        run_dra_conformance(MyStore)                      # patch-set DRA snapshot
        run_dra_conformance(MyStore, clone_on_fork=True)  # cloning DRA snapshot

A check signals a failure by raising `AssertionError` with a message naming the step.

The pieces live in one module each: `dra_conformance_state` (dumps and checks),
`dra_conformance_objects` (the cluster), `dra_conformance_operations` and
`dra_conformance_scenarios` (the scenarios), `dra_conformance_forks` (the fork modes) and
`dra_conformance_cluster_state` (the ``set_cluster_state`` checks); this module assembles
the cases and runs them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable

import attrs

from schedsim.testing.dra_conformance_cluster_state import (
    check_clear,
    check_set_cluster_state,
    check_set_cluster_state_drops_forks,
    check_set_cluster_state_forked_dra,
    check_set_cluster_state_missing_claim,
)
from schedsim.testing.dra_conformance_forks import (
    DRA_FORK_MODES,
    DraForkMode,
    new_dra_snapshot,
    run_scenario,
)
from schedsim.testing.dra_conformance_objects import GPU_CLASS, make_dra_pod, make_gpu_claim
from schedsim.testing.dra_conformance_operations import DraScenario
from schedsim.testing.dra_conformance_scenarios import DRA_SCENARIOS
from schedsim.testing.dra_conformance_state import (
    ClaimState,
    DraState,
    check_dra_consistency,
    dump_dra_state,
)
from schedsim.testing.snapshot_conformance import StoreFactory
from schedsim.testing.snapshot_conformance_state import failure_of, report_failures

__all__ = [
    "DRA_CONFORMANCE_CASES",
    "DRA_FORK_MODES",
    "DRA_SCENARIOS",
    "GPU_CLASS",
    "ClaimState",
    "DraConformanceCase",
    "DraForkMode",
    "DraScenario",
    "DraState",
    "check_dra_consistency",
    "dump_dra_state",
    "make_dra_pod",
    "make_gpu_claim",
    "new_dra_snapshot",
    "run_dra_conformance",
]


# --------------------------------------------------------------------------- the suite


@attrs.frozen
class DraConformanceCase:
    """One self-contained DRA check of a store.

    Attributes:
        name: unique, e.g. ``dra: schedule pod with pod-owned and shared claims [fork & revert]``.
        check: runs the check on stores from the factory with a DRA snapshot of the given
            design (``clone_on_fork``); raises AssertionError.
    """

    name: str
    check: Callable[[StoreFactory, bool], None]

    def run(self, make_store: StoreFactory, clone_on_fork: bool = False) -> None:
        """Run the check against stores built by ``make_store``."""
        self.check(make_store, clone_on_fork)


def _cases() -> tuple[DraConformanceCase, ...]:
    out = [
        DraConformanceCase(
            f"dra: {sc.name} [{mode.name}]", functools.partial(run_scenario, sc, mode)
        )
        for sc in DRA_SCENARIOS
        for mode in DRA_FORK_MODES
    ]
    singles: list[tuple[str, Callable[[StoreFactory, bool], None]]] = [
        (
            "dra: set_cluster_state puts slices on NodeInfos and claims on PodInfos",
            check_set_cluster_state,
        ),
        (
            "dra: set_cluster_state with a missing claim changes nothing",
            check_set_cluster_state_missing_claim,
        ),
        ("dra: set_cluster_state drops forks", check_set_cluster_state_drops_forks),
        (
            "dra: set_cluster_state flattens a forked DRA snapshot",
            check_set_cluster_state_forked_dra,
        ),
        ("dra: clear empties the DRA state", check_clear),
    ]
    out += [DraConformanceCase(name, fn) for name, fn in singles]
    return tuple(out)


DRA_CONFORMANCE_CASES: tuple[DraConformanceCase, ...] = _cases()
"""Every DRA check: each scenario in each fork mode, then the set_cluster_state and clear
checks."""


def run_dra_conformance(
    make_store: StoreFactory,
    *,
    clone_on_fork: bool = False,
    cases: Iterable[DraConformanceCase] | None = None,
) -> None:
    """Run the DRA cases (default: `DRA_CONFORMANCE_CASES`) against stores built by
    ``make_store``.

    Args:
        make_store: builds a fresh, empty store (e.g. the store class).
        clone_on_fork: the DRA snapshot design (see `DraSnapshot`).
        cases: which cases (all by default).

    Raises:
        AssertionError: one ``- `` item per broken invariant (a scenario in all its fork
            modes is one), with its first failing case and how many variants failed too.
    """
    failed: dict[str, list[str]] = {}
    for case in DRA_CONFORMANCE_CASES if cases is None else cases:
        message = failure_of(case.name, case.run, make_store, clone_on_fork)
        if message is not None:
            invariant = case.name.split(" [", 1)[0]  # the scenario, whatever the fork mode
            failed.setdefault(invariant, []).append(message)
    report_failures("DRA", failed)
