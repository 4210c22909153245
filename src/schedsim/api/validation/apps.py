"""apps/v1 validation that is not the controllers' decoding: the spec rules of
``pkg/apis/apps/validation`` (release-1.34) for Deployments, ReplicaSets, StatefulSets and
DaemonSets that `schedsim.api.apps.workloads` does not apply while decoding.

The decoders already refuse (and this module does not repeat): int32 widths, a negative
``replicas`` (through the pod count), a missing, malformed or empty selector, a selector
that does not match the template's labels, an unknown Deployment strategy or DaemonSet
update-strategy type, a negative ``ordinals.start``, an unknown PVC retention policy,
a restartPolicy other than ``Always``; `schedsim.api.validation.pod` validates the template.
Here, per upstream function:

- ``ValidateDeploymentSpec``: ``minReadySeconds``, ``revisionHistoryLimit``,
  ``progressDeadlineSeconds`` non-negative, ``progressDeadlineSeconds`` greater than
  ``minReadySeconds``; ``ValidateDeploymentStrategy``: no ``rollingUpdate`` with
  ``Recreate``; ``ValidateRollingUpdateDeployment``: ``maxUnavailable`` / ``maxSurge`` an
  integer >= 0 or a percentage, not both 0, ``maxUnavailable`` at most 100%.
- ``ValidateReplicaSetSpec`` (and a Deployment's, through
  ``ValidatePodTemplateSpecForReplicaSet``): ``minReadySeconds`` non-negative, no
  ``activeDeadlineSeconds`` in the template.
- ``ValidateStatefulSetSpec``: ``podManagementPolicy`` 'OrderedReady' or 'Parallel',
  ``updateStrategy`` 'RollingUpdate' or 'OnDelete' (its wording, not NotSupported's),
  ``minReadySeconds`` non-negative, no ``activeDeadlineSeconds``,
  ``rollingUpdate`` only with ``RollingUpdate`` (``OnDelete`` refuses it),
  ``validateRollingUpdateStatefulSet``: ``partition`` non-negative, ``maxUnavailable`` an
  integer or percentage, not 0, at most 100%.
- ``ValidateDaemonSetSpec``: ``minReadySeconds``, ``templateGeneration``,
  ``revisionHistoryLimit`` non-negative, no ``activeDeadlineSeconds``;
  ``ValidateRollingUpdateDaemonSet``: ``maxUnavailable`` / ``maxSurge`` integers >= 0 or
  percentages at most 100%, exactly one of them non-zero.

Everything the API server stores passes: defaulted strategies (``RollingUpdate`` with
``25%``/``25%`` for a Deployment, ``maxSurge: 0`` and ``maxUnavailable: 1`` for a DaemonSet,
``partition: 0`` for a StatefulSet), ``revisionHistoryLimit: 10``, ``progressDeadlineSeconds:
600``, ``status``, ``managedFields``, ``generation``. Only the create path's rules are here:
status rules apply to status updates, so a stored object's status already passed them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, Final

from schedsim.api.loading.decode import PERCENT_PROBLEM
from schedsim.api.validation.common import Problems, forbidden, invalid

__all__ = [
    "validate_daemon_set",
    "validate_deployment",
    "validate_replica_set",
    "validate_stateful_set",
]

_PERCENT: Final = re.compile(r"[0-9]+%")
_NON_NEGATIVE: Final = "must be greater than or equal to 0"


def _map(obj: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = obj.get(key)
    return value if isinstance(value, Mapping) else {}


def _int(spec: Mapping[str, Any], key: str) -> int | None:
    value = spec.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _non_negative(spec: Mapping[str, Any], key: str, path: str, out: Problems) -> None:
    """``ValidateNonnegativeField``."""
    value = _int(spec, key)
    if value is not None and value < 0:
        out.error(f"{path}.{key}", invalid(value, _NON_NEGATIVE))


def _int_or_percent(raw: object, field: str, out: Problems) -> int | None:
    """``ValidatePositiveIntOrPercent`` and ``IsNotMoreThan100Percent``'s reading; returns
    ``getIntOrPercentValue`` (None when the value is invalid)."""
    if isinstance(raw, bool) or not isinstance(raw, int | str):
        out.error(field, invalid(raw, "must be an integer or percentage (e.g '5%')"))
        return None
    if isinstance(raw, int):
        if raw < 0:
            out.error(field, invalid(raw, _NON_NEGATIVE))
            return None
        return raw
    if not _PERCENT.fullmatch(raw):  # IsValidPercent
        out.error(field, invalid(raw, PERCENT_PROBLEM))
        return None
    return int(raw[:-1])


def _at_most_100(raw: object, value: int | None, field: str, out: Problems) -> None:
    if isinstance(raw, str) and value is not None and value > 100:
        out.error(field, invalid(raw, "must not be greater than 100%"))


def _template_spec(spec: Mapping[str, Any]) -> Mapping[str, Any]:
    return _map(_map(spec, "template"), "spec")


def _no_active_deadline(spec: Mapping[str, Any], what: str, out: Problems) -> None:
    if _template_spec(spec).get("activeDeadlineSeconds") is not None:
        out.error(
            "spec.template.spec.activeDeadlineSeconds",
            forbidden(f"activeDeadlineSeconds in {what} is not Supported"),
        )


def _spec(rule: Callable[[Mapping[str, Any], Problems], None]) -> Callable[..., None]:
    def validate(obj: Mapping[str, Any], out: Problems) -> None:
        rule(_map(obj, "spec"), out)

    validate.__doc__ = rule.__doc__
    return validate


def _replica_set_spec(spec: Mapping[str, Any], out: Problems) -> None:
    """``ValidateReplicaSetSpec`` / ``ValidatePodTemplateSpecForReplicaSet``."""
    _non_negative(spec, "minReadySeconds", "spec", out)
    _no_active_deadline(spec, "ReplicaSet", out)


def _deployment_spec(spec: Mapping[str, Any], out: Problems) -> None:
    """``ValidateDeploymentSpec`` and ``ValidateDeploymentStrategy``."""
    _no_active_deadline(spec, "ReplicaSet", out)  # ValidatePodTemplateSpecForReplicaSet
    strategy = _map(spec, "strategy")
    rolling = strategy.get("rollingUpdate")
    kind = strategy.get("type") or "RollingUpdate"
    if kind == "Recreate" and rolling is not None:
        out.error(
            "spec.strategy.rollingUpdate",
            forbidden("may not be specified when strategy `type` is 'Recreate'"),
        )
    if kind == "RollingUpdate" and isinstance(rolling, Mapping):
        path = "spec.strategy.rollingUpdate"
        # absent fields are defaulted to 25% (SetDefaults_Deployment)
        raw_unavailable = rolling.get("maxUnavailable", "25%")
        raw_surge = rolling.get("maxSurge", "25%")
        unavailable = _int_or_percent(raw_unavailable, f"{path}.maxUnavailable", out)
        surge = _int_or_percent(raw_surge, f"{path}.maxSurge", out)
        if unavailable == 0 and surge == 0:
            out.error(
                f"{path}.maxUnavailable",
                invalid(raw_unavailable, "may not be 0 when `maxSurge` is 0"),
            )
        _at_most_100(raw_unavailable, unavailable, f"{path}.maxUnavailable", out)
    for key in ("minReadySeconds", "revisionHistoryLimit", "progressDeadlineSeconds"):
        _non_negative(spec, key, "spec", out)
    deadline = _int(spec, "progressDeadlineSeconds")
    if deadline is not None and deadline <= (_int(spec, "minReadySeconds") or 0):
        out.error(
            "spec.progressDeadlineSeconds",
            invalid(deadline, "must be greater than minReadySeconds"),
        )


def _stateful_set_spec(spec: Mapping[str, Any], out: Problems) -> None:
    """``ValidateStatefulSetSpec`` and ``validateRollingUpdateStatefulSet``."""
    policy = spec.get("podManagementPolicy")
    if policy is not None and policy not in ("OrderedReady", "Parallel"):  # "" is defaulted
        out.error(
            "spec.podManagementPolicy", invalid(policy, "must be 'OrderedReady' or 'Parallel'")
        )
    strategy = _map(spec, "updateStrategy")
    rolling = strategy.get("rollingUpdate")
    kind = strategy.get("type") or "RollingUpdate"
    if kind not in ("RollingUpdate", "OnDelete"):
        out.error(
            "spec.updateStrategy", invalid(dict(strategy), "must be 'RollingUpdate' or 'OnDelete'")
        )
    path = "spec.updateStrategy.rollingUpdate"
    if kind == "OnDelete" and rolling is not None:
        out.error(path, invalid(rolling, "only allowed for updateStrategy 'RollingUpdate'"))
    if kind == "RollingUpdate" and isinstance(rolling, Mapping):
        _non_negative(rolling, "partition", path, out)
        raw = rolling.get("maxUnavailable")
        if raw is not None:
            value = _int_or_percent(raw, f"{path}.maxUnavailable", out)
            if value == 0:
                out.error(f"{path}.maxUnavailable", invalid(raw, "cannot be 0"))
            _at_most_100(raw, value, f"{path}.maxUnavailable", out)
    _non_negative(spec, "minReadySeconds", "spec", out)
    _no_active_deadline(spec, "StatefulSet", out)


def _daemon_set_spec(spec: Mapping[str, Any], out: Problems) -> None:
    """``ValidateDaemonSetSpec`` and ``ValidateRollingUpdateDaemonSet``."""
    _no_active_deadline(spec, "DaemonSet", out)
    for key in ("minReadySeconds", "templateGeneration", "revisionHistoryLimit"):
        _non_negative(spec, key, "spec", out)
    strategy = _map(spec, "updateStrategy")
    rolling = strategy.get("rollingUpdate")
    if (strategy.get("type") or "RollingUpdate") != "RollingUpdate" or not isinstance(
        rolling, Mapping
    ):
        return
    path = "spec.updateStrategy.rollingUpdate"
    # absent fields are defaulted: maxUnavailable 1, maxSurge 0 (SetDefaults_DaemonSet)
    raw_unavailable = rolling.get("maxUnavailable", 1)
    raw_surge = rolling.get("maxSurge", 0)
    unavailable = _int_or_percent(raw_unavailable, f"{path}.maxUnavailable", out)
    surge = _int_or_percent(raw_surge, f"{path}.maxSurge", out)
    _at_most_100(raw_unavailable, unavailable, f"{path}.maxUnavailable", out)
    _at_most_100(raw_surge, surge, f"{path}.maxSurge", out)
    if unavailable is None or surge is None:
        return
    if unavailable and surge:
        out.error(
            f"{path}.maxSurge", invalid(raw_surge, "may not be set when maxUnavailable is non-zero")
        )
    elif not unavailable and not surge:
        out.error(f"{path}.maxUnavailable", "required: cannot be 0 when maxSurge is 0")


validate_deployment = _spec(_deployment_spec)
validate_replica_set = _spec(_replica_set_spec)
validate_stateful_set = _spec(_stateful_set_spec)
validate_daemon_set = _spec(_daemon_set_spec)
