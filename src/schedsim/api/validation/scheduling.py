"""scheduling.k8s.io/v1 validation: ``ValidatePriorityClass``
(``pkg/apis/scheduling/validation``, release-1.34).

- a name with the ``system-`` prefix must be a built-in class with its value and
  ``globalDefault: false`` (``IsKnownSystemPriorityClass``); the error is on
  ``metadata.name``: "priority class names with 'system-' prefix are reserved for system use
  only. error: ..." with the reason (``value of system-node-critical PriorityClass must be
  2000001000``, ``globalDefault of ... must be false``, ``system-x is not a known system
  priority class``);
- any other class's value is at most ``HighestUserDefinablePriority`` (1000000000);
- ``preemptionPolicy`` (``ValidatePreemptionPolicy``): ``PreemptLowerPriority`` or ``Never``;
  an explicit ``""`` is required (an absent one is defaulted to PreemptLowerPriority).

Decoding (`schedsim.api.policy.PriorityClass`) requires ``value`` and checks its int32 width.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from schedsim.api.policy import HIGHEST_USER_DEFINABLE_PRIORITY, SYSTEM_PRIORITY_CLASSES
from schedsim.api.validation.common import Problems, forbidden, not_supported

__all__ = ["validate_preemption_policy", "validate_priority_class"]


def _system_class_problem(name: str, value: object, global_default: object) -> str | None:
    """``IsKnownSystemPriorityClass``'s error, or None for a built-in class as it is."""
    if name not in SYSTEM_PRIORITY_CLASSES:
        return f"{name} is not a known system priority class"
    want = SYSTEM_PRIORITY_CLASSES[name]
    if value != want:
        return f"value of {name} PriorityClass must be {want}"
    if global_default is True:
        return f"globalDefault of {name} PriorityClass must be false"
    return None


def validate_preemption_policy(raw: Mapping[str, Any], field: str, out: Problems) -> None:
    """``ValidatePreemptionPolicy`` on ``raw["preemptionPolicy"]`` (absent: defaulted)."""
    policy = raw.get("preemptionPolicy")
    if policy is None or policy in ("PreemptLowerPriority", "Never"):
        return
    if policy == "":
        out.error(field, "required")
    else:
        out.error(field, not_supported(policy, ("PreemptLowerPriority", "Never")))


def validate_priority_class(obj: Mapping[str, Any], out: Problems) -> None:
    """Record ``ValidatePriorityClass``'s errors for ``obj`` (a decoded PriorityClass) in
    ``out`` (see the module docstring)."""
    meta = obj.get("metadata")
    name = meta.get("name") if isinstance(meta, Mapping) else None
    value = obj.get("value")
    if isinstance(name, str) and name.startswith("system-"):
        problem = _system_class_problem(name, value, obj.get("globalDefault"))
        if problem is not None:
            out.error(
                "metadata.name",
                forbidden(
                    "priority class names with 'system-' prefix are reserved for system use "
                    f"only. error: {problem}"
                ),
            )
    elif isinstance(value, int) and value > HIGHEST_USER_DEFINABLE_PRIORITY:
        out.error(
            "value",
            forbidden(
                "maximum allowed value of a user defined priority is "
                f"{HIGHEST_USER_DEFINABLE_PRIORITY}"
            ),
        )
    validate_preemption_policy(obj, "preemptionPolicy", out)
