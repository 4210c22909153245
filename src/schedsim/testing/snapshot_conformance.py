"""The store conformance suite: one behaviour for every `ClusterSnapshotStore`.

Every check here builds a `schedsim.snapshot.PredicateSnapshot` over a fresh store from a
factory and drives it through its public API, so the same suite proves that a new store (the
delta store) behaves exactly like `schedsim.snapshot.BasicSnapshotStore`. It mirrors Cluster
Autoscaler's ``clustersnapshot/predicate/predicate_snapshot_test.go`` (``TestForking`` with
``validTestCases``, ``TestSetClusterState``, ``TestNode404``, ``TestNodeAlreadyExists``,
``TestPVCUsedByPods``, ``TestPVCClearAndFork``), which CA runs against its basic and delta
stores, plus schedsim's own promises: get/list return the stored objects (identity), writes
in a fork never touch the objects of the layer below, NodeInfos are listed in insertion order
and the any-node search goes round robin. CSI scenarios (``csi: ...``) check that a NodeInfo's
CSINode joins and leaves the CSI snapshot with its node through every fork mode, that copies of
a NodeInfo keep it, and that the NodeVolumeLimits limit it sets follows forks.

States are compared through a canonical dump (`dump_state`: node name -> sorted pod keys,
requested milli-CPU and memory, pod count), never by object identity, and every comparison
also runs `check_snapshot_consistency` (get/list/lister caches agree with each other).

Use it in one call (all failures are reported together)::

    from schedsim.testing import run_store_conformance

    def test_my_store_conforms() -> None:
        run_store_conformance(MyStore)

or as one pytest test per case (what ``tests/snapshot`` does)::

    from schedsim.testing import CONFORMANCE_CASES, ConformanceCase

    @pytest.mark.parametrize("case", CONFORMANCE_CASES, ids=lambda c: c.name)
    def test_conformance(case: ConformanceCase) -> None:
        case.run(MyStore)

A check signals a failure by raising `AssertionError` with a message naming the step.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NoReturn

import attrs

from schedsim.api.core import Node, Pod
from schedsim.api.storage import CSINode, CSINodeDriver
from schedsim.framework import Framework, Handle, PluginFactory, default_profile
from schedsim.framework.runtime import discover_plugins
from schedsim.snapshot import (
    ClusterSnapshotStore,
    NodeAlreadyExistsError,
    NodeInfo,
    NodeNotFoundError,
    PodInfo,
    PodNotFoundError,
    PredicateSnapshot,
    SchedulingError,
    SchedulingErrorType,
)
from schedsim.snapshot.csi import CsiSnapshot, CsiSnapshotError

__all__ = [
    "CONFORMANCE_CASES",
    "FORK_MODES",
    "MODIFICATION_SCENARIOS",
    "ConformanceCase",
    "ForkMode",
    "ModificationScenario",
    "NodeState",
    "StoreFactory",
    "check_snapshot_consistency",
    "dump_state",
    "make_node",
    "make_pod",
    "new_snapshot",
    "run_store_conformance",
]

StoreFactory = Callable[[], ClusterSnapshotStore]
"""Builds a fresh, empty store (a store class itself usually is one)."""

MI = 1024**2
GI = 1024**3

# --------------------------------------------------------------------------- state and checks


@attrs.frozen
class NodeState:
    """What the dump records for one node.

    Attributes:
        pods: keys (``namespace/name``) of its pods, sorted (pod order is not part of the
            contract: removal swaps with the last pod).
        milli_cpu: ``requested.milli_cpu``.
        memory: ``requested.memory`` in bytes.
        pod_count: ``len(pods)`` of the NodeInfo (catches duplicated PodInfos).
        csi_node: name of the NodeInfo's CSINode (None without one): a copy of a NodeInfo
            must keep it (CA lost it on copies once).
    """

    pods: tuple[str, ...] = ()
    milli_cpu: int = 0
    memory: int = 0
    pod_count: int = 0
    csi_node: str | None = None


EMPTY = NodeState()
"""A node without pods."""


def dump_state(snapshot: PredicateSnapshot) -> dict[str, NodeState]:
    """The canonical dump of ``snapshot``: node name -> `NodeState`, from `list_node_infos`."""
    out: dict[str, NodeState] = {}
    for ni in snapshot.list_node_infos():
        node = ni.node
        name = "" if node is None else node.name
        out[name] = NodeState(
            tuple(sorted(p.pod.key for p in ni.pods)),
            ni.requested.milli_cpu,
            ni.requested.memory,
            len(ni.pods),
            None if ni.csi_node is None else ni.csi_node.name,
        )
    return out


def _fail(message: str) -> NoReturn:
    raise AssertionError(message)


def _expect_equal(what: str, got: object, want: object) -> None:
    if got != want:
        _fail(f"{what}: got {got!r}, want {want!r}")


def _expect_true(what: str, cond: bool) -> None:
    if not cond:
        _fail(what)


def _expect_raises(
    what: str,
    fn: Callable[[], object],
    exc: type[Exception],
    scheduling_type: SchedulingErrorType | None = None,
) -> Exception:
    """Run ``fn``; it must raise ``exc`` (a `SchedulingError` of ``scheduling_type``)."""
    try:
        fn()
    except exc as e:
        if scheduling_type is not None:
            got = e.type if isinstance(e, SchedulingError) else None
            if got is not scheduling_type:
                _fail(f"{what}: expected a {scheduling_type.name} SchedulingError, got {e!r}")
        return e
    except Exception as e:
        _fail(f"{what}: expected {exc.__name__}, got {type(e).__name__}: {e}")
    _fail(f"{what}: expected {exc.__name__}, nothing was raised")


def _pvc_keys(pod: Pod) -> list[str]:
    """``namespace/claim`` of the pod's persistentVolumeClaim volumes (what
    kube-scheduler's updatePVCRefCounts counts)."""
    return [
        f"{pod.namespace}/{v.persistent_volume_claim}"
        for v in pod.volumes
        if v.persistent_volume_claim is not None
    ]


def check_snapshot_consistency(snapshot: PredicateSnapshot) -> None:
    """Check that the snapshot's views of the store agree with each other.

    * ``list_node_infos()`` returns the same list object twice in a row (cached, no
      allocation per call) and no node name twice;
    * every listed NodeInfo ``is`` what ``get_node_info`` and ``node_infos().get`` return;
    * each NodeInfo's ``requested`` cpu/memory is the sum of its pods' requests and its
      ``pods_with_affinity`` / ``pods_with_required_anti_affinity`` are the right pods;
    * the affinity listers list exactly the nodes having such pods;
    * ``storage_infos().is_pvc_used_by_pods`` is true for every claim of every stored pod;
    * the CSI snapshot holds exactly the NodeInfos' CSINodes, the same objects (this holds
      unless ``set_cluster_state`` was given CSINodes of nodes it was not given).

    Raises:
        AssertionError: naming the first disagreement.
    """
    nodes = snapshot.list_node_infos()
    _expect_true(
        "list_node_infos() returned a new object although nothing changed",
        snapshot.list_node_infos() is nodes,
    )
    lister = snapshot.node_infos()
    storage = snapshot.storage_infos()
    names: list[str] = []
    with_affinity: set[str] = set()
    with_anti_affinity: set[str] = set()
    for ni in nodes:
        node = ni.node
        if node is None:
            _fail(f"listed NodeInfo without a Node: {ni!r}")
        name = node.name
        names.append(name)
        try:
            got, got_lister = snapshot.get_node_info(name), lister.get(name)
        except LookupError as e:
            _fail(f"listed node {name!r} cannot be got: {type(e).__name__}: {e}")
        _expect_true(f"get_node_info({name!r}) is not the listed NodeInfo", got is ni)
        _expect_true(f"node_infos().get({name!r}) is not the listed NodeInfo", got_lister is ni)
        cpu = mem = 0
        for p in ni.pods:
            r = p.calculate_resource().resource
            cpu += r.milli_cpu
            mem += r.memory
            for key in _pvc_keys(p.pod):
                _expect_true(
                    f"is_pvc_used_by_pods({key!r}) is false but {p.pod.key} on {name} uses it",
                    storage.is_pvc_used_by_pods(key),
                )
        _expect_equal(
            f"{name}: requested (milli_cpu, memory) vs the sum over its pods",
            (ni.requested.milli_cpu, ni.requested.memory),
            (cpu, mem),
        )
        _expect_equal(
            f"{name}: pods_with_affinity",
            sorted(p.pod.key for p in ni.pods_with_affinity),
            sorted(p.pod.key for p in ni.pods if p.has_affinity),
        )
        _expect_equal(
            f"{name}: pods_with_required_anti_affinity",
            sorted(p.pod.key for p in ni.pods_with_required_anti_affinity),
            sorted(p.pod.key for p in ni.pods if p.required_anti_affinity_terms),
        )
        if ni.pods_with_affinity:
            with_affinity.add(name)
        if ni.pods_with_required_anti_affinity:
            with_anti_affinity.add(name)
    _expect_equal("duplicate node names in list_node_infos()", len(set(names)), len(names))
    held = {ni.csi_node.name: ni.csi_node for ni in nodes if ni.csi_node is not None}
    _expect_equal(
        "CSINodes in the CSI snapshot vs the NodeInfos' csi_node",
        sorted(c.name for c in snapshot.csi_snapshot.list()),
        sorted(held),
    )
    for csi_name, csi_node in held.items():
        _expect_true(
            f"CSI snapshot's CSINode {csi_name!r} is not the NodeInfo's csi_node",
            snapshot.csi_snapshot.get_csi_node(csi_name) is csi_node,
        )
    _expect_equal(
        "have_pods_with_affinity_list()",
        sorted(_names(lister.have_pods_with_affinity_list())),
        sorted(with_affinity),
    )
    _expect_equal(
        "have_pods_with_required_anti_affinity_list()",
        sorted(_names(lister.have_pods_with_required_anti_affinity_list())),
        sorted(with_anti_affinity),
    )


def _names(nodes: Iterable[NodeInfo]) -> list[str]:
    return [ni.node.name if ni.node is not None else "" for ni in nodes]


def _fmt(state: Mapping[str, NodeState]) -> str:
    parts = [
        f"{name}: pods={list(st.pods)} cpu={st.milli_cpu}m mem={st.memory} n={st.pod_count}"
        + (f" csi={st.csi_node}" if st.csi_node is not None else "")
        for name, st in sorted(state.items())
    ]
    return "{" + "; ".join(parts) + "}"


def _expect_state(snapshot: PredicateSnapshot, want: Mapping[str, NodeState], step: str) -> None:
    check_snapshot_consistency(snapshot)
    got = dump_state(snapshot)
    if got != dict(want):
        _fail(f"{step}: snapshot state differs\n  got:  {_fmt(got)}\n  want: {_fmt(want)}")


