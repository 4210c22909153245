"""`Engine`: runs the simulations on a `Cluster` with one `EngineConfig`.

The library entry point the commands, replay and sweeps share (pytest's ``main`` / ``_main``
split: the console script is a thin layer over it). The Framework is built once per Engine;
each run builds fresh per-run state from the Cluster (store, DRA/CSI snapshots), binds it to
the framework while plugins run and unbinds it afterwards, so runs never leak into each other
and the Cluster is never modified.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

import attrs

from schedsim.api.core import Pod
from schedsim.autoscaler.expendable import (
    DEFAULT_EXPENDABLE_PODS_PRIORITY_CUTOFF,
    expendable_warnings,
    split_expendable,
)
from schedsim.autoscaler.nodegroups import NodeGroup
from schedsim.autoscaler.scaledown import (
    DEFAULT_GPU_UTILIZATION_THRESHOLD,
    DEFAULT_UTILIZATION_THRESHOLD,
    ScaleDownResult,
    scale_down,
)
from schedsim.autoscaler.scaleup import (
    DEFAULT_MAX_NODES_PER_SCALE_UP,
    ProgressCallback,
    ScaleUpResult,
    scale_up,
)
from schedsim.engine.cluster import Cluster
from schedsim.engine.config import EngineConfig
from schedsim.framework.runtime import Framework, PluginTimings
from schedsim.scheduler import node_tree_order
from schedsim.scheduler.scheduling import QueueOptions, SimulationResult, simulate
from schedsim.snapshot.predicate import PredicateSnapshot

__all__ = ["Engine"]


class Engine:
    """Simulations of one scheduler configuration.

    .. code-block:: python

        engine = Engine(EngineConfig(feature_gates={"DRAPrioritizedList": True}))
        result = engine.simulate(Cluster.from_paths(["cluster.yaml"]))

    Args:
        config: how to build the framework (default: kube-scheduler's default profile, 1.34
            gates, delta store).
        timings: when given, every plugin call is timed into it (``--profile-plugins``).

    Raises:
        PluginError: the profile's plugins cannot be built.

    Attributes:
        config: the config.
        frameworks: one Framework per profile, by schedulerName (`EngineConfig.frameworks`),
            built once; runs bind their snapshot to them.
        framework: the first profile's (what scale-up and scale-down use, as the Cluster
            Autoscaler runs one profile).
    """

    def __init__(
        self, config: EngineConfig | None = None, *, timings: PluginTimings | None = None
    ) -> None:
        self.config = config if config is not None else EngineConfig()
        self.frameworks: dict[str, Framework] = self.config.frameworks(timings)
        self.framework: Framework = next(iter(self.frameworks.values()))
        self._checked: Cluster | None = None

    def check(self, cluster: Cluster) -> None:
        """Refuse what the API server would refuse and loading alone cannot see (CEL selectors
        that do not compile under this config's gates, see `Cluster.check`), and point the
        framework's ``handle.object_listers`` at the cluster's Namespaces, Services and
        controllers. Every run calls it; a cluster checked last is not checked again.

        Raises:
            ManifestError: ``FILE: KIND NS/NAME: ...selectors[k].cel.expression: problem``.
        """
        if cluster is self._checked:
            return
        gates = self.framework.handle.feature_gates
        cluster.check(consumable_capacity=gates.enabled("DRAConsumableCapacity"))
        # the cluster's Namespaces, Services and controllers, which PodTopologySpread and
        # InterPodAffinity read like informer caches (they do not change during a run); this
        # engine's own framework reads the cluster it runs last
        listers = cluster.object_listers()
        for fw in self.frameworks.values():
            fw.handle.object_listers = listers
        self._checked = cluster

    def snapshot(
        self,
        cluster: Cluster,
        *,
        skip_unschedulable_nodes: bool = True,
        pods: Sequence[Pod] | None = None,
        node_tree: bool = False,
        place_nominated: bool = True,
    ) -> tuple[PredicateSnapshot, list[Pod]]:
        """A ready snapshot of ``cluster`` on this engine's framework and store kind (see
        `Cluster.snapshot`; ``pods`` replaces the cluster's pods as the source of running
        pods), for callers that drive it themselves. ``node_tree``: the snapshot lists the
        nodes in kube-scheduler's node-tree order (zone by zone, `node_tree_order`) instead of
        input order, for kube-scheduler placement; the Cluster Autoscaler's first fit keeps
        input order. ``place_nominated``: see `Cluster.snapshot` (False for kube-scheduler
        placement, where a pod with only ``status.nominatedNodeName`` is pending).

        Raises:
            ManifestError: a CEL selector does not compile.
            DraSnapshotError, ValueError: as `Cluster.snapshot`.
        """
        self.check(cluster)
        return cluster.snapshot(
            self.framework,
            self.config.new_store(),
            skip_unschedulable_nodes=skip_unschedulable_nodes,
            pods=pods,
            nodes=node_tree_order(cluster.nodes) if node_tree else None,
            place_nominated=place_nominated,
        )

    def _non_expendable(self, cluster: Cluster, cutoff: int) -> tuple[list[Pod], list[str]]:
        """The cluster's pods without the expendable ones, and what to tell about those."""
        pods, expendable = split_expendable(cluster.pods, cutoff)
        return pods, expendable_warnings(expendable, cutoff)

    def simulate(
        self,
        cluster: Cluster,
        *,
        placement: str = "kube-scheduler",
        seed: int | None = None,
        explain: Callable[[Pod], bool] | None = None,
        progress: Callable[[int, int, int], None] | None = None,
    ) -> SimulationResult:
        """Place the bound pods, then schedule the pending ones (see
        `schedsim.simulation.simulate`: ``placement`` ``"kube-scheduler"`` or
        ``"first-fit"``, ``seed`` for seeded tie-breaking, ``explain`` choosing the pods that
        get per node and per plugin results, ``progress`` called after each attempt with
        (pods attempted, pods bound, pending pods)).

        Raises:
            ManifestError: a CEL selector does not compile.
            DraSnapshotError: the DRA objects are inconsistent or a bound pod's claim is
                missing.
            ValueError: two storage objects of one kind share a name, or an unknown
                ``placement``.
            SchedulingError: a plugin failed outside PreFilter/Filter.
        """
        # kube-scheduler leaves cordoned nodes to the NodeUnschedulable plugin, walks its
        # node tree's order and schedules a pod that is only nominated (status.nominatedNodeName)
        # like any pending pod; CA's first fit places nominated pods on their node
        ks = placement == "kube-scheduler"
        snapshot, _ = self.snapshot(
            cluster, skip_unschedulable_nodes=False, node_tree=ks, place_nominated=not ks
        )
        others = {name: fw for name, fw in self.frameworks.items() if fw is not self.framework}
        sc = self.config.scheduler_config
        options = QueueOptions()
        if sc is not None:
            options = QueueOptions(sc.pod_initial_backoff_seconds, sc.pod_max_backoff_seconds)
        return simulate(
            snapshot,
            cluster.pods,
            resource_claim_templates=cluster.resource_claim_templates,
            placement=placement,
            seed=seed,
            explain=explain,
            other_profiles=others,
            queue_options=options,
            progress=progress,
        )

    def scale_up(
        self,
        cluster: Cluster,
        node_groups: Sequence[NodeGroup],
        *,
        expander: str = "least-waste",
        max_nodes_per_scale_up: int = DEFAULT_MAX_NODES_PER_SCALE_UP,
        progress: ProgressCallback | None = None,
        expendable_pods_priority_cutoff: int = DEFAULT_EXPENDABLE_PODS_PRIORITY_CUTOFF,
    ) -> ScaleUpResult:
        """One Cluster Autoscaler scale-up decision (see `schedsim.simulation.scale_up`).

        Pods with priority below ``expendable_pods_priority_cutoff`` are left out, running or
        pending, as CA does (`schedsim.autoscaler.expendable`); the result's warnings say how
        many.

        Raises:
            ManifestError, DraSnapshotError, ValueError: as `simulate`; ValueError also for an
                unknown expander or a negative ``max_nodes_per_scale_up``.
            NodeGroupError: a node is in two groups, or a template cannot be copied.
            SchedulingError: a plugin failed outside PreFilter/Filter.
        """
        pods, notes = self._non_expendable(cluster, expendable_pods_priority_cutoff)
        # CA skips cordoned nodes
        snapshot, _ = self.snapshot(cluster, pods=pods)
        up = scale_up(
            snapshot,
            pods,
            node_groups,
            expander=expander,
            resource_claim_templates=cluster.resource_claim_templates,
            progress=progress,
            max_nodes_per_scale_up=max_nodes_per_scale_up,
            daemon_sets=cluster.daemon_sets,
        )
        return attrs.evolve(up, warnings=(*notes, *up.warnings)) if notes else up

    def scale_down(
        self,
        cluster: Cluster,
        *,
        threshold: float = DEFAULT_UTILIZATION_THRESHOLD,
        gpu_threshold: float = DEFAULT_GPU_UTILIZATION_THRESHOLD,
        node_groups: Sequence[NodeGroup] | None = None,
        progress: ProgressCallback | None = None,
        expendable_pods_priority_cutoff: int = DEFAULT_EXPENDABLE_PODS_PRIORITY_CUTOFF,
        now: datetime | None = None,
    ) -> ScaleDownResult:
        """Which nodes Cluster Autoscaler could remove (see `schedsim.simulation.scale_down`;
        ``now``: the drain time its blocking-system-pod timeout is measured against).

        Running pods with priority below ``expendable_pods_priority_cutoff`` are left out of
        the snapshot, as CA does: they neither count in utilization nor block a removal.

        Raises:
            ManifestError, DraSnapshotError: as `simulate`.
            ValueError: a threshold outside [0, 1], or duplicate storage objects.
            NodeGroupError: a node is in two groups.
            SchedulingError: a plugin failed outside PreFilter/Filter.
        """
        pods, notes = self._non_expendable(cluster, expendable_pods_priority_cutoff)
        # CA skips cordoned nodes
        snapshot, _ = self.snapshot(cluster, pods=pods)
        down = scale_down(
            snapshot,
            pods,
            threshold=threshold,
            gpu_threshold=gpu_threshold,
            node_groups=node_groups,
            resource_claim_templates=cluster.resource_claim_templates,
            progress=progress,
            now=now,
        )
        return attrs.evolve(down, warnings=(*notes, *down.warnings)) if notes else down
