"""The framework runtime: profile order, the compiled Filter chain vs. the pluggy hook,
PreFilter Skip/narrowing, error wrapping and KubeSchedulerConfiguration merging, as
kube-scheduler's frameworkruntime and config v1 defaults behave."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import pytest

from schedsim.api.core import Node, Pod
from schedsim.api.errors import ManifestError
from schedsim.framework import (
    DEFAULT_PLUGINS,
    Code,
    CycleState,
    Diagnosis,
    FitError,
    Framework,
    Handle,
    NodeInfo,
    PluginError,
    PreFilterResult,
    Profile,
    Status,
    default_profile,
    discover_plugins,
    load_scheduler_config,
    profile_from_config,
)
from schedsim.snapshot import NodeInfo as SnapshotNodeInfo
from schedsim.snapshot import PodInfo


def _node(name: str, **spec: Any) -> Node:
    return Node.from_manifest(
        {
            "metadata": {"name": name, "labels": spec.pop("labels", {})},
            "spec": spec,
            "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "110"}},
        }
    )


def _pod(name: str, cpu: str = "100m", **spec: Any) -> Pod:
    return Pod.from_manifest(
        {
            "metadata": {"name": name},
            "spec": {
                "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}],
                **spec,
            },
        }
    )


def test_default_profile_order_is_kube_scheduler_1_34_multipoint_order() -> None:
    """Filter plugins run in the default MultiPoint order (config v1 getDefaultPlugins)."""
    fw = Framework(default_profile(), Handle())
    assert fw.filter_plugin_names == (
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "PodTopologySpread",
        "InterPodAffinity",
        "DynamicResources",
    )
    assert [n for n in DEFAULT_PLUGINS if n in fw.filter_plugin_names] == list(
        fw.filter_plugin_names
    )
    assert "VolumeBinding" not in fw.not_emulated


def test_in_tree_plugins_are_registered_through_the_entry_point_group() -> None:
    """The in-tree plugins arrive through `schedsim.plugins`, like third-party ones."""
    found = discover_plugins()
    for name in ("NodeResourcesFit", "TaintToleration", "NodeAffinity", "NodePorts"):
        assert name in found
        assert found[name].name == name  # type: ignore[attr-defined]


def test_compiled_filter_chain_agrees_with_the_pluggy_hook() -> None:
    """The hot path (tuple of bound methods) returns the first rejection in profile order,
    exactly what calling the pluggy hook and ordering its results by profile would give."""
    fw = Framework(default_profile(), Handle())
    nodes = [
        _node("plain"),
        _node("tainted", taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}]),
        _node("cordoned", unschedulable=True),
        _node("labelled", labels={"disk": "ssd"}),
    ]
    full = SnapshotNodeInfo(_node("full"))
    full.add_pod_info(PodInfo(_pod("hog", cpu="2")))
    infos = [SnapshotNodeInfo(n) for n in nodes] + [full]
    pods = [
        _pod("small"),
        _pod("big", cpu="3"),
        _pod("selector", nodeSelector={"disk": "ssd"}),
        _pod("named", nodeName="plain"),
        _pod("tolerant", tolerations=[{"operator": "Exists"}]),
    ]
    order = fw.filter_plugin_names
    for pod, ni in itertools.product(pods, infos):
        state = CycleState()
        fw.run_pre_filter_plugins(state, pod, infos)
        chain = fw.run_filter_plugins(state, pod, ni)
        results = fw.pm.hook.schedsim_filter(state=state, pod=pod, node_info=ni)
        by_plugin = {s.plugin: s for s in results if s is not None and not s.is_success}
        expected = next(
            (by_plugin[n] for n in order if n in by_plugin and n not in state.skip_filter_plugins),
            None,
        )
        assert (chain if not chain.is_success else None) == expected, (pod.name, ni)


class _Recorder:
    """A test plugin that records calls and returns configured statuses."""

    name: ClassVar[str] = "Recorder"
    calls: ClassVar[list[str]] = []

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        self.pre = args.get("pre")
        self.filter_status = args.get("filter")

    def schedsim_pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | PreFilterResult | None:
        _Recorder.calls.append("pre_filter")
        return self.pre  # type: ignore[no-any-return]

    def schedsim_filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        _Recorder.calls.append("filter")
        if self.filter_status == "raise":
            raise RuntimeError("boom")
        return self.filter_status  # type: ignore[no-any-return]


class _FewerArgs:
    """Implements Filter with fewer arguments than the spec (allowed, as in pluggy)."""

    name: ClassVar[str] = "FewerArgs"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        pass

    def schedsim_filter(self, node_info: NodeInfo) -> Status | None:
        node = node_info.node
        if node is not None and node.name == "no":
            return Status(Code.Unschedulable, ("said no",))
        return None


class _Typo:
    name: ClassVar[str] = "Typo"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        pass

    def schedsim_filtr(self, node_info: NodeInfo) -> None:
        pass


def _framework(names: Sequence[str], args: Mapping[str, Any] | None = None) -> Framework:
    registry = {"Recorder": _Recorder, "FewerArgs": _FewerArgs, "Typo": _Typo}
    registry.update(discover_plugins())
    profile = Profile(
        plugins={"preFilter": tuple(names), "filter": tuple(names), "reserve": ()},
        plugin_args={"Recorder": args or {}},
        explicit=frozenset(names),
    )
    return Framework(profile, Handle(), registry)  # type: ignore[arg-type]


def test_pre_filter_skip_skips_that_plugins_filter() -> None:
    """A PreFilter returning Skip puts the plugin in SkipFilterPlugins."""
    _Recorder.calls.clear()
    fw = _framework(["Recorder"], {"pre": Status(Code.Skip), "filter": Status(Code.Unschedulable)})
    state = CycleState()
    _, status, _ = fw.run_pre_filter_plugins(state, _pod("p"), [])
    assert status.is_success and state.skip_filter_plugins == {"Recorder"}
    assert fw.run_filter_plugins(state, _pod("p"), SnapshotNodeInfo(_node("n"))).is_success
    assert _Recorder.calls == ["pre_filter"]


def test_pre_filter_result_with_no_nodes_is_unresolvable() -> None:
    """An empty PreFilterResult: UnschedulableAndUnresolvable "node(s) didn't satisfy plugin
    <name>" (RunPreFilterPlugins)."""
    fw = _framework(["Recorder"], {"pre": PreFilterResult(frozenset())})
    _, status, plugins = fw.run_pre_filter_plugins(CycleState(), _pod("p"), [])
    assert status.code is Code.UnschedulableAndUnresolvable
    assert status.reasons == ("node(s) didn't satisfy plugin Recorder",)
    assert plugins == ("Recorder",)


