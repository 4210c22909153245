"""Decoding and validating workload controllers (Deployment, ReplicaSet,
ReplicationController, StatefulSet, DaemonSet, Job) and the kinds kept for the scheduler
(Namespace, Service, PriorityClass, PodDisruptionBudget, CSIDriver, CSIStorageCapacity).

Validation follows the API server (``pkg/apis/apps/validation``, ``pkg/apis/batch/validation``,
``pkg/apis/policy/validation``, ``pkg/apis/scheduling/validation``, apimachinery
``ValidateLabelSelector``); errors read ``FILE: KIND NS/NAME: FIELD: problem``.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from schedsim.api.apps.workloads import JOB_CONTROLLER_UID_LABEL, JOB_NAME_LABEL
from schedsim.api.errors import ManifestError
from schedsim.api.labels import LabelSelector
from schedsim.api.loading.loader import decode_objects, load_text

TEMPLATE: dict[str, Any] = {
    "metadata": {"labels": {"app": "web"}},
    "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}]},
}


def _obj(kind: str, api: str = "apps/v1", **spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE}
    if kind == "StatefulSet":
        base["serviceName"] = "web"
    if kind == "Job":
        base = {"template": {**TEMPLATE, "spec": {**TEMPLATE["spec"], "restartPolicy": "Never"}}}
    if kind == "ReplicationController":
        base = {"template": TEMPLATE}
    base.update(spec)
    base = {k: v for k, v in base.items() if v is not None}
    return {
        "apiVersion": api,
        "kind": kind,
        "metadata": {"name": "web", "namespace": "ns"},
        "spec": base,
    }


def _error(obj: dict[str, Any]) -> str:
    with pytest.raises(ManifestError) as info:
        decode_objects([obj], "f.yaml")
    return str(info.value)


def test_every_controller_kind_is_decoded_with_defaults() -> None:
    """replicas defaults to 1 (SetDefaults_Deployment/ReplicaSet/StatefulSet/RC); a Job's
    parallelism to 1; an RC's selector to its template labels
    (SetDefaults_ReplicationController)."""
    m = decode_objects(
        [
            _obj("Deployment"),
            _obj("ReplicaSet"),
            _obj("ReplicationController", "v1"),
            _obj("StatefulSet"),
            _obj("DaemonSet"),
            _obj("Job", "batch/v1"),
        ],
        "f.yaml",
    )
    assert m.warnings == []
    assert [d.replicas for d in m.deployments] == [1]
    assert [r.replicas for r in m.replica_sets] == [1]
    (rc,) = m.replication_controllers
    assert rc.selector == LabelSelector(match_labels={"app": "web"}) and rc.replicas == 1
    (ss,) = m.stateful_sets
    assert (ss.service_name, ss.ordinals_start, ss.retention) == ("web", 0, ("Retain", "Retain"))
    (ds,) = m.daemon_sets
    assert ds.template.pod.containers[0].requests == {"cpu": Fraction(1, 10)}
    (job,) = m.jobs
    assert (job.parallelism, job.completions, job.wanted_active) == (1, None, 1)


def test_job_selector_is_generated_on_the_controller_uid() -> None:
    """Without manualSelector the API server generates the selector
    ``batch.kubernetes.io/controller-uid=<uid>`` and labels the template with the uid and
    job name, new and legacy keys (batch validation/strategy ``generateSelector``)."""
    obj = _obj("Job", "batch/v1")
    obj["metadata"]["uid"] = "u-1"
    (job,) = decode_objects([obj], "f.yaml").jobs
    assert job.selector == LabelSelector(match_labels={JOB_CONTROLLER_UID_LABEL: "u-1"})
    assert job.template.labels == {
        "app": "web",
        JOB_CONTROLLER_UID_LABEL: "u-1",
        JOB_NAME_LABEL: "web",
        "controller-uid": "u-1",
        "job-name": "web",
    }
    assert job.template.pod.labels == job.template.labels


@pytest.mark.parametrize(
    ("parallelism", "completions", "succeeded", "suspend", "want"),
    [
        (2, None, 0, False, 2),
        (2, None, 1, False, 0),
        (3, 5, 0, False, 3),
        (3, 5, 4, False, 1),
        (3, 5, 5, False, 0),
        (3, 5, 0, True, 0),
    ],
)
def test_job_wants_min_of_parallelism_and_remaining_completions(
    parallelism: int, completions: int | None, succeeded: int, suspend: bool, want: int
) -> None:
    """Job controller ``wantActive``: parallelism, capped by completions - succeeded; a work
    queue (no completions) stops once a pod succeeded; a suspended Job runs nothing."""
    obj = _obj("Job", "batch/v1", parallelism=parallelism, completions=completions)
    obj["spec"]["suspend"] = suspend
    obj["status"] = {"succeeded": succeeded}
    (job,) = decode_objects([obj], "f.yaml").jobs
    assert job.wanted_active == want


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        pytest.param(
            _obj("Deployment", selector={"matchLabels": {"app": "api"}}),
            "f.yaml: Deployment ns/web: spec.template.metadata.labels: invalid value "
            "{'app': 'web'}: `selector` does not match template `labels`",
            id="selector does not match the template",
        ),
        pytest.param(
            _obj("ReplicaSet", replicas=-1),
            "f.yaml: ReplicaSet ns/web: spec.replicas: invalid value -1: must be greater than "
            "or equal to 0",
            id="negative replicas",
        ),
        pytest.param(
            _obj("DaemonSet", selector=None),
            # ValidateDaemonSetSpec: a nil selector selects nothing
            "f.yaml: DaemonSet ns/web: spec.template.metadata.labels: invalid value "
            "{'app': 'web'}: `selector` does not match template `labels`",
            id="apps/v1 DaemonSet without a selector",
        ),
        pytest.param(
            _obj("Deployment", selector={}),
            "f.yaml: Deployment ns/web: spec.selector: empty selector is invalid for deployment",
            id="empty selector",
        ),
        pytest.param(
            _obj("Deployment", selector={"matchExpressions": [{"key": "app", "operator": "In"}]}),
            "f.yaml: Deployment ns/web: spec.selector.matchExpressions[0].values: required: "
            "must be specified when `operator` is 'In' or 'NotIn'",
            id="In without values",
        ),
        pytest.param(
            _obj("Deployment", template=None),
            "f.yaml: Deployment ns/web: spec.template: required",
            id="no template",
        ),
        pytest.param(
            _obj("Job", "batch/v1", parallelism=-2),
            "f.yaml: Job ns/web: spec.parallelism: invalid value -2: must be greater than or "
            "equal to 0",
            id="negative parallelism",
        ),
        pytest.param(
            _obj("Job", "batch/v1", template=TEMPLATE),
            "f.yaml: Job ns/web: spec.template.spec.restartPolicy: required: valid values: "
            '"OnFailure", "Never"',
            id="job restartPolicy defaults to Always, which a Job refuses",
        ),
        pytest.param(
            _obj(
                "Job",
                "batch/v1",
                template={**TEMPLATE, "spec": {**TEMPLATE["spec"], "restartPolicy": "Sometimes"}},
            ),
            'f.yaml: Job ns/web: spec.template.spec.restartPolicy: unsupported value "Sometimes": '
            'supported values: "OnFailure", "Never"',
            id="job restartPolicy not one of the two",
        ),
        pytest.param(
            _obj("Job", "batch/v1", selector={"matchLabels": {"app": "web"}}),
            "f.yaml: Job ns/web: spec.selector: invalid value {app=web}: `selector` not "
            "auto-generated (set `manualSelector: true` to give your own)",
            id="job selector without manualSelector that the server did not generate",
        ),
        pytest.param(
            _obj("ReplicaSet", template={**TEMPLATE, "spec": {"containers": "x"}}),
            "f.yaml: ReplicaSet ns/web: spec.template.spec.containers: expected a list, got a "
            "string",
            id="template field path",
        ),
        pytest.param(
            {**_obj("Deployment"), "apiVersion": "extensions/v1beta1"},
            "f.yaml: Deployment ns/web: apiVersion: unsupported version extensions/v1beta1 for "
            "Deployment; use apps/v1",
            id="apiVersion not served",
        ),
    ],
)
def test_bad_controllers_are_refused_naming_file_object_and_field(
    obj: dict[str, Any], message: str
) -> None:
    """Refused as the API server's validation refuses them (ValidateDeploymentSpec,
    ValidateReplicaSetSpec, ValidateStatefulSetSpec, ValidateDaemonSetSpec, ValidateJobSpec)."""
    assert _error(obj) == message


def test_kinds_kept_for_the_scheduler() -> None:
    """Namespaces (with the kubernetes.io/metadata.name label the API server adds), Services
    (selector), PriorityClasses, PodDisruptionBudgets, CSIDrivers (attachRequired defaults
    to true) and CSIStorageCapacities are decoded and kept, with no warning."""
    text = """\
