"""NodeAffinity plugin PreFilter/Filter: cases from upstream node_affinity_test.go
(TestNodeAffinity), plus a few marked ``extra``."""

from __future__ import annotations

from typing import Any

import pytest

from schedsim.api.core import Node, Pod
from schedsim.framework import Code, CycleState, Handle, PreFilterResult, Status
from schedsim.snapshot import NodeInfo
from schedsim_plugins.nodeaffinity import PRE_FILTER_STATE_KEY, NodeAffinity

NAME = "NodeAffinity"
POD_MISMATCH = Status(
    Code.UnschedulableAndUnresolvable, ("node(s) didn't match Pod's node affinity/selector",), NAME
)
ENFORCED = Status(
    Code.UnschedulableAndUnresolvable,
    ("node(s) didn't match scheduler-enforced node affinity",),
    NAME,
)
CONFLICT = Status(Code.UnschedulableAndUnresolvable, ("pod affinity terms conflict",), NAME)
SKIP = Status(Code.Skip, (), NAME)

Manifest = dict[str, Any]


def req(key: str, op: str, *values: str) -> Manifest:
    """One NodeSelectorRequirement."""
    out: Manifest = {"key": key, "operator": op}
    if values:
        out["values"] = list(values)
    return out


def term(exprs: list[Manifest] | None = None, fields: list[Manifest] | None = None) -> Manifest:
    """One NodeSelectorTerm."""
    out: Manifest = {}
    if exprs is not None:
        out["matchExpressions"] = exprs
    if fields is not None:
        out["matchFields"] = fields
    return out


def required(*terms: Manifest) -> Manifest:
    """A nodeAffinity with required terms."""
    return {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}


def pod(node_affinity: Manifest | None = None, node_selector: dict[str, str] | None = None) -> Pod:
    spec: Manifest = {}
    if node_selector is not None:
        spec["nodeSelector"] = node_selector
    if node_affinity is not None:
        spec["affinity"] = {"nodeAffinity": node_affinity}
    return Pod.from_manifest({"metadata": {"name": "p"}, "spec": spec})


NAME_IN_NODE1 = req("metadata.name", "In", "node1")
NAME_IN_NODE2 = req("metadata.name", "In", "node2")

