"""Typed plugin args (`schedsim.framework.args`): v1 defaults as apis/config/v1/defaults.go
sets them and validation as validation_pluginargs.go words it (cases after
validation_pluginargs_test.go TestValidateFitArgs / TestValidateNodeResourcesBalancedAllocationArgs
and defaults_test.go TestPluginArgsDefaults)."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from schedsim.framework import Framework, Handle, PluginError, default_profile, discover_plugins
from schedsim.framework.args import (
    ArgsError,
    NodeAffinityArgs,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
    no_args,
)

CPU_MEM = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))


def test_fit_defaults() -> None:
    """SetDefaults_NodeResourcesFitArgs: LeastAllocated over cpu and memory, weight 1."""
    assert NodeResourcesFitArgs.from_mapping({}) == NodeResourcesFitArgs(
        scoring_strategy=ScoringStrategy("LeastAllocated", CPU_MEM, ())
    )
    assert NodeResourcesFitArgs.from_mapping(None).scoring_strategy.resources == CPU_MEM


def test_fit_defaults_fill_resources_and_zero_weights() -> None:
    """A strategy without resources gets cpu/memory; a weight of 0 (or unset) becomes 1."""
    got = NodeResourcesFitArgs.from_mapping(
        {"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu"}]}}
    )
    assert got.scoring_strategy == ScoringStrategy("MostAllocated", (ResourceSpec("cpu", 1),))
    got = NodeResourcesFitArgs.from_mapping({"scoringStrategy": {"type": "MostAllocated"}})
    assert got.scoring_strategy.resources == CPU_MEM


def test_fit_requested_to_capacity_ratio_shape() -> None:
    """The shape is kept for RequestedToCapacityRatio."""
    got = NodeResourcesFitArgs.from_mapping(
        {
            "scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "requestedToCapacityRatio": {
                    "shape": [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]
                },
            }
        }
    )
    assert got.scoring_strategy.shape == (
        UtilizationShapePoint(0, 10),
        UtilizationShapePoint(100, 0),
    )


def rtcr(*points: tuple[int, int]) -> dict[str, Any]:
    shape = [{"utilization": u, "score": s} for u, s in points]
    return {
        "scoringStrategy": {
            "type": "RequestedToCapacityRatio",
            "requestedToCapacityRatio": {"shape": shape},
        }
    }


@pytest.mark.parametrize(
    ("raw", "field", "problem"),
    [
        pytest.param(
            {"ignoredResources": ["-bad-"]},
            "ignoredResources[0]",
            'Invalid value: "-bad-": ',
            id="IgnoredResources: invalid value",
        ),
        pytest.param(
            {"ignoredResourceGroups": ["example.com/aaa"]},
            "ignoredResourceGroups[0]",
            "Invalid value: \"example.com/aaa\": resource group name can't contain '/'",
            id="IgnoredResourceGroups: contains slash",
        ),
        pytest.param(
            {"scoringStrategy": {"type": "Invalid"}},
            "scoringStrategy.type",
            'Unsupported value: "Invalid": supported values: "LeastAllocated", '
            '"MostAllocated", "RequestedToCapacityRatio"',
            id="ScoringStrategy: type is unsupported",
        ),
        pytest.param(
            {
                "scoringStrategy": {
                    "type": "LeastAllocated",
                    "resources": [{"name": "cpu", "weight": 101}],
                }
            },
            "scoringStrategy.resources[0].weight",
            "Invalid value: 101: resource weight of cpu not in valid range (0, 100]",
            id="ScoringStrategy: weight greater than 100",
        ),
        pytest.param(
            {
                "scoringStrategy": {
                    "type": "MostAllocated",
                    "resources": [{"name": "cpu", "weight": -1}],
                }
            },
            "scoringStrategy.resources[0].weight",
            "Invalid value: -1: resource weight of cpu not in valid range (0, 100]",
            id="ScoringStrategy: weight less than 0",
        ),
        pytest.param(
            rtcr(),
            "scoringStrategy.requestedToCapacityRatio.shape",
            "Required value: at least one point must be specified",
            id="RequestedToCapacityRatio: empty shape",
        ),
        pytest.param(
            rtcr((10, 1), (10, 2)),
            "scoringStrategy.requestedToCapacityRatio.shape[1].utilization",
            "Invalid value: 10: values must be sorted in increasing order",
            id="RequestedToCapacityRatio: utilization not increasing",
        ),
        pytest.param(
            rtcr((0, 1), (101, 2)),
            "scoringStrategy.requestedToCapacityRatio.shape[1].utilization",
            "Invalid value: 101: not in valid range [0, 100]",
            id="RequestedToCapacityRatio: utilization greater than 100",
        ),
        pytest.param(
            rtcr((0, 11)),
            "scoringStrategy.requestedToCapacityRatio.shape[0].score",
            "Invalid value: 11: not in valid range [0, 10]",
            id="RequestedToCapacityRatio: score greater than 10",
        ),
        pytest.param(
            {"scoringStrategy": {"type": "RequestedToCapacityRatio"}},
            "scoringStrategy.requestedToCapacityRatio.shape",
            "Required value: at least one point must be specified",
            id="extra: RequestedToCapacityRatio without a shape",
        ),
        pytest.param({"bogus": 1}, "bogus", "unknown field", id="extra: unknown field"),
        pytest.param(
            {"scoringStrategy": {"resources": []}},
            "scoringStrategy.type",
            'Unsupported value: ""',
            id="extra: a strategy without type is not defaulted",
        ),
        pytest.param(
            {
                "scoringStrategy": {
                    "type": "MostAllocated",
                    "resources": [{"name": "cpu", "weight": "1"}],
                }
            },
            "scoringStrategy.resources[0].weight",
            "expected an integer, got str",
            id="extra: weight not an integer",
        ),
        pytest.param(
            {"kind": "NodeAffinityArgs"},
            "kind",
            'expected NodeResourcesFitArgs, got "NodeAffinityArgs"',
            id="extra: wrong kind",
        ),
    ],
)
def test_fit_invalid(raw: dict[str, Any], field: str, problem: str) -> None:
    """ValidateNodeResourcesFitArgs: the first problem, its field path and upstream's words."""
    with pytest.raises(ArgsError) as info:
        NodeResourcesFitArgs.from_mapping(raw)
    assert info.value.field == field
    assert info.value.problem.startswith(problem), info.value.problem
    assert isinstance(info.value, ValueError)