def _prime_caches(snapshot: PredicateSnapshot) -> None:
    """Read everything a store may cache (CA's "cache, fork & commit" primes List and
    HavePodsWithAffinityList)."""
    lister = snapshot.node_infos()
    for ni in snapshot.list_node_infos():
        if ni.node is not None:
            snapshot.get_node_info(ni.node.name)
    lister.have_pods_with_affinity_list()
    lister.have_pods_with_required_anti_affinity_list()
    snapshot.storage_infos().is_pvc_used_by_pods("default/claim1")


# --------------------------------------------------------------------------- objects


def make_node(
    name: str,
    *,
    cpu: str = "4",
    memory: str = "8Gi",
    pods: int = 110,
    unschedulable: bool = False,
    taints: Sequence[Mapping[str, str]] = (),
    labels: Mapping[str, str] | None = None,
    allocatable: Mapping[str, str] | None = None,
    images: Mapping[str, int] | None = None,
) -> Node:
    """A Node with ``status.allocatable`` cpu, memory and pods (CA's ``BuildTestNode``).

    Args:
        allocatable: further allocatable resources (e.g. ``{"example.com/gpu": "2"}``).
        images: ``status.images``: image name -> size in bytes (ImageLocality reads them).
    """
    status: dict[str, Any] = {
        "allocatable": {"cpu": cpu, "memory": memory, "pods": str(pods), **(allocatable or {})}
    }
    if images:
        status["images"] = [{"names": [n], "sizeBytes": size} for n, size in images.items()]
    return Node.from_manifest(
        {
            "metadata": {"name": name, "labels": dict(labels or {})},
            "spec": {"unschedulable": unschedulable, "taints": [dict(t) for t in taints]},
            "status": status,
        }
    )


def make_pod(
    name: str,
    *,
    cpu: str | None = "100m",
    memory: str | None = "100Mi",
    namespace: str = "default",
    node_name: str = "",
    nominated_node_name: str = "",
    pvcs: Sequence[str] = (),
    ephemeral_volumes: Sequence[str] = (),
    other_volumes: Sequence[Mapping[str, Any]] = (),
    spec: Mapping[str, Any] | None = None,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    tolerations: Sequence[Mapping[str, str]] = (),
    node_selector: Mapping[str, str] | None = None,
    image: str = "",
    priority: int | None = None,
    scheduler_name: str = "",
) -> Pod:
    """A one-container Pod (CA's ``BuildTestPod``).

    Args:
        cpu, memory: the container's requests (None: not requested).
        pvcs: claim names, mounted as volumes ``pvc-<i>``.
        ephemeral_volumes: names of generic ephemeral volumes (claim ``<pod>-<volume>``).
        other_volumes: further raw volume entries.
        spec: further raw spec fields (e.g. ``affinity``); they win over the arguments.
        labels, annotations: ``metadata.labels`` / ``metadata.annotations``.
        tolerations: ``spec.tolerations`` (raw entries, as for make_node's ``taints``).
        node_selector: ``spec.nodeSelector``.
        image: the container's image.
        priority: ``spec.priority``.
        scheduler_name: ``spec.schedulerName`` (empty: default-scheduler).
    """
    requests = {}
    if cpu is not None:
        requests["cpu"] = cpu
    if memory is not None:
        requests["memory"] = memory
    volumes: list[Mapping[str, Any]] = [
        {"name": f"pvc-{i}", "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(pvcs)
    ]
    volumes += [{"name": v, "ephemeral": {"volumeClaimTemplate": {}}} for v in ephemeral_volumes]
    volumes += list(other_volumes)
    container: dict[str, Any] = {"name": "c", "resources": {"requests": requests}}
    if image:
        container["image"] = image
    extra: dict[str, Any] = {}
    if tolerations:
        extra["tolerations"] = [dict(t) for t in tolerations]
    if node_selector:
        extra["nodeSelector"] = dict(node_selector)
    if priority is not None:
        extra["priority"] = priority
    if scheduler_name:
        extra["schedulerName"] = scheduler_name
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels:
        metadata["labels"] = dict(labels)
    if annotations:
        metadata["annotations"] = dict(annotations)
    return Pod.from_manifest(
        {
            "metadata": metadata,
            "spec": {
                "nodeName": node_name,
                "containers": [container],
                "volumes": volumes,
                **extra,
                **(spec or {}),
            },
            "status": {"nominatedNodeName": nominated_node_name},
        }
    )


def _on(pod: Pod, node_name: str) -> Pod:
    """``pod`` with ``spec.nodeName`` set (CA's ``withNodeName``)."""
    return attrs.evolve(pod, node_name=node_name)


@functools.cache
def _registry() -> Mapping[str, PluginFactory]:
    return discover_plugins()


def new_snapshot(make_store: StoreFactory) -> PredicateSnapshot:
    """A `PredicateSnapshot` over ``make_store()`` with the default profile."""
    return PredicateSnapshot(Framework(default_profile(), Handle(), _registry()), make_store())


# --------------------------------------------------------------------------- modification scenarios

SPECIAL_NODE = make_node("special", cpu="1", memory="1Gi")
OTHER_NODE = make_node("other", cpu="1", memory="1Gi")
LARGE_NODE = make_node("large", cpu="100", memory="100Gi")
EXTRA_NODE = make_node("extra-node", cpu="1", memory="1Gi")
"""Added in the inner fork by the fork modes (CA's ``specialNode-2``)."""

SPECIAL_POD = make_pod("special-pod", cpu="100m", memory="100Mi")
OTHER_POD = make_pod("other-pod", cpu="200m", memory="200Mi")
LARGE_POD = make_pod("large-pod", cpu="50", memory="50Gi")
ANTI_AFFINITY_POD = make_pod(
    "anti-pod",
    spec={
        "affinity": {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "labelSelector": {"matchLabels": {"app": "anti"}},
                        "topologyKey": "kubernetes.io/hostname",
                    }
                ]
            }
        }
    },
)

_P = ("default/special-pod", 100, 100 * MI)
_OP = ("default/other-pod", 200, 200 * MI)
_LP = ("default/large-pod", 50_000, 50 * GI)
_AP = ("default/anti-pod", 100, 100 * MI)


def _ns(*pods: tuple[str, int, int]) -> NodeState:
    return NodeState(
        tuple(sorted(k for k, _, _ in pods)),
        sum(c for _, c, _ in pods),
        sum(m for _, _, m in pods),
        len(pods),
    )


@attrs.frozen
class ModificationScenario:
    """One operation on a snapshot and the states before and after it.

    Attributes:
        name: CA's test case name, or ``extra: ...`` for schedsim's additions.
        op: the operation; it may check its own results (e.g. the chosen node).
        initial: the state built by ``set_cluster_state(nodes, pods)``.
        modified: the state after ``op`` (equal to ``initial`` when ``op`` fails).
        nodes, pods: the initial cluster.
        csi_nodes: the initial cluster's CSINodes (``set_cluster_state(csi_snapshot=...)``).
        error: the exception ``op`` must raise, if any.
        scheduling_error: its `SchedulingErrorType` when it is a `SchedulingError`.
        failing_predicate: ``(plugin, reasons)`` a FAILING_PREDICATE error must name.
    """

    name: str
    op: Callable[[PredicateSnapshot], None]
    initial: Mapping[str, NodeState]
    modified: Mapping[str, NodeState]
    nodes: tuple[Node, ...] = ()
    pods: tuple[Pod, ...] = ()
    csi_nodes: tuple[CSINode, ...] = ()
    error: type[Exception] | None = None
    scheduling_error: SchedulingErrorType | None = None
    failing_predicate: tuple[str, tuple[str, ...]] | None = None

    def run_op(self, snapshot: PredicateSnapshot) -> None:
        """Run ``op`` and check that it raises what it must (and nothing else)."""
        if self.error is None:
            try:
                self.op(snapshot)
            except AssertionError:
                raise
            except Exception as e:
                _fail(f"op raised {type(e).__name__}: {e}")
            return
        err = _expect_raises("op", lambda: self.op(snapshot), self.error, self.scheduling_error)
        if self.failing_predicate is not None:
            if not isinstance(err, SchedulingError):
                _fail(f"op: expected a SchedulingError naming a predicate, got {err!r}")
            _expect_equal(
                "failing predicate (name, reasons)",
                (err.failing_predicate_name, err.failing_predicate_reasons),
                self.failing_predicate,
            )


def _add_empty_node_info(s: PredicateSnapshot) -> None:
    s.add_node_info(NodeInfo(SPECIAL_NODE))


def _add_node_info_with_pods(s: PredicateSnapshot) -> None:
    s.add_node_info(NodeInfo(SPECIAL_NODE, pods=[s.new_pod_info(SPECIAL_POD)]))


def _remove_node_info(s: PredicateSnapshot) -> None:
    s.remove_node_info("special")


def _remove_then_add_back(s: PredicateSnapshot) -> None:
    s.remove_node_info("special")
    s.add_node_info(NodeInfo(SPECIAL_NODE))


def _add_pod_then_remove_node(s: PredicateSnapshot) -> None:
    s.force_add_pod(SPECIAL_POD, "special")
    s.remove_node_info("special")


def _schedule_pod(s: PredicateSnapshot) -> None:
    s.schedule_pod(SPECIAL_POD, "special")


def _schedule_on_any_node(s: PredicateSnapshot) -> None:
    got = s.schedule_pod_on_any_node_matching(LARGE_POD, lambda _ni: True)
    _expect_equal("schedule_pod_on_any_node_matching()", got, "large")


def _is_special(ni: NodeInfo) -> bool:
    return ni.node is not None and ni.node.name == "special"


def _schedule_on_any_matching_node(s: PredicateSnapshot) -> None:
    got = s.schedule_pod_on_any_node_matching(SPECIAL_POD, _is_special)
    _expect_equal("schedule_pod_on_any_node_matching()", got, "special")


def _schedule_failing(s: PredicateSnapshot) -> None:
    s.schedule_pod(LARGE_POD, "special")


def _schedule_any_failing_everywhere(s: PredicateSnapshot) -> None:
    s.schedule_pod_on_any_node_matching(LARGE_POD, lambda _ni: True)


def _schedule_any_none_matching(s: PredicateSnapshot) -> None:
    s.schedule_pod_on_any_node_matching(SPECIAL_POD, lambda _ni: False)


def _unschedule_pod(s: PredicateSnapshot) -> None:
    s.unschedule_pod("default", "special-pod", "large")


def _force_remove_pod(s: PredicateSnapshot) -> None:
    s.force_remove_pod("default", "special-pod", "large")


def _force_remove_pod_of_other_namespace(s: PredicateSnapshot) -> None:
    s.force_remove_pod("other", "special-pod", "large")


def _remove_pod_info_of_other_namespace(s: PredicateSnapshot) -> None:
    s.store.remove_pod_info("other", "special-pod", "large")