# (pod, node labels, node name, args, run PreFilter, want PreFilter, want Filter)
CASES = [
    pytest.param(pod(node_selector={"foo": "bar"}), {}, "", {}, True, None, POD_MISMATCH,
                 id="missing labels"),
    pytest.param(pod(node_selector={"foo": "bar"}), {"foo": "bar"}, "", {}, True, None, None,
                 id="same labels"),
    pytest.param(pod(node_selector={"foo": "bar"}), {"foo": "bar", "baz": "blah"}, "", {}, True,
                 None, None, id="node labels are superset"),
    pytest.param(pod(node_selector={"foo": "bar", "baz": "blah"}), {"foo": "bar"}, "", {}, True,
                 None, POD_MISMATCH, id="node labels are subset"),
    pytest.param(pod(required(term([req("foo", "In", "bar", "value2")]))), {"foo": "bar"}, "",
                 {}, True, None, None,
                 id="Pod with matchExpressions using In operator that matches the existing node"),
    pytest.param(pod(required(term([req("kernel-version", "Gt", "0204")]))),
                 {"kernel-version": "0206"}, "", {}, True, None, None,
                 id="Pod with matchExpressions using Gt operator that matches the existing node"),
    pytest.param(pod(required(term([req("mem-type", "NotIn", "DDR", "DDR2")]))),
                 {"mem-type": "DDR3"}, "", {}, True, None, None,
                 id="Pod with matchExpressions using NotIn operator that matches the existing "
                 "node"),
    pytest.param(pod(required(term([req("GPU", "Exists")]))), {"GPU": "NVIDIA-GRID-K1"}, "", {},
                 True, None, None,
                 id="Pod with matchExpressions using Exists operator that matches the existing "
                 "node"),
    pytest.param(pod(required(term([req("foo", "In", "value1", "value2")]))), {"foo": "bar"}, "",
                 {}, True, None, POD_MISMATCH,
                 id="Pod with affinity that don't match node's labels won't schedule onto the "
                 "node"),
    pytest.param(pod(required(term([]))), {"foo": "bar"}, "", {}, True, None, POD_MISMATCH,
                 id="Pod with empty MatchExpressions is not a valid value will match no objects "
                 "and won't schedule onto the node"),
    pytest.param(pod(), {"foo": "bar"}, "", {}, True, SKIP, None,
                 id="Pod with no Affinity will schedule onto a node"),
    pytest.param(pod({}), {"foo": "bar"}, "", {}, True, SKIP, None,
                 id="Pod with Affinity but nil NodeSelector will schedule onto a node"),
    pytest.param(pod(required(term([req("GPU", "Exists"), req("GPU", "NotIn", "AMD", "INTER")]))),
                 {"GPU": "NVIDIA-GRID-K1"}, "", {}, True, None, None,
                 id="Pod with multiple matchExpressions ANDed that matches the existing node"),
    pytest.param(pod(required(term([req("GPU", "Exists"), req("GPU", "In", "AMD", "INTER")]))),
                 {"GPU": "NVIDIA-GRID-K1"}, "", {}, True, None, POD_MISMATCH,
                 id="Pod with multiple matchExpressions ANDed that doesn't match the existing "
                 "node"),
    pytest.param(pod(required(term([req("foo", "In", "bar", "value2")]),
                              term([req("diffkey", "In", "wrong", "value2")]))),
                 {"foo": "bar"}, "", {}, True, None, None,
                 id="Pod with multiple NodeSelectorTerms ORed in affinity, matches the node's "
                 "labels and will schedule onto the node"),
    pytest.param(pod(required(term([req("foo", "Exists")])), node_selector={"foo": "bar"}),
                 {"foo": "bar"}, "", {}, True, None, None,
                 id="Pod with an Affinity and a PodSpec.NodeSelector(the old thing that we are "
                 "deprecating) both are satisfied, will schedule onto the node"),
    pytest.param(pod(required(term([req("foo", "Exists")])), node_selector={"foo": "bar"}),
                 {"foo": "barrrrrr"}, "", {}, True, None, POD_MISMATCH,
                 id="Pod with an Affinity matches node's labels but the PodSpec.NodeSelector(the "
                 "old thing that we are deprecating) is not satisfied, won't schedule onto the "
                 "node"),
    pytest.param(pod(required(term([req("foo", "NotIn", "invalid value: ___@#$%^")]))),
                 {"foo": "bar"}, "", {}, True, None, POD_MISMATCH,
                 id="Pod with an invalid value in Affinity term won't be scheduled onto the node"),
    pytest.param(pod(required(term(fields=[NAME_IN_NODE1]))), {}, "node1", {}, True,
                 PreFilterResult(frozenset({"node1"})), None,
                 id="Pod with matchFields using In operator that matches the existing node"),
    pytest.param(pod(required(term(fields=[NAME_IN_NODE1]))), {}, "node2", {}, True,
                 PreFilterResult(frozenset({"node1"})), POD_MISMATCH,
                 id="Pod with matchFields using In operator that does not match the existing "
                 "node"),
    pytest.param(pod(required(term(fields=[NAME_IN_NODE1, NAME_IN_NODE2]),
                              term([req("foo", "In", "bar")]))),
                 {"foo": "bar"}, "node2", {}, True, None, None,
                 id="Pod with two terms: matchFields does not match, but matchExpressions "
                 "matches"),
    pytest.param(pod(required(term([req("foo", "In", "bar")], [NAME_IN_NODE1]))),
                 {"foo": "bar"}, "node2", {}, True, PreFilterResult(frozenset({"node1"})),
                 POD_MISMATCH,
                 id="Pod with one term: matchFields does not match, but matchExpressions matches"),
    pytest.param(pod(required(term([req("foo", "In", "bar")], [NAME_IN_NODE1]))),
                 {"foo": "bar"}, "node1", {}, True, PreFilterResult(frozenset({"node1"})), None,
                 id="Pod with one term: both matchFields and matchExpressions match"),
    pytest.param(pod(required(term(fields=[NAME_IN_NODE1]),
                              term([req("foo", "In", "not-match-to-bar")]))),
                 {"foo": "bar"}, "node2", {}, True, None, POD_MISMATCH,
                 id="Pod with two terms: both matchFields and matchExpressions do not match"),
    pytest.param(pod(required(term(fields=[NAME_IN_NODE1]), term(fields=[NAME_IN_NODE2]))),
                 {}, "node2", {}, True, PreFilterResult(frozenset({"node1", "node2"})), None,
                 id="Pod with two terms of node.Name affinity"),
    pytest.param(pod(required(term(fields=[NAME_IN_NODE1, NAME_IN_NODE2]))),
                 {"foo": "bar"}, "node2", {}, True, CONFLICT, POD_MISMATCH,
                 id="Pod with two conflicting mach field requirements"),
    pytest.param(pod(required(term([req("zone", "In", "foo")]))), {"zone": "foo"}, "node2",
                 {"addedAffinity": required(term(fields=[NAME_IN_NODE2]))}, True, None, None,
                 id="Matches added affinity and Pod's node affinity"),
    pytest.param(pod(required(term([req("zone", "In", "bar")]))), {"zone": "foo"}, "node2",
                 {"addedAffinity": required(term(fields=[NAME_IN_NODE2]))}, True, None,
                 POD_MISMATCH, id="Matches added affinity but not Pod's node affinity"),
    pytest.param(pod(), {"zone": "foo"}, "node2",
                 {"addedAffinity": required(term([req("zone", "In", "bar")]))}, True, None,
                 ENFORCED, id="Doesn't match added affinity"),
    pytest.param(pod(node_selector={"foo": "bar"}), {"foo": "bar", "baz": "blah"}, "", {}, False,
                 None, None, id="Matches node selector correctly even if PreFilter is not called"),
    pytest.param(pod(required(term([req("GPU", "Exists"), req("GPU", "NotIn", "AMD", "INTER")]))),
                 {"GPU": "NVIDIA-GRID-K1"}, "", {}, False, None, None,
                 id="Matches node affinity correctly even if PreFilter is not called"),
    # ---- not upstream table cases
    pytest.param(pod(required()), {"foo": "bar"}, "", {}, True, None, POD_MISMATCH,
                 id="extra: required node affinity with zero terms matches nothing"),
    pytest.param(pod(required(term([req("foo", "In", "bar")]), term())), {"foo": "x"}, "", {},
                 True, None, POD_MISMATCH,
                 id="extra: a term without requirements matches nothing"),
    pytest.param(pod(required(term([req("v", "Gt", "5")]))), {"v": "abc"}, "", {}, True, None,
                 POD_MISMATCH, id="extra: Gt against a non-integer label does not match"),
    pytest.param(pod(required(term([req("v", "Lt", "5")]))), {"v": "-7"}, "", {}, True, None,
                 None, id="extra: Lt with a negative label value"),
    pytest.param(pod(required(term([req("v", "Lt", "5")]))), {}, "", {}, True, None,
                 POD_MISMATCH, id="extra: Lt against a missing label does not match"),
    pytest.param(pod(required(term([req("v", "NotIn", "a")]))), {}, "", {}, True, None, None,
                 id="extra: NotIn matches a missing label"),
    pytest.param(pod(required(term([req("v", "DoesNotExist")]))), {"w": "1"}, "", {}, True, None,
                 None, id="extra: DoesNotExist matches a missing label"),
    pytest.param(pod(required(term([req("v", "In")]))), {"v": ""}, "", {}, True, None,
                 POD_MISMATCH, id="extra: In without values is a parse error (never matches)"),
    pytest.param(pod(required(term([req("v", "Exists", "x")]))), {"v": "x"}, "", {}, True, None,
                 POD_MISMATCH, id="extra: Exists with values is a parse error (never matches)"),
    pytest.param(pod(required(term(fields=[req("metadata.name", "NotIn", "node1")]))), {},
                 "node1", {}, True, None, POD_MISMATCH,
                 id="extra: matchFields NotIn excludes the named node"),
    pytest.param(pod(required(term(fields=[req("metadata.name", "In", "node1", "node2")]))), {},
                 "node1", {}, True, PreFilterResult(frozenset({"node1", "node2"})), POD_MISMATCH,
                 id="extra: matchFields In with two values narrows in PreFilter but fails to "
                 "parse in Filter"),
    pytest.param(pod(required(term(fields=[NAME_IN_NODE1]), term([req("a", "Exists")]))), {},
                 "node1", {}, True, None, None,
                 id="extra: a term without metadata.name In disables narrowing"),
    pytest.param(pod(node_selector={"foo": "bar"}), {"foo": "bar"}, "n",
                 {"addedAffinity": required(term([req("zone", "In", "bar")]))}, True, None,
                 ENFORCED, id="extra: enforced affinity is checked before the pod's"),
    pytest.param(pod(), {}, "n", {"addedAffinity": required()}, True, None, ENFORCED,
                 id="extra: enforced affinity with zero terms rejects every node"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("p", "labels", "node_name", "args", "run_pre_filter", "want_pre_filter", "want_filter"),
    CASES,
)
def test_node_affinity(
    p: Pod,
    labels: dict[str, str],
    node_name: str,
    args: Manifest,
    run_pre_filter: bool,
    want_pre_filter: Status | PreFilterResult | None,
    want_filter: Status | None,
) -> None:
    """TestNodeAffinity: optional PreFilter, then Filter (run even after Skip, as upstream)."""
    # Upstream often uses a nameless node; schedsim Nodes need a name.
    node = Node.from_manifest({"metadata": {"name": node_name or "node", "labels": labels}})
    ni = NodeInfo(node)
    plugin = NodeAffinity(args, Handle())
    state = CycleState()
    if run_pre_filter:
        assert plugin.schedsim_pre_filter(state, p, [ni]) == want_pre_filter
    assert plugin.schedsim_filter(state, p, ni) == want_filter


def test_pre_filter_writes_state_unless_skipped() -> None:
    """PreFilter leaves the compiled selector in the cycle state (also on conflict)."""
    plugin = NodeAffinity({}, Handle())
    state = CycleState()
    plugin.schedsim_pre_filter(state, pod(), [])
    assert PRE_FILTER_STATE_KEY not in state
    conflicting = pod(required(term(fields=[NAME_IN_NODE1, NAME_IN_NODE2])))
    assert plugin.schedsim_pre_filter(state, conflicting, []) == CONFLICT
    assert PRE_FILTER_STATE_KEY in state


def test_added_affinity_prevents_skip() -> None:
    """With addedAffinity the Filter must run, so PreFilter does not Skip."""
    plugin = NodeAffinity({"addedAffinity": required(term([req("a", "Exists")]))}, Handle())
    assert plugin.schedsim_pre_filter(CycleState(), pod(), []) is None


def test_added_affinity_preferred_terms_are_kept() -> None:
    """addedAffinity preferred terms are decoded and validated."""
    plugin = NodeAffinity(
        {
            "addedAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 3, "preference": term([req("key", "In", "value")])}
                ]
            }
        },
        Handle(),
    )
    assert [t.weight for t in plugin.added_preferred] == [3]
    assert plugin.schedsim_pre_filter(CycleState(), pod(), []) == SKIP


