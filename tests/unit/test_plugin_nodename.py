"""NodeName plugin: cases from upstream node_name_test.go (TestNodeName)."""

from __future__ import annotations

import pytest

from schedsim.api.core import Node, Pod
from schedsim.framework import Code, CycleState, Handle, Status
from schedsim.snapshot import NodeInfo
from schedsim_plugins.nodename import NodeName

MISMATCH = Status(
    Code.UnschedulableAndUnresolvable, ("node(s) didn't match the requested node name",), "NodeName"
)


def _pod(node_name: str) -> Pod:
    spec = {"nodeName": node_name} if node_name else {}
    return Pod.from_manifest({"metadata": {"name": "p"}, "spec": spec})


@pytest.mark.parametrize(
    ("pod_node_name", "node_name", "want"),
    [
        # Upstream uses a nameless node here; a Node needs a name in schedsim.
        pytest.param("", "foo", None, id="no host specified"),
        pytest.param("foo", "foo", None, id="host matches"),
        pytest.param("bar", "foo", MISMATCH, id="host doesn't match"),
    ],
)
def test_node_name(pod_node_name: str, node_name: str, want: Status | None) -> None:
    """TestNodeName."""
    node = Node.from_manifest({"metadata": {"name": node_name}})
    got = NodeName({}, Handle()).schedsim_filter(CycleState(), _pod(pod_node_name), NodeInfo(node))
    assert got == want


def test_rejects_args() -> None:
    """The plugin takes no args."""
    with pytest.raises(ValueError, match="takes no args"):
        NodeName({"foo": 1}, Handle())
