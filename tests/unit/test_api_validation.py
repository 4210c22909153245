"""Objects the Kubernetes API server would reject are rejected at load time, naming the file,
the object and the field (``FILE: KIND NS/NAME: FIELD: problem``; the CLI exits 2).

Each test names the API-server rule it mirrors (k8s.io/kubernetes ``pkg/apis/core/validation``,
``pkg/apis/resource/validation``, the API types' integer widths, the versions served in 1.34).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from schedsim.api.errors import ManifestError
from schedsim.api.loading.loader import Manifests, decode_objects, load_paths

LABEL_PROBLEM = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name', or '123-abc')"
)


def _decode(text: str) -> Manifests:
    return decode_objects(list(yaml.safe_load_all(text)), "f.yaml")


def _error(text: str) -> str:
    with pytest.raises(ManifestError) as info:
        _decode(text)
    return str(info.value)


# --------------------------------------------------------------------------- pod claims

POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
P = "f.yaml: Pod default/p: "


def _pod(claims: str, containers: str = "[{name: c}]") -> str:
    return POD + f"spec: {{containers: {containers}, resourceClaims: {claims}}}\n"


def test_pod_resource_claim_needs_exactly_one_source() -> None:
    """Mirrors core validation validatePodResourceClaim: ``at most one of
    `resourceClaimName` or `resourceClaimTemplateName` may be specified`` and ``must specify
    one of: `resourceClaimName`, `resourceClaimTemplateName```."""
    both = _pod("[{name: gpu, resourceClaimName: a, resourceClaimTemplateName: b}]")
    assert _error(both) == (
        P + "spec.resourceClaims[0]: at most one of `resourceClaimName` or "
        "`resourceClaimTemplateName` may be specified"
    )
    neither = _pod("[{name: gpu}]")
    assert _error(neither) == (
        P + "spec.resourceClaims[0]: must specify one of: `resourceClaimName`, "
        "`resourceClaimTemplateName`"
    )
    ok = _decode(_pod("[{name: a, resourceClaimName: c}, {name: b, resourceClaimTemplateName: t}]"))
    [(a, b)] = [p.resource_claims for p in ok.pods]
    assert (a.resource_claim_name, a.resource_claim_template_name) == ("c", None)
    assert (b.resource_claim_name, b.resource_claim_template_name) == (None, "t")


def test_pod_resource_claim_name_is_required_unique_and_a_dns_label() -> None:
    """Mirrors core validation validatePodResourceClaim: the name is Required, a Duplicate
    is an error, and it must be a DNS-1123 label."""
    assert _error(_pod("[{resourceClaimName: a}]")) == P + "spec.resourceClaims[0].name: required"
    dup = _pod("[{name: gpu, resourceClaimName: a}, {name: gpu, resourceClaimName: b}]")
    assert _error(dup) == (
        P + "spec.resourceClaims[1].name: duplicate name 'gpu' (first at "
        "spec.resourceClaims[0].name)"
    )
    bad = _pod("[{name: GPU, resourceClaimName: a}]")
    assert _error(bad) == P + f"spec.resourceClaims[0].name: invalid value 'GPU': {LABEL_PROBLEM}"


def test_pod_resource_claim_source_is_an_object_name() -> None:
    """Mirrors core validation validatePodResourceClaim: resourceClaimName and
    resourceClaimTemplateName must be valid object names (ValidateResourceClaimName, a DNS-1123
    subdomain)."""
    assert _error(_pod("[{name: gpu, resourceClaimName: My_Claim}]")).startswith(
        P + "spec.resourceClaims[0].resourceClaimName: invalid value 'My_Claim': a lowercase "
        "RFC 1123 subdomain must consist of"
    )
    assert _error(_pod("[{name: gpu, resourceClaimTemplateName: ''}]")).startswith(
        P + "spec.resourceClaims[0].resourceClaimTemplateName: invalid value '': "
    )


def test_container_claims_must_name_a_pod_resource_claim() -> None:
    """Mirrors core validation validateResourceClaimNames: each container's
    resources.claims[].name must be one of the names in pod.spec.resourceClaims (NotFound, with
    the list of names, or "which is empty"); init containers too."""
    unknown = POD + "spec: {containers: [{name: c, resources: {claims: [{name: nosuch}]}}]}\n"
    assert _error(unknown) == (
        P + "spec.containers[0].resources.claims[0]: not found 'nosuch': must be one of the "
        "names in pod.spec.resourceClaims which is empty"
    )
    init = POD + (
        "spec: {containers: [{name: c, resources: {claims: [{name: a}]}}], "
        "initContainers: [{name: i, resources: {claims: [{name: z}]}}], "
        "resourceClaims: [{name: b, resourceClaimName: x}, {name: a, resourceClaimName: y}]}\n"
    )
    assert _error(init) == (
        P + "spec.initContainers[0].resources.claims[0]: not found 'z': must be one of the "
        "names in pod.spec.resourceClaims: a, b"
    )
    ok = _pod(
        "[{name: gpu, resourceClaimName: c}]", "[{name: c, resources: {claims: [{name: gpu}]}}]"
    )
    assert [p.name for p in _decode(ok).pods] == ["p"]


def test_container_claims_are_unique_and_requests_are_dns_labels() -> None:
    """Mirrors core validation validateResourceClaimNames: (name, request) pairs are unique
    (Duplicate) and a request, when set, is a DNS-1123 label."""
    claims = "[{name: gpu, resourceClaimName: c}]"
    dup = _pod(claims, "[{name: c, resources: {claims: [{name: gpu}, {name: gpu}]}}]")
    assert _error(dup) == P + "spec.containers[0].resources.claims[1]: duplicate value 'gpu'"
    two_requests = (
        "[{name: c, resources: {claims: [{name: gpu, request: a}, {name: gpu, request: b}]}}]"
    )
    assert [p.name for p in _decode(_pod(claims, two_requests)).pods] == ["p"]
    bad = _pod(claims, "[{name: c, resources: {claims: [{name: gpu, request: A}]}}]")
    assert _error(bad) == (
        P + f"spec.containers[0].resources.claims[0].request: invalid value 'A': {LABEL_PROBLEM}"
    )
    nameless = _pod(claims, "[{name: c, resources: {claims: [{request: a}]}}]")
    assert _error(nameless) == P + "spec.containers[0].resources.claims[0].name: required"


# --------------------------------------------------------------------------- DRA names, count

CLAIM = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\n"
C = "f.yaml: ResourceClaim default/c: "


def test_request_name_must_be_a_dns_label() -> None:
    """Mirrors resource validation validateRequestName (= ValidateDNS1123Label) on
    spec.devices.requests[].name (too long is also an error)."""
    bad = (
        CLAIM + "spec: {devices: {requests: [{name: 'Bad_Name!', exactly: {deviceClassName: x}}]}}"
    )
    assert _error(bad) == (
        C + f"spec.devices.requests[0].name: invalid value 'Bad_Name!': {LABEL_PROBLEM}"
    )
    long = "r" * 64
    too_long = (
        CLAIM
        + f"spec: {{devices: {{requests: [{{name: {long}, exactly: {{deviceClassName: x}}}}]}}}}"
    )
    assert _error(too_long) == (
        C + f"spec.devices.requests[0].name: invalid value '{long}': must be no more than 63 "
        "characters"
    )


def test_subrequest_names_keep_the_slash_rule_only() -> None:
    """resource validation validateDeviceSubRequest also wants a DNS label, but upstream's
    allocator tests (transcribed as cases) use ``subReq-0``: only '/' is rejected there."""
    text = CLAIM + (
        "spec: {devices: {requests: [{name: r, firstAvailable: "
        "[{name: subReq-0, deviceClassName: x}]}]}}"
    )
    [claim] = _decode(text).resource_claims
    assert claim.spec.requests[0].first_available[0].name == "subReq-0"


def test_device_name_must_be_a_dns_label() -> None:
    """Mirrors resource validation validateDeviceName (= ValidateDNS1123Label) on a
    ResourceSlice's spec.devices[].name."""
    text = (
        "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\n"
        "spec: {driver: d, nodeName: n, pool: {name: p, resourceSliceCount: 1}, "
        "devices: [{name: 'GPU_0!'}]}\n"
    )
    assert _error(text) == (
        f"f.yaml: ResourceSlice s: spec.devices[0].name: invalid value 'GPU_0!': {LABEL_PROBLEM}"
    )