def _unschedule_and_schedule_back(s: PredicateSnapshot) -> None:
    s.unschedule_pod("default", "special-pod", "large")
    s.schedule_pod(_on(SPECIAL_POD, "large"), "large")


def _schedule_on_node_with_pods(s: PredicateSnapshot) -> None:
    s.schedule_pod(SPECIAL_POD, "large")


def _add_node_then_schedule_on_it(s: PredicateSnapshot) -> None:
    s.add_node_info(NodeInfo(OTHER_NODE))
    s.schedule_pod(SPECIAL_POD, "other")


def _remove_then_add_back_with_other_pods(s: PredicateSnapshot) -> None:
    s.remove_node_info("special")
    s.add_node_info(NodeInfo(SPECIAL_NODE, pods=[s.new_pod_info(OTHER_POD)]))


def _remove_node_with_pods(s: PredicateSnapshot) -> None:
    s.remove_node_info("large")


def _force_add_anti_affinity_pod(s: PredicateSnapshot) -> None:
    s.force_add_pod(ANTI_AFFINITY_POD, "special")


def _unschedule_missing_pod(s: PredicateSnapshot) -> None:
    s.unschedule_pod("default", "ghost", "special")


def _check_predicates_only(s: PredicateSnapshot) -> None:
    s.check_predicates(SPECIAL_POD, "special")
    _expect_raises(
        "check_predicates(large pod)",
        lambda: s.check_predicates(LARGE_POD, "special"),
        SchedulingError,
        SchedulingErrorType.FAILING_PREDICATE,
    )


SPECIAL_CSI = CSINode(
    "special", drivers=(CSINodeDriver("ebs.csi.aws.com", "special", allocatable_count=1),)
)
"""The CSINode of SPECIAL_NODE: at most one AWS EBS volume."""
SPECIAL_CSI_2 = CSINode(
    "special", drivers=(CSINodeDriver("ebs.csi.aws.com", "special", allocatable_count=2),)
)
"""Another CSINode for SPECIAL_NODE: at most two AWS EBS volumes."""


def _ebs_pod(name: str, volume_id: str) -> Pod:
    # an inline AWS EBS volume: NodeVolumeLimits counts it as ebs.csi.aws.com/<volume_id> on
    # nodes with a CSINode (migration is on), without any PV or PVC
    return make_pod(
        name, other_volumes=[{"name": "v", "awsElasticBlockStore": {"volumeID": volume_id}}]
    )


EBS_POD_A = _ebs_pod("ebs-a", "vol-a")
EBS_POD_B = _ebs_pod("ebs-b", "vol-b")
_EA = ("default/ebs-a", 100, 100 * MI)
_EB = ("default/ebs-b", 100, 100 * MI)


def _csi(state: NodeState, name: str = "special") -> NodeState:
    return attrs.evolve(state, csi_node=name)


def _add_node_info_with_csi_node(s: PredicateSnapshot) -> None:
    s.add_node_info(NodeInfo(SPECIAL_NODE, csi_node=SPECIAL_CSI))


def _remove_then_add_back_with_other_csi_node(s: PredicateSnapshot) -> None:
    s.remove_node_info("special")
    _expect_true("CSINode left after its node was removed", "special" not in s.csi_snapshot)
    s.add_node_info(
        NodeInfo(SPECIAL_NODE, csi_node=SPECIAL_CSI_2, pods=[s.new_pod_info(EBS_POD_A)])
    )
    s.schedule_pod(EBS_POD_B, "special")  # fits the new CSINode's limit of 2


def _schedule_over_volume_limit(s: PredicateSnapshot) -> None:
    s.schedule_pod(EBS_POD_B, "special")


def _add_node_info_with_foreign_csi_node(s: PredicateSnapshot) -> None:
    s.add_node_info(NodeInfo(OTHER_NODE, csi_node=SPECIAL_CSI))


def _add_node_info_with_tracked_csi_node(s: PredicateSnapshot) -> None:
    s.remove_node_info("special")
    s.add_node_info(NodeInfo(SPECIAL_NODE, csi_node=SPECIAL_CSI))
    s.add_node_info(NodeInfo(SPECIAL_NODE, csi_node=SPECIAL_CSI_2))


def _add_pod_then_remove_node_with_csi(s: PredicateSnapshot) -> None:
    s.force_add_pod(EBS_POD_B, "special")
    s.remove_node_info("special")


_ONLY_SPECIAL = {"special": EMPTY}
_SPECIAL_AND_LARGE = {"special": EMPTY, "large": EMPTY}
_SPECIAL_AND_OTHER = {"special": EMPTY, "other": EMPTY}
_LARGE_WITH_TWO = {"large": _ns(_P, _LP)}
_LARGE_WITH_TWO_PODS = (_on(SPECIAL_POD, "large"), _on(LARGE_POD, "large"))

_OTHER_NS_POD = make_pod("special-pod", namespace="other", cpu="200m", memory="200Mi")
_SAME_NAME_PODS = (_on(SPECIAL_POD, "large"), _on(_OTHER_NS_POD, "large"))
_ONP = ("other/special-pod", 200, 200 * MI)

MODIFICATION_SCENARIOS: tuple[ModificationScenario, ...] = (
    # CA predicate_snapshot_test.go validTestCases (the non-DRA ones), same names.
    ModificationScenario("add empty nodeInfo", _add_empty_node_info, {}, {"special": EMPTY}),
    ModificationScenario("add nodeInfo", _add_node_info_with_pods, {}, {"special": _ns(_P)}),
    ModificationScenario(
        "remove nodeInfo", _remove_node_info, _ONLY_SPECIAL, {}, nodes=(SPECIAL_NODE,)
    ),
    ModificationScenario(
        "remove nodeInfo, then add it back",
        _remove_then_add_back,
        _ONLY_SPECIAL,
        _ONLY_SPECIAL,
        nodes=(SPECIAL_NODE,),
    ),
    ModificationScenario(
        "add pod, then remove nodeInfo",
        _add_pod_then_remove_node,
        _ONLY_SPECIAL,
        {},
        nodes=(SPECIAL_NODE,),
    ),
    ModificationScenario(
        "schedule pod", _schedule_pod, _ONLY_SPECIAL, {"special": _ns(_P)}, nodes=(SPECIAL_NODE,)
    ),
    ModificationScenario(
        "schedule pod on any Node (scheduling predicates only work for one)",
        _schedule_on_any_node,
        _SPECIAL_AND_LARGE,
        {"special": EMPTY, "large": _ns(_LP)},
        nodes=(SPECIAL_NODE, LARGE_NODE),
    ),
    ModificationScenario(
        "schedule pod on any Node matching (matching only works for one)",
        _schedule_on_any_matching_node,
        _SPECIAL_AND_LARGE,
        {"special": _ns(_P), "large": EMPTY},
        nodes=(SPECIAL_NODE, LARGE_NODE),
    ),
    ModificationScenario(
        "scheduling pod with failing predicates is an error",
        _schedule_failing,
        _ONLY_SPECIAL,
        _ONLY_SPECIAL,
        nodes=(SPECIAL_NODE,),
        error=SchedulingError,
        scheduling_error=SchedulingErrorType.FAILING_PREDICATE,
        failing_predicate=("NodeResourcesFit", ("Insufficient cpu", "Insufficient memory")),
    ),
    ModificationScenario(
        "scheduling pod on any Node with failing predicates on all Nodes is an error",
        _schedule_any_failing_everywhere,
        _SPECIAL_AND_OTHER,
        _SPECIAL_AND_OTHER,
        nodes=(SPECIAL_NODE, OTHER_NODE),
        error=SchedulingError,
        scheduling_error=SchedulingErrorType.NO_NODES_PASSING_PREDICATES,
    ),
    ModificationScenario(
        "scheduling pod on any matching Node with no Nodes matching is an error",
        _schedule_any_none_matching,
        _SPECIAL_AND_OTHER,
        _SPECIAL_AND_OTHER,
        nodes=(SPECIAL_NODE, OTHER_NODE),
        error=SchedulingError,
        scheduling_error=SchedulingErrorType.NO_NODES_PASSING_PREDICATES,
    ),
    ModificationScenario(
        "unschedule pod",
        _unschedule_pod,
        _LARGE_WITH_TWO,
        {"large": _ns(_LP)},
        nodes=(LARGE_NODE,),
        pods=_LARGE_WITH_TWO_PODS,
    ),
    # schedsim additions.
    ModificationScenario(
        "extra: force remove pod",
        _force_remove_pod,
        _LARGE_WITH_TWO,
        {"large": _ns(_LP)},
        nodes=(LARGE_NODE,),
        pods=_LARGE_WITH_TWO_PODS,
    ),
    ModificationScenario(
        "extra: force remove pod keeps the same-named pod of another namespace",
        _force_remove_pod_of_other_namespace,
        {"large": _ns(_P, _ONP)},
        {"large": _ns(_P)},
        nodes=(LARGE_NODE,),
        pods=_SAME_NAME_PODS,
    ),
    ModificationScenario(
        "extra: store.remove_pod_info matches namespace and name",
        _remove_pod_info_of_other_namespace,
        {"large": _ns(_P, _ONP)},
        {"large": _ns(_P)},
        nodes=(LARGE_NODE,),
        pods=_SAME_NAME_PODS,
    ),
    ModificationScenario(
        "extra: unschedule pod and schedule it back",
        _unschedule_and_schedule_back,
        _LARGE_WITH_TWO,
        _LARGE_WITH_TWO,
        nodes=(LARGE_NODE,),
        pods=_LARGE_WITH_TWO_PODS,
    ),
    ModificationScenario(
        "extra: schedule pod on a Node that already has pods",
        _schedule_on_node_with_pods,
        {"large": _ns(_LP)},
        _LARGE_WITH_TWO,
        nodes=(LARGE_NODE,),
        pods=(_on(LARGE_POD, "large"),),
    ),
    ModificationScenario(
        "extra: add nodeInfo, then schedule pod on it",
        _add_node_then_schedule_on_it,
        _ONLY_SPECIAL,
        {"special": EMPTY, "other": _ns(_P)},
        nodes=(SPECIAL_NODE,),
    ),
    ModificationScenario(
        "extra: remove nodeInfo with pods, then add it back with other pods",
        _remove_then_add_back_with_other_pods,
        {"special": _ns(_P)},
        {"special": _ns(_OP)},
        nodes=(SPECIAL_NODE,),
        pods=(_on(SPECIAL_POD, "special"),),
    ),
    ModificationScenario(
        "extra: remove nodeInfo with pods",
        _remove_node_with_pods,
        {"special": EMPTY, **_LARGE_WITH_TWO},
        {"special": EMPTY},
        nodes=(SPECIAL_NODE, LARGE_NODE),
        pods=_LARGE_WITH_TWO_PODS,
    ),
    ModificationScenario(
        "extra: force add pod with required anti-affinity",
        _force_add_anti_affinity_pod,
        _ONLY_SPECIAL,
        {"special": _ns(_AP)},
        nodes=(SPECIAL_NODE,),
    ),
    ModificationScenario(
        "extra: unscheduling a pod that is not on the Node is an error",
        _unschedule_missing_pod,
        {"special": _ns(_P)},
        {"special": _ns(_P)},
        nodes=(SPECIAL_NODE,),
        pods=(_on(SPECIAL_POD, "special"),),
        error=PodNotFoundError,
    ),
    # CSI (CA: the CSINode of a NodeInfo joins and leaves the CSI snapshot with its node).
    ModificationScenario(
        "csi: add nodeInfo with CSINode",
        _add_node_info_with_csi_node,
        {},
        {"special": _csi(EMPTY)},
    ),
    ModificationScenario(
        "csi: remove nodeInfo with CSINode",
        _remove_node_info,
        {"special": _csi(EMPTY)},
        {},
        nodes=(SPECIAL_NODE,),
        csi_nodes=(SPECIAL_CSI,),
    ),
    ModificationScenario(
        "csi: add pod, then remove nodeInfo with CSINode",
        _add_pod_then_remove_node_with_csi,
        {"special": _csi(EMPTY)},
        {},
        nodes=(SPECIAL_NODE,),
        csi_nodes=(SPECIAL_CSI,),
    ),
    ModificationScenario(
        "csi: remove nodeInfo, add it back with a larger volume limit, schedule on it",
        _remove_then_add_back_with_other_csi_node,
        {"special": _csi(_ns(_EA))},
        {"special": _csi(_ns(_EA, _EB))},
        nodes=(SPECIAL_NODE,),
        pods=(_on(EBS_POD_A, "special"),),
        csi_nodes=(SPECIAL_CSI,),
    ),
    ModificationScenario(
        "csi: schedule pod on a node with CSINode (the copy keeps it)",
        _schedule_pod,
        {"special": _csi(_ns(_EA))},
        {"special": _csi(_ns(_EA, _P))},
        nodes=(SPECIAL_NODE,),
        pods=(_on(EBS_POD_A, "special"),),
        csi_nodes=(SPECIAL_CSI,),
    ),
    ModificationScenario(
        "csi: scheduling a pod over the node's volume limit is an error",
        _schedule_over_volume_limit,
        {"special": _csi(_ns(_EA))},
        {"special": _csi(_ns(_EA))},
        nodes=(SPECIAL_NODE,),
        pods=(_on(EBS_POD_A, "special"),),
        csi_nodes=(SPECIAL_CSI,),
        error=SchedulingError,
        scheduling_error=SchedulingErrorType.FAILING_PREDICATE,
        failing_predicate=("NodeVolumeLimits", ("node(s) exceed max volume count",)),
    ),
    ModificationScenario(
        "csi: adding a nodeInfo with another node's CSINode is an error",
        _add_node_info_with_foreign_csi_node,
        {"special": _csi(EMPTY)},
        {"special": _csi(EMPTY)},
        nodes=(SPECIAL_NODE,),
        csi_nodes=(SPECIAL_CSI,),
        error=CsiSnapshotError,
    ),
    ModificationScenario(
        "csi: adding a nodeInfo that exists, with a CSINode, is NodeAlreadyExistsError",
        _add_node_info_with_tracked_csi_node,
        {"special": _csi(EMPTY)},
        {"special": _csi(EMPTY)},
        nodes=(SPECIAL_NODE,),
        csi_nodes=(SPECIAL_CSI,),
        error=NodeAlreadyExistsError,
    ),
    ModificationScenario(
        "extra: check_predicates does not modify the snapshot",
        _check_predicates_only,
        _ONLY_SPECIAL,
        _ONLY_SPECIAL,
        nodes=(SPECIAL_NODE,),
    ),
)
"""The modification scenarios; each is run through every `ForkMode`."""


