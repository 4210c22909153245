"""Strategic merge patches as the API server applies them (k8s.io/apimachinery
pkg/util/strategicpatch, StrategicMergePatch; rows after its patch_test.go cases), with a
core/v1 Node's patch strategies (types.go: NodeStatus.conditions and addresses merge on
``type``; NodeSpec.taints has none, so it is replaced whole)."""

from __future__ import annotations

from typing import Any

import pytest

from schedsim.api.strategic_merge import (
    NODE_MERGE_KEYS,
    PatchError,
    apply_strategic_merge_patch,
)

NODE: dict[str, Any] = {
    "metadata": {"name": "n", "labels": {"a": "1", "b": "2"}, "finalizers": ["x"]},
    "spec": {"taints": [{"key": "k1", "effect": "NoSchedule"}]},
    "status": {
        "conditions": [
            {"type": "Ready", "status": "True"},
            {"type": "MemoryPressure", "status": "False"},
        ],
        "allocatable": {"cpu": "2"},
    },
}

ROWS = [
    pytest.param(  # a null deletes the key; a map merges
        {"metadata": {"labels": {"a": None, "c": "3"}}},
        {"metadata": {"name": "n", "labels": {"b": "2", "c": "3"}, "finalizers": ["x"]}},
        id="map-merge-null-deletes",
    ),
    pytest.param(  # no patch strategy: the list is replaced
        {"spec": {"taints": [{"key": "k2", "effect": "NoExecute"}]}},
        {"spec": {"taints": [{"key": "k2", "effect": "NoExecute"}]}},
        id="taints-replaced",
    ),
    pytest.param(
        {"spec": {"taints": None}},
        {"spec": {}},
        id="taints-deleted",
    ),
    pytest.param(  # merge on the key: one element changed, the other kept
        {"status": {"conditions": [{"type": "Ready", "status": "False"}]}},
        {
            "status": {
                "conditions": [
                    {"type": "Ready", "status": "False"},
                    {"type": "MemoryPressure", "status": "False"},
                ],
                "allocatable": {"cpu": "2"},
            }
        },
        id="conditions-merge-on-type",
    ),
    pytest.param(
        {"status": {"conditions": [{"type": "MemoryPressure", "$patch": "delete"}]}},
        {
            "status": {
                "conditions": [{"type": "Ready", "status": "True"}],
                "allocatable": {"cpu": "2"},
            }
        },
        id="element-delete-directive",
    ),
    pytest.param(
        {
            "status": {
                "$setElementOrder/conditions": [{"type": "MemoryPressure"}, {"type": "Ready"}],
                "conditions": [{"type": "Ready", "reason": "KubeletReady"}],
            }
        },
        {
            "status": {
                "conditions": [
                    {"type": "MemoryPressure", "status": "False"},
                    {"type": "Ready", "status": "True", "reason": "KubeletReady"},
                ],
                "allocatable": {"cpu": "2"},
            }
        },
        id="set-element-order",
    ),
    pytest.param(
        {"status": {"$patch": "replace", "allocatable": {"cpu": "4"}}},
        {"status": {"allocatable": {"cpu": "4"}}},
        id="map-replace-directive",
    ),
    pytest.param(
        {"status": {"$retainKeys": ["allocatable"], "allocatable": {"cpu": "3"}}},
        {"status": {"allocatable": {"cpu": "3"}}},
        id="retain-keys",
    ),
    pytest.param(  # a merging list of primitives: the union, $deleteFromPrimitiveList drops
        {"metadata": {"finalizers": ["y"], "$deleteFromPrimitiveList/finalizers": ["x"]}},
        {"metadata": {"name": "n", "labels": {"a": "1", "b": "2"}, "finalizers": ["y"]}},
        id="primitive-list",
    ),
]


@pytest.mark.parametrize(("patch", "changed"), ROWS)
def test_patch(patch: dict[str, Any], changed: dict[str, Any]) -> None:
    want = {**NODE, **changed}
    assert apply_strategic_merge_patch(NODE, patch, NODE_MERGE_KEYS) == want


def test_the_original_is_not_changed() -> None:
    before = repr(NODE)
    apply_strategic_merge_patch(NODE, {"metadata": {"labels": {"a": None}}}, NODE_MERGE_KEYS)
    assert repr(NODE) == before


@pytest.mark.parametrize(
    ("patch", "field", "problem"),
    [
        ({"status": {"$patch": "bogus"}}, "status.$patch", "unknown patch type: 'bogus'"),
        (
            {"status": {"conditions": [{"status": "True"}]}},
            "status.conditions",
            "an element has no merge key 'type'",
        ),
    ],
)
def test_bad_patches(patch: dict[str, Any], field: str, problem: str) -> None:
    with pytest.raises(PatchError) as e:
        apply_strategic_merge_patch(NODE, patch, NODE_MERGE_KEYS)
    assert (e.value.field, e.value.problem) == (field, problem)
