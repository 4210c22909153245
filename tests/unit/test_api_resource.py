"""resource.k8s.io (DRA) objects: decoding of the real example files and the upstream API
test data, v1beta1/v1beta2 conversion to the v1 shape, defaults, helpers, the loader's new
lists, and exact error messages for malformed objects (``FILE: KIND NS/NAME: FIELD: problem``).
"""

from __future__ import annotations

import copy
import os
from datetime import UTC, datetime
from fractions import Fraction
from pathlib import Path
from typing import Any

import attrs
import pytest
import yaml

from schedsim.api import Manifests, decode_objects, load_paths
from schedsim.api.core import NodeSelectorRequirement, NodeSelectorTerm, OwnerReference
from schedsim.api.errors import FieldError, ManifestError
from schedsim.api.loading.loader import read_documents
from schedsim.api.resource import (
    AllocatedDeviceStatus,
    AllocationResult,
    CapacityRequestPolicy,
    CapacityRequestPolicyRange,
    Condition,
    CounterSet,
    Device,
    DeviceAllocationConfiguration,
    DeviceAttribute,
    DeviceCapacity,
    DeviceClaimConfiguration,
    DeviceClass,
    DeviceConstraint,
    DeviceCounterConsumption,
    DeviceRequest,
    DeviceRequestAllocationResult,
    DeviceSelector,
    DeviceSubRequest,
    DeviceTaint,
    DeviceToleration,
    ExactDeviceRequest,
    NetworkDeviceData,
    OpaqueDeviceConfiguration,
    ResourceClaimConsumerReference,
    ResourceClaimSpec,
    ResourceClaimStatus,
    ResourcePool,
    ResourceSlice,
    qualified_name,
    split_qualified_name,
)

GI = 2**30
# the shared folder as the other tests find it: SCHEDSIM_SHARED_DIR, else beside the checkout
SHARED = Path(
    os.environ.get("SCHEDSIM_SHARED_DIR") or Path(__file__).resolve().parents[2].parent / "shared"
)
DRIVER_EXAMPLES = SHARED / "examples" / "dra-example-driver"
API_TESTDATA = SHARED / "examples" / "k8s-api-testdata"
CASES = Path(os.environ.get("SCHEDSIM_CASES_DIR") or SHARED / "cases")

needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason=f"{SHARED} is absent")


def _shared_files(folder: Path, pattern: str) -> list[Any]:
    files = sorted(folder.glob(pattern)) if folder.is_dir() else []
    if not files:
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"no {pattern} in {folder}"))]
    return [pytest.param(f, id=f.name) for f in files]


def _decode(text: str, source: str = "f.yaml") -> Manifests:
    return decode_objects(list(yaml.safe_load_all(text)), source)


def _error(text: str) -> str:
    with pytest.raises(ManifestError) as info:
        _decode(text)
    return str(info.value)


def _uid(kind: str, ns: str, name: str) -> str:
    import uuid

    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"schedsim:{kind}:{ns}/{name}"))


# --------------------------------------------------------------------------- example files


@needs_shared
@pytest.mark.parametrize("path", _shared_files(DRIVER_EXAMPLES, "*.yaml"))
def test_every_dra_example_driver_file_decodes(path: Path) -> None:
    m = load_paths([str(path)])
    assert m.resource_claims or m.resource_claim_templates or m.resource_slices
    # every kind is modelled; slices read without their node are reported as unused
    assert all("is not among the nodes; ignored for scheduling" in w for w in m.warnings)


@needs_shared
def test_readme_resourceslice_list() -> None:
    path = str(DRIVER_EXAMPLES / "readme-kubectl-get-resourceslice-list.yaml")
    m = load_paths([path])
    assert (m.device_classes, m.resource_claims) == ([], [])
    # read without its node, the slice is reported as unused
    assert m.warnings == [
        f"{path}: ResourceSlice dra-example-driver-cluster-worker-gpu.example.com-rf2f7: "
        "spec.nodeName: node 'dra-example-driver-cluster-worker' is not among the nodes; "
        "ignored for scheduling"
    ]
    [s] = m.resource_slices
    assert s.name == "dra-example-driver-cluster-worker-gpu.example.com-rf2f7"
    assert s.uid == "d13fd8bd-0a71-43e1-ba79-ebd2fae4847a"
    assert s.owner_references == (
        OwnerReference(
            api_version="v1",
            kind="Node",
            name="dra-example-driver-cluster-worker",
            uid="6633c2e1-d947-40c3-ba1f-78f3c9aad05c",
            controller=True,
        ),
    )
    assert s.driver == "gpu.example.com"
    assert s.node_name == "dra-example-driver-cluster-worker"
    assert (s.node_selector, s.all_nodes, s.per_device_node_selection) == (None, False, False)
    assert s.pool == ResourcePool(
        name="dra-example-driver-cluster-worker", generation=0, resource_slice_count=1
    )
    assert s.shared_counters == ()
    assert [dev.name for dev in s.devices] == [f"gpu-{i}" for i in range(8)]
    uuids = set()
    for i, dev in enumerate(s.devices):
        attrs_ = dev.attributes
        assert set(attrs_) == {"driverVersion", "index", "model", "uuid"}
        assert attrs_["index"] == DeviceAttribute("int", i)
        assert type(attrs_["index"].value) is int
        assert attrs_["model"] == DeviceAttribute("string", "LATEST-GPU-MODEL")
        assert attrs_["driverVersion"] == DeviceAttribute("version", "1.0.0")
        assert attrs_["uuid"].kind == "string"
        assert isinstance(attrs_["uuid"].value, str)
        assert attrs_["uuid"].value.startswith("gpu-")
        uuids.add(attrs_["uuid"].value)
        assert dev.capacity == {"memory": DeviceCapacity(value=Fraction(80 * GI))}
        assert dev.capacity["memory"].value == 85899345920
        assert dev.consumes_counters == () and dev.taints == ()
        assert (dev.node_name, dev.node_selector, dev.all_nodes) == (None, None, False)
        # the bare names belong to the driver's domain
        assert dev.attribute("gpu.example.com", "gpu.example.com/model") == attrs_["model"]
        assert dev.attribute("gpu.example.com", "other.example.com/model") is None
        assert set(dev.qualified_attributes(s.driver)) == {
            "gpu.example.com/driverVersion",
            "gpu.example.com/index",
            "gpu.example.com/model",
            "gpu.example.com/uuid",
        }
        assert dev.qualified_capacity(s.driver) == {
            "gpu.example.com/memory": dev.capacity["memory"]
        }
    assert len(uuids) == 8
    assert s.devices[0].attributes["uuid"].value == "gpu-18db0e85-99e9-c746-8531-ffeb86328b39"


@needs_shared
def test_basic_resourceclaimtemplate_example() -> None:
    m = load_paths([str(DRIVER_EXAMPLES / "basic-resourceclaimtemplate.yaml")])
    [t] = m.resource_claim_templates
    assert t.key == "basic-resourceclaimtemplate/single-gpu"
    assert t.uid == _uid("ResourceClaimTemplate", "basic-resourceclaimtemplate", "single-gpu")
    assert t.spec == ResourceClaimSpec(
        requests=(
            DeviceRequest(
                name="gpu",
                exactly=ExactDeviceRequest(
                    device_class_name="gpu.example.com", allocation_mode="ExactCount", count=1
                ),
            ),
        )
    )
    assert [p.key for p in m.pods] == [
        "basic-resourceclaimtemplate/pod0",
        "basic-resourceclaimtemplate/pod1",
    ]


@needs_shared
def test_basic_shared_claim_example() -> None:
    m = load_paths([str(DRIVER_EXAMPLES / "basic-shared-claim-across-pods.yaml")])
    [c] = m.resource_claims
    assert c.key == "basic-shared-claim-across-pods/single-gpu"
    assert c.uid == _uid("ResourceClaim", "basic-shared-claim-across-pods", "single-gpu")
    assert c.spec.requests[0].exactly == ExactDeviceRequest(device_class_name="gpu.example.com")
    assert c.status == ResourceClaimStatus()
    assert (c.owner_references, c.finalizers, c.deletion_timestamp) == ((), (), None)