def test_balanced_defaults() -> None:
    """SetDefaults_NodeResourcesBalancedAllocationArgs: cpu and memory; weight 0 -> 1."""
    assert NodeResourcesBalancedAllocationArgs.from_mapping({}).resources == CPU_MEM
    got = NodeResourcesBalancedAllocationArgs.from_mapping(
        {"resources": [{"name": "nvidia.com/gpu"}]}
    )
    assert got.resources == (ResourceSpec("nvidia.com/gpu", 1),)


@pytest.mark.parametrize(
    ("raw", "field", "problem"),
    [
        pytest.param(
            {"resources": [{"name": "cpu", "weight": 2}]},
            "resources[0].weight",
            "Invalid value: 2: must be 1",
            id="weight is not 1",
        ),
        pytest.param(
            {"resources": [{"name": "cpu", "weight": 1}, {"name": "cpu", "weight": 1}]},
            "resources[1].name",
            'Duplicate value: "cpu"',
            id="duplicated resource name",
        ),
    ],
)
def test_balanced_invalid(raw: dict[str, Any], field: str, problem: str) -> None:
    """ValidateNodeResourcesBalancedAllocationArgs."""
    with pytest.raises(ArgsError) as info:
        NodeResourcesBalancedAllocationArgs.from_mapping(raw)
    assert (info.value.field, info.value.problem) == (field, problem)


def test_node_affinity_args() -> None:
    """NodeAffinityArgs: addedAffinity is decoded; an invalid requirement names its path."""
    assert NodeAffinityArgs.from_mapping({}).added_affinity is None
    with pytest.raises(ArgsError) as info:
        NodeAffinityArgs.from_mapping(
            {
                "addedAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "a", "operator": "In"}]}
                        ]
                    }
                }
            }
        )
    assert info.value.field == (
        "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        ".nodeSelectorTerms[0].matchExpressions[0].values"
    )


NO_ARGS_PLUGINS = (
    "DefaultBinder",
    "ImageLocality",
    "NodeName",
    "NodePorts",
    "NodeUnschedulable",
    "NodeVolumeLimits",
    "PrioritySort",
    "TaintToleration",
    "VolumeRestrictions",
    "VolumeZone",
)
"""The in-tree plugins that have no args type upstream
(pkg/scheduler/apis/config/types_pluginargs.go defines none for them); schedsim refuses args
for them rather than dropping them."""


def test_no_args() -> None:
    """`no_args`: ``apiVersion`` and ``kind`` pass; any other field is named, sorted."""
    no_args("NodePorts", {})
    no_args("NodePorts", {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "x"})
    with pytest.raises(ValueError) as e:
        no_args("NodePorts", {"zeta": 1, "kind": "x", "alpha": 2})
    assert str(e.value) == "NodePorts takes no args, got alpha, zeta"


@pytest.mark.parametrize("name", NO_ARGS_PLUGINS)
def test_plugins_without_args_refuse_args(name: str) -> None:
    """Each of them: built with only ``apiVersion``/``kind``, refused with a field, and the
    Framework names the plugin (``plugin 'X': X takes no args, got foo``)."""
    factory = discover_plugins()[name]
    factory({"apiVersion": "kubescheduler.config.k8s.io/v1"}, Handle())
    with pytest.raises(ValueError, match=f"^{name} takes no args, got foo$"):
        factory({"foo": 1}, Handle())
    profile = attrs.evolve(default_profile(), plugin_args={name: {"foo": 1}})
    assert any(name in names for names in profile.plugins.values())  # a default plugin
    with pytest.raises(PluginError) as e:
        Framework(profile, Handle())
    assert str(e.value) == f"plugin {name!r}: {name} takes no args, got foo"
