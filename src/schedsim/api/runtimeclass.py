"""node.k8s.io/v1 RuntimeClass and what the RuntimeClass admission plugin does to a pod that
names one.

Mirrors ``plugin/pkg/admission/runtimeclass`` (Kubernetes 1.34), run when a pod is created:

- a pod whose ``spec.runtimeClassName`` names no RuntimeClass is refused: ``pod rejected:
  RuntimeClass "X" not found``;
- ``overhead.podFixed`` becomes the pod's ``spec.overhead``; a pod that already has an
  overhead other than the class's is refused (``pod rejected: Pod's Overhead doesn't match
  RuntimeClass's defined Overhead``), and so is a pod with an overhead whose class defines
  none (``pod rejected: Pod Overhead set without corresponding RuntimeClass defined
  Overhead``). The API server refuses an overhead on a pod that names no class too: schedsim
  reads that one as given, deliberately, so that an overhead can be modelled without a
  RuntimeClass (kube-scheduler's own tests build such pods);
- ``scheduling.nodeSelector`` is merged into the pod's ``nodeSelector`` (a key the pod sets to
  another value is refused: ``conflict: runtimeClass.scheduling.nodeSelector[K] = V;
  pod.spec.nodeSelector[K] = W``) and ``scheduling.tolerations`` are merged into the pod's
  (``tolerations.MergeTolerations``: a toleration another one covers is dropped).

kube-scheduler counts ``spec.overhead`` in the pod's requests (NodeResourcesFit, the
``resource.PodRequests`` helper), so the overhead decides where the pod fits. Which pods this
applies to, and what a refusal does, is `schedsim.api.loading.admission`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from schedsim.api.core import Pod, Toleration
from schedsim.api.errors import FieldError
from schedsim.api.interning import shared, shared_map
from schedsim.api.loading import decode as d
from schedsim.api.meta import ResourceList

__all__ = ["RuntimeClass", "merge_tolerations", "runtime_class_changes"]


@attrs.frozen
class RuntimeClass:
    """A node.k8s.io/v1 RuntimeClass (cluster-scoped).

    Attributes:
        name: metadata.name (what a pod's ``runtimeClassName`` names).
        handler: the CRI handler (a DNS label; required).
        overhead: ``overhead.podFixed``; None when the class has no ``overhead``.
        scheduling: whether ``scheduling`` is set (then its selector and tolerations merge
            into the pod, even when both are empty).
        node_selector: ``scheduling.nodeSelector``.
        tolerations: ``scheduling.tolerations``.
    """

    name: str
    handler: str
    overhead: ResourceList | None = None
    scheduling: bool = False
    node_selector: Mapping[str, str] = attrs.field(factory=dict)
    tolerations: tuple[Toleration, ...] = ()

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any]) -> RuntimeClass:
        """Decode a RuntimeClass; the API server's other rules (names, resource names,
        selector labels, tolerations) are `schedsim.api.validation`'s.

        Raises:
            FieldError: naming the field (``handler`` required and a DNS label, as
                ``ValidateRuntimeClass`` has it).
        """
        d.check_api_version(raw, "RuntimeClass", ("node.k8s.io/v1",))
        meta = d.get_map(raw, "metadata", "")
        name = d.get_str(meta, "name", "metadata")
        if not name:
            raise FieldError("metadata.name", "required")
        handler = d.get_str(raw, "handler", "")
        if not handler:
            raise FieldError("handler", "required")
        d.check_dns1123_label(handler, "handler")
        overhead = None
        if raw.get("overhead") is not None:
            oh = d.get_map(raw, "overhead", "")
            overhead = shared_map(d.get_resource_list(oh, "podFixed", "overhead"))
        sched = raw.get("scheduling")
        node_selector: Mapping[str, str] = {}
        tolerations: tuple[Toleration, ...] = ()
        if sched is not None:
            s = d.get_map(raw, "scheduling", "")
            node_selector = shared_map(d.get_str_map(s, "nodeSelector", "scheduling"))
            items = d.get_list(s, "tolerations", "scheduling")
            tolerations = tuple(
                Toleration.from_manifest(
                    d.get_mapping_item(items, i, "scheduling.tolerations"),
                    f"scheduling.tolerations[{i}]",
                )
                for i in range(len(items))
            )
        return cls(
            name=name,
            handler=handler,
            overhead=overhead,
            scheduling=sched is not None,
            node_selector=node_selector,
            tolerations=tolerations,
        )


def _is_superset(ss: Toleration, t: Toleration) -> bool:
    """``isSuperset`` (pkg/util/tolerations): whether ``ss`` tolerates every taint ``t``
    does."""
    if t == ss:
        return True
    if t.key != ss.key and (ss.key != "" or ss.operator != "Exists"):
        return False
    if t.effect != ss.effect and ss.effect != "":
        return False
    if ss.effect == "NoExecute" and ss.toleration_seconds is not None:
        if t.toleration_seconds is None or t.toleration_seconds > ss.toleration_seconds:
            return False
    if ss.operator == "Exists":
        return True
    return t.operator == "Equal" and t.value == ss.value


def merge_tolerations(
    first: Sequence[Toleration], second: Sequence[Toleration]
) -> tuple[Toleration, ...]:
    """``tolerations.MergeTolerations``: ``first`` then ``second``, without the tolerations
    another one covers (of equal ones, the first is kept)."""
    everything = (*first, *second)
    merged: list[Toleration] = []
    for i, t in enumerate(everything):
        if any(_is_superset(t2, t) for t2 in merged):
            continue
        if any(t2 != t and _is_superset(t2, t) for t2 in everything[i + 1 :]):
            continue
        merged.append(t)
    return tuple(merged)


def runtime_class_changes(
    pod: Pod, classes: Mapping[str, RuntimeClass]
) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """What the RuntimeClass admission plugin sets on ``pod`` (at create), and why it would
    refuse it.

    Args:
        pod: the pod as created (its ``runtimeClassName``, ``overhead``, ``nodeSelector``,
            ``tolerations``).
        classes: the input's RuntimeClasses by name.

    Returns:
        ``(changes, problems)``: the fields to set (``overhead``, ``node_selector``,
        ``tolerations``; empty when nothing changes) and ``(field, message)`` pairs in
        admission's words, one per refusal reason (then ``changes`` is empty).
    """
    name = pod.runtime_class_name
    if not name:  # an overhead without a class: read as given (module docstring)
        return {}, []
    rc = classes.get(name)
    if rc is None:
        return {}, [("spec.runtimeClassName", f'pod rejected: RuntimeClass "{name}" not found')]
    changes: dict[str, Any] = {}
    if rc.overhead is not None:
        if pod.overhead and dict(pod.overhead) != dict(rc.overhead):
            return {}, [
                (
                    "spec.overhead",
                    "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead",
                )
            ]
        if not pod.overhead and rc.overhead:
            changes["overhead"] = rc.overhead
    elif pod.overhead:
        return {}, [
            (
                "spec.overhead",
                "pod rejected: Pod Overhead set without corresponding RuntimeClass defined "
                "Overhead",
            )
        ]
    if rc.scheduling:
        selector = dict(pod.node_selector)
        for key, value in rc.node_selector.items():
            have = selector.get(key)
            if have is not None and have != value:
                return {}, [
                    (
                        f"spec.nodeSelector[{key}]",
                        f"conflict: runtimeClass.scheduling.nodeSelector[{key}] = {value}; "
                        f"pod.spec.nodeSelector[{key}] = {have}",
                    )
                ]
            selector[key] = value
        if selector != dict(pod.node_selector):
            changes["node_selector"] = shared_map(selector)
        tolerations = merge_tolerations(pod.tolerations, rc.tolerations)
        if tolerations != pod.tolerations:
            changes["tolerations"] = shared(("tolerations", tolerations), tolerations)
    return changes, []
