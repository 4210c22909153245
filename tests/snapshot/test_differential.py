"""Differential property test: `DeltaSnapshotStore` behaves exactly like `BasicSnapshotStore`.

A hypothesis `RuleBasedStateMachine` drives two `PredicateSnapshot` objects side by side, the
reference over `BasicSnapshotStore` (CA ``store/basic.go``: "simple, reference
implementation") and the one under test over `DeltaSnapshotStore` (CA ``store/delta.go``),
both with the default profile. Every operation is applied to both; its outcome (return value,
or exception type and message) must match, and after every step the two snapshots must show
the same state: node names in list order, each node's pods, requested cpu/memory and pod
count, the pod-affinity listers, PVC usage, fork depth, and the lister consistency checks of
`schedsim.testing.check_snapshot_consistency`.

Each snapshot keeps its own round-robin position for the any-node search; since both see the
same operations and list nodes in the same order, they must choose the same node.

The invariant reads the whole state after every step, which primes every cache of the
listers. The ``burst``, ``transaction`` and ``write_then_layer_op`` rules therefore apply
several operations (writes, forks, commits, reverts and reads mixed) with no check in
between, so sequences such as "write in a fork, commit without reading" also run with cold
caches.

Operations pick their nodes mostly among listed nodes and the last nodes operated on, so that
sequences touching one node across layers (remove it in a fork, then write to it; modify it
in two nested forks; ...) are common; the runs start from 2-5 nodes and 0-2 forks.

Size: ``SCHEDSIM_DIFFERENTIAL_EXAMPLES`` (default 100) sequences of up to
``SCHEDSIM_DIFFERENTIAL_STEPS`` (default 50) steps, a few seconds;
``benchmarks/test_differential_long.py`` runs the same machine much longer. A failure is
shrunk to a short sequence, printed as the calls to replay.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import logging
import os
from collections.abc import Callable, Sequence
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from schedsim.api.core import Node, Pod
from schedsim.framework import Framework, Handle, default_profile
from schedsim.framework.runtime import discover_plugins
from schedsim.snapshot import (
    BasicSnapshotStore,
    ClusterSnapshotStore,
    DeltaSnapshotStore,
    NodeInfo,
    PredicateSnapshot,
    SchedulingError,
)
from schedsim.testing import check_snapshot_consistency, dump_state, make_node

EXAMPLES = int(os.environ.get("SCHEDSIM_DIFFERENTIAL_EXAMPLES", "100"))
STEPS = int(os.environ.get("SCHEDSIM_DIFFERENTIAL_STEPS", "50"))

NODE_NAMES = tuple(f"n{i}" for i in range(6))
"""The node name pool: small, so adds hit existing names and removed nodes come back."""
MISSING_NODE = "no-such-node"
NAMESPACES = ("default", "other")
CLAIMS = ("claim-a", "claim-b", "claim-c")
PVC_KEYS = tuple(f"{ns}/{c}" for ns in NAMESPACES for c in CLAIMS)
"""Every PVC key a generated pod can use; all are checked after every step."""

TAINT = {"key": "dedicated", "value": "x", "effect": "NoSchedule"}
TOLERATION = {"key": "dedicated", "operator": "Equal", "value": "x", "effect": "NoSchedule"}
ANTI_AFFINITY = {
    "podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {
                "labelSelector": {"matchLabels": {"app": "anti"}},
                "topologyKey": "kubernetes.io/hostname",
            }
        ]
    }
}


# --------------------------------------------------------------------------- object specs


@dataclasses.dataclass(frozen=True)
class NodeSpec:
    """A node to build (hypothesis prints these in a failing sequence)."""

    cpu: str
    memory: str
    max_pods: int
    zone: str
    unschedulable: bool = False
    tainted: bool = False

    def build(self, name: str) -> Node:
        return make_node(
            name,
            cpu=self.cpu,
            memory=self.memory,
            pods=self.max_pods,
            unschedulable=self.unschedulable,
            taints=[TAINT] if self.tainted else [],
            labels={"zone": self.zone, "kubernetes.io/hostname": name},
        )


@dataclasses.dataclass(frozen=True)
class PodSpec:
    """A pod to build; its name comes from the machine's counter (unique per run)."""

    cpu: str | None
    memory: str | None
    namespace: str = "default"
    pvcs: tuple[str, ...] = ()
    zone: str | None = None
    anti_affinity: bool = False
    host_port: int = 0
    tolerates: bool = False
    pinned: int | None = None  # spec.nodeName = NODE_NAMES[pinned] (NodeName plugin)

    def build(self, name: str, node_name: str = "", nominated_node_name: str = "") -> Pod:
        requests = {k: v for k, v in (("cpu", self.cpu), ("memory", self.memory)) if v}
        container: dict[str, Any] = {"name": "c", "resources": {"requests": requests}}
        if self.host_port:
            container["ports"] = [{"containerPort": 80, "hostPort": self.host_port}]
        if not node_name and self.pinned is not None:
            node_name = NODE_NAMES[self.pinned]
        spec: dict[str, Any] = {
            "nodeName": node_name,
            "containers": [container],
            "volumes": [
                {"name": f"pvc-{i}", "persistentVolumeClaim": {"claimName": c}}
                for i, c in enumerate(self.pvcs)
            ],
        }
        if self.zone is not None:
            spec["nodeSelector"] = {"zone": self.zone}
        if self.tolerates:
            spec["tolerations"] = [TOLERATION]
        if self.anti_affinity:
            spec["affinity"] = ANTI_AFFINITY
        return Pod.from_manifest(
            {
                "metadata": {
                    "name": name,
                    "namespace": self.namespace,
                    "labels": {"app": "anti"} if self.anti_affinity else {},
                },
                "spec": spec,
                "status": {"nominatedNodeName": nominated_node_name},
            }
        )


