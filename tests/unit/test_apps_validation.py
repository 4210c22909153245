"""apps/v1 spec rules as the 1.34 API server applies them on create
(pkg/apis/apps/validation/validation.go; `schedsim.api.validation.apps`), one row per rule.

The bases are the Deployment, ReplicaSet, StatefulSet and DaemonSet of a kind cluster's
``kubectl get ... -A -o yaml`` (tests/cli/data/kubectl-get-all.yaml): server-shaped, with the
API server's defaults (strategy, rollingUpdate 25%/25%, maxSurge 0 / maxUnavailable 1,
partition 0, revisionHistoryLimit 10, progressDeadlineSeconds 600), status, managedFields,
generation and ownerReferences. Each must be accepted as it is; each row changes one field
the way the API server refuses, and expects its field path and message."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from schedsim.api.errors import ManifestError
from schedsim.api.loading.loader import decode_objects
from schedsim.api.validation import validate_object

DUMP = Path(__file__).parents[1] / "cli" / "data" / "kubectl-get-all.yaml"
_ITEMS = yaml.safe_load(DUMP.read_text())["items"]
BASES: dict[str, dict[str, Any]] = {
    kind: next(i for i in _ITEMS if i["kind"] == kind)
    for kind in ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet")
}

NON_NEGATIVE = "must be greater than or equal to 0"
PERCENT = (
    "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  "
    "or '93%', regex used for validation is '[0-9]+%')"
)


@pytest.mark.parametrize("kind", sorted(BASES))
def test_server_shaped_objects_are_accepted(kind: str) -> None:
    obj = BASES[kind]
    assert "status" in obj and "managedFields" in obj["metadata"]
    problems = validate_object(obj, kind)
    assert (problems.errors, problems.warnings) == ([], [])
    decode_objects([obj], "dump.yaml")  # the decoders accept it too


def _set(obj: dict[str, Any], path: str, value: Any) -> None:
    *parents, last = path.split(".")
    for key in parents:
        obj = obj.setdefault(key, {})
    if value is _DELETE:
        obj.pop(last, None)
    else:
        obj[last] = value


_DELETE = object()

# (kind, {path: value}, [(field, problem)], upstream function)
ROWS = [
    # --- Deployment
    ("Deployment", {"spec.minReadySeconds": -1},
     [("spec.minReadySeconds", f"invalid value -1: {NON_NEGATIVE}")], "ValidateDeploymentSpec"),
    ("Deployment", {"spec.revisionHistoryLimit": -1},
     [("spec.revisionHistoryLimit", f"invalid value -1: {NON_NEGATIVE}")],
     "ValidateDeploymentSpec"),
    ("Deployment", {"spec.revisionHistoryLimit": 0}, [], "ValidateDeploymentSpec (zero is valid)"),
    ("Deployment", {"spec.progressDeadlineSeconds": 10, "spec.minReadySeconds": 10},
     [("spec.progressDeadlineSeconds", "invalid value 10: must be greater than minReadySeconds")],
     "ValidateDeploymentSpec"),
    ("Deployment", {"spec.progressDeadlineSeconds": -5},
     [("spec.progressDeadlineSeconds", f"invalid value -5: {NON_NEGATIVE}"),
      ("spec.progressDeadlineSeconds", "invalid value -5: must be greater than minReadySeconds")],
     "ValidateDeploymentSpec"),
    ("Deployment", {"spec.strategy.type": "Recreate"},
     [("spec.strategy.rollingUpdate",
       "forbidden: may not be specified when strategy `type` is 'Recreate'")],
     "ValidateDeploymentStrategy"),
    ("Deployment", {"spec.strategy": {"type": "Recreate"}}, [], "ValidateDeploymentStrategy"),
    ("Deployment", {"spec.strategy.rollingUpdate": {"maxSurge": 0, "maxUnavailable": "0%"}},
     [("spec.strategy.rollingUpdate.maxUnavailable",
       "invalid value '0%': may not be 0 when `maxSurge` is 0")],
     "ValidateRollingUpdateDeployment"),
    ("Deployment", {"spec.strategy.rollingUpdate": {"maxSurge": 1, "maxUnavailable": "110%"}},
     [("spec.strategy.rollingUpdate.maxUnavailable",
       "invalid value '110%': must not be greater than 100%")],
     "ValidateRollingUpdateDeployment / IsNotMoreThan100Percent"),
    ("Deployment", {"spec.strategy.rollingUpdate": {"maxSurge": "200%", "maxUnavailable": 0}},
     [], "ValidateRollingUpdateDeployment (maxSurge may exceed 100%)"),
    ("Deployment", {"spec.strategy.rollingUpdate": {"maxSurge": -1, "maxUnavailable": 1}},
     [("spec.strategy.rollingUpdate.maxSurge", f"invalid value -1: {NON_NEGATIVE}")],
     "ValidatePositiveIntOrPercent"),
    ("Deployment", {"spec.strategy.rollingUpdate": {"maxSurge": "x", "maxUnavailable": 1}},
     [("spec.strategy.rollingUpdate.maxSurge", f"invalid value 'x': {PERCENT}")],
     "ValidatePositiveIntOrPercent / IsValidPercent"),
    ("Deployment", {"spec.template.spec.activeDeadlineSeconds": 5},
     [("spec.template.spec.activeDeadlineSeconds",
       "forbidden: activeDeadlineSeconds in ReplicaSet is not Supported")],
     "ValidatePodTemplateSpecForReplicaSet"),
    # --- ReplicaSet
    ("ReplicaSet", {"spec.minReadySeconds": -3},
     [("spec.minReadySeconds", f"invalid value -3: {NON_NEGATIVE}")], "ValidateReplicaSetSpec"),
    ("ReplicaSet", {"spec.template.spec.activeDeadlineSeconds": 5},
     [("spec.template.spec.activeDeadlineSeconds",
       "forbidden: activeDeadlineSeconds in ReplicaSet is not Supported")],
     "ValidatePodTemplateSpecForReplicaSet"),
    # --- StatefulSet
    ("StatefulSet", {"spec.podManagementPolicy": "Serial"},
     [("spec.podManagementPolicy", "invalid value 'Serial': must be 'OrderedReady' or 'Parallel'")],
     "ValidateStatefulSetSpec"),
    ("StatefulSet", {"spec.podManagementPolicy": _DELETE}, [],
     "ValidateStatefulSetSpec (defaulted to OrderedReady)"),
    ("StatefulSet", {"spec.updateStrategy": {"type": "Always"}},
     [("spec.updateStrategy",
       "invalid value {'type': 'Always'}: must be 'RollingUpdate' or 'OnDelete'")],
     "ValidateStatefulSetSpec"),
    ("StatefulSet", {"spec.minReadySeconds": -1},
     [("spec.minReadySeconds", f"invalid value -1: {NON_NEGATIVE}")], "ValidateStatefulSetSpec"),
    ("StatefulSet", {"spec.updateStrategy.type": "OnDelete"},
     [("spec.updateStrategy.rollingUpdate",
       "invalid value {'partition': 0}: only allowed for updateStrategy 'RollingUpdate'")],
     "ValidateStatefulSetSpec"),
    ("StatefulSet", {"spec.updateStrategy": {"type": "OnDelete"}}, [], "ValidateStatefulSetSpec"),
    ("StatefulSet", {"spec.updateStrategy.rollingUpdate.partition": -1},
     [("spec.updateStrategy.rollingUpdate.partition", f"invalid value -1: {NON_NEGATIVE}")],
     "validateRollingUpdateStatefulSet"),
    ("StatefulSet", {"spec.updateStrategy.rollingUpdate.maxUnavailable": 0},
     [("spec.updateStrategy.rollingUpdate.maxUnavailable", "invalid value 0: cannot be 0")],
     "validateRollingUpdateStatefulSet"),
    ("StatefulSet", {"spec.updateStrategy.rollingUpdate.maxUnavailable": "101%"},
     [("spec.updateStrategy.rollingUpdate.maxUnavailable",
       "invalid value '101%': must not be greater than 100%")],
     "validateRollingUpdateStatefulSet"),
    ("StatefulSet", {"spec.updateStrategy.rollingUpdate.maxUnavailable": "50%"}, [],
     "validateRollingUpdateStatefulSet"),
    ("StatefulSet", {"spec.template.spec.activeDeadlineSeconds": 5},
     [("spec.template.spec.activeDeadlineSeconds",
       "forbidden: activeDeadlineSeconds in StatefulSet is not Supported")],
     "ValidateStatefulSetSpec"),
    ("StatefulSet", {"metadata.name": "db.v1"},
     [("metadata.name",
       "invalid value 'db.v1': a lowercase RFC 1123 label must consist of lower case "
       "alphanumeric characters or '-', and must start and end with an alphanumeric character "
       "(e.g. 'my-name', or '123-abc')")],
     "ValidateStatefulSetName (NameIsDNSLabel)"),
    # --- DaemonSet
    ("DaemonSet", {"spec.minReadySeconds": -1},
     [("spec.minReadySeconds", f"invalid value -1: {NON_NEGATIVE}")], "ValidateDaemonSetSpec"),
    ("DaemonSet", {"spec.templateGeneration": -1},
     [("spec.templateGeneration", f"invalid value -1: {NON_NEGATIVE}")],
     "ValidateDaemonSetSpec"),
    ("DaemonSet", {"spec.revisionHistoryLimit": -2},
     [("spec.revisionHistoryLimit", f"invalid value -2: {NON_NEGATIVE}")],
     "ValidateDaemonSetSpec"),
    ("DaemonSet", {"spec.template.spec.activeDeadlineSeconds": 5},
     [("spec.template.spec.activeDeadlineSeconds",
       "forbidden: activeDeadlineSeconds in DaemonSet is not Supported")],
     "ValidateDaemonSetSpec"),
    ("DaemonSet", {"spec.updateStrategy.rollingUpdate": {"maxSurge": 1, "maxUnavailable": 1}},
     [("spec.updateStrategy.rollingUpdate.maxSurge",
       "invalid value 1: may not be set when maxUnavailable is non-zero")],
     "ValidateRollingUpdateDaemonSet"),
    ("DaemonSet", {"spec.updateStrategy.rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}},
     [("spec.updateStrategy.rollingUpdate.maxUnavailable",
       "required: cannot be 0 when maxSurge is 0")],
     "ValidateRollingUpdateDaemonSet"),
    ("DaemonSet", {"spec.updateStrategy.rollingUpdate": {"maxSurge": "10%", "maxUnavailable": 0}},
     [], "ValidateRollingUpdateDaemonSet (surge only)"),
    ("DaemonSet", {"spec.updateStrategy.rollingUpdate": {"maxSurge": 0, "maxUnavailable": "150%"}},
     [("spec.updateStrategy.rollingUpdate.maxUnavailable",
       "invalid value '150%': must not be greater than 100%")],
     "ValidateRollingUpdateDaemonSet / IsNotMoreThan100Percent"),
    ("DaemonSet", {"spec.updateStrategy": {"type": "OnDelete"}}, [],
     "ValidateDaemonSetUpdateStrategy"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("kind", "changes", "errors"),
    [pytest.param(k, c, e, id=f"{k}-{fn}-{'-'.join(c)}") for k, c, e, fn in ROWS],
)
def test_rule(kind: str, changes: dict[str, Any], errors: list[tuple[str, str]]) -> None:
    obj = copy.deepcopy(BASES[kind])
    for path, value in changes.items():
        _set(obj, path, value)
    assert validate_object(obj, kind).errors == errors


@pytest.mark.parametrize(
    ("kind", "selector", "message"),
    [
        # ValidateReplicaSetSpec words it for a deployment (upstream's text)
        ("ReplicaSet", {}, "spec.selector: empty selector is invalid for deployment"),
        ("Deployment", {}, "spec.selector: empty selector is invalid for deployment"),
        ("StatefulSet", {}, "spec.selector: empty selector is invalid for statefulset"),
        ("DaemonSet", {}, "spec.selector: empty selector is invalid for daemonset"),
        ("ReplicaSet", _DELETE, "spec.selector: required"),  # ValidateReplicaSetSpec
        ("StatefulSet", _DELETE, "spec.selector: required"),  # ValidateStatefulSetSpec
        # ValidateDaemonSetSpec: no "required"; a nil selector matches no labels
        (
            "DaemonSet",
            _DELETE,
            "spec.template.metadata.labels: invalid value {'k8s-app': 'kube-proxy'}: "
            "`selector` does not match template `labels`",
        ),
    ],
)
def test_selector_rules(kind: str, selector: Any, message: str) -> None:
    obj = copy.deepcopy(BASES[kind])
    _set(obj, "spec.selector", selector)
    with pytest.raises(ManifestError) as e:
        decode_objects([obj], "dump.yaml")
    meta = obj["metadata"]
    assert str(e.value) == f"dump.yaml: {kind} {meta['namespace']}/{meta['name']}: {message}"


def test_the_loader_reports_the_rule_in_the_usual_shape() -> None:
    obj = copy.deepcopy(BASES["Deployment"])
    obj["spec"]["minReadySeconds"] = -1
    with pytest.raises(ManifestError) as e:
        decode_objects([obj], "dump.yaml")
    assert str(e.value) == (
        "dump.yaml: Deployment kube-system/coredns: spec.minReadySeconds: invalid value -1: "
        f"{NON_NEGATIVE}"
    )
