"""Failed mutations leave the snapshot exactly as it was (CA's are not transactional; ours
are), for both stores and in every fork state: same contents, same NodeInfo objects (nothing
was copied on write), same cached node list, and forks still revert/commit to the same states.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from schedsim.snapshot import (
    ClusterSnapshotStore,
    NodeInfo,
    PredicateSnapshot,
)
from schedsim.testing import dump_state, make_node, make_pod, new_snapshot

N1, N2, GONE = make_node("n1", cpu="1"), make_node("n2", cpu="1"), make_node("gone")
BOUND = make_pod("bound", cpu="500m", node_name="n1", pvcs=["data"])
HUGE = make_pod("huge", cpu="64")
SMALL = make_pod("small", cpu="100m")


def _base(s: PredicateSnapshot) -> None:
    s.set_cluster_state([N1, N2, GONE], [BOUND])


def _forked(s: PredicateSnapshot) -> None:
    _base(s)
    s.fork()
    s.force_add_pod(SMALL, "n2")


def _forked_twice(s: PredicateSnapshot) -> None:
    _forked(s)
    s.fork()


def _node_removed_in_fork(s: PredicateSnapshot) -> None:
    _forked(s)
    s.fork()
    s.remove_node_info("gone")


STATES = {
    "base": _base,
    "forked": _forked,
    "forked twice": _forked_twice,
    "node removed in fork": _node_removed_in_fork,
}

FAILING: dict[str, tuple[Callable[[PredicateSnapshot], Any], type[Exception]]] = {
    "add existing node": (lambda s: s.add_node_info(NodeInfo(N1)), Exception),
    "set_cluster_state with duplicate nodes": (
        lambda s: s.set_cluster_state([N1, N1], []),
        Exception,
    ),
    "remove missing node": (lambda s: s.remove_node_info("nope"), LookupError),
    "remove node removed in this fork": (lambda s: s.remove_node_info("gone"), LookupError),
    "force add pod to missing node": (lambda s: s.force_add_pod(SMALL, "nope"), LookupError),
    "force remove missing pod": (lambda s: s.force_remove_pod("default", "x", "n1"), LookupError),
    "force remove pod from missing node": (
        lambda s: s.force_remove_pod("default", "bound", "nope"),
        LookupError,
    ),
    "schedule pod that does not fit": (lambda s: s.schedule_pod(HUGE, "n1"), Exception),
    "schedule pod on missing node": (lambda s: s.schedule_pod(SMALL, "nope"), Exception),
    "schedule pod anywhere, fits nowhere": (
        lambda s: s.schedule_pod_on_any_node_matching(HUGE),
        Exception,
    ),
    "unschedule missing pod": (lambda s: s.unschedule_pod("default", "x", "n2"), LookupError),
    "check predicates that fail": (lambda s: s.check_predicates(HUGE, "n2"), Exception),
}


def _view(s: PredicateSnapshot) -> tuple[Any, ...]:
    nodes = s.list_node_infos()
    return (
        dump_state(s),
        nodes,
        tuple(nodes),
        tuple(tuple(ni.pods) for ni in nodes),
        s.storage_infos().is_pvc_used_by_pods("default/data"),
    )


# "gone" is only missing where it was removed inside the fork.
CASES = [
    (op, state)
    for op in FAILING
    for state in STATES
    if op != "remove node removed in this fork" or state == "node removed in fork"
]


@pytest.mark.parametrize(("op", "state"), CASES)
def test_failed_mutation_changes_nothing(
    store: Callable[[], ClusterSnapshotStore], state: str, op: str
) -> None:
    """The call raises; the snapshot's contents, objects and caches are as before, and the
    fork stack still reverts to the states it had."""
    s = new_snapshot(store)
    STATES[state](s)
    before = _view(s)
    depth_states = []
    call, exc = FAILING[op]
    with pytest.raises(exc):
        call(s)
    after = _view(s)
    assert after[0] == before[0]  # contents
    assert after[1] is before[1]  # the cached list itself
    assert all(a is b for a, b in zip(after[2], before[2], strict=True))  # no copy-on-write
    assert after[3] == before[3]
    assert after[4] == before[4]
    # The layers below are intact too.
    while s.store.depth:  # type: ignore[attr-defined]
        s.revert()
        depth_states.append(dump_state(s))
    reference = new_snapshot(store)
    STATES[state](reference)
    expected = []
    while reference.store.depth:  # type: ignore[attr-defined]
        reference.revert()
        expected.append(dump_state(reference))
    assert depth_states == expected