@needs_shared
def test_cel_selector_and_partitionable_examples() -> None:
    m = load_paths(
        [
            str(DRIVER_EXAMPLES / "cel-selector.yaml"),
            str(DRIVER_EXAMPLES / "partitionable-devices.yaml"),
        ]
    )
    cel, part = m.resource_claim_templates
    exactly = cel.spec.requests[0].exactly
    assert exactly is not None
    assert exactly.selectors == (
        DeviceSelector("device.attributes['gpu.example.com'].model == 'LATEST-GPU-MODEL'"),
        DeviceSelector("device.capacity['gpu.example.com'].memory.compareTo(quantity('4Gi')) >= 0"),
    )
    assert part.spec.requests[0] == DeviceRequest(
        name="gpu-partition",
        exactly=ExactDeviceRequest(device_class_name="gpu.example.com", count=2),
    )


@needs_shared
def test_prioritized_alternatives_example() -> None:
    m = load_paths([str(DRIVER_EXAMPLES / "prioritized-alternatives.yaml")])
    fallback, preferred = m.resource_claim_templates
    [req] = fallback.spec.requests
    assert req.name == "gpu" and req.exactly is None
    assert [s.name for s in req.first_available] == ["bleeding-edge-gpu", "huge-gpu", "older-gpu"]
    assert req.first_available[2] == DeviceSubRequest(
        name="older-gpu", device_class_name="gpu.example.com", allocation_mode="ExactCount", count=1
    )
    assert req.first_available[1].selectors == (
        DeviceSelector("device.capacity['gpu.example.com'].memory.compareTo(quantity('1Ti')) >= 0"),
    )
    assert [s.name for s in preferred.spec.requests[0].first_available] == [
        "latest-gpu",
        "older-gpu",
    ]
    assert fallback.spec.request_names() == {
        "gpu": frozenset({"bleeding-edge-gpu", "huge-gpu", "older-gpu"})
    }


# --------------------------------------------------------------------------- API test data


def _api_testdata(kind: str) -> dict[str, Any]:
    docs = read_documents(str(API_TESTDATA / f"resource.k8s.io.v1.{kind}.yaml"))
    [doc] = docs
    assert isinstance(doc, dict)
    return doc


@needs_shared
@pytest.mark.parametrize(
    ("kind", "message"),
    [
        (
            "ResourceClaim",
            "ResourceClaim namespaceValue/nameValue: spec.devices.requests[0].name: invalid "
            "value 'nameValue': a lowercase RFC 1123 label must consist of lower case "
            "alphanumeric characters or '-', and must start and end with an alphanumeric "
            "character (e.g. 'my-name', or '123-abc')",
        ),
        (
            "ResourceSlice",
            "ResourceSlice nameValue: spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0]"
            ".operator: unsupported value 'operatorValue': want one of ['DoesNotExist', "
            "'Exists', 'Gt', 'In', 'Lt', 'NotIn']",
        ),
    ],
)
def test_api_testdata_placeholders_are_rejected_as_is(kind: str, message: str) -> None:
    # every field is filled, including mutually exclusive ones and enum placeholders, so the
    # files are only parser coverage: as written, validation rejects them
    with pytest.raises(ManifestError) as info:
        decode_objects([_api_testdata(kind)], "t.yaml")
    assert str(info.value) == f"t.yaml: {message}"


def _fix_tolerations(items: list[dict[str, Any]]) -> None:
    for t in items:
        t["operator"], t["effect"] = "Equal", "NoSchedule"


def _fix_node_selector(sel: dict[str, Any]) -> None:
    for term in sel["nodeSelectorTerms"]:
        for req in term["matchExpressions"] + term["matchFields"]:
            req["operator"] = "In"


TOLERATION = DeviceToleration(
    key="keyValue", operator="Equal", value="valueValue", effect="NoSchedule", toleration_seconds=5
)
TERMS = (
    NodeSelectorTerm(
        match_expressions=(NodeSelectorRequirement("keyValue", "In", ("valuesValue",)),),
        match_fields=(NodeSelectorRequirement("keyValue", "In", ("valuesValue",)),),
    ),
)
PARAMETERS = {
    "apiVersion": "example.com/v1",
    "kind": "CustomType",
    "spec": {"replicas": 1},
    "status": {"available": 1},
}


