"""Differential test of the scheduler's result reuse (`ResultCache`: Filter statuses and raw
Score values of identical pods on unchanged nodes, read in bulk from per-class columns).

kube-scheduler has no such cache, so the reference is schedsim's own scheduler with the cache
off, which runs every Filter and Score plugin on every node as ``schedulePod`` does
(pkg/scheduler/schedule_one.go: findNodesThatFitPod with numFeasibleNodesToFind and the
rotating nextStartNodeIndex, prioritizeNodes, selectHost). For random clusters and random
sequences of pods of a few shapes (so that identical pods recur), interleaved with the changes
that must invalidate cached results (pods bound to a node, nodes added and removed, a node
replaced by a new Node object under its name, forks with reverts and commits), both stores
give, pod by pod, the same placement, the same FitError message, the same nextStartNodeIndex
and, for explained pods, the same explanation with the cache as without it. First fit (CA's
round robin, ``schedule_pod_or_explain``) is checked the same way with and without
`FailingClasses`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedsim.api.core import Node, Pod
from schedsim.engine import STORES
from schedsim.framework import Framework, Handle, default_profile
from schedsim.scheduler import FailingClasses, ResultCache, Scheduler
from schedsim.snapshot import (
    BasicSnapshotStore,
    ClusterSnapshotStore,
    DeltaSnapshotStore,
    NodeInfo,
    PredicateSnapshot,
)
from schedsim.testing.snapshot_conformance import make_node, make_pod

_IMAGE = "registry.example/app:1.0"
_MB = 1024 * 1024


@st.composite
def _node(draw: st.DrawFn, i: int) -> Node:
    taints = []
    kind = draw(st.integers(0, 5))
    if kind == 1:
        taints.append({"key": "dedicated", "value": "batch", "effect": "NoSchedule"})
    elif kind == 2:
        taints.append({"key": "spot", "value": "yes", "effect": "PreferNoSchedule"})
    images = {_IMAGE: draw(st.sampled_from((100 * _MB, 600 * _MB)))} if draw(st.booleans()) else {}
    return make_node(
        f"n{i:03}",
        cpu=draw(st.sampled_from(("1", "2", "4", "8"))),
        memory=draw(st.sampled_from(("2Gi", "8Gi", "16Gi"))),
        pods=draw(st.sampled_from((3, 110))),
        taints=taints,
        # kind 5: no zone label (PodTopologySpread: "missing required label"); "host": one
        # value per node (the keyed Filter walked lazily)
        labels={"zone": f"z{draw(st.integers(0, 2))}", "host": f"h{i}"}
        if kind != 5
        else {"host": f"h{i}"},
        images=images,
    )


def _shape(k: int) -> Callable[[str], Pod]:
    """Pod shape k of a small palette (resources, tolerations, preferred affinity, image,
    zone or host topology spread, host anti-affinity)."""
    cpu = ("100m", "500m", "1", "3")[k % 4]
    spec: dict[str, Any] = {}
    if k % 3 == 1:
        spec["affinity"] = {
            "nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 7,
                        "preference": {
                            "matchExpressions": [
                                {"key": "zone", "operator": "In", "values": [f"z{k % 2}"]}
                            ]
                        },
                    }
                ]
            }
        }
    tolerations = (
        [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}] if k % 5 == 2 else []
    )
    if k in (3, 5, 6):
        # zone spread: DoNotSchedule (the class cache's keyed Filter) or ScheduleAnyway
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": "zone",
                "whenUnsatisfiable": "ScheduleAnyway" if k == 5 else "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": f"a{k}"}},
            }
        ]

    if k in (8, 10):
        # required anti-affinity to its own kind per host (scheduler_perf's
        # SchedulingPodAntiAffinity): InterPodAffinity's keyed Filter, one value per node
        spec["affinity"] = {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"app": f"a{k}"}}, "topologyKey": "host"}
                ]
            }
        }
    if k in (9, 10):
        # host spread, DoNotSchedule (with 10: both keyed plugins)
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": "host" if k == 9 else "zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": f"a{k}"}},
            }
        ]

    def make(name: str) -> Pod:
        return make_pod(
            name,
            cpu=cpu,
            memory="512Mi",
            spec=spec,
            tolerations=tolerations,
            image=_IMAGE if k % 2 else "",
            labels={"app": f"a{k}"},
        )

    return make


_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("pod"), st.integers(0, 10)),
        st.tuples(st.just("pod"), st.integers(0, 10)),
        st.tuples(st.just("pod"), st.integers(0, 10)),
        st.tuples(st.just("bind"), st.integers(0, 200)),
        st.tuples(st.just("add-node"), st.integers(0, 5)),
        st.tuples(st.just("remove-node"), st.integers(0, 200)),
        st.tuples(st.just("replace-node"), st.integers(0, 200)),
        st.tuples(st.just("fork"), st.integers(0, 1)),
        st.tuples(st.just("explain"), st.integers(0, 10)),
    ),
    min_size=5,
    max_size=60,
)


def _run(
    nodes: list[Node],
    ops: list[tuple[str, int]],
    extra_nodes: list[Node],
    store: Callable[[], ClusterSnapshotStore],
    percentage: int | None,
    cache: bool,
    first_fit: bool = False,
) -> list[object]:
    fw = Framework(default_profile(), Handle())
    snap = PredicateSnapshot(fw, store(), skip_unschedulable_nodes=False)
    snap.set_cluster_state(nodes, [])
    sched = Scheduler(snap, percentage_of_nodes_to_score=percentage, cache=cache)
    if first_fit and cache:
        snap.plugin_runner.failing_classes = FailingClasses(ResultCache(fw))
    trace: list[object] = []
    forked = 0
    for step, (op, arg) in enumerate(ops):
        infos = snap.list_node_infos()
        if op in ("pod", "explain") and first_fit:
            found = snap.schedule_pod_or_explain(_shape(arg)(f"p{step}"))
            trace.append(found if isinstance(found, str) else found.message)
        elif op in ("pod", "explain"):
            placed = sched.schedule_one(_shape(arg)(f"p{step}"), explain=op == "explain")
            trace.append(
                (
                    placed.node_name,
                    placed.fit_error.message if placed.fit_error else None,
                    sched.next_start_node_index,
                    placed.explanation.to_json() if placed.explanation else None,
                )
            )
        elif op == "bind" and infos:
            target: NodeInfo = infos[arg % len(infos)]
            assert target.node is not None
            snap.force_add_pod(_shape(arg)(f"b{step}"), target.node.name)
        elif op == "add-node" and extra_nodes:
            node = extra_nodes.pop()
            snap.add_node_info(NodeInfo(node))
        elif op == "remove-node" and len(infos) > 1:
            node_of = infos[arg % len(infos)].node
            assert node_of is not None
            snap.remove_node_info(node_of.name)
        elif op == "replace-node" and infos:
            # a new Node object under the same name, tainted or not (its pods dropped):
            # the Filter plugins that read the Node alone must run again there
            node_of = infos[arg % len(infos)].node
            assert node_of is not None
            snap.remove_node_info(node_of.name)
            taints = [] if node_of.taints else [{"key": "dedicated", "effect": "NoSchedule"}]
            snap.add_node_info(
                NodeInfo(make_node(node_of.name, taints=taints, labels={"zone": "z1"}))
            )
        elif op == "fork":
            if forked and arg:
                snap.revert()
                forked -= 1
            elif forked:
                snap.commit()
                forked -= 1
            else:
                snap.fork()
                forked += 1
        trace.append(len(snap.list_node_infos()))
    return trace


@settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    data=st.data(),
    n=st.one_of(st.integers(1, 12), st.integers(101, 140)),
    ops=_OPS,
    percentage=st.sampled_from((None, 5, 30, 100)),
    delta=st.booleans(),
    first_fit=st.booleans(),
)
def test_cache_changes_nothing(
    data: st.DataObject,
    n: int,
    ops: list[tuple[str, int]],
    percentage: int | None,
    delta: bool,
    first_fit: bool,
) -> None:
    """With and without the cache: identical placements, FitErrors, nextStartNodeIndex and
    explanations, on both stores, through binds, node changes, forks, reverts, commits; and
    for first fit (`schedule_pod_or_explain`) with and without `FailingClasses`."""
    nodes = [data.draw(_node(i)) for i in range(n)]
    extra = [data.draw(_node(500 + i)) for i in range(3)]
    store: Callable[[], ClusterSnapshotStore] = DeltaSnapshotStore if delta else BasicSnapshotStore
    without = _run(nodes, ops, list(extra), store, percentage, False, first_fit)
    with_cache = _run(nodes, ops, list(extra), store, percentage, True, first_fit)
    assert with_cache == without


def test_many_identical_pods_on_a_changing_cluster() -> None:
    """A fixed large case: 130 nodes (every 7th PreferNoSchedule-tainted, half with the
    image), 400 pods of four shapes with a bound pod and a node change every 50 pods, on
    both stores: the cache changes nothing, and some pods end up unschedulable."""
    nodes = [
        make_node(
            f"n{i:03}",
            cpu=("2", "4")[i % 2],
            taints=[{"key": "s", "value": "v", "effect": "PreferNoSchedule"}] if i % 7 == 0 else [],
            labels={"zone": f"z{i % 3}"},
            images={_IMAGE: 600 * _MB} if i % 2 else None,
        )
        for i in range(130)
    ]
    ops: list[tuple[str, int]] = []
    for i in range(400):
        ops.append(("pod", i % 4))
        if i % 50 == 49:
            ops += [("bind", i), ("remove-node", i), ("add-node", 0), ("add-node", 0)]
    extra = [make_node(f"x{i}", cpu="8") for i in range(20)]
    for store in STORES.values():
        runs = [_run(nodes, ops, list(extra), store, None, cache=c) for c in (False, True)]
        assert runs[0] == runs[1]
        assert any(isinstance(t, tuple) and t[0] is None for t in runs[0])
        fits = [_run(nodes, ops, list(extra), store, None, c, True) for c in (False, True)]
        assert fits[0] == fits[1]
        assert any(isinstance(t, str) and t.startswith("0/") for t in fits[0])


def test_keyed_filters_with_a_value_per_node() -> None:
    """A fixed case for the keyed Filter walked lazily (more label values than
    `walk_rotating` evaluates eagerly): 130 nodes with one ``host`` value each, 300 pods
    alternating host anti-affinity to their own kind (half of them), host spread, both
    with zone spread, and a plain pod, with binds and node changes: the cache changes
    nothing, on both stores, and anti-affinity rejects pods once every node holds one."""
    nodes = [
        make_node(f"n{i:03}", cpu="8", labels={"zone": f"z{i % 3}", "host": f"h{i}"})
        for i in range(130)
    ]
    ops: list[tuple[str, int]] = []
    for i in range(300):
        ops.append(("pod", (8, 8, 8, 9, 10, 0)[i % 6]))
        if i % 60 == 59:
            ops += [("bind", i), ("remove-node", i), ("explain", 8), ("fork", 0)]
    for store in STORES.values():
        runs = [_run(nodes, ops, [], store, None, cache=c) for c in (False, True)]
        assert runs[0] == runs[1]
        assert any(isinstance(t, tuple) and t[1] and "anti-affinity" in t[1] for t in runs[0])
