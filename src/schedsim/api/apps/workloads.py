"""Workload controllers (apps/v1 ReplicaSet, Deployment, StatefulSet, DaemonSet; core/v1
ReplicationController; batch/v1 Job) as the API server accepts them.

Each decoder validates what the API server's validation checks and what matters for the
pods the controller creates (``pkg/apis/apps/validation``, ``pkg/apis/batch/validation``,
``pkg/apis/core/validation`` ``ValidateReplicationController``): a selector is given (apps/v1)
and not empty, and it matches the template's labels; ``replicas``, ``parallelism`` and
``completions`` are not negative; the template's ``restartPolicy`` is one the controller
allows (``Always``; a Job: ``OnFailure`` or ``Never``). A StatefulSet's ``serviceName`` is
optional, as in 1.34 (neither ValidateStatefulSetSpec nor the 1.34 OpenAPI schema requires
it). Defaults are the API server's
(``replicas`` 1, a ReplicationController's selector = its template labels, a Job's generated
selector on ``batch.kubernetes.io/controller-uid`` unless ``manualSelector``).

The template is decoded once as a `Pod` (``PodTemplate.pod``), so its errors are reported
at load time with their path (``spec.template.spec.containers[0]...``) and the controllers'
pods are cheap copies of it (`schedsim.api.apps.controllers`).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import attrs

from schedsim.api.core import OwnerReference, Pod, decode_owner_references
from schedsim.api.errors import FieldError
from schedsim.api.labels import LabelSelector
from schedsim.api.loading import decode as d
from schedsim.api.storage import PersistentVolumeClaim

__all__ = [
    "DaemonSet",
    "Deployment",
    "Job",
    "PodTemplate",
    "ReplicaSet",
    "ReplicationController",
    "StatefulSet",
    "Workload",
]

_APPS_V1 = ("apps/v1",)
_T = TypeVar("_T")


def default_uid(kind: str, namespace: str, name: str) -> str:
    """A stable UID for an object given without one (same input, same UID)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"schedsim:{kind}:{namespace}/{name}"))


@attrs.frozen
class PodTemplate:
    """``spec.template`` of a controller: the pod it creates, before naming.

    Attributes:
        labels: ``template.metadata.labels``.
        annotations: ``template.metadata.annotations``.
        restart_policy: ``template.spec.restartPolicy`` (API default ``Always``).
        raw: the template as written (metadata and spec), read-only: the pod-template-hash
            is computed from it.
        pod: the template decoded as a Pod named after its controller, in the controller's
            namespace, without owner references; pods are copies of it.
    """

    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    restart_policy: str
    raw: Mapping[str, Any]
    pod: Pod

    @classmethod
    def from_manifest(
        cls, spec: Mapping[str, Any], path: str, name: str, namespace: str
    ) -> PodTemplate:
        """Decode ``spec.template`` (``path`` is its field path, e.g. ``spec.template``).

        Raises:
            FieldError: the template is missing or a field of it is malformed (the field
                path starts with ``path``).
        """
        raw = spec.get("template")
        if raw is None:
            raise FieldError(path, "required")
        if not isinstance(raw, Mapping):
            raise FieldError(path, f"expected a mapping, got {d.type_name(raw)}")
        meta = d.get_map(raw, "metadata", path)
        pod_spec = d.get_map(raw, "spec", path)
        labels = d.get_str_map(meta, "labels", d.join(path, "metadata"))
        annotations = d.get_str_map(meta, "annotations", d.join(path, "metadata"))
        policy = d.get_str(pod_spec, "restartPolicy", d.join(path, "spec")) or "Always"
        pod_meta = {k: v for k, v in meta.items() if k != "generateName"}
        as_pod = {"metadata": {**pod_meta, "name": name, "namespace": namespace}, "spec": pod_spec}
        try:
            pod = Pod.from_manifest(as_pod)
        except FieldError as e:
            raise FieldError(d.join(path, e.field), e.problem) from None
        return cls(labels, annotations, policy, raw, pod)


