"""KubeSchedulerConfiguration v1 decoded strictly, nothing lost silently: unknown fields and
other apiVersions refused (kube-scheduler's strict codec), ValidateKubeSchedulerConfiguration's
checks (duplicate schedulerName, percentageOfNodesToScore range, parallelism, backoff,
resourceLock, plugins invalid in v1, duplicate pluginConfig), fields without effect warned
about by name, extenders refused, multiple profiles, and plugin args errors naming
``profiles[i].pluginConfig[j].args.<field>``."""

from __future__ import annotations

import pickle
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import pytest

from schedsim.api.errors import FieldError
from schedsim.cli import main
from schedsim.framework import (
    Framework,
    Handle,
    PluginError,
    SchedulerConfiguration,
    load_scheduler_configuration,
    scheduler_configuration_from_mapping,
)

V1 = "kubescheduler.config.k8s.io/v1"


def _cfg(**fields: Any) -> dict[str, Any]:
    return {"apiVersion": V1, "kind": "KubeSchedulerConfiguration", **fields}


def _refused(raw: Mapping[str, Any]) -> str:
    with pytest.raises(FieldError) as e:
        scheduler_configuration_from_mapping(raw)
    return str(e.value)


def test_unknown_fields_are_refused_at_every_level() -> None:
    """The v1 types have no such fields: the strict decoder says `unknown field`."""
    assert _refused(_cfg(profile=[])) == 'profile: unknown field "profile"'
    assert _refused(_cfg(profiles=[{"name": "x"}])) == 'profiles[0].name: unknown field "name"'
    assert (
        _refused(_cfg(profiles=[{"plugins": {"scores": {}}}]))
        == 'profiles[0].plugins.scores: unknown field "scores"'
    )
    raw = _cfg(profiles=[{"plugins": {"score": {"enabled": [{"name": "A", "wieght": 2}]}}}])
    assert _refused(raw) == 'profiles[0].plugins.score.enabled[0].wieght: unknown field "wieght"'
    raw = _cfg(profiles=[{"plugins": {"filter": {"enable": []}}}])
    assert _refused(raw) == 'profiles[0].plugins.filter.enable: unknown field "enable"'
    raw = _cfg(profiles=[{"pluginConfig": [{"name": "A", "arg": {}}]}])
    assert _refused(raw) == 'profiles[0].pluginConfig[0].arg: unknown field "arg"'
    assert (
        _refused(_cfg(leaderElection={"leaderElection": True}))
        == 'leaderElection.leaderElection: unknown field "leaderElection"'
    )


def test_api_version_must_be_v1() -> None:
    """kube-scheduler 1.34 serves only kubescheduler.config.k8s.io/v1 (v1beta3 was removed
    in 1.29); a file without apiVersion is refused too, as the codec does."""
    raw = _cfg()
    raw["apiVersion"] = "kubescheduler.config.k8s.io/v1beta3"
    assert _refused(raw) == (
        "apiVersion: unsupported version 'kubescheduler.config.k8s.io/v1beta3': "
        "kube-scheduler 1.34 reads only kubescheduler.config.k8s.io/v1"
    )
    del raw["apiVersion"]
    assert _refused(raw) == "apiVersion: required: use kubescheduler.config.k8s.io/v1"


def test_fields_without_effect_are_accepted_with_a_warning_naming_them() -> None:
    """leaderElection, clientConnection, parallelism, ... cannot change a simulation."""
    cfg = scheduler_configuration_from_mapping(
        _cfg(
            parallelism=16,
            leaderElection={"leaderElect": False},
            clientConnection={"qps": 50.0, "burst": 100},
            podInitialBackoffSeconds=2,
            podMaxBackoffSeconds=20,
        )
    )
    assert cfg.warnings == (
        "parallelism, leaderElection, clientConnection: accepted, no effect on a simulation",
    )
    assert scheduler_configuration_from_mapping(_cfg()).warnings == ()


def test_backoff_seconds_are_applied_with_v1_defaults() -> None:
    """podInitialBackoffSeconds / podMaxBackoffSeconds drive the scheduling queue (issue 14):
    v1 defaults 1 and 10 (SetDefaults_KubeSchedulerConfiguration), values kept as given."""
    cfg = scheduler_configuration_from_mapping(
        _cfg(podInitialBackoffSeconds=2, podMaxBackoffSeconds=20)
    )
    assert (cfg.pod_initial_backoff_seconds, cfg.pod_max_backoff_seconds) == (2, 20)
    default = scheduler_configuration_from_mapping(_cfg())
    assert (default.pod_initial_backoff_seconds, default.pod_max_backoff_seconds) == (1, 10)


