"""Objects as a 1.34 API server stores them (generated selectors, defaulted fields, status,
managedFields, ``creationTimestamp: null`` in templates) are accepted, one test per rule of
``pkg/apis/batch/validation`` and ``pkg/apis/apps/validation`` (release-1.34) that such an
object meets; what the server refuses is still refused with its words. The objects come from
the kubectl dump in tests/cli/data (kubectl's shape)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from schedsim.api.errors import ManifestError
from schedsim.api.labels import LabelSelector
from schedsim.api.loading.loader import decode_objects

DUMP = Path(__file__).parents[1] / "cli" / "data" / "kubectl-get-all.yaml"
_ITEMS: list[dict[str, Any]] = yaml.safe_load(DUMP.read_text())["items"]


def _item(kind: str, name: str) -> dict[str, Any]:
    found = next(i for i in _ITEMS if i["kind"] == kind and i["metadata"]["name"] == name)
    return copy.deepcopy(found)


def _error(obj: dict[str, Any]) -> str:
    with pytest.raises(ManifestError) as info:
        decode_objects([obj], "f.yaml")
    return str(info.value)


JOB_UID = _item("Job", "report")["metadata"]["uid"]


def test_stored_job_with_generated_selector_is_accepted_as_stored() -> None:
    """validateGeneratedSelector: no manualSelector, a selector on
    batch.kubernetes.io/controller-uid=<uid> and the four generated template labels: valid.
    The selector is the stored one; the template's labels are unchanged."""
    obj = _item("Job", "report")
    assert "manualSelector" not in _item("Job", "migrate")["spec"]
    m = decode_objects([obj, _item("Job", "migrate")], "f.yaml")
    job, done = m.jobs
    assert job.selector == LabelSelector(
        match_labels={"batch.kubernetes.io/controller-uid": JOB_UID}
    )
    assert dict(job.template.labels) == obj["spec"]["template"]["metadata"]["labels"]
    assert (job.wanted_active, done.wanted_active) == (1, 0)  # migrate: succeeded 1 of 1


def test_job_stored_before_1_27_with_legacy_labels_only_is_accepted() -> None:
    """Jobs created before the batch.kubernetes.io/ labels (1.27) keep their legacy selector
    ``controller-uid`` and template labels; the server accepts them on update (the prefixed
    labels are required only when the old object had them: RequirePrefixedLabels)."""
    obj = _item("Job", "report")
    obj["spec"]["selector"] = {"matchLabels": {"controller-uid": JOB_UID}}
    obj["spec"]["template"]["metadata"]["labels"] = {
        "controller-uid": JOB_UID,
        "job-name": "report",
    }
    (job,) = decode_objects([obj], "f.yaml").jobs
    assert job.selector == LabelSelector(match_labels={"controller-uid": JOB_UID})
    assert job.template.labels["batch.kubernetes.io/controller-uid"] == JOB_UID


def test_job_selector_for_another_uid_is_not_auto_generated() -> None:
    """validateGeneratedSelector: the selector must match the generated labels."""
    obj = _item("Job", "report")
    obj["spec"]["selector"] = {"matchLabels": {"batch.kubernetes.io/controller-uid": "other"}}
    assert _error(obj) == (
        "f.yaml: Job batch/report: spec.selector: invalid value "
        "{batch.kubernetes.io/controller-uid=other}: `selector` not auto-generated (set "
        "`manualSelector: true` to give your own)"
    )


def test_job_template_label_for_another_name_is_refused() -> None:
    """validateGeneratedSelector -> ValidateHasLabel: the template's job-name label must be
    the Job's name."""
    obj = _item("Job", "report")
    obj["spec"]["template"]["metadata"]["labels"]["batch.kubernetes.io/job-name"] = "other"
    assert _error(obj) == (
        "f.yaml: Job batch/report: spec.template.metadata.labels[batch.kubernetes.io/job-name]: "
        "invalid value 'other': must be 'report'"
    )


def test_job_with_generated_selector_but_no_uid_says_how_to_go_on() -> None:
    """validateGeneratedSelector: ``metadata.uid`` required (the selector names it)."""
    obj = _item("Job", "report")
    del obj["metadata"]["uid"]
    assert _error(obj).startswith(
        "f.yaml: Job batch/report: metadata.uid: required: the generated `spec.selector` "
        "names the Job's UID (batch.kubernetes.io/controller-uid); keep metadata.uid as the "
        "API server stored it, or remove spec.selector"
    )