@attrs.frozen
class Workload:
    """What every controller has: identity, metadata, selector and pod template.

    Attributes:
        name: metadata.name.
        namespace: metadata.namespace (default ``default``).
        uid: metadata.uid, or a stable UID derived from kind/namespace/name.
        labels: metadata.labels.
        annotations: metadata.annotations.
        owner_references: metadata.ownerReferences (a Deployment's ReplicaSet has one).
        selector: the pods it owns (``spec.selector``; generated for a Job).
        template: the pod template.
    """

    name: str
    namespace: str
    uid: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    owner_references: tuple[OwnerReference, ...]
    selector: LabelSelector
    template: PodTemplate

    api_version = "apps/v1"
    kind = "Workload"

    @property
    def key(self) -> str:
        """``namespace/name``."""
        return f"{self.namespace}/{self.name}"

    def controller_ref(self) -> OwnerReference:
        """The ownerReference the controller puts on what it creates
        (``metav1.NewControllerRef``: ``controller: true``)."""
        return OwnerReference(self.api_version, self.kind, self.name, self.uid, controller=True)

    @property
    def controller(self) -> OwnerReference | None:
        """This object's own controller reference (e.g. a ReplicaSet's Deployment)."""
        return next((r for r in self.owner_references if r.controller), None)


def _meta(raw: Mapping[str, Any], kind: str) -> tuple[Mapping[str, Any], str, str, str]:
    meta = d.get_map(raw, "metadata", "")
    name = d.get_str(meta, "name", "metadata")
    if not name:
        raise FieldError("metadata.name", "required")
    d.check_dns1123_subdomain(name, "metadata.name")
    namespace = d.get_str(meta, "namespace", "metadata") or "default"
    uid = d.get_str(meta, "uid", "metadata") or default_uid(kind, namespace, name)
    return meta, name, namespace, uid


_INT32_FIELDS: Mapping[str, tuple[str, ...]] = {
    "ReplicaSet": ("replicas", "minReadySeconds"),
    "ReplicationController": ("replicas", "minReadySeconds"),
    "Deployment": (
        "replicas", "minReadySeconds", "revisionHistoryLimit", "progressDeadlineSeconds",
    ),
    "StatefulSet": ("replicas", "minReadySeconds", "revisionHistoryLimit"),
    "DaemonSet": ("minReadySeconds", "revisionHistoryLimit"),
    "Job": (
        "parallelism", "completions", "backoffLimit", "backoffLimitPerIndex",
        "maxFailedIndexes", "ttlSecondsAfterFinished",
    ),
}  # fmt: skip
"""int32 fields of each controller's spec (apps/v1, batch/v1 types): a larger number cannot
be decoded by the API server."""

_INT64_FIELDS: Mapping[str, tuple[str, ...]] = {"Job": ("activeDeadlineSeconds",)}
"""int64 fields of each controller's spec (batch/v1 types)."""

_NON_NEGATIVE: Mapping[str, tuple[str, ...]] = {
    "Job": (
        "backoffLimit", "backoffLimitPerIndex", "maxFailedIndexes", "ttlSecondsAfterFinished",
        "activeDeadlineSeconds",
    ),
}  # fmt: skip
"""Fields validateJobSpec checks with ValidateNonnegativeField (besides parallelism and
completions, decoded below)."""

_ENUMS: Mapping[str, tuple[tuple[str, str, tuple[str, ...]], ...]] = {
    # ValidateDeploymentStrategy
    "Deployment": (("strategy", "type", ("Recreate", "RollingUpdate")),),
    # StatefulSet: ValidateStatefulSetSpec's own wording (schedsim.api.validation.apps)
    # ValidateDaemonSetUpdateStrategy
    "DaemonSet": (("updateStrategy", "type", ("RollingUpdate", "OnDelete")),),
    # validateJobSpec: podReplacementPolicy
    "Job": (("", "podReplacementPolicy", ("TerminatingOrFailed", "Failed")),),
}
"""Enumerated spec fields ``(section, field, supported values)``; an unset field is
defaulted by the API server."""


