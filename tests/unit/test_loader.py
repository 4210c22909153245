"""Manifest loading: input forms (multi-document YAML, ``kind: List``, JSON, directories,
stdin), decoding of the fields scheduling reads, and the exact error messages for bad input
(``FILE: KIND NS/NAME: FIELD: problem``)."""

from __future__ import annotations

import io
import json
import os
import sys
from datetime import UTC, datetime, timedelta, timezone
from fractions import Fraction
from pathlib import Path

import pytest
import yaml

from schedsim.api.core import (
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Taint,
    Toleration,
)
from schedsim.api.errors import ManifestError
from schedsim.api.loading.defaults import NO_PODS_CAPACITY
from schedsim.api.loading.loader import Manifests, decode_objects, load_paths, load_text

GI = 2**30
MI = 2**20

NODE = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
POD_META = "apiVersion: v1\nkind: Pod\nmetadata: {name: p1}\n"
CONTAINERS = "spec: {containers: [{name: c}]}\n"
"""A Pod's smallest valid spec (ValidatePodSpec requires a container)."""
POD = POD_META + CONTAINERS


@pytest.fixture
def cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run in tmp_path so that messages name files by their short relative path."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def _load(cwd: Path, text: str | bytes, name: str = "f.yaml") -> Manifests:
    _write(cwd / name, text)
    return load_paths([name])


def _error(cwd: Path, text: str | bytes, name: str = "f.yaml") -> str:
    _write(cwd / name, text)
    with pytest.raises(ManifestError) as info:
        load_paths([name])
    return str(info.value)


# --------------------------------------------------------------------------- input forms


def test_multi_document_yaml_skips_empty_documents(cwd: Path) -> None:
    text = f"---\n---\n# only a comment\n---\n{NODE}---\n\n---\n{POD}---\n"
    m = _load(cwd, text)
    assert [n.name for n in m.nodes] == ["n1"]
    assert [p.key for p in m.pods] == ["default/p1"]
    assert m.warnings == [f"f.yaml: Node n1: {NO_PODS_CAPACITY}"]  # a bare Node fits no pod


@pytest.mark.parametrize(
    "text",
    ["", "\n\n", "# nothing here\n", "---\n# a\n---\n# b\n", "---\n...\n"],
    ids=["empty", "blank lines", "comment", "comments in documents", "empty document"],
)
def test_empty_and_comment_only_files_have_no_objects(cwd: Path, text: str) -> None:
    m = _load(cwd, text)
    assert (m.nodes, m.pods, m.warnings) == ([], [], ["no objects found in f.yaml"])


def test_kind_list_as_kubectl_get_prints_it(cwd: Path) -> None:
    text = """\
apiVersion: v1
kind: List
metadata: {resourceVersion: ""}
items:
- apiVersion: v1
  kind: Node
  metadata: {name: n1}
- apiVersion: v1
  kind: Pod
  metadata: {name: p1, namespace: ns}
  spec: {containers: [{name: c}]}
---
apiVersion: v1
kind: PodList
items:
- {apiVersion: v1, kind: Pod, metadata: {name: p2}, spec: {containers: [{name: c}]}}
---
kind: NodeList
items: []
---
kind: PodList
items: null
"""
    m = _load(cwd, text)
    assert [n.name for n in m.nodes] == ["n1"]
    assert [p.key for p in m.pods] == ["ns/p1", "default/p2"]
    assert m.warnings == [f"f.yaml: Node n1: {NO_PODS_CAPACITY}"]  # a bare Node fits no pod


def test_typed_list_items_take_kind_and_api_version_from_the_list(cwd: Path) -> None:
    """The API server's typed lists leave kind and apiVersion out of their items
    (``kubectl get --raw /api/v1/nodes`` prints a ``NodeList`` whose items are bare objects:
    apimachinery decodes ``items`` as ``[]v1.Node``); fresh-user repro nl.json used to fail
    with ``items[0]: kind: required``. ``XList`` items are ``X`` of the list's apiVersion."""
    nodes = {
        "apiVersion": "v1",
        "kind": "NodeList",
        "metadata": {},
        "items": [{"metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "1"}}}],
    }
    pods = {
        "apiVersion": "v1",
        "kind": "PodList",
        "items": [
            {
                "metadata": {"name": "p1", "namespace": "ns"},
                "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "x"}]},
            }
        ],
    }
    m = _load(cwd, json.dumps(nodes) + "\n" + json.dumps(pods), "raw.json")
    assert [n.name for n in m.nodes] == ["n1"]
    assert [(p.key, p.node_name) for p in m.pods] == [("ns/p1", "n1")]


def test_generic_list_items_still_need_a_kind(cwd: Path) -> None:
    """``kind: List`` names no item kind (kubectl's List holds any objects): an item
    without ``kind`` is refused as before."""
    doc = {"apiVersion": "v1", "kind": "List", "items": [{"metadata": {"name": "n1"}}]}
    with pytest.raises(ManifestError, match=r"items\[0\]: kind: required"):
        _load(cwd, json.dumps(doc), "l.json")


def test_json_file(cwd: Path) -> None:
    doc = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}},
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "p1"},
                "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": 0.5}}}]},
            },
        ],
    }
    m = _load(cwd, json.dumps(doc, indent=2), "cluster.json")
    assert [n.name for n in m.nodes] == ["n1"]
    assert m.pods[0].containers[0].requests == {"cpu": Fraction(1, 2)}


def test_single_json_object(cwd: Path) -> None:
    m = _load(
        cwd,
        '{"kind": "Pod", "metadata": {"name": "p1"}, "spec": {"containers": [{"name": "c"}]}}',
        "pod.json",
    )
    assert [p.key for p in m.pods] == ["default/p1"]