def _t(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


@needs_shared
def test_api_testdata_resourceclaim_every_field() -> None:
    raw = _api_testdata("ResourceClaim")
    # make the placeholders valid: one request per request type, real enum values, a request
    # name that is a DNS label, request references that name requests of the claim
    devices = raw["spec"]["devices"]
    req = devices["requests"][0]
    req["name"] = "name-value"
    devices["requests"].append({"name": "exact", "exactly": req.pop("exactly")})
    exact = devices["requests"][1]["exactly"]
    exact["allocationMode"] = "ExactCount"
    req["firstAvailable"][0]["allocationMode"] = "ExactCount"
    _fix_tolerations(exact["tolerations"])
    _fix_tolerations(req["firstAvailable"][0]["tolerations"])
    constraint = devices["constraints"][0]
    del constraint["distinctAttribute"]
    constraint["matchAttribute"] = "example.com/matchAttributeValue"
    constraint["requests"] = ["name-value/nameValue", "exact"]
    devices["constraints"].append({"distinctAttribute": "example.com/distinct"})
    devices["config"][0]["requests"] = ["name-value"]
    alloc = raw["status"]["allocation"]
    alloc["devices"]["config"][0].update(source="FromClass", requests=["exact"])
    result = alloc["devices"]["results"][0]
    result["request"] = "name-value/nameValue"
    _fix_tolerations(result["tolerations"])
    _fix_node_selector(alloc["nodeSelector"])
    raw["status"]["devices"][0]["conditions"][0]["status"] = "True"

    # testdata/HEAD also fills fields newer than 1.34, which strict validation refuses
    # (tests/unit/test_strict_fields.py checks that); here only the decoder is exercised
    m = decode_objects([raw], "t.yaml", validate="ignore")
    [c] = m.resource_claims
    assert c.name == "nameValue" and c.namespace == "namespaceValue" and c.uid == "uidValue"
    assert c.generate_name == "generateNameValue"
    assert c.labels == {"labelsKey": "labelsValue"}
    assert c.annotations == {"annotationsKey": "annotationsValue"}
    assert c.owner_references == (
        OwnerReference("apiVersionValue", "kindValue", "nameValue", "uidValue", True),
    )
    assert c.finalizers == ("finalizersValue",)
    assert c.creation_timestamp == _t("2008-01-01T01:01:01")
    assert c.deletion_timestamp == _t("2009-01-01T01:01:01")
    assert c.spec == ResourceClaimSpec(
        requests=(
            DeviceRequest(
                name="name-value",
                first_available=(
                    DeviceSubRequest(
                        name="nameValue",
                        device_class_name="deviceClassNameValue",
                        selectors=(DeviceSelector("expressionValue"),),
                        allocation_mode="ExactCount",
                        count=5,
                        tolerations=(TOLERATION,),
                        capacity_requests={"requestsKey": Fraction(0)},
                    ),
                ),
            ),
            DeviceRequest(
                name="exact",
                exactly=ExactDeviceRequest(
                    device_class_name="deviceClassNameValue",
                    selectors=(DeviceSelector("expressionValue"),),
                    allocation_mode="ExactCount",
                    count=4,
                    admin_access=True,
                    tolerations=(TOLERATION,),
                    capacity_requests={"requestsKey": Fraction(0)},
                ),
            ),
        ),
        constraints=(
            DeviceConstraint(
                requests=("name-value/nameValue", "exact"),
                match_attribute="example.com/matchAttributeValue",
            ),
            DeviceConstraint(distinct_attribute="example.com/distinct"),
        ),
        config=(
            DeviceClaimConfiguration(
                requests=("name-value",),
                opaque=OpaqueDeviceConfiguration(driver="driverValue", parameters=PARAMETERS),
            ),
        ),
    )
    assert c.status == ResourceClaimStatus(
        allocation=AllocationResult(
            results=(
                DeviceRequestAllocationResult(
                    request="name-value/nameValue",
                    driver="driverValue",
                    pool="poolValue",
                    device="deviceValue",
                    admin_access=True,
                    tolerations=(TOLERATION,),
                    binding_conditions=("bindingConditionsValue",),
                    binding_failure_conditions=("bindingFailureConditionsValue",),
                    share_id="shareIDValue",
                    consumed_capacity={"consumedCapacityKey": Fraction(0)},
                ),
            ),
            config=(
                DeviceAllocationConfiguration(
                    source="FromClass",
                    requests=("exact",),
                    opaque=OpaqueDeviceConfiguration(driver="driverValue", parameters=PARAMETERS),
                ),
            ),
            node_selector=TERMS,
            allocation_timestamp=_t("2005-01-01T01:01:01"),
        ),
        reserved_for=(
            ResourceClaimConsumerReference(
                resource="resourceValue",
                name="nameValue",
                uid="uidValue",
                api_group="apiGroupValue",
            ),
        ),
        devices=(
            AllocatedDeviceStatus(
                driver="driverValue",
                pool="poolValue",
                device="deviceValue",
                share_id="shareIDValue",
                conditions=(
                    Condition(
                        type="typeValue",
                        status="True",
                        reason="reasonValue",
                        message="messageValue",
                        last_transition_time=_t("2004-01-01T01:01:01"),
                        observed_generation=3,
                    ),
                ),
                data=PARAMETERS,
                network_data=NetworkDeviceData(
                    interface_name="interfaceNameValue",
                    ips=("ipsValue",),
                    hardware_address="hardwareAddressValue",
                ),
            ),
        ),
    )


@needs_shared
def test_api_testdata_resourceslice_every_field() -> None:
    raw = _api_testdata("ResourceSlice")
    spec = raw["spec"]
    # exactly one node-selection field per slice and per device, one type per attribute,
    # one request policy, real enum values, a device name that is a DNS label
    for key in ("allNodes", "nodeName", "nodeSelector"):
        del spec[key]
    dev = spec["devices"][0]
    dev["name"] = "name-value"
    del dev["allNodes"], dev["nodeName"]
    _fix_node_selector(dev["nodeSelector"])
    dev["attributes"] = {
        f"{t}Key": {t: v}
        for t, v in (("int", 2), ("bool", True), ("string", "stringValue"), ("version", "1.2.3"))
    }
    dev["attributes"]["example.com/qualified"] = {"string": "x"}
    dev["capacity"]["capacityKey"]["requestPolicy"]["validRange"]["step"] = "1"
    del dev["capacity"]["capacityKey"]["requestPolicy"]["validValues"]
    dev["taints"][0]["effect"] = "NoExecute"
    spec["devices"].append(
        {
            "name": "other",
            "allNodes": True,
            "capacity": {
                "c": {"value": "8Gi", "requestPolicy": {"default": "1Gi", "validValues": ["1Gi"]}}
            },
            "allowMultipleAllocations": True,
        }
    )

    # testdata/HEAD also fills fields newer than 1.34, which strict validation refuses
    # (tests/unit/test_strict_fields.py checks that); here only the decoder is exercised
    m = decode_objects([raw], "t.yaml", validate="ignore")
    [s] = m.resource_slices
    assert (s.name, s.uid) == ("nameValue", "uidValue")
    assert s.labels == {"labelsKey": "labelsValue"}
    assert s.annotations == {"annotationsKey": "annotationsValue"}
    assert s.owner_references == (
        OwnerReference("apiVersionValue", "kindValue", "nameValue", "uidValue", True),
    )
    assert s.driver == "driverValue"
    assert s.pool == ResourcePool(name="nameValue", generation=2, resource_slice_count=3)
    assert (s.node_name, s.node_selector, s.all_nodes) == (None, None, False)
    assert s.per_device_node_selection is True
    assert s.shared_counters == (
        CounterSet(name="nameValue", counters={"countersKey": Fraction(0)}),
    )
    assert s.devices[0] == Device(
        name="name-value",
        attributes={
            "intKey": DeviceAttribute("int", 2),
            "boolKey": DeviceAttribute("bool", True),
            "stringKey": DeviceAttribute("string", "stringValue"),
            "versionKey": DeviceAttribute("version", "1.2.3"),
            "example.com/qualified": DeviceAttribute("string", "x"),
        },
        capacity={
            "capacityKey": DeviceCapacity(
                value=Fraction(0),
                request_policy=CapacityRequestPolicy(
                    default=Fraction(0),
                    valid_range=CapacityRequestPolicyRange(
                        min=Fraction(0), max=Fraction(0), step=Fraction(1)
                    ),
                ),
            )
        },
        consumes_counters=(
            DeviceCounterConsumption(
                counter_set="counterSetValue", counters={"countersKey": Fraction(0)}
            ),
        ),
        node_selector=TERMS,
        taints=(
            DeviceTaint(
                key="keyValue",
                value="valueValue",
                effect="NoExecute",
                time_added=_t("2004-01-01T01:01:01"),
            ),
        ),
        binds_to_node=True,
        binding_conditions=("bindingConditionsValue",),
        binding_failure_conditions=("bindingFailureConditionsValue",),
        allow_multiple_allocations=True,
    )
    assert s.devices[1] == Device(
        name="other",
        all_nodes=True,
        capacity={
            "c": DeviceCapacity(
                value=Fraction(8 * GI),
                request_policy=CapacityRequestPolicy(
                    default=Fraction(GI), valid_values=(Fraction(GI),)
                ),
            )
        },
        allow_multiple_allocations=True,
    )
    # the bool attribute keeps its type: not equal to int 1
    assert s.devices[0].attributes["boolKey"] != DeviceAttribute("int", 1)
    assert s.devices[0].qualified_attributes("driverValue")["driverValue/intKey"].value == 2


# --------------------------------------------------------------------------- versions

V1_CLAIM = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c, namespace: ns}
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.example.com
        selectors: [{cel: {expression: device.driver == "gpu.example.com"}}]
        allocationMode: All
        adminAccess: false
        tolerations: [{key: k, operator: Exists, effect: NoSchedule}]
        capacity: {requests: {memory: 1Gi}}
    - name: one
      exactly: {deviceClassName: gpu.example.com}
    - name: alt
      firstAvailable:
      - {name: big, deviceClassName: big.example.com, count: 2}
      - {name: small, deviceClassName: small.example.com, allocationMode: All}
    constraints:
    - {requests: [gpu, alt/big], matchAttribute: gpu.example.com/numa}
    config:
    - requests: [alt]
      opaque: {driver: gpu.example.com, parameters: {a: [1, {b: c}]}}
status:
  allocation:
    devices:
      results: [{request: alt/small, driver: gpu.example.com, pool: p, device: d}]
    nodeSelector:
      nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [n1]}]}]
  reservedFor: [{resource: pods, name: p, uid: u1}]
"""

V1BETA1_CLAIM = """
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
metadata: {name: c, namespace: ns}
spec:
  devices:
    requests:
    - name: gpu
      deviceClassName: gpu.example.com
      selectors: [{cel: {expression: device.driver == "gpu.example.com"}}]
      allocationMode: All
      adminAccess: false
      tolerations: [{key: k, operator: Exists, effect: NoSchedule}]
      capacity: {requests: {memory: 1Gi}}
    - name: one
      deviceClassName: gpu.example.com
    - name: alt
      firstAvailable:
      - {name: big, deviceClassName: big.example.com, count: 2}
      - {name: small, deviceClassName: small.example.com, allocationMode: All}
    constraints:
    - {requests: [gpu, alt/big], matchAttribute: gpu.example.com/numa}
    config:
    - requests: [alt]
      opaque: {driver: gpu.example.com, parameters: {a: [1, {b: c}]}}
status:
  allocation:
    devices:
      results: [{request: alt/small, driver: gpu.example.com, pool: p, device: d}]
    nodeSelector:
      nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [n1]}]}]
  reservedFor: [{resource: pods, name: p, uid: u1}]
