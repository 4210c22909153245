"""The LimitRanger and RuntimeClass admission plugins, applied to the pods read from manifests
(`schedsim.api.core.limitrange`, `schedsim.api.runtimeclass`).

Which pods: those the input creates. A Pod object of the input that carries ``spec.priority``
was stored by an API server (the Priority admission plugin always sets it: ``kubectl get -o
yaml`` output, a cluster read with ``--kubeconfig``): admission already ran on it, its
``spec.overhead``, resources, node selector and tolerations are what it got then, and it is
read as given, even where a LimitRange or RuntimeClass of the input would now set more (one
created after the pod does not change it in a cluster either). Every other pod, hand-written
or made by a workload controller, is admitted as the API server admits it at create, in the
plugins' order: LimitRanger first, then (after Priority and DefaultTolerationSeconds)
RuntimeClass. A controller's pods always are, even when the template sets ``spec.priority``
(the controller creates them; the Priority plugin then checks that value). Admission only
fills what the pod leaves unset, so a field the pod sets is kept.

What a refusal does (the API server would not create the pod):

- a pending pod of the input: an error, ``FILE: Pod NS/NAME: FIELD: message`` in admission's
  words and then how to go on (``(fix the pod's resources, or the LimitRange of its
  namespace)``, ``(add the RuntimeClass to the input, or remove spec.runtimeClassName)``),
  every such line in one `ManifestError` (exit 2), as for the API server's other refusals;
- a pod a workload controller would create: left out with a warning (``...; not admitted,
  so not scheduled``): the controller's create fails in a cluster too (``FailedCreate``). A
  RuntimeClass the input lacks is the exception: the pods are kept, without the class's
  overhead and scheduling, with a warning naming it (a dump often leaves cluster-scoped
  RuntimeClasses out while its Deployments name them);
- a pod the input has bound or running: kept, with a warning; schedsim never refuses a pod
  that is already placed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from schedsim.api.core import Pod
from schedsim.api.core.limitrange import LIMIT_RANGER_ANNOTATION, LimitRange, limit_range_changes
from schedsim.api.errors import ManifestError, first_few
from schedsim.api.evolve import evolve
from schedsim.api.interning import shared_map
from schedsim.api.runtimeclass import RuntimeClass, runtime_class_changes
from schedsim.api.validation import MAX_REPORTED

__all__ = ["PodAdmission"]

_Problems = list[tuple[str, str]]

# what an input pod's refusal error adds: how to go on
_LIMIT_RANGE_HINT = "(fix the pod's resources, or the LimitRange of its namespace)"
_MISSING_CLASS_HINT = "(add the RuntimeClass to the input, or remove spec.runtimeClassName)"
_RUNTIME_CLASS_HINT = "(make the pod agree with its RuntimeClass, or change the RuntimeClass)"


def is_placed(pod: Pod) -> bool:
    """Bound to a node, or past Pending (running, or finished)."""
    return bool(pod.node_name) or pod.phase not in ("", "Pending")


class PodAdmission:
    """LimitRanger and RuntimeClass for the pods of one load, and what their refusals do
    (module docstring).

    Args:
        limit_ranges: the input's LimitRanges (applied per namespace, in input order).
        runtime_classes: the input's RuntimeClasses.
        source_of: the file each pod came from (a controller's pods: the controller's).
    """

    def __init__(
        self,
        limit_ranges: Sequence[LimitRange],
        runtime_classes: Sequence[RuntimeClass],
        source_of: Callable[[Pod], str],
    ) -> None:
        self._ranges: dict[str, list[LimitRange]] = {}
        for lr in limit_ranges:
            self._ranges.setdefault(lr.namespace, []).append(lr)
        self._classes = {rc.name: rc for rc in runtime_classes}
        self._source_of = source_of
        # (containers, init containers, namespace) -> LimitRanger's result; pods of one
        # template share their container tuples, so they share the admitted ones too
        self._memo: dict[tuple[int, int, str], tuple[Any, ...]] = {}
        self._errors: list[str] = []
        self._warnings: list[str] = []
        # (source, field, message, suffix) -> pod keys: a controller's pods in one line
        self._grouped: dict[tuple[str, str, str, str], list[str]] = {}

    def limit_ranger(self, pod: Pod, from_input: bool) -> Pod | None:
        """``pod`` as LimitRanger admits it; None when it is refused and left out.

        Args:
            pod: a pod read (``from_input``) or made by a workload controller.
            from_input: the pod is in the input (not made by a controller).
        """
        if from_input and pod.priority_given:
            return pod
        ranges = self._ranges.get(pod.namespace)
        if not ranges:
            return pod
        key = (id(pod.containers), id(pod.init_containers), pod.namespace)
        found = self._memo.get(key)
        if found is None:
            changes, problems = limit_range_changes(pod.containers, pod.init_containers, ranges)
            # the tuples are kept with the result: their ids stay theirs while it is stored
            found = (pod.containers, pod.init_containers, changes, problems)
            self._memo[key] = found
        changes, problems = dict(found[2]), found[3]
        note = changes.pop("limit_ranger_note", None)
        if note is not None and pod.annotations.get(LIMIT_RANGER_ANNOTATION) != note:
            changes["annotations"] = shared_map({**pod.annotations, LIMIT_RANGER_ANNOTATION: note})
        if problems and not self._keep(
            pod, problems, from_input, class_missing=False, hint=_LIMIT_RANGE_HINT
        ):
            return None
        return evolve(pod, **changes) if changes else pod

    def runtime_class(self, pod: Pod, from_input: bool) -> Pod | None:
        """``pod`` as the RuntimeClass plugin admits it; None when it is refused and left
        out (arguments as for `limit_ranger`)."""
        if (from_input and pod.priority_given) or not pod.runtime_class_name:
            return pod
        changes, problems = runtime_class_changes(pod, self._classes)
        if problems:
            missing = pod.runtime_class_name not in self._classes
            hint = _MISSING_CLASS_HINT if missing else _RUNTIME_CLASS_HINT
            if not self._keep(pod, problems, from_input, class_missing=missing, hint=hint):
                return None
        return evolve(pod, **changes) if changes else pod

    def _keep(
        self, pod: Pod, problems: _Problems, from_input: bool, class_missing: bool, hint: str
    ) -> bool:
        """Record a refusal; whether the pod stays in the run (``hint``: how to go on, for
        an input pod's error)."""
        source = self._source_of(pod)
        if is_placed(pod):
            self._warnings.extend(
                f"{source}: Pod {pod.key}: {f}: {m}; the API server refuses creating such a "
                "pod: kept as given, it is already placed"
                for f, m in problems
            )
            return True
        if from_input:
            self._errors.extend(f"{source}: Pod {pod.key}: {f}: {m} {hint}" for f, m in problems)
            return False
        if class_missing:
            suffix = (
                "; simulated without the RuntimeClass's overhead and scheduling (add the "
                "RuntimeClass to the input)"
            )
        else:
            suffix = "; not admitted, so not scheduled"
        for f, m in problems:
            self._grouped.setdefault((source, f, m, suffix), []).append(pod.key)
        return class_missing

    def finish(self) -> list[str]:
        """The warning lines, once every pod is admitted.

        Raises:
            ManifestError: pending pods of the input that admission refuses, one line per
                problem (at most `MAX_REPORTED`, then a count).
        """
        errors = self._errors
        if errors:
            shown = errors[:MAX_REPORTED]
            if len(errors) > MAX_REPORTED:
                shown.append(f"{len(errors) - MAX_REPORTED} more problem(s) not shown")
            raise ManifestError("\n".join(shown))
        out = list(self._warnings)
        for (source, f, m, suffix), keys in self._grouped.items():
            pods = f"Pod {keys[0]}" if len(keys) == 1 else f"{len(keys)} pods ({first_few(keys)})"
            out.append(f"{source}: {pods}: {f}: {m}{suffix}")
        return out