@pytest.mark.parametrize(
    ("count", "problem"),
    [
        ("100000000000000000000", "100000000000000000000 is out of range for a 64-bit integer"),
        ("9223372036854775808", "9223372036854775808 is out of range for a 64-bit integer"),
        ("-1", "must be greater than zero, got -1"),
    ],
)
def test_request_count_is_a_positive_int64(count: str, problem: str) -> None:
    """Mirrors ExactDeviceRequest.Count (an int64: a larger number cannot be decoded by the API
    server) and validateDeviceAllocationMode (ExactCount needs count > 0). The API has no
    per-request maximum: more than 32 devices fails at allocation, as in kube-scheduler."""
    text = CLAIM + (
        f"spec: {{devices: {{requests: [{{name: gpu, exactly: {{deviceClassName: x, "
        f"count: {count}}}}}]}}}}\n"
    )
    assert _error(text) == C + f"spec.devices.requests[0].exactly.count: {problem}"
    ok = text.replace(count, "9223372036854775807")
    [claim] = _decode(ok).resource_claims
    exactly = claim.spec.requests[0].exactly
    assert exactly is not None and exactly.count == 2**63 - 1


# --------------------------------------------------------------------------- CSINode count


def test_csinode_allocatable_count_is_an_int32() -> None:
    """Mirrors VolumeNodeResources.Count (an int32: 2147483648 cannot be decoded by the API
    server) and ValidateCSINode's ``must be greater than or equal to 0``."""
    text = (
        "apiVersion: storage.k8s.io/v1\nkind: CSINode\nmetadata: {name: n1}\n"
        "spec: {drivers: [{name: ebs.csi.aws.com, nodeID: i-1, allocatable: {count: %s}}]}\n"
    )
    assert _error(text % "2147483648") == (
        "f.yaml: CSINode n1: spec.drivers[0].allocatable.count: 2147483648 is out of range for "
        "a 32-bit integer (max 2147483647)"
    )
    [csi] = _decode(text % "2147483647").csi_nodes
    assert csi.volume_limits() == {"ebs.csi.aws.com": 2**31 - 1}