node_idx = st.integers(0, len(NODE_NAMES) - 1)
picks = st.integers(0, 50)
rarely = st.sampled_from([False] * 5 + [True])
NODE_REFS = ("listed", "listed", "recent", "recent", "absent", "missing")
"""How a node for a pod or node operation is picked: a listed one, one of the last nodes
operated on (so that sequences like "remove X, write to X" or "write to X in a fork, then in
the next fork" are common), a pool name that is not listed (e.g. one just removed, maybe
still visible in a layer below), or a name never used. An empty choice falls back to the
whole pool (see `DifferentialMachine._node`)."""
NodeRef = tuple[str, int]
"""(kind, pick): kind from NODE_REFS (or "nameless"), pick indexes the candidates."""
node_refs = st.tuples(st.sampled_from(NODE_REFS), picks)
new_node_refs = st.tuples(
    st.sampled_from(["absent"] * 4 + ["recent"] * 2 + ["listed", "nameless"]), picks
)
"""Names for add_node_info: mostly free ones, sometimes one that exists; "nameless" adds a
NodeInfo without a Node (both stores must raise ValueError)."""
node_specs = st.builds(
    NodeSpec,
    cpu=st.sampled_from(["1", "2", "4"]),
    memory=st.sampled_from(["1Gi", "4Gi", "8Gi"]),
    max_pods=st.sampled_from([110, 110, 110, 110, 3]),
    zone=st.sampled_from(["a", "b"]),
    unschedulable=rarely,
    tainted=rarely,
)
pod_specs = st.builds(
    PodSpec,
    cpu=st.sampled_from([None, "100m", "100m", "500m", "1", "3500m"]),
    memory=st.sampled_from([None, "64Mi", "64Mi", "512Mi", "2Gi", "6Gi"]),
    namespace=st.sampled_from(NAMESPACES),
    pvcs=st.one_of(
        st.just(()),
        st.lists(st.sampled_from(CLAIMS), min_size=1, max_size=2).map(tuple),
    ),
    zone=st.sampled_from([None, None, None, "a", "b"]),
    anti_affinity=rarely,
    host_port=st.sampled_from([0, 0, 0, 0, 0, 8080]),
    tolerates=rarely,
    pinned=st.one_of(*[st.none()] * 7, node_idx),
)
pod_lists = st.lists(pod_specs, max_size=3)
TARGET_MODES = ("existing", "existing", "missing_pod", "wrong_node", "missing_node")
"""How a pod to remove is picked: a stored pod, a pod name that is nowhere, a stored pod on
another node than its own, or a node that is not in the snapshot."""
target_modes = st.sampled_from(TARGET_MODES)
excluded = st.one_of(st.none(), st.frozensets(node_idx, max_size=3))

