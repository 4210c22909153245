"""`PredicateSnapshot`: the ClusterSnapshot users call. A store plus the scheduler framework.

Mirrors CA ``clustersnapshot/predicate/predicate_snapshot.go`` (>= 1.36, the embedding
model): get/list return the stored NodeInfos; schedule runs PreFilter + Filter (+ Reserve when
a plugin implements it) and stores a PodInfo only on success; force variants skip plugins.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence

from schedsim.api.core import Node, Pod
from schedsim.framework.cycle_state import CycleState
from schedsim.framework.fit_error import Diagnosis, FitError
from schedsim.framework.runtime import Framework
from schedsim.framework.status import Code, Status
from schedsim.snapshot.delta import DeltaSnapshotStore
from schedsim.snapshot.errors import (
    NodeAlreadyExistsError,
    NodeNotFoundError,
    SchedulingError,
)
from schedsim.snapshot.infos import NodeInfo, PodInfo
from schedsim.snapshot.plugin_runner import (
    RESERVE_REJECTED,
    NodeOrderMapping,
    SchedulerPluginRunner,
)
from schedsim.snapshot.store import (
    ClusterSnapshotStore,
    StoreNodeInfoLister,
    StoreStorageInfoLister,
)

__all__ = ["PredicateSnapshot"]

log = logging.getLogger(__name__)


class PredicateSnapshot:
    """A forkable cluster snapshot that schedules pods through a scheduler profile.

    Args:
        framework: the profile's plugins; its handle's ``shared_lister`` is pointed at this
            snapshot so plugins can read it during hook calls.
        store: where NodeInfos live; `DeltaSnapshotStore` (O(1) fork/revert) by default;
            `BasicSnapshotStore` is the simple reference.
        skip_unschedulable_nodes: any-node scheduling skips cordoned nodes (CA's behaviour,
            the default); False lets the NodeUnschedulable plugin decide (kube-scheduler's).

    Everything get/list return is the stored object, read-only, valid until the next
    mutation. Implements the framework's ``SharedLister``.

    Mutations are transactional (CA's are not): a call that raises leaves the snapshot
    exactly as it was, in every fork state.
    """

    def __init__(
        self,
        framework: Framework,
        store: ClusterSnapshotStore | None = None,
        *,
        skip_unschedulable_nodes: bool = True,
    ) -> None:
        self.framework = framework
        self.store: ClusterSnapshotStore = store if store is not None else DeltaSnapshotStore()
        framework.handle.shared_lister = self
        self._runner = SchedulerPluginRunner(
            framework, self, skip_unschedulable_nodes=skip_unschedulable_nodes
        )
        self._pod_level_resources = framework.handle.feature_gates.enabled("PodLevelResources")

    # ------------------------------------------------------------------ SharedLister

    def node_infos(self) -> StoreNodeInfoLister:
        """The store's NodeInfo lister."""
        return self.store.node_infos()

    def storage_infos(self) -> StoreStorageInfoLister:
        """The store's PVC lister."""
        return self.store.storage_infos()

    # ------------------------------------------------------------------ state

    def new_pod_info(self, pod: Pod) -> PodInfo:
        """A PodInfo for ``pod`` computed with this snapshot's feature gates."""
        return PodInfo(pod, pod_level_resources=self._pod_level_resources)

    def set_cluster_state(self, nodes: Iterable[Node], scheduled_pods: Iterable[Pod]) -> list[Pod]:
        """Replace everything and drop all forks.

        Each pod goes to ``spec.nodeName``, else ``status.nominatedNodeName``.

        Returns:
            pods whose target node is not among ``nodes``: skipped (logged), as CA does.

        Raises:
            NodeAlreadyExistsError: two nodes share a name (the snapshot is left unchanged).
        """
        infos: dict[str, NodeInfo] = {}
        for node in nodes:
            if node.name in infos:
                raise NodeAlreadyExistsError(node.name)  # before anything is cleared
            infos[node.name] = NodeInfo(node)
        skipped = []
        for pod in scheduled_pods:
            target = pod.node_name or pod.nominated_node_name
            ni = infos.get(target)
            if ni is None:
                log.debug("pod %s: node %r is not in the snapshot; skipped", pod.key, target)
                skipped.append(pod)
                continue
            ni.add_pod_info(self.new_pod_info(pod))
        self.store.clear()
        for ni in infos.values():
            self.store.store_node_info(ni)
        return skipped

    def add_node_info(self, node_info: NodeInfo) -> None:
        """Add a node with its pods, without running plugins. The object itself is stored.

        Raises:
            NodeAlreadyExistsError: the node is already in the snapshot.
        """
        self.store.store_node_info(node_info)

    def remove_node_info(self, node_name: str) -> None:
        """Remove a node and its pods. Raises NodeNotFoundError."""
        self.store.remove_node_info(node_name)

    def get_node_info(self, node_name: str) -> NodeInfo:
        """The stored NodeInfo (not a copy). Raises NodeNotFoundError."""
        return self.store.node_infos().get(node_name)

    def list_node_infos(self) -> Sequence[NodeInfo]:
        """The stored NodeInfos (not copies); no allocation per call."""
        return self.store.node_infos().list()

    def force_add_pod(self, pod: Pod, node_name: str) -> None:
        """Add a pod to a node without running plugins. Raises NodeNotFoundError."""
        self.store.store_pod_info(self.new_pod_info(pod), node_name)

    def force_remove_pod(self, namespace: str, pod_name: str, node_name: str) -> None:
        """Remove a pod without running plugins. Raises NodeNotFoundError, PodNotFoundError."""
        self.store.remove_pod_info(namespace, pod_name, node_name)

    # ------------------------------------------------------------------ scheduling

    def _store_scheduled(self, pod: Pod, node_name: str, state: CycleState) -> None:
        if self.framework.has_reserve_plugins:
            self._runner.run_reserve_on_node(pod, node_name, state)
        try:
            self.store.store_pod_info(self.new_pod_info(pod), node_name)
        except (NodeNotFoundError, ValueError) as e:
            raise SchedulingError.internal(pod, str(e)) from None

    def schedule_pod(self, pod: Pod, node_name: str) -> None:
        """Run PreFilter and Filter for ``node_name`` and, if they pass, Reserve and store the
        pod there. The pod object is stored as given (its nodeName is not changed).

        Raises:
            SchedulingError: FAILING_PREDICATE (plugin name and reasons) or INTERNAL_ERROR.
        """
        _, state = self._runner.run_filters_on_node(pod, node_name)
        self._store_scheduled(pod, node_name, state)

    def schedule_pod_on_any_node_matching(
        self,
        pod: Pod,
        is_node_acceptable: Callable[[NodeInfo], bool] | None = None,
        node_ordering: NodeOrderMapping | None = None,
    ) -> str:
        """Schedule on the first node that passes, trying nodes round robin from the one after
        the node chosen last (CA's default ordering).

        Returns:
            the chosen node's name.

        Raises:
            SchedulingError: NO_NODES_PASSING_PREDICATES, FAILING_PREDICATE (PreFilter) or
                INTERNAL_ERROR.
        """
        node_info, state = self._runner.run_filters_until_passing_node(
            pod, is_node_acceptable, node_ordering
        )
        assert node_info.node is not None
        name = node_info.node.name
        self._store_scheduled(pod, name, state)
        return name

    def schedule_pod_or_explain(self, pod: Pod) -> str | FitError:
        """Schedule the way kube-scheduler's scheduling cycle does (schedulePod + Reserve):
        the first node that passes, round robin after the node chosen last, cordoned nodes
        left to NodeUnschedulable.

        Returns:
            the chosen node's name, or the FitError whose ``message`` is kube-scheduler's
            (``0/N nodes are available: ...``), when no node passes, PreFilter rejects, or a
            Reserve plugin rejects the chosen node (``0/1 nodes are available: ...``).

        Raises:
            SchedulingError: INTERNAL_ERROR when a plugin fails with an Error status.
        """
        found = self._runner.find_node(pod)
        if isinstance(found, FitError):
            return found
        node_info, state = found
        assert node_info.node is not None
        name = node_info.node.name
        try:
            self._store_scheduled(pod, name, state)
        except SchedulingError as e:
            if e.unexpected_error != RESERVE_REJECTED:
                raise
            status = Status(
                Code.Unschedulable, e.failing_predicate_reasons, e.failing_predicate_name
            )
            return FitError(1, Diagnosis(node_to_status={name: status}))
        return name

    def unschedule_pod(self, namespace: str, pod_name: str, node_name: str) -> None:
        """Remove a scheduled pod from its node.

        Raises:
            NodeNotFoundError, PodNotFoundError.
        """
        self.store.remove_pod_info(namespace, pod_name, node_name)

    def check_predicates(self, pod: Pod, node_name: str) -> None:
        """Run PreFilter and Filter for one node without changing anything.

        Raises:
            SchedulingError: the pod does not fit (or the node is missing).
        """
        self._runner.run_filters_on_node(pod, node_name)

    def diagnose(self, pod: Pod) -> FitError:
        """Why ``pod`` fits nowhere: a `schedsim.framework.FitError` with every node's
        first failing status (kube-scheduler's Diagnosis). Does not mutate."""
        return self._runner.diagnose(pod)

    # ------------------------------------------------------------------ forking

    def fork(self) -> None:
        """Start a layer of changes that `revert` can undo."""
        self.store.fork()

    def revert(self) -> None:
        """Undo the changes since the last `fork` (no-op when not forked)."""
        self.store.revert()

    def commit(self) -> None:
        """Keep the changes of the top layer in the layer below (no-op when not forked)."""
        self.store.commit()

    def clear(self) -> None:
        """Empty and unforked."""
        self.store.clear()