"""


def test_v1beta1_claim_converts_to_the_v1_shape() -> None:
    [v1] = _decode(V1_CLAIM).resource_claims
    [beta1] = _decode(V1BETA1_CLAIM).resource_claims
    [beta2] = _decode(V1_CLAIM.replace("/v1\n", "/v1beta2\n")).resource_claims
    assert beta1 == v1
    assert beta2 == v1
    gpu, one, alt = v1.spec.requests
    assert gpu.exactly == ExactDeviceRequest(
        device_class_name="gpu.example.com",
        selectors=(DeviceSelector('device.driver == "gpu.example.com"'),),
        allocation_mode="All",
        count=0,
        admin_access=False,
        tolerations=(DeviceToleration(key="k", operator="Exists", effect="NoSchedule"),),
        capacity_requests={"memory": Fraction(GI)},
    )
    assert one.exactly == ExactDeviceRequest(device_class_name="gpu.example.com", count=1)
    assert one.exactly.admin_access is None
    assert alt.exactly is None
    assert [(s.name, s.allocation_mode, s.count) for s in alt.first_available] == [
        ("big", "ExactCount", 2),
        ("small", "All", 0),
    ]
    assert v1.spec.config[0].opaque.parameters == {"a": [1, {"b": "c"}]}
    assert v1.status.reserved_for == (ResourceClaimConsumerReference("pods", "p", "u1"),)
    assert v1.status.allocation is not None
    assert v1.status.allocation.node_selector == (
        NodeSelectorTerm(match_fields=(NodeSelectorRequirement("metadata.name", "In", ("n1",)),)),
    )


def test_v1beta1_template_converts_to_the_v1_shape() -> None:
    v1 = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: t}
spec:
  metadata: {labels: {a: b}, annotations: {c: d}}
  spec:
    devices:
      requests: [{name: r, exactly: {deviceClassName: c, count: 3}}]
"""
    beta1 = v1.replace("/v1\n", "/v1beta1\n").replace(
        "{name: r, exactly: {deviceClassName: c, count: 3}}",
        "{name: r, deviceClassName: c, count: 3}",
    )
    [a] = _decode(v1).resource_claim_templates
    [b] = _decode(beta1).resource_claim_templates
    assert a == b
    assert a.key == "default/t"
    assert (a.claim_labels, a.claim_annotations) == ({"a": "b"}, {"c": "d"})
    assert a.spec.requests == (
        DeviceRequest(name="r", exactly=ExactDeviceRequest(device_class_name="c", count=3)),
    )


V1_SLICE = """
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: gpu.example.com
  pool: {name: pool/a, generation: 3, resourceSliceCount: 2}
  nodeName: n1
  devices:
  - name: gpu-0
    attributes:
      index: {int: 0}
      healthy: {bool: true}
      model: {string: a100}
      driverVersion: {version: 1.2.3-rc.1+build.5}
      other.example.com/numa: {int: 1}
    capacity:
      memory: {value: 40Gi}
    consumesCounters:
    - counterSet: set-0
      counters: {memory: {value: 10Gi}}
    taints: [{key: k, value: v, effect: NoSchedule, timeAdded: "2024-01-02T03:04:05Z"}]
    bindsToNode: true
    bindingConditions: [ready]
    bindingFailureConditions: [failed]
  - name: gpu-1
  sharedCounters:
  - name: set-0
    counters: {memory: {value: 80Gi}}
"""

V1BETA1_SLICE = """
apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: gpu.example.com
  pool: {name: pool/a, generation: 3, resourceSliceCount: 2}
  nodeName: n1
  allNodes: false
  devices:
  - name: gpu-0
    basic:
      attributes:
        index: {int: 0}
        healthy: {bool: true}
        model: {string: a100}
        driverVersion: {version: 1.2.3-rc.1+build.5}
        other.example.com/numa: {int: 1}
      capacity:
        memory: {value: 40Gi}
      consumesCounters:
      - counterSet: set-0
        counters: {memory: {value: 10Gi}}
      taints: [{key: k, value: v, effect: NoSchedule, timeAdded: "2024-01-02T03:04:05Z"}]
      bindsToNode: true
      bindingConditions: [ready]
      bindingFailureConditions: [failed]
  - name: gpu-1
  sharedCounters:
  - name: set-0
    counters: {memory: {value: 80Gi}}
"""


def test_v1beta1_slice_with_basic_devices_converts_to_the_v1_shape() -> None:
    [v1] = _decode(V1_SLICE).resource_slices
    [beta1] = _decode(V1BETA1_SLICE).resource_slices
    [beta2] = _decode(V1_SLICE.replace("/v1\n", "/v1beta2\n")).resource_slices
    assert beta1 == v1
    assert beta2 == v1
    gpu0, gpu1 = v1.devices
    assert gpu1 == Device(name="gpu-1")
    assert gpu0.attributes == {
        "index": DeviceAttribute("int", 0),
        "healthy": DeviceAttribute("bool", True),
        "model": DeviceAttribute("string", "a100"),
        "driverVersion": DeviceAttribute("version", "1.2.3-rc.1+build.5"),
        "other.example.com/numa": DeviceAttribute("int", 1),
    }
    assert gpu0.capacity == {"memory": DeviceCapacity(Fraction(40 * GI))}
    assert gpu0.consumes_counters == (
        DeviceCounterConsumption("set-0", {"memory": Fraction(10 * GI)}),
    )
    assert gpu0.taints == (DeviceTaint("k", "NoSchedule", "v", _t("2024-01-02T03:04:05")),)
    assert (gpu0.binds_to_node, gpu0.binding_conditions, gpu0.binding_failure_conditions) == (
        True,
        ("ready",),
        ("failed",),
    )
    assert v1.shared_counters == (CounterSet("set-0", {"memory": Fraction(80 * GI)}),)
    assert v1.pool == ResourcePool("pool/a", 3, 2)
    assert v1.uid == _uid("ResourceSlice", "", "s")


def test_v1beta1_slice_empty_node_name_and_false_all_nodes_mean_unset() -> None:
    text = """
apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: d
  pool: {name: p, resourceSliceCount: 1}
  nodeName: ""
  allNodes: true
"""
    [s] = _decode(text).resource_slices
    assert (s.node_name, s.all_nodes) == (None, True)


def test_v1beta1_device_class_is_the_same_shape() -> None:
    text = """
apiVersion: resource.k8s.io/VERSION
kind: DeviceClass
metadata: {name: gpu.example.com, namespace: ignored}
spec:
  selectors: [{cel: {expression: device.driver == "gpu.example.com"}}]
  config: [{opaque: {driver: gpu.example.com, parameters: {x: 1}}}]
  extendedResourceName: example.com/gpu
"""
    classes = [
        _decode(text.replace("VERSION", v)).device_classes[0] for v in ("v1", "v1beta1", "v1beta2")
    ]
    assert classes[0] == classes[1] == classes[2]
    assert classes[0] == DeviceClass(
        name="gpu.example.com",
        uid=_uid("DeviceClass", "", "gpu.example.com"),
        selectors=(DeviceSelector('device.driver == "gpu.example.com"'),),
        config=(OpaqueDeviceConfiguration("gpu.example.com", {"x": 1}),),
        extended_resource_name="example.com/gpu",
    )


def test_v1beta1_errors_name_the_field_as_written() -> None:
    text = """
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
metadata: {name: c}
spec: {devices: {requests: [{name: r, deviceClassName: c, count: -2}]}}
"""
    assert _error(text) == (
        "f.yaml: ResourceClaim default/c: spec.devices.requests[0].count: "
        "must be greater than zero, got -2"
    )
    text = text.replace("count: -2", "allocationMode: Some").replace("c, ", "c, x: 1, ")
    assert _error(text) == (
        "f.yaml: ResourceClaim default/c: spec.devices.requests[0].allocationMode: "
        "unsupported value 'Some': want one of ['All', 'ExactCount']"
    )


# --------------------------------------------------------------------------- defaults, helpers


def test_defaults() -> None:
    text = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c}
spec:
  devices:
    requests:
    - {name: a, exactly: {deviceClassName: x, count: 0, tolerations: [{key: k}]}}
    - {name: b, exactly: {deviceClassName: x, allocationMode: All}}
