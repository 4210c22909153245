"""Pod priority as the Priority admission plugin sets it when a pod is created.

Mirrors ``plugin/pkg/admission/priority`` (Kubernetes 1.34): a pod that names a
``priorityClassName`` gets that class's value (the built-in ``system-cluster-critical`` and
``system-node-critical`` included); a pod without one gets the value of the
``globalDefault`` class (the lowest, if several claim it) or 0. A pod naming a class that does
not exist is refused by the API server (``no PriorityClass with name X was found``): here it
is left out of the run with that message as a warning, and the other pods go on.

Pods that already carry ``spec.priority`` are stored objects (``kubectl get`` output):
admission ran when they were created, and their value is kept.

``spec.preemptionPolicy`` is set from the class as well (``PreemptLowerPriority`` for the
built-in classes and when no class applies); a pod that sets a different policy than its
class is refused as admission refuses it (``the string value of PreemptionPolicy (X) must not
be provided in pod spec; ...``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from schedsim.api.core import Pod
from schedsim.api.evolve import evolve
from schedsim.api.policy import SYSTEM_PRIORITY_CLASSES, PriorityClass

__all__ = ["admit_priorities", "priority_changes"]


def admit_priorities(
    pods: Sequence[Pod], classes: Sequence[PriorityClass]
) -> tuple[list[Pod], list[str]]:
    """Resolve each pod's priority from its PriorityClass: `priority_changes` applied.

    Returns:
        ``(admitted, warnings)``: the admitted pods with ``priority`` and
        ``preemption_policy`` set (the same objects where nothing changes), in input order;
        the warnings of `priority_changes`.
    """
    admitted, warnings = priority_changes(pods, classes)
    return [evolve(pod, **changes) if changes else pod for pod, changes in admitted], warnings


def priority_changes(
    pods: Sequence[Pod],
    classes: Sequence[PriorityClass],
    stored: Callable[[Pod], bool] | None = None,
) -> tuple[list[tuple[Pod, dict[str, Any]]], list[str]]:
    """What admission sets on each pod, from its PriorityClass (for callers that apply more
    changes in the same copy).

    Args:
        pods: the pods read from the input.
        classes: the input's PriorityClasses (the built-in ones need not be listed).
        stored: whether a pod was stored by an API server, so admission already ran on it
            (default: it carries ``spec.priority``). A pod a workload controller makes is
            never stored: a ``spec.priority`` its template sets must equal what admission
            computes, else the pod is refused (``the integer value of priority (N) must not
            be provided in pod spec``).

    Returns:
        ``(admitted, warnings)``: each admitted pod with the field changes admission makes
        (``priority``, ``preemption_policy``; empty when it changes nothing), in input
        order, without the pods naming an unknown class; one warning per pod left out, in
        admission's words, and one per PriorityClass marked ``globalDefault`` after the
        first (admission refuses creating it).
    """
    lower = "PreemptLowerPriority"
    values = {name: (v, lower) for name, v in SYSTEM_PRIORITY_CLASSES.items()}
    values.update({c.name: (c.value, c.preemption_policy) for c in classes})
    defaults = sorted((c for c in classes if c.global_default), key=lambda c: c.value)
    default = (defaults[0].value, defaults[0].preemption_policy) if defaults else (0, lower)
    admitted: list[tuple[Pod, dict[str, Any]]] = []
    warnings: list[str] = []
    marked = [c for c in classes if c.global_default]
    for extra in marked[1:]:  # admission refuses creating a second default class
        warnings.append(
            f"PriorityClass {extra.name}: globalDefault: PriorityClass {marked[0].name} is "
            "already marked as default. Only one default can exist; pods without a class get "
            f"the lowest default value ({default[0]}), as admission does when several exist"
        )
    for pod in pods:
        if pod.priority_given if stored is None else stored(pod):
            admitted.append((pod, {}))
            continue
        name = pod.priority_class_name
        if not name:
            value, policy = default
        elif name in values:
            value, policy = values[name]
        else:
            warnings.append(
                f"pod {pod.key}: no PriorityClass with name {name} was found; not admitted, "
                "so not scheduled"
            )
            continue
        if pod.preemption_policy and pod.preemption_policy != policy:
            warnings.append(
                f"pod {pod.key}: the string value of PreemptionPolicy ({pod.preemption_policy}) "
                "must not be provided in pod spec; priority admission controller computed "
                f"{policy} from the given PriorityClass name; not admitted, so not scheduled"
            )
            continue
        if pod.priority_given and pod.priority != value:
            # plugin/pkg/admission/priority/admission.go admitPod
            warnings.append(
                f"pod {pod.key}: the integer value of priority ({pod.priority}) must not be "
                "provided in pod spec; priority admission controller computed "
                f"{value} from the given PriorityClass name; not admitted, so not scheduled"
            )
            continue
        if value == pod.priority and policy == pod.preemption_policy and not pod.priority_given:
            admitted.append((pod, {}))
        else:
            # a template's spec.priority: the pod is now one admission ran on
            admitted.append(
                (pod, {"priority": value, "preemption_policy": policy, "priority_given": False})
            )
    return admitted, warnings