# --------------------------------------------------------------------------- apiVersion

API_VERSIONS = [
    ("Node", "v1", "", "v1"),
    ("Pod", "v1", "default/", "v1"),
    ("PersistentVolume", "v1", "", "v1"),
    ("PersistentVolumeClaim", "v1", "default/", "v1"),
    ("CSINode", "storage.k8s.io/v1", "", "storage.k8s.io/v1"),
    ("StorageClass", "storage.k8s.io/v1", "", "storage.k8s.io/v1"),
    ("VolumeAttachment", "storage.k8s.io/v1", "", "storage.k8s.io/v1"),
]
BODY = {
    "Pod": "spec: {containers: [{name: c}]}\n",
    "PersistentVolume": "spec: {hostPath: {path: /x}}\n",
    "StorageClass": "provisioner: p\n",
    "VolumeAttachment": "spec: {attacher: a, nodeName: n, source: {persistentVolumeName: pv}}\n",
}


@pytest.mark.parametrize(
    "wrong", ["apps/v1", "v2", "storage.k8s.io/v2", "storage.k8s.io/v1beta1", "resource.k8s.io/v1"]
)
@pytest.mark.parametrize(
    ("kind", "version", "ns", "use"), API_VERSIONS, ids=[a[0] for a in API_VERSIONS]
)
def test_api_version_must_be_one_the_api_server_serves(
    kind: str, version: str, ns: str, use: str, wrong: str
) -> None:
    """Mirrors the API server's group/version routing in 1.34: Node, Pod, PV and PVC are only
    served as v1; CSINode, StorageClass and VolumeAttachment as storage.k8s.io/v1 (their
    v1beta1 is no longer served since 1.22). An absent apiVersion is accepted, as node-group
    templates omit it."""
    body = f"kind: {kind}\nmetadata: {{name: x}}\n" + BODY.get(kind, "")
    if wrong != version:
        assert _error(f"apiVersion: {wrong}\n" + body) == (
            f"f.yaml: {kind} {ns}x: apiVersion: unsupported version {wrong} for {kind}; use {use}"
        )
    _decode(f"apiVersion: {version}\n" + body)
    _decode(body)


