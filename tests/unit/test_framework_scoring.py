"""The extension-point table and the PreScore / Score / NormalizeScore and PreFilterExtensions
runtime, as kube-scheduler's frameworkruntime runs them (RunPreScorePlugins,
RunScorePlugins, RunPreFilterExtensionAddPod/RemovePod; framework_test.go's
TestRunPreScorePlugins / TestRunScorePlugins cases), plus score weights from the profile
(config v1 getDefaultPlugins, mergePluginSet, frameworkruntime getScoreWeights)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import pytest

from schedsim.api.core import Node, Pod
from schedsim.framework import (
    DEFAULT_WEIGHTS,
    EXTENSION_POINTS,
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    RUN_POINTS,
    Code,
    CycleState,
    Framework,
    Handle,
    NodeInfo,
    NodePluginScores,
    PluginError,
    PluginScore,
    PodInfo,
    Profile,
    StateKey,
    Status,
    default_profile,
    profile_from_config,
)
from schedsim.snapshot import NodeInfo as SnapshotNodeInfo
from schedsim.snapshot import PodInfo as SnapshotPodInfo


def _node(name: str) -> SnapshotNodeInfo:
    return SnapshotNodeInfo(
        Node.from_manifest(
            {"metadata": {"name": name}, "status": {"allocatable": {"cpu": "2", "pods": "110"}}}
        )
    )


def _pod(name: str = "p") -> Pod:
    return Pod.from_manifest({"metadata": {"name": name}, "spec": {"containers": [{"name": "c"}]}})


class _Scorer:
    """Score = the number in the node's name times `mul`; optional PreScore / NormalizeScore
    behaviour from args."""

    name: ClassVar[str] = "Scorer"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        self.args = args
        self.calls: list[str] = []

    def schedsim_pre_score(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None:
        self.calls.append("pre_score")
        pre = self.args.get("pre")
        if pre == "raise":
            raise RuntimeError("boom")
        return pre  # type: ignore[no-any-return]

    def schedsim_score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int | Status:
        assert node_info.node is not None
        self.calls.append("score " + node_info.node.name)
        out = self.args.get("score")
        if isinstance(out, Status):
            return out
        if out == "raise":
            raise KeyError("x")
        return int(node_info.node.name.lstrip("n")) * self.args.get("mul", 1)

    def schedsim_normalize_score(
        self, state: CycleState, pod: Pod, scores: dict[str, int]
    ) -> Status | None:
        self.calls.append("normalize")
        norm = self.args.get("normalize")
        if isinstance(norm, Status):
            return norm
        if norm == "max":  # like helper.DefaultNormalizeScore(MaxNodeScore, false, scores)
            top = max(scores.values())
            for k, v in scores.items():
                scores[k] = v * MAX_NODE_SCORE // top if top else 0
        return None


class _Flat:
    """A Score plugin without NormalizeScore, with keyword-only parameters (as the typed
    protocols spell them): every node scores `score`."""

    name: ClassVar[str] = "Flat"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        self.value = int(args.get("score", 10))

    def schedsim_score(self, *, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return self.value


_REGISTRY: dict[str, Any] = {"Scorer": _Scorer, "Flat": _Flat}


def _fw(
    names: Sequence[str],
    args: Mapping[str, Mapping[str, Any]] | None = None,
    weights: Mapping[str, int] | None = None,
) -> Framework:
    profile = Profile(
        plugins={"preScore": tuple(names), "score": tuple(names)},
        plugin_args=dict(args or {}),
        explicit=frozenset(names),
        plugin_weights=dict(weights or {}),
    )
    return Framework(profile, Handle(), _REGISTRY)


NODES = [_node("n1"), _node("n2"), _node("n4")]


def test_table_lists_every_kube_scheduler_point_and_which_run() -> None:
    """Every field of the v1 Plugins type except multiPoint, in cycle order; Framework.order()
    has exactly the points schedsim runs (getExtensionPoints)."""
    assert [p.key for p in EXTENSION_POINTS] == [
        "queueSort",
        "preEnqueue",
        "preFilter",
        "filter",
        "postFilter",
        "preScore",
        "score",
        "reserve",
        "permit",
        "preBind",
        "bind",
        "postBind",
    ]
    assert RUN_POINTS == tuple(p.key for p in EXTENSION_POINTS)  # every point runs now
    fw = Framework(default_profile(), Handle())
    titles = [p.title for p in EXTENSION_POINTS if p.runs]
    assert list(fw.order()) == titles
    assert set(fw.order()["Score"]) <= set(DEFAULT_WEIGHTS)  # the in-tree Score plugins


def test_config_sections_of_the_queue_and_binding_points_are_applied() -> None:
    """permit/bind/postBind/queueSort run now (issue 14): their sections are applied like any
    other point's (config v1 mergePlugins), not refused."""
    for key in ("permit", "queueSort", "bind", "postBind"):
        cfg = {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"plugins": {key: {"enabled": [{"name": "X"}]}}}],
        }
        assert profile_from_config(cfg).plugins[key][-1] == "X"