def test_directory_reads_manifest_files_sorted_by_name(cwd: Path) -> None:
    _write(
        cwd / "d" / "b.yaml",
        "kind: Pod\nmetadata: {name: from-b}\nspec: {containers: [{name: c}]}\n",
    )
    _write(
        cwd / "d" / "a.json",
        '{"kind": "Pod", "metadata": {"name": "from-a"}, "spec": {"containers": [{"name": "c"}]}}',
    )
    _write(
        cwd / "d" / "c.yml",
        "kind: Pod\nmetadata: {name: from-c}\nspec: {containers: [{name: c}]}\n",
    )
    _write(
        cwd / "d" / "notes.txt",
        "kind: Pod\nmetadata: {name: from-txt}\nspec: {containers: [{name: c}]}\n",
    )
    _write(cwd / "d" / "README.md", "not yaml: [")
    _write(
        cwd / "d" / "sub" / "d.yaml",
        "kind: Pod\nmetadata: {name: from-subdir}\nspec: {containers: [{name: c}]}\n",
    )
    (cwd / "d" / "dir.yaml").mkdir()  # a directory named like a manifest is not read
    m = load_paths(["d"])
    assert [p.name for p in m.pods] == ["from-a", "from-b", "from-c"]


def test_paths_are_read_in_order_given(cwd: Path) -> None:
    _write(cwd / "z.yaml", "kind: Pod\nmetadata: {name: z}\nspec: {containers: [{name: c}]}\n")
    _write(cwd / "a.yaml", "kind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: c}]}\n")
    m = load_paths(["z.yaml", "-", "a.yaml"], stdin_text=lambda: POD)
    assert [p.name for p in m.pods] == ["z", "p1", "a"]


def test_stdin(cwd: Path) -> None:
    m = load_paths(["-"], stdin_text=lambda: f"{NODE}---\n{POD}")
    assert [n.name for n in m.nodes] == ["n1"]
    assert [p.key for p in m.pods] == ["default/p1"]


def test_empty_stdin_has_no_objects() -> None:
    m = load_paths(["-"], stdin_text=lambda: "")
    assert (m.nodes, m.pods, m.warnings) == ([], [], ["no objects found in <stdin>"])


def test_stdin_errors_name_stdin() -> None:
    with pytest.raises(ManifestError) as info:
        load_paths(["-"], stdin_text=lambda: "kind: Pod\nmetadata: {name: p}\nspec: []\n")
    assert str(info.value) == "<stdin>: Pod default/p: spec: expected a mapping, got a list"


def test_default_stdin_reads_utf8_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    raw = ("\ufeff" + POD.replace("p1", "caf\u00e9")).encode("utf-8")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(raw), encoding="ascii"))
    # a name the API server refuses, read as given with the value rules off
    assert [p.name for p in load_paths(["-"], validate="ignore").pods] == ["caf\u00e9"]


def test_default_stdin_not_utf8(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"kind: \xff\xfe\n")))
    with pytest.raises(ManifestError, match=r"^<stdin>: not a UTF-8 text file$"):
        load_paths(["-"])


def test_default_stdin_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", None)
    with pytest.raises(ManifestError, match=r"^<stdin>: standard input is closed$"):
        load_paths(["-"])


def test_utf8_byte_order_mark_is_ignored(cwd: Path) -> None:
    assert [p.name for p in _load(cwd, b"\xef\xbb\xbf" + POD.encode()).pods] == ["p1"]
    assert [
        p.name
        for p in _load(
            cwd, b'\xef\xbb\xbf{"kind": "Node", "metadata": {"name": "n"}}', "n.json"
        ).nodes
    ] == ["n"]


# --------------------------------------------------------------------------- skipped kinds


def test_unmodelled_kinds_are_counted_in_one_warning_line_for_all_inputs(cwd: Path) -> None:
    """Kinds schedsim does not model are skipped, counted per kind across every input file
    and reported in one line (issue 20 item 4)."""
    text = """\
kind: ConfigMap
metadata: {name: web}
---
kind: Ingress
metadata: {name: web}
---
kind: ConfigMap
metadata: {name: api}
---
kind: List
items:
- {kind: Secret, metadata: {name: c}}
- {kind: Pod, metadata: {name: p1}, spec: {containers: [{name: c}]}}
"""
    m = _load(cwd, text, "app.yaml")
    _write(cwd / "more.yaml", "kind: ConfigMap\nmetadata: {name: other}\n")
    m2 = load_paths(["app.yaml", "more.yaml"])
    assert [p.name for p in m.pods] == ["p1"]
    assert m.warnings == [
        "skipped kinds not modelled by schedsim: 2 ConfigMap, 1 Ingress, 1 Secret"
    ]
    assert m2.warnings == [
        "skipped kinds not modelled by schedsim: 3 ConfigMap, 1 Ingress, 1 Secret"
    ]
    assert m2.skipped == {"ConfigMap": 3, "Ingress": 1, "Secret": 1}


def test_skipped_kinds_are_not_decoded(cwd: Path) -> None:
    # a skipped object's fields are never looked at, so nothing in it is an error
    m = _load(cwd, "kind: ConfigMap\nmetadata: []\nspec: 5\n")
    assert m.warnings == ["skipped kinds not modelled by schedsim: 1 ConfigMap"]


def test_a_misspelled_kind_gets_a_suggestion(cwd: Path) -> None:
    """A kind one typo (or only case) away from one schedsim reads is still skipped, as the
    API server would refuse it (kinds are case-sensitive), and the warning suggests the kind
    meant; kinds that are merely not modelled get no suggestion."""
    m = _load(cwd, "kind: Pood\nmetadata: {name: a}\n---\nkind: deployment\nmetadata: {name: b}\n")
    assert m.warnings == [
        "skipped kinds not modelled by schedsim: 1 Pood (did you mean Pod?), "
        "1 deployment (did you mean Deployment?)"
    ]
    m = _load(cwd, "kind: Secret\nmetadata: {name: s}\n")
    assert m.warnings == ["skipped kinds not modelled by schedsim: 1 Secret"]


