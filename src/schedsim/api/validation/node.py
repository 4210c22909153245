"""Node validation as the API server does it, for the fields the scheduler reads.

Mirrors ``ValidateNode`` of ``pkg/apis/core/validation`` (Kubernetes 1.34): the name is a
DNS subdomain (``ValidateNodeName``), labels and annotations as for every object,
``validateNodeTaints`` (a qualified key, a label value, a known effect, unique by key and
effect) and the capacity and allocatable quantities (``ValidateResourceQuantityValue``:
integers for extended resources).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from schedsim.api.loading.decode import key_path
from schedsim.api.validation.common import (
    Problems,
    invalid,
    label_value_problem,
    validate_object_meta,
    validate_qualified_name,
    validate_resource_quantity,
)

__all__ = ["validate_node"]


def validate_node(obj: Mapping[str, Any], out: Problems) -> None:
    """Validate a Node (see the module docstring); problems go to ``out``."""
    validate_object_meta(obj, False, "subdomain", out)
    spec = obj.get("spec")
    if isinstance(spec, Mapping) and isinstance(spec.get("taints"), list):
        _taints(spec["taints"], out)
    status = obj.get("status")
    if isinstance(status, Mapping):
        for key in ("capacity", "allocatable"):
            resources = status.get(key)
            if isinstance(resources, Mapping):
                for name, raw in resources.items():
                    validate_resource_quantity(
                        str(name), raw, key_path(f"status.{key}", str(name)), out
                    )


def _taints(items: list[Any], out: Problems) -> None:
    """validateNodeTaints (the effect itself is checked by the decoder)."""
    seen: set[tuple[str, str]] = set()
    for i, t in enumerate(items):
        if not isinstance(t, Mapping):
            continue
        path = f"spec.taints[{i}]"
        key, value, effect = t.get("key") or "", t.get("value") or "", t.get("effect") or ""
        if not isinstance(key, str) or not isinstance(value, str):
            continue
        validate_qualified_name(key, f"{path}.key", out)
        problem = label_value_problem(value)
        if problem is not None:
            out.error(f"{path}.value", invalid(value, problem))
        if (key, effect) in seen:
            out.error(
                path,
                f"duplicate value {key}:{effect}: taints must be unique by key and effect pair",
            )
        seen.add((key, effect))
