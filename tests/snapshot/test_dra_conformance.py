"""The DRA scenarios of the store conformance suite (`schedsim.testing.dra_conformance`, CA
``predicate_snapshot_test.go`` DRA cases) for both stores and both DRA snapshot designs, and a
differential test: random schedule/unschedule/fork/commit/revert sequences of pods with claims
give the same DRA state on all four combinations.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedsim.api.core import Pod
from schedsim.engine import STORES
from schedsim.snapshot import (
    BasicSnapshotStore,
    ClusterSnapshotStore,
    DeltaSnapshotStore,
    PredicateSnapshot,
    SchedulingError,
)
from schedsim.snapshot.dra import DraSnapshot
from schedsim.testing import dump_state
from schedsim.testing.dra_conformance import (
    DRA_CONFORMANCE_CASES,
    DRA_SCENARIOS,
    DraConformanceCase,
    check_dra_consistency,
    dump_dra_state,
    make_dra_pod,
    make_gpu_claim,
    new_dra_snapshot,
    run_dra_conformance,
)
from schedsim.testing.dra_conformance_objects import (
    N1,
    N2,
    P1,
    P1_GPU,
    P2,
    P3,
    P3_GPU,
    PLAIN,
    S1,
    S2,
    SHARED,
)

DESIGNS = {"patchset": False, "clone": True}


@pytest.fixture(params=sorted(DESIGNS))
def clone_on_fork(request: pytest.FixtureRequest) -> bool:
    return DESIGNS[request.param]


@pytest.mark.parametrize("case", DRA_CONFORMANCE_CASES, ids=lambda c: c.name)
def test_dra_conformance(
    case: DraConformanceCase, store: Callable[[], ClusterSnapshotStore], clone_on_fork: bool
) -> None:
    """One DRA case (see its name) for one store and one DRA snapshot design."""
    case.run(store, clone_on_fork)


def test_dra_case_names_are_unique() -> None:
    names = [c.name for c in DRA_CONFORMANCE_CASES]
    assert len(names) == len(set(names))


def test_every_scenario_names_what_it_mirrors() -> None:
    for sc in DRA_SCENARIOS:
        assert "CA " in sc.description or "Kubernetes" in sc.description, sc.name


def test_run_dra_conformance_in_one_call(clone_on_fork: bool) -> None:
    """The one-call entry point passes for the delta store (base and fork & revert modes;
    the parametrized test above runs everything)."""
    cases = [c for c in DRA_CONFORMANCE_CASES if c.name.endswith(("[base]", "[fork & revert]"))]
    assert len(cases) == 2 * len(DRA_SCENARIOS)
    run_dra_conformance(DeltaSnapshotStore, clone_on_fork=clone_on_fork, cases=cases)


class _RevertIsNoop(BasicSnapshotStore):
    def revert(self) -> None:
        pass


def _no_dealloc_on_unreserve(self: DraSnapshot, pod: Pod) -> None:
    # reservation removed, allocation kept: CA before UnreservePodClaims deallocated
    for claim in self.pod_claims(pod):
        kept = tuple(r for r in claim.status.reserved_for if r.uid != pod.uid)
        self.update_claim(attrs.evolve(claim, status=attrs.evolve(claim.status, reserved_for=kept)))


@contextmanager
def _non_transactional(self: PredicateSnapshot) -> Iterator[None]:
    yield  # CA: a failing AddNodeInfo/SchedulePod leaves its DRA changes behind


def _keep_owned_claims(self: DraSnapshot, pod: Pod) -> None:
    pass


@pytest.mark.parametrize(
    ("defect", "failing"),
    [
        (
            "store revert is a no-op",
            "schedule pod with pod-owned and shared claims [fork & revert]",
        ),
        (
            "unreserve keeps allocations",
            "unschedule pod with claims, shared claim still in use [base]",
        ),
        (
            "mutations are not transactional",
            "error: add node with an unallocated pod-owned claim [base]",
        ),
        ("node removal keeps pod-owned claims", "remove node with slices and claims [fork]"),
    ],
)
def test_dra_suite_catches_defects(
    defect: str, failing: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The suite is not vacuous: each defect fails the case that covers it (and the same case
    passes without the defect, in the parametrized test above)."""
    store: Callable[[], ClusterSnapshotStore] = DeltaSnapshotStore
    if defect == "store revert is a no-op":
        store = _RevertIsNoop
    elif defect == "unreserve keeps allocations":
        monkeypatch.setattr(DraSnapshot, "unreserve_pod_claims", _no_dealloc_on_unreserve)
    elif defect == "mutations are not transactional":
        monkeypatch.setattr(PredicateSnapshot, "_dra_transaction", _non_transactional)
    else:
        monkeypatch.setattr(DraSnapshot, "remove_pod_owned_claims", _keep_owned_claims)
    (case,) = [c for c in DRA_CONFORMANCE_CASES if c.name == f"dra: {failing}"]
    with pytest.raises(AssertionError, match="DRA conformance case"):
        run_dra_conformance(store, cases=[case])