def test_cronjobs_are_skipped_with_their_own_warning(cwd: Path) -> None:
    """A CronJob creates Jobs on a schedule; it is read but not run, and said so once."""
    m = _load(cwd, "kind: CronJob\nmetadata: {name: nightly, namespace: ops}\n")
    assert m.warnings == [
        "skipped 1 CronJob object(s) (ops/nightly): CronJobs create Jobs on a schedule, which "
        "schedsim does not run; give the Job (or its pods) instead"
    ]


# --------------------------------------------------------------------------- duplicates


def test_duplicate_objects_across_files(cwd: Path) -> None:
    _write(cwd / "a.yaml", "kind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c}]}\n")
    _write(
        cwd / "b.yaml",
        "kind: Pod\nmetadata: {name: p, namespace: default}\nspec: {containers: [{name: c}]}\n",
    )
    with pytest.raises(ManifestError) as info:
        load_paths(["a.yaml", "b.yaml"])
    assert str(info.value) == (
        "b.yaml: Pod default/p: metadata.name: duplicate object (first seen in a.yaml)"
    )


def test_duplicate_nodes_in_one_file_and_across_files(cwd: Path) -> None:
    _write(cwd / "a.yaml", f"{NODE}---\n{NODE}")
    with pytest.raises(ManifestError) as info:
        load_paths(["a.yaml"])
    assert (
        str(info.value) == "a.yaml: Node n1: metadata.name: duplicate object (first seen in a.yaml)"
    )
    _write(cwd / "b.yaml", NODE)
    _write(cwd / "c.yaml", NODE)
    with pytest.raises(ManifestError) as info:
        load_paths(["b.yaml", "c.yaml"])
    assert (
        str(info.value) == "c.yaml: Node n1: metadata.name: duplicate object (first seen in b.yaml)"
    )


def test_duplicate_between_file_and_stdin(cwd: Path) -> None:
    _write(cwd / "a.yaml", POD)
    with pytest.raises(ManifestError) as info:
        load_paths(["a.yaml", "-"], stdin_text=lambda: POD)
    assert str(info.value) == (
        "<stdin>: Pod default/p1: metadata.name: duplicate object (first seen in a.yaml)"
    )


def test_same_name_in_other_namespace_or_kind_is_not_a_duplicate(cwd: Path) -> None:
    m = _load(
        cwd,
        "kind: Pod\nmetadata: {name: x}\nspec: {containers: [{name: c}]}\n---\n"
        "kind: Pod\nmetadata: {name: x, namespace: b}\nspec: {containers: [{name: c}]}\n"
        "---\nkind: Node\nmetadata: {name: x}\n",
    )
    assert [p.key for p in m.pods] == ["default/x", "b/x"]
    assert [n.name for n in m.nodes] == ["x"]


# --------------------------------------------------------------------------- decoding


def test_namespace_defaults_to_default(cwd: Path) -> None:
    m = _load(
        cwd,
        "kind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: c}]}\n---\n"
        "kind: Pod\nmetadata: {name: b, namespace: ''}\nspec: {containers: [{name: c}]}\n"
        "---\nkind: Pod\nmetadata: {name: c, namespace: null}\nspec: {containers: [{name: c}]}\n"
        "---\nkind: Pod\nmetadata: {name: d, namespace: shop}\nspec: {containers: [{name: c}]}\n",
    )
    assert [p.namespace for p in m.pods] == ["default", "default", "default", "shop"]


