"""What PodTopologySpread and InterPodAffinity read besides NodeInfos: the cluster's
Namespaces (with their labels), Services, ReplicationControllers, ReplicaSets and StatefulSets.

kube-scheduler gives these plugins informer listers (``Namespaces()``, ``Services(ns)``,
``ReplicationControllers(ns)``, ``ReplicaSets(ns)``, ``StatefulSets(ns)``): InterPodAffinity
turns a term's ``namespaceSelector`` into namespace names and reads the incoming pod's
namespace labels; PodTopologySpread builds the default spreading selector from the Services
that select a pod and from its controlling ReplicationController, ReplicaSet or StatefulSet.
schedsim holds the objects read from the input in `ObjectListers` (they do not change during a
simulation, like an informer cache between events) on `Handle.object_listers`.

The listers only need a few fields of each object; the Protocols below name them. The api's
typed objects (`schedsim.api.policy.Namespace` and ``Service``, `schedsim.api.apps.workloads`'
``ReplicationController``, ``ReplicaSet`` and ``StatefulSet``, on the loaded `Manifests`)
satisfy them; `ObjectListers.from_manifests` indexes them.
These are Protocols: implementations don't inherit from them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

import attrs

from schedsim.api.labels import LabelSelector
from schedsim.api.loading.loader import Manifests
from schedsim.api.policy import PodDisruptionBudget

__all__ = [
    "LabelSelectorWorkload",
    "NamespaceObject",
    "ObjectListers",
    "ServiceObject",
]


class NamespaceObject(Protocol):
    """A Namespace: its name and labels."""

    @property
    def name(self) -> str: ...

    @property
    def labels(self) -> Mapping[str, str]: ...


class ServiceObject(Protocol):
    """A Service: where it is and ``spec.selector`` (None: unset, selects nothing)."""

    @property
    def namespace(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def selector(self) -> Mapping[str, str] | None: ...


class LabelSelectorWorkload(Protocol):
    """A ReplicationController, ReplicaSet or StatefulSet (`schedsim.api.apps.workloads`):
    ``spec.selector`` as a LabelSelector (None: unset); a ReplicationController's plain label
    map is its ``match_labels``."""

    @property
    def namespace(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def selector(self) -> LabelSelector | None: ...


def _by_key(
    objs: Iterable[ServiceObject | LabelSelectorWorkload],
    kind: str,
) -> dict[tuple[str, str], object]:
    out: dict[tuple[str, str], object] = {}
    for o in objs:
        key = (o.namespace, o.name)
        if key in out:
            raise ValueError(f"{kind} {o.namespace}/{o.name} given twice")
        out[key] = o
    return out


@attrs.frozen
class ObjectListers:
    """The cluster's Namespaces, Services, ReplicationControllers, ReplicaSets and
    StatefulSets, indexed the way the plugins' informer listers look them up. Empty by
    default (a cluster without them: no namespace labels, no default spreading selector).

    Attributes:
        namespaces: name -> Namespace.
        services: namespace -> the Services in it, in input order.
        replication_controllers: (namespace, name) -> ReplicationController.
        replica_sets: (namespace, name) -> ReplicaSet.
        stateful_sets: (namespace, name) -> StatefulSet.
        pod_disruption_budgets: the PodDisruptionBudgets (policy/v1), in input order, with
            ``disruptions_allowed`` resolved (what DefaultPreemption lists).
    """

    namespaces: Mapping[str, NamespaceObject] = attrs.field(factory=dict)
    services: Mapping[str, Sequence[ServiceObject]] = attrs.field(factory=dict)
    replication_controllers: Mapping[tuple[str, str], LabelSelectorWorkload] = attrs.field(
        factory=dict
    )
    replica_sets: Mapping[tuple[str, str], LabelSelectorWorkload] = attrs.field(factory=dict)
    stateful_sets: Mapping[tuple[str, str], LabelSelectorWorkload] = attrs.field(factory=dict)
    pod_disruption_budgets: Sequence[PodDisruptionBudget] = ()

    @classmethod
    def from_objects(
        cls,
        namespaces: Iterable[NamespaceObject] = (),
        services: Iterable[ServiceObject] = (),
        replication_controllers: Iterable[LabelSelectorWorkload] = (),
        replica_sets: Iterable[LabelSelectorWorkload] = (),
        stateful_sets: Iterable[LabelSelectorWorkload] = (),
        pod_disruption_budgets: Iterable[PodDisruptionBudget] = (),
    ) -> ObjectListers:
        """Index the given objects.

        Raises:
            ValueError: two objects of one kind share a name (within a namespace for the
                namespaced kinds).

        Time: O(objects).
        """
        ns: dict[str, NamespaceObject] = {}
        for n in namespaces:
            if n.name in ns:
                raise ValueError(f"Namespace {n.name} given twice")
            ns[n.name] = n
        svc_list = list(services)
        _by_key(svc_list, "Service")
        by_ns: dict[str, list[ServiceObject]] = {}
        for s in svc_list:
            by_ns.setdefault(s.namespace, []).append(s)
        rcs = list(replication_controllers)
        rss = list(replica_sets)
        sss = list(stateful_sets)
        _by_key(rcs, "ReplicationController")
        _by_key(rss, "ReplicaSet")
        _by_key(sss, "StatefulSet")
        return cls(
            ns,
            {k: tuple(v) for k, v in by_ns.items()},
            {(o.namespace, o.name): o for o in rcs},
            {(o.namespace, o.name): o for o in rss},
            {(o.namespace, o.name): o for o in sss},
            tuple(pod_disruption_budgets),
        )

    @classmethod
    def from_manifests(cls, manifests: Manifests) -> ObjectListers:
        """Index the Namespaces, Services, ReplicationControllers, ReplicaSets,
        StatefulSets and PodDisruptionBudgets (allowed disruptions resolved against the
        manifests' pods) of loaded `Manifests`; raises ValueError like `from_objects`."""
        return cls.from_objects(
            manifests.namespaces,
            manifests.services,
            manifests.replication_controllers,
            manifests.replica_sets,
            manifests.stateful_sets,
            [
                b.resolve_disruptions_allowed(manifests.pods)
                for b in manifests.pod_disruption_budgets
            ],
        )

    def namespace_labels(self, name: str) -> Mapping[str, str] | None:
        """The labels of Namespace ``name``, None when it is not known
        (``GetNamespaceLabelsSnapshot`` upstream)."""
        ns = self.namespaces.get(name)
        return None if ns is None else ns.labels

    def namespaces_matching(self, selector: LabelSelector) -> list[str]:
        """Names of the Namespaces whose labels ``selector`` matches (``Namespaces().List``)."""
        return [n for n, ns in self.namespaces.items() if selector.matches(ns.labels)]

    def services_in(self, namespace: str) -> Sequence[ServiceObject]:
        """The Services of ``namespace`` (``Services(ns).List(Everything)``)."""
        return self.services.get(namespace, ())

    def replication_controller(self, namespace: str, name: str) -> LabelSelectorWorkload | None:
        """ReplicationController ``namespace/name``, or None."""
        return self.replication_controllers.get((namespace, name))

    def replica_set(self, namespace: str, name: str) -> LabelSelectorWorkload | None:
        """ReplicaSet ``namespace/name``, or None."""
        return self.replica_sets.get((namespace, name))

    def stateful_set(self, namespace: str, name: str) -> LabelSelectorWorkload | None:
        """StatefulSet ``namespace/name``, or None."""
        return self.stateful_sets.get((namespace, name))
