"""Pod request arithmetic and resource-name classes.

Mirrors k8s.io/component-helpers/resource (``PodRequests``, ``AggregateContainerRequests``,
``IsPodLevelRequestsSet``) and the resource-name helpers of k8s.io/kubernetes
pkg/apis/core/v1/helper (``IsExtendedResourceName``, ``IsScalarResourceName``, ...).
All quantities are exact (`Fraction`; cores for cpu, bytes for memory).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from fractions import Fraction

from schedsim.api.core import Container, Pod, ResourceList

__all__ = [
    "DEFAULT_MEMORY_REQUEST",
    "DEFAULT_MILLI_CPU_REQUEST",
    "is_attachable_volume_resource_name",
    "is_extended_resource_name",
    "is_hugepage_resource_name",
    "is_pod_level_requests_set",
    "is_prefixed_native_resource",
    "is_scalar_resource_name",
    "is_supported_pod_level_resource",
    "pod_requests",
]

DEFAULT_MILLI_CPU_REQUEST = 100
"""Milli-CPU assumed for a container without a cpu request (scheduler util, for scoring)."""
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024
"""Bytes assumed for a container without a memory request (scheduler util, for scoring)."""

_NATIVE_PREFIX = "kubernetes.io/"
_REQUESTS_PREFIX = "requests."
# validation.IsQualifiedName: optional DNS-1123 subdomain prefix + "/" + name (<= 63 chars).
_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def is_prefixed_native_resource(name: str) -> bool:
    """``kubernetes.io/...`` and ``*.kubernetes.io/...`` names."""
    return _NATIVE_PREFIX in name


def is_native_resource(name: str) -> bool:
    """Names without a domain (cpu, memory, ...) or in the kubernetes.io domain."""
    return "/" not in name or is_prefixed_native_resource(name)


def _is_qualified_name(value: str) -> bool:
    prefix, sep, name = value.rpartition("/")
    if sep and (not prefix or len(prefix) > 253 or not _DNS_SUBDOMAIN.match(prefix)):
        return False
    return 0 < len(name) <= 63 and bool(_QUALIFIED_NAME.match(name))


def is_extended_resource_name(name: str) -> bool:
    """Domain-qualified names outside kubernetes.io, e.g. ``example.com/gpu``.

    Mirrors v1helper.IsExtendedResourceName.
    """
    if is_native_resource(name) or name.startswith(_REQUESTS_PREFIX):
        return False
    return _is_qualified_name(_REQUESTS_PREFIX + name)


def is_hugepage_resource_name(name: str) -> bool:
    """``hugepages-<size>`` names."""
    return name.startswith("hugepages-")


def is_attachable_volume_resource_name(name: str) -> bool:
    """``attachable-volumes-*`` names (legacy volume limits)."""
    return name.startswith("attachable-volumes-")


def is_scalar_resource_name(name: str) -> bool:
    """Resources the scheduler keeps in ``Resource.scalar_resources``.

    Mirrors schedutil/v1helper.IsScalarResourceName: extended, hugepages, prefixed native and
    attachable-volume resources.
    """
    return (
        is_extended_resource_name(name)
        or is_hugepage_resource_name(name)
        or is_prefixed_native_resource(name)
        or is_attachable_volume_resource_name(name)
    )


def is_supported_pod_level_resource(name: str) -> bool:
    """cpu, memory and hugepages-* can be set at pod level (PodLevelResources)."""
    return name in ("cpu", "memory") or is_hugepage_resource_name(name)


def is_pod_level_requests_set(pod: Pod) -> bool:
    """Whether spec.resources.requests sets a supported pod-level resource."""
    return any(is_supported_pod_level_resource(n) for n in pod.resources)


def _add(into: dict[str, Fraction], rl: ResourceList) -> None:
    for k, v in rl.items():
        cur = into.get(k)
        into[k] = v if cur is None else cur + v  # no Fraction(0) + v for a first value


def _max_into(into: dict[str, Fraction], rl: ResourceList) -> None:
    for k, v in rl.items():
        cur = into.get(k)
        if cur is None or v > cur:
            into[k] = v


def _container_requests(c: Container, non_missing: Mapping[str, Fraction] | None) -> ResourceList:
    if not non_missing:
        return c.requests
    out = dict(c.requests)
    for k, v in non_missing.items():
        out.setdefault(k, v)
    return out


def containers_total(
    containers: Iterable[Container],
    init_containers: Iterable[Container],
    of: Callable[[Container], ResourceList],
) -> dict[str, Fraction]:
    """Per resource, ``max(sum of containers + sidecars, for each init container: its own
    ``of(c)`` + the sidecars started before it; for each sidecar: all sidecars so far)``.

    The container aggregation of component-helpers ``resource.PodRequests`` (``of``: a
    container's requests), and of limitranger's ``podRequests`` / ``podLimits``.
    """
    total: dict[str, Fraction] = {}
    for c in containers:
        _add(total, of(c))
    sidecars: dict[str, Fraction] = {}
    init_max: dict[str, Fraction] = {}
    for c in init_containers:
        own = of(c)
        if c.is_restartable_init:
            _add(total, own)
            _add(sidecars, own)
            _max_into(init_max, sidecars)
        else:
            tmp = dict(own)
            _add(tmp, sidecars)
            _max_into(init_max, tmp)
    _max_into(total, init_max)
    return total


def request_parts(pod: Pod) -> tuple[object, ...]:
    """The fields of ``pod`` that `pod_requests` reads (containers, init containers,
    overhead, pod-level resources): the ``parts`` for `schedsim.api.parts_memo.parts_memo`
    of a value computed from the requests alone."""
    return (pod.containers, pod.init_containers, pod.overhead, pod.resources)


def pod_requests(
    pod: Pod,
    *,
    pod_level_resources: bool = True,
    non_missing_container_requests: Mapping[str, Fraction] | None = None,
    exclude_overhead: bool = False,
) -> dict[str, Fraction]:
    """The effective resource requests of a pod.

    ``max(sum of containers + sidecars, for each init container: its requests + the sidecars
    started before it; for each sidecar: all sidecars so far)``, per resource; then each
    supported pod-level request replaces the aggregate (when ``pod_level_resources``); then
    ``spec.overhead`` is added.

    Mirrors component-helpers ``resource.PodRequests`` (1.34).

    Args:
        pod: the pod.
        pod_level_resources: the PodLevelResources feature gate.
        non_missing_container_requests: defaults for containers that omit a resource
            (the scheduler passes 100m cpu / 200Mi memory to compute non-zero requests).
        exclude_overhead: leave ``spec.overhead`` out.

    Returns:
        resource name -> exact quantity (cores for cpu, bytes for memory).
    """
    nm = non_missing_container_requests
    reqs = containers_total(
        pod.containers, pod.init_containers, lambda c: _container_requests(c, nm)
    )
    if pod_level_resources and is_pod_level_requests_set(pod):
        for name, q in pod.resources.items():
            if is_supported_pod_level_resource(name):
                reqs[name] = q
    if not exclude_overhead:
        _add(reqs, pod.overhead)
    return reqs