def test_quantities_are_exact(cwd: Path) -> None:
    text = """\
kind: Node
metadata: {name: n}
status:
  allocatable: {cpu: "3920m", memory: 1Gi, pods: "110", example.com/gpu: 2, ephemeral-storage: 1e9}
  capacity: {cpu: 4, memory: 1.5Gi}
---
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: c
    resources:
      requests: {cpu: 100m, memory: 1Gi, ephemeral-storage: 500M}
  - name: d
    resources:
      requests: {cpu: 0.25, memory: "128974848"}
  overhead: {cpu: 10m, memory: 1Mi}
"""
    m = _load(cwd, text)
    node = m.nodes[0]
    assert node.allocatable == {
        "cpu": Fraction(392, 100),
        "memory": GI,
        "pods": 110,
        "example.com/gpu": 2,
        "ephemeral-storage": 10**9,
    }
    assert node.capacity == {"cpu": 4, "memory": GI + GI // 2}
    c, d = m.pods[0].containers
    assert c.requests["cpu"] == Fraction(1, 10)
    assert isinstance(c.requests["cpu"], Fraction)
    assert c.requests["memory"] == GI
    assert c.requests["ephemeral-storage"] == 500 * 10**6
    assert d.requests == {"cpu": Fraction(1, 4), "memory": 128974848}
    assert m.pods[0].overhead == {"cpu": Fraction(1, 100), "memory": MI}


def test_zero_and_huge_quantities_are_accepted(cwd: Path) -> None:
    c = (
        _load(
            cwd,
            f"{POD_META}spec:\n  containers:\n  - name: c\n"
            "    resources: {requests: {cpu: '0', memory: 1e999, example.com/x: 8Ei},\n"
            "                limits: {example.com/x: 8Ei}}\n",
        )
        .pods[0]
        .containers[0]
    )
    assert c.requests == {"cpu": 0, "memory": 10**999, "example.com/x": 8 * 2**60 - 1}


def test_requests_default_to_limits(cwd: Path) -> None:
    text = f"""\
{POD_META}spec:
  containers:
  - name: only-limits
    resources:
      limits: {{cpu: "2", memory: 1Gi, example.com/gpu: "1"}}
  - name: some-requests
    resources:
      requests: {{cpu: 500m}}
      limits: {{cpu: "2", memory: 1Gi}}
  - name: requests-win
    resources:
      requests: {{cpu: 100m, memory: 64Mi}}
      limits: {{cpu: "1", memory: 1Gi}}
  - name: only-requests
    resources:
      requests: {{cpu: 100m}}
  - name: none
  initContainers:
  - name: init
    resources:
      limits: {{memory: 256Mi}}
  resources:
    limits: {{cpu: "4", memory: 4Gi}}
    requests: {{memory: 2Gi}}
"""
    pod = _load(cwd, text).pods[0]
    reqs = {c.name: dict(c.requests) for c in (*pod.containers, *pod.init_containers)}
    assert reqs == {
        "only-limits": {"cpu": 2, "memory": GI, "example.com/gpu": 1},
        "some-requests": {"cpu": Fraction(1, 2), "memory": GI},
        "requests-win": {"cpu": Fraction(1, 10), "memory": 64 * MI},
        "only-requests": {"cpu": Fraction(1, 10)},
        "none": {},
        "init": {"memory": 256 * MI},
    }
    assert pod.containers[1].limits == {"cpu": 2, "memory": GI}
    assert pod.resources == {"cpu": 4, "memory": 2 * GI}


def test_sidecar_detection(cwd: Path) -> None:
    text = f"""\
{POD_META}spec:
  initContainers:
  - {{name: setup}}
  - {{name: proxy, restartPolicy: Always}}
  - {{name: other}}
  containers:
  - {{name: app}}
"""
    pod = _load(cwd, text).pods[0]
    assert [(c.name, c.is_restartable_init) for c in pod.init_containers] == [
        ("setup", False),
        ("proxy", True),
        ("other", False),
    ]
    assert pod.init_containers[0].restart_policy is None
    assert pod.containers[0].is_restartable_init is False


def test_host_ports(cwd: Path) -> None:
    text = f"""\
{POD_META}spec:
  containers:
  - name: c
    ports:
    - {{containerPort: 80}}
    - {{containerPort: 53, hostPort: 53, protocol: UDP, hostIP: 10.0.0.1}}
"""
    ports = _load(cwd, text).pods[0].containers[0].ports
    assert [(p.container_port, p.host_port, p.protocol, p.host_ip) for p in ports] == [
        (80, 0, "TCP", ""),
        (53, 53, "UDP", "10.0.0.1"),
    ]


def test_taints_tolerations_and_affinity(cwd: Path) -> None:
    text = """\
kind: Node
metadata:
  name: gpu-1
  labels: {accelerator: example-gpu, topology.kubernetes.io/zone: zone-a}
spec:
  unschedulable: true
  taints:
  - {key: dedicated, value: gpu, effect: NoSchedule}
  - {key: node.kubernetes.io/not-ready, effect: NoExecute}
---
kind: Pod
metadata: {name: p, namespace: ml, labels: {app: train}}
spec:
  containers: [{name: c}]
  priority: 1000
  nodeName: ""
  nodeSelector: {accelerator: example-gpu}
  tolerations:
  - {key: dedicated, operator: Equal, value: gpu, effect: NoSchedule}
  - {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute,
     tolerationSeconds: 300}
  - {operator: Exists}
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - {key: topology.kubernetes.io/zone, operator: In, values: [zone-a, zone-b]}
          matchFields:
          - {key: metadata.name, operator: NotIn, values: [worker-c]}
        - matchExpressions:
          - {key: cores, operator: Gt, values: ["8"]}
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 10
        preference:
          matchExpressions:
          - {key: disktype, operator: Exists}
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {app: train}}
        topologyKey: kubernetes.io/hostname
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 50
        podAffinityTerm:
          labelSelector:
            matchExpressions: [{key: tier, operator: NotIn, values: [batch]}]
          topologyKey: topology.kubernetes.io/zone
          namespaces: [ml, shop]
"""
    m = _load(cwd, text)
    node, pod = m.nodes[0], m.pods[0]
    assert node.unschedulable is True
    assert node.labels["accelerator"] == "example-gpu"
    assert node.taints == (
        Taint(key="dedicated", value="gpu", effect="NoSchedule"),
        Taint(key="node.kubernetes.io/not-ready", effect="NoExecute"),
    )
    assert pod.priority == 1000
    assert pod.node_selector == {"accelerator": "example-gpu"}
    assert pod.tolerations == (
        Toleration(key="dedicated", operator="Equal", value="gpu", effect="NoSchedule"),
        Toleration(
            key="node.kubernetes.io/not-ready",
            operator="Exists",
            effect="NoExecute",
            toleration_seconds=300,
        ),
        Toleration(operator="Exists"),
    )
    assert [t.tolerates(node.taints[0]) for t in pod.tolerations] == [True, False, True]
    assert pod.affinity is not None
    na = pod.affinity.node_affinity
    assert na is not None
    assert na.required == (
        NodeSelectorTerm(
            match_expressions=(
                NodeSelectorRequirement("topology.kubernetes.io/zone", "In", ("zone-a", "zone-b")),
            ),
            match_fields=(NodeSelectorRequirement("metadata.name", "NotIn", ("worker-c",)),),
        ),
        NodeSelectorTerm(match_expressions=(NodeSelectorRequirement("cores", "Gt", ("8",)),)),
    )
    assert [(p.weight, p.preference.match_expressions) for p in na.preferred] == [
        (10, (NodeSelectorRequirement("disktype", "Exists"),))
    ]
    (anti,) = pod.affinity.pod_anti_affinity_required
    assert anti.topology_key == "kubernetes.io/hostname"
    assert anti.label_selector is not None
    assert anti.label_selector.matches({"app": "train"})
    (pref,) = pod.affinity.pod_anti_affinity_preferred
    assert pref.weight == 50
    assert pref.term.namespaces == ("ml", "shop")
    assert pref.term.label_selector is not None
    assert not pref.term.label_selector.matches({"tier": "batch"})
    assert pod.affinity.has_pod_affinity_or_anti_affinity
    assert pod.affinity.pod_affinity_required == ()


def test_no_affinity_and_empty_required_terms(cwd: Path) -> None:
    # the API server refuses empty nodeSelectorTerms (ValidateNodeSelector); Kubernetes' own
    # unit tests build such pods, and the decoder reads them as terms that match nothing
    m = decode_objects(
        list(
            yaml.safe_load_all(
                "kind: Pod\nmetadata: {name: a}\n---\nkind: Pod\nmetadata: {name: b}\n"
                "spec: {affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
                "{nodeSelectorTerms: []}}}}\n"
            )
        ),
        "f.yaml",
        api_rules=False,
    )
    assert m.pods[0].affinity is None
    b = m.pods[1].affinity
    assert b is not None and b.node_affinity is not None
    assert b.node_affinity.required == ()


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2024-01-02T03:04:05Z", datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)),
        ('"2024-01-02T03:04:05Z"', datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)),
        (
            "2024-01-02T03:04:05.123456789Z",
            datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=UTC),
        ),
        (
            "2024-01-02T03:04:05+05:30",
            datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone(timedelta(hours=5, minutes=30))),
        ),
    ],
    ids=["plain", "quoted", "nanoseconds", "offset"],
)
def test_creation_timestamp(cwd: Path, raw: str, expected: datetime) -> None:
    pod = _load(
        cwd, f"kind: Pod\nmetadata: {{name: p, creationTimestamp: {raw}}}\n{CONTAINERS}"
    ).pods[0]
    assert pod.creation_timestamp == expected


