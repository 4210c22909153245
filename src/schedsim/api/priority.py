"""Pod priority as the Priority admission plugin sets it when a pod is created.

Mirrors ``plugin/pkg/admission/priority`` (Kubernetes 1.34): a pod that names a
``priorityClassName`` gets that class's value (the built-in ``system-cluster-critical`` and
``system-node-critical`` included); a pod without one gets the value of the
``globalDefault`` class (the lowest, if several claim it) or 0. A pod naming a class that does
not exist is refused by the API server (``no PriorityClass with name X was found``): here it
is left out of the run with that message as a warning, and the other pods go on.

Pods that already carry ``spec.priority`` are stored objects (``kubectl get`` output):
admission ran when they were created, and their value is kept.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from schedsim.api.core import Pod
from schedsim.api.policy import SYSTEM_PRIORITY_CLASSES, PriorityClass

__all__ = ["admit_priorities"]


def admit_priorities(
    pods: Sequence[Pod], classes: Sequence[PriorityClass]
) -> tuple[list[Pod], list[str]]:
    """Resolve each pod's priority from its PriorityClass.

    Args:
        pods: the pods read from the input.
        classes: the input's PriorityClasses (the built-in ones need not be listed).

    Returns:
        ``(admitted, warnings)``: the pods with ``priority`` set (the same objects where
        nothing changes), in input order, without the pods naming an unknown class; one
        warning per pod left out, in admission's words.
    """
    values = dict(SYSTEM_PRIORITY_CLASSES)
    values.update({c.name: c.value for c in classes})
    defaults = [c for c in classes if c.global_default]
    default_value = min(c.value for c in defaults) if defaults else 0
    admitted: list[Pod] = []
    warnings: list[str] = []
    for pod in pods:
        if pod.priority_given:
            admitted.append(pod)
            continue
        name = pod.priority_class_name
        if not name:
            value = default_value
        elif name in values:
            value = values[name]
        else:
            warnings.append(
                f"pod {pod.key}: no PriorityClass with name {name} was found; not admitted, "
                "so not scheduled"
            )
            continue
        admitted.append(pod if value == pod.priority else attrs.evolve(pod, priority=value))
    return admitted, warnings