def test_profiles_must_share_the_queue_sort_plugin() -> None:
    """validateCommonQueueSort (validation_test.go "different-queue-sort"): every profile
    sorts the one queue the same way."""
    raw = _cfg(
        profiles=[
            {"schedulerName": "a"},
            {
                "schedulerName": "b",
                "plugins": {
                    "queueSort": {"enabled": [{"name": "Other"}], "disabled": [{"name": "*"}]}
                },
            },
        ]
    )
    assert _refused(raw) == (
        "profiles[1].plugins.queueSort: Invalid value: [Other]: must be the same for all profiles"
    )


def test_fields_without_effect_are_still_validated_as_upstream() -> None:
    """ValidateKubeSchedulerConfiguration's wording for parallelism, backoff and
    resourceLock; wrong types are refused."""
    assert _refused(_cfg(parallelism=0)) == (
        "parallelism: Invalid value: 0: should be an integer value greater than zero"
    )
    assert _refused(_cfg(podInitialBackoffSeconds=5, podMaxBackoffSeconds=2)) == (
        "podMaxBackoffSeconds: Invalid value: 2: must be greater than or equal to "
        "PodInitialBackoffSeconds"
    )
    assert _refused(_cfg(leaderElection={"resourceLock": "endpoints"})) == (
        'leaderElection.resourceLock: Invalid value: "endpoints": resourceLock value must be '
        '"leases"'
    )
    assert _refused(_cfg(clientConnection={"burst": "many"})) == (
        "clientConnection.burst: expected an integer, got a string"
    )


def test_extenders_are_refused() -> None:
    """Scheduler extenders are HTTP webhooks schedsim does not emulate."""
    raw = _cfg(extenders=[{"urlPrefix": "http://x", "filterVerb": "filter"}])
    assert _refused(raw) == (
        "extenders: not supported: schedsim does not emulate scheduler extenders"
    )
    assert scheduler_configuration_from_mapping(_cfg(extenders=[])).warnings == ()


def test_multiple_profiles_are_kept_and_found_by_scheduler_name() -> None:
    """Every profile is loaded (with several, each names its scheduler: see
    test_profile_without_scheduler_name_is_refused); a duplicate name is refused
    (field.Duplicate); the global percentageOfNodesToScore applies to profiles without their
    own."""
    cfg = scheduler_configuration_from_mapping(
        _cfg(
            percentageOfNodesToScore=40,
            profiles=[
                {"schedulerName": "default-scheduler"},
                {
                    "schedulerName": "bin-packing",
                    "percentageOfNodesToScore": 100,
                    "plugins": {"score": {"enabled": [{"name": "NodeResourcesFit", "weight": 5}]}},
                },
            ],
        )
    )
    assert [p.scheduler_name for p in cfg.profiles] == ["default-scheduler", "bin-packing"]
    assert cfg.percentage_of_nodes_to_score == 40
    assert cfg.profiles[0].percentage_of_nodes_to_score == 40
    packing = cfg.profile_for("bin-packing")
    assert packing is cfg.profiles[1] and packing.percentage_of_nodes_to_score == 100
    assert (
        packing.weight("NodeResourcesFit") == 5 and cfg.profiles[0].weight("NodeResourcesFit") == 1
    )
    assert cfg.profile_for("other") is None
    assert pickle.loads(pickle.dumps(cfg)) == cfg
    raw = _cfg(profiles=[{"schedulerName": "a"}, {"schedulerName": "a"}])
    assert _refused(raw) == (
        'profiles[1].schedulerName: Duplicate value: "a" (also profiles[0].schedulerName)'
    )
    assert SchedulerConfiguration().profiles[0].scheduler_name == "default-scheduler"


