"""The API server's defaults that scheduling depends on, for objects read from manifests.

- Pods: the DefaultTolerationSeconds admission plugin adds
  ``node.kubernetes.io/not-ready:NoExecute`` and ``node.kubernetes.io/unreachable:NoExecute``
  tolerations (operator Exists, ``tolerationSeconds: 300``) unless the pod already tolerates
  that taint (a toleration with that key or no key, and effect NoExecute or none). The
  TaintToleration Filter counts NoExecute taints, so this decides whether a pod fits a node
  that is not ready. ``schedulerName`` (``default-scheduler``) and ``namespace``
  (``default``) are defaulted by the decoder.
- Nodes: ``status.allocatable`` defaults to ``status.capacity`` when absent (the decoder
  does it; `node_warnings` says when allocatable exceeds capacity).
- ``generateName``: `generated_name` gives a deterministic name.
"""

from __future__ import annotations

import hashlib
from typing import Any, Final

from schedsim.api.core import Node, Pod, Toleration
from schedsim.api.evolve import evolve
from schedsim.api.interning import shared
from schedsim.api.loading.decode import key_path
from schedsim.api.quantity import format_quantity

__all__ = [
    "DEFAULT_TOLERATION_SECONDS",
    "default_pod",
    "default_pod_changes",
    "generate_name",
    "node_warnings",
    "safe_encode_string",
]

DEFAULT_TOLERATION_SECONDS: Final = 300
"""``--default-not-ready-toleration-seconds`` and ``--default-unreachable-toleration-seconds``
of the API server (both default to 300)."""

_NOT_READY = "node.kubernetes.io/not-ready"
_UNREACHABLE = "node.kubernetes.io/unreachable"
_NOT_READY_TOLERATION = Toleration(
    key=_NOT_READY,
    operator="Exists",
    effect="NoExecute",
    toleration_seconds=DEFAULT_TOLERATION_SECONDS,
)
_UNREACHABLE_TOLERATION = Toleration(
    key=_UNREACHABLE,
    operator="Exists",
    effect="NoExecute",
    toleration_seconds=DEFAULT_TOLERATION_SECONDS,
)


# k8s.io/apimachinery/pkg/util/rand: the alphabet of rand.String and SafeEncodeString
# (no vowels, no 0/1/3, so generated names never spell words).
_ALPHANUMS: Final = "bcdfghjklmnpqrstvwxz2456789"
_MAX_NAME_LENGTH: Final = 63
_RANDOM_LENGTH: Final = 5
_MAX_GENERATED_BASE: Final = _MAX_NAME_LENGTH - _RANDOM_LENGTH


def safe_encode_string(s: str) -> str:
    """``rand.SafeEncodeString``: each byte of ``s`` mapped onto the no-vowel alphabet."""
    return "".join(_ALPHANUMS[b % len(_ALPHANUMS)] for b in s.encode())


def generate_name(base: str, seed: str) -> str:
    """``names.SimpleNameGenerator.GenerateName`` made deterministic: ``base`` cut to 58
    characters plus a 5-character suffix of ``rand.String``'s alphabet derived from
    ``seed`` (same seed, same name)."""
    digest = hashlib.blake2b(seed.encode(), digest_size=8).digest()
    suffix = "".join(_ALPHANUMS[b % len(_ALPHANUMS)] for b in digest[:_RANDOM_LENGTH])
    return base[:_MAX_GENERATED_BASE] + suffix


def _tolerates(tolerations: tuple[Toleration, ...], key: str) -> bool:
    return any(t.key in (key, "") and t.effect in ("NoExecute", "") for t in tolerations)


def default_pod(pod: Pod) -> Pod:
    """``pod`` with the tolerations DefaultTolerationSeconds adds (module docstring); the
    same object when it has them already (`default_pod_changes` applied)."""
    changes = default_pod_changes(pod)
    return evolve(pod, **changes) if changes else pod


def default_pod_changes(pod: Pod) -> dict[str, Any]:
    """The fields DefaultTolerationSeconds sets on ``pod`` (``tolerations``), or an empty
    dict when it has them already.

    Mirrors ``plugin/pkg/admission/defaulttolerationseconds``: not-ready first, then
    unreachable, each appended only when no toleration with that key (or an empty key) and
    effect NoExecute (or an empty effect) is there.
    """
    add = []
    if not _tolerates(pod.tolerations, _NOT_READY):
        add.append(_NOT_READY_TOLERATION)
    if not _tolerates(pod.tolerations, _UNREACHABLE):
        add.append(_UNREACHABLE_TOLERATION)
    if not add:
        return {}
    tolerations = (*pod.tolerations, *add)
    # pods of one template get one tuple (schedsim.api.interning)
    return {"tolerations": shared(("tolerations", tolerations), tolerations)}


NO_PODS_CAPACITY = (
    "status.allocatable[pods]: not set, so no pod fits this node (kube-scheduler's "
    '"Too many pods": a node admits allocatable.pods pods); kubelets always report it, '
    "110 by default"
)
"""The hint for a node without a pod count (a hand-written Node, usually)."""


def node_warnings(node: Node, has_pods: bool = True) -> list[str]:
    """``FIELD: problem`` lines for a node whose allocatable exceeds its capacity for some
    resource (the kubelet never reports that; the input is likely hand-written wrong), and,
    when the input has pods (``has_pods``), for a node without ``pods`` in allocatable
    (`NO_PODS_CAPACITY`)."""
    out = []
    if has_pods and "pods" not in node.allocatable:
        out.append(NO_PODS_CAPACITY)
    for name, alloc in node.allocatable.items():
        cap = node.capacity.get(name)
        if cap is not None and alloc > cap:
            out.append(
                f"{key_path('status.allocatable', name)}: {format_quantity(alloc)} exceeds "
                f"{key_path('status.capacity', name)} {format_quantity(cap)}; scheduling uses "
                "allocatable"
            )
    return out
