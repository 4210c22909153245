"""The pods a DaemonSet creates, and the nodes it creates them for: the DaemonSet
controller's tolerations and node-name affinity (``daemon/util``) and
``NodeShouldRunDaemonPod``. Used by workload expansion (`schedsim.api.apps.controllers`) and by
scale-up's template nodes."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

import attrs

from schedsim.api.apps.controller_names import (
    CONTROLLER_REVISION_HASH_LABEL,
    compute_hash,
    pods_prefix,
)
from schedsim.api.apps.workloads import DaemonSet, default_uid
from schedsim.api.core import (
    Affinity,
    Node,
    NodeAffinity,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    Toleration,
)
from schedsim.api.core.nodeaffinity import OBJECT_NAME_FIELD, required_node_affinity
from schedsim.api.loading.defaults import default_pod, generate_name

__all__ = ["DAEMON_SET_TOLERATIONS", "daemon_set_pod", "daemon_set_should_run"]

_NOT_READY = "node.kubernetes.io/not-ready"
_UNREACHABLE = "node.kubernetes.io/unreachable"

DAEMON_SET_TOLERATIONS: Final = (
    Toleration(key=_NOT_READY, operator="Exists", effect="NoExecute"),
    Toleration(key=_UNREACHABLE, operator="Exists", effect="NoExecute"),
    Toleration(key="node.kubernetes.io/disk-pressure", operator="Exists", effect="NoSchedule"),
    Toleration(key="node.kubernetes.io/memory-pressure", operator="Exists", effect="NoSchedule"),
    Toleration(key="node.kubernetes.io/pid-pressure", operator="Exists", effect="NoSchedule"),
    Toleration(key="node.kubernetes.io/unschedulable", operator="Exists", effect="NoSchedule"),
)
"""Tolerations the DaemonSet controller adds to every pod it creates
(``daemon/util.AddOrUpdateDaemonPodTolerations``), in its order."""

_NETWORK_UNAVAILABLE = Toleration(
    key="node.kubernetes.io/network-unavailable", operator="Exists", effect="NoSchedule"
)
"""Added too for ``hostNetwork`` pods."""


def _add_or_update(
    tolerations: Sequence[Toleration], add: Iterable[Toleration]
) -> tuple[Toleration, ...]:
    """``v1helper.AddOrUpdateTolerationInPodSpec`` for each of ``add``: a toleration with the
    same key, operator, value and effect is replaced, otherwise it is appended."""
    out = list(tolerations)
    for t in add:
        for i, have in enumerate(out):
            if (have.key, have.operator, have.value, have.effect) == (
                t.key,
                t.operator,
                t.value,
                t.effect,
            ):
                out[i] = t
                break
        else:
            out.append(t)
    return tuple(out)


def _daemon_tolerations(pod: Pod, host_network: bool) -> tuple[Toleration, ...]:
    extra = (
        (*DAEMON_SET_TOLERATIONS, _NETWORK_UNAVAILABLE) if host_network else DAEMON_SET_TOLERATIONS
    )
    return _add_or_update(pod.tolerations, extra)


def _node_name_affinity(affinity: Affinity | None, node_name: str) -> Affinity:
    """``daemon/util.ReplaceDaemonSetPodNodeNameNodeAffinity``: the required node affinity
    becomes the single term ``matchFields metadata.name In [node]``; preferred terms and pod
    (anti-)affinity are kept."""
    term = NodeSelectorTerm(
        match_fields=(NodeSelectorRequirement(OBJECT_NAME_FIELD, "In", (node_name,)),)
    )
    if affinity is None:
        return Affinity(node_affinity=NodeAffinity(required=(term,)))
    preferred = affinity.node_affinity.preferred if affinity.node_affinity else ()
    return attrs.evolve(affinity, node_affinity=NodeAffinity(required=(term,), preferred=preferred))


def _host_network(ds: DaemonSet) -> bool:
    return bool(ds.template.raw.get("spec", {}).get("hostNetwork"))


def daemon_set_should_run(ds: DaemonSet, node: Node) -> bool:
    """Whether the DaemonSet controller runs a pod of ``ds`` on ``node``
    (``NodeShouldRunDaemonPod``'s ``shouldRun``): the template's ``nodeName`` (if any) is the
    node, its nodeSelector and required node affinity match the node, and the template's
    tolerations plus the controller's (`DAEMON_SET_TOLERATIONS`) tolerate every NoSchedule
    and NoExecute taint of the node. ``spec.unschedulable`` does not stop it (the
    controller's pods tolerate ``node.kubernetes.io/unschedulable``)."""
    template = ds.template.pod
    if template.node_name and template.node_name != node.name:
        return False
    if not required_node_affinity(template)(node.labels, node.name):
        return False
    tolerations = _daemon_tolerations(template, _host_network(ds))
    for taint in node.taints:
        if taint.effect not in ("NoSchedule", "NoExecute"):
            continue
        if not any(t.tolerates(taint) for t in tolerations):
            return False
    return True


def daemon_set_pod(ds: DaemonSet, node_name: str, name: str | None = None) -> Pod:
    """The pod the DaemonSet controller creates for ``node_name`` (``syncNodes`` with
    ``CreatePodTemplate`` and ``ReplaceDaemonSetPodNodeNameNodeAffinity``).

    The template's pod with: the controller's tolerations added (`DAEMON_SET_TOLERATIONS`,
    plus ``network-unavailable`` for hostNetwork pods), the required node affinity replaced by
    ``matchFields metadata.name In [node_name]``, an ownerReference to ``ds`` with
    ``controller: true``, the ``controller-revision-hash`` label, and the API server's pod
    defaults. It is pending (no ``nodeName``): the scheduler places it, as for a real
    DaemonSet.

    Args:
        ds: the DaemonSet.
        node_name: the node the pod is for.
        name: the pod's name; by default ``<ds>-<5 characters>`` derived from the DaemonSet's
            UID and ``node_name``.

    Returns:
        the pod.
    """
    template = ds.template.pod
    pod_name = name or generate_name(pods_prefix(ds.name), f"{ds.uid}/{node_name}")
    labels = {**ds.template.labels, CONTROLLER_REVISION_HASH_LABEL: compute_hash(ds.template.raw)}
    pod = attrs.evolve(
        template,
        name=pod_name,
        uid=default_uid("Pod", ds.namespace, pod_name),
        labels=labels,
        owner_references=(ds.controller_ref(),),
        tolerations=_daemon_tolerations(template, _host_network(ds)),
        affinity=_node_name_affinity(template.affinity, node_name),
    )
    return default_pod(pod)
