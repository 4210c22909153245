"""The delta store's affinity lists (`have_pods_with_affinity_list`,
`have_pods_with_required_anti_affinity_list`) are kept per layer from what changed.

Two promises: (1) they are what kube-scheduler's snapshot lists: the visible NodeInfos (the
very objects `get` returns) of the nodes holding such a pod, in node-list order, whatever the
forks, commits and reverts (checked here against a scan of the visible list after every step
of a seeded random walk); (2) no fork scans the cluster: fork + schedule_pod + revert executes
the same number of Python bytecodes at 1,000 and 20,000 nodes (issue 29; work is counted with
an opcode tracer, never timed).
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

from schedsim.api.core import Node, Pod
from schedsim.framework import Framework, Handle, default_profile
from schedsim.snapshot import DeltaSnapshotStore, NodeInfo, PredicateSnapshot

_AFFINITY = {
    "podAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {
                "weight": 1,
                "podAffinityTerm": {
                    "labelSelector": {"matchLabels": {"app": "a"}},
                    "topologyKey": "kubernetes.io/hostname",
                },
            }
        ]
    }
}
_ANTI = {
    "podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {
                "labelSelector": {"matchLabels": {"app": "never"}},
                "topologyKey": "kubernetes.io/hostname",
            }
        ]
    }
}


def _node(i: int) -> Node:
    name = f"node-{i:05d}"
    return Node.from_manifest(
        {
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": "64", "memory": "256Gi", "pods": "500"}},
        }
    )


def _pod(name: str, node: str = "", affinity: dict[str, Any] | None = None) -> Pod:
    spec: dict[str, Any] = {
        "nodeName": node,
        "containers": [{"name": "c", "resources": {"requests": {"cpu": "10m"}}}],
    }
    if affinity:
        spec["affinity"] = affinity
    return Pod.from_manifest({"metadata": {"name": name}, "spec": spec})


def _snapshot(nodes: list[Node], pods: list[Pod]) -> PredicateSnapshot:
    snap = PredicateSnapshot(Framework(default_profile(), Handle()), DeltaSnapshotStore())
    snap.set_cluster_state(nodes, pods)
    return snap


def _check(snap: PredicateSnapshot) -> None:
    lister = snap.node_infos()
    visible = list(lister.list())
    for got, want in (
        (lister.have_pods_with_affinity_list(), [n for n in visible if n.pods_with_affinity]),
        (
            lister.have_pods_with_required_anti_affinity_list(),
            [n for n in visible if n.pods_with_required_anti_affinity],
        ),
    ):
        assert [id(n) for n in got] == [id(n) for n in want]


def test_lists_follow_forks_commits_and_reverts() -> None:
    rng = random.Random(29)
    nodes = [_node(i) for i in range(12)]
    snap = _snapshot(nodes, [_pod("seed-a", nodes[3].name, _AFFINITY)])
    names = [n.name for n in nodes]
    placed: list[tuple[Pod, str]] = []
    added = 100
    for step in range(1500):
        op = rng.random()
        if op < 0.12:
            snap.fork()
        elif op < 0.2:
            snap.revert()
            placed = [(p, n) for p, n in placed if _on(snap, p, n)]
        elif op < 0.26:
            snap.commit()
        elif op < 0.3 and len(names) > 2:
            name = names.pop(rng.randrange(len(names)))
            snap.remove_node_info(name)
            placed = [(p, n) for p, n in placed if n != name]
        elif op < 0.34:
            added += 1
            node = _node(added)
            snap.add_node_info(NodeInfo(node))
            names.append(node.name)
        elif op < 0.7 or not placed:
            kind = rng.choice((None, None, _AFFINITY, _ANTI))
            pod = _pod(f"p-{step}", affinity=kind)
            node_name = rng.choice(names)
            snap.force_add_pod(pod, node_name)
            placed.append((pod, node_name))
        else:
            pod, node_name = placed.pop(rng.randrange(len(placed)))
            snap.force_remove_pod(pod.namespace, pod.name, node_name)
        # the state after a revert may not hold what `placed` remembers; keep it in step
        names = [ni.node.name for ni in snap.list_node_infos() if ni.node is not None]
        _check(snap)


def _on(snap: PredicateSnapshot, pod: Pod, node_name: str) -> bool:
    try:
        ni = snap.get_node_info(node_name)
    except LookupError:
        return False
    return any(p.pod.uid == pod.uid for p in ni.pods)


def _opcodes(fn: Callable[[], object]) -> int:
    """Python bytecodes executed by ``fn()`` (every frame it runs)."""
    count = 0

    def tracer(frame: FrameType, event: str, arg: object) -> Any:
        nonlocal count
        frame.f_trace_opcodes = True
        if event == "opcode":
            count += 1
        return tracer

    old = sys.gettrace()
    sys.settrace(tracer)
    try:
        fn()
    finally:
        sys.settrace(old)
    return count


def _cycle(snap: PredicateSnapshot, pods: list[Pod], target: str) -> None:
    for p in pods:
        snap.fork()
        snap.schedule_pod(p, target)
        snap.revert()


def test_fork_schedule_revert_work_does_not_grow_with_the_cluster() -> None:
    """Before issue 29 every fork rebuilt the anti-affinity list over all nodes (InterPod-
    Affinity's PreFilter asks for it to decide its Skip): 14x the work at 20x the nodes."""
    work = {}
    for n in (1000, 20000):
        nodes = [_node(i) for i in range(n)]
        # one pod with affinity on a node far from the one scheduled to: the lists are
        # not empty, but nothing the cycle touches is in them
        snap = _snapshot(nodes, [_pod("seed", nodes[7].name, _ANTI)])
        pods = [_pod(f"x-{i}") for i in range(5)]
        target = nodes[n // 2].name
        _cycle(snap, pods, target)  # warm: per-pod and per-class caches, the base lists
        work[n] = _opcodes(lambda: _cycle(snap, pods, target))  # noqa: B023 (called here)
    assert work[20000] == work[1000], work