@pytest.mark.parametrize(
    ("args", "match"),
    [
        pytest.param({"foo": 1}, r"^foo: unknown field$", id="unknown arg"),
        pytest.param({"kind": "Other"}, "^kind: expected NodeAffinityArgs", id="wrong kind"),
        pytest.param({"addedAffinity": []}, "addedAffinity: expected a mapping", id="not a map"),
        pytest.param({"addedAffinity": {"bogus": 1}}, r"^addedAffinity.bogus: unknown", id="key"),
        pytest.param(
            {"addedAffinity": required(term([req("a", "Bad", "x")]))},
            r"addedAffinity\.requiredDuringSchedulingIgnoredDuringExecution\.nodeSelectorTerms"
            r"\[0\]\.matchExpressions\[0\]\.operator",
            id="bad operator",
        ),
        pytest.param(
            {"addedAffinity": required(term([req("a", "In")]))},
            r"nodeSelectorTerms\[0\]\.matchExpressions\[0\]\.values",
            id="In without values",
        ),
        pytest.param(
            {"addedAffinity": required(term([req("a", "In", "bad value!")]))},
            r"matchExpressions\[0\]\.values\[0\]",
            id="invalid label value",
        ),
        pytest.param(
            {"addedAffinity": required(term([req("-bad-", "Exists")]))},
            r"matchExpressions\[0\]\.key",
            id="invalid label key",
        ),
        pytest.param(
            {"addedAffinity": required(term(fields=[req("metadata.name", "In", "a", "b")]))},
            r"matchFields\[0\]\.values: .*must have one element",
            id="matchFields with two values",
        ),
        pytest.param(
            {"addedAffinity": required(term(fields=[req("metadata.name", "Exists")]))},
            r"matchFields\[0\]\.operator",
            id="matchFields Exists",
        ),
        pytest.param(
            {
                "addedAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 1, "preference": term([req("a", "NotIn")])}
                    ]
                }
            },
            r"preferredDuringSchedulingIgnoredDuringExecution\[0\]\.matchExpressions\[0\]",
            id="invalid preferred term",
        ),
    ],
)
def test_invalid_args(args: Manifest, match: str) -> None:
    """Invalid NodeAffinityArgs raise ValueError naming the field (ValidateNodeAffinityArgs)."""
    with pytest.raises(ValueError, match=match):
        NodeAffinity(args, Handle())


def test_filter_without_pre_filter_reuses_compiled_selector() -> None:
    """Filter without PreFilter compiles the pod's selector once per pod object."""
    plugin = NodeAffinity({}, Handle())
    p = pod(node_selector={"a": "1"})
    ok = NodeInfo(Node.from_manifest({"metadata": {"name": "x", "labels": {"a": "1"}}}))
    bad = NodeInfo(Node.from_manifest({"metadata": {"name": "y", "labels": {"a": "2"}}}))
    assert plugin.schedsim_filter(CycleState(), p, ok) is None
    assert plugin.schedsim_filter(CycleState(), p, bad) == POD_MISMATCH
    other = pod(node_selector={"a": "2"})
    assert plugin.schedsim_filter(CycleState(), other, bad) is None