def test_score_normalize_then_weight_and_total() -> None:
    """RunScorePlugins: raw score per node, NormalizeScore per plugin, then times the weight;
    TotalScore sums the plugins; node order kept."""
    fw = _fw(["Scorer", "Flat"], {"Scorer": {"normalize": "max"}}, {"Scorer": 2})
    state = CycleState()
    assert fw.run_pre_score_plugins(state, _pod(), NODES).is_success
    raw: dict[str, dict[str, int]] = {}
    scores, st = fw.run_score_plugins(state, _pod(), NODES, raw)
    assert st.is_success
    assert raw == {"Scorer": {"n1": 1, "n2": 2, "n4": 4}, "Flat": {"n1": 10, "n2": 10, "n4": 10}}
    assert scores == [
        NodePluginScores("n1", (PluginScore("Scorer", 50), PluginScore("Flat", 10)), 60),
        NodePluginScores("n2", (PluginScore("Scorer", 100), PluginScore("Flat", 10)), 110),
        NodePluginScores("n4", (PluginScore("Scorer", 200), PluginScore("Flat", 10)), 210),
    ]
    assert fw.score_weights == {"Scorer": 2, "Flat": 1}
    assert fw.has_score_plugins and fw.normalize_score_plugin_names == ("Scorer",)


def test_pre_score_skip_skips_that_plugins_score_and_normalize() -> None:
    """A PreScore Skip lands in SkipScorePlugins; the plugin's Score and NormalizeScore are
    not called and it is absent from NodePluginScores.Scores."""
    fw = _fw(["Scorer", "Flat"], {"Scorer": {"pre": Status(Code.Skip)}})
    state = CycleState()
    assert fw.run_pre_score_plugins(state, _pod(), NODES).is_success
    assert state.skip_score_plugins == {"Scorer"}
    scores, st = fw.run_score_plugins(state, _pod(), NODES)
    assert st.is_success
    assert [s.scores for s in scores] == [(PluginScore("Flat", 10),)] * 3
    assert fw.plugins["Scorer"].calls == ["pre_score"]


def test_pre_score_failure_wording() -> None:
    """Any PreScore status but Success/Skip, and an exception, become Error
    `running PreScore plugin "<name>": <message>`."""
    fw = _fw(["Scorer"], {"Scorer": {"pre": Status(Code.Unschedulable, ("nope",))}})
    st = fw.run_pre_score_plugins(CycleState(), _pod(), NODES)
    assert st == Status(Code.Error, ('running PreScore plugin "Scorer": nope',), "Scorer")
    fw = _fw(["Scorer"], {"Scorer": {"pre": "raise"}})
    st = fw.run_pre_score_plugins(CycleState(), _pod(), NODES)
    assert st.reasons == ('running PreScore plugin "Scorer": RuntimeError: boom',)


def test_score_failures_use_kube_scheduler_wording() -> None:
    """Score failing: `running Score plugins: plugin "<n>" failed with: <msg>`; NormalizeScore
    failing: `running Normalize on Score plugins: ...`; a score outside [0, 100] after
    normalizing: `applying score defaultWeights on Score plugins: plugin "<n>" returns an
    invalid score <s>, it should in the range of [0, 100] after normalizing`."""
    fw = _fw(["Scorer"], {"Scorer": {"score": Status(Code.Error, ("bad node",))}})
    scores, st = fw.run_score_plugins(CycleState(), _pod(), NODES)
    assert scores == [] and st.code is Code.Error and st.plugin == "Scorer"
    assert st.reasons == ('running Score plugins: plugin "Scorer" failed with: bad node',)
    fw = _fw(["Scorer"], {"Scorer": {"score": "raise"}})
    _, st = fw.run_score_plugins(CycleState(), _pod(), NODES)
    assert st.reasons == ("running Score plugins: plugin \"Scorer\" failed with: KeyError: 'x'",)
    fw = _fw(["Scorer"], {"Scorer": {"normalize": Status(Code.Error, ("cannot",))}})
    _, st = fw.run_score_plugins(CycleState(), _pod(), NODES)
    assert st.reasons == (
        'running Normalize on Score plugins: plugin "Scorer" failed with: cannot',
    )
    fw = _fw(["Scorer"], {"Scorer": {"mul": 30}})  # 30, 60, 120 without normalizing
    _, st = fw.run_score_plugins(CycleState(), _pod(), NODES)
    assert st.reasons == (
        'applying score defaultWeights on Score plugins: plugin "Scorer" returns an invalid '
        "score 120, it should in the range of [0, 100] after normalizing",
    )
    fw = _fw(["Flat"], {"Flat": {"score": -1}})
    _, st = fw.run_score_plugins(CycleState(), _pod(), NODES)
    assert "invalid score -1" in st.message and (MIN_NODE_SCORE, MAX_NODE_SCORE) == (0, 100)