def test_unquoted_timestamps_stay_strings_elsewhere(cwd: Path) -> None:
    # kubectl reads YAML timestamps as strings: a date-like label value is just a string
    pod = _load(
        cwd, "kind: Pod\nmetadata: {name: p, labels: {day: 2024-01-02}}\n" + CONTAINERS
    ).pods[0]
    assert pod.labels == {"day": "2024-01-02"}


# --------------------------------------------------------------------------- bad objects

P = "kind: Pod\nmetadata: {name: p}\n"
C = P + "spec:\n  containers:\n  - name: c\n    resources: "
N = "kind: Node\nmetadata: {name: n}\n"
NA = (
    P + "spec: {affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
    "{nodeSelectorTerms: [{matchExpressions: [%s]}]}}}}\n"
)
NA_FIELD = (
    "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
    ".nodeSelectorTerms[0].matchExpressions[0]"
)
QUANTITY = 'expected a quantity (a string such as "100m" or a number), got'

BAD_OBJECTS = [
    # documents
    ("- a\n- b\n", "f.yaml: document 1: expected a Kubernetes object (a mapping), got a list"),
    ("hello\n", "f.yaml: document 1: expected a Kubernetes object (a mapping), got a string"),
    (
        N + "---\n42\n",
        "f.yaml: document 2: expected a Kubernetes object (a mapping), got a number",
    ),
    ("kind: 5\nmetadata: {name: x}\n", "f.yaml: document 1: kind: expected a string, got a number"),
    ("kind: [Pod]\n", "f.yaml: document 1: kind: expected a string, got a list"),
    ("metadata: {name: x}\n", "f.yaml: document 1: kind: required"),
    ("kind: ''\n", "f.yaml: document 1: kind: required"),
    # kind: List
    (
        "kind: List\nitems: {a: 1}\n",
        "f.yaml: document 1: List: items: expected a list, got a mapping",
    ),
    (
        "kind: PodList\nitems: 0\n",
        "f.yaml: document 1: PodList: items: expected a list, got a number",
    ),
    ("kind: List\nitems: [5]\n", "f.yaml: document 1: items[0]: expected a mapping, got a number"),
    (
        "kind: List\nitems:\n- kind: Pod\n  metadata: {name: p}\n- [x]\n",
        "f.yaml: document 1: items[1]: expected a mapping, got a list",
    ),
    (
        "kind: List\nitems:\n- kind: Pod\n  metadata: {name: p}\n  spec: {containers: x}\n",
        "f.yaml: Pod default/p: spec.containers: expected a list, got a string",
    ),
    (
        "kind: PodList\nitems:\n- kind: Pod\n  spec: {}\n",
        "f.yaml: Pod (document 1 items[0], no name): metadata.name: required",
    ),
    # metadata
    (
        "kind: Pod\nmetadata: []\n",
        "f.yaml: Pod (document 1, no name): metadata: expected a mapping, got a list",
    ),
    (
        "kind: Pod\nmetadata: {namespace: ns}\n",
        "f.yaml: Pod (document 1, no name): metadata.name: required",
    ),
    ("kind: Node\n", "f.yaml: Node (document 1, no name): metadata.name: required"),
    (
        "kind: Pod\nmetadata: {name: 5}\n",
        "f.yaml: Pod (document 1, no name): metadata.name: expected a string, got a number",
    ),
    (
        "kind: Pod\nmetadata: {name: p, namespace: [a]}\n",
        "f.yaml: Pod default/p: metadata.namespace: expected a string, got a list",
    ),
    (
        "kind: Pod\nmetadata: {name: p, labels: [a]}\n",
        "f.yaml: Pod default/p: metadata.labels: expected a mapping, got a list",
    ),
    (
        "kind: Pod\nmetadata: {name: p, namespace: ns, labels: {app: 1}}\n",
        "f.yaml: Pod ns/p: metadata.labels[app]: expected a string, got a number",
    ),
    (
        "kind: Pod\nmetadata: {name: p, ownerReferences: [{kind: 5}]}\n",
        "f.yaml: Pod default/p: metadata.ownerReferences[0].kind: expected a string, got a number",
    ),
    # timestamps
    (
        "kind: Pod\nmetadata: {name: p, creationTimestamp: 2024-13-45T00:00:00Z}\n",
        "f.yaml: Pod default/p: metadata.creationTimestamp: invalid RFC 3339 timestamp "
        "'2024-13-45T00:00:00Z' (expected e.g. 2024-01-02T03:04:05Z)",
    ),
    (
        "kind: Pod\nmetadata: {name: p, creationTimestamp: 2024-13-45}\n",
        "f.yaml: Pod default/p: metadata.creationTimestamp: invalid RFC 3339 timestamp "
        "'2024-13-45' (expected e.g. 2024-01-02T03:04:05Z)",
    ),
    (
        "kind: Pod\nmetadata: {name: p, creationTimestamp: 2024-01-02}\n",
        "f.yaml: Pod default/p: metadata.creationTimestamp: invalid RFC 3339 timestamp "
        "'2024-01-02' (expected e.g. 2024-01-02T03:04:05Z)",
    ),
    (
        "kind: Pod\nmetadata: {name: p, creationTimestamp: '2024-01-02T03:04:05'}\n",
        "f.yaml: Pod default/p: metadata.creationTimestamp: invalid RFC 3339 timestamp "
        "'2024-01-02T03:04:05' (expected e.g. 2024-01-02T03:04:05Z)",
    ),
    (
        "kind: Pod\nmetadata: {name: p, creationTimestamp: yesterday}\n",
        "f.yaml: Pod default/p: metadata.creationTimestamp: invalid RFC 3339 timestamp "
        "'yesterday' (expected e.g. 2024-01-02T03:04:05Z)",
    ),
    (
        "kind: Pod\nmetadata: {name: p, creationTimestamp: 1700000000}\n",
        "f.yaml: Pod default/p: metadata.creationTimestamp: expected an RFC 3339 timestamp, "
        "got a number",
    ),
    # spec and containers
    (P + "spec: []\n", "f.yaml: Pod default/p: spec: expected a mapping, got a list"),
    (
        P + "spec: {containers: {}}\n",
        "f.yaml: Pod default/p: spec.containers: expected a list, got a mapping",
    ),
    (
        P + "spec: {containers: [5]}\n",
        "f.yaml: Pod default/p: spec.containers[0]: expected a mapping, got a number",
    ),
    (
        C + "[]\n",
        "f.yaml: Pod default/p: spec.containers[0].resources: expected a mapping, got a list",
    ),
    (
        C + "{requests: x}\n",
        "f.yaml: Pod default/p: spec.containers[0].resources.requests: expected a mapping, "
        "got a string",
    ),
    (
        C + "{requests: {cpu: true}}\n",
        f"f.yaml: Pod default/p: spec.containers[0].resources.requests[cpu]: {QUANTITY} a boolean",
    ),
    (
        C + "{requests: {cpu: null}}\n",
        f"f.yaml: Pod default/p: spec.containers[0].resources.requests[cpu]: {QUANTITY} null",
    ),
    (
        C + "{limits: {cpu: [1]}}\n",
        f"f.yaml: Pod default/p: spec.containers[0].resources.limits[cpu]: {QUANTITY} a list",
    ),
    (
        C + "{requests: {cpu: '-1'}}\n",
        'f.yaml: Pod default/p: spec.containers[0].resources.requests[cpu]: quantity "-1": '
        "must be greater than or equal to 0",
    ),
    (
        C + "{limits: {memory: -5}}\n",
        'f.yaml: Pod default/p: spec.containers[0].resources.limits[memory]: quantity "-5": '
        "must be greater than or equal to 0",
    ),
    (
        P + "spec: {initContainers: [{name: i, restartPolicy: 5}]}\n",
        "f.yaml: Pod default/p: spec.initContainers[0].restartPolicy: expected a string, "
        "got a number",
    ),
    (
        P + "spec: {containers: [{name: c, ports: [{containerPort: 80, hostPort: '80'}]}]}\n",
        "f.yaml: Pod default/p: spec.containers[0].ports[0].hostPort: expected an integer, "
        "got a string",
    ),
    (
        P + "spec: {overhead: {cpu: -1}}\n",
        'f.yaml: Pod default/p: spec.overhead[cpu]: quantity "-1": must be greater than or '
        "equal to 0",
    ),
    (
        P + "spec: {priority: high}\n",
        "f.yaml: Pod default/p: spec.priority: expected an integer, got a string",
    ),
    (
        P + "spec: {priority: 1.5}\n",
        "f.yaml: Pod default/p: spec.priority: expected an integer, got a number",
    ),
    (
        P + "spec: {nodeName: [a]}\n",
        "f.yaml: Pod default/p: spec.nodeName: expected a string, got a list",
    ),
    (
        P + "spec: {nodeSelector: {disk: 1}}\n",
        "f.yaml: Pod default/p: spec.nodeSelector[disk]: expected a string, got a number",
    ),
    # tolerations
    (
        P + "spec: {tolerations: {key: a}}\n",
        "f.yaml: Pod default/p: spec.tolerations: expected a list, got a mapping",
    ),
    (
        P + "spec: {tolerations: [{key: a, operator: Foo}]}\n",
        "f.yaml: Pod default/p: spec.tolerations[0].operator: unsupported value 'Foo'",
    ),
    (
        P + "spec: {tolerations: [{key: a, effect: Never}]}\n",
        "f.yaml: Pod default/p: spec.tolerations[0].effect: unsupported value 'Never'",
    ),
    (
        P + "spec: {tolerations: [{key: a, tolerationSeconds: '30'}]}\n",
        "f.yaml: Pod default/p: spec.tolerations[0].tolerationSeconds: expected an integer, "
        "got a string",
    ),
    # affinity
    (
        P + "spec: {affinity: []}\n",
        "f.yaml: Pod default/p: spec.affinity: expected a mapping, got a list",
    ),
    (
        P + "spec: {affinity: {nodeAffinity: []}}\n",
        "f.yaml: Pod default/p: spec.affinity.nodeAffinity: expected a mapping, got a list",
    ),
    (
        NA % "{key: a, operator: Foo}",
        f"f.yaml: Pod default/p: {NA_FIELD}.operator: unsupported value 'Foo': want one of "
        "['DoesNotExist', 'Exists', 'Gt', 'In', 'Lt', 'NotIn']",
    ),
    (
        P + "spec: {affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
        "[{labelSelector: {matchExpressions: [{key: a, operator: Gt}]}, topologyKey: z}]}}}\n",
        "f.yaml: Pod default/p: spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnored"
        "DuringExecution[0].labelSelector.matchExpressions[0].operator: unsupported value 'Gt'",
    ),
    # volumes and claims
    (
        P + "spec: {volumes: [{name: v, persistentVolumeClaim: {readOnly: true}}]}\n",
        "f.yaml: Pod default/p: spec.volumes[0].persistentVolumeClaim.claimName: required",
    ),
    (
        P + "spec: {resourceClaims: [{name: a, resourceClaimName: []}]}\n",
        "f.yaml: Pod default/p: spec.resourceClaims[0].resourceClaimName: expected a string, "
        "got a list",
    ),
    (
        P + "status: {resourceClaimStatuses: [{name: a, resourceClaimName: 0}]}\n",
        "f.yaml: Pod default/p: status.resourceClaimStatuses[0].resourceClaimName: expected a "
        "string, got a number",
    ),
    (
        P + "status: {phase: 1}\n",
        "f.yaml: Pod default/p: status.phase: expected a string, got a number",
    ),
    # nodes
    (
        N + "spec: {taints: [{key: k, effect: Bad}]}\n",
        "f.yaml: Node n: spec.taints[0].effect: unsupported value 'Bad': want one of "
        "['NoExecute', 'NoSchedule', 'PreferNoSchedule']",
    ),
    (
        N + "spec: {taints: [{effect: NoSchedule}]}\n",
        "f.yaml: Node n: spec.taints[0].key: required",
    ),
    (
        N + "spec: {taints: [k=v:NoSchedule]}\n",
        "f.yaml: Node n: spec.taints[0]: expected a mapping, got a string",
    ),
    (
        N + "spec: {unschedulable: 'yes'}\n",
        "f.yaml: Node n: spec.unschedulable: expected true or false, got a string",
    ),
    (
        N + "status: {allocatable: {pods: -1}}\n",
        'f.yaml: Node n: status.allocatable[pods]: quantity "-1": must be greater than or equal '
        "to 0",
    ),
    (
        N + "status: {capacity: 4}\n",
        "f.yaml: Node n: status.capacity: expected a mapping, got a number",
    ),
]


