"""Strict field validation (``--validate=strict|warn|ignore``).

Behaviour taken from kubectl and the API server: with ``kubectl apply --validate=strict``
(kubectl's default since 1.27, server-side ``fieldValidation=Strict``) an object with a field
its schema lacks is refused with ``strict decoding error: unknown field
"spec.containers[0].resoures"``; ``--validate=warn`` applies it with ``Warning: unknown field
...`` and drops the field; ``--validate=ignore`` drops it silently (kubectl docs, "kubectl
apply", flag --validate; KEP-2885 server-side unknown field validation). Field sets are the
Kubernetes 1.34 OpenAPI definitions; fields inside RawExtension (DRA opaque parameters) and
managedFields' FieldsV1 are not validated (the API server preserves them unknown).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from schedsim.api.errors import ManifestError
from schedsim.api.loading.loader import decode_objects, load_paths, load_text
from schedsim.api.loading.strict import MAX_FIELD_WARNINGS, find_unknown_fields, has_schema

ROOT = Path(__file__).resolve().parents[2]

NODE = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
"""


def _pod(spec: str, meta: str = "{name: web}") -> str:
    return f"""
apiVersion: v1
kind: Pod
metadata: {meta}
spec:
{spec}
"""


def _error(text: str, source: str = "f.yaml") -> str:
    with pytest.raises(ManifestError) as info:
        load_text(text, source)
    return str(info.value)


# --------------------------------------------------------------------------- unknown fields


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        # the case: a misspelled `tolerations` (silently dropped before)
        (
            "  toleration: [{key: dedicated, operator: Exists}]\n  containers: [{name: c}]",
            "spec.toleration",
        ),
        (
            "  containers: [{name: c, resoures: {requests: {cpu: '1'}}}]",
            "spec.containers[0].resoures",
        ),
        (
            "  containers: [{name: c}, {name: d, ports: [{containerPort: 80, hostport: 80}]}]",
            "spec.containers[1].ports[0].hostport",
        ),
        (
            "  containers: [{name: c}]\n  affinity: {nodeAffinity: "
            "{requiredDuringSchedulingIgnoredDuringExecution: "
            "{nodeSelectorTerms: [{matchExpressions: [{key: k, operator: In, value: [a]}]}]}}}",
            "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
            "nodeSelectorTerms[0].matchExpressions[0].value",
        ),
        (
            "  containers: [{name: c}]\n"
            "  initContainers: [{name: i, resources: {request: {cpu: '1'}}}]",
            "spec.initContainers[0].resources.request",
        ),
    ],
)
def test_unknown_field_names_its_full_path(spec: str, field: str) -> None:
    name = field.rsplit(".", 1)[-1]
    assert _error(_pod(spec)) == f'f.yaml: Pod default/web: {field}: unknown field "{name}"'


def test_unknown_field_at_the_top_and_in_metadata() -> None:
    text = _pod("  containers: [{name: c}]") + "specs: {}\n"
    assert _error(text) == 'f.yaml: Pod default/web: specs: unknown field "specs"'
    text = _pod("  containers: [{name: c}]", "{name: web, lables: {app: x}}")
    assert _error(text) == 'f.yaml: Pod default/web: metadata.lables: unknown field "lables"'


def test_every_unknown_field_of_the_object_is_named() -> None:
    """kubectl lists every unknown field of the object in one error."""
    text = _pod("  toleration: []\n  containers: [{name: c, resoures: {}}]")
    assert _error(text) == (
        'f.yaml: Pod default/web: spec.toleration: unknown field "toleration" '
        "(also unknown: spec.containers[0].resoures)"
    )


def test_unknown_field_in_a_list_item() -> None:
    """Items of ``kind: List`` (kubectl get -o yaml) are validated like documents."""
    text = """
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: n1}, status: {allocatable: {cpu: "1"}}}
- apiVersion: v1
  kind: Node
  metadata: {name: n2}
  spec: {unschedulabel: true}
"""
    assert _error(text) == 'f.yaml: Node n2: spec.unschedulabel: unknown field "unschedulabel"'


def test_storage_and_dra_kinds_are_validated() -> None:
    pvc = """
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: db}
spec: {storageClass: fast}
"""
    assert _error(pvc) == (
        'f.yaml: PersistentVolumeClaim db/data: spec.storageClass: unknown field "storageClass"'
    )
    slice_ = """
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: p, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    attributes: {model: {string: a100, stirng: x}}
"""
    assert _error(slice_) == (
        'f.yaml: ResourceSlice s: spec.devices[0].attributes.model.stirng: unknown field "stirng"'
    )
    claim_v1beta1 = """
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
metadata: {name: c}
spec: {devices: {requests: [{name: r, deviceClassName: gpu, count: 1, adminacess: true}]}}
"""
    assert _error(claim_v1beta1) == (
        "f.yaml: ResourceClaim default/c: spec.devices.requests[0].adminacess: "
        'unknown field "adminacess"'
    )