def test_no_nodes_and_no_plugins() -> None:
    """No feasible nodes: no scores; every plugin skipped: each node scores 0 with no
    plugin scores (upstream builds the list all the same)."""
    fw = _fw(["Flat"])
    assert fw.run_score_plugins(CycleState(), _pod(), []) == ([], Status(Code.Success))
    state = CycleState()
    state.skip_score_plugins.add("Flat")
    scores, _ = fw.run_score_plugins(state, _pod(), NODES[:1])
    assert scores == [NodePluginScores("n1", (), 0)]


def test_default_profile_weights_are_kube_scheduler_1_34s() -> None:
    """getDefaultPlugins: TaintToleration 3, NodeAffinity 2, PodTopologySpread 2,
    InterPodAffinity 2, NodeResourcesFit 1, NodeResourcesBalancedAllocation 1,
    ImageLocality 1."""
    assert dict(default_profile().plugin_weights) == {
        "TaintToleration": 3,
        "NodeAffinity": 2,
        "PodTopologySpread": 2,
        "InterPodAffinity": 2,
        "NodeResourcesFit": 1,
        "NodeResourcesBalancedAllocation": 1,
        "ImageLocality": 1,
    }
    assert default_profile().plugin_weights == DEFAULT_WEIGHTS


def _weights(plugins: Mapping[str, Any]) -> Mapping[str, int]:
    cfg = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"plugins": plugins}],
    }
    return profile_from_config(cfg).plugin_weights


def test_config_weights_follow_merge_plugin_set_and_get_score_weights() -> None:
    """A weight at `score` wins over MultiPoint (getScoreWeights reads Score.Enabled first); a
    MultiPoint entry for a default plugin replaces its default entry, so without a weight it
    weighs 1 (mergePluginSet + weight 0 -> 1); weight 0 counts as 1."""
    w = _weights({"score": {"enabled": [{"name": "NodeResourcesFit", "weight": 5}]}})
    assert w["NodeResourcesFit"] == 5 and w["TaintToleration"] == 3
    w = _weights({"multiPoint": {"enabled": [{"name": "TaintToleration", "weight": 7}]}})
    assert w["TaintToleration"] == 7
    w = _weights({"multiPoint": {"enabled": [{"name": "TaintToleration"}]}})
    assert w["TaintToleration"] == 1
    w = _weights({"score": {"enabled": [{"name": "ImageLocality", "weight": 0}]}})
    assert w["ImageLocality"] == 1
    w = _weights({"multiPoint": {"enabled": [{"name": "Custom", "weight": 4}]}})
    assert w["Custom"] == 4
    w = _weights({"multiPoint": {"disabled": [{"name": "*"}]}})
    assert w == {}


def test_percentage_of_nodes_to_score_profile_over_global_and_range() -> None:
    """The profile's percentageOfNodesToScore wins over the global one; outside [0, 100] is
    refused with validatePercentageOfNodesToScore's words."""
    cfg: dict[str, Any] = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "percentageOfNodesToScore": 30,
        "profiles": [{"schedulerName": "a"}],
    }
    assert profile_from_config(cfg).percentage_of_nodes_to_score == 30
    cfg["profiles"][0]["percentageOfNodesToScore"] = 70
    assert profile_from_config(cfg).percentage_of_nodes_to_score == 70
    cfg["profiles"][0]["percentageOfNodesToScore"] = 101
    with pytest.raises(ValueError) as e:
        profile_from_config(cfg)
    assert str(e.value) == (
        "profiles[0].percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]"
    )


_SEEN: StateKey[list[str]] = StateKey("Ext")