def _check_spec(kind: str, spec: Mapping[str, Any]) -> None:
    """The API server's decoding and validation of the controller's own spec fields that
    schedsim does not otherwise read: int32 widths, non-negative counts, enumerated types
    (``pkg/apis/apps/validation``, ``pkg/apis/batch/validation``). Raises FieldError."""
    widths = [(key, 32) for key in _INT32_FIELDS.get(kind, ())]
    widths += [(key, 64) for key in _INT64_FIELDS.get(kind, ())]
    for key, bits in widths:
        if spec.get(key) is None:
            continue
        value = d.get_int(spec, key, "spec")
        if not -(2 ** (bits - 1)) <= value < 2 ** (bits - 1):  # the API server cannot decode it
            raise FieldError(f"spec.{key}", f"invalid value {value}: out of the int{bits} range")
        if key in _NON_NEGATIVE.get(kind, ()) and value < 0:
            raise FieldError(
                f"spec.{key}", f"invalid value {value}: must be greater than or equal to 0"
            )
    for section, key, allowed in _ENUMS.get(kind, ()):
        where = spec if not section else d.get_map(spec, section, "spec")
        path = f"spec.{section}" if section else "spec"
        given = d.get_str(where, key, path)
        if given and given not in allowed:
            supported = ", ".join(f'"{a}"' for a in allowed)
            raise FieldError(
                f"{path}.{key}", f'unsupported value "{given}": supported values: {supported}'
            )


def _non_negative(spec: Mapping[str, Any], key: str, default: int) -> int:
    value = d.get_int(spec, key, "spec", default)
    if value < 0:
        raise FieldError(
            f"spec.{key}", f"invalid value {value}: must be greater than or equal to 0"
        )
    return value


def _selector(spec: Mapping[str, Any], what: str) -> LabelSelector:
    """apps/v1 ``spec.selector``: required, valid and not empty."""
    raw = spec.get("selector")
    if raw is None:
        raise FieldError("spec.selector", "required")
    sel = LabelSelector.from_manifest(d.get_map(spec, "selector", "spec"), "spec.selector")
    if not sel.match_labels and not sel.match_expressions:
        raise FieldError("spec.selector", f"empty selector is invalid for {what}")
    return sel


def _check_matches(selector: LabelSelector, template: PodTemplate) -> None:
    """The selector must select the template's pods (``ValidatePodTemplateSpecForReplicaSet``
    and the other controllers' equivalents)."""
    if not selector.matches(template.labels):
        raise FieldError(
            "spec.template.metadata.labels",
            f"invalid value {dict(template.labels)}: `selector` does not match template `labels`",
        )


def _check_restart_policy(template: PodTemplate, allowed: tuple[str, ...]) -> None:
    if "Always" not in allowed and template.restart_policy == "Always":
        # validateJobSpec: "" (defaulted to Always) or Always is a missing value for a Job
        supported = ", ".join(f'"{p}"' for p in allowed)
        raise FieldError("spec.template.spec.restartPolicy", f"required: valid values: {supported}")
    if template.restart_policy not in allowed:
        supported = ", ".join(f'"{p}"' for p in allowed)
        raise FieldError(
            "spec.template.spec.restartPolicy",
            f'unsupported value "{template.restart_policy}": supported values: {supported}',
        )


def _common(
    cls: Callable[..., _T],
    raw: Mapping[str, Any],
    kind: str,
    selector: Callable[[Mapping[str, Any], Mapping[str, Any]], LabelSelector],
    restart: tuple[str, ...] = ("Always",),
    adjust: Callable[[PodTemplate, Mapping[str, Any], str, str], PodTemplate] | None = None,
    **extra: Callable[[Mapping[str, Any], Mapping[str, Any]], Any],
) -> _T:
    """Decode metadata, template and selector shared by the controllers.

    ``adjust(template, spec, name, uid)`` applies the API server's defaulting of the
    template (a Job's labels) before the selector is checked against it; ``selector`` and
    each ``extra`` value are called with ``(spec, {"uid", "name", "template"})``.
    """
    meta, name, namespace, uid = _meta(raw, kind)
    spec = d.get_map(raw, "spec", "")
    template = PodTemplate.from_manifest(spec, "spec.template", name, namespace)
    if adjust is not None:
        template = adjust(template, spec, name, uid)
    given_uid = bool(d.get_str(meta, "uid", "metadata"))
    ctx = {"uid": uid, "name": name, "template": template, "given_uid": given_uid}
    sel = selector(spec, ctx)
    _check_matches(sel, template)
    _check_restart_policy(template, restart)
    _check_spec(kind, spec)
    values = {k: f(spec, ctx) for k, f in extra.items()}
    return cls(
        name=name,
        namespace=namespace,
        uid=uid,
        labels=d.get_str_map(meta, "labels", "metadata"),
        annotations=d.get_str_map(meta, "annotations", "metadata"),
        owner_references=decode_owner_references(meta),
        selector=sel,
        template=template,
        **values,
    )


