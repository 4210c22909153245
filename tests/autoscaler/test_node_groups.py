"""The node-groups file (good and bad input) and template sanitization (CA
``simulator/node_info_utils_test.go`` ``TestSanitizedNodeInfo`` /
``dynamicresources/utils/sanitize_test.go``: names, UIDs, hostname, slices with pools, pod-owned
claims copied and re-pointed, shared claims kept)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest
import yaml

from schedsim.api.errors import ManifestError
from schedsim.api.resource import ResourceClaim, ResourceSlice
from schedsim.autoscaler.nodegroups import (
    NodeGroupError,
    group_of_nodes,
    load_node_groups,
    parse_node_groups,
    unknown_member_nodes,
)
from schedsim.autoscaler.sanitize import SanitizationError, sanitized_node_info, template_node_info

NODE = {"metadata": {"name": "gpu-template", "labels": {"pool": "gpu"}},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}  # fmt: skip
SLICE = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceSlice",
    "metadata": {"name": "gpu-template-gpus"},
    "spec": {
        "driver": "gpu.example.com",
        "nodeName": "gpu-template",
        "pool": {"name": "gpu-template", "generation": 1, "resourceSliceCount": 1},
        "devices": [{"name": "gpu-0"}, {"name": "gpu-1"}],
    },
}
DS_POD = {
    "metadata": {
        "name": "agent",
        "namespace": "kube-system",
        "uid": "agent-uid",
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent",
                             "uid": "ds-uid", "controller": True}],
    },
    "spec": {
        "containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}],
        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"},
                           {"name": "shared", "resourceClaimName": "shared-claim"}],
    },
    "status": {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "agent-gpu"}]},
}  # fmt: skip
OWNED_CLAIM = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaim",
    "metadata": {
        "name": "agent-gpu",
        "namespace": "kube-system",
        "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "agent",
                             "uid": "agent-uid", "controller": True}],
    },
    "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}},
    "status": {
        "allocation": {
            "devices": {"results": [{"request": "gpu", "driver": "gpu.example.com",
                                     "pool": "gpu-template", "device": "gpu-0"}]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": ["gpu-template"]}]}]},
        },
        "reservedFor": [{"resource": "pods", "name": "agent", "uid": "agent-uid"}],
    },
}  # fmt: skip
SHARED_CLAIM = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaim",
    "metadata": {"name": "shared-claim", "namespace": "kube-system"},
    "spec": {"devices": {"requests": [{"name": "x", "exactly": {"deviceClassName": "gpu"}}]}},
}


def doc(**group: Any) -> dict[str, Any]:
    g: dict[str, Any] = {"name": "gpu", "minSize": 0, "maxSize": 5, "template": {"node": NODE}}
    g.update(group)
    return {"nodeGroups": [g]}


def test_parse_full_group() -> None:
    template = {"node": NODE, "pods": [DS_POD], "resourceSlices": [SLICE],
                "resourceClaims": [OWNED_CLAIM, SHARED_CLAIM]}  # fmt: skip
    [g] = parse_node_groups(
        doc(template=template, nodeSelector={"pool": "gpu"}, currentSize=2, minSize=1), "f.yaml"
    )
    assert (g.name, g.min_size, g.max_size, g.current_size) == ("gpu", 1, 5, 2)
    assert g.template.pods[0].node_name == "gpu-template"  # bound to the template node
    assert [s.name for s in g.template.resource_slices] == ["gpu-template-gpus"]
    assert len(g.template.resource_claims) == 2
    assert g.is_member(g.template.node)
    [g2] = parse_node_groups(doc(), "f.yaml")
    assert g2.size([g.template.node]) == 0  # no selector: no member
    [g3] = parse_node_groups(doc(nodes=["gpu-template"]), "f.yaml")
    assert g3.size([g.template.node]) == 1


def test_load_file(tmp_path: Path) -> None:
    f = tmp_path / "groups.yaml"
    f.write_text(yaml.safe_dump(doc(nodeSelector={"pool": "gpu"})))
    [g] = load_node_groups(str(f))
    assert g.size([g.template.node, attrs.evolve(g.template.node, labels={})]) == 1


SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com')"
)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([1], "f.yaml: expected a mapping with a nodeGroups list, got a list"),
        ({"nodeGroups": []}, "f.yaml: nodeGroups: required (at least one node group)"),
        ({"nodeGroups": {}}, "f.yaml: nodeGroups: expected a list, got a mapping"),
        ({"groups": []}, "f.yaml: groups: unknown field (expected nodeGroups)"),
        ({"kind": "Pod", "nodeGroups": []}, "f.yaml: kind: expected NodeGroups, got 'Pod'"),
        # values as YAML spells them (issue 30): not Python's inf, True, ['a']
        ({"kind": float("inf"), "nodeGroups": []}, "f.yaml: kind: expected NodeGroups, got .inf"),
        ({"kind": True, "nodeGroups": []}, "f.yaml: kind: expected NodeGroups, got true"),
        ({"kind": ["a"], "nodeGroups": []}, 'f.yaml: kind: expected NodeGroups, got ["a"]'),
        (doc(price=float("nan")),
         "f.yaml: nodeGroups[0].price: must be a finite number >= 0, got .nan"),
        (doc(price=float("-inf")),
         "f.yaml: nodeGroups[0].price: must be a finite number >= 0, got -.inf"),
        (doc(price=False), "f.yaml: nodeGroups[0].price: must be a finite number >= 0, got false"),
        ({"nodeGroups": ["x"]}, "f.yaml: nodeGroups[0]: expected a mapping, got a string"),
        (doc(name=""), "f.yaml: nodeGroups[0].name: required"),
        (doc(maxSize=None), "f.yaml: nodeGroups[0].maxSize: required"),
        (doc(maxSize="3"), "f.yaml: nodeGroups[0].maxSize: expected an integer, got a string"),
        (doc(minSize=-1), "f.yaml: nodeGroups[0].minSize: must be >= 0, got -1"),
        (doc(minSize=4, maxSize=3), "f.yaml: nodeGroups[0].maxSize: must be >= minSize (4), got 3"),
        (doc(currentSize=9),
         "f.yaml: nodeGroups[0].currentSize: must be between minSize (0) and maxSize (5), got 9"),
        (doc(maxsize=3), "f.yaml: nodeGroups[0].maxsize: unknown field (expected currentSize, "
         "maxSize, minSize, name, nodeSelector, nodes, price, template)"),
        (doc(nodeSelector={"a": 1}), "f.yaml: nodeGroups[0].nodeSelector[a]: expected a string, "
         "got a number"),
        (doc(nodes="a"), "f.yaml: nodeGroups[0].nodes: expected a list, got a string"),
        (doc(template=None), "f.yaml: nodeGroups[0].template: required"),
        (doc(template={"pods": []}), "f.yaml: nodeGroups[0].template.node: required"),
        (doc(template={"node": {"metadata": {}}}),
         "f.yaml: nodeGroups[0].template.node.metadata.name: required"),
        (doc(template={"node": {"kind": "Pod", "metadata": {"name": "x"}}}),
         "f.yaml: nodeGroups[0].template.node.kind: expected Node, got 'Pod'"),
        (doc(template={"node": {"kind": float("inf"), "metadata": {"name": "x"}}}),
         "f.yaml: nodeGroups[0].template.node.kind: expected Node, got .inf"),
        (doc(template={"node": {"kind": 1.5, "metadata": {"name": "x"}}}),
         "f.yaml: nodeGroups[0].template.node.kind: expected Node, got 1.5"),
        (doc(template={"node": NODE, "pods": {}}),
         "f.yaml: nodeGroups[0].template.pods: expected a list, got a mapping"),
        (doc(template={"node": NODE, "pods": [{"metadata": {"name": "p"},
                                               "spec": {"nodeName": "elsewhere",
                                                        "containers": [{"name": "c",
                                                                        "image": "i"}]}}]}),
         "f.yaml: nodeGroups[0].template.pods[0].spec.nodeName: must be empty or the template "
         "node's name 'gpu-template', got 'elsewhere'"),
        (doc(template={"node": NODE, "resourceSlices": [
            {**SLICE, "spec": {**SLICE["spec"], "nodeName": "other"}}]}),
         "f.yaml: nodeGroups[0].template.resourceSlices[0].spec.nodeName: must be the template "
         "node's name 'gpu-template' (only node-local slices can be copied)"),
        (doc(template={"node": NODE, "image": "x"}),
         "f.yaml: nodeGroups[0].template.image: unknown field (expected csiNode, node, pods, "
         "resourceClaims, resourceSlices)"),
        # the API server's rules apply to templates and listed node names as to manifests
        # (apimachinery IsDNS1123Subdomain, ValidateLabels; a fresh-user finding)
        (doc(template={"node": {**NODE, "metadata": {**NODE["metadata"], "name": "Bad_T!"}}}),
         "f.yaml: nodeGroups[0].template.node.metadata.name: invalid value 'Bad_T!': "
         f"{SUBDOMAIN}"),
        (doc(nodes=["Bad_Node!"]), f"f.yaml: nodeGroups[0].nodes[0]: invalid value 'Bad_Node!': "
         f"{SUBDOMAIN}"),
        (doc(nodes=[""]), f"f.yaml: nodeGroups[0].nodes[0]: invalid value '': {SUBDOMAIN}"),
        (doc(nodeSelector={"pool": "a b"}),
         "f.yaml: nodeGroups[0].nodeSelector: invalid value 'a b': a valid label must be an "
         "empty string or consist of alphanumeric characters, '-', '_' or '.', and must start "
         "and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
         "regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"),
        ({"nodeGroups": [doc()["nodeGroups"][0], doc()["nodeGroups"][0]]},
         "f.yaml: nodeGroups[1].name: duplicate node group 'gpu' (first at nodeGroups[0])"),
    ],
)  # fmt: skip
def test_bad_input(data: Any, message: str) -> None:
    with pytest.raises(ManifestError) as e:
        parse_node_groups(data, "f.yaml")
    assert str(e.value) == message


def test_bad_files(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match=r"nope\.yaml: no such file or directory"):
        load_node_groups(str(tmp_path / "nope.yaml"))
    two = tmp_path / "two.yaml"
    two.write_text("nodeGroups: []\n---\nnodeGroups: []\n")
    with pytest.raises(ManifestError, match=r"two\.yaml: expected one YAML document, got 2"):
        load_node_groups(str(two))
    bad = tmp_path / "bad.yaml"
    bad.write_text("nodeGroups: [\n")
    with pytest.raises(ManifestError, match=r"bad\.yaml: not valid YAML: line"):
        load_node_groups(str(bad))


def _template() -> Any:
    template = {"node": NODE, "pods": [DS_POD], "resourceSlices": [SLICE],
                "resourceClaims": [OWNED_CLAIM]}  # fmt: skip
    [g] = parse_node_groups(doc(template=template), "f.yaml")
    shared = ResourceClaim.from_manifest(SHARED_CLAIM)
    return template_node_info(g.template, [shared]), shared


def test_sanitized_copy() -> None:
    """CA ``createSanitizedNodeInfo`` + ``SanitizedNodeResourceSlices`` +
    ``SanitizedPodResourceClaims`` + ``SanitizedResourceClaimRefs``."""
    template, shared = _template()
    copy = sanitized_node_info(template, "gpu-template-e-0", "e-0")
    node = copy.node
    assert node is not None and node.name == "gpu-template-e-0"
    assert node.uid != template.node.uid
    assert node.labels == {"pool": "gpu", "kubernetes.io/hostname": "gpu-template-e-0"}
    [s] = copy.local_resource_slices
    assert isinstance(s, ResourceSlice)
    assert (s.name, s.pool.name, s.node_name) == (
        "gpu-template-gpus-e-0", "gpu-template-e-0", "gpu-template-e-0")  # fmt: skip
    assert s.uid and s.devices == template.local_resource_slices[0].devices
    [pi] = copy.pods
    p = pi.pod
    assert (p.name, p.node_name, p.namespace) == ("agent-e-0", "gpu-template-e-0", "kube-system")
    assert p.uid != "agent-uid"
    assert p.resource_claim_statuses == {"gpu": "agent-gpu-e-0"}
    owned, kept = pi.needed_resource_claims
    assert kept is shared  # shared claims are not copied
    assert owned.name == "agent-gpu-e-0" and owned.uid
    assert [(o.kind, o.name, o.uid, o.controller) for o in owned.owner_references] == [
        ("Pod", "agent-e-0", p.uid, True)
    ]
    alloc = owned.status.allocation
    assert [(r.pool, r.device) for r in alloc.results] == [("gpu-template-e-0", "gpu-0")]
    assert alloc.node_selector[0].match_fields[0].values == ("gpu-template-e-0",)
    assert [(r.name, r.uid) for r in owned.status.reserved_for] == [("agent-e-0", p.uid)]
    # the template is untouched
    assert template.pods[0].needed_resource_claims[0].name == "agent-gpu"
    assert template.local_resource_slices[0].pool.name == "gpu-template"
    # copies with different suffixes do not collide
    other = sanitized_node_info(template, "gpu-template-e-1", "e-1")
    assert other.pods[0].pod.uid != p.uid
    assert other.pods[0].needed_resource_claims[0].uid != owned.uid


def test_sanitize_refuses_what_ca_refuses() -> None:
    template, _ = _template()
    elsewhere = attrs.evolve(
        template.pods[0].needed_resource_claims[0],
        status=attrs.evolve(
            template.pods[0].needed_resource_claims[0].status,
            allocation=attrs.evolve(
                template.pods[0].needed_resource_claims[0].status.allocation, node_selector=None
            ),
        ),
    )
    from schedsim.snapshot import NodeInfo, PodInfo

    bad = NodeInfo(
        template.node,
        template.local_resource_slices,
        None,
        [PodInfo(template.pods[0].pod, [elsewhere])],
    )
    with pytest.raises(SanitizationError, match="allocated, but not node-local on gpu-template"):
        sanitized_node_info(bad, "x", "e-0")
    global_slice = attrs.evolve(template.local_resource_slices[0], node_name=None, all_nodes=True)
    with pytest.raises(SanitizationError, match="isn't node-local"):
        sanitized_node_info(NodeInfo(template.node, [global_slice]), "x", "e-0")


def test_missing_claim_is_reported() -> None:
    [g] = parse_node_groups(doc(template={"node": NODE, "pods": [DS_POD]}), "f.yaml")
    with pytest.raises(SanitizationError, match="references ResourceClaim kube-system/agent-gpu"):
        template_node_info(g.template)


def _two_groups(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    ga = {**doc()["nodeGroups"][0], "name": "a", **a}
    gb = {**doc()["nodeGroups"][0], "name": "b", **b}
    return {"nodeGroups": [ga, gb]}


def test_node_listed_in_two_groups_is_an_error() -> None:
    """CA: a node belongs to exactly one node group (``CloudProvider.NodeGroupForNode``
    returns one), so a node listed by two groups is bad input, naming the second listing."""
    with pytest.raises(ManifestError) as e:
        parse_node_groups(_two_groups({"nodes": ["x", "worker-a"]}, {"nodes": ["worker-a"]}),
                          "f.yaml")  # fmt: skip
    assert str(e.value) == 'f.yaml: nodeGroups[1].nodes[0]: node "worker-a" is already in group "a"'
    [g] = parse_node_groups(doc(nodes=["n", "n"]), "f.yaml")  # a repeat within one group is moot
    assert g.nodes == frozenset({"n"})


def test_node_claimed_by_two_groups_through_selectors_is_an_error() -> None:
    """The same CA rule for membership by labels: it needs the cluster, so it is checked by
    `group_of_nodes` (which scale-up and scale-down call)."""
    groups = parse_node_groups(
        _two_groups({"nodes": ["n1"]}, {"nodeSelector": {"pool": "gpu"}}), "f.yaml"
    )
    n1 = attrs.evolve(groups[0].template.node, name="n1")  # labelled pool=gpu
    n2 = attrs.evolve(n1, name="n2")
    with pytest.raises(NodeGroupError) as e:
        group_of_nodes(groups, [n1, n2])
    assert str(e.value) == 'nodeGroups[1].nodeSelector: node "n1" is already in group "a"'
    assert e.value.field == "nodeGroups[1].nodeSelector"
    assert {k: g.name for k, g in group_of_nodes(groups, [n2]).items()} == {"n2": "b"}


def test_listed_nodes_missing_from_the_cluster_are_warnings() -> None:
    groups = parse_node_groups(_two_groups({"nodes": ["nosuch", "n1"]}, {}), "f.yaml")
    n1 = attrs.evolve(groups[0].template.node, name="n1")
    assert unknown_member_nodes(groups, [n1]) == [
        'nodeGroups[0].nodes: node "nosuch" is not in the cluster'
    ]


def _claim_template(**alloc: Any) -> Any:
    claim = json.loads(json.dumps(OWNED_CLAIM))
    claim["status"]["allocation"]["devices"]["results"][0].update(alloc)
    template = {"node": NODE, "pods": [DS_POD], "resourceSlices": [SLICE],
                "resourceClaims": [SHARED_CLAIM, claim]}  # fmt: skip
    [g] = parse_node_groups(doc(template=template), "f.yaml")
    return g.template


def test_template_claim_allocated_to_a_device_the_template_lacks_is_an_error() -> None:
    """A template CA takes from a real node has claims allocated to devices its slices publish
    (the scheduler allocates nothing else); a copy allocated to a device that does not exist
    would leave a real device free on every new node (3 nodes instead of 5 for the user's
    5 pods), so it is bad input naming the field, the group, the claim and the device."""
    with pytest.raises(SanitizationError) as e:
        template_node_info(_claim_template(device="gpu-99"), path="nodeGroups[0].template",
                           group="gpu")  # fmt: skip
    assert e.value.field == (
        "nodeGroups[0].template.resourceClaims[1].status.allocation.devices.results[0].device"
    )
    assert e.value.problem == (
        'claim kube-system/agent-gpu (node group gpu) is allocated device "gpu-99", which the '
        "template's resourceSlices do not have (driver gpu.example.com, pool gpu-template)"
    )
    with pytest.raises(SanitizationError, match=r"driver other\.example\.com"):
        template_node_info(_claim_template(driver="other.example.com"))


def test_template_errors_name_the_field() -> None:
    """CA's sanitization errors (``SanitizedPodResourceClaims``: allocated elsewhere, from a
    pool that is not node-local) and a claim found nowhere, as ``FIELD: problem``."""
    with pytest.raises(SanitizationError) as e:
        template_node_info(_claim_template(pool="cpu-1"), path="nodeGroups[2].template")
    assert str(e.value) == (
        "nodeGroups[2].template.resourceClaims[1].status.allocation.devices.results[0].pool: "
        "claim kube-system/agent-gpu has an allocation gpu from pool 'cpu-1', which isn't "
        "node-local on gpu-template - can't be sanitized"
    )
    [g] = parse_node_groups(doc(template={"node": NODE, "pods": [DS_POD]}), "f.yaml")
    with pytest.raises(SanitizationError) as e:
        template_node_info(g.template, path="nodeGroups[0].template")
    assert e.value.field == "nodeGroups[0].template.pods[0].spec.resourceClaims[0]"
    elsewhere = json.loads(json.dumps(OWNED_CLAIM))
    terms = elsewhere["status"]["allocation"]["nodeSelector"]["nodeSelectorTerms"]
    terms[0]["matchFields"][0]["values"] = ["other-node"]
    template = {"node": NODE, "pods": [DS_POD], "resourceSlices": [SLICE],
                "resourceClaims": [elsewhere]}  # fmt: skip
    [g] = parse_node_groups(doc(template=template), "f.yaml")
    shared = ResourceClaim.from_manifest(SHARED_CLAIM)
    with pytest.raises(SanitizationError) as e:
        template_node_info(g.template, [shared])
    assert e.value.field == "template.resourceClaims[0].status.allocation.nodeSelector"


def test_load_node_groups_from_stdin() -> None:
    [g] = load_node_groups("-", lambda: yaml.safe_dump(doc()))
    assert g.name == "gpu"
    with pytest.raises(ManifestError, match=r"^<stdin>: nodeGroups\[0\]\.maxSize: required$"):
        load_node_groups("-", lambda: yaml.safe_dump(doc(maxSize=None)))