def test_plugins_removed_in_v1_and_duplicate_plugin_config_are_refused() -> None:
    """validatePluginConfig: EBSLimits & co. were invalid in v1; a plugin configured twice
    is a Duplicate value."""
    raw = _cfg(profiles=[{"plugins": {"filter": {"enabled": [{"name": "EBSLimits"}]}}}])
    assert _refused(raw) == (
        'profiles[0].plugins.filter.enabled[0]: Invalid value: "EBSLimits": was invalid in '
        'version "kubescheduler.config.k8s.io/v1" (KubeSchedulerConfiguration is version '
        '"kubescheduler.config.k8s.io/v1")'
    )
    raw = _cfg(profiles=[{"pluginConfig": [{"name": "A"}, {"name": "A"}]}])
    assert _refused(raw) == 'profiles[0].pluginConfig[1]: Duplicate value: "A"'


def test_weights_outside_score_and_zero_weights_are_named_in_warnings() -> None:
    """Weights apply only at score and multiPoint (getScoreWeights); weight 0 counts as 1
    (getScoreWeights: "a weight of zero is not permitted" -> 1)."""
    cfg = scheduler_configuration_from_mapping(
        _cfg(
            profiles=[
                {
                    "plugins": {
                        "filter": {"enabled": [{"name": "NodePorts", "weight": 3}]},
                        "score": {"enabled": [{"name": "ImageLocality", "weight": 0}]},
                    }
                }
            ]
        )
    )
    assert cfg.warnings == (
        "profiles[0].plugins.filter.enabled[0].weight: ignored: weights apply at score and "
        "multiPoint",
        "profiles[0].plugins.score.enabled[0].weight: 0 counts as 1, as in kube-scheduler",
    )
    assert cfg.profiles[0].weight("ImageLocality") == 1


def test_disabling_a_plugin_that_cannot_be_there_is_warned_about() -> None:
    """kube-scheduler's mergePluginSet only removes default or enabled plugins, and its
    validation (validatePluginSetForInvalidPlugins) looks at ``enabled`` only, so a disabled
    name that is no in-tree plugin and enabled nowhere has no effect and no error upstream:
    schedsim names it (a typo there would otherwise go unnoticed). ``*``, in-tree plugins and
    plugins the profile enables elsewhere are quiet."""
    cfg = scheduler_configuration_from_mapping(
        _cfg(
            profiles=[
                {
                    "plugins": {
                        "multiPoint": {
                            "enabled": [{"name": "MyPlugin"}],
                            "disabled": [{"name": "ImageLocality"}, {"name": "EBSLimits"}],
                        },
                        "score": {
                            "disabled": [
                                {"name": "NodeResourcesLeastAllocated"},
                                {"name": "MyPlugin"},
                                {"name": "*"},
                            ]
                        },
                    }
                }
            ]
        )
    )
    assert cfg.warnings == (
        'profiles[0].plugins.multiPoint.disabled[1]: "EBSLimits" was removed from '
        "kube-scheduler; disabling it has no effect",
        'profiles[0].plugins.score.disabled[0]: "NodeResourcesLeastAllocated" is neither an '
        "in-tree plugin nor enabled in this profile; disabling it has no effect",
    )


def test_in_tree_plugin_not_emulated_is_recognised_not_unregistered() -> None:
    """SchedulingGates is an in-tree 1.34 plugin: enabling it explicitly is not an
    unknown plugin; the framework lists it as not emulated."""
    cfg = scheduler_configuration_from_mapping(
        _cfg(
            profiles=[
                {"plugins": {"filter": {"enabled": [{"name": "SchedulingGates"}]}}},
            ]
        )
    )
    fw = Framework(cfg.profiles[0], Handle())
    assert "SchedulingGates" in fw.not_emulated


class _Picky:
    name: ClassVar[str] = "Picky"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        if args.get("limit", 0) < 0:
            raise FieldError("limit", "Invalid value: -1: must be non-negative")

    def schedsim_filter(self, state: Any, pod: Any, node_info: Any) -> None:
        return None


def test_plugin_args_errors_name_their_config_field() -> None:
    """A factory raising an error with field/problem (framework.args.ArgsError) is reported
    at profiles[i].pluginConfig[j].args.<field>."""
    cfg = scheduler_configuration_from_mapping(
        _cfg(
            profiles=[
                {"schedulerName": "first"},
                {
                    "schedulerName": "second",
                    "plugins": {"filter": {"enabled": [{"name": "Picky"}]}},
                    "pluginConfig": [{"name": "Other"}, {"name": "Picky", "args": {"limit": -1}}],
                },
            ]
        )
    )
    with pytest.raises(PluginError) as e:
        Framework(cfg.profiles[1], Handle(), {"Picky": _Picky})  # type: ignore[dict-item]
    assert str(e.value) == (
        "KubeSchedulerConfiguration: profiles[1].pluginConfig[1].args.limit: "
        "Invalid value: -1: must be non-negative"
    )