@attrs.frozen
class ReplicaSet(Workload):
    """An apps/v1 ReplicaSet.

    Attributes:
        replicas: ``spec.replicas`` (default 1).
    """

    replicas: int = 1
    kind = "ReplicaSet"

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any]) -> ReplicaSet:
        """Decode and validate a ReplicaSet; raises FieldError naming the field."""
        d.check_api_version(raw, "ReplicaSet", _APPS_V1)
        return _common(
            cls,
            raw,
            "ReplicaSet",
            # ValidateReplicaSetSpec's wording says "deployment" (upstream's, kept)
            lambda spec, _: _selector(spec, "deployment"),
            replicas=lambda spec, _: _non_negative(spec, "replicas", 1),
        )


@attrs.frozen
class Deployment(Workload):
    """An apps/v1 Deployment.

    Attributes:
        replicas: ``spec.replicas`` (default 1).
        paused: ``spec.paused`` (a paused Deployment still keeps its ReplicaSet's pods).
    """

    replicas: int = 1
    paused: bool = False
    kind = "Deployment"

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any]) -> Deployment:
        """Decode and validate a Deployment; raises FieldError naming the field."""
        d.check_api_version(raw, "Deployment", _APPS_V1)
        return _common(
            cls,
            raw,
            "Deployment",
            lambda spec, _: _selector(spec, "deployment"),
            replicas=lambda spec, _: _non_negative(spec, "replicas", 1),
            paused=lambda spec, _: d.get_bool(spec, "paused", "spec"),
        )


def _rc_selector(spec: Mapping[str, Any], ctx: Mapping[str, Any]) -> LabelSelector:
    """core/v1 ReplicationController ``spec.selector`` (a plain map): defaults to the
    template's labels (``SetDefaults_ReplicationController``); still empty is invalid."""
    labels = d.get_str_map(spec, "selector", "spec")
    if not labels:
        labels = dict(ctx["template"].labels)
    if not labels:
        raise FieldError("spec.selector", "required")
    return LabelSelector(match_labels=labels)


@attrs.frozen
class ReplicationController(Workload):
    """A core/v1 ReplicationController.

    Attributes:
        replicas: ``spec.replicas`` (default 1).
    """

    replicas: int = 1
    api_version = "v1"
    kind = "ReplicationController"

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any]) -> ReplicationController:
        """Decode and validate a ReplicationController; raises FieldError naming the field."""
        d.check_api_version(raw, "ReplicationController", ("v1",))
        return _common(
            cls,
            raw,
            "ReplicationController",
            _rc_selector,
            replicas=lambda spec, _: _non_negative(spec, "replicas", 1),
        )


def _claim_templates(spec: Mapping[str, Any], ctx: Mapping[str, Any]) -> tuple[Any, ...]:
    items = d.get_list(spec, "volumeClaimTemplates", "spec")
    out = []
    seen: set[str] = set()
    for i in range(len(items)):
        item = d.get_mapping_item(items, i, "spec.volumeClaimTemplates")
        path = f"spec.volumeClaimTemplates[{i}]"
        meta = d.get_map(item, "metadata", path)
        name = d.get_str(meta, "name", d.join(path, "metadata"))
        if not name:
            raise FieldError(f"{path}.metadata.name", "required")
        if name in seen:
            raise FieldError(f"{path}.metadata.name", f"duplicate value {name!r}")
        seen.add(name)
        try:
            pvc = PersistentVolumeClaim.from_manifest({**item, "apiVersion": "v1"})
        except FieldError as e:
            raise FieldError(d.join(path, e.field), e.problem) from None
        out.append((name, pvc, item))
    return tuple(out)