def test_opaque_values_and_metadata_are_not_validated_inside() -> None:
    """DRA opaque driver parameters are a RawExtension (any JSON); managedFields' fieldsV1,
    labels and annotations are free-form: none of them is an unknown field."""
    text = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: c
  labels: {anything: goes}
  annotations: {also: this}
  managedFields:
  - {manager: kubectl, operation: Apply, apiVersion: resource.k8s.io/v1, fieldsType: FieldsV1,
     fieldsV1: {"f:spec": {"f:whatever": {}}}}
spec:
  devices:
    requests: [{name: r, exactly: {deviceClassName: gpu}}]
    config:
    - requests: [r]
      opaque: {driver: gpu.example.com, parameters: {sharing: {strategy: TimeSlicing, x: [1]}}}
"""
    m = load_text(text, "f.yaml")
    assert [c.name for c in m.resource_claims] == ["c"]
    assert m.warnings == []


def test_unmodelled_kinds_are_not_validated() -> None:
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndatta: {a: b}\n" + "---" + NODE
    m = load_text(text, "f.yaml")
    assert m.warnings == ["skipped kinds not modelled by schedsim: 1 ConfigMap"]


def test_an_object_without_apiversion_is_read_as_the_ga_version() -> None:
    """Node-group templates often omit apiVersion; the GA (v1) schema applies."""
    assert find_unknown_fields({"kind": "Node", "spec": {"taint": []}}, "Node")[0].path == (
        "spec.taint"
    )
    assert has_schema("ResourceClaim", None) and has_schema("DeviceClass", "resource.k8s.io/v1")
    assert has_schema("ResourceSlice", "resource.k8s.io/v1beta2")
    assert not has_schema("Pod", "v2")


def test_a_version_the_schema_lacks_is_left_to_the_decoder() -> None:
    """apps/v1beta1 and the like: the decoder names the unsupported apiVersion."""
    text = "apiVersion: resource.k8s.io/v1alpha9\nkind: DeviceClass\nmetadata: {name: x}\n"
    assert "apiVersion: unsupported version resource.k8s.io/v1alpha9" in _error(text)


# --------------------------------------------------------------------------- modes


def test_warn_mode_warns_and_keeps_the_object() -> None:
    text = NODE + "---" + _pod("  toleration: []\n  containers: [{name: c, resoures: {}}]")
    m = load_text(text, "f.yaml", validate="warn")
    assert [p.name for p in m.pods] == ["web"]
    assert m.warnings == [
        'f.yaml: Pod default/web: spec.toleration: unknown field "toleration" (ignored)',
        'f.yaml: Pod default/web: spec.containers[0].resoures: unknown field "resoures" (ignored)',
    ]


def test_warn_mode_caps_the_lines_per_file() -> None:
    docs = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}"}, "spec": {"x": 1}}
        for i in range(MAX_FIELD_WARNINGS + 5)
    ]
    m = decode_objects(docs, "big.yaml", validate="warn")
    assert len(m.nodes) == MAX_FIELD_WARNINGS + 5
    assert len(m.warnings) == MAX_FIELD_WARNINGS + 1
    assert m.warnings[-1] == "big.yaml: 5 more unknown field(s) not shown"


def test_ignore_mode_is_silent() -> None:
    text = NODE + "---" + _pod("  toleration: []\n  containers: [{name: c}]")
    m = load_text(text, "f.yaml", validate="ignore")
    assert [p.name for p in m.pods] == ["web"] and m.warnings == []


def test_a_bad_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="validate: expected one of strict, warn, ignore"):
        load_text(NODE, "f.yaml", validate="lenient")


def test_decoder_errors_come_first() -> None:
    """A malformed value is reported by its decoder (with its hint), before unknown fields."""
    text = _pod("  containers: [{name: c, resources: {requests: {cpu: lots}}}]\n  toleration: []")
    assert "spec.containers[0].resources.requests[cpu]" in _error(text)


def test_the_paths_loader_validates_every_file(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(NODE)
    (tmp_path / "b.yaml").write_text(_pod("  containers: [{name: c, imagee: x}]"))
    with pytest.raises(ManifestError) as info:
        load_paths([str(tmp_path)])
    assert str(info.value) == (
        f'{tmp_path / "b.yaml"}: Pod default/web: spec.containers[0].imagee: unknown field "imagee"'
    )
    assert len(load_paths([str(tmp_path)], validate="ignore").pods) == 1


# --------------------------------------------------------------------------- real inputs


def _shared_examples() -> Path | None:
    import os

    root = Path(os.environ.get("SCHEDSIM_SHARED_DIR", ROOT.parent / "shared")) / "examples"
    return root if root.is_dir() else None


def test_shipped_examples_pass_strict_validation() -> None:
    examples = ROOT / "src" / "schedsim" / "examples"
    files = sorted(examples.glob("*.yaml"))
    assert files
    for f in files:
        if "node-groups" in f.name:
            continue
        load_paths([str(f)])  # raises on an unknown field


def _unknown_in(root: Path) -> tuple[int, dict[str, list[str]]]:
    """(objects checked, file: kind: unknown paths) over the YAML files under ``root``."""
    checked, found = 0, {}
    for f in sorted(root.rglob("*.yaml")):
        try:
            docs = list(yaml.safe_load_all(f.read_text(encoding="utf-8")))
        except (yaml.YAMLError, UnicodeDecodeError):
            continue
        for doc in docs:
            if not isinstance(doc, dict) or not isinstance(doc.get("kind"), str):
                continue
            checked += 1
            paths = [u.path for u in find_unknown_fields(doc, doc["kind"])]
            if paths:
                found[f"{f.name}: {doc['kind']}"] = paths
    return checked, found


def test_shared_real_manifests_pass_strict_validation() -> None:
    """Public manifests written for 1.34 (driver demos, CSI examples, k8s-sims) have no
    unknown field."""
    root = _shared_examples()
    if root is None:
        pytest.skip("the shared examples folder is absent")
    for sub in ("dra-example-driver", "csi", "k8s-sims-benchmark"):
        if (root / sub).is_dir():
            checked, found = _unknown_in(root / sub)
            assert checked > 0 and found == {}, sub


def test_fields_newer_than_1_34_are_unknown() -> None:
    """kubernetes/api testdata/HEAD fills every field of the development branch; exactly
    the fields added after 1.34 are unknown to the 1.34 schema: skipNodeOperations (claim
    results, slices), list-typed device attributes (bools/ints/strings/versions), a device's
    nodeAllocatableResources, a slice's partitionTypeAttribute and CSINode's status."""
    root = _shared_examples()
    if root is None or not (root / "k8s-api-testdata").is_dir():
        pytest.skip("the shared k8s-api-testdata folder is absent")
    _, found = _unknown_in(root / "k8s-api-testdata")
    assert found == {
        "resource.k8s.io.v1.ResourceClaim.yaml: ResourceClaim": [
            "status.allocation.devices.results[0].skipNodeOperations"
        ],
        "resource.k8s.io.v1.ResourceSlice.yaml: ResourceSlice": [
            *(
                f"spec.devices[0].attributes.attributesKey.{t}"
                for t in ("bools", "ints", "strings", "versions")
            ),
            "spec.devices[0].nodeAllocatableResources",
            "spec.partitionTypeAttribute",
            "spec.skipNodeOperations",
        ],
        "storage.k8s.io.v1.CSINode.yaml: CSINode": ["status"],
    }


# --------------------------------------------------------------------------- linear cost


def _gcda() -> Any:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import gcda_cluster
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    return gcda_cluster


def _keys(value: Any) -> int:
    if isinstance(value, dict):
        return len(value) + sum(_keys(v) for v in value.values())
    if isinstance(value, list):
        return sum(_keys(v) for v in value)
    return 0


def test_gcda_sized_validation_visits_each_key_at_most_once() -> None:
    """Linear: the walk examines each key of each object at most once (so the cost is
    O(input size)); doubling the objects exactly doubles the keys examined; the loader
    validates each object once."""
    gcda = _gcda()
    doc = gcda.cluster_documents()
    items = doc["items"]
    assert len(items) == gcda.NODES + gcda.PODS == 8277
    visited = [0]
    for obj in items:
        before = visited[0]
        assert find_unknown_fields(obj, obj["kind"], visited) == []
        assert 0 < visited[0] - before <= _keys(obj)
    total_keys = sum(_keys(o) for o in items)
    # keys not examined are inside string maps (labels, annotations, requests) and FieldsV1
    assert 0.5 * total_keys < visited[0] <= total_keys
    doubled = [0]
    for obj in items + items:
        find_unknown_fields(obj, obj["kind"], doubled)
    assert doubled[0] == 2 * visited[0]


def test_the_loader_validates_each_object_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from schedsim.api.loading import strict

    calls: list[str] = []
    real = strict.find_unknown_fields

    def counting(obj: Any, kind: str, visited: list[int] | None = None) -> Any:
        calls.append(kind)
        return real(obj, kind, visited)

    monkeypatch.setattr(strict, "find_unknown_fields", counting)
    doc = _gcda().cluster_documents(nodes=40, pods=200)
    m = decode_objects([doc], "gcda")
    assert (len(m.nodes), len(m.pods)) == (40, 200)
    assert len(calls) == 240
    calls.clear()
    decode_objects([doc], "gcda", validate="ignore")
    assert calls == []
