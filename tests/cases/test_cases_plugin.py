"""The generic plugin-case checker (``cases_plugin``) on hand-made cases, so that it is known
to fail when a plugin disagrees with a case (the shared cases only show it passing)."""

from __future__ import annotations

from typing import Any

import cases_plugin
import pytest

NODES = [
    {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a", "labels": {"zone": "z1"}}},
    {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "b", "labels": {"zone": "z2"}}},
]
POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p", "namespace": "default"},
    "spec": {"nodeSelector": {"zone": "z1"}, "containers": [{"name": "c", "image": "x"}]},
}
MISMATCH = "node(s) didn't match Pod's node affinity/selector"


def case(expect: dict[str, Any], **check: Any) -> dict[str, Any]:
    base = {
        "plugin": "NodeAffinity",
        "extensionPoints": ["PreFilter", "Filter"],
        "pod": "default/p",
        "nodes": ["a", "b"],
    }
    return {"name": "t", "objects": [*NODES, POD], "check": {**base, **check}, "expect": expect}


GOOD = {
    "preFilter": {"code": "Success"},
    "filter": {
        "a": {"code": "Success"},
        "b": {"code": "UnschedulableAndUnresolvable", "reasons": [MISMATCH]},
    },
}


def test_filter_case_passes() -> None:
    """NodeAffinity Filter: the nodeSelector zone=z1 matches node a only (upstream
    TestNodeAffinity semantics)."""
    cases_plugin.run(case(GOOD), "test")


@pytest.mark.parametrize(
    "expect",
    [
        pytest.param({**GOOD, "preFilter": {"code": "Skip"}}, id="prefilter code"),
        pytest.param(
            {**GOOD, "filter": {**GOOD["filter"], "a": {"code": "Unschedulable"}}}, id="code"
        ),
        pytest.param(
            {
                **GOOD,
                "filter": {
                    **GOOD["filter"],
                    "b": {"code": "UnschedulableAndUnresolvable", "reasons": ["x"]},
                },
            },
            id="reasons",
        ),
        pytest.param({**GOOD, "preFilterResult": {"nodeNames": ["a"]}}, id="prefilter result"),
    ],
)
def test_disagreement_fails(expect: dict[str, Any]) -> None:
    """Any field that disagrees with the plugin fails the case."""
    with pytest.raises(AssertionError):
        cases_plugin.run(case(expect), "test")


def test_expected_failure_names_missing_plugin_and_hooks() -> None:
    """A case whose plugin is not registered, or lacks a listed hook, is expected to fail."""
    assert "not emulated" in (cases_plugin.expected_failure(case({}, plugin="NoSuch")) or "")
    assert cases_plugin.expected_failure(case({})) is None