def test_job_with_manual_selector_uses_it() -> None:
    """manualSelector: true: the given selector is used and must match the template."""
    obj = _item("Job", "report")
    obj["spec"]["manualSelector"] = True
    obj["spec"]["selector"] = {"matchLabels": {"job-name": "report"}}
    (job,) = decode_objects([obj], "f.yaml").jobs
    assert job.selector == LabelSelector(match_labels={"job-name": "report"})


def test_job_restart_policy_always_is_a_missing_value() -> None:
    """validateJobSpec (1.34): restartPolicy "" (defaulted to Always) or Always is
    ``Required value: valid values: "OnFailure", "Never"``."""
    obj = _item("Job", "report")
    obj["spec"]["template"]["spec"]["restartPolicy"] = "Always"
    assert _error(obj) == (
        "f.yaml: Job batch/report: spec.template.spec.restartPolicy: required: valid values: "
        '"OnFailure", "Never"'
    )


def _cron_job(**job_spec: Any) -> dict[str, Any]:
    template = _item("Job", "report")["spec"]["template"]
    for key in ("metadata",):
        template = {**template, key: {"creationTimestamp": None}}
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "nightly", "namespace": "batch", "uid": "c-1"},
        "spec": {
            "concurrencyPolicy": "Allow",
            "failedJobsHistoryLimit": 1,
            "jobTemplate": {
                "metadata": {"creationTimestamp": None},
                "spec": {"template": template, **job_spec},
            },
            "schedule": "0 2 * * *",
            "successfulJobsHistoryLimit": 3,
            "suspend": False,
        },
        "status": {"lastScheduleTime": "2026-12-01T02:00:00Z"},
    }


def test_stored_cron_job_is_read_and_set_aside() -> None:
    """A CronJob as stored passes ValidateJobTemplateSpec and is not run (a warning)."""
    m = decode_objects([_cron_job()], "f.yaml")
    assert m.jobs == []
    assert any("CronJob" in w and "batch/nightly" in w for w in m.warnings), m.warnings


@pytest.mark.parametrize(
    ("job_spec", "message"),
    [
        (
            {"selector": {"matchLabels": {"app": "x"}}},
            "f.yaml: CronJob batch/nightly: spec.jobTemplate.spec.selector: `selector` will be "
            "auto-generated",
        ),
        (
            {"manualSelector": True},
            "f.yaml: CronJob batch/nightly: spec.jobTemplate.spec.manualSelector: unsupported "
            'value true: supported values: "nil", "false"',
        ),
    ],
)
def test_cron_job_template_selector_will_be_auto_generated(
    job_spec: dict[str, Any], message: str
) -> None:
    """ValidateJobTemplateSpec: the message a Job used to get belongs here."""
    assert _error(_cron_job(**job_spec)) == message


@pytest.mark.parametrize(
    ("kind", "name"),
    [
        ("Deployment", "web"),
        ("Deployment", "coredns"),
        ("ReplicaSet", "web-7c5ddbdf54"),
        ("StatefulSet", "db"),
        ("DaemonSet", "kube-proxy"),
        ("PodDisruptionBudget", "web"),
        ("PodDisruptionBudget", "coredns"),
        ("PriorityClass", "system-node-critical"),
        ("PersistentVolumeClaim", "data-db-0"),
        ("StorageClass", "standard"),
        ("Node", "kind-control-plane"),
        ("Pod", "kube-proxy-7xk2p"),
        ("Pod", "etcd-kind-control-plane"),
    ],
)
def test_stored_objects_are_accepted_without_warnings(kind: str, name: str) -> None:
    """ValidateDeployment / ValidateReplicaSet / ValidateStatefulSet / ValidateDaemonSet /
    ValidatePodDisruptionBudget / ValidatePriorityClass / ValidatePersistentVolumeClaim /
    ValidateStorageClass / ValidateNode / ValidatePod accept what the server stored: status,
    managedFields, ``creationTimestamp: null`` in a template, a StatefulSet's claim templates
    with apiVersion/kind/status, a DaemonSet pod's matchFields affinity, a mirror pod."""
    m = decode_objects([_item(kind, name)], "f.yaml")
    assert m.warnings == []


def test_stored_pv_and_its_claim_are_accepted_together() -> None:
    """A bound PV (claimRef with uid, nodeAffinity, finalizers) and its claim."""
    m = decode_objects(
        [_item("PersistentVolumeClaim", "data-db-0")]
        + [i for i in copy.deepcopy(_ITEMS) if i["kind"] in ("PersistentVolume", "StorageClass")],
        "f.yaml",
    )
    assert (len(m.persistent_volumes), len(m.persistent_volume_claims)) == (1, 1)
    assert m.warnings == []