def test_cli_refuses_unknown_field_with_exit_2_and_prints_warnings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`FILE: KubeSchedulerConfiguration: FIELD: unknown field "x"`, exit 2; warnings go to
    stderr with the file name."""
    bad = tmp_path / "bad.yaml"
    bad.write_text(f"apiVersion: {V1}\nkind: KubeSchedulerConfiguration\nx: 1\n")
    assert main(["plugins", "--config", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err == f'schedsim: error: {bad}: KubeSchedulerConfiguration: x: unknown field "x"\n'
    ok = tmp_path / "ok.yaml"
    ok.write_text(
        f"apiVersion: {V1}\nkind: KubeSchedulerConfiguration\nparallelism: 4\n"
        "profiles:\n- plugins:\n    filter:\n      enabled: [{name: SchedulingGates}]\n"
    )
    assert main(["plugins", "--config", str(ok)]) == 0
    err = capsys.readouterr().err
    assert (
        f"warning: {ok}: KubeSchedulerConfiguration: parallelism: accepted, no effect on a "
        "simulation\n" in err
    )
    assert (
        f"warning: {ok}: plugin(s) SchedulingGates enabled but not emulated yet: they do "
        "not run\n" in err
    )
    assert load_scheduler_configuration(str(ok)).profiles[0].config_path == "profiles[0]"


def _framework_of(plugins: Mapping[str, Any]) -> Framework:
    conf = scheduler_configuration_from_mapping(_cfg(profiles=[{"plugins": plugins}]))
    return Framework(conf.profiles[0], Handle())


@pytest.mark.parametrize(
    ("point", "plugin", "interface"),
    [
        ("score", "NodePorts", "ScorePlugin"),
        ("filter", "ImageLocality", "FilterPlugin"),
        ("preScore", "NodeName", "PreScorePlugin"),
    ],
)
def test_plugin_enabled_at_a_point_it_does_not_implement_is_refused(
    point: str, plugin: str, interface: str
) -> None:
    """kube-scheduler's NewFramework -> updatePluginList refuses a plugin enabled explicitly at
    an extension point whose interface it does not implement, with
    ``plugin "<name>" does not extend <Interface> plugin`` (frameworkruntime/framework.go)."""
    with pytest.raises(PluginError) as e:
        _framework_of({point: {"enabled": [{"name": plugin}]}})
    assert str(e.value) == (
        f"KubeSchedulerConfiguration: profiles[0].plugins.{point}.enabled[0]: "
        f'plugin "{plugin}" does not extend {interface} plugin'
    )


def test_plugin_enabled_at_a_point_it_implements_is_accepted() -> None:
    """The same check passes a plugin that has the hook (NodeResourcesFit has Score)."""
    fw = _framework_of({"score": {"enabled": [{"name": "NodeResourcesFit", "weight": 3}]}})
    assert fw.score_weights["NodeResourcesFit"] == 3
    assert fw.config_warnings == ()


def test_multi_point_weight_on_a_plugin_without_score_is_warned_about() -> None:
    """Under multiPoint kube-scheduler enables a plugin only at the points it implements and
    never reads the weight of one without Score (expandMultiPointPlugins); schedsim says so
    instead of dropping it silently. A weight on a Score plugin is no warning."""
    fw = _framework_of(
        {
            "multiPoint": {
                "enabled": [
                    {"name": "NodePorts", "weight": 5},
                    {"name": "ImageLocality", "weight": 4},
                ]
            }
        }
    )
    assert fw.config_warnings == (
        "KubeSchedulerConfiguration: profiles[0].plugins.multiPoint.enabled[0].weight: "
        "ignored: NodePorts has no Score extension",
    )
    assert fw.score_weights["ImageLocality"] == 4


def test_cli_refuses_a_score_entry_for_a_plugin_without_score(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exit 2 with FILE: KubeSchedulerConfiguration: FIELD: problem (fresh-user repro: a score
    weight on NodePorts ran with exit 0)."""
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(
        f"apiVersion: {V1}\nkind: KubeSchedulerConfiguration\nprofiles:\n- plugins:\n"
        "    score:\n      enabled:\n      - {name: NodePorts, weight: 5}\n"
    )
    assert main(["simulate", "--config", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert (
        f"{cfg}: KubeSchedulerConfiguration: profiles[0].plugins.score.enabled[0]: "
        'plugin "NodePorts" does not extend ScorePlugin plugin'
    ) in err


def test_profiles_may_configure_other_plugins_differently() -> None:
    """validateCommonQueueSort compares only the ``queueSort`` sections and the args of the
    QueueSort plugin named there: a second profile with its own NodeResourcesFit strategy or
    an extra multiPoint plugin is valid (the usual "bin-packing profile" setup of the
    kube-scheduler docs, Scheduling Framework > Multiple profiles)."""
    raw = _cfg(
        profiles=[
            {"schedulerName": "default-scheduler"},
            {
                "schedulerName": "packer",
                "plugins": {"multiPoint": {"enabled": [{"name": "NodeResourcesFit", "weight": 5}]}},
                "pluginConfig": [
                    {
                        "name": "NodeResourcesFit",
                        "args": {"scoringStrategy": {"type": "MostAllocated"}},
                    }
                ],
            },
        ]
    )
    conf = scheduler_configuration_from_mapping(raw)
    assert [p.scheduler_name for p in conf.profiles] == ["default-scheduler", "packer"]


def test_profiles_must_share_the_queue_sort_args() -> None:
    """validateCommonQueueSort: the args of the QueueSort plugin the first profile enables must
    be the same in every profile (validation_test.go "different-queue-sort-args" shape)."""
    sort = {"queueSort": {"enabled": [{"name": "PrioritySort"}], "disabled": [{"name": "*"}]}}
    raw = _cfg(
        profiles=[
            {"schedulerName": "a", "plugins": sort},
            {
                "schedulerName": "b",
                "plugins": sort,
                "pluginConfig": [{"name": "PrioritySort", "args": {"x": 1}}],
            },
        ]
    )
    assert _refused(raw) == (
        'profiles[1].pluginConfig.args: Invalid value: "PrioritySort": queueSort must be the '
        "same for all profiles"
    )


class _UndoOnly:
    name: ClassVar[str] = "UndoOnly"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        self.undone: list[str] = []

    def schedsim_unreserve(self, state: Any, pod: Any, node_name: str) -> None:
        self.undone.append(node_name)


def test_plugin_with_any_hook_of_the_point_may_be_enabled_there() -> None:
    """A plugin implementing only Unreserve belongs at ``reserve`` (schedsim hooks are one
    method each, where Go's ReservePlugin needs both): enabling it there is accepted and its
    Unreserve runs (fresh-user finding: the gang example's Unreserve could only be enabled
    through multiPoint)."""
    cfg = scheduler_configuration_from_mapping(
        _cfg(profiles=[{"plugins": {"reserve": {"enabled": [{"name": "UndoOnly"}]}}}])
    )
    fw = Framework(cfg.profiles[0], Handle(), {"UndoOnly": _UndoOnly})  # type: ignore[dict-item]
    plugin = fw.plugins["UndoOnly"]
    fw.run_reserve_plugins_unreserve(None, None, "n1")  # type: ignore[arg-type]
    assert plugin.undone == ["n1"]


@pytest.mark.parametrize(
    "profiles",
    [
        [{"schedulerName": ""}],
        [{"schedulerName": "a"}, {}],
    ],
)
def test_profile_without_scheduler_name_is_refused(profiles: list[dict[str, Any]]) -> None:
    """v1 defaulting gives "default-scheduler" only to a single profile whose schedulerName is
    absent (SetDefaults_KubeSchedulerConfiguration); otherwise an empty name fails
    validation with ``profiles[i].schedulerName: Required value`` (validation_test.go)."""
    i = len(profiles) - 1
    assert _refused(_cfg(profiles=profiles)) == f"profiles[{i}].schedulerName: Required value"


def test_lone_profile_without_scheduler_name_is_the_default_scheduler() -> None:
    """The v1 default for a single profile (SetDefaults_KubeSchedulerConfiguration)."""
    conf = scheduler_configuration_from_mapping(_cfg(profiles=[{}]))
    assert conf.profiles[0].scheduler_name == "default-scheduler"
