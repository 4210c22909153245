"""scheduling.k8s.io/v1 PriorityClass and policy/v1 PodDisruptionBudget as the 1.34 API server
validates them on create, one row per rule: pkg/apis/scheduling/validation
``ValidatePriorityClass`` (`schedsim.api.validation.scheduling`), pkg/apis/policy/validation
``ValidatePodDisruptionBudgetSpec`` (decoded by `schedsim.api.policy`). The bases are
server-shaped: the built-in classes as ``kubectl get priorityclass -o yaml`` prints them, a
PDB with status and managedFields."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from schedsim.api.errors import ManifestError
from schedsim.api.loading.loader import decode_objects

NODE_CRITICAL: dict[str, Any] = {
    "apiVersion": "scheduling.k8s.io/v1",
    "kind": "PriorityClass",
    "description": "Used for system critical pods that must not be moved from their current node.",
    "metadata": {
        "creationTimestamp": "2026-11-30T09:00:01Z",
        "generation": 1,
        "managedFields": [
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:description": {}, "f:preemptionPolicy": {}, "f:value": {}},
                "manager": "kube-apiserver",
                "operation": "Update",
                "time": "2026-11-30T09:00:01Z",
            }
        ],
        "name": "system-node-critical",
        "resourceVersion": "75",
        "uid": "4f2a1c8e-1f0d-4f59-9e3c-6c1c0b1e2a01",
    },
    "preemptionPolicy": "PreemptLowerPriority",
    "value": 2000001000,
}
USER = {
    "apiVersion": "scheduling.k8s.io/v1",
    "kind": "PriorityClass",
    "metadata": {"name": "high", "uid": "4f2a1c8e-1f0d-4f59-9e3c-6c1c0b1e2a02"},
    "value": 1000000000,
    "globalDefault": False,
    "preemptionPolicy": "Never",
}
PDB = {
    "apiVersion": "policy/v1",
    "kind": "PodDisruptionBudget",
    "metadata": {
        "name": "web",
        "namespace": "shop",
        "generation": 1,
        "uid": "4f2a1c8e-1f0d-4f59-9e3c-6c1c0b1e2a03",
        "managedFields": [{"manager": "kubectl-client-side-apply", "operation": "Update"}],
    },
    "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "web"}}},
    "status": {
        "conditions": [
            {
                "lastTransitionTime": "2026-11-30T09:02:20Z",
                "message": "",
                "observedGeneration": 1,
                "reason": "SufficientPods",
                "status": "True",
                "type": "DisruptionAllowed",
            }
        ],
        "currentHealthy": 3,
        "desiredHealthy": 2,
        "disruptionsAllowed": 1,
        "expectedPods": 3,
        "observedGeneration": 1,
    },
}

RESERVED = "forbidden: priority class names with 'system-' prefix are reserved for system use only"


@pytest.mark.parametrize("obj", [NODE_CRITICAL, USER, PDB], ids=lambda o: o["metadata"]["name"])
def test_stored_objects_are_accepted(obj: dict[str, Any]) -> None:
    decode_objects([obj], "dump.yaml")


def _with(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    obj = copy.deepcopy(base)
    for key, value in changes.items():
        if key == "name":
            obj["metadata"]["name"] = value
        elif key == "spec":
            obj["spec"] = value
        else:
            obj[key] = value
    return obj


# (object, "FIELD: problem", upstream function)
ROWS = [
    (_with(NODE_CRITICAL, value=2000000000),
     f"metadata.name: {RESERVED}. error: value of system-node-critical PriorityClass must be "
     "2000001000", "ValidatePriorityClass / IsKnownSystemPriorityClass"),
    (_with(NODE_CRITICAL, globalDefault=True),
     f"metadata.name: {RESERVED}. error: globalDefault of system-node-critical PriorityClass "
     "must be false", "ValidatePriorityClass / IsKnownSystemPriorityClass"),
    (_with(USER, name="system-high"),
     f"metadata.name: {RESERVED}. error: system-high is not a known system priority class",
     "ValidatePriorityClass / IsKnownSystemPriorityClass"),
    (_with(USER, value=1000000001),
     "value: forbidden: maximum allowed value of a user defined priority is 1000000000",
     "ValidatePriorityClass (HighestUserDefinablePriority)"),
    (_with(USER, preemptionPolicy="Sometimes"),
     "preemptionPolicy: unsupported value 'Sometimes': supported values: "
     '"PreemptLowerPriority", "Never"', "ValidatePreemptionPolicy"),
    (_with(USER, preemptionPolicy=""), "preemptionPolicy: required", "ValidatePreemptionPolicy"),
    (_with(PDB, spec={"minAvailable": 1, "maxUnavailable": 1}),
     "spec: minAvailable and maxUnavailable cannot be both set",
     "ValidatePodDisruptionBudgetSpec"),
    (_with(PDB, spec={"minAvailable": -1}),
     "spec.minAvailable: invalid value -1: must be greater than or equal to 0",
     "ValidatePositiveIntOrPercent"),
    (_with(PDB, spec={"maxUnavailable": "1.5%"}),
     "spec.maxUnavailable: invalid value '1.5%': a valid percent string must be a numeric "
     "string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is "
     "'[0-9]+%')", "ValidatePositiveIntOrPercent / IsValidPercent"),
    (_with(PDB, spec={"minAvailable": "101%"}),
     "spec.minAvailable: invalid value '101%': must not be greater than 100%",
     "IsNotMoreThan100Percent"),
    (_with(PDB, spec={"maxUnavailable": 1, "unhealthyPodEvictionPolicy": "Never"}),
     'spec.unhealthyPodEvictionPolicy: unsupported value "Never": supported values: '
     '"AlwaysAllow", "IfHealthyBudget"', "ValidatePodDisruptionBudgetSpec"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("obj", "message"), [pytest.param(o, m, id=f"{fn}: {m[:40]}") for o, m, fn in ROWS]
)
def test_rule(obj: dict[str, Any], message: str) -> None:
    with pytest.raises(ManifestError) as e:
        decode_objects([obj], "dump.yaml")
    meta = obj["metadata"]
    where = f"{meta['namespace']}/{meta['name']}" if "namespace" in meta else meta["name"]
    assert str(e.value) == f"dump.yaml: {obj['kind']} {where}: {message}"
