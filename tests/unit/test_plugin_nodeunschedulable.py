"""NodeUnschedulable plugin: cases from upstream node_unschedulable_test.go
(TestNodeUnschedulable)."""

from __future__ import annotations

from typing import Any

import pytest

from schedsim.api.core import Node, Pod
from schedsim.framework import Code, CycleState, Handle, Status
from schedsim.snapshot import NodeInfo
from schedsim_plugins.nodeunschedulable import NodeUnschedulable

UNSCHEDULABLE = Status(
    Code.UnschedulableAndUnresolvable, ("node(s) were unschedulable",), "NodeUnschedulable"
)


def _pod(spec: dict[str, Any] | None = None) -> Pod:
    return Pod.from_manifest({"metadata": {"name": "p"}, "spec": spec or {}})


def _node(unschedulable: bool) -> Node:
    return Node.from_manifest({"metadata": {"name": "n"}, "spec": {"unschedulable": unschedulable}})


@pytest.mark.parametrize(
    ("pod", "node", "want"),
    [
        pytest.param(
            _pod(),
            _node(True),
            UNSCHEDULABLE,
            id="Does not schedule pod to unschedulable node (node.Spec.Unschedulable==true)",
        ),
        pytest.param(_pod(), _node(False), None, id="Schedule pod to normal node"),
        pytest.param(
            _pod(
                {
                    "tolerations": [
                        {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
                    ]
                }
            ),
            _node(True),
            None,
            id="Schedule pod with toleration to unschedulable node (node.Spec.Unschedulable==true)",
        ),
        # Not upstream table cases: toleration variants through Toleration.ToleratesTaint.
        pytest.param(
            _pod({"tolerations": [{"operator": "Exists"}]}),
            _node(True),
            None,
            id="extra: wildcard Exists toleration tolerates the unschedulable taint",
        ),
        pytest.param(
            _pod(
                {
                    "tolerations": [
                        {"key": "node.kubernetes.io/unschedulable", "effect": "NoExecute"}
                    ]
                }
            ),
            _node(True),
            UNSCHEDULABLE,
            id="extra: toleration with another effect does not tolerate",
        ),
    ],
)
def test_node_unschedulable(pod: Pod, node: Node, want: Status | None) -> None:
    """TestNodeUnschedulable."""
    p = NodeUnschedulable({}, Handle())
    assert p.schedsim_filter(CycleState(), pod, NodeInfo(node)) == want


def test_node_without_node_object() -> None:
    """Filter's nil-node branch: ``node(s) had unknown conditions``."""
    p = NodeUnschedulable({}, Handle())
    got = p.schedsim_filter(CycleState(), _pod(), NodeInfo())
    assert got == Status(
        Code.UnschedulableAndUnresolvable, ("node(s) had unknown conditions",), "NodeUnschedulable"
    )


def test_rejects_args() -> None:
    """The plugin takes no args."""
    with pytest.raises(ValueError, match="takes no args"):
        NodeUnschedulable({"foo": 1}, Handle())