# --------------------------------------------------------------------------- fork modes


def _with_extra(state: Mapping[str, NodeState]) -> dict[str, NodeState]:
    return {**state, "extra-node": EMPTY}


def _mode_base(s: PredicateSnapshot, sc: ModificationScenario) -> None:
    sc.run_op(s)
    _expect_state(s, sc.modified, "after op")


def _mode_fork(s: PredicateSnapshot, sc: ModificationScenario) -> None:
    s.fork()
    sc.run_op(s)
    _expect_state(s, sc.modified, "fork, op")


def _mode_fork_revert(s: PredicateSnapshot, sc: ModificationScenario) -> None:
    s.fork()
    sc.run_op(s)
    _expect_state(s, sc.modified, "fork, op")
    s.revert()
    _expect_state(s, sc.initial, "fork, op, revert")


def _mode_fork_fork_revert_revert(s: PredicateSnapshot, sc: ModificationScenario) -> None:
    s.fork()
    sc.run_op(s)
    s.fork()
    s.add_node_info(NodeInfo(EXTRA_NODE))
    _expect_state(s, _with_extra(sc.modified), "fork, op, fork, add extra node")
    s.revert()
    _expect_state(s, sc.modified, "fork, op, fork, add extra node, revert")
    s.revert()
    _expect_state(s, sc.initial, "fork, op, fork, add extra node, revert, revert")


def _mode_fork_commit(s: PredicateSnapshot, sc: ModificationScenario) -> None:
    s.fork()
    sc.run_op(s)
    s.commit()
    _expect_state(s, sc.modified, "fork, op, commit")


def _mode_fork_fork_commit_revert(s: PredicateSnapshot, sc: ModificationScenario) -> None:
    s.fork()
    s.fork()
    sc.run_op(s)
    s.commit()
    _expect_state(s, sc.modified, "fork, fork, op, commit")
    s.revert()
    _expect_state(s, sc.initial, "fork, fork, op, commit, revert")


def _mode_fork_fork_revert_commit(s: PredicateSnapshot, sc: ModificationScenario) -> None:
    s.fork()
    sc.run_op(s)
    s.fork()
    s.add_node_info(NodeInfo(EXTRA_NODE))
    s.revert()
    s.commit()
    _expect_state(s, sc.modified, "fork, op, fork, add extra node, revert, commit")


def _mode_cache_fork_commit(s: PredicateSnapshot, sc: ModificationScenario) -> None:
    _prime_caches(s)
    s.fork()
    sc.run_op(s)
    s.commit()
    _expect_state(s, sc.modified, "cache, fork, op, commit")


def _mode_cache_fork_revert(s: PredicateSnapshot, sc: ModificationScenario) -> None:
    _prime_caches(s)
    s.fork()
    _prime_caches(s)
    sc.run_op(s)
    _expect_state(s, sc.modified, "cache, fork, cache, op")
    s.revert()
    _expect_state(s, sc.initial, "cache, fork, cache, op, revert")


def _mode_unforked_commit_revert(s: PredicateSnapshot, sc: ModificationScenario) -> None:
    sc.run_op(s)
    s.commit()
    _expect_state(s, sc.modified, "op, commit (not forked: no-op)")
    s.revert()
    _expect_state(s, sc.modified, "op, commit, revert (not forked: no-op)")


def _mode_fork_commit_revert(s: PredicateSnapshot, sc: ModificationScenario) -> None:
    s.fork()
    sc.run_op(s)
    s.commit()
    s.revert()
    _expect_state(s, sc.modified, "fork, op, commit, revert (committed into the base: no-op)")


def _mode_fork_fork_extra_commit_revert(s: PredicateSnapshot, sc: ModificationScenario) -> None:
    s.fork()
    sc.run_op(s)
    s.fork()
    s.add_node_info(NodeInfo(EXTRA_NODE))
    s.commit()
    _expect_state(s, _with_extra(sc.modified), "fork, op, fork, add extra node, commit")
    s.revert()
    _expect_state(s, sc.initial, "fork, op, fork, add extra node, commit, revert")


def _mode_deep_commit(s: PredicateSnapshot, sc: ModificationScenario) -> None:
    for _ in range(3):
        s.fork()
        _prime_caches(s)
    sc.run_op(s)
    for i in range(3):
        s.commit()
        _expect_state(s, sc.modified, f"fork x3, op, commit x{i + 1}")
    s.revert()
    _expect_state(s, sc.modified, "fork x3, op, commit x3, revert (no-op)")


@attrs.frozen
class ForkMode:
    """How a scenario's op is wrapped in fork/commit/revert and which state is expected
    after each step (CA ``TestForking``'s sub-tests, plus ``extra:`` ones)."""

    name: str
    run: Callable[[PredicateSnapshot, ModificationScenario], None]


FORK_MODES: tuple[ForkMode, ...] = (
    ForkMode("base", _mode_base),
    ForkMode("fork", _mode_fork),
    ForkMode("fork & revert", _mode_fork_revert),
    ForkMode("fork & fork & revert & revert", _mode_fork_fork_revert_revert),
    ForkMode("fork & commit", _mode_fork_commit),
    ForkMode("fork & fork & commit & revert", _mode_fork_fork_commit_revert),
    ForkMode("fork & fork & revert & commit", _mode_fork_fork_revert_commit),
    ForkMode("cache, fork & commit", _mode_cache_fork_commit),
    ForkMode("extra: cache, fork, cache & revert", _mode_cache_fork_revert),
    ForkMode("extra: commit & revert when not forked", _mode_unforked_commit_revert),
    ForkMode("extra: fork & commit & revert", _mode_fork_commit_revert),
    ForkMode("extra: fork & fork & commit & revert", _mode_fork_fork_extra_commit_revert),
    ForkMode("extra: fork x3 & commit x3", _mode_deep_commit),
)
"""Every scenario runs in every mode."""


def _run_modification(
    scenario: ModificationScenario, mode: ForkMode, make_store: StoreFactory
) -> None:
    s = new_snapshot(make_store)
    skipped = s.set_cluster_state(
        scenario.nodes, scenario.pods, csi_snapshot=CsiSnapshot(scenario.csi_nodes)
    )
    _expect_equal("pods skipped by set_cluster_state", skipped, [])
    _expect_state(s, scenario.initial, "initial state")
    mode.run(s, scenario)


# --------------------------------------------------------------------------- set_cluster_state


def _check_set_cluster_state_targets(make_store: StoreFactory) -> None:
    """Pods go to spec.nodeName, else status.nominatedNodeName (CA PR #9607); nodeName wins."""
    s = new_snapshot(make_store)
    a = make_pod("a", node_name="n1")
    b = make_pod("b", nominated_node_name="n2")
    c = make_pod("c", node_name="n1", nominated_node_name="n2")
    skipped = s.set_cluster_state([make_node("n1"), make_node("n2")], [a, b, c])
    _expect_equal("skipped pods", skipped, [])
    a_, b_, c_ = (("default/" + n, 100, 100 * MI) for n in "abc")
    _expect_state(s, {"n1": _ns(a_, c_), "n2": _ns(b_)}, "after set_cluster_state")