apiVersion: v1
kind: Namespace
metadata: {name: team-a, labels: {tier: gold}}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: team-a}
spec: {selector: {app: web}}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
globalDefault: true
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: team-a}
spec: {minAvailable: "50%", selector: {matchLabels: {app: web}}}
status: {disruptionsAllowed: 1, currentHealthy: 3, desiredHealthy: 2, expectedPods: 3}
---
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: ebs.csi.aws.com}
spec: {storageCapacity: true}
---
apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata: {name: cap-1, namespace: kube-system}
storageClassName: fast
nodeTopology: {matchLabels: {zone: a}}
capacity: 100Gi
"""
    m = load_text(text, "f.yaml")
    assert m.warnings == []
    (ns,) = m.namespaces
    assert ns.labels == {"tier": "gold", "kubernetes.io/metadata.name": "team-a"}
    (svc,) = m.services
    assert (svc.key, svc.selector) == ("team-a/web", {"app": "web"})
    (pc,) = m.priority_classes
    assert (pc.value, pc.global_default, pc.preemption_policy) == (
        1000,
        True,
        "PreemptLowerPriority",
    )
    (pdb,) = m.pod_disruption_budgets
    assert (pdb.min_available, pdb.max_unavailable, pdb.disruptions_allowed) == ("50%", None, 1)
    assert pdb.selects("team-a", {"app": "web"}) and not pdb.selects("other", {"app": "web"})
    (drv,) = m.csi_drivers
    assert (drv.attach_required, drv.storage_capacity) == (True, True)
    (cap,) = m.csi_storage_capacities
    assert (cap.namespace, cap.storage_class_name, cap.capacity) == (
        "kube-system",
        "fast",
        100 * 2**30,
    )
    assert cap.node_topology == LabelSelector(match_labels={"zone": "a"})


def test_pdb_without_selector_selects_nothing() -> None:
    """policy/v1: a nil selector matches no pods; an empty one matches every pod of the
    namespace (policy/v1 PodDisruptionBudgetSpec.selector documentation)."""
    docs = [
        {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "a"}},
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "b"},
            "spec": {"selector": {}},
        },
    ]
    a, b = decode_objects(docs, "f.yaml").pod_disruption_budgets
    assert not a.selects("default", {"x": "y"})
    assert b.selects("default", {"x": "y"})


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        pytest.param(
            {
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "metadata": {"name": "p"},
                "spec": {"minAvailable": 1, "maxUnavailable": 1},
            },
            "f.yaml: PodDisruptionBudget default/p: spec: minAvailable and maxUnavailable "
            "cannot be both set",
            id="pdb both set",
        ),
        pytest.param(
            {
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "metadata": {"name": "p"},
                "spec": {"maxUnavailable": "120%"},
            },
            "f.yaml: PodDisruptionBudget default/p: spec.maxUnavailable: invalid value '120%': "
            "must not be greater than 100%",
            id="pdb over 100%",
        ),
        pytest.param(
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": "p"},
            },
            "f.yaml: PriorityClass p: value: required",
            id="priorityclass value required",
        ),
        pytest.param(
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": "p"},
                "value": 2_000_000_000,
            },
            "f.yaml: PriorityClass p: value: forbidden: maximum allowed value of a user defined "
            "priority is 1000000000",
            id="priorityclass too high",
        ),
        pytest.param(
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": "system-mine"},
                "value": 1,
            },
            # ValidatePriorityClass / IsKnownSystemPriorityClass
            "f.yaml: PriorityClass system-mine: metadata.name: forbidden: priority class names "
            "with 'system-' prefix are reserved for system use only. error: system-mine is not "
            "a known system priority class",
            id="priorityclass reserved prefix",
        ),
        pytest.param(
            {
                "apiVersion": "storage.k8s.io/v1",
                "kind": "CSIStorageCapacity",
                "metadata": {"name": "c"},
            },
            "f.yaml: CSIStorageCapacity default/c: storageClassName: required",
            id="capacity without class",
        ),
    ],
)
def test_bad_scheduler_kinds_are_refused(obj: dict[str, Any], message: str) -> None:
    """ValidatePodDisruptionBudgetSpec, ValidatePriorityClass, ValidateCSIStorageCapacity."""
    assert _error(obj) == message


def test_statefulset_without_service_name_is_accepted() -> None:
    """``serviceName`` is optional in 1.34: ValidateStatefulSetSpec does not check it and the
    1.34 OpenAPI schema requires only ``selector`` and ``template`` (kubernetes#130233)."""
    raw = _obj("StatefulSet", serviceName=None)
    m = decode_objects([raw], "f.yaml")
    assert [s.service_name for s in m.stateful_sets] == [""]