@pytest.mark.parametrize(
    ("text", "expected"), BAD_OBJECTS, ids=[e.removeprefix("f.yaml: ") for _, e in BAD_OBJECTS]
)
def test_malformed_object_message(cwd: Path, text: str, expected: str) -> None:
    assert _error(cwd, text) == expected


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ("abc", 'quantity "abc"'),
        ("1K", 'quantity "1K": unknown suffix "K"'),
        ("4x", 'quantity "4x": unknown suffix "x"'),
        ("1 Gi", 'quantity "1 Gi"'),
        ("1e1001", 'quantity "1e1001"'),
        (".nan", 'quantity "nan"'),
        (".inf", 'quantity "inf"'),
        ("''", 'quantity ""'),
    ],
)
def test_bad_quantity_message(cwd: Path, raw: str, problem: str) -> None:
    # the wording after the quantity is quantity.py's (tested there); check the prefix
    msg = _error(cwd, C + f"{{requests: {{cpu: {raw}}}}}\n")
    prefix = "f.yaml: Pod default/p: spec.containers[0].resources.requests[cpu]: "
    assert msg.startswith(prefix + problem), msg
    assert "\n" not in msg


def test_object_error_in_json_file(cwd: Path) -> None:
    text = (
        '{"kind": "Pod", "metadata": {"name": "p", "namespace": "ns"}, "spec": {"priority": "x"}}'
    )
    assert _error(cwd, text, "p.json") == (
        "p.json: Pod ns/p: spec.priority: expected an integer, got a string"
    )


