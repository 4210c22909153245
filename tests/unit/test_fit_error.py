"""``str(FitError)`` is kube-scheduler's ``FitError.Error()``: the table is upstream's
``TestFitError_Error`` (pkg/scheduler/framework/types_test.go), case names included, plus
``ErrNoNodesAvailable`` for an empty cluster and a message from a real snapshot."""

from __future__ import annotations

import pytest

from schedsim.framework.fit_error import Diagnosis, FitError
from schedsim.framework.status import Code, Status
from schedsim.snapshot import DeltaSnapshotStore
from schedsim.testing import make_node, make_pod, new_snapshot

U = Code.Unschedulable
PRE = "Node(s) failed PreFilter plugin FalsePreFilter"
F1 = "Node(s) failed Filter plugin FalseFilter-1"
F2 = "Node(s) failed Filter plugin FalseFilter-2"
POST = "Error running PostFilter plugin FailedPostFilter"


def _nodes(*reasons: str) -> dict[str, Status]:
    return {f"node{i + 1}": Status(U, (r,)) for i, r in enumerate(reasons)}


CASES = {
    "nodes failed Prefilter plugin": (
        FitError(3, Diagnosis(_nodes(PRE, PRE, PRE), pre_filter_status=Status(U, (PRE,)))),
        "0/3 nodes are available: Node(s) failed PreFilter plugin FalsePreFilter.",
    ),
    "nodes failed Prefilter plugin and the preemption also failed": (
        FitError(
            3,
            Diagnosis(
                _nodes(PRE, PRE, PRE), pre_filter_status=Status(U, (PRE,)), post_filter_msg=POST
            ),
        ),
        "0/3 nodes are available: Node(s) failed PreFilter plugin FalsePreFilter. "
        "Error running PostFilter plugin FailedPostFilter",
    ),
    "nodes failed one Filter plugin with an empty PostFilterMsg": (
        FitError(3, Diagnosis(_nodes(F1, F1, F1))),
        "0/3 nodes are available: 3 Node(s) failed Filter plugin FalseFilter-1.",
    ),
    "nodes failed one Filter plugin with a non-empty PostFilterMsg": (
        FitError(3, Diagnosis(_nodes(F1, F1, F1), post_filter_msg=POST)),
        "0/3 nodes are available: 3 Node(s) failed Filter plugin FalseFilter-1. "
        "Error running PostFilter plugin FailedPostFilter",
    ),
    "nodes failed two Filter plugins with an empty PostFilterMsg": (
        FitError(3, Diagnosis(_nodes(F1, F1, F2))),
        "0/3 nodes are available: 1 Node(s) failed Filter plugin FalseFilter-2, "
        "2 Node(s) failed Filter plugin FalseFilter-1.",
    ),
    "nodes failed two Filter plugins with a non-empty PostFilterMsg": (
        FitError(3, Diagnosis(_nodes(F1, F1, F2), post_filter_msg=POST)),
        "0/3 nodes are available: 1 Node(s) failed Filter plugin FalseFilter-2, "
        "2 Node(s) failed Filter plugin FalseFilter-1. "
        "Error running PostFilter plugin FailedPostFilter",
    ),
    "failed to Permit on node": (
        FitError(1, Diagnosis(_nodes("Node failed Permit plugin Permit-1"))),
        "0/1 nodes are available: 1 Node failed Permit plugin Permit-1.",
    ),
    "failed to Reserve on node": (
        FitError(1, Diagnosis(_nodes("Node failed Reserve plugin Reserve-1"))),
        "0/1 nodes are available: 1 Node failed Reserve plugin Reserve-1.",
    ),
    "no nodes (ErrNoNodesAvailable)": (
        FitError(0, Diagnosis()),
        "no nodes available to schedule pods",
    ),
    "absent nodes count with the absent nodes' status": (
        FitError(
            3,
            Diagnosis(
                _nodes(F1),
                absent_nodes_status=Status(Code.UnschedulableAndUnresolvable, (F2,)),
                absent_nodes=2,
            ),
        ),
        "0/3 nodes are available: 1 Node(s) failed Filter plugin FalseFilter-1, "
        "2 Node(s) failed Filter plugin FalseFilter-2.",
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_str_is_the_upstream_message(case: str) -> None:
    fit, want = CASES[case]
    assert str(fit) == want
    assert fit.message == want
    assert f"{fit}" == want


def test_a_snapshot_diagnosis_prints_as_kube_scheduler_words() -> None:
    """What `PredicateSnapshot.diagnose` returns prints as kube-scheduler's event message
    (NodeResourcesFit's ``Insufficient cpu``), not as a repr."""
    snap = new_snapshot(DeltaSnapshotStore)
    snap.set_cluster_state([make_node("a", cpu="1"), make_node("b", cpu="1")], [])
    fit = snap.diagnose(make_pod("big", cpu="2"))
    assert str(fit) == "0/2 nodes are available: 2 Insufficient cpu."
    assert repr(fit).startswith("FitError(num_all_nodes=2")