def _check_set_cluster_state_skips_unknown(make_store: StoreFactory) -> None:
    """Pods whose node is not in the snapshot are skipped and returned, in input order."""
    s = new_snapshot(make_store)
    x = make_pod("x", node_name="ghost")
    y = make_pod("y")
    z = make_pod("z", nominated_node_name="ghost")
    ok = make_pod("ok", node_name="n1")
    skipped = s.set_cluster_state([make_node("n1")], [x, ok, y, z])
    _expect_true(
        "set_cluster_state returns the skipped pods themselves, in input order",
        len(skipped) == 3 and all(p is q for p, q in zip(skipped, [x, y, z], strict=True)),
    )
    _expect_state(s, {"n1": _ns(("default/ok", 100, 100 * MI))}, "after set_cluster_state")


def _check_set_cluster_state_drops_forks(make_store: StoreFactory) -> None:
    """set_cluster_state resets to an unforked state: revert and commit are no-ops after it."""
    s = new_snapshot(make_store)
    s.set_cluster_state([make_node("old")], [make_pod("p", node_name="old")])
    s.fork()
    s.add_node_info(NodeInfo(make_node("forked")))
    s.fork()
    s.force_add_pod(make_pod("q"), "old")
    new = {"n1": _ns(("default/r", 100, 100 * MI)), "n2": EMPTY}
    s.set_cluster_state([make_node("n1"), make_node("n2")], [make_pod("r", node_name="n1")])
    _expect_state(s, new, "fork, fork, set_cluster_state")
    s.revert()
    _expect_state(s, new, "fork, fork, set_cluster_state, revert (no-op)")
    s.commit()
    s.revert()
    _expect_state(s, new, "..., commit, revert (no-ops)")
    s.fork()
    s.add_node_info(NodeInfo(EXTRA_NODE))
    _expect_state(s, _with_extra(new), "..., fork, add extra node")
    s.revert()
    _expect_state(s, new, "..., fork, add extra node, revert")


def _check_set_cluster_state_clears(make_store: StoreFactory) -> None:
    """``set_cluster_state([], [])`` clears, in the base and in a fork (CA "clear base",
    "clear fork")."""
    s = new_snapshot(make_store)
    s.set_cluster_state([make_node("n1")], [make_pod("p", node_name="n1", pvcs=["claim1"])])
    s.set_cluster_state([], [])
    _expect_state(s, {}, "clear base")
    _expect_true("claim1 still used after clear", not _pvc_used(s, "default/claim1"))
    s.set_cluster_state([make_node("n1")], [make_pod("p", node_name="n1", pvcs=["claim1"])])
    s.fork()
    s.add_node_info(NodeInfo(make_node("n2"), pods=[s.new_pod_info(make_pod("q"))]))
    s.set_cluster_state([], [])
    _expect_state(s, {}, "fork, add, clear")
    s.revert()
    _expect_state(s, {}, "fork, add, clear, revert")
    _expect_true("claim1 still used after clear", not _pvc_used(s, "default/claim1"))


def _check_set_cluster_state_replaces(make_store: StoreFactory) -> None:
    """A second set_cluster_state replaces everything (CA "clear base ... and set a new
    state")."""
    s = new_snapshot(make_store)
    s.set_cluster_state(
        [make_node("a1"), make_node("a2")], [make_pod("p", node_name="a1", pvcs=["claim1"])]
    )
    s.set_cluster_state([make_node("b1")], [make_pod("q", node_name="b1", pvcs=["claim2"])])
    _expect_state(s, {"b1": _ns(("default/q", 100, 100 * MI))}, "after the second state")
    _expect_true("claim1 of the old state still used", not _pvc_used(s, "default/claim1"))
    _expect_true("claim2 of the new state not used", _pvc_used(s, "default/claim2"))


def _check_set_cluster_state_order_and_identity(make_store: StoreFactory) -> None:
    """Within a node, pods keep input order; the Pod objects are stored as given."""
    s = new_snapshot(make_store)
    pods = [make_pod(f"p{i}", node_name="n1" if i % 2 else "n2") for i in range(8)]
    s.set_cluster_state([make_node("n1"), make_node("n2")], pods)
    for name, want in (("n1", pods[1::2]), ("n2", pods[0::2])):
        got = [p.pod for p in s.get_node_info(name).pods]
        _expect_true(
            f"{name}: stored pods are not the input Pod objects in input order",
            len(got) == len(want) and all(a is b for a, b in zip(got, want, strict=True)),
        )


def _check_set_cluster_state_duplicate_node(make_store: StoreFactory) -> None:
    """Two nodes with one name: NodeAlreadyExistsError."""
    s = new_snapshot(make_store)
    _expect_raises(
        "set_cluster_state with a duplicate node",
        lambda: s.set_cluster_state([make_node("n1"), make_node("n1")], []),
        NodeAlreadyExistsError,
    )


def _check_set_cluster_state_many(make_store: StoreFactory) -> None:
    """CA ``TestSetClusterState`` with fixed sizes: 37 nodes, 401 pods round robin; fork, 5
    extra nodes and 53 extra pods, clear in the fork, revert."""
    s = new_snapshot(make_store)
    nodes = [make_node(f"n-{i}") for i in range(37)]
    pods = [make_pod(f"p-{i}", cpu="1m", memory="1", node_name=f"n-{i % 37}") for i in range(401)]
    s.set_cluster_state(nodes, pods)
    want = _round_robin_state([n.name for n in nodes], [(p.key, p.node_name) for p in pods], 1, 1)
    _expect_state(s, want, "after set_cluster_state")
    s.fork()
    extra_nodes = [make_node(f"extra-{i}") for i in range(5)]
    names = [n.name for n in nodes + extra_nodes]
    extra_pods = [
        make_pod(f"extra-{i}", cpu="1m", memory="1", node_name=names[i % len(names)])
        for i in range(53)
    ]
    for n in extra_nodes:
        s.add_node_info(NodeInfo(n))
    for p in extra_pods:
        s.force_add_pod(p, p.node_name)
    all_pods = [(p.key, p.node_name) for p in pods + extra_pods]
    _expect_state(s, _round_robin_state(names, all_pods, 1, 1), "fork, add extra")
    s.set_cluster_state([], [])
    _expect_state(s, {}, "fork, add extra, clear")
    s.revert()
    _expect_state(s, {}, "fork, add extra, clear, revert")


def _round_robin_state(
    node_names: Sequence[str], pods: Sequence[tuple[str, str]], milli_cpu: int, memory: int
) -> dict[str, NodeState]:
    by_node: dict[str, list[tuple[str, int, int]]] = {n: [] for n in node_names}
    for key, node in pods:
        by_node[node].append((key, milli_cpu, memory))
    return {n: _ns(*ps) for n, ps in by_node.items()}


# --------------------------------------------------------------------------- missing/existing nodes

_NODE_404_OPS: dict[
    str, tuple[Callable[[PredicateSnapshot], object], type[Exception], SchedulingErrorType | None]
] = {
    "force_add_pod": (lambda s: s.force_add_pod(make_pod("p1"), "node"), NodeNotFoundError, None),
    "force_remove_pod": (
        lambda s: s.force_remove_pod("default", "p1", "node"),
        NodeNotFoundError,
        None,
    ),
    "schedule_pod": (
        lambda s: s.schedule_pod(make_pod("p1"), "node"),
        SchedulingError,
        SchedulingErrorType.INTERNAL_ERROR,
    ),
    "check_predicates": (
        lambda s: s.check_predicates(make_pod("p1"), "node"),
        SchedulingError,
        SchedulingErrorType.INTERNAL_ERROR,
    ),
    "unschedule_pod": (
        lambda s: s.unschedule_pod("default", "p1", "node"),
        NodeNotFoundError,
        None,
    ),
    "node_infos().get": (lambda s: s.node_infos().get("node"), NodeNotFoundError, None),
    "get_node_info": (lambda s: s.get_node_info("node"), NodeNotFoundError, None),
    "remove_node_info": (lambda s: s.remove_node_info("node"), NodeNotFoundError, None),
    "store.store_pod_info": (
        lambda s: s.store.store_pod_info(PodInfo(make_pod("p1")), "node"),
        NodeNotFoundError,
        None,
    ),
    "store.remove_pod_info": (
        lambda s: s.store.remove_pod_info("default", "p1", "node"),
        NodeNotFoundError,
        None,
    ),
    "store.remove_node_info": (lambda s: s.store.remove_node_info("node"), NodeNotFoundError, None),
}
"""CA ``TestNode404``: everything that must fail for a missing node, and how."""


def _node_404_empty(s: PredicateSnapshot, check: Callable[[str], None]) -> None:
    check("empty snapshot")
    _expect_state(s, {}, "empty snapshot, after the failed op")


def _node_404_removed_in_fork(s: PredicateSnapshot, check: Callable[[str], None]) -> None:
    s.add_node_info(NodeInfo(make_node("node")))
    s.fork()
    s.remove_node_info("node")
    check("removed in a fork")
    s.commit()
    check("removed in a fork, committed")
    _expect_state(s, {}, "after the failed ops")


def _node_404_removed_in_fork_until_revert(
    s: PredicateSnapshot, check: Callable[[str], None]
) -> None:
    s.add_node_info(NodeInfo(make_node("node"), pods=[s.new_pod_info(make_pod("p"))]))
    s.fork()
    s.remove_node_info("node")
    check("removed in a fork")
    s.fork()
    check("removed in a fork, touched again in a nested fork")
    s.revert()
    check("removed in a fork, after reverting the nested fork")
    s.revert()
    _expect_state(s, {"node": _ns(("default/p", 100, 100 * MI))}, "back after the revert")


def _node_404_removed_in_base(s: PredicateSnapshot, check: Callable[[str], None]) -> None:
    s.add_node_info(NodeInfo(make_node("node")))
    s.remove_node_info("node")
    check("removed in the base")
    _expect_state(s, {}, "after the failed op")


def _node_404_added_in_fork_reverted(s: PredicateSnapshot, check: Callable[[str], None]) -> None:
    s.add_node_info(NodeInfo(make_node("other")))
    s.fork()
    s.add_node_info(NodeInfo(make_node("node")))
    s.revert()
    check("added in a fork, reverted")
    _expect_state(s, {"other": EMPTY}, "after the failed op")


_NODE_404_SITUATIONS: dict[str, Callable[[PredicateSnapshot, Callable[[str], None]], None]] = {
    "empty": _node_404_empty,
    "removed in a fork (then committed)": _node_404_removed_in_fork,
    "removed in a fork, gone until reverted": _node_404_removed_in_fork_until_revert,
    "removed in the base": _node_404_removed_in_base,
    "extra: added in a fork, reverted": _node_404_added_in_fork_reverted,
}