def test_error_names_the_file_as_given(tmp_path: Path) -> None:
    path = _write(tmp_path / "sub dir" / "pods.yaml", P + "spec: []\n")
    with pytest.raises(ManifestError) as info:
        load_paths([str(path)])
    assert str(info.value) == f"{path}: Pod default/p: spec: expected a mapping, got a list"
    _write(tmp_path / "d" / "x.yaml", P + "spec: []\n")
    with pytest.raises(ManifestError) as info:
        load_paths([str(tmp_path / "d")])
    assert str(info.value).startswith(f"{tmp_path / 'd' / 'x.yaml'}: Pod default/p: spec: ")


# --------------------------------------------------------------------------- bad files

BAD_FILES = [
    (
        "kind: Pod\nmetadata: {name: [}\n",
        "f.yaml",
        "f.yaml: not valid YAML: line 2, column 19: while parsing a flow node did not find "
        "expected node content",
    ),
    (
        "kind: Pod\nmetadata:\n\tname: p\n",
        "f.yaml",
        "f.yaml: not valid YAML: line 3, column 1: while scanning for the next token found "
        "character that cannot start any token (tabs cannot be used for indentation)",
    ),
    (
        "kind: Pod\nkind: Node\nmetadata: {name: p}\n",
        "f.yaml",
        "f.yaml: not valid YAML: line 2, column 1: while constructing a mapping found duplicate "
        "key 'kind'",
    ),
    (
        "kind: Pod\nmetadata: {name: p, labels: {a: !!int x}}\n",
        "f.yaml",
        "f.yaml: not valid YAML: line 2, column 33: invalid !!int value 'x'",
    ),
    (
        "kind: Pod\nmetadata: {name: p, labels: {a: !!bool maybe}}\n",
        "f.yaml",
        "f.yaml: not valid YAML: line 2, column 33: invalid !!bool value 'maybe'",
    ),
    (
        "a: !!python/object:os.system x\n",
        "f.yaml",
        "f.yaml: not valid YAML: line 1, column 4: could not determine a constructor for the tag "
        "'tag:yaml.org,2002:python/object:os.system'",
    ),
    (
        '{"kind": "Pod", ',
        "f.json",
        "f.json: not valid JSON: line 1, column 17: Expecting property name enclosed in double "
        "quotes",
    ),
    (
        '{"kind": "Pod",\n "metadata": {"name": "p",}}',
        "f.json",
        "f.json: not valid JSON: line 2, column 27: Expecting property name enclosed in double "
        "quotes",
    ),
    ("", "f.json", "f.json: not valid JSON: line 1, column 1: Expecting value"),
    (
        '{"kind": "Pod", "kind": "Node"}',
        "f.json",
        "f.json: not valid JSON: duplicate key 'kind'",
    ),
    ("[" * 100_000, "f.json", "f.json: not valid JSON: nested too deeply"),
    (
        '{"kind": "Pod", "spec": {"priority": ' + "1" * 5000 + "}}",
        "f.json",
        "f.json: not valid JSON: Exceeds the limit (4300 digits) for integer string conversion: "
        "value has 5000 digits",
    ),
    (
        "[1, 2]",
        "f.json",
        "f.json: document 1: expected a Kubernetes object (a mapping), got a list",
    ),
]