def test_filter_exception_and_non_rejection_codes_become_error_status() -> None:
    """A Filter status that is not a rejection is wrapped as Error
    `running "<plugin>" filter plugin: ...` (RunFilterPlugins, Go %q quoting); so is an
    exception."""
    ni = SnapshotNodeInfo(_node("n"))
    fw = _framework(["Recorder"], {"filter": "raise"})
    st = fw.run_filter_plugins(CycleState(), _pod("p"), ni)
    assert st.code is Code.Error and st.plugin == "Recorder"
    assert st.reasons == ('running "Recorder" filter plugin: RuntimeError: boom',)
    fw = _framework(["Recorder"], {"filter": Status(Code.Wait, ("later",))})
    st = fw.run_filter_plugins(CycleState(), _pod("p"), ni)
    assert st.code is Code.Error and "later" in st.message


def test_plugin_with_fewer_arguments_than_the_spec_runs_in_the_chain() -> None:
    """pluggy allows implementations to take a subset of the spec's arguments."""
    fw = _framework(["FewerArgs"])
    assert fw.run_filter_plugins(CycleState(), _pod("p"), SnapshotNodeInfo(_node("yes"))).is_success
    st = fw.run_filter_plugins(CycleState(), _pod("p"), SnapshotNodeInfo(_node("no")))
    assert st == Status(Code.Unschedulable, ("said no",), "FewerArgs")


def test_misspelled_hook_and_unknown_plugin_are_rejected() -> None:
    """pluggy validates hook names; an explicitly enabled unknown plugin is an error (as
    kube-scheduler's "plugin X does not exist")."""
    with pytest.raises(PluginError, match="schedsim_filtr"):
        _framework(["Typo"])
    with pytest.raises(PluginError, match="'Nope' is not registered"):
        _framework(["Nope"])