def _service_name(spec: Mapping[str, Any], _: Mapping[str, Any]) -> str:
    return d.get_str(spec, "serviceName", "spec")


def _ordinals_start(spec: Mapping[str, Any], _: Mapping[str, Any]) -> int:
    ordinals = d.get_map(spec, "ordinals", "spec")
    start = d.get_int(ordinals, "start", "spec.ordinals")
    if start < 0:
        raise FieldError(
            "spec.ordinals.start", f"invalid value {start}: must be greater than or equal to 0"
        )
    return start


def _retention(spec: Mapping[str, Any], _: Mapping[str, Any]) -> tuple[str, str]:
    raw = d.get_map(spec, "persistentVolumeClaimRetentionPolicy", "spec")
    path = "spec.persistentVolumeClaimRetentionPolicy"
    out = []
    for key in ("whenDeleted", "whenScaled"):
        value = d.get_str(raw, key, path) or "Retain"
        if value not in ("Retain", "Delete"):
            raise FieldError(
                f"{path}.{key}",
                f'unsupported value "{value}": supported values: "Retain", "Delete"',
            )
        out.append(value)
    return out[0], out[1]


@attrs.frozen
class StatefulSet(Workload):
    """An apps/v1 StatefulSet.

    Attributes:
        replicas: ``spec.replicas`` (default 1).
        service_name: ``spec.serviceName`` (pods' subdomain; empty when not given).
        ordinals_start: ``spec.ordinals.start`` (default 0): the first pod's ordinal.
        volume_claim_templates: ``(name, claim, raw)`` per ``spec.volumeClaimTemplates``
            entry: each pod gets a claim ``<name>-<set>-<ordinal>`` made from it.
        retention: ``persistentVolumeClaimRetentionPolicy`` ``(whenDeleted, whenScaled)``,
            default ``("Retain", "Retain")``.
    """

    replicas: int = 1
    service_name: str = ""
    ordinals_start: int = 0
    volume_claim_templates: tuple[tuple[str, PersistentVolumeClaim, Mapping[str, Any]], ...] = ()
    retention: tuple[str, str] = ("Retain", "Retain")
    kind = "StatefulSet"

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any]) -> StatefulSet:
        """Decode and validate a StatefulSet; raises FieldError naming the field."""
        d.check_api_version(raw, "StatefulSet", _APPS_V1)
        return _common(
            cls,
            raw,
            "StatefulSet",
            lambda spec, _: _selector(spec, "statefulset"),
            replicas=lambda spec, _: _non_negative(spec, "replicas", 1),
            service_name=_service_name,
            ordinals_start=_ordinals_start,
            volume_claim_templates=_claim_templates,
            retention=_retention,
        )


@attrs.frozen
class DaemonSet(Workload):
    """An apps/v1 DaemonSet: one pod per node its template's node selector, required node
    affinity and tolerations admit (see `schedsim.api.apps.daemonset_pods.daemon_set_pod`)."""

    kind = "DaemonSet"

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any]) -> DaemonSet:
        """Decode and validate a DaemonSet; raises FieldError naming the field."""
        d.check_api_version(raw, "DaemonSet", _APPS_V1)
        return _common(cls, raw, "DaemonSet", _daemon_set_selector)


def _daemon_set_selector(spec: Mapping[str, Any], ctx: Mapping[str, Any]) -> LabelSelector:
    """``ValidateDaemonSetSpec``: no "required" for the selector; a missing one selects
    nothing (``LabelSelectorAsSelector(nil)``), so the template's labels do not match it."""
    if spec.get("selector") is None:
        labels = dict(ctx["template"].labels)
        raise FieldError(
            "spec.template.metadata.labels",
            f"invalid value {labels}: `selector` does not match template `labels`",
        )
    return _selector(spec, "daemonset")


JOB_CONTROLLER_UID_LABEL = "batch.kubernetes.io/controller-uid"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
_LEGACY_JOB_LABELS = ("controller-uid", "job-name")