def _check_node_404(op_name: str, situation: str, make_store: StoreFactory) -> None:
    op, exc, sched_type = _NODE_404_OPS[op_name]
    s = new_snapshot(make_store)

    def check(step: str) -> None:
        _expect_raises(f"{op_name} ({step})", lambda: op(s), exc, sched_type)

    _NODE_404_SITUATIONS[situation](s, check)


_EXISTING_CLAIM = "default/claim-of-rejected"
_REJECTED_POD = make_pod("rejected", node_name="node", pvcs=["claim-of-rejected"])

_NODE_EXISTS_OPS: dict[str, Callable[[PredicateSnapshot], object]] = {
    "store.store_node_info": lambda s: s.store.store_node_info(NodeInfo(make_node("node"))),
    "add_node_info (with pods)": lambda s: s.add_node_info(
        NodeInfo(make_node("node"), pods=[s.new_pod_info(_REJECTED_POD)])
    ),
}
"""CA ``TestNodeAlreadyExists``: adding a node that is there raises NodeAlreadyExistsError."""


def _node_exists_base(s: PredicateSnapshot) -> None:
    s.add_node_info(NodeInfo(make_node("node")))


def _node_exists_base_forked(s: PredicateSnapshot) -> None:
    s.add_node_info(NodeInfo(make_node("node")))
    s.fork()


def _node_exists_fork(s: PredicateSnapshot) -> None:
    s.fork()
    s.add_node_info(NodeInfo(make_node("node")))


def _node_exists_committed(s: PredicateSnapshot) -> None:
    s.fork()
    s.add_node_info(NodeInfo(make_node("node")))
    s.commit()


def _node_exists_reverted_removal(s: PredicateSnapshot) -> None:
    s.add_node_info(NodeInfo(make_node("node")))
    s.fork()
    s.remove_node_info("node")
    s.revert()


_NODE_EXISTS_SITUATIONS: dict[str, Callable[[PredicateSnapshot], None]] = {
    "base": _node_exists_base,
    "base, forked": _node_exists_base_forked,
    "fork": _node_exists_fork,
    "committed": _node_exists_committed,
    "extra: removal reverted": _node_exists_reverted_removal,
}


def _check_node_exists(op_name: str, situation: str, make_store: StoreFactory) -> None:
    s = new_snapshot(make_store)
    _NODE_EXISTS_SITUATIONS[situation](s)
    before = s.get_node_info("node")
    op = _NODE_EXISTS_OPS[op_name]
    _expect_raises(f"{op_name} ({situation})", lambda: op(s), NodeAlreadyExistsError)
    _expect_state(s, {"node": EMPTY}, "after the failed op")
    _expect_true("the stored NodeInfo was replaced", s.get_node_info("node") is before)
    _expect_true(
        "a rejected NodeInfo's pods registered their PVCs", not _pvc_used(s, _EXISTING_CLAIM)
    )


# --------------------------------------------------------------------------- PVC usage


def _pvc_used(s: PredicateSnapshot, key: str) -> bool:
    return s.storage_infos().is_pvc_used_by_pods(key)


_PVC_NODE = make_node("node")
_PVC_POD1 = make_pod("pod1", node_name="node", pvcs=["claim1"])
_PVC_POD2 = make_pod("pod2", node_name="node", pvcs=["claim1", "claim2"])
_NON_PVC_POD = make_pod(
    "pod3", node_name="node", other_volumes=[{"name": "v1", "nfs": {"server": "s", "path": "/"}}]
)

_PVC_TABLE: dict[str, tuple[tuple[Pod, ...], str, bool, str, bool]] = {
    # desc: (pods, claim, exists, pod to remove, exists after removal)
    "pvc new pod with volume fetch": ((_PVC_POD1,), "claim1", True, "", False),
    "pvc new pod with incorrect volume fetch": ((_PVC_POD1,), "incorrect-claim", False, "", False),
    "new pod with non-pvc volume fetch": ((_NON_PVC_POD,), "incorrect-claim", False, "", False),
    "pvc new pod with delete volume fetch": ((_PVC_POD1,), "claim1", True, "pod1", False),
    "pvc two pods with duplicated volume, delete one pod, fetch": (
        (_PVC_POD1, _PVC_POD2),
        "claim1",
        True,
        "pod1",
        True,
    ),
    "pvc and non-pvc pods, fetch and delete non-pvc pod": (
        (_PVC_POD1, _NON_PVC_POD),
        "claim1",
        True,
        "pod3",
        True,
    ),
    "pvc and non-pvc pods, delete pvc pod and fetch": (
        (_PVC_POD1, _NON_PVC_POD),
        "claim1",
        True,
        "pod1",
        False,
    ),
}
"""CA ``TestPVCUsedByPods``."""


def _check_pvc_table(desc: str, make_store: StoreFactory) -> None:
    pods, claim, exists, remove, exists_after = _PVC_TABLE[desc]
    s = new_snapshot(make_store)
    s.add_node_info(NodeInfo(_PVC_NODE, pods=[s.new_pod_info(p) for p in pods]))
    key = f"default/{claim}"
    _expect_equal(f"is_pvc_used_by_pods({key!r})", _pvc_used(s, key), exists)
    if remove:
        s.force_remove_pod("default", remove, "node")
        _expect_equal(
            f"is_pvc_used_by_pods({key!r}) after removing {remove}", _pvc_used(s, key), exists_after
        )


def _check_pvc_fork_revert(make_store: StoreFactory) -> None:
    """CA ``TestPVCClearAndFork`` "fork and revert", plus commit."""
    s = new_snapshot(make_store)
    s.add_node_info(NodeInfo(_PVC_NODE, pods=[s.new_pod_info(_PVC_POD1)]))
    _expect_true("claim1 unused in the base", _pvc_used(s, "default/claim1"))
    s.fork()
    _expect_true("claim1 unused after fork", _pvc_used(s, "default/claim1"))
    s.force_add_pod(_PVC_POD2, "node")
    _expect_true("claim2 unused after adding pod2 in the fork", _pvc_used(s, "default/claim2"))
    s.revert()
    _expect_true("claim2 still used after revert", not _pvc_used(s, "default/claim2"))
    _expect_true("claim1 unused after revert", _pvc_used(s, "default/claim1"))
    s.fork()
    s.force_add_pod(_PVC_POD2, "node")
    s.force_remove_pod("default", "pod1", "node")
    s.commit()
    _expect_true("claim2 unused after commit", _pvc_used(s, "default/claim2"))
    _expect_true("claim1 unused after commit (pod2 uses it)", _pvc_used(s, "default/claim1"))
    s.force_remove_pod("default", "pod2", "node")
    _expect_true("claim1 used by nobody", not _pvc_used(s, "default/claim1"))


def _check_pvc_set_cluster_state(make_store: StoreFactory) -> None:
    """CA ``TestPVCClearAndFork`` "clear snapshot", plus pods loaded by set_cluster_state."""
    s = new_snapshot(make_store)
    s.add_node_info(NodeInfo(_PVC_NODE, pods=[s.new_pod_info(_PVC_POD1)]))
    s.set_cluster_state([], [])
    _expect_true("claim1 used after clear", not _pvc_used(s, "default/claim1"))
    s.set_cluster_state([_PVC_NODE], [_PVC_POD2])
    _expect_true("claim2 unused after set_cluster_state", _pvc_used(s, "default/claim2"))
    s.fork()
    s.set_cluster_state([_PVC_NODE], [_PVC_POD1])
    s.revert()
    _expect_true(
        "claim2 used after a new state (revert is a no-op)", not _pvc_used(s, "default/claim2")
    )
    _expect_true("claim1 unused after a new state", _pvc_used(s, "default/claim1"))


def _check_pvc_node_removal(make_store: StoreFactory) -> None:
    """Removing a node drops its pods' claims; reverting the removal brings them back;
    a claim used on two nodes stays used until both pods are gone."""
    s = new_snapshot(make_store)
    other = make_pod("pod1b", node_name="node2", pvcs=["claim1"])
    s.set_cluster_state([_PVC_NODE, make_node("node2")], [_PVC_POD1, other])
    s.fork()
    s.remove_node_info("node")
    _expect_true("claim1 unused while pod1b still uses it", _pvc_used(s, "default/claim1"))
    s.remove_node_info("node2")
    _expect_true("claim1 used after removing both nodes", not _pvc_used(s, "default/claim1"))
    s.revert()
    _expect_true("claim1 unused after reverting the removals", _pvc_used(s, "default/claim1"))
    s.unschedule_pod("default", "pod1", "node")
    s.unschedule_pod("default", "pod1b", "node2")
    _expect_true("claim1 used after unscheduling both pods", not _pvc_used(s, "default/claim1"))


def _check_pvc_namespaced(make_store: StoreFactory) -> None:
    """Keys are ``namespace/claim`` of the pod's namespace."""
    s = new_snapshot(make_store)
    pod = make_pod("p", namespace="team", node_name="node", pvcs=["claim1"])
    s.set_cluster_state([_PVC_NODE], [pod])
    _expect_true("team/claim1 unused", _pvc_used(s, "team/claim1"))
    _expect_true("default/claim1 used", not _pvc_used(s, "default/claim1"))
    _expect_true("bare claim1 used", not _pvc_used(s, "claim1"))


def _check_pvc_ephemeral(make_store: StoreFactory) -> None:
    """Generic ephemeral volumes are not counted: kube-scheduler's NodeInfo.PVCRefCounts and
    CA's stores count ``persistentVolumeClaim`` volumes only."""
    s = new_snapshot(make_store)
    pod = make_pod("web-0", node_name="node", ephemeral_volumes=["scratch"])
    s.set_cluster_state([_PVC_NODE], [])
    s.force_add_pod(pod, "node")
    _expect_true("default/web-0-scratch used", not _pvc_used(s, "default/web-0-scratch"))
    _expect_true("default/scratch used", not _pvc_used(s, "default/scratch"))


# --------------------------------------------------------------------------- identity and isolation


def _check_get_identity(make_store: StoreFactory) -> None:
    """get_node_info returns the stored object itself, every time, from every getter."""
    s = new_snapshot(make_store)
    s.set_cluster_state([make_node("n1"), make_node("n2")], [make_pod("p", node_name="n1")])
    for step in ("base", "fork"):
        a = s.get_node_info("n1")
        _expect_true(
            f"{step}: get_node_info(n) is not get_node_info(n)", s.get_node_info("n1") is a
        )
        _expect_true(
            f"{step}: node_infos().get(n) is not get_node_info(n)", s.node_infos().get("n1") is a
        )
        s.fork()
        s.force_add_pod(make_pod("q"), "n1")
    a = s.get_node_info("n1")
    _expect_true(
        "after a write: get_node_info(n) is not get_node_info(n)", s.get_node_info("n1") is a
    )