# --------------------------------------------------------------------------- loader


def test_empty_input_warns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty file is not an error (kubectl would say ``no objects passed``), but it is
    likely a slip: one warning per file without objects."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty.yaml").write_text("")
    (tmp_path / "sep.yaml").write_text("---\n---\n")
    (tmp_path / "lists.yaml").write_text("kind: List\nitems: []\n")
    m = load_paths(["empty.yaml", "sep.yaml", "lists.yaml", "/dev/null"])
    assert m.warnings == [
        "no objects found in empty.yaml",
        "no objects found in sep.yaml",
        "no objects found in lists.yaml",
        "no objects found in /dev/null",
    ]
    assert load_paths(["-"], stdin_text=lambda: "").warnings == ["no objects found in <stdin>"]


def test_nested_lists_are_flattened_like_kubectl() -> None:
    """Mirrors cli-runtime's FlattenListVisitor: a List inside a List is expanded, breadth
    first (a List's own objects come before those of the Lists it holds)."""
    text = """\
kind: List
items:
- kind: List
  items:
  - {apiVersion: v1, kind: Node, metadata: {name: inner}}
  - kind: NodeList
    items: [{apiVersion: v1, kind: Node, metadata: {name: deepest}}]
- {apiVersion: v1, kind: Node, metadata: {name: outer}}
"""
    m = _decode(text)
    assert [n.name for n in m.nodes] == ["outer", "inner", "deepest"]
    assert m.warnings == []
    bad = "kind: List\nitems: [{kind: List, items: [{apiVersion: v1, kind: Node}]}]\n"
    assert (
        _error(bad)
        == "f.yaml: Node (document 1 items[0] items[0], no name): metadata.name: required"
    )
    bad_items = "kind: List\nitems: [{kind: List, items: [3]}]\n"
    assert _error(bad_items) == (
        "f.yaml: document 1 items[0]: items[0]: expected a mapping, got a number"
    )


def test_slices_and_csinodes_of_unknown_nodes_warn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A node-local ResourceSlice or a CSINode whose node is not among the nodes read is never
    used for scheduling: say so (the API server accepts them; they are likely a slip)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "nodes.yaml").write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n")
    (tmp_path / "objs.yaml").write_text(
        "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: ghost-gpus}\n"
        "spec: {driver: d, nodeName: ghost, pool: {name: p, resourceSliceCount: 1}}\n---\n"
        "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: n1-gpus}\n"
        "spec: {driver: d, nodeName: n1, pool: {name: q, resourceSliceCount: 1}}\n---\n"
        "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: everywhere}\n"
        "spec: {driver: d, allNodes: true, pool: {name: r, resourceSliceCount: 1}}\n---\n"
        "apiVersion: storage.k8s.io/v1\nkind: CSINode\nmetadata: {name: ghost}\n"
        "spec: {drivers: []}\n---\n"
        "apiVersion: storage.k8s.io/v1\nkind: CSINode\nmetadata: {name: n1}\nspec: {drivers: []}\n"
    )
    # the nodes may come after the objects: the check runs once everything is read
    m = load_paths(["objs.yaml", "nodes.yaml"])
    assert m.warnings == [
        "objs.yaml: ResourceSlice ghost-gpus: spec.nodeName: node 'ghost' is not among the "
        "nodes; ignored for scheduling",
        "objs.yaml: CSINode ghost: metadata.name: node 'ghost' is not among the nodes; ignored "
        "for scheduling",
    ]