def test_invalid_plugin_args_are_rejected() -> None:
    """NodeResourcesFitArgs are validated at construction."""
    profile = profile_from_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {"pluginConfig": [{"name": "NodeResourcesFit", "args": {"ignoredResources": 3}}]}
            ],
        }
    )
    with pytest.raises(PluginError, match="ignoredResources"):
        Framework(profile, Handle())


def test_config_disabled_and_enabled_plugins_follow_merge_rules() -> None:
    """config v1 mergePlugins + frameworkruntime expandMultiPointPlugins: disabled plugins are
    removed; a MultiPoint (default) plugin re-enabled at a point moves to the front; plugins
    enabled only at that point run after the MultiPoint ones; "*" disables every default."""
    cfg = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "custom",
                "plugins": {
                    "multiPoint": {"enabled": [{"name": "Extra"}]},
                    "filter": {
                        "enabled": [{"name": "Custom"}, {"name": "NodeResourcesFit"}],
                        "disabled": [{"name": "TaintToleration"}],
                    },
                    "preFilter": {"disabled": [{"name": "*"}], "enabled": [{"name": "Custom"}]},
                },
                "pluginConfig": [
                    {"name": "NodeResourcesFit", "args": {"ignoredResources": ["a.com/x"]}}
                ],
            }
        ],
    }
    profile = profile_from_config(cfg)
    assert profile.scheduler_name == "custom"
    filters = profile.plugins["filter"]
    assert "TaintToleration" not in filters
    assert filters[0] == "NodeResourcesFit"  # override: first
    assert filters[-2:] == ("Extra", "Custom")  # custom MultiPoint last of part 2, then part 3
    assert filters.index("NodeName") < filters.index("NodePorts")  # defaults keep their order
    assert profile.plugins["preFilter"] == ("Custom",)
    assert profile.explicit >= {"Custom", "Extra", "NodeResourcesFit"}


def test_framework_from_config_runs_filters_in_that_order() -> None:
    """The runtime's Filter chain follows the profile (only plugins implementing Filter)."""
    profile = profile_from_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {
                    "plugins": {
                        "filter": {
                            "enabled": [{"name": "NodeResourcesFit"}],
                            "disabled": [{"name": "TaintToleration"}],
                        }
                    }
                }
            ],
        }
    )
    fw = Framework(profile, Handle())
    assert fw.filter_plugin_names == (
        "NodeResourcesFit",
        "NodeUnschedulable",
        "NodeName",
        "NodeAffinity",
        "NodePorts",
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "PodTopologySpread",
        "InterPodAffinity",
        "DynamicResources",
    )


def test_load_scheduler_config_errors_name_file_and_field(tmp_path: Any) -> None:
    """Bad configuration files give `FILE: KubeSchedulerConfiguration: FIELD: problem`."""
    f = tmp_path / "sched.yaml"
    f.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\nprofiles:\n- plugins: {filter: {enabled: 3}}\n"
    )
    with pytest.raises(ManifestError) as e:
        load_scheduler_config(str(f))
    assert str(e.value) == (
        f"{f}: KubeSchedulerConfiguration: profiles[0].plugins.filter.enabled: "
        "expected a list, got a number"
    )
    f.write_text("kind: Pod\n")
    with pytest.raises(ManifestError, match="expected KubeSchedulerConfiguration"):
        load_scheduler_config(str(f))


def test_fit_error_message_counts_and_sorts_reasons_like_kube_scheduler() -> None:
    """FitError.Error(): "0/N nodes are available: " + sorted "<count> <reason>" joined by
    ", " + "." (reasons of all nodes; strings sorted, so "1 node(s)..." < "3 Insufficient")."""
    taint = Status(Code.UnschedulableAndUnresolvable, ("node(s) had untolerated taint(s)",))
    cpu = Status(Code.Unschedulable, ("Insufficient cpu",))
    both = Status(Code.Unschedulable, ("Insufficient cpu", "Insufficient memory"))
    err = FitError(4, Diagnosis({"a": cpu, "b": cpu, "c": both, "d": taint}))
    assert err.message == (
        "0/4 nodes are available: 1 Insufficient memory, "
        "1 node(s) had untolerated taint(s), 3 Insufficient cpu."
    )
    pre = Status(Code.UnschedulableAndUnresolvable, ("pre says no",), "P")
    assert FitError(2, Diagnosis(pre_filter_status=pre)).message == (
        "0/2 nodes are available: pre says no."
    )