def _check_list_identity(make_store: StoreFactory) -> None:
    """Every listed NodeInfo is the one get_node_info returns; the list object is reused while
    nothing changes (reads, check_predicates, failed schedules and diagnose change nothing)."""
    s = new_snapshot(make_store)
    s.set_cluster_state([make_node(f"n{i}") for i in range(1, 4)], [make_pod("p", node_name="n1")])
    for step in ("base", "fork", "fork after writes"):
        if step == "fork":
            s.fork()
        elif step == "fork after writes":
            s.force_add_pod(make_pod("q"), "n2")
            s.remove_node_info("n3")
            s.add_node_info(NodeInfo(make_node("n4")))
        check_snapshot_consistency(s)  # listed objects are the ones get_node_info returns
        listed = s.list_node_infos()
        s.get_node_info("n1")
        s.storage_infos().is_pvc_used_by_pods("default/claim1")
        s.node_infos().have_pods_with_affinity_list()
        s.check_predicates(make_pod("r"), "n1")
        _expect_raises(
            "schedule_pod of a too large pod",
            lambda: s.schedule_pod(make_pod("big", cpu="1000"), "n1"),
            SchedulingError,
        )
        s.diagnose(make_pod("big", cpu="1000"))
        _expect_true(
            f"{step}: list_node_infos() changed without a write", s.list_node_infos() is listed
        )


def _check_add_node_info_identity(make_store: StoreFactory) -> None:
    """add_node_info stores the caller's NodeInfo and PodInfo objects themselves."""
    s = new_snapshot(make_store)
    for step in ("base", "fork"):
        if step == "fork":
            s.fork()
        name = f"node-{step}"
        pi1, pi2 = PodInfo(make_pod(f"a-{step}")), PodInfo(make_pod(f"b-{step}"))
        ni = NodeInfo(make_node(name), pods=[pi1, pi2])
        s.add_node_info(ni)
        _expect_true(
            f"{step}: get_node_info is not the added NodeInfo", s.get_node_info(name) is ni
        )
        _expect_true(
            f"{step}: list_node_infos does not hold the added NodeInfo",
            any(x is ni for x in s.list_node_infos()),
        )
        got = s.get_node_info(name).pods
        _expect_true(
            f"{step}: pods are not the added PodInfos",
            len(got) == 2 and got[0] is pi1 and got[1] is pi2,
        )


def _check_pod_identity(make_store: StoreFactory) -> None:
    """force_add_pod / schedule_pod store the given Pod object (spec.nodeName untouched)."""
    s = new_snapshot(make_store)
    s.set_cluster_state([make_node("n1")], [])
    for step in ("base", "fork"):
        if step == "fork":
            s.fork()
        forced = make_pod(f"forced-{step}")
        scheduled = make_pod(f"scheduled-{step}")
        s.force_add_pod(forced, "n1")
        s.schedule_pod(scheduled, "n1")
        stored = {p.pod.name: p.pod for p in s.get_node_info("n1").pods}
        _expect_true(f"{step}: force_add_pod stored a copy", stored[forced.name] is forced)
        _expect_true(f"{step}: schedule_pod stored a copy", stored[scheduled.name] is scheduled)
        _expect_equal(f"{step}: spec.nodeName of the scheduled pod", scheduled.node_name, "")


def _check_fork_shares_objects(make_store: StoreFactory) -> None:
    """A fork shares the Node and PodInfo objects of the layer below (Snapshot semantics)."""
    s = new_snapshot(make_store)
    pi = PodInfo(make_pod("p"))
    node = make_node("n1")
    s.add_node_info(NodeInfo(node, pods=[pi]))
    s.fork()
    s.force_add_pod(make_pod("q"), "n1")
    ni = s.get_node_info("n1")
    _expect_true("the fork's NodeInfo has another Node object", ni.node is node)
    _expect_true("the fork's NodeInfo has another PodInfo object", any(p is pi for p in ni.pods))


def _check_revert_restores_objects(make_store: StoreFactory) -> None:
    """After revert, get/list return the very objects of the layer below."""
    s = new_snapshot(make_store)
    s.set_cluster_state([make_node("n1"), make_node("n2")], [make_pod("p", node_name="n1")])
    before = {ni.node.name: ni for ni in s.list_node_infos() if ni.node is not None}
    s.fork()
    s.force_add_pod(make_pod("q"), "n1")
    s.force_remove_pod("default", "p", "n1")
    s.remove_node_info("n2")
    s.add_node_info(NodeInfo(make_node("n2")))
    s.revert()
    for name, ni in before.items():
        _expect_true(
            f"{name}: revert did not restore the stored object", s.get_node_info(name) is ni
        )
    _expect_true(
        "list_node_infos after revert does not hold the restored objects",
        sorted(map(id, s.list_node_infos())) == sorted(map(id, before.values())),
    )


def _node_view(ni: NodeInfo) -> tuple[object, ...]:
    return (
        tuple(id(p) for p in ni.pods),
        tuple(id(p) for p in ni.pods_with_affinity),
        tuple(id(p) for p in ni.pods_with_required_anti_affinity),
        ni.requested.milli_cpu,
        ni.requested.memory,
        ni.non_zero_requested.milli_cpu,
        ni.non_zero_requested.memory,
        len(ni.used_ports),
        dict(ni.pvc_ref_counts),
        ni.generation,
    )


def _check_fork_isolation(make_store: StoreFactory) -> None:
    """Writes in a fork never change NodeInfo objects of a layer below (a caller holding one
    keeps seeing the old state), at any depth."""
    s = new_snapshot(make_store)
    port_pod = make_pod(
        "ports",
        node_name="n1",
        pvcs=["claim1"],
        spec={
            "containers": [
                {"name": "c", "ports": [{"containerPort": 80, "hostPort": 8080}]},
            ]
        },
    )
    s.set_cluster_state(
        [make_node("n1"), make_node("n2")], [port_pod, make_pod("p", node_name="n1")]
    )
    base = s.get_node_info("n1")
    base_view = _node_view(base)
    s.fork()
    s.force_add_pod(ANTI_AFFINITY_POD, "n1")
    s.force_remove_pod("default", "ports", "n1")
    s.schedule_pod(make_pod("q"), "n1")
    _expect_equal("base NodeInfo changed by writes in a fork", _node_view(base), base_view)
    layer1 = s.get_node_info("n1")
    layer1_view = _node_view(layer1)
    s.fork()
    s.unschedule_pod("default", "q", "n1")
    s.force_add_pod(port_pod, "n1")
    _expect_equal("fork-1 NodeInfo changed by writes in fork 2", _node_view(layer1), layer1_view)
    _expect_equal("base NodeInfo changed by writes in fork 2", _node_view(base), base_view)
    s.commit()
    _expect_equal("base NodeInfo changed by commit into fork 1", _node_view(base), base_view)
    s.revert()
    _expect_true("revert did not restore the base NodeInfo", s.get_node_info("n1") is base)
    _expect_equal("base NodeInfo changed after revert", _node_view(base), base_view)


# --------------------------------------------------------------------------- order and round robin


def _check_list_order(make_store: StoreFactory) -> None:
    """NodeInfos are listed in insertion order: set_cluster_state's input order, then nodes
    added with add_node_info, also when added in a fork, and after commit."""
    s = new_snapshot(make_store)
    s.set_cluster_state([make_node(n) for n in ("c", "a", "d")], [])
    _expect_equal("order after set_cluster_state", _names(s.list_node_infos()), ["c", "a", "d"])
    s.add_node_info(NodeInfo(make_node("b")))
    _expect_equal("order after add_node_info", _names(s.list_node_infos()), ["c", "a", "d", "b"])
    s.fork()
    s.force_add_pod(make_pod("p"), "a")
    s.add_node_info(NodeInfo(make_node("e")))
    s.add_node_info(NodeInfo(make_node("0")))
    want = ["c", "a", "d", "b", "e", "0"]
    _expect_equal("order in a fork", _names(s.list_node_infos()), want)
    s.commit()
    _expect_equal("order after commit", _names(s.list_node_infos()), want)


def _schedule_many(s: PredicateSnapshot, n: int) -> list[str]:
    return [s.schedule_pod_on_any_node_matching(make_pod(f"rr-{i}")) for i in range(n)]


def _check_round_robin(make_store: StoreFactory) -> None:
    """CA NewLastIndexOrderMapping(1): on n1..n4 the very first search starts at index 1, the
    next one after the node chosen last: n2, n3, n4, n1, n2, n3."""
    s = new_snapshot(make_store)
    s.set_cluster_state([make_node(f"n{i}") for i in range(1, 5)], [])
    _expect_equal("chosen nodes", _schedule_many(s, 6), ["n2", "n3", "n4", "n1", "n2", "n3"])


def _check_round_robin_cordoned(make_store: StoreFactory) -> None:
    """Cordoned (spec.unschedulable) nodes are skipped without running Filter."""
    s = new_snapshot(make_store)
    nodes = [make_node(f"n{i}", unschedulable=i == 3) for i in range(1, 5)]
    s.set_cluster_state(nodes, [])
    _expect_equal("chosen nodes", _schedule_many(s, 5), ["n2", "n4", "n1", "n2", "n4"])


def _check_round_robin_nodes_added_in_fork(make_store: StoreFactory) -> None:
    """Nodes added in a fork join the rotation in insertion order."""
    s = new_snapshot(make_store)
    s.set_cluster_state([make_node("n1"), make_node("n2")], [])
    s.fork()
    s.add_node_info(NodeInfo(make_node("n3")))
    s.add_node_info(NodeInfo(make_node("n4")))
    _expect_equal("chosen nodes", _schedule_many(s, 5), ["n2", "n3", "n4", "n1", "n2"])


def _check_round_robin_across_revert(make_store: StoreFactory) -> None:
    """The rotation belongs to the snapshot's plugin runner, not to a layer: it goes on
    after a revert."""
    s = new_snapshot(make_store)
    s.set_cluster_state([make_node(f"n{i}") for i in range(1, 5)], [])
    s.fork()
    got = _schedule_many(s, 2)
    s.revert()
    got += _schedule_many(s, 2)
    _expect_equal("chosen nodes", got, ["n2", "n3", "n4", "n1"])
    _expect_state(
        s,
        {
            "n1": _ns(("default/rr-1", 100, 100 * MI)),
            "n2": EMPTY,
            "n3": EMPTY,
            "n4": _ns(("default/rr-0", 100, 100 * MI)),
        },
        "after revert and two more pods",
    )


def _check_clear(make_store: StoreFactory) -> None:
    """clear() empties the snapshot and drops all forks."""
    s = new_snapshot(make_store)
    s.set_cluster_state([make_node("n1")], [make_pod("p", node_name="n1", pvcs=["claim1"])])
    s.fork()
    s.add_node_info(NodeInfo(make_node("n2")))
    s.clear()
    _expect_state(s, {}, "fork, add, clear")
    s.revert()
    _expect_state(s, {}, "fork, add, clear, revert (no-op)")
    _expect_true("claim1 used after clear", not _pvc_used(s, "default/claim1"))
    s.add_node_info(NodeInfo(make_node("n1")))
    _expect_state(s, {"n1": EMPTY}, "add after clear")


