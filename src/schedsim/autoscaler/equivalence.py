"""Pod equivalence: pods of one controller with the same scheduling-relevant spec.

Cluster Autoscaler tries one pod of each equivalence group where it would otherwise repeat an
identical (and identically failing) scheduling attempt: the binpacking estimator works on
``PodEquivalenceGroup``s (``core/scaleup/equivalence/groups.go``) and the hinting simulator
skips pods similar to one already found unschedulable (``simulator/scheduling/similar_pods.go``).
Both compare the controller UID, the labels and the pod spec, not the pod's identity.
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from schedsim.api.core import Pod

__all__ = [
    "MAX_GROUPS_PER_CONTROLLER",
    "controller_uid",
    "group_equivalent_pods",
    "is_daemonset_pod",
    "is_mirror_pod",
    "scheduling_spec",
]

MAX_GROUPS_PER_CONTROLLER = 10
"""Distinct specs remembered per controller (CA ``maxEquivalenceGroupsByController`` and the
similar-pods limit); beyond it each further spec is a group of its own."""

MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"


def controller_uid(pod: Pod) -> str | None:
    """UID of the pod's controller ownerReference, or None (a bare pod)."""
    for ref in pod.owner_references:
        if ref.controller:
            return ref.uid
    return None


def is_daemonset_pod(pod: Pod) -> bool:
    """The pod's controller is a DaemonSet (CA ``pod_util.IsDaemonSetPod``; the
    ``cluster-autoscaler.kubernetes.io/daemonset-pod: "true"`` annotation counts too)."""
    if pod.annotations.get("cluster-autoscaler.kubernetes.io/daemonset-pod") == "true":
        return True
    return any(ref.controller and ref.kind == "DaemonSet" for ref in pod.owner_references)


def is_mirror_pod(pod: Pod) -> bool:
    """A static pod's API mirror (``kubernetes.io/config.mirror`` annotation)."""
    return MIRROR_POD_ANNOTATION in pod.annotations


def scheduling_spec(pod: Pod) -> Pod:
    """The pod with its identity cleared (name, UID, annotations, owners, timestamps, node
    binding, phase, readiness, claim statuses): two pods are equivalent when these compare equal.

    Time: O(1) (one `attrs.evolve`, ~1 µs); build it once per pod.
    """
    return attrs.evolve(
        pod,
        name="",
        uid="",
        annotations={},
        owner_references=(),
        creation_timestamp=None,
        node_name="",
        nominated_node_name="",
        phase="",
        ready=True,
        resource_claim_statuses={},
    )


def group_equivalent_pods(pods: Iterable[Pod]) -> list[list[Pod]]:
    """Group pods by controller and equal `scheduling_spec` (CA ``BuildPodGroups``).

    Pods without a controller are each a group of their own; a controller contributes at most
    `MAX_GROUPS_PER_CONTROLLER` shared groups, further distinct specs become singletons.

    Returns:
        groups in order of their first pod; pods keep their order within a group.

    Time: O(pods x groups per controller).
    """
    groups: list[list[Pod]] = []
    by_controller: dict[str, list[tuple[Pod, list[Pod]]]] = {}
    for pod in pods:
        uid = controller_uid(pod)
        if uid is None:
            groups.append([pod])
            continue
        known = by_controller.setdefault(uid, [])
        spec = scheduling_spec(pod)
        for other, group in known:
            if other == spec:
                group.append(pod)
                break
        else:
            group = [pod]
            groups.append(group)
            if len(known) < MAX_GROUPS_PER_CONTROLLER:
                known.append((spec, group))
    return groups
