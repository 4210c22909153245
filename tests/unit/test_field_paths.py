"""Field paths in error messages, written as apimachinery's ``field.Path`` writes them
(k8s.io/apimachinery/pkg/util/validation/field/path.go; its path_test.go TestPath):
``Child`` joins with a dot, ``Index(0)`` is ``[0]``, ``Key("k")`` is ``[k]`` for every map
key, with or without dots or slashes (``NewPath("root").Child("first", "second").Index(0)
.Key("key")`` is ``root.first.second[0][key]``). One helper writes map keys everywhere:
`schedsim.api.loading.decode.key_path`; struct fields go through `decode.join`."""

from __future__ import annotations

from typing import Any

import pytest

from schedsim.api.errors import ManifestError
from schedsim.api.loading.decode import join, key_path
from schedsim.api.strategic_merge import NODE_MERGE_KEYS, PatchError, apply_strategic_merge_patch
from schedsim.api.validation import validate_object
from schedsim.autoscaler.nodegroups import parse_node_groups
from schedsim.framework.args import ArgsError, NodeResourcesFitArgs


def test_key_and_child_follow_field_path() -> None:
    """path_test.go TestPath's rows, and the Key of a dotted, slashed label key."""
    assert join(join("root", "first"), "second") == "root.first.second"
    assert key_path("root.first.second[0]", "key") == "root.first.second[0][key]"
    assert key_path(join("metadata", "labels"), "a.b") == "metadata.labels[a.b]"
    assert (
        key_path("spec.nodeSelector", "kubernetes.io/os") == "spec.nodeSelector[kubernetes.io/os]"
    )
    assert key_path("", "k") == "k"  # no parent: the key alone


def _pod(resources: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "i", "resources": resources}]},
    }


def test_validation_writes_resource_names_as_keys() -> None:
    """validateResourceRequirements (pkg/apis/core/validation): ``limPath.Key(resourceName)``,
    so a fractional extended resource is at ``...resources.limits[example.com/gpu]`` and a
    bad standard name at ``...requests[cpu2]``."""
    out = validate_object(_pod({"limits": {"example.com/gpu": "500m"}}), "Pod")
    assert out.errors[0][0] == "spec.containers[0].resources.limits[example.com/gpu]"
    out = validate_object(_pod({"requests": {"cpu2": "1"}}), "Pod")
    assert out.errors[0][0] == "spec.containers[0].resources.requests[cpu2]"


def test_validation_writes_device_capacity_names_as_keys() -> None:
    """validateMap (pkg/apis/resource/validation) writes each capacity under
    ``fldPath.Key(name)``: ``spec.devices[0].capacity[memory].value``."""
    slice_ = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "s"},
        "spec": {
            "driver": "gpu.example.com",
            "nodeName": "n",
            "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": "d", "capacity": {"memory": {"value": "-1"}}}],
        },
    }
    out = validate_object(slice_, "ResourceSlice")
    assert out.errors == [
        ("spec.devices[0].capacity[memory].value", "invalid value '-1': must be greater than or "
         "equal to 0")
    ]  # fmt: skip


def test_strategic_merge_directives_are_fields() -> None:
    """A directive is a field of the patch map, joined with a dot, even with a slash in it;
    inside a merging list the element is ``[]`` (no index: the patch names none)."""
    with pytest.raises(PatchError) as e:
        apply_strategic_merge_patch(
            {}, {"metadata": {"$deleteFromPrimitiveList/finalizers": "x"}}, NODE_MERGE_KEYS
        )
    assert e.value.field == "metadata.$deleteFromPrimitiveList/finalizers"
    with pytest.raises(PatchError) as e:
        patch = {"status": {"conditions": [{"type": "Ready", "$patch": "bogus"}]}}
        apply_strategic_merge_patch({}, patch, NODE_MERGE_KEYS)
    assert e.value.field == "status.conditions[].$patch"


def test_plugin_args_join_fields_and_indexes() -> None:
    """ArgsError paths: ``Child`` and ``Index`` (args have no map-typed fields)."""
    raw = {"scoringStrategy": {"type": "MostAllocated", "resources": [{"nmae": "cpu"}]}}
    with pytest.raises(ArgsError) as e:
        NodeResourcesFitArgs.from_mapping(raw)
    assert (e.value.field, e.value.problem) == (
        "scoringStrategy.resources[0].nmae",
        "unknown field",
    )


def test_node_group_selector_values_are_written_under_their_key() -> None:
    """A node group's ``nodeSelector`` value that is not a string: the map key in brackets."""
    node = {"metadata": {"name": "t"}, "status": {"allocatable": {"cpu": "1", "pods": "10"}}}
    group = {
        "name": "g",
        "maxSize": 1,
        "nodeSelector": {"kubernetes.io/os": 1},
        "template": {"node": node},
    }
    with pytest.raises(ManifestError) as e:
        parse_node_groups({"nodeGroups": [group]}, "f.yaml")
    assert str(e.value) == (
        "f.yaml: nodeGroups[0].nodeSelector[kubernetes.io/os]: expected a string, got a number"
    )