# --------------------------------------------------------------------------- CSI


def _check_csi_set_cluster_state(make_store: StoreFactory) -> None:
    """set_cluster_state gives each NodeInfo the CSINode named like its node (None without
    one) and keeps the given CSI snapshot itself; a second call replaces it."""
    s = new_snapshot(make_store)
    csi = CsiSnapshot([CSINode("n1")])
    s.set_cluster_state([make_node("n1"), make_node("n2")], [], csi_snapshot=csi)
    _expect_true("the given CSI snapshot is not used", s.csi_snapshot is csi)
    _expect_true("n1's NodeInfo lacks its CSINode", s.get_node_info("n1").csi_node is csi.get("n1"))
    _expect_true("n2 got a CSINode", s.get_node_info("n2").csi_node is None)
    _expect_true("get_csi_node (the plugins' CSIManager)", s.get_csi_node("n1") is csi.get("n1"))
    s.set_cluster_state([make_node("n2")], [])
    _expect_equal("CSINodes after a new state without any", list(s.list_csi_nodes()), [])


def _check_csi_copies_keep_csi_node(make_store: StoreFactory) -> None:
    """NodeInfo.snapshot() and the store's copy-on-write copies keep the CSINode (a CA bug
    lost it on copies), through fork, commit and revert."""
    c = SPECIAL_CSI
    _expect_true(
        "NodeInfo.snapshot() lost csi_node",
        NodeInfo(SPECIAL_NODE, csi_node=c).snapshot().csi_node is c,
    )
    s = new_snapshot(make_store)
    s.set_cluster_state([SPECIAL_NODE], [], csi_snapshot=CsiSnapshot([c]))
    base = s.get_node_info("special")
    s.fork()
    s.force_add_pod(SPECIAL_POD, "special")
    s.fork()
    s.force_add_pod(OTHER_POD, "special")
    copy = s.get_node_info("special")
    _expect_true("the fork wrote into the base NodeInfo", copy is not base)
    _expect_true("the copy in the fork lost the CSINode", copy.csi_node is c)
    s.commit()
    _expect_true(
        "the committed NodeInfo lost the CSINode", s.get_node_info("special").csi_node is c
    )
    s.revert()
    _expect_true("the reverted NodeInfo lost the CSINode", s.get_node_info("special").csi_node is c)
    _expect_state(s, {"special": _csi(EMPTY)}, "fork, add, fork, add, commit, revert")


def _check_csi_clear(make_store: StoreFactory) -> None:
    """clear and set_cluster_state([], []) drop the CSINodes, also when forked, for good."""
    s = new_snapshot(make_store)
    s.set_cluster_state([SPECIAL_NODE], [], csi_snapshot=CsiSnapshot([SPECIAL_CSI]))
    s.fork()
    s.add_node_info(NodeInfo(OTHER_NODE, csi_node=CSINode("other")))
    s.clear()
    s.revert()
    _expect_equal("CSINodes after fork, add, clear, revert", list(s.list_csi_nodes()), [])
    s.set_cluster_state([SPECIAL_NODE], [], csi_snapshot=CsiSnapshot([SPECIAL_CSI]))
    s.fork()
    s.set_cluster_state([], [])
    s.revert()
    _expect_equal("CSINodes after fork, clear by state, revert", list(s.list_csi_nodes()), [])
    s.add_node_info(NodeInfo(SPECIAL_NODE, csi_node=SPECIAL_CSI))
    _expect_state(s, {"special": _csi(EMPTY)}, "add after clear")


def _check_csi_volume_limit_in_fork(make_store: StoreFactory) -> None:
    """The volume limit follows the CSI snapshot through forks: a node added in a fork with a
    CSINode limits volumes there; after revert the node and its CSINode are gone."""
    s = new_snapshot(make_store)
    s.set_cluster_state([], [])
    s.fork()
    s.add_node_info(NodeInfo(SPECIAL_NODE, csi_node=SPECIAL_CSI))
    s.schedule_pod(EBS_POD_A, "special")
    _expect_raises(
        "second EBS volume over a limit of 1",
        lambda: s.schedule_pod(EBS_POD_B, "special"),
        SchedulingError,
        SchedulingErrorType.FAILING_PREDICATE,
    )
    s.revert()
    _expect_equal("CSINodes after revert", list(s.list_csi_nodes()), [])
    s.add_node_info(NodeInfo(SPECIAL_NODE))  # no CSINode now: no limit
    s.schedule_pod(EBS_POD_A, "special")
    s.schedule_pod(EBS_POD_B, "special")
    _expect_state(s, {"special": _ns(_EA, _EB)}, "two EBS volumes without a CSINode")


# --------------------------------------------------------------------------- the suite


@attrs.frozen
class ConformanceCase:
    """One self-contained check of a store.

    Attributes:
        name: unique, e.g. ``modification: schedule pod [fork & revert]``.
        check: runs the check on stores from the factory; raises AssertionError.
        invariant: what the check is a variant of (e.g. ``modification: schedule pod``,
            shared by its fork modes); `run_store_conformance` reports one failure per
            invariant. Empty: the name.
    """

    name: str
    check: Callable[[StoreFactory], None] = attrs.field(repr=False)
    invariant: str = ""

    def run(self, make_store: StoreFactory) -> None:
        """Run the check against stores built by ``make_store``."""
        self.check(make_store)


def _cases() -> tuple[ConformanceCase, ...]:
    out = [
        ConformanceCase(
            f"modification: {sc.name} [{mode.name}]",
            functools.partial(_run_modification, sc, mode),
            f"modification: {sc.name}",
        )
        for sc in MODIFICATION_SCENARIOS
        for mode in FORK_MODES
    ]
    out += [
        ConformanceCase(
            f"node 404: {op} [{sit}]",
            functools.partial(_check_node_404, op, sit),
            f"node 404: {op}",
        )
        for op in _NODE_404_OPS
        for sit in _NODE_404_SITUATIONS
    ]
    out += [
        ConformanceCase(
            f"node already exists: {op} [{sit}]",
            functools.partial(_check_node_exists, op, sit),
            f"node already exists: {op}",
        )
        for op in _NODE_EXISTS_OPS
        for sit in _NODE_EXISTS_SITUATIONS
    ]
    out += [
        ConformanceCase(f"pvc used by pods: {desc}", functools.partial(_check_pvc_table, desc))
        for desc in _PVC_TABLE
    ]
    singles: list[tuple[str, Callable[[StoreFactory], None]]] = [
        (
            "set_cluster_state: pods go to nodeName, else nominatedNodeName",
            _check_set_cluster_state_targets,
        ),
        (
            "set_cluster_state: pods of unknown nodes are skipped and returned",
            _check_set_cluster_state_skips_unknown,
        ),
        ("set_cluster_state: drops all forks", _check_set_cluster_state_drops_forks),
        ("set_cluster_state: clear in base and in a fork", _check_set_cluster_state_clears),
        ("set_cluster_state: replaces the previous state", _check_set_cluster_state_replaces),
        ("set_cluster_state: pod order and identity", _check_set_cluster_state_order_and_identity),
        ("set_cluster_state: duplicate node names", _check_set_cluster_state_duplicate_node),
        ("set_cluster_state: many nodes and pods, fork, clear", _check_set_cluster_state_many),
        ("pvc used by pods: fork, revert, commit", _check_pvc_fork_revert),
        ("pvc used by pods: set_cluster_state", _check_pvc_set_cluster_state),
        ("pvc used by pods: node removal and unschedule", _check_pvc_node_removal),
        ("pvc used by pods: namespaced keys", _check_pvc_namespaced),
        ("pvc used by pods: ephemeral volumes", _check_pvc_ephemeral),
        ("identity: get_node_info returns the stored object", _check_get_identity),
        ("identity: list_node_infos returns the stored objects", _check_list_identity),
        ("identity: add_node_info stores the caller's objects", _check_add_node_info_identity),
        ("identity: pods are stored as given", _check_pod_identity),
        ("identity: a fork shares Node and PodInfo objects", _check_fork_shares_objects),
        ("identity: revert restores the stored objects", _check_revert_restores_objects),
        ("isolation: writes in a fork leave lower layers' objects alone", _check_fork_isolation),
        ("order: NodeInfos are listed in insertion order", _check_list_order),
        ("round robin: n2, n3, n4, n1, ...", _check_round_robin),
        ("round robin: cordoned nodes are skipped", _check_round_robin_cordoned),
        ("round robin: nodes added in a fork", _check_round_robin_nodes_added_in_fork),
        ("round robin: continues across revert", _check_round_robin_across_revert),
        ("clear: empties and drops forks", _check_clear),
        ("csi: set_cluster_state attaches CSINodes by node name", _check_csi_set_cluster_state),
        ("csi: NodeInfo copies keep the CSINode", _check_csi_copies_keep_csi_node),
        ("csi: clear and set_cluster_state drop CSINodes", _check_csi_clear),
        ("csi: the volume limit follows forks", _check_csi_volume_limit_in_fork),
    ]
    out += [ConformanceCase(name, fn) for name, fn in singles]
    return tuple(out)


CONFORMANCE_CASES: tuple[ConformanceCase, ...] = _cases()
"""Every check of the suite: each modification scenario in each fork mode, then the
node-404, node-exists, PVC, set_cluster_state, identity, isolation, order, round-robin and CSI
checks."""


def run_store_conformance(
    make_store: StoreFactory, cases: Iterable[ConformanceCase] | None = None
) -> None:
    """Run the conformance cases (default: `CONFORMANCE_CASES`) on stores from
    ``make_store`` (e.g. the store class).

    Raises:
        AssertionError: one ``- `` item per broken invariant: its first failing case and
            message (more lines indented), and how many other variants of it (fork modes,
            situations) failed too.
    """
    failed: dict[str, list[str]] = {}
    for case in CONFORMANCE_CASES if cases is None else cases:
        try:
            case.run(make_store)
        except AssertionError as e:
            message = f"{case.name}: {e}"
        except Exception as e:
            message = f"{case.name}: unexpected {type(e).__name__}: {e}"
        else:
            continue
        failed.setdefault(case.invariant or case.name, []).append(message)
    if failed:
        lines = []
        for messages in failed.values():
            more = f" (and {len(messages) - 1} more variant(s))" if len(messages) > 1 else ""
            first, _, rest = messages[0].partition("\n")
            lines.append(
                f"- {first}{more}"
                + (f"\n  {rest.replace(chr(10), chr(10) + '  ')}" if rest else "")
            )
        raise AssertionError(
            f"{sum(map(len, failed.values()))} store conformance case(s) failed, "
            f"{len(failed)} broken invariant(s):\n" + "\n".join(lines)
        )
