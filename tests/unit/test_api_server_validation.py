"""Issue 15 item 8: every API-invalid input the 1.34 API server refuses is refused at load,
one line per problem ``FILE: KIND NS/NAME: FIELD: problem`` (the CLI exits 2), with the API
server's rule; what it accepts is accepted.

Each row of the table cites the upstream rule it mirrors: k8s.io/kubernetes
``pkg/apis/core/validation/validation.go`` (ValidatePodSpec, ValidateNode and their helpers),
k8s.io/apimachinery ``pkg/api/validation`` (ValidateObjectMeta, ValidateOwnerReferences) and
``pkg/util/validation`` (IsDNS1123Subdomain/Label, IsQualifiedName, IsValidLabelValue,
IsValidPortNum), ``pkg/apis/resource/validation`` (validateDriverName) and the API types'
int32 widths. The rows of the issue's list that other modules refuse (topology spread, pod
affinity, PriorityClass, quantities, the scheduler configuration) are included so the whole
list is pinned here.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from schedsim.api.core import Pod
from schedsim.api.core.nodeaffinity import required_node_affinity
from schedsim.api.errors import ManifestError
from schedsim.api.loading.loader import Manifests, load_paths, load_text
from schedsim.autoscaler.nodegroups import parse_node_groups
from schedsim.cli import main

ROOT = Path(__file__).resolve().parents[2]

SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com')"
)
LABEL = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name', or '123-abc')"
)
NAME_PART = (  # apimachinery IsQualifiedName
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
    "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
    "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
LABEL_VALUE = (  # apimachinery IsValidLabelValue
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
C = "containers: [{name: c, image: i}]"
REQ = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
PREF = "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution"
P = "Pod default/p"


def pod(spec: str = C, meta: str = "name: p") -> str:
    return f"apiVersion: v1\nkind: Pod\nmetadata: {{{meta}}}\nspec: {{{spec}}}\n"


def node(meta: str = "name: n", spec: str = "{}") -> str:
    return (
        f"apiVersion: v1\nkind: Node\nmetadata: {{{meta}}}\nspec: {spec}\n"
        "status: {allocatable: {cpu: '1', memory: 1Gi, pods: '10'}}\n"
    )


def required(expr: str) -> str:
    return pod(
        C + ", affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
        f"{{nodeSelectorTerms: [{expr}]}}}}}}"
    )


def port(p: str) -> str:
    return pod(f"containers: [{{name: c, image: i, ports: [{p}]}}]")


def resources(r: str) -> str:
    return pod(f"containers: [{{name: c, image: i, resources: {r}}}]")


def slice_(driver: str = "d.example.com", device: str = "{name: g}") -> str:
    return (
        "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\n"
        f"spec: {{driver: {driver}, nodeName: n, pool: {{name: p, generation: 1, "
        f"resourceSliceCount: 1}}, devices: [{device}]}}\n"
    )


# (id, manifest, expected "KIND NS/NAME: FIELD: problem", upstream rule)
CASES: list[tuple[str, str, str, str]] = [
    # names: ValidateObjectMeta with NameIsDNSSubdomain (Pod, Node), NameIsDNSLabel (Namespace)
    ("pod name UPPER", pod(meta="name: UPPER"),
     f"Pod default/UPPER: metadata.name: invalid value 'UPPER': {SUBDOMAIN}", "ValidatePodName"),
    ("pod name a/b", pod(meta="name: a/b"),
     f"Pod default/a/b: metadata.name: invalid value 'a/b': {SUBDOMAIN}", "ValidatePodName"),
    ("pod name x y", pod(meta="name: 'x y'"),
     f"Pod default/x y: metadata.name: invalid value 'x y': {SUBDOMAIN}", "ValidatePodName"),
    ("pod name newline", pod(meta='name: "a\\nb"'),
     f"Pod 'default/a\\nb': metadata.name: invalid value 'a\\nb': {SUBDOMAIN}", "ValidatePodName"),
    ("pod name 254 characters", pod(meta="name: " + "a" * 254),
     f"Pod default/{'a' * 254}: metadata.name: invalid value '{'a' * 254}': must be no more "
     "than 253 characters", "IsDNS1123Subdomain"),
    ("pod name escape sequence", pod(meta='name: "\\e[31mred"'),
     f"Pod 'default/\\x1b[31mred': metadata.name: invalid value '\\x1b[31mred': {SUBDOMAIN}",
     "ValidatePodName (printed escaped)"),
    ("node name", node(meta="name: UPPER"),
     f"Node UPPER: metadata.name: invalid value 'UPPER': {SUBDOMAIN}", "ValidateNodeName"),
    ("namespace name", "apiVersion: v1\nkind: Namespace\nmetadata: {name: Bad_NS}\n",
     f"Namespace Bad_NS: metadata.name: invalid value 'Bad_NS': {LABEL}", "ValidateNamespaceName"),
    ("pod namespace", pod(meta="name: p, namespace: Bad_NS"),
     f"Pod Bad_NS/p: metadata.namespace: invalid value 'Bad_NS': {LABEL}",
     "ValidateObjectMeta namespace"),
    # labels: ValidateLabels (IsQualifiedName keys, IsValidLabelValue values)
    ("label key", pod(meta="name: p, labels: {'a b': x}"),
     f"{P}: metadata.labels: invalid value 'a b': {NAME_PART}", "ValidateLabels"),
    ("label value", pod(meta="name: p, labels: {a: 'x y'}"),
     f"{P}: metadata.labels: invalid value 'x y': {LABEL_VALUE}", "ValidateLabels"),
    ("node label key", node(meta="name: n, labels: {'-a': x}"),
     f"Node n: metadata.labels: invalid value '-a': {NAME_PART}", "ValidateLabels"),
    ("nodeSelector key", pod(C + ", nodeSelector: {'a b': x}"),
     f"{P}: spec.nodeSelector: invalid value 'a b': {NAME_PART}", "ValidatePodSpec nodeSelector"),
    # taints: validateNodeTaints
    ("duplicate taints",
     node(spec="{taints: [{key: a, effect: NoSchedule}, {key: a, effect: NoSchedule}]}"),
     "Node n: spec.taints[1]: duplicate value a:NoSchedule: taints must be unique by key and "
     "effect pair", "validateNodeTaints"),
    ("taint key", node(spec="{taints: [{key: 'a b', effect: NoSchedule}]}"),
     f"Node n: spec.taints[0].key: invalid value 'a b': {NAME_PART}", "validateNodeTaints"),
    ("taint value", node(spec="{taints: [{key: a, value: 'x y', effect: NoSchedule}]}"),
     f"Node n: spec.taints[0].value: invalid value 'x y': {LABEL_VALUE}", "validateNodeTaints"),
    # tolerations: ValidateTolerations
    ("tolerationSeconds on NoSchedule",
     pod(C + ", tolerations: [{key: a, operator: Exists, effect: NoSchedule, "
         "tolerationSeconds: 5}]"),
     f"{P}: spec.tolerations[0].effect: invalid value 'NoSchedule': effect must be 'NoExecute' "
     "when `tolerationSeconds` is set", "ValidateTolerations"),
    ("Exists with a value", pod(C + ", tolerations: [{key: a, operator: Exists, value: v}]"),
     f"{P}: spec.tolerations[0].operator: invalid value 'v': value must be empty when "
     "`operator` is 'Exists'", "ValidateTolerations"),
    ("empty key with Equal", pod(C + ", tolerations: [{operator: Equal, value: v}]"),
     f"{P}: spec.tolerations[0].operator: invalid value 'Equal': operator must be Exists when "
     '`key` is empty, which means "match all values and all keys"', "ValidateTolerations"),
    ("toleration key", pod(C + ", tolerations: [{key: 'a b', operator: Exists}]"),
     f"{P}: spec.tolerations[0].key: invalid value 'a b': {NAME_PART}", "ValidateTolerations"),
    # node affinity: ValidateNodeSelector, ValidateNodeSelectorRequirement,
    # ValidateNodeFieldSelectorRequirement, ValidatePreferredSchedulingTerms
    ("In without values", required("{matchExpressions: [{key: a, operator: In}]}"),
     f"{P}: {REQ}[0].matchExpressions[0].values: required: must be specified when `operator` "
     "is 'In' or 'NotIn'", "ValidateNodeSelectorRequirement"),
    ("Exists with values",
     required("{matchExpressions: [{key: a, operator: Exists, values: [x]}]}"),
     f"{P}: {REQ}[0].matchExpressions[0].values: forbidden: may not be specified when "
     "`operator` is 'Exists' or 'DoesNotExist'", "ValidateNodeSelectorRequirement"),
    ("nodeSelectorTerms []",
     pod(C + ", affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
         "{nodeSelectorTerms: []}}}"),
     f"{P}: {REQ}: required: must have at least one node selector term", "ValidateNodeSelector"),
    ("matchFields other key",
     required("{matchFields: [{key: metadata.labels, operator: In, values: [x]}]}"),
     f"{P}: {REQ}[0].matchFields[0].key: invalid value 'metadata.labels': not a valid field "
     "selector key", "ValidateNodeFieldSelectorRequirement"),
    ("matchFields two values",
     required("{matchFields: [{key: metadata.name, operator: In, values: [x, y]}]}"),
     f"{P}: {REQ}[0].matchFields[0].values: required: must be only one value when `operator` is "
     "'In' or 'NotIn' for node field selector", "ValidateNodeFieldSelectorRequirement"),
    ("node affinity key", required("{matchExpressions: [{key: 'a b', operator: Exists}]}"),
     f"{P}: {REQ}[0].matchExpressions[0].key: invalid value 'a b': {NAME_PART}",
     "ValidateNodeSelectorRequirement"),
    ("Gt with two values",
     required("{matchExpressions: [{key: a, operator: Gt, values: ['1', '2']}]}"),
     f"{P}: {REQ}[0].matchExpressions[0].values: required: must be specified single value "
     "when `operator` is 'Lt' or 'Gt'", "ValidateNodeSelectorRequirement"),
    ("Gt value ' 1_0 '",
     required("{matchExpressions: [{key: a, operator: Gt, values: [' 1_0 ']}]}"),
     f"{P}: {REQ}[0].matchExpressions[0].values[0]: invalid value ' 1_0 ': {LABEL_VALUE}",
     "ValidateNodeSelectorRequirement (label values, required affinity)"),
    ("preferred weight 0",
     pod(C + ", affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: "
         "[{weight: 0, preference: {matchExpressions: [{key: a, operator: Exists}]}}]}}"),
     f"{P}: {PREF}[0].weight: invalid value 0: must be in the range 1-100",
     "ValidatePreferredSchedulingTerms"),
    ("preferred weight 1000",
     pod(C + ", affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: "
         "[{weight: 1000, preference: {matchExpressions: [{key: a, operator: Exists}]}}]}}"),
     f"{P}: {PREF}[0].weight: invalid value 1000: must be in the range 1-100",
     "ValidatePreferredSchedulingTerms"),
    ("pod affinity without topologyKey",
     pod(C + ", affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
         "[{labelSelector: {matchLabels: {a: b}}}]}}"),
     f"{P}: spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
     ".topologyKey: can not be empty", "validatePodAffinityTerm"),
    # ports: validateContainerPorts (IsValidPortNum, supportedPortProtocols)
    ("hostPort -1", port("{containerPort: 80, hostPort: -1}"),
     f"{P}: spec.containers[0].ports[0].hostPort: invalid value -1: must be between 1 and "
     "65535, inclusive", "validateContainerPorts"),
    ("hostPort 70000", port("{containerPort: 80, hostPort: 70000}"),
     f"{P}: spec.containers[0].ports[0].hostPort: invalid value 70000: must be between 1 and "
     "65535, inclusive", "validateContainerPorts"),
    ("containerPort 0", port("{containerPort: 0}"),
     f"{P}: spec.containers[0].ports[0].containerPort: required", "validateContainerPorts"),
    ("protocol ICMP", port("{containerPort: 80, protocol: ICMP}"),
     f"{P}: spec.containers[0].ports[0].protocol: unsupported value 'ICMP': supported values: "
     '"SCTP", "TCP", "UDP"', "validateContainerPorts"),
    # containers: validateContainers / validateInitContainers
    ("no containers", pod("containers: []"), f"{P}: spec.containers: required",
     "validateContainers"),
    ("unnamed container", pod("containers: [{image: i}]"),
     f"{P}: spec.containers[0].name: required", "validateContainers"),
    ("duplicate container names", pod("containers: [{name: c, image: i}, {name: c, image: i}]"),
     f"{P}: spec.containers[1].name: duplicate value 'c'", "validateContainers"),
    ("init container restartPolicy Never",
     pod(C + ", initContainers: [{name: i, image: i, restartPolicy: Never}]"),
     f"{P}: spec.initContainers[0].restartPolicy: unsupported value 'Never': supported values: "
     '"Always"', "validateInitContainers"),
    ("priority beyond int32", pod(C + ", priority: 3000000000"),
     f"{P}: spec.priority: invalid value 3000000000: out of range for a 32-bit integer",
     "PodSpec.Priority is *int32"),
    # volumes: ValidateVolumes, validateVolumeSource
    ("unnamed volume", pod(C + ", volumes: [{emptyDir: {}}]"),
     f"{P}: spec.volumes[0].name: required", "ValidateVolumes"),
    ("duplicate volumes", pod(C + ", volumes: [{name: v, emptyDir: {}}, {name: v, emptyDir: {}}]"),
     f"{P}: spec.volumes[1].name: duplicate value 'v'", "ValidateVolumes"),
    ("typeless volume", pod(C + ", volumes: [{name: v}]"),
     f"{P}: spec.volumes[0]: required: must specify a volume type", "validateVolumeSource"),
    # scheduling gates: validateSchedulingGates
    ("empty scheduling gate", pod(C + ", schedulingGates: [{name: ''}]"),
     f"{P}: spec.schedulingGates[0]: invalid value '': name part must be non-empty; {NAME_PART}",
     "validateSchedulingGates"),
    ("duplicate scheduling gates", pod(C + ", schedulingGates: [{name: a.io/g}, {name: a.io/g}]"),
     f"{P}: spec.schedulingGates[1]: duplicate value 'a.io/g'", "validateSchedulingGates"),
    # topology spread: validateTopologySpreadConstraints (decoder, schedsim.api.core.spread)
    ("bad whenUnsatisfiable",
     pod(C + ", topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, "
         "whenUnsatisfiable: Maybe, labelSelector: {}}]"),
     f"{P}: spec.topologySpreadConstraints[0].whenUnsatisfiable: unsupported value 'Maybe': "
     'supported values: "DoNotSchedule", "ScheduleAnyway"', "validateTopologySpreadConstraints"),
    ("maxSkew 0",
     pod(C + ", topologySpreadConstraints: [{maxSkew: 0, topologyKey: zone, "
         "whenUnsatisfiable: DoNotSchedule, labelSelector: {}}]"),
     f"{P}: spec.topologySpreadConstraints[0].maxSkew: 0: must be greater than zero",
     "validateTopologySpreadConstraints"),
    # owner references: ValidateOwnerReferences
    ("ownerReference without uid",
     pod(meta="name: p, ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: rs}]"),
     f"{P}: metadata.ownerReferences[0].uid: invalid value '': uid must not be empty",
     "validateOwnerReference"),
    ("two controllers",
     pod(meta="name: p, ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: a, "
         "uid: '1', controller: true}, {apiVersion: apps/v1, kind: ReplicaSet, name: b, "
         "uid: '2', controller: true}]"),
     f'{P}: metadata.ownerReferences: Only one reference can have Controller set to true. '
     'Found "true" in references for ReplicaSet/a and ReplicaSet/b', "ValidateOwnerReferences"),
    # resources: ValidateResourceRequirements, validateContainerResourceName,
    # ValidateResourceQuantityValue
    ("request greater than limit", resources("{requests: {cpu: '2'}, limits: {cpu: '1'}}"),
     f"{P}: spec.containers[0].resources.requests: invalid value '2': must be less than or "
     "equal to cpu limit of 1", "ValidateResourceRequirements"),
    ("fractional extended resource",
     resources("{requests: {example.com/gpu: '1'}, limits: {example.com/gpu: 500m}}"),
     f"{P}: spec.containers[0].resources.limits[example.com/gpu]: invalid value '500m': must be "
     "an integer", "ValidateResourceQuantityValue (IsIntegerResourceName)"),
    ("request-only extended resource", resources("{requests: {example.com/gpu: '1'}}"),
     f"{P}: spec.containers[0].resources.limits: required: Limit must be set for non "
     "overcommitable resources", "ValidateResourceRequirements (IsOvercommitAllowed)"),
    ("extended request below limit",
     resources("{requests: {example.com/gpu: '1'}, limits: {example.com/gpu: '2'}}"),
     f"{P}: spec.containers[0].resources.requests: invalid value '1': must be equal to "
     "example.com/gpu limit of 2", "ValidateResourceRequirements (IsOvercommitAllowed)"),
    ("invalid resource name", resources("{requests: {'bad name': '1'}}"),
     f"{P}: spec.containers[0].resources.requests[bad name]: invalid value 'bad name': "
     f"{NAME_PART}", "validateResourceName"),
    ("non-standard container resource", resources("{requests: {gpus: '1'}}"),
     f"{P}: spec.containers[0].resources.requests[gpus]: invalid value 'gpus': must be a "
     "standard resource for containers", "validateContainerResourceName"),
    # storage and DRA
    ("PV without a source",
     "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv}\n"
     "spec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce]}\n",
     "PersistentVolume pv: spec: required: must specify a volume type",
     "ValidatePersistentVolumeSpec"),
    ("PVC storage lots",
     "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c}\n"
     "spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: lots}}}\n",
     'PersistentVolumeClaim default/c: spec.resources.requests[storage]: quantity "lots": not a '
     "number", "ParseQuantity"),
    ("negative device capacity", slice_(device="{name: g, capacity: {mem: {value: '-1'}}}"),
     "ResourceSlice s: spec.devices[0].capacity[mem].value: invalid value '-1': must be greater "
     "than or equal to 0", "validateDeviceCapacity"),
    ("driver Not A Driver", slice_(driver="Not A Driver"),
     f"ResourceSlice s: spec.driver: invalid value 'Not A Driver': {SUBDOMAIN}",
     "validateDriverName"),
    ("PriorityClass value", "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
     "metadata: {name: pc}\nvalue: 2000000000\n",
     "PriorityClass pc: value: forbidden: maximum allowed value of a user defined priority is "
     "1000000000", "ValidatePriorityClass"),
    ("workload pod template",
     "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {selector: "
     "{matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: "
     "[{name: c, image: i, ports: [{containerPort: 80, hostPort: 70000}]}]}}}\n",
     "Deployment default/d: spec.template.spec.containers[0].ports[0].hostPort: invalid value "
     "70000: must be between 1 and 65535, inclusive", "ValidatePodTemplateSpec"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("text", "expected", "rule"), [pytest.param(t, e, r, id=i) for i, t, e, r in CASES]
)
def test_api_invalid_input_is_refused(text: str, expected: str, rule: str) -> None:
    """Refused at load with the upstream rule named in ``rule`` and its wording."""
    with pytest.raises(ManifestError) as info:
        load_text(text, "f.yaml")
    assert str(info.value).splitlines()[0] == f"f.yaml: {expected}"


def test_every_problem_is_reported_one_line_each_and_the_cli_exits_2(tmp_path: Path) -> None:
    """All problems of all objects of a file, one ``FILE: KIND NS/NAME: FIELD: problem``
    line each (field.ErrorList is reported whole by the API server)."""
    f = tmp_path / "bad.yaml"
    f.write_text(
        pod("containers: [{name: c, image: i}, {name: c, image: i}]", "name: UPPER")
        + "---\n"
        + node(spec="{taints: [{key: 'a b', effect: NoSchedule}]}")
    )
    with pytest.raises(ManifestError) as info:
        load_paths([str(f)])
    assert [line.split(": ")[2] for line in str(info.value).splitlines()] == [
        "metadata.name",
        "spec.containers[1].name",
        "spec.taints[0].key",
    ]
    assert main(["simulate", str(f)]) == 2


def test_gt_lt_with_a_non_integer_is_accepted_and_matches_no_node() -> None:
    """The API server accepts any Gt/Lt value that is a label value (ValidateNodeSelectorRequirement
    checks only the count); kube-scheduler's nodeSelectorRequirementsAsSelector fails to parse
    it (``strconv.ParseInt``), so the term matches no node (component-helpers
    nodeaffinity)."""
    m = load_text(required("{matchExpressions: [{key: a, operator: Gt, values: [abc]}]}"), "f.yaml")
    [p] = m.pods
    assert isinstance(p, Pod)
    matches = required_node_affinity(p)
    assert not matches({"a": "5"}, "n") and not matches({"a": "abc"}, "n")
    m = load_text(required("{matchExpressions: [{key: a, operator: Gt, values: ['3']}]}"), "f.yaml")
    assert required_node_affinity(m.pods[0])({"a": "5"}, "n")


def test_a_bad_host_ip_is_a_warning() -> None:
    """validateContainerPorts does not check hostIP; NodePorts compares it as written, so
    schedsim says so instead of dropping it silently."""
    m = load_text(port("{containerPort: 80, hostPort: 80, hostIP: not-an-ip}"), "f.yaml")
    assert m.warnings == [
        "f.yaml: Pod default/p: spec.containers[0].ports[0].hostIP: invalid value 'not-an-ip': "
        "not an IP address; NodePorts compares it as written"
    ]


def test_valid_edge_values_are_accepted() -> None:
    """What the API server accepts: a 253-character DNS subdomain name, uppercase label
    values, an empty key with Exists, Equal with an empty value, a sidecar init container,
    an integral extended resource given as limit only (the request defaults to it),
    hostPort 65535 and matchFields on metadata.name."""
    text = pod(
        "containers: [{name: c, image: i, ports: [{containerPort: 1, hostPort: 65535}], "
        "resources: {limits: {example.com/gpu: '2', cpu: 500m}, requests: {cpu: 100m}}}], "
        "initContainers: [{name: s, image: i, restartPolicy: Always}], "
        "tolerations: [{operator: Exists}, {key: a, operator: Equal}], "
        "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
        "{nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [n]}]}]}}}",
        "name: " + ".".join(["a" * 63] * 4)[:253].rstrip(".") + ", labels: {A: B_c.D}",
    )
    m = load_text(text, "f.yaml")
    assert len(m.pods) == 1 and m.warnings == []


def test_a_csinode_without_spec_is_a_warning() -> None:
    """The 1.34 schema marks CSINode.spec required; ValidateCSINode does not refuse its
    absence, so schedsim warns and reads a node without CSI drivers."""
    m = load_text("apiVersion: storage.k8s.io/v1\nkind: CSINode\nmetadata: {name: n}\n", "f.yaml")
    assert [c.drivers for c in m.csi_nodes] == [()]
    assert m.warnings[0] == (
        "f.yaml: CSINode n: spec: required by the 1.34 schema (spec is absent); read as a node "
        "without CSI drivers"
    )


def test_validate_ignore_skips_the_value_rules() -> None:
    """``--validate=ignore`` reads placeholder data (kubernetes/api testdata) for what it
    holds; the decoders' own checks still apply."""
    m = load_text(pod(meta="name: nameValue"), "f.yaml", validate="ignore")
    assert [p.name for p in m.pods] == ["nameValue"]


