"""Objects the scheduler, preemption and scale-down read besides Nodes and Pods: Namespaces
(their labels, for ``namespaceSelector``), Services (their selectors, for default spreading),
PriorityClasses (scheduling.k8s.io/v1) and PodDisruptionBudgets (policy/v1).

Decoders apply the API server's validation where it matters here (label selectors, a
PriorityClass's reserved names and value range, a budget's ``minAvailable`` /
``maxUnavailable``) and raise `FieldError` naming the field.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

import attrs

from schedsim.api.apps.workloads import default_uid
from schedsim.api.core import Pod
from schedsim.api.errors import FieldError
from schedsim.api.labels import LabelSelector
from schedsim.api.loading import decode as d

__all__ = [
    "HIGHEST_USER_DEFINABLE_PRIORITY",
    "SYSTEM_PRIORITY_CLASSES",
    "Namespace",
    "PodDisruptionBudget",
    "PriorityClass",
    "Service",
]

HIGHEST_USER_DEFINABLE_PRIORITY: Final = 1_000_000_000
"""The largest value of a user-defined PriorityClass
(``scheduling.HighestUserDefinablePriority``)."""

SYSTEM_PRIORITY_CLASSES: Final = {
    "system-node-critical": 2_000_001_000,
    "system-cluster-critical": 2_000_000_000,
}
"""The built-in PriorityClasses the API server creates (``scheduling.SystemPriorityClasses``)."""

_PERCENT = re.compile(r"([0-9]+)%")  # IsValidPercent: ASCII digits


def _meta(
    raw: Mapping[str, Any], kind: str, namespaced: bool
) -> tuple[Mapping[str, Any], str, str]:
    meta = d.get_map(raw, "metadata", "")
    name = d.get_str(meta, "name", "metadata")
    if not name:
        raise FieldError("metadata.name", "required")
    namespace = (d.get_str(meta, "namespace", "metadata") or "default") if namespaced else ""
    return meta, name, namespace


@attrs.frozen
class Namespace:
    """A core/v1 Namespace.

    Attributes:
        name: the namespace name (a DNS label).
        labels: metadata.labels; the API server adds ``kubernetes.io/metadata.name: <name>``
            (``NamespaceDefaultLabelName``), so selectors on it work here too.
    """

    name: str
    uid: str = ""
    labels: Mapping[str, str] = attrs.field(factory=dict)

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any]) -> Namespace:
        """Decode a Namespace; raises FieldError naming the field."""
        d.check_api_version(raw, "Namespace", ("v1",))
        meta, name, _ = _meta(raw, "Namespace", False)
        d.check_dns1123_label(name, "metadata.name")
        labels = d.get_str_map(meta, "labels", "metadata")
        labels["kubernetes.io/metadata.name"] = name
        return cls(
            name=name,
            uid=d.get_str(meta, "uid", "metadata") or default_uid("Namespace", "", name),
            labels=labels,
        )


@attrs.frozen
class Service:
    """A core/v1 Service.

    Attributes:
        selector: ``spec.selector`` (a plain label map); empty: the Service selects no pods
            by itself (endpoints managed elsewhere).
    """

    name: str
    namespace: str = "default"
    uid: str = ""
    labels: Mapping[str, str] = attrs.field(factory=dict)
    selector: Mapping[str, str] = attrs.field(factory=dict)

    @property
    def key(self) -> str:
        """``namespace/name``."""
        return f"{self.namespace}/{self.name}"

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any]) -> Service:
        """Decode a Service; raises FieldError naming the field."""
        d.check_api_version(raw, "Service", ("v1",))
        meta, name, namespace = _meta(raw, "Service", True)
        spec = d.get_map(raw, "spec", "")
        return cls(
            name=name,
            namespace=namespace,
            uid=d.get_str(meta, "uid", "metadata") or default_uid("Service", namespace, name),
            labels=d.get_str_map(meta, "labels", "metadata"),
            selector=d.get_str_map(spec, "selector", "spec"),
        )


@attrs.frozen
class PriorityClass:
    """A scheduling.k8s.io/v1 PriorityClass.

    Attributes:
        value: the priority pods of this class get (admission sets ``spec.priority``).
        global_default: pods without a ``priorityClassName`` get this class's value.
        preemption_policy: ``PreemptLowerPriority`` (default) or ``Never``.
    """

    name: str
    value: int
    global_default: bool = False
    preemption_policy: str = "PreemptLowerPriority"

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any]) -> PriorityClass:
        """Decode a PriorityClass: ``value`` is required and an int32. The API server's
        other rules (``ValidatePriorityClass``: reserved ``system-`` names, the user maximum
        1000000000, ``preemptionPolicy``) are `schedsim.api.validation.scheduling`'s.

        Raises:
            FieldError: naming the field.
        """
        d.check_api_version(raw, "PriorityClass", ("scheduling.k8s.io/v1",))
        _, name, _ = _meta(raw, "PriorityClass", False)
        if raw.get("value") is None:
            raise FieldError("value", "required")
        value = d.get_int(raw, "value", "")
        if not -(2**31) <= value < 2**31:  # an int32 field: the API server cannot decode it
            raise FieldError("value", f"invalid value {value}: out of the int32 range")
        # the API server's rules (system- names, the user maximum, preemptionPolicy) are
        # schedsim.api.validation.scheduling's; an unknown policy reads as the default here
        policy = d.get_str(raw, "preemptionPolicy", "")
        if policy not in ("PreemptLowerPriority", "Never"):
            policy = "PreemptLowerPriority"
        return cls(
            name=name,
            value=value,
            global_default=d.get_bool(raw, "globalDefault", ""),
            preemption_policy=policy,
        )


def _int_or_percent(spec: Mapping[str, Any], key: str) -> int | str | None:
    """An IntOrString that must be a non-negative integer or a percentage of at most 100%
    (``ValidatePositiveIntOrPercent`` and ``IsNotMoreThan100Percent``)."""
    raw = spec.get(key)
    if raw is None:
        return None
    field = f"spec.{key}"
    if isinstance(raw, bool) or not isinstance(raw, int | str):
        raise FieldError(field, f"expected an integer or a percentage, got {d.type_name(raw)}")
    if isinstance(raw, int):
        if raw < 0:
            raise FieldError(field, f"invalid value {raw}: must be greater than or equal to 0")
        return raw
    m = _PERCENT.fullmatch(raw)
    if m is None:
        raise FieldError(field, f"invalid value {raw!r}: {d.PERCENT_PROBLEM}")
    if int(m.group(1)) > 100:
        raise FieldError(field, f"invalid value {raw!r}: must not be greater than 100%")
    return raw


@attrs.frozen
class PodDisruptionBudget:
    """A policy/v1 PodDisruptionBudget.

    Attributes:
        selector: ``spec.selector``; None selects no pods, an empty selector every pod of the
            namespace (policy/v1 semantics).
        min_available: ``spec.minAvailable``: an integer, a percentage such as ``"50%"``, or
            None.
        max_unavailable: ``spec.maxUnavailable``, same forms; at most one of the two is set.
        disruptions_allowed: ``status.disruptionsAllowed`` (what eviction and preemption
            check); None when the input has no ``status.disruptionsAllowed`` (see
            `resolve_disruptions_allowed`).
        current_healthy, desired_healthy, expected_pods: the other status counts.
        disrupted_pods: names of the pods in ``status.disruptedPods`` (evictions the API
            server processed; preemption does not charge them to the budget again).
        unhealthy_pod_eviction_policy: ``IfHealthyBudget`` (default) or ``AlwaysAllow``.
    """

    name: str
    namespace: str = "default"
    uid: str = ""
    selector: LabelSelector | None = None
    min_available: int | str | None = None
    max_unavailable: int | str | None = None
    disruptions_allowed: int | None = None
    current_healthy: int = 0
    desired_healthy: int = 0
    expected_pods: int = 0
    unhealthy_pod_eviction_policy: str = "IfHealthyBudget"
    disrupted_pods: frozenset[str] = frozenset()

    @property
    def key(self) -> str:
        """``namespace/name``."""
        return f"{self.namespace}/{self.name}"

    def selects(self, namespace: str, labels: Mapping[str, str]) -> bool:
        """Whether a pod of ``namespace`` with ``labels`` is covered by this budget."""
        return (
            namespace == self.namespace
            and self.selector is not None
            and self.selector.matches(labels)
        )

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any]) -> PodDisruptionBudget:
        """Decode and validate a PodDisruptionBudget (``ValidatePodDisruptionBudgetSpec``).

        Raises:
            FieldError: both ``minAvailable`` and ``maxUnavailable`` set, a negative count,
                a percentage above 100% or malformed, a bad selector.
        """
        d.check_api_version(raw, "PodDisruptionBudget", ("policy/v1",))
        meta, name, namespace = _meta(raw, "PodDisruptionBudget", True)
        spec = d.get_map(raw, "spec", "")
        status = d.get_map(raw, "status", "")
        min_available = _int_or_percent(spec, "minAvailable")
        max_unavailable = _int_or_percent(spec, "maxUnavailable")
        if min_available is not None and max_unavailable is not None:
            raise FieldError("spec", "minAvailable and maxUnavailable cannot be both set")
        selector = None
        if spec.get("selector") is not None:
            selector = LabelSelector.from_manifest(
                d.get_map(spec, "selector", "spec"), "spec.selector"
            )
        policy = d.get_str(spec, "unhealthyPodEvictionPolicy", "spec") or "IfHealthyBudget"
        if policy not in ("IfHealthyBudget", "AlwaysAllow"):
            raise FieldError(
                "spec.unhealthyPodEvictionPolicy",
                f'unsupported value "{policy}": supported values: "AlwaysAllow", "IfHealthyBudget"',
            )
        return cls(
            name=name,
            namespace=namespace,
            uid=d.get_str(meta, "uid", "metadata")
            or default_uid("PodDisruptionBudget", namespace, name),
            selector=selector,
            min_available=min_available,
            max_unavailable=max_unavailable,
            disruptions_allowed=d.get_int(status, "disruptionsAllowed", "status")
            if status.get("disruptionsAllowed") is not None
            else None,
            current_healthy=d.get_int(status, "currentHealthy", "status"),
            desired_healthy=d.get_int(status, "desiredHealthy", "status"),
            expected_pods=d.get_int(status, "expectedPods", "status"),
            unhealthy_pod_eviction_policy=policy,
            disrupted_pods=frozenset(d.get_map(status, "disruptedPods", "status")),
        )

    def resolve_disruptions_allowed(self, pods: Iterable[Pod]) -> PodDisruptionBudget:
        """This budget with ``disruptions_allowed`` set: its own status value when the input
        had one, else what the disruption controller would compute from ``pods`` (the
        cluster's live pods).

        The controller's rule (``pkg/controller/disruption``): healthy = the matching pods
        that run and are ready (``countHealthyPods``: bound, not terminating, and
        ``IsPodReady``; a pod whose ``Ready`` condition is not "True" is not healthy, a pod
        with no ``Ready`` condition, as a hand-written manifest without a status, is assumed
        ready: `Pod.ready`); with ``minAvailable`` N, desired = N; with a
        percentage or ``maxUnavailable``, desired is taken against the expected count, which
        the controller reads from the pods' controllers' scale: schedsim uses the number of
        matching pods instead (their controllers are usually expanded into exactly those
        pods). Percentages round up as ``GetScaledValueFromIntOrPercent(..., true)`` does.
        allowed = max(0, healthy - desired). A budget with neither field allows none.

        Time: O(pods).
        """
        if self.disruptions_allowed is not None:
            return self
        matching = [p for p in pods if not p.is_terminal and self.selects(p.namespace, p.labels)]
        expected = len(matching)
        healthy = sum(
            1 for p in matching if p.node_name and p.deletion_timestamp is None and p.ready
        )
        if self.min_available is not None:
            desired = _scaled(self.min_available, expected)
        elif self.max_unavailable is not None:
            desired = max(0, expected - _scaled(self.max_unavailable, expected))
        else:
            return attrs.evolve(self, disruptions_allowed=0)
        return attrs.evolve(
            self,
            disruptions_allowed=max(0, healthy - desired),
            current_healthy=healthy,
            desired_healthy=desired,
            expected_pods=expected,
        )


def _scaled(value: int | str, total: int) -> int:
    """An IntOrString against ``total``: an int as is, a percentage rounded up."""
    if isinstance(value, int):
        return value
    return -(-int(value[:-1]) * total // 100)