"""
    [c] = _decode(text).resource_claims
    a, b = (r.exactly for r in c.spec.requests)
    assert a is not None and b is not None
    assert (a.allocation_mode, a.count) == ("ExactCount", 1)
    assert a.tolerations == (DeviceToleration(key="k", operator="Equal"),)
    assert (b.allocation_mode, b.count) == ("All", 0)
    assert (c.namespace, c.uid) == ("default", _uid("ResourceClaim", "default", "c"))


def test_qualified_names() -> None:
    assert qualified_name("gpu.example.com", "model") == "gpu.example.com/model"
    assert qualified_name("gpu.example.com", "other.com/model") == "other.com/model"
    assert split_qualified_name("gpu.example.com", "model") == ("gpu.example.com", "model")
    assert split_qualified_name("gpu.example.com", "other.com/model") == ("other.com", "model")


def test_attribute_lookup_prefers_the_qualified_key() -> None:
    bare, full, other = (DeviceAttribute("int", i) for i in range(3))
    dev = Device(name="d", attributes={"numa": bare, "drv/numa": full, "x.com/numa": other})
    assert dev.attribute("drv", "drv/numa") is full
    assert dev.attribute("drv", "x.com/numa") is other
    assert dev.attribute("drv", "other/numa") is None
    assert dev.attribute("other", "other/numa") is bare  # the bare name is in the driver's domain
    assert dev.qualified_attributes("drv") == {"drv/numa": full, "x.com/numa": other}
    only_bare = Device(name="d", attributes={"numa": bare})
    assert only_bare.attribute("drv", "drv/numa") is bare
    assert only_bare.attribute("drv2", "drv/numa") is None


@pytest.mark.parametrize(
    ("toleration", "taint", "expected"),
    [
        (DeviceToleration(key="k", value="v"), DeviceTaint("k", "NoSchedule", "v"), True),
        (DeviceToleration(key="k", value="w"), DeviceTaint("k", "NoSchedule", "v"), False),
        (DeviceToleration(key="k", operator="Exists"), DeviceTaint("k", "NoExecute", "v"), True),
        (DeviceToleration(operator="Exists"), DeviceTaint("any", "NoExecute"), True),
        (
            DeviceToleration(operator="Exists", effect="NoSchedule"),
            DeviceTaint("k", "NoExecute"),
            False,
        ),
        (DeviceToleration(key="j", operator="Exists"), DeviceTaint("k", "NoSchedule"), False),
    ],
)
def test_toleration_tolerates(
    toleration: DeviceToleration, taint: DeviceTaint, expected: bool
) -> None:
    assert toleration.tolerates(taint) is expected


def test_objects_are_immutable_and_do_not_share_input() -> None:
    docs = list(yaml.safe_load_all(V1_CLAIM))
    original = copy.deepcopy(docs)
    [c] = decode_objects(docs, "f.yaml").resource_claims
    docs[0]["spec"]["devices"]["config"][0]["opaque"]["parameters"]["a"].append(2)
    assert (
        c.spec.config[0].opaque.parameters
        == original[0]["spec"]["devices"]["config"][0]["opaque"]["parameters"]
    )
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        c.name = "x"  # type: ignore[misc]
    assert isinstance(c.spec.requests, tuple)
    assert isinstance(c.spec.requests[0].exactly, ExactDeviceRequest)


def test_field_errors_from_from_manifest_directly() -> None:
    with pytest.raises(FieldError) as info:
        ResourceSlice.from_manifest({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice"})
    assert (info.value.field, info.value.problem) == ("metadata.name", "required")


# --------------------------------------------------------------------------- loader


def test_loader_lists_in_input_order_and_namespaces() -> None:
    text = """
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s2}
spec: {driver: d, pool: {name: p, resourceSliceCount: 1}, allNodes: true}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: c, namespace: ns1}
---
apiVersion: v1
kind: List
items:
- apiVersion: resource.k8s.io/v1
  kind: ResourceClaim
  metadata: {name: a, namespace: ns1}
  spec: {devices: {requests: [{name: r, exactly: {deviceClassName: c}}]}}
- apiVersion: resource.k8s.io/v1
  kind: ResourceClaim
  metadata: {name: a}
- apiVersion: resource.k8s.io/v1
  kind: ResourceClaimTemplate
  metadata: {name: t}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s1}