Outcome = tuple[Any, ...]

# Operations as data, for the rules that chain several in one step: (method name, args...).
write_ops = st.one_of(
    st.tuples(st.just("add_node_info"), new_node_refs, node_specs, pod_lists),
    st.tuples(st.just("remove_node_info"), node_refs),
    st.tuples(st.just("force_add_pod"), node_refs, pod_specs),
    st.tuples(st.just("force_remove_pod"), picks, target_modes),
    st.tuples(st.just("unschedule_pod"), picks, target_modes),
)
"""Writes that read no list of the store under test."""
schedule_ops = st.one_of(
    st.tuples(st.just("schedule_pod"), node_refs, pod_specs),
    st.tuples(st.just("schedule_pod_on_any_node_matching"), pod_specs, excluded),
)
layer_ops = st.sampled_from([("fork",), ("commit",), ("revert",)])
read_ops = st.one_of(
    st.tuples(st.just("read_list")),
    st.tuples(st.just("read_affinity")),
    st.tuples(st.just("read_pvc"), st.sampled_from(PVC_KEYS)),
    st.tuples(st.just("read_get"), node_refs),
)
burst_ops = st.one_of(write_ops, schedule_ops, layer_ops, read_ops)


# --------------------------------------------------------------------------- helpers


@functools.cache
def _framework(role: str) -> Framework:
    """The default-profile Framework of the ``role`` snapshot ("reference" or "delta"), the
    same `Framework(default_profile(), Handle())` for every run: building one (plugin
    discovery and registration) costs more than a whole short run, and shrinking a failure
    replays thousands of runs. Sharing is safe: the plugins keep no state between calls
    (NodeAffinity memoizes by pod identity only), each `PredicateSnapshot` points the handle
    at itself and has its own round-robin runner, and each role keeps its own Framework."""
    return Framework(default_profile(), Handle(), discover_plugins())


def _snapshot(role: str, store: ClusterSnapshotStore) -> PredicateSnapshot:
    return PredicateSnapshot(_framework(role), store)


def _outcome(fn: Callable[[], object]) -> Outcome:
    """What ``fn()`` did: ("ok", result) or ("raised", type, message, scheduling type)."""
    try:
        result = fn()
    except SchedulingError as e:
        return ("raised", type(e), str(e), e.type)
    except Exception as e:
        return ("raised", type(e), str(e), None)
    return ("ok", result)


def _names(nodes: Sequence[NodeInfo]) -> list[str]:
    return [ni.node.name if ni.node is not None else "" for ni in nodes]


def _get_node(s: PredicateSnapshot, name: str) -> Node | None:
    return s.get_node_info(name).node


def _view(s: PredicateSnapshot) -> dict[str, object]:
    """Everything compared after a step."""
    check_snapshot_consistency(s)
    lister = s.node_infos()
    storage = s.storage_infos()
    return {
        "nodes (in list order)": list(dump_state(s).items()),
        "have_pods_with_affinity_list": _names(lister.have_pods_with_affinity_list()),
        "have_pods_with_required_anti_affinity_list": _names(
            lister.have_pods_with_required_anti_affinity_list()
        ),
        "is_pvc_used_by_pods": {k: storage.is_pvc_used_by_pods(k) for k in PVC_KEYS},
        "get_node_info": {
            name: _outcome(functools.partial(_get_node, s, name))
            for name in (*NODE_NAMES, MISSING_NODE)
        },
        "depth": getattr(s.store, "depth", None),
    }