def _job_selector(spec: Mapping[str, Any], ctx: Mapping[str, Any]) -> LabelSelector:
    """A Job's selector, as the API server makes and checks it.

    With ``manualSelector: true`` the given selector is used as is. Without it and without a
    selector, the server's ``generateSelector`` makes ``batch.kubernetes.io/controller-uid:
    <uid>``. A selector given without ``manualSelector`` is what a stored Job looks like
    (``kubectl get job -o yaml`` prints the generated one); ``validateGeneratedSelector``
    accepts it when it matches the generated labels (controller UID and job name, both
    spellings) and the template carries them; any other term is "`selector` not
    auto-generated", as the server answers a hand-written selector. The
    "`selector` will be auto-generated" refusal belongs to a CronJob's jobTemplate
    (`schedsim.api.validation.batch`), not to a Job.
    """
    if d.get_bool(spec, "manualSelector", "spec"):
        return _selector(spec, "job")
    uid, name = ctx["uid"], ctx["name"]
    if spec.get("selector") is None:
        return LabelSelector(match_labels={JOB_CONTROLLER_UID_LABEL: uid})
    sel = LabelSelector.from_manifest(d.get_map(spec, "selector", "spec"), "spec.selector")
    template: PodTemplate = ctx["template"]
    uid_keys = (JOB_CONTROLLER_UID_LABEL, _LEGACY_JOB_LABELS[0])
    named = {r.key for r in sel.match_expressions} | set(sel.match_labels)
    if not ctx["given_uid"] and any(k in named for k in uid_keys):
        # the server always has a UID; a dump stripped of it cannot be checked
        raise FieldError(
            "metadata.uid",
            "required: the generated `spec.selector` names the Job's UID "
            f"({JOB_CONTROLLER_UID_LABEL}); keep metadata.uid as the API server stored it, "
            "or remove spec.selector",
        )
    generated = {
        JOB_CONTROLLER_UID_LABEL: uid,
        JOB_NAME_LABEL: name,
        _LEGACY_JOB_LABELS[0]: uid,
        _LEGACY_JOB_LABELS[1]: name,
    }
    if not sel.matches(generated):
        raise FieldError(
            "spec.selector",
            f"invalid value {_selector_text(sel)}: `selector` not auto-generated "
            "(set `manualSelector: true` to give your own)",
        )
    for key in (JOB_CONTROLLER_UID_LABEL, JOB_NAME_LABEL):
        value = template.labels.get(key)
        if value != generated[key]:
            raise FieldError(
                f"spec.template.metadata.labels[{key}]",
                f"invalid value {value!r}: must be {generated[key]!r}",
            )
    return sel


def _selector_text(sel: LabelSelector) -> str:
    parts = [f"{k}={v}" for k, v in sorted(sel.match_labels.items())]
    parts += [f"{r.key} {r.operator} {list(r.values)}" for r in sel.match_expressions]
    return "{" + ", ".join(parts) + "}"


def _job_template(
    template: PodTemplate, spec: Mapping[str, Any], name: str, uid: str
) -> PodTemplate:
    """The template after the API server's Job defaulting (``generateSelector``): the
    controller-uid and job-name labels (new and legacy spellings) are added where absent
    (a label already there is kept, and checked by `_job_selector`), unless the selector is
    manual."""
    if d.get_bool(spec, "manualSelector", "spec"):
        return template
    generated = {
        JOB_CONTROLLER_UID_LABEL: uid,
        JOB_NAME_LABEL: name,
        _LEGACY_JOB_LABELS[0]: uid,
        _LEGACY_JOB_LABELS[1]: name,
    }
    labels = {**generated, **template.labels}
    if labels == dict(template.labels):
        return template
    return attrs.evolve(template, labels=labels, pod=attrs.evolve(template.pod, labels=labels))