spec: {driver: d, pool: {name: p, resourceSliceCount: 1}, nodeSelector: {nodeSelectorTerms: [{}]}}
"""
    m = _decode(text)
    assert m.warnings == []
    assert [s.name for s in m.resource_slices] == ["s2", "s1"]
    assert [c.name for c in m.device_classes] == ["c"]
    assert [c.key for c in m.resource_claims] == ["ns1/a", "default/a"]
    assert [t.key for t in m.resource_claim_templates] == ["default/t"]
    assert m.resource_slices[1].node_selector == (NodeSelectorTerm(),)
    assert m.resource_claims[1].spec == ResourceClaimSpec()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "kind: ResourceSlice\napiVersion: resource.k8s.io/v1\nmetadata: {name: s}\n"
            "spec: {driver: d, pool: {name: p, resourceSliceCount: 1}, allNodes: true}\n",
            "g.yaml: ResourceSlice s: metadata.name: duplicate object (first seen in f.yaml)",
        ),
        (
            "kind: DeviceClass\napiVersion: resource.k8s.io/v1\n"
            "metadata: {name: s, namespace: other}\n",
            "g.yaml: DeviceClass s: metadata.name: duplicate object (first seen in f.yaml)",
        ),
        (
            "kind: ResourceClaim\napiVersion: resource.k8s.io/v1\n"
            "metadata: {name: s, namespace: default}\n",
            "g.yaml: ResourceClaim default/s: metadata.name: duplicate object "
            "(first seen in f.yaml)",
        ),
        (
            "kind: ResourceClaimTemplate\napiVersion: resource.k8s.io/v1beta1\n"
            "metadata: {name: s}\n",
            "g.yaml: ResourceClaimTemplate default/s: metadata.name: duplicate object "
            "(first seen in f.yaml)",
        ),
    ],
    ids=["slice", "class (cluster-scoped)", "claim", "template"],
)
def test_duplicates_across_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, expected: str
) -> None:
    monkeypatch.chdir(tmp_path)
    first = """
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec: {driver: d, pool: {name: p, resourceSliceCount: 1}, allNodes: true}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: s}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: s}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: s}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: s, namespace: other}
"""
    (tmp_path / "f.yaml").write_text(first)
    (tmp_path / "g.yaml").write_text(text)
    assert len(load_paths(["f.yaml"]).resource_claims) == 2
    with pytest.raises(ManifestError) as info:
        load_paths(["f.yaml", "g.yaml"])
    assert str(info.value) == expected


def test_duplicate_in_one_file() -> None:
    text = (
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: c}\n---\n"
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: c}\n"
    )
    assert _error(text) == (
        "f.yaml: DeviceClass c: metadata.name: duplicate object (first seen in f.yaml)"
    )


def test_extend_keeps_lists_and_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.yaml").write_text(
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: c1}\n"
    )
    (tmp_path / "b.yaml").write_text(
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: c2}\n---\n"
        "apiVersion: v1\nkind: Node\nmetadata: {name: n}\n"
    )
    m = load_paths(["a.yaml", "b.yaml"])
    assert [c.name for c in m.device_classes] == ["c1", "c2"]
    assert [n.name for n in m.nodes] == ["n"]


# --------------------------------------------------------------------------- malformed objects

CLAIM = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\n"
C = "f.yaml: ResourceClaim default/c: "


def _claim(requests: str, rest: str = "") -> str:
    return CLAIM + f"spec: {{devices: {{requests: {requests}{rest}}}}}\n"


def _exact(fields: str) -> str:
    return _claim(f"[{{name: r, exactly: {{deviceClassName: x, {fields}}}}}]")


SLICE = "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\n"
S = "f.yaml: ResourceSlice s: "
POOL = "pool: {name: p, resourceSliceCount: 1}"


def _slice(spec: str) -> str:
    return SLICE + f"spec: {{driver: d, {POOL}, {spec}}}\n"


def _device(fields: str, spec: str = "nodeName: n") -> str:
    return _slice(f"{spec}, devices: [{{name: dev, {fields}}}]")


MALFORMED = [
    # apiVersion
    (
        CLAIM.replace("/v1\n", "/v1alpha3\n"),
        C + "apiVersion: unsupported version resource.k8s.io/v1alpha3 for ResourceClaim; "
        "use resource.k8s.io/v1 (or v1beta1/v1beta2)",
    ),
    (
        "kind: DeviceClass\nmetadata: {name: c}\n",
        "f.yaml: DeviceClass c: apiVersion: required for DeviceClass; use resource.k8s.io/v1 "
        "(or v1beta1/v1beta2)",
    ),
    (
        "apiVersion: v1\nkind: ResourceSlice\nmetadata: {name: s}\n",
        S + "apiVersion: unsupported version v1 for ResourceSlice; use resource.k8s.io/v1 "
        "(or v1beta1/v1beta2)",
    ),
    (
        "apiVersion: 1\nkind: ResourceClaimTemplate\nmetadata: {name: t}\n",
        "f.yaml: ResourceClaimTemplate default/t: apiVersion: expected a string, got a number",
    ),
    (
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {}\n",
        "f.yaml: DeviceClass (document 1, no name): metadata.name: required",
    ),
    # requests
    (
        _exact("allocationMode: Some"),
        C + "spec.devices.requests[0].exactly.allocationMode: unsupported value 'Some': "
        "want one of ['All', 'ExactCount']",
    ),
    (
        _exact("count: -1"),
        C + "spec.devices.requests[0].exactly.count: must be greater than zero, got -1",
    ),
    (
        _exact("count: '2'"),
        C + "spec.devices.requests[0].exactly.count: expected an integer, got a string",
    ),
    (
        _exact("allocationMode: All, count: 2"),
        C + "spec.devices.requests[0].exactly.count: must not be specified when allocationMode "
        "is 'All'",
    ),
    (
        _claim("[{name: r, exactly: {count: 1}}]"),
        C + "spec.devices.requests[0].exactly.deviceClassName: required",
    ),
    (
        _claim("[{name: r, exactly: {deviceClassName: x}, firstAvailable: [{name: a}]}]"),
        C + "spec.devices.requests[0]: exactly one of `exactly` or `firstAvailable` is "
        "required, but multiple fields are set",
    ),
    (
        _claim("[{name: r, firstAvailable: []}]"),
        C + "spec.devices.requests[0]: exactly one of `exactly` or `firstAvailable` is required",
    ),
    (
        _claim("[{name: r, deviceClassName: x}]"),
        C + "spec.devices.requests[0].deviceClassName: not a field of the request in this "
        "apiVersion: put it under `exactly` (fields directly on the request are the "
        "resource.k8s.io/v1beta1 form)",
    ),
    (
        _claim("[{name: r, exactly: {deviceClassName: x}}]").replace("/v1\n", "/v1beta1\n"),
        C + "spec.devices.requests[0].exactly: not a field of resource.k8s.io/v1beta1 "
        "requests: set its fields on the request itself, or use apiVersion resource.k8s.io/v1",
    ),
    (
        _claim("[{exactly: {deviceClassName: x}}]"),
        C + "spec.devices.requests[0].name: required",
    ),
    (
        _claim("[{name: a/b, exactly: {deviceClassName: x}}]"),
        C + "spec.devices.requests[0].name: invalid name 'a/b': must not contain '/' "
        "(subrequests are referred to as <request>/<subrequest>)",
    ),
    (
        _claim(
            "[{name: r, exactly: {deviceClassName: x}}, {name: r, exactly: {deviceClassName: y}}]"
        ),
        C + "spec.devices.requests[1].name: duplicate name 'r' (first at "
        "spec.devices.requests[0].name)",
    ),
    (
        _claim(
            "[{name: r, firstAvailable: [{name: a, deviceClassName: x}, "
            "{name: b, deviceClassName: x, count: -3}]}]"
        ),
        C + "spec.devices.requests[0].firstAvailable[1].count: must be greater than zero, got -3",
    ),
    (
        _claim("[{name: r, firstAvailable: [{name: a}]}]"),
        C + "spec.devices.requests[0].firstAvailable[0].deviceClassName: required",
    ),
    (
        _claim(
            "[{name: r, firstAvailable: [{name: a, deviceClassName: x}, "
            "{name: a, deviceClassName: y}]}]"
        ),
        C + "spec.devices.requests[0].firstAvailable[1].name: duplicate name 'a' (first at "
        "spec.devices.requests[0].firstAvailable[0].name)",
    ),
    (
        _claim(
            "["
            + ", ".join(f"{{name: r{i}, exactly: {{deviceClassName: x}}}}" for i in range(33))
            + "]"
        ),
        C + "spec.devices.requests: must have at most 32 items, got 33",
    ),
    (
        _exact("selectors: [{expression: x}]"),
        C + "spec.devices.requests[0].exactly.selectors[0].cel: required",
    ),
    (
        _exact("selectors: [{cel: {expression: ''}}]"),
        C + "spec.devices.requests[0].exactly.selectors[0].cel.expression: required",
    ),
    (
        _exact("adminAccess: 'yes'"),
        C + "spec.devices.requests[0].exactly.adminAccess: expected true or false, got a string",
    ),
    (
        _exact("tolerations: [{key: k, operator: In}]"),
        C + "spec.devices.requests[0].exactly.tolerations[0].operator: unsupported value 'In': "
        "want one of ['Equal', 'Exists']",
    ),
    (
        _exact("tolerations: [{key: k, operator: Exists, value: v}]"),
        C + "spec.devices.requests[0].exactly.tolerations[0].value: must be empty for operator "
        "`Exists`",
    ),
    (
        _exact("tolerations: [{key: k, effect: PreferNoSchedule}]"),
        C + "spec.devices.requests[0].exactly.tolerations[0].effect: unsupported value "
        "'PreferNoSchedule': want one of ['NoExecute', 'NoSchedule']",
    ),
    (
        _exact("capacity: {requests: {memory: 1GB}}"),
        C + 'spec.devices.requests[0].exactly.capacity.requests[memory]: quantity "1GB": unknown '
        'suffix "GB"; expected one of Ki Mi Gi Ti Pi Ei, n u m k M G T P E, or an exponent such '
        "as e3",
    ),
    (
        _exact("capacity: {requests: {a/b/c: 1}}"),
        C + "spec.devices.requests[0].exactly.capacity.requests[a/b/c]: invalid name 'a/b/c': "
        "must not contain more than one slash",
    ),
    # constraints and config
    (
        _claim("[{name: r, exactly: {deviceClassName: x}}]", ", constraints: [{requests: [r]}]"),
        C + "spec.devices.constraints[0]: exactly one of `matchAttribute` or "
        "`distinctAttribute` is required",
    ),
    (
        _claim(
            "[{name: r, exactly: {deviceClassName: x}}]",
            ", constraints: [{matchAttribute: a/b, distinctAttribute: a/c}]",
        ),
        C + "spec.devices.constraints[0]: exactly one of `matchAttribute` or "
        "`distinctAttribute` is required, but multiple fields are set",
    ),
    (
        _claim(
            "[{name: r, exactly: {deviceClassName: x}}]", ", constraints: [{matchAttribute: numa}]"
        ),
        C + "spec.devices.constraints[0].matchAttribute: invalid name 'numa': a fully qualified "
        "name must be a domain and a name separated by a slash",
    ),
    (
        _claim(
            "[{name: r, exactly: {deviceClassName: x}}]",
            ", constraints: [{requests: [r, q], matchAttribute: d/numa}]",
        ),
        C + "spec.devices.constraints[0].requests[1]: 'q' must be the name of a request in the "
        "claim or the name of a request and a subrequest separated by '/'",
    ),
    (
        _claim(
            "[{name: r, exactly: {deviceClassName: x}}]",
            ", constraints: [{requests: [r/a], matchAttribute: d/numa}]",
        ),
        C + "spec.devices.constraints[0].requests[0]: 'r/a' must be the name of a request in the "
        "claim or the name of a request and a subrequest separated by '/'",
    ),
    (
        _claim(
            "[{name: r, exactly: {deviceClassName: x}}]",
            ", constraints: [{requests: [r, r], matchAttribute: d/numa}]",
        ),
        C + "spec.devices.constraints[0].requests[1]: duplicate request 'r' (first at "
        "spec.devices.constraints[0].requests[0])",
    ),
    (
        _claim("[{name: r, exactly: {deviceClassName: x}}]", ", config: [{requests: [r]}]"),
        C + "spec.devices.config[0].opaque: required",
    ),
    (
        _claim(
            "[{name: r, exactly: {deviceClassName: x}}]",
            ", config: [{opaque: {driver: d, parameters: [1]}}]",
        ),
        C + "spec.devices.config[0].opaque.parameters: must be a JSON object (a mapping), "
        "got a list",
    ),
    (
        _claim("[{name: r, exactly: {deviceClassName: x}}]", ", config: [{opaque: {driver: d}}]"),
        C + "spec.devices.config[0].opaque.parameters: required",
    ),
    (
        _claim(
            "[{name: r, exactly: {deviceClassName: x}}]",
            ", config: [{opaque: {parameters: {a: 1}}}]",
        ),
        C + "spec.devices.config[0].opaque.driver: required",
    ),
    # status
    (
        CLAIM + "status: {reservedFor: [{resource: pods, name: p, uid: u}]}\n",
        C + "status.reservedFor: may not be specified when `allocation` is not set",
    ),
    (
        CLAIM + "status: {allocation: {}, reservedFor: [{resource: pods, name: p}]}\n",
        C + "status.reservedFor[0].uid: required",
    ),
    (
        CLAIM + "status: {allocation: {}, reservedFor: [{resource: pods, name: p, uid: u}, "
        "{resource: pods, name: q, uid: u}]}\n",
        C + "status.reservedFor[1].uid: duplicate uid 'u' (first at status.reservedFor[0].uid)",
    ),
    (
        CLAIM + "status: {allocation: {devices: {results: [{request: r, driver: d, pool: p, "
        "device: x}]}}}\n",
        C + "status.allocation.devices.results[0].request: 'r' must be the name of a request in "
        "the claim or the name of a request and a subrequest separated by '/'",
    ),
    (
        _claim("[{name: r, exactly: {deviceClassName: x}}]")
        + "status: {allocation: {devices: {results: [{request: r, driver: d, device: x}]}}}\n",
        C + "status.allocation.devices.results[0].pool: required",
    ),
    (
        _claim("[{name: r, exactly: {deviceClassName: x}}]")
        + "status: {allocation: {devices: {results: [{request: r, driver: d, pool: p, "
        "device: x, bindingConditions: [a]}]}}}\n",
        C + "status.allocation.devices.results[0].bindingFailureConditions: "
        "bindingFailureConditions are required to use bindingConditions",
    ),
    (
        _claim("[{name: r, exactly: {deviceClassName: x}}]")
        + "status: {allocation: {devices: {config: [{source: FromSomewhere, "
        "opaque: {driver: d, parameters: {}}}]}}}\n",
        C + "status.allocation.devices.config[0].source: unsupported value 'FromSomewhere': "
        "want one of ['FromClaim', 'FromClass']",
    ),
    (
        CLAIM + "status: {allocation: {nodeSelector: {nodeSelectorTerms: []}}}\n",
        C + "status.allocation.nodeSelector.nodeSelectorTerms: must have at least one node "
        "selector term",
    ),
    (
        CLAIM + "status: {allocation: {allocationTimestamp: yesterday}}\n",
        C + "status.allocation.allocationTimestamp: invalid RFC 3339 timestamp 'yesterday' "
        "(expected e.g. 2024-01-02T03:04:05Z)",
    ),
    (
        CLAIM + "status: {devices: [{driver: d, pool: p, device: x, conditions: [{type: t, "
        "status: Maybe}]}]}\n",
        C + "status.devices[0].conditions[0].status: unsupported value 'Maybe': want one of "
        "['False', 'True', 'Unknown']",
    ),
    (
        CLAIM.replace("{name: c}", "{name: c, deletionTimestamp: soon}"),
        C + "metadata.deletionTimestamp: invalid RFC 3339 timestamp 'soon' (expected e.g. "
        "2024-01-02T03:04:05Z)",
    ),
    # templates
    (
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: t}\n"
        "spec: {spec: {devices: {requests: [{name: r, exactly: {deviceClassName: x, "
        "count: 0.5}}]}}}\n",
        "f.yaml: ResourceClaimTemplate default/t: spec.spec.devices.requests[0].exactly.count: "
        "expected an integer, got a number",
    ),
    (
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: t}\n"
        "spec: {metadata: {labels: {a: 1}}}\n",
        "f.yaml: ResourceClaimTemplate default/t: spec.metadata.labels[a]: expected a string, "
        "got a number",
    ),
    # device classes
    (
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: c}\n"
        "spec: {extendedResourceName: cpu}\n",
        "f.yaml: DeviceClass c: spec.extendedResourceName: invalid value 'cpu': must be a valid "
        "extended resource name (a domain outside kubernetes.io, '/', and a name, e.g. "
        "example.com/gpu)",
    ),
    (
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: c}\n"
        "spec: {selectors: [{cel: {}}]}\n",
        "f.yaml: DeviceClass c: spec.selectors[0].cel.expression: required",
    ),
    (
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: c}\n"
        "spec: {config: [{opaque: {driver: a/b, parameters: {}}}]}\n",
        "f.yaml: DeviceClass c: spec.config[0].opaque.driver: invalid driver name 'a/b': must "
        "not contain '/'",
    ),
    # slices: node selection
    (
        SLICE + f"spec: {{driver: d, {POOL}}}\n",
        S + "spec: exactly one of `nodeName`, `nodeSelector`, `allNodes`, "
        "`perDeviceNodeSelection` is required",
    ),
    (
        _slice("nodeName: n, allNodes: true"),
        S + "spec: exactly one of `nodeName`, `nodeSelector`, `allNodes`, "
        "`perDeviceNodeSelection` is required, but multiple fields are set: `nodeName`, "
        "`allNodes`",
    ),
    (
        _slice("nodeName: ''"),
        S + "spec.nodeName: must be either unset or set to a non-empty string",
    ),
    (
        _slice("allNodes: false"),
        S + "spec.allNodes: must be either unset or set to true",
    ),
    (
        _slice("perDeviceNodeSelection: false, nodeName: n"),
        S + "spec.perDeviceNodeSelection: must be either unset or set to true",
    ),
    (
        _slice("nodeSelector: {nodeSelectorTerms: [{}, {}]}"),
        S + "spec.nodeSelector.nodeSelectorTerms: must have exactly one node selector term",
    ),
    # slices: pool and driver
    (
        SLICE + "spec: {pool: {name: p, resourceSliceCount: 1}, allNodes: true}\n",
        S + "spec.driver: required",
    ),
    (
        SLICE + "spec: {driver: d, pool: {name: p}, allNodes: true}\n",
        S + "spec.pool.resourceSliceCount: must be greater than zero, got 0",
    ),
    (
        SLICE + "spec: {driver: d, pool: {name: p, generation: -1, resourceSliceCount: 1}, "
        "allNodes: true}\n",
        S + "spec.pool.generation: must be greater than or equal to zero, got -1",
    ),
    (
        SLICE + "spec: {driver: d, pool: {resourceSliceCount: 1}, allNodes: true}\n",
        S + "spec.pool.name: required",
    ),
    # slices: devices
    (
        _slice("nodeName: n, devices: [{name: a}, {name: a}]"),
        S + "spec.devices[1].name: duplicate name 'a' (first at spec.devices[0].name)",
    ),
    (
        _slice("nodeName: n, devices: [{}]"),
        S + "spec.devices[0].name: required",
    ),
    (
        _device("attributes: {model: {string: a, int: 1}}"),
        S + "spec.devices[0].attributes[model]: exactly one value must be specified (one of int, "
        "bool, string, version), got int, string",
    ),
    (
        _device("attributes: {model: {}}"),
        S + "spec.devices[0].attributes[model]: exactly one value must be specified (one of int, "
        "bool, string, version), got none",
    ),
    (
        _device("attributes: {model: {ints: [1]}}"),
        S + "spec.devices[0].attributes[model].ints: list-typed attribute values are not "
        "supported (schedsim follows Kubernetes 1.34: one of int, bool, string, version)",
    ),
    (
        _device("attributes: {model: a100}"),
        S + "spec.devices[0].attributes[model]: expected a mapping, got a string",
    ),
    (
        _device("attributes: {index: {int: '1'}}"),
        S + "spec.devices[0].attributes[index].int: expected an integer, got a string",
    ),
    (
        _device("attributes: {index: {int: 9223372036854775808}}"),
        S + "spec.devices[0].attributes[index].int: 9223372036854775808 is out of range for a "
        "64-bit integer",
    ),
    (
        _device("attributes: {healthy: {bool: 1}}"),
        S + "spec.devices[0].attributes[healthy].bool: expected true or false, got a number",
    ),
    (
        _device("attributes: {v: {version: 1.2}}"),
        S + "spec.devices[0].attributes[v].version: expected a string, got a number",
    ),
    (
        _device("attributes: {v: {version: v1.2.3}}"),
        S + "spec.devices[0].attributes[v].version: invalid version 'v1.2.3': must be a string "
        "compatible with semver.org spec 2.0.0 (e.g. 1.2.3)",
    ),
    (
        _device("attributes: {s: {string: " + "x" * 65 + "}}"),
        S + "spec.devices[0].attributes[s].string: must have at most 64 bytes, got 65",
    ),
    (
        _device("attributes: {a/b/c: {int: 1}}"),
        S + "spec.devices[0].attributes[a/b/c]: invalid name 'a/b/c': must not contain more "
        "than one slash",
    ),
    (
        _device("attributes: {/b: {int: 1}}"),
        S + "spec.devices[0].attributes[/b]: invalid name '/b': the domain must not be empty",
    ),
    (
        _device(
            "attributes: {"
            + ", ".join(f"a{i}: {{int: {i}}}" for i in range(20))
            + "}, capacity: {"
            + ", ".join(f"c{i}: {{value: {i}}}" for i in range(13))
            + "}"
        ),
        S + "spec.devices[0]: the total number of attributes and capacities must not exceed 32, "
        "got 33",
    ),
    (
        _device("capacity: {memory: {}}"),
        S + "spec.devices[0].capacity[memory].value: required",
    ),
    (
        _device("capacity: {memory: {value: lots}}"),
        S + 'spec.devices[0].capacity[memory].value: quantity "lots": not a number',
    ),
    (
        _device("capacity: {memory: {value: 1Gi, requestPolicy: {default: 1}}}"),
        S + "spec.devices[0].capacity[memory].requestPolicy: allowMultipleAllocations must be true",
    ),
    (
        _device(
            "allowMultipleAllocations: true, capacity: {memory: {value: 8, requestPolicy: "
            "{default: 1, validValues: [1], validRange: {min: 1}}}}"
        ),
        S + "spec.devices[0].capacity[memory].requestPolicy: exactly one policy can be specified, "
        'cannot specify "validValues" and "validRange" at the same time',
    ),
    (
        _device(
            "allowMultipleAllocations: true, capacity: {memory: {value: 8, requestPolicy: "
            "{default: 1, validValues: [2, 1]}}}"
        ),
        S + "spec.devices[0].capacity[memory].requestPolicy.validValues[1]: values must be sorted "
        "in ascending order",
    ),
    (
        _device(
            "allowMultipleAllocations: true, capacity: {memory: {value: 8, requestPolicy: "
            "{validRange: {min: 1}}}}"
        ),
        S + "spec.devices[0].capacity[memory].requestPolicy.default: required when validRange is "
        "defined",
    ),
    (
        _device(
            "allowMultipleAllocations: true, capacity: {memory: {value: 8, requestPolicy: "
            "{default: 1, validRange: {max: 1}}}}"
        ),
        S + "spec.devices[0].capacity[memory].requestPolicy.validRange.min: required when "
        "validRange is defined",
    ),
    (
        _device(
            "allowMultipleAllocations: true, capacity: {memory: {value: 8, requestPolicy: "
            "{default: 1, validRange: {min: 1, step: 0}}}}"
        ),
        S + "spec.devices[0].capacity[memory].requestPolicy.validRange.step: must be greater "
        "than zero",
    ),
    (
        _device("nodeName: n"),
        S + "spec.devices[0]: `nodeName`, `nodeSelector` and `allNodes` can only be set if "
        "`perDeviceNodeSelection` is set to true in the ResourceSlice spec",
    ),
    (
        _device("capacity: {}", spec="perDeviceNodeSelection: true"),
        S + "spec.devices[0]: exactly one of `nodeName`, `nodeSelector`, or `allNodes` is "
        "required when `perDeviceNodeSelection` is set to true in the ResourceSlice spec",
    ),
    (
        _device("nodeName: n, allNodes: true", spec="perDeviceNodeSelection: true"),
        S + "spec.devices[0]: exactly one of `nodeName`, `nodeSelector`, or `allNodes` is "
        "required when `perDeviceNodeSelection` is set to true in the ResourceSlice spec, but "
        "multiple fields are set: `nodeName`, `allNodes`",
    ),
    (
        _device("nodeName: ''", spec="perDeviceNodeSelection: true"),
        S + "spec.devices[0].nodeName: must not be empty",
    ),
    (
        _device("taints: [{key: k, effect: PreferNoSchedule}]"),
        S + "spec.devices[0].taints[0].effect: unsupported value 'PreferNoSchedule': want one "
        "of ['NoExecute', 'NoSchedule']",
    ),
    (
        _device("taints: [{effect: NoSchedule}]"),
        S + "spec.devices[0].taints[0].key: required",
    ),
    (
        _device("bindingFailureConditions: [f]"),
        S + "spec.devices[0].bindingConditions: bindingConditions are required to use "
        "bindingFailureConditions",
    ),
    (
        _device("consumesCounters: [{counterSet: s}]"),
        S + "spec.devices[0].consumesCounters[0].counters: required",
    ),
    (
        _device("consumesCounters: [{counters: {a: {value: 1}}}]"),
        S + "spec.devices[0].consumesCounters[0].counterSet: required",
    ),
    (
        _device(
            "consumesCounters: [{counterSet: s, counters: {a: {value: 1}}}, "
            "{counterSet: s, counters: {a: {value: 1}}}]"
        ),
        S + "spec.devices[0].consumesCounters[1].counterSet: duplicate name 's' (first at "
        "spec.devices[0].consumesCounters[0].counterSet)",
    ),
    (
        _slice("nodeName: n, sharedCounters: [{name: s, counters: {a: {}}}]"),
        S + "spec.sharedCounters[0].counters[a].value: required",
    ),
    (
        _slice("nodeName: n, sharedCounters: [{name: s, counters: {a: 1}}]"),
        S + "spec.sharedCounters[0].counters[a]: expected a mapping, got a number",
    ),
    (
        _device("basic: {attributes: {}}"),
        S + "spec.devices[0].basic: not a field of devices in this apiVersion: put its fields on "
        "the device itself (`basic` is the resource.k8s.io/v1beta1 form)",
    ),
    (
        _device("attributes: {}").replace("/v1\n", "/v1beta1\n"),
        S + "spec.devices[0].attributes: not a field of resource.k8s.io/v1beta1 devices: put it "
        "under `basic`, or use apiVersion resource.k8s.io/v1",
    ),
    (
        _device("basic: {attributes: {m: {int: x}}}").replace("/v1\n", "/v1beta1\n"),
        S + "spec.devices[0].basic.attributes[m].int: expected an integer, got a string",
    ),
]


@pytest.mark.parametrize(("text", "expected"), MALFORMED, ids=[e for _, e in MALFORMED])
def test_malformed_object_message(text: str, expected: str) -> None:
    assert _error(text) == expected


# --------------------------------------------------------------------------- cases


def _resource_objects(node: Any) -> list[dict[str, Any]]:
    """resource.k8s.io objects nested anywhere in a case's expectations."""
    if isinstance(node, dict):
        if str(node.get("apiVersion", "")).startswith("resource.k8s.io/") and "kind" in node:
            return [node]
        return [o for v in node.values() for o in _resource_objects(v)]
    if isinstance(node, list):
        return [o for v in node for o in _resource_objects(v)]
    return []


@needs_shared
@pytest.mark.parametrize("path", _shared_files(CASES, "dra-*.yaml"))
def test_case_objects_decode(path: Path) -> None:
    case = yaml.safe_load(path.read_text())
    m = decode_objects(case["objects"], path.name, api_rules=False)  # upstream test objects
    resource_kinds = {"DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice"}
    count = sum(o["kind"] in resource_kinds for o in case["objects"])
    decoded = (
        len(m.device_classes)
        + len(m.resource_claims)
        + len(m.resource_claim_templates)
        + len(m.resource_slices)
    )
    assert decoded == count
    assert not any(w for w in m.warnings if any(k in w for k in resource_kinds))
    # claims the case expects after running a plugin are objects too
    expected = _resource_objects(case.get("expect"))
    if expected:
        decode_objects(expected, f"{path.name} expect", api_rules=False)