# --------------------------------------------------------------------------- differential

_NODES = (N1, N2, PLAIN)
_PODS = (P1, P2, P3, make_dra_pod("p4", owned=2), make_dra_pod("p5", owned=1, shared=["shared"]))
_CLAIMS = (
    P1_GPU,
    P3_GPU,
    SHARED,
    make_gpu_claim("p4-gpu-0", owner=_PODS[3], count=2),
    make_gpu_claim("p5-gpu-0", owner=_PODS[4]),
)
_COMBOS = [(store, design) for store in sorted(STORES) for design in sorted(DESIGNS)]

_op = st.one_of(
    st.tuples(
        st.just("schedule"),
        st.integers(0, len(_PODS) - 1),
        st.sampled_from(["", *(n.name for n in _NODES)]),
    ),
    st.tuples(st.just("unschedule"), st.integers(0, len(_PODS) - 1), st.just("")),
    st.tuples(st.sampled_from(["fork", "commit", "revert"]), st.just(0), st.just("")),
)


def _where(s: PredicateSnapshot, pod: Pod) -> str | None:
    for ni in s.list_node_infos():
        if any(p.pod.key == pod.key for p in ni.pods):
            assert ni.node is not None
            return ni.node.name
    return None


def _apply(s: PredicateSnapshot, op: tuple[str, int, str]) -> str:
    """Run one step; returns its outcome (the node chosen, or the error kind)."""
    kind, i, node = op
    if kind in ("fork", "commit", "revert"):
        getattr(s, kind)()
        return kind
    pod = _PODS[i]
    where = _where(s, pod)
    try:
        if kind == "unschedule":
            if where is None:
                return "not scheduled"
            s.unschedule_pod(pod.namespace, pod.name, where)
            return f"unscheduled from {where}"
        if where is not None:
            return f"already on {where}"
        if node:
            s.schedule_pod(pod, node)
            return node
        return s.schedule_pod_on_any_node_matching(pod)
    except SchedulingError as e:
        return f"{e.type.name}: {e}"


def _view(s: PredicateSnapshot) -> object:
    return (
        dump_state(s),
        sorted(((c.key, c) for c in s.dra_snapshot.list_resource_claims()), key=lambda t: t[0]),
        dump_dra_state(s),
    )


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(_op, min_size=1, max_size=14))
def test_dra_designs_and_stores_agree(ops: list[tuple[str, int, str]]) -> None:
    """Random schedule/unschedule/fork/commit/revert sequences of pods with claims: every
    step has the same outcome, and leaves the same nodes, pods and claim objects, on both
    stores with both DRA snapshot designs; every state is consistent."""
    snaps = [
        new_dra_snapshot(
            STORES[store], _NODES, (), _CLAIMS, (S1, S2), clone_on_fork=DESIGNS[design]
        )
        for store, design in _COMBOS
    ]
    for step, op in enumerate(ops):
        outcomes = [_apply(s, op) for s in snaps]
        assert len(set(outcomes)) == 1, (
            f"step {step} {op}: {dict(zip(_COMBOS, outcomes, strict=True))}"
        )
        views = [_view(s) for s in snaps]
        for combo, view in zip(_COMBOS[1:], views[1:], strict=True):
            assert view == views[0], f"step {step} {op}: {combo} differs from {_COMBOS[0]}"
        for s in snaps:
            check_dra_consistency(s)