@attrs.frozen
class Job(Workload):
    """A batch/v1 Job.

    Attributes:
        parallelism: ``spec.parallelism`` (default 1).
        completions: ``spec.completions``; None: a work queue (done when any pod succeeds).
        completion_mode: ``NonIndexed`` (default) or ``Indexed``.
        suspend: ``spec.suspend``: a suspended Job runs no pods.
        succeeded: ``status.succeeded``: completions already done.
        backoff_limit: ``spec.backoffLimit``: failed pods the Job tolerates; one more fails
            it (``BackoffLimitExceeded``). Defaulted as the API server does: 6, or
            2147483647 when ``backoffLimitPerIndex`` is set (``SetDefaults_Job``).
        failed: ``status.failed``: pods that failed already.
        backoff_limit_per_index: ``spec.backoffLimitPerIndex`` (Indexed), None when unset.
        pod_failure_policy: ``spec.podFailurePolicy`` is set.
        active_deadline: ``spec.activeDeadlineSeconds`` is set.
    """

    parallelism: int = 1
    completions: int | None = None
    completion_mode: str = "NonIndexed"
    suspend: bool = False
    succeeded: int = 0
    backoff_limit: int = 6
    failed: int = 0
    backoff_limit_per_index: int | None = None
    pod_failure_policy: bool = False
    active_deadline: bool = False
    api_version = "batch/v1"
    kind = "Job"

    @property
    def wanted_active(self) -> int:
        """Pods the Job controller keeps running: ``min(parallelism, completions -
        succeeded)`` (``parallelism`` for a work queue until one succeeds); 0 when
        suspended."""
        if self.suspend:
            return 0
        if self.completions is None:
            return 0 if self.succeeded > 0 else self.parallelism
        return max(0, min(self.parallelism, self.completions - self.succeeded))

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any]) -> Job:
        """Decode and validate a Job; raises FieldError naming the field."""
        d.check_api_version(raw, "Job", ("batch/v1",))
        job = _common(
            cls,
            raw,
            "Job",
            _job_selector,
            restart=("OnFailure", "Never"),
            adjust=_job_template,
            parallelism=lambda spec, _: _non_negative(spec, "parallelism", 1),
            completions=lambda spec, _: (
                None if spec.get("completions") is None else _non_negative(spec, "completions", 0)
            ),
            completion_mode=_completion_mode,
            suspend=lambda spec, _: d.get_bool(spec, "suspend", "spec"),
            succeeded=lambda _spec, _ctx: d.get_int(
                d.get_map(raw, "status", ""), "succeeded", "status"
            ),
            backoff_limit=_backoff_limit,
            failed=lambda _spec, _ctx: d.get_int(d.get_map(raw, "status", ""), "failed", "status"),
            backoff_limit_per_index=lambda spec, _: (
                None
                if spec.get("backoffLimitPerIndex") is None
                else d.get_int(spec, "backoffLimitPerIndex", "spec")
            ),
            pod_failure_policy=lambda spec, _: spec.get("podFailurePolicy") is not None,
            active_deadline=lambda spec, _: spec.get("activeDeadlineSeconds") is not None,
        )
        if job.completion_mode == "Indexed" and job.completions is None:
            raise FieldError("spec.completions", "required when completion mode is `Indexed`")
        if job.completion_mode == "NonIndexed":  # validateJobSpec: per-index limits need Indexed
            spec = d.get_map(raw, "spec", "")
            for key in ("backoffLimitPerIndex", "maxFailedIndexes"):
                if spec.get(key) is not None:
                    raise FieldError(
                        f"spec.{key}",
                        f"invalid value {spec[key]}: requires indexed completion mode",
                    )
        return job


def _backoff_limit(spec: Mapping[str, Any], _: Mapping[str, Any]) -> int:
    """``spec.backoffLimit``, defaulted as ``SetDefaults_Job`` (pkg/apis/batch/v1): 6, or
    math.MaxInt32 when ``backoffLimitPerIndex`` is set."""
    if spec.get("backoffLimit") is not None:
        return d.get_int(spec, "backoffLimit", "spec")
    return 2**31 - 1 if spec.get("backoffLimitPerIndex") is not None else 6


def _completion_mode(spec: Mapping[str, Any], _: Mapping[str, Any]) -> str:
    mode = d.get_str(spec, "completionMode", "spec") or "NonIndexed"
    if mode not in ("NonIndexed", "Indexed"):
        raise FieldError(
            "spec.completionMode",
            f'unsupported value "{mode}": supported values: "NonIndexed", "Indexed"',
        )
    return mode