class _Ext:
    """A PreFilter plugin with PreFilterExtensions that records added/removed pods."""

    name: ClassVar[str] = "Ext"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        self.args = args

    def schedsim_pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None:
        state[_SEEN] = []
        return self.args.get("pre")  # type: ignore[no-any-return]

    def schedsim_pre_filter_add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        state[_SEEN].append("+" + pod_info_to_add.pod.name)
        return self.args.get("add")  # type: ignore[no-any-return]

    def schedsim_pre_filter_remove_pod(
        self,
        state: CycleState,
        pod_to_schedule: Pod,
        pod_info_to_remove: PodInfo,
        node_info: NodeInfo,
    ) -> Status | None:
        if self.args.get("remove") == "raise":
            raise RuntimeError("gone")
        state[_SEEN].append("-" + pod_info_to_remove.pod.name)
        return None


def _ext(args: Mapping[str, Any]) -> Framework:
    profile = Profile(
        plugins={"preFilter": ("Ext",), "filter": ("Ext",)},
        plugin_args={"Ext": args},
        explicit=frozenset({"Ext"}),
    )
    return Framework(profile, Handle(), {"Ext": _Ext})  # type: ignore[dict-item]


def test_pre_filter_extensions_add_and_remove_pod() -> None:
    """RunPreFilterExtensionAddPod/RemovePod call the plugins whose PreFilter did not Skip;
    a failure is Error `running AddPod on PreFilter plugin "<name>": <msg>` (RemovePod
    likewise)."""
    victim = SnapshotPodInfo(_pod("victim"))
    fw = _ext({})
    state = CycleState()
    fw.run_pre_filter_plugins(state, _pod(), NODES)
    assert fw.run_pre_filter_extension_add_pod(state, _pod(), victim, NODES[0]).is_success
    assert fw.run_pre_filter_extension_remove_pod(state, _pod(), victim, NODES[0]).is_success
    assert state[_SEEN] == ["+victim", "-victim"]
    fw = _ext({"pre": Status(Code.Skip)})
    state = CycleState()
    fw.run_pre_filter_plugins(state, _pod(), NODES)
    state[_SEEN] = []
    assert fw.run_pre_filter_extension_add_pod(state, _pod(), victim, NODES[0]).is_success
    assert state[_SEEN] == []
    fw = _ext({"add": Status(Code.Unschedulable, ("full",)), "remove": "raise"})
    state = CycleState()
    fw.run_pre_filter_plugins(state, _pod(), NODES)
    st = fw.run_pre_filter_extension_add_pod(state, _pod(), victim, NODES[0])
    assert st == Status(Code.Error, ('running AddPod on PreFilter plugin "Ext": full',), "Ext")
    st = fw.run_pre_filter_extension_remove_pod(state, _pod(), victim, NODES[0])
    assert st.reasons == ('running RemovePod on PreFilter plugin "Ext": RuntimeError: gone',)


class _Counter:
    def __init__(self, n: int) -> None:
        self.n = n

    def clone(self) -> _Counter:
        return _Counter(self.n)


def test_cycle_state_clone_clones_data_with_clone_and_copies_skip_sets() -> None:
    """CycleState.Clone: each StateData is cloned; the skip sets carry over."""
    counter: StateKey[_Counter] = StateKey("counter")
    frozen: StateKey[tuple[int, ...]] = StateKey("frozen")
    state = CycleState()
    state[counter] = _Counter(1)
    state[frozen] = (1, 2)
    state.skip_filter_plugins.add("A")
    state.skip_score_plugins.add("B")
    state.skip_pre_bind_plugins.add("C")
    copy = state.clone()
    copy[counter].n = 5
    copy.skip_score_plugins.add("D")
    assert state[counter].n == 1 and copy[frozen] is state[frozen]
    assert copy.skip_filter_plugins == {"A"} and copy.skip_pre_bind_plugins == {"C"}
    assert state.skip_score_plugins == {"B"} and copy.skip_score_plugins == {"B", "D"}


class _WrongName:
    name: ClassVar[str] = "WrongName"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        pass

    def schedsim_score(self, *, state: CycleState, p: Pod, node_info: NodeInfo) -> int:
        return 0


def test_keyword_only_hook_with_a_parameter_not_in_the_spec_is_refused() -> None:
    """pluggy ignores keyword-only parameters; the runtime checks their names itself."""
    profile = Profile(plugins={"score": ("WrongName",)}, explicit=frozenset({"WrongName"}))
    with pytest.raises(PluginError) as e:
        Framework(profile, Handle(), {"WrongName": _WrongName})  # type: ignore[dict-item]
    assert str(e.value) == (
        "plugin 'WrongName': schedsim_score: parameter(s) p not in the hook spec "
        "(state, pod, node_info)"
    )
