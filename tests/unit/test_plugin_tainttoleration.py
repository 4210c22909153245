"""TaintToleration plugin Filter: cases from upstream taint_toleration_test.go
(TestTaintTolerationFilter).

The reason is ``node(s) had untolerated taint(s)`` whatever the taint: kubernetes#134740
(cherry-picked to release-1.34 as #135023) dropped the ``{key: value}`` from the reason and
changed every wantStatus of TestTaintTolerationFilter to that generic string."""

from __future__ import annotations

from typing import Any

import pytest

from schedsim.api.core import Node, Pod
from schedsim.framework import Code, CycleState, Handle, Status
from schedsim.snapshot import NodeInfo
from schedsim_plugins.tainttoleration import TaintToleration


def _untolerated(key: str, value: str) -> Status:
    """The Status upstream expects for the untolerated taint ``key=value``: the taint is only
    logged, so ``key`` and ``value`` name the case and do not enter the reason."""
    del key, value
    return Status(
        Code.UnschedulableAndUnresolvable,
        ("node(s) had untolerated taint(s)",),
        "TaintToleration",
    )


def _pod(tolerations: list[dict[str, Any]]) -> Pod:
    return Pod.from_manifest({"metadata": {"name": "pod1"}, "spec": {"tolerations": tolerations}})


def _node(taints: list[dict[str, Any]]) -> Node:
    return Node.from_manifest({"metadata": {"name": "nodeA"}, "spec": {"taints": taints}})


CASES = [
    pytest.param(
        [],
        [{"key": "dedicated", "value": "user1", "effect": "NoSchedule"}],
        _untolerated("dedicated", "user1"),
        id="A pod having no tolerations can't be scheduled onto a node with nonempty taints",
    ),
    pytest.param(
        [{"key": "dedicated", "value": "user1", "effect": "NoSchedule"}],
        [{"key": "dedicated", "value": "user1", "effect": "NoSchedule"}],
        None,
        id="A pod which can be scheduled on a dedicated node assigned to user1 with effect "
        "NoSchedule",
    ),
    pytest.param(
        [{"key": "dedicated", "operator": "Equal", "value": "user2", "effect": "NoSchedule"}],
        [{"key": "dedicated", "value": "user1", "effect": "NoSchedule"}],
        _untolerated("dedicated", "user1"),
        id="A pod which can't be scheduled on a dedicated node assigned to user2 with effect "
        "NoSchedule",
    ),
    pytest.param(
        [{"key": "foo", "operator": "Exists", "effect": "NoSchedule"}],
        [{"key": "foo", "value": "bar", "effect": "NoSchedule"}],
        None,
        id="A pod can be scheduled onto the node, with a toleration uses operator Exists that "
        "tolerates the taints on the node",
    ),
    pytest.param(
        [
            {"key": "dedicated", "operator": "Equal", "value": "user2", "effect": "NoSchedule"},
            {"key": "foo", "operator": "Exists", "effect": "NoSchedule"},
        ],
        [
            {"key": "dedicated", "value": "user2", "effect": "NoSchedule"},
            {"key": "foo", "value": "bar", "effect": "NoSchedule"},
        ],
        None,
        id="A pod has multiple tolerations, node has multiple taints, all the taints are "
        "tolerated, pod can be scheduled onto the node",
    ),
    pytest.param(
        [{"key": "foo", "operator": "Equal", "value": "bar", "effect": "PreferNoSchedule"}],
        [{"key": "foo", "value": "bar", "effect": "NoSchedule"}],
        _untolerated("foo", "bar"),
        id="A pod has a toleration that keys and values match the taint on the node, but "
        "(non-empty) effect doesn't match, can't be scheduled onto the node",
    ),
    pytest.param(
        [{"key": "foo", "operator": "Equal", "value": "bar"}],
        [{"key": "foo", "value": "bar", "effect": "NoSchedule"}],
        None,
        id="The pod has a toleration that keys and values match the taint on the node, the "
        "effect of toleration is empty, and the effect of taint is NoSchedule. Pod can be "
        "scheduled onto the node",
    ),
    pytest.param(
        [{"key": "dedicated", "operator": "Equal", "value": "user2", "effect": "NoSchedule"}],
        [{"key": "dedicated", "value": "user1", "effect": "PreferNoSchedule"}],
        None,
        id="The pod has a toleration that key and value don't match the taint on the node, but "
        "the effect of taint on node is PreferNoSchedule. Pod can be scheduled onto the node",
    ),
    pytest.param(
        [],
        [{"key": "dedicated", "value": "user1", "effect": "PreferNoSchedule"}],
        None,
        id="The pod has no toleration, but the effect of taint on node is PreferNoSchedule. Pod "
        "can be scheduled onto the node",
    ),
    # Not upstream table cases.
    pytest.param(
        [{"key": "a", "operator": "Exists"}],
        [
            {"key": "a", "value": "1", "effect": "NoSchedule"},
            {"key": "b", "value": "2", "effect": "PreferNoSchedule"},
            {"key": "c", "value": "3", "effect": "NoExecute"},
            {"key": "d", "value": "4", "effect": "NoSchedule"},
        ],
        _untolerated("c", "3"),
        id="extra: the first untolerated NoSchedule/NoExecute taint in node order is reported",
    ),
    pytest.param(
        [{"operator": "Exists"}],
        [{"key": "x", "value": "y", "effect": "NoExecute"}],
        None,
        id="extra: an empty-key Exists toleration tolerates everything",
    ),
    pytest.param(
        [],
        [{"key": "k", "effect": "NoSchedule"}],
        _untolerated("k", ""),
        id="extra: a taint without value gets the same generic reason",
    ),
]


@pytest.mark.parametrize(("tolerations", "taints", "want"), CASES)
def test_taint_toleration_filter(
    tolerations: list[dict[str, Any]], taints: list[dict[str, Any]], want: Status | None
) -> None:
    """TestTaintTolerationFilter."""
    p = TaintToleration({}, Handle())
    assert p.schedsim_filter(CycleState(), _pod(tolerations), NodeInfo(_node(taints))) == want


def test_rejection_status_is_reused() -> None:
    """Rejecting twice on the same taint returns the same Status object (no allocation)."""
    p = TaintToleration({}, Handle())
    ni = NodeInfo(_node([{"key": "dedicated", "value": "user1", "effect": "NoSchedule"}]))
    first = p.schedsim_filter(CycleState(), _pod([]), ni)
    assert first is p.schedsim_filter(CycleState(), _pod([]), ni)


def test_reason_names_no_taint() -> None:
    """kubernetes#134740 / release-1.34 #135023: the reason carries neither key nor value, so
    nodes rejected for different taints share one reason (and one FitError count)."""
    p = TaintToleration({}, Handle())
    a = p.schedsim_filter(
        CycleState(),
        _pod([]),
        NodeInfo(_node([{"key": "a", "value": "1", "effect": "NoSchedule"}])),
    )
    b = p.schedsim_filter(
        CycleState(), _pod([]), NodeInfo(_node([{"key": "b", "value": "2", "effect": "NoExecute"}]))
    )
    assert a is not None and b is not None
    assert a.reasons == b.reasons == ("node(s) had untolerated taint(s)",)


def test_rejects_args() -> None:
    """The plugin takes no args."""
    with pytest.raises(ValueError, match="takes no args"):
        TaintToleration({"foo": 1}, Handle())