# --------------------------------------------------------------------------- the machine


class DifferentialMachine(RuleBasedStateMachine):
    """Basic store (reference) vs delta store, same operations, same results."""

    def __init__(self) -> None:
        super().__init__()
        self.ref = _snapshot("reference", BasicSnapshotStore())
        self.sut = _snapshot("delta", DeltaSnapshotStore())
        self._pod_numbers = itertools.count()
        self.depth = 0  # the model's fork depth
        self.recent: list[str] = []  # node names operated on, most recent last

    # ------------------------------------------------------------------ plumbing

    def _new_pod(self, spec: PodSpec, node_name: str = "", nominated: str = "") -> Pod:
        return spec.build(f"p{next(self._pod_numbers)}", node_name, nominated)

    def _both(self, what: str, fn: Callable[[PredicateSnapshot], object]) -> Outcome:
        """Run ``fn`` on both snapshots; their outcomes must be equal."""
        want = _outcome(lambda: fn(self.ref))
        got = _outcome(lambda: fn(self.sut))
        assert got == want, f"{what}: delta store gave {got!r}, basic store gave {want!r}"
        return want

    def _node(self, ref: NodeRef) -> str:
        """The node name ``ref`` picks (see NODE_REFS)."""
        kind, n = ref
        if kind == "missing":
            return MISSING_NODE
        listed = _names(self.ref.list_node_infos())
        if kind == "listed":
            names = listed
        elif kind == "recent":
            names = self.recent[::-1]
        else:
            names = [m for m in NODE_NAMES if m not in listed]
        name = names[n % len(names)] if names else NODE_NAMES[n % len(NODE_NAMES)]
        self._touch(name)
        return name

    def _touch(self, name: str) -> None:
        """Remember ``name`` as the node operated on last (the last three are kept)."""
        if name in NODE_NAMES:
            if name in self.recent:
                self.recent.remove(name)
            self.recent = [*self.recent[-2:], name]

    def _target(self, pick: int, mode: str) -> tuple[str, str, str]:
        """(namespace, pod name, node name) of a pod to remove, chosen from the reference."""
        placed = sorted(
            (ni.node.name, p.pod.namespace, p.pod.name)
            for ni in self.ref.list_node_infos()
            if ni.node is not None
            for p in ni.pods
        )
        nodes = _names(self.ref.list_node_infos())
        if mode == "missing_node":
            return ("default", f"p{pick}", MISSING_NODE)
        if mode == "missing_pod" or not placed:
            return ("default", "no-such-pod", nodes[pick % len(nodes)] if nodes else "n0")
        node, ns, name = placed[pick % len(placed)]
        if mode == "wrong_node":
            others = [n for n in nodes if n != node]
            node = others[pick % len(others)] if others else MISSING_NODE
        self._touch(node)
        return (ns, name, node)

    # ------------------------------------------------------------------ operations

    def _add_node_info(self, ref: NodeRef, spec: NodeSpec, pods: Sequence[PodSpec]) -> None:
        name = "" if ref[0] == "nameless" else self._node(ref)
        node = spec.build(name) if name else None
        built = [self._new_pod(p, name) for p in pods]

        def add(s: PredicateSnapshot) -> None:
            # each store gets its own NodeInfo (stores keep and mutate the object itself)
            s.add_node_info(NodeInfo(node, pods=[s.new_pod_info(p) for p in built]))

        self._both(f"add_node_info({name})", add)

    def _remove_node_info(self, ref: NodeRef) -> None:
        name = self._node(ref)
        self._both(f"remove_node_info({name})", lambda s: s.remove_node_info(name))

    def _force_add_pod(self, ref: NodeRef, spec: PodSpec) -> None:
        name = self._node(ref)
        pod = self._new_pod(spec, name)
        self._both(f"force_add_pod({pod.key}, {name})", lambda s: s.force_add_pod(pod, name))

    def _force_remove_pod(self, pick: int, mode: str) -> None:
        ns, pod, node = self._target(pick, mode)
        self._both(
            f"force_remove_pod({ns}/{pod}, {node})", lambda s: s.force_remove_pod(ns, pod, node)
        )

    def _unschedule_pod(self, pick: int, mode: str) -> None:
        ns, pod, node = self._target(pick, mode)
        self._both(f"unschedule_pod({ns}/{pod}, {node})", lambda s: s.unschedule_pod(ns, pod, node))

    def _schedule_pod(self, ref: NodeRef, spec: PodSpec) -> None:
        name = self._node(ref)
        pod = self._new_pod(spec)
        self._both(f"schedule_pod({pod.key}, {name})", lambda s: s.schedule_pod(pod, name))

    def _schedule_pod_on_any_node_matching(
        self, spec: PodSpec, exclude: frozenset[int] | None
    ) -> None:
        pod = self._new_pod(spec)
        acceptable: Callable[[NodeInfo], bool] | None = None
        if exclude is not None:
            banned = {NODE_NAMES[i] for i in exclude}

            def acceptable(ni: NodeInfo) -> bool:
                return ni.node is not None and ni.node.name not in banned

        outcome = self._both(
            f"schedule_pod_on_any_node_matching({pod.key})",
            lambda s: s.schedule_pod_on_any_node_matching(pod, acceptable),
        )
        if outcome[0] == "ok":
            self._touch(outcome[1])

    def _check_predicates(self, ref: NodeRef, spec: PodSpec) -> None:
        name = self._node(ref)
        pod = self._new_pod(spec)
        self._both(f"check_predicates({pod.key}, {name})", lambda s: s.check_predicates(pod, name))

    def _fork(self) -> None:
        self._both("fork", lambda s: s.fork())
        self.depth += 1

    def _commit(self) -> None:
        self._both("commit", lambda s: s.commit())
        self.depth = max(0, self.depth - 1)

    def _revert(self) -> None:
        self._both("revert", lambda s: s.revert())
        self.depth = max(0, self.depth - 1)

    def _read_list(self) -> None:
        self._both("list_node_infos", lambda s: _names(s.list_node_infos()))

    def _read_affinity(self) -> None:
        self._both(
            "have_pods_with_affinity_list",
            lambda s: _names(s.node_infos().have_pods_with_affinity_list()),
        )
        self._both(
            "have_pods_with_required_anti_affinity_list",
            lambda s: _names(s.node_infos().have_pods_with_required_anti_affinity_list()),
        )

    def _read_pvc(self, key: str) -> None:
        self._both(
            f"is_pvc_used_by_pods({key})", lambda s: s.storage_infos().is_pvc_used_by_pods(key)
        )

    def _read_get(self, ref: NodeRef) -> None:
        name = self._node(ref)
        self._both(f"get_node_info({name})", lambda s: s.get_node_info(name).node)

    # ------------------------------------------------------------------ rules

    @initialize(
        nodes=st.lists(st.tuples(new_node_refs, node_specs, pod_lists), min_size=2, max_size=5),
        forks=st.integers(0, 2),
    )
    def initial_state(
        self, nodes: list[tuple[NodeRef, NodeSpec, list[PodSpec]]], forks: int
    ) -> None:
        """Start from a few nodes (`add_node_info` each) and 0-2 forks, so that most steps
        have nodes to work on and layers below them."""
        for ref, spec, pods in nodes:
            self._add_node_info(ref, spec, pods)
        for _ in range(forks):
            self._fork()

    @rule(node=new_node_refs, spec=node_specs, pods=pod_lists)
    def add_node_info(self, node: NodeRef, spec: NodeSpec, pods: list[PodSpec]) -> None:
        """`PredicateSnapshot.add_node_info` of a new NodeInfo with 0-3 pods (CA AddNodeInfo):
        a free name (maybe a node just removed) or an existing one, where both must raise
        NodeAlreadyExistsError."""
        self._add_node_info(node, spec, pods)

    @rule(node=node_refs)
    def remove_node_info(self, node: NodeRef) -> None:
        """`remove_node_info` of a listed node or a missing one (CA RemoveNodeInfo)."""
        self._remove_node_info(node)

    @rule(node=node_refs, spec=pod_specs)
    def force_add_pod(self, node: NodeRef, spec: PodSpec) -> None:
        """`force_add_pod` of a new pod to a listed or missing node, no plugins (CA
        ForceAddPod)."""
        self._force_add_pod(node, spec)

    @rule(pick=picks, mode=target_modes)
    def force_remove_pod(self, pick: int, mode: str) -> None:
        """`force_remove_pod` of a stored pod, a missing pod, a pod on the wrong node or a
        missing node (CA ForceRemovePod)."""
        self._force_remove_pod(pick, mode)

    @rule(node=node_refs, spec=pod_specs)
    def schedule_pod(self, node: NodeRef, spec: PodSpec) -> None:
        """`schedule_pod` on a given node: PreFilter + Filter, store on success (CA
        SchedulePod); sizes, selectors, taints and ports make some fail."""
        self._schedule_pod(node, spec)

    @rule(spec=pod_specs, exclude=excluded)
    def schedule_pod_on_any_node_matching(
        self, spec: PodSpec, exclude: frozenset[int] | None
    ) -> None:
        """`schedule_pod_on_any_node_matching`, round robin from the last chosen node, with
        an optional acceptance filter (CA SchedulePodOnAnyNodeMatching): both snapshots must
        choose the same node."""
        self._schedule_pod_on_any_node_matching(spec, exclude)

    @rule(specs=st.lists(pod_specs, min_size=2, max_size=6))
    def schedule_pods_on_any_node(self, specs: list[PodSpec]) -> None:
        """Several `schedule_pod_on_any_node_matching` in a row, as CA's binpacking estimator
        and filter-out-schedulable loops do in a fork: round robin spreads them, so one layer
        copies several NodeInfos between list reads."""
        for spec in specs:
            self._schedule_pod_on_any_node_matching(spec, None)

    @rule(pick=picks, mode=target_modes)
    def unschedule_pod(self, pick: int, mode: str) -> None:
        """`unschedule_pod` (CA UnschedulePod)."""
        self._unschedule_pod(pick, mode)

    @rule(node=node_refs, spec=pod_specs)
    def check_predicates(self, node: NodeRef, spec: PodSpec) -> None:
        """`check_predicates` on a listed or missing node: PreFilter + Filter, no change (CA
        CheckPredicates)."""
        self._check_predicates(node, spec)

    @rule(times=st.integers(1, 2))
    def fork(self, times: int) -> None:
        """`fork` (CA Fork) once or twice: forks nest (twice, so that the depth does not stay
        near 0 with commit and revert as likely as fork)."""
        for _ in range(times):
            self._fork()

    @precondition(lambda self: self.depth > 0)
    @rule()
    def commit(self) -> None:
        """`commit` (CA Commit) of the top fork (bursts also commit when not forked: a
        no-op)."""
        self._commit()

    @precondition(lambda self: self.depth > 0)
    @rule()
    def revert(self) -> None:
        """`revert` (CA Revert) of the top fork (bursts also revert when not forked: a
        no-op)."""
        self._revert()

    @rule(
        gate=st.integers(0, 7),
        nodes=st.lists(st.tuples(node_idx, node_specs), max_size=5),
        pods=st.lists(
            st.tuples(pod_specs, st.one_of(node_idx, st.none()), st.booleans()), max_size=5
        ),
    )
    def set_cluster_state(
        self,
        gate: int,
        nodes: list[tuple[int, NodeSpec]],
        pods: list[tuple[PodSpec, int | None, bool]],
    ) -> None:
        """`set_cluster_state` (CA SetClusterState), rarely (only when ``gate`` is 7): replaces
        everything and drops all forks. Pods go to their nodeName or nominatedNodeName (None:
        a node not in the list, skipped); a repeated node name raises
        NodeAlreadyExistsError (both stores must then show the same state and depth)."""
        if gate != 7:
            return
        node_objs = [spec.build(NODE_NAMES[i]) for i, spec in nodes]
        pod_objs = []
        for spec, target, nominated in pods:
            name = MISSING_NODE if target is None else NODE_NAMES[target]
            if nominated:
                pod_objs.append(self._new_pod(dataclasses.replace(spec, pinned=None), "", name))
            else:
                pod_objs.append(self._new_pod(spec, name))
        log = logging.getLogger("schedsim.snapshot.predicate")
        level = log.level
        log.setLevel(logging.ERROR)  # skipped pods are expected here
        try:
            outcome = self._both(
                "set_cluster_state",
                lambda s: [p.key for p in s.set_cluster_state(node_objs, pod_objs)],
            )
        finally:
            log.setLevel(level)
        if outcome[0] == "ok":
            self.depth = 0

    @rule(ops=st.lists(burst_ops, min_size=2, max_size=8))
    def burst(self, ops: list[tuple[Any, ...]]) -> None:
        """Several operations and reads with no state check between them, so caches are
        sometimes cold when a write, fork, commit or revert happens (the invariant primes
        them all after every step)."""
        self._run_ops(ops)

    @rule(
        ops=st.lists(st.one_of(write_ops, schedule_ops, read_ops), min_size=1, max_size=5),
        end=st.sampled_from([("commit",), ("revert",)]),
    )
    def transaction(self, ops: list[tuple[Any, ...]], end: tuple[str]) -> None:
        """Fork, a few writes, schedules and reads, then commit or revert, with no state check
        in between: CA's usual pattern (fork, simulate, keep or drop), started on whatever
        caches the previous steps left."""
        self._run_ops([("fork",), *ops, end])

    def _run_ops(self, ops: Sequence[tuple[Any, ...]]) -> None:
        for op in ops:
            getattr(self, "_" + op[0])(*op[1:])

    @rule(op=write_ops, then=layer_ops)
    def write_then_layer_op(self, op: tuple[Any, ...], then: tuple[str]) -> None:
        """A write immediately followed by a fork, commit or revert, no read between them
        (CA's "fork, modify, commit" without the listing the invariant does after each
        step): the commonest cold-cache case, made frequent."""
        self._run_ops([op, then])

    # ------------------------------------------------------------------ the check

    @invariant()
    def same_state(self) -> None:
        """Both snapshots show the same state, consistent across their listers, at the fork
        depth the model expects."""
        want = _view(self.ref)
        got = _view(self.sut)
        for key, value in want.items():
            assert got[key] == value, (
                f"{key}: delta store shows {got[key]!r}, basic store shows {value!r}"
            )
        assert want["depth"] == self.depth, f"depth {want['depth']}, model {self.depth}"


def differential_settings(examples: int, steps: int) -> settings:
    """Hypothesis settings for a run of ``examples`` sequences of up to ``steps`` steps."""
    return settings(
        max_examples=examples,
        stateful_step_count=steps,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example],
        report_multiple_bugs=False,  # shrink one failure (faster; the smallest wins)
    )


def test_delta_store_matches_basic_store() -> None:
    """Random operation sequences give the same outcomes and states on both stores."""
    run_state_machine_as_test(DifferentialMachine, settings=differential_settings(EXAMPLES, STEPS))