def test_node_group_sizes_beyond_int64_are_refused() -> None:
    """Cluster Autoscaler reads node-group sizes as Go ints (64-bit); 2**64 is out of range."""
    group = {"name": "g", "minSize": 0, "maxSize": 2**64,
             "template": {"node": {"metadata": {"name": "t"}}}}  # fmt: skip
    with pytest.raises(ManifestError) as info:
        parse_node_groups({"nodeGroups": [group]}, "f.yaml")
    assert str(info.value) == (
        "f.yaml: nodeGroups[0].maxSize: 18446744073709551616 is out of range for a 64-bit integer"
    )


# --------------------------------------------------------------------------- real manifests


KINDS_READ = ("pods", "nodes", "resource_slices", "resource_claims", "persistent_volumes",
              "persistent_volume_claims", "storage_classes")  # fmt: skip


def _shared_examples() -> Path | None:
    root = Path(os.environ.get("SCHEDSIM_SHARED_DIR", ROOT.parent / "shared")) / "examples"
    return root if root.is_dir() else None


def test_shipped_examples_load_without_problems() -> None:
    """The examples schedsim ships load with the API rules on and no warning about them."""
    files = sorted((ROOT / "src" / "schedsim" / "examples").glob("*.yaml"))
    assert files
    for f in files:
        if "node-groups" in f.name:
            continue
        m = load_paths([str(f)])
        assert not [w for w in m.warnings if "invalid value" in w], f


@pytest.mark.parametrize("sub", ["dra-example-driver", "csi", "k8s-sims-benchmark"])
def test_shared_real_manifests_load_without_problems(sub: str) -> None:
    """Public manifests (driver demos, CSI examples, k8s-sims) pass the API rules, file by
    file (kubernetes/api testdata is placeholder data and is refused as the API server
    would refuse it)."""
    root = _shared_examples()
    if root is None or not (root / sub).is_dir():
        pytest.skip("the shared examples folder is absent")
    files = sorted((root / sub).glob("*.yaml"))
    assert files
    loaded = 0
    for f in files:
        m: Manifests = load_paths([str(f)])
        assert not [w for w in m.warnings if "invalid value" in w], f
        loaded += sum(len(getattr(m, a)) for a in KINDS_READ)
    assert loaded > 0
