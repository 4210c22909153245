"""kube-scheduler-simulator exports (``ResourcesForLoad`` JSON) as input and output.

The format is the simulator's ``simulator/snapshot`` package: ``ResourcesForSnap`` /
``ResourcesForLoad`` with the JSON keys pods, nodes, pvs, pvcs, storageClasses,
priorityClasses, namespaces, schedulerConfig; list items come from List calls and carry no
apiVersion/kind (``applyPods`` etc. set them with ``WithAPIVersion("v1").WithKind("Pod")``);
the configuration is a defaulted ``kubescheduler.config.k8s.io/v1`` object. The result
annotations are the simulator's ``scheduler/plugin/annotation`` keys
(``kube-scheduler-simulator.sigs.k8s.io/selected-node`` ...).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from schedsim.api.errors import ManifestError
from schedsim.api.loading.kss import (
    DEFAULT_SCHEDULER_CONFIG,
    SELECTED_NODE_ANNOTATION,
    KssPodResult,
    expand_export,
    export_document,
    looks_like_export,
)
from schedsim.api.loading.loader import decode_objects, load_paths, load_text

EXPORT = Path(__file__).resolve().parents[1] / "cli" / "data" / "kss" / "export.json"


def _export() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(EXPORT.read_text())
    return doc


def _error(doc: Any, validate: str = "strict") -> str:
    with pytest.raises(ManifestError) as info:
        decode_objects([doc], "x.json", validate)
    return str(info.value)


def test_export_is_read_with_kinds_filled_in() -> None:
    m = load_paths([str(EXPORT)], keep_raw=True)
    assert [n.name for n in m.nodes] == ["node-a", "node-b", "node-gpu"]
    assert [p.key for p in m.pods] == [
        "shop/web-0",
        "shop/web-1",
        "batch/batch-0",
        "batch/huge",
        "shop/db-0",
    ]
    assert [pv.name for pv in m.persistent_volumes] == ["pv-db-0"]
    assert [c.name for c in m.persistent_volume_claims] == ["data-db-0"]
    assert [sc.name for sc in m.storage_classes] == ["standard"]
    # the objects kept for --output kss carry the apiVersion/kind the simulator sets
    assert [(k, o["apiVersion"], o["kind"]) for k, o in m.raw_objects][:2] == [
        ("Pod", "v1", "Pod"),
        ("Pod", "v1", "Pod"),
    ]
    assert {k for k, _ in m.raw_objects} == {
        "Pod",
        "Node",
        "PersistentVolume",
        "PersistentVolumeClaim",
        "StorageClass",
        "PriorityClass",
        "Namespace",
    }
    config = m.scheduler_config
    assert config is not None and m.scheduler_config_source == str(EXPORT)
    assert config["apiVersion"] == "kubescheduler.config.k8s.io/v1"
    assert config["kind"] == "KubeSchedulerConfiguration"
    assert config["profiles"][0]["schedulerName"] == "default-scheduler"


def test_detected_by_shape_not_by_extension(tmp_path: Path) -> None:
    path = tmp_path / "cluster-snapshot"  # no extension: parsed as YAML, which JSON is
    path.write_text(EXPORT.read_text())
    assert len(load_paths([str(path)]).pods) == 5
    assert looks_like_export({"nodes": []}) and not looks_like_export({"kind": "Pod"})
    assert not looks_like_export({"metadata": {}})  # still "kind: required"


def test_the_input_is_not_modified() -> None:
    doc = _export()
    before = copy.deepcopy(doc)
    expand_export(doc, "x.json")
    decode_objects([doc], "x.json", keep_raw=True)
    assert doc == before


def test_empty_and_null_lists_are_accepted() -> None:
    m = decode_objects([{"pods": None, "nodes": [], "schedulerConfig": None}], "x.json")
    assert (m.pods, m.nodes, m.scheduler_config) == ([], [], None)


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"pods": {"a": 1}}, "pods: expected a list, got a mapping"),
        ({"nodes": ["node-a"]}, "nodes[0]: expected a mapping, got a string"),
        (
            {"nodes": [{"kind": "Pod", "metadata": {"name": "x"}}]},
            "nodes[0].kind: expected Node, got 'Pod'",
        ),
        ({"schedulerConfig": ["x"]}, "schedulerConfig: expected a mapping, got a list"),
        (
            {"pods": [], "pod": []},
            'pod: unknown field "pod" (known: pods, nodes, pvs, pvcs, storageClasses, '
            "priorityClasses, namespaces, schedulerConfig)",
        ),
    ],
)
def test_malformed_export_names_file_field_and_problem(doc: Any, message: str) -> None:
    assert _error(doc) == f"x.json: kube-scheduler-simulator export: {message}"


def test_unknown_top_level_key_under_warn_and_ignore() -> None:
    doc = {"nodes": [{"metadata": {"name": "n1"}}], "pod": []}
    m = decode_objects([doc], "x.json", validate="warn")
    assert m.warnings == [
        'x.json: kube-scheduler-simulator export: pod: unknown field "pod" (known: pods, '
        "nodes, pvs, pvcs, storageClasses, priorityClasses, namespaces, schedulerConfig) "
        "(ignored)"
    ]
    assert decode_objects([doc], "x.json", validate="ignore").warnings == []


def test_unknown_field_inside_an_export_item() -> None:
    doc = _export()
    doc["pods"][1]["spec"]["containers"][0]["resoures"] = {}
    assert _error(doc) == (
        'x.json: Pod shop/web-1: spec.containers[0].resoures: unknown field "resoures"'
    )
    doc["pods"][1]["metadata"]["name"] = None  # no name: the item's place is named
    assert _error(doc).startswith("x.json: Pod (document 1 pods[1], no name): ")


def test_a_malformed_object_in_an_export_names_it() -> None:
    doc = _export()
    doc["nodes"][2]["status"]["allocatable"]["cpu"] = "lots"
    assert _error(doc).startswith("x.json: Node node-gpu: status.allocatable[cpu]: ")


def test_malformed_json_names_the_file_and_place() -> None:
    with pytest.raises(ManifestError) as info:
        load_text('{"pods": [}', "x.json")
    assert str(info.value) == "x.json: not valid JSON: line 1, column 11: Expecting value"


def test_two_embedded_configurations_are_refused(tmp_path: Path) -> None:
    for name in ("a.json", "b.json"):
        (tmp_path / name).write_text(json.dumps({"schedulerConfig": {"profiles": []}}))
    with pytest.raises(ManifestError) as info:
        load_paths([str(tmp_path / "a.json"), str(tmp_path / "b.json")])
    assert str(info.value) == (
        f"{tmp_path / 'b.json'}: kube-scheduler-simulator export: schedulerConfig: a second "
        f"scheduler configuration (the first is in {tmp_path / 'a.json'}); give one export, "
        "or --config"
    )


# --------------------------------------------------------------------------- writing


def _objects() -> list[tuple[str, dict[str, Any]]]:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web", "annotations": {"team": "a"}},
        "spec": {"containers": [{"name": "c"}]},
        "status": {"phase": "Pending", "conditions": [{"type": "Ready", "status": "False"}]},
    }
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {}}
    return [("Pod", pod), ("Node", node), ("ResourceClaim", claim)]


def test_export_binds_scheduled_pods_and_annotates_them() -> None:
    objects = _objects()
    before = copy.deepcopy(objects)
    doc = export_document(objects, {("default", "web"): KssPodResult(node="n1")}, None)
    assert objects == before  # written from copies
    assert list(doc) == [
        "pods",
        "nodes",
        "pvs",
        "pvcs",
        "storageClasses",
        "priorityClasses",
        "namespaces",
        "schedulerConfig",
    ]
    [pod] = doc["pods"]
    assert pod["spec"] == {"containers": [{"name": "c"}], "nodeName": "n1"}
    assert pod["metadata"]["annotations"] == {"team": "a", SELECTED_NODE_ANNOTATION: "n1"}
    assert pod["status"]["conditions"] == [
        {"type": "Ready", "status": "False"},
        {"type": "PodScheduled", "status": "True"},
    ]
    assert doc["nodes"] == [objects[1][1]]
    assert doc["schedulerConfig"] == DEFAULT_SCHEDULER_CONFIG


def test_export_marks_unschedulable_pods_as_kube_scheduler_does() -> None:
    result = KssPodResult(
        node=None,
        message="0/1 nodes are available: 1 Insufficient cpu.",
        annotations={"kube-scheduler-simulator.sigs.k8s.io/filter-result": "{}"},
    )
    doc = export_document(_objects(), {("default", "web"): result}, {"kind": "X"})
    [pod] = doc["pods"]
    assert "nodeName" not in pod["spec"]
    assert pod["metadata"]["annotations"] == {
        "team": "a",
        "kube-scheduler-simulator.sigs.k8s.io/filter-result": "{}",
        SELECTED_NODE_ANNOTATION: "",
    }
    assert pod["status"]["conditions"][-1] == {
        "type": "PodScheduled",
        "status": "False",
        "reason": "Unschedulable",
        "message": "0/1 nodes are available: 1 Insufficient cpu.",
    }
    assert doc["schedulerConfig"] == {"kind": "X"}


def test_pods_without_a_result_are_written_as_read() -> None:
    objects = _objects()
    doc = export_document(objects, {}, None)
    assert doc["pods"] == [objects[0][1]]