@pytest.mark.parametrize(("text", "name", "expected"), BAD_FILES, ids=[e for _, _, e in BAD_FILES])
def test_invalid_yaml_and_json(cwd: Path, text: str, name: str, expected: str) -> None:
    assert _error(cwd, text, name) == expected


def test_deeply_nested_yaml(cwd: Path) -> None:
    """Nesting too deep is refused at the first level too deep, fast, never crashing: by
    schedsim at go-yaml's 10,000 levels (Kubernetes' decoder: max_flow_level, max_indents), or
    first by libyaml's own limit of 1,000 levels where PyYAML bundles it (6.0.4 and later)."""
    for text in ("[" * 100_000 + "]" * 100_000, "- " * 10_001 + "x\n"):
        msg = _error(cwd, text)
        assert msg.startswith("f.yaml: not valid YAML: line 1, column "), msg
        assert "nesting depth" in msg, msg


def test_nesting_within_both_limits_is_parsed() -> None:
    """1,000 levels are within go-yaml's limit and libyaml's: parsed."""
    from schedsim.api.loading.manifest_text import parse_text

    docs = parse_text("[" * 1_000 + "]" * 1_000, "f.yaml")
    depth, value = 0, docs[0]
    while isinstance(value, list):
        depth, value = depth + 1, value[0] if value else None
    assert depth == 1_000


def test_huge_yaml_integer(cwd: Path) -> None:
    msg = _error(cwd, P + "spec: {priority: " + "1" * 5000 + "}\n")
    assert msg == (
        "f.yaml: not valid YAML: line 3, column 18: invalid !!int value "
        "'1111111111111111111111111111111111111...'"
    )


def test_binary_file(cwd: Path) -> None:
    assert _error(cwd, bytes(range(256))) == "f.yaml: not a UTF-8 text file"


def test_latin1_file(cwd: Path) -> None:
    assert _error(cwd, "kind: Pod\nmetadata: {name: caf\u00e9}\n".encode("latin-1")) == (
        "f.yaml: not a UTF-8 text file"
    )


def test_control_character(cwd: Path) -> None:
    msg = _error(cwd, "kind: Pod\x00\n")
    assert msg.startswith("f.yaml: not valid YAML: ")
    assert "\n" not in msg


def test_missing_file(cwd: Path) -> None:
    with pytest.raises(ManifestError) as info:
        load_paths(["nope.yaml"])
    assert str(info.value) == "nope.yaml: no such file or directory"


def test_missing_file_after_good_ones(cwd: Path) -> None:
    _write(cwd / "a.yaml", POD)
    with pytest.raises(ManifestError, match=r"^missing/b\.yaml: no such file or directory$"):
        load_paths(["a.yaml", "missing/b.yaml"])


def test_empty_path_is_not_the_current_directory(cwd: Path) -> None:
    _write(cwd / "a.yaml", POD)
    with pytest.raises(ManifestError) as info:
        load_paths([""])
    assert str(info.value) == "'': empty path"


def test_directory_without_manifests(cwd: Path) -> None:
    _write(cwd / "d" / "notes.txt", POD)
    (cwd / "d" / "sub.yaml").mkdir()
    with pytest.raises(ManifestError) as info:
        load_paths(["d"])
    assert str(info.value) == "d: directory has no .yaml, .yml or .json files"


def test_empty_directory(cwd: Path) -> None:
    (cwd / "empty").mkdir()
    with pytest.raises(ManifestError, match=r"^empty: directory has no \.yaml, \.yml or \.json"):
        load_paths(["empty"])


def _unreadable(path: Path) -> None:
    path.chmod(0)
    if os.access(path, os.R_OK):  # root reads everything
        path.chmod(0o755)
        pytest.skip("running with permissions that ignore file modes (root)")


def test_unreadable_file(cwd: Path) -> None:
    path = _write(cwd / "f.yaml", POD)
    _unreadable(path)
    try:
        with pytest.raises(ManifestError) as info:
            load_paths(["f.yaml"])
    finally:
        path.chmod(0o644)
    assert str(info.value) == "f.yaml: cannot read: Permission denied"


def test_unreadable_directory(cwd: Path) -> None:
    _write(cwd / "d" / "a.yaml", POD)
    _unreadable(cwd / "d")
    try:
        with pytest.raises(ManifestError) as info:
            load_paths(["d"])
    finally:
        (cwd / "d").chmod(0o755)
    assert str(info.value) == "d: cannot read: Permission denied"


def test_read_errors_are_reported_whoever_runs_the_tests(
    cwd: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the chmod tests above are skipped as root; fake the OSErrors to cover the same paths
    _write(cwd / "f.yaml", POD)
    _write(cwd / "d" / "a.yaml", POD)

    def denied(*args: object, **kwargs: object) -> str:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "open", denied)  # _read opens the file in binary
    with pytest.raises(ManifestError, match=r"^f\.yaml: cannot read: Permission denied$"):
        load_paths(["f.yaml"])
    monkeypatch.setattr(Path, "iterdir", denied)
    with pytest.raises(ManifestError, match=r"^d: cannot read: Permission denied$"):
        load_paths(["d"])


def test_load_text_uses_source_for_format_and_messages() -> None:
    assert [
        p.name
        for p in load_text(
            '{"kind": "Pod", "metadata": {"name": "j"}, "spec": {"containers": [{"name": "c"}]}}',
            "x.json",
        ).pods
    ] == ["j"]
    with pytest.raises(ManifestError, match=r"^<example>: not valid YAML: "):
        load_text("a: [", "<example>")
