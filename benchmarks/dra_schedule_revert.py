"""CA's ``BenchmarkScheduleRevert`` workload (predicate_snapshot_dra_benchmark_test.go) over two
DRA snapshot designs, plus a table printer.

Cluster (built once, outside any timing): 100 nodes, each with one ResourceSlice of 100 devices
(driver ``driver.foo.com``, DeviceClass ``defaultClass``), one pre-allocated shared claim (100
requests x 1 device, node selector = that node) and 100 pre-allocated pod-owned claims (one per
owning pod, controller ownerReference with the pod's UID). A configuration visits ``nodes``
nodes; the DRA snapshot of an iteration holds all 100 shared claims and the owned claims of the
configuration's ``nodes`` nodes, as in CA.

One iteration (the timed unit): a new PredicateSnapshot, a DRA snapshot of the classes and
claims, ``set_cluster_state([], [], dra)``, then per node: the forks, ``add_node_info`` (with the
node's slice), ``schedule_pod`` for the shared-claim pods and the owned-claim pods onto the node,
the commits, the reverts.

Designs:

* ``clone``: ``BasicSnapshotStore`` + ``DraSnapshot(clone_on_fork=True)`` (fork deep-copies every
  claim). schedsim's PredicateSnapshot makes every DRA mutation (``add_node_info``,
  ``schedule_pod``) transactional through a DRA fork + commit, so in this design every scheduled
  pod also deep-copies every claim.
* ``clone-notx``: the same without that per-mutation transaction (a benchmark-only subclass
  whose ``_dra_transaction`` does nothing): deep copies happen on the workload's own forks only,
  which is what CA's clone design (before autoscaler PR #8090, SchedulePod not transactional)
  paid. Not a supported configuration, a yardstick.
* ``delta``: ``DeltaSnapshotStore`` + ``DraSnapshot(clone_on_fork=False)`` (PatchSets).

The clone designs are too slow in Python for CA's full loop (a deep copy of the 10,100 claims of
a 100-node configuration takes ~1.1 s), so the loop can be cut to its first ``loop_nodes`` nodes
(the DRA snapshot still holds every claim of the configuration): both designs then run the
same, shorter workload and their ratio is exact for it. Per-node work is the same for every node
(each node has its own claims; the claim map copied is the same size), so time scales linearly
with the loop length.

Table: ``python benchmarks/dra_schedule_revert.py [-k SUBSTR] [--loop N|all] [--rounds R]
[--clone-rounds R] [--designs clone,clone-notx,delta] [--max-clone-forks F]`` prints, per
configuration, time (median of the rounds) and memory (tracemalloc, one extra round) for each
design and the ratios.
Memory is the *peak* of traced bytes above the level before the iteration (``reset_peak``),
i.e. the most memory the iteration held at once; it is not Go's B/op (total bytes allocated,
which also counts memory freed along the way).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import gc
import statistics
import time
import tracemalloc
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from schedsim.api.core import Node, NodeSelectorRequirement, NodeSelectorTerm, OwnerReference, Pod
from schedsim.api.resource import (
    AllocationResult,
    Device,
    DeviceClass,
    DeviceRequest,
    DeviceRequestAllocationResult,
    DeviceSelector,
    ExactDeviceRequest,
    ResourceClaim,
    ResourceClaimSpec,
    ResourceClaimStatus,
    ResourcePool,
    ResourceSlice,
)
from schedsim.framework import Framework, Handle, default_profile
from schedsim.snapshot import (
    BasicSnapshotStore,
    DeltaSnapshotStore,
    NodeInfo,
    PredicateSnapshot,
)
from schedsim.snapshot.dra import DraSnapshot

MAX_NODES = 100
DEVICES_PER_SLICE = 100
MAX_OWNED_PODS = 100
MAX_SHARED_PODS = 32
DEVICE_CLASS = "defaultClass"
DRIVER = "driver.foo.com"

DESIGNS = ("clone", "clone-notx", "delta")

OPS = {  # name: (forks, commits, reverts)
    "ForkRevert": (1, 0, 1),
    "ForkCommit": (1, 1, 0),
    "ForkForkCommitRevert": (2, 1, 1),
    "Fork": (1, 0, 0),
    "Fork5Revert5": (5, 0, 5),
}


@dataclass(frozen=True)
class Config:
    """One row of CA's configuration table."""

    nodes: int
    shared_pods: int
    owned_pods: int
    ops: str

    @property
    def kind(self) -> str:
        if self.shared_pods and self.owned_pods:
            return "MixedClaims"
        return "SharedClaims" if self.shared_pods else "OwnedClaims"

    @property
    def name(self) -> str:
        pods = {
            "SharedClaims": f"{self.shared_pods}",
            "OwnedClaims": f"{self.owned_pods}",
            "MixedClaims": f"{self.shared_pods}x{self.owned_pods}",
        }[self.kind]
        return f"{self.nodes}x{pods}/{self.kind}/{self.ops}"

    @property
    def forks(self) -> int:
        return OPS[self.ops][0]

    @property
    def commits(self) -> int:
        return OPS[self.ops][1]

    @property
    def reverts(self) -> int:
        return OPS[self.ops][2]

    def clone_forks_per_node(self, design: str) -> int:
        """Deep copies of the claim map per visited node in a clone design."""
        if design == "clone":  # + add_node_info and every schedule_pod (transactions)
            return self.forks + 1 + self.shared_pods + self.owned_pods
        return self.forks


def configs() -> list[Config]:
    """The 60 configurations of CA's BenchmarkScheduleRevert."""
    pods = [(32, 0), (1, 0), (0, 100), (0, 1), (32, 50), (1, 1)]
    return [
        Config(nodes, shared, owned, ops)
        for shared, owned in pods
        for nodes in (100, 10)
        for ops in OPS
    ]


# --------------------------------------------------------------------------- objects


def _node_selector(node: str) -> tuple[NodeSelectorTerm, ...]:
    return (
        NodeSelectorTerm(match_fields=(NodeSelectorRequirement("metadata.name", "In", (node,)),)),
    )


def _allocated_claim(
    name: str, requests: int, node: str, first_device: int, owner: Pod | None = None
) -> ResourceClaim:
    """A claim of ``requests`` x 1 device, allocated devices ``first_device``... of ``node``.

    Built directly (not decoded): a manifest with more than 32 requests is rejected by the API
    validation, and CA's shared claim has 100.
    """
    selector = (DeviceSelector(f'device.driver == "{DRIVER}"'),)
    return ResourceClaim(
        name=name,
        namespace="default",
        uid=f"{name}-uid",
        owner_references=(
            (OwnerReference("v1", "Pod", owner.name, owner.uid, controller=True),)
            if owner is not None
            else ()
        ),
        spec=ResourceClaimSpec(
            tuple(
                DeviceRequest(f"req-{i}", ExactDeviceRequest(DEVICE_CLASS, selector, count=1))
                for i in range(requests)
            )
        ),
        status=ResourceClaimStatus(
            AllocationResult(
                tuple(
                    DeviceRequestAllocationResult(
                        f"req-{i}", DRIVER, node, f"dev-{first_device + i}"
                    )
                    for i in range(requests)
                ),
                node_selector=_node_selector(node),
            )
        ),
    )


def _pod(name: str, claim_name: str) -> Pod:
    return Pod.from_manifest(
        {
            "metadata": {"name": name, "namespace": "default", "uid": f"{name}-uid"},
            "spec": {
                "containers": [
                    {"name": "c", "resources": {"requests": {"cpu": "1m", "memory": "1"}}}
                ],
                "resourceClaims": [{"name": "claim", "resourceClaimName": claim_name}],
            },
        }
    )


@dataclass(frozen=True)
class Cluster:
    """Every object of the workload, built once."""

    nodes: tuple[Node, ...]
    slices: tuple[ResourceSlice, ...]
    shared_claims: tuple[ResourceClaim, ...]
    owned_claims: tuple[tuple[ResourceClaim, ...], ...]  # per node
    owning_pods: tuple[tuple[Pod, ...], ...]  # per node
    shared_pods: tuple[tuple[Pod, ...], ...]  # per node
    classes: tuple[DeviceClass, ...]

    def claims(self, nodes: int) -> list[ResourceClaim]:
        """What CA adds to the DRA snapshot: every shared claim, the owned claims of the
        configuration's nodes."""
        return [*self.shared_claims, *(c for i in range(nodes) for c in self.owned_claims[i])]


@functools.cache
def cluster() -> Cluster:
    """The objects of CA's benchmark (computed once per process)."""
    nodes, slices, shared, owned, owners, spods = [], [], [], [], [], []
    for i in range(MAX_NODES):
        name = f"node-{i}"
        nodes.append(Node(name=name, allocatable={"cpu": 10_000, "memory": 10_000, "pods": 110}))  # type: ignore[dict-item]
        slices.append(
            ResourceSlice(
                name=f"rs-{name}",
                uid=f"rs-{name}-uid",
                driver=DRIVER,
                pool=ResourcePool(name, 0, 1),
                node_name=name,
                devices=tuple(Device(f"dev-{d}") for d in range(DEVICES_PER_SLICE)),
            )
        )
        shared.append(_allocated_claim(f"shared-{i}", DEVICES_PER_SLICE, name, 0))
        pods = tuple(_pod(f"pod-{i}-{j}", f"owned-{i}-{j}") for j in range(MAX_OWNED_PODS))
        owners.append(pods)
        owned.append(
            tuple(_allocated_claim(f"owned-{i}-{j}", 1, name, j, p) for j, p in enumerate(pods))
        )
        spods.append(tuple(_pod(f"spod-{i}-{j}", f"shared-{i}") for j in range(MAX_SHARED_PODS)))
    return Cluster(
        tuple(nodes),
        tuple(slices),
        tuple(shared),
        tuple(owned),
        tuple(owners),
        tuple(spods),
        (DeviceClass(name=DEVICE_CLASS),),
    )


# --------------------------------------------------------------------------- designs


class NoTxPredicateSnapshot(PredicateSnapshot):
    """``clone-notx``: no DRA fork per mutation (CA's SchedulePod is not transactional).
    Benchmark-only; overrides a private method."""

    @contextlib.contextmanager
    def _dra_transaction(self) -> Iterator[None]:
        yield


@functools.cache
def framework() -> Framework:
    """The default profile (the DynamicResources plugin runs), shared by every iteration."""
    return Framework(default_profile(), Handle())


def new_snapshot(design: str) -> PredicateSnapshot:
    """An empty snapshot of ``design``."""
    if design == "delta":
        return PredicateSnapshot(framework(), DeltaSnapshotStore())
    cls = NoTxPredicateSnapshot if design == "clone-notx" else PredicateSnapshot
    return cls(framework(), BasicSnapshotStore())


def run_iteration(
    design: str, cfg: Config, loop_nodes: int | None = None, check: bool = False
) -> PredicateSnapshot:
    """One benchmark iteration; the first ``loop_nodes`` nodes of the loop (None: all).

    With ``check``, asserts after each node's scheduling (before its commits and reverts)
    that every pod landed on the node and every claim it uses is reserved for it; schedule_pod
    itself raises SchedulingError on any failure.
    """
    snap = setup_iteration(design, cfg)
    run_loop(snap, cfg, loop_nodes, check)
    return snap


def setup_iteration(design: str, cfg: Config) -> PredicateSnapshot:
    """The iteration's setup: a new snapshot holding the DRA state (classes and every claim of
    the configuration), no nodes."""
    c = cluster()
    snap = new_snapshot(design)
    dra = DraSnapshot.from_objects(
        c.claims(cfg.nodes), (), c.classes, clone_on_fork=design != "delta"
    )
    snap.set_cluster_state([], [], dra)
    return snap


def run_loop(
    snap: PredicateSnapshot, cfg: Config, loop_nodes: int | None = None, check: bool = False
) -> None:
    """The iteration's operations: per node the forks, add_node_info, schedule_pod of its
    pods, the commits and the reverts."""
    c = cluster()
    visited = cfg.nodes if loop_nodes is None else min(loop_nodes, cfg.nodes)
    forks, commits, reverts = cfg.forks, cfg.commits, cfg.reverts
    for i in range(visited):
        node = c.nodes[i]
        for _ in range(forks):
            snap.fork()
        snap.add_node_info(NodeInfo(node, (c.slices[i],)))
        for pod in c.shared_pods[i][: cfg.shared_pods]:
            snap.schedule_pod(pod, node.name)
        for pod in c.owning_pods[i][: cfg.owned_pods]:
            snap.schedule_pod(pod, node.name)
        if check:
            _check_node(snap, cfg, i)
        for _ in range(commits):
            snap.commit()
        for _ in range(reverts):
            snap.revert()


def _check_node(snap: PredicateSnapshot, cfg: Config, i: int) -> None:
    c = cluster()
    node = c.nodes[i].name
    expected = [*c.shared_pods[i][: cfg.shared_pods], *c.owning_pods[i][: cfg.owned_pods]]
    stored = {pi.pod.uid for pi in snap.get_node_info(node).pods}
    assert stored == {p.uid for p in expected}, f"{cfg.name}: pods missing on {node}"
    for pod in expected:
        for claim in snap.dra_snapshot.pod_claims(pod):
            assert claim.status.allocation is not None, f"{claim.key} not allocated"
            assert any(r.uid == pod.uid for r in claim.status.reserved_for), (
                f"{claim.key} not reserved for {pod.key}"
            )


# --------------------------------------------------------------------------- measuring


def peak_bytes(design: str, cfg: Config, loop_nodes: int | None, ops_only: bool = False) -> int:
    """Peak traced bytes above the starting level during one iteration (tracemalloc); with
    ``ops_only`` during its operations only (the setup done before the measure starts)."""
    cluster()
    framework()
    gc.collect()
    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    try:
        if ops_only:
            snap = setup_iteration(design, cfg)
            gc.collect()
            tracemalloc.reset_peak()
            before = tracemalloc.get_traced_memory()[0]
            run_loop(snap, cfg, loop_nodes)
        else:
            tracemalloc.reset_peak()
            before = tracemalloc.get_traced_memory()[0]
            snap = run_iteration(design, cfg, loop_nodes)
        peak = tracemalloc.get_traced_memory()[1]
        del snap
    finally:
        if started:
            tracemalloc.stop()
    return peak - before


def allocated_bytes(
    design: str, cfg: Config, loop_nodes: int | None, ops_only: bool = False
) -> int:
    """Total bytes allocated during one iteration (or its operations), freed or not: the sum
    of every Python allocation memray records (``trace_python_allocators``; PyMem/PyObject
    malloc, calloc, realloc), the analogue of Go's B/op. Not for ratios between designs: it
    also counts what the interpreter allocates for every Python call (~150 B per call), so it
    grows with the calls made, not only with the data copied (use `peak_bytes`). Needs
    memray (``pip install '.[bench]'``); raises ImportError without it."""
    import os
    import tempfile

    import memray

    cluster()
    framework()
    snap = setup_iteration(design, cfg) if ops_only else None
    gc.collect()
    fd, path = tempfile.mkstemp(suffix=".memray")
    os.close(fd)
    os.remove(path)
    try:
        with memray.Tracker(path, trace_python_allocators=True):
            if snap is None:
                run_iteration(design, cfg, loop_nodes)
            else:
                run_loop(snap, cfg, loop_nodes)
        python_allocs = {
            memray.AllocatorType.PYMALLOC_MALLOC,
            memray.AllocatorType.PYMALLOC_CALLOC,
            memray.AllocatorType.PYMALLOC_REALLOC,
        }
        reader = memray.FileReader(path)
        return sum(r.size for r in reader.get_allocation_records() if r.allocator in python_allocs)
    finally:
        if os.path.exists(path):
            os.remove(path)


def median_seconds(
    design: str, cfg: Config, loop_nodes: int | None, rounds: int, ops_only: bool = False
) -> float:
    """Median wall time of ``rounds`` iterations (with ``ops_only``: of their operations)."""
    times = []
    for _ in range(rounds):
        snap = setup_iteration(design, cfg) if ops_only else None
        gc.collect()
        t0 = time.perf_counter()
        if snap is None:
            run_iteration(design, cfg, loop_nodes)
        else:
            run_loop(snap, cfg, loop_nodes)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _fmt_time(s: float | None) -> str:
    if s is None:
        return "-"
    if s >= 1:
        return f"{s:,.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:,.1f} ms"
    return f"{s * 1e6:,.0f} µs"


def _fmt_bytes(b: int | None) -> str:
    if b is None:
        return "-"
    if b >= 1 << 20:
        return f"{b / (1 << 20):,.1f} MiB"
    return f"{b / 1024:,.0f} KiB"


def _ratio(a: float | None, b: float | None) -> str:
    if a is None or b is None or b <= 0:
        return "-"
    r = a / b
    return f"{r:,.0f}x" if r >= 10 else f"{r:,.1f}x"


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("-k", action="append", default=[], help="substring of the name (repeatable)")
    p.add_argument("--loop", default="1", help="nodes the loop visits: a number or 'all'")
    p.add_argument("--rounds", type=int, default=3, help="timed rounds of delta")
    p.add_argument("--clone-rounds", type=int, default=1, help="timed rounds of a clone design")
    p.add_argument("--designs", default="clone,clone-notx,delta")
    p.add_argument(
        "--max-clone-forks",
        type=int,
        default=200,
        help="skip a clone design whose iteration makes more deep copies of the claim map",
    )
    p.add_argument("--no-memory", action="store_true")
    p.add_argument(
        "--allocated",
        action="store_true",
        help="also total bytes allocated (memray; counts ~150 B per Python call: not for ratios)",
    )
    p.add_argument(
        "--ops-only",
        action="store_true",
        help="measure the operations only (forks, add_node_info, schedule_pod, commits, "
        "reverts), not the setup of the snapshot and its DRA state, which is the same work in "
        "every design",
    )
    args = p.parse_args(argv)
    loop = None if args.loop == "all" else int(args.loop)
    designs = [d for d in args.designs.split(",") if d]
    base = "delta"
    print(
        f"loop nodes: {args.loop}; time = median of {args.rounds} rounds (clone designs: "
        f"{args.clone_rounds}); "
        "memory = tracemalloc peak above start; "
        + ("operations only" if args.ops_only else "whole iterations (setup included)")
    )
    others = [d for d in designs if d != base]
    head = ["configuration"]
    for d in designs:
        head.append(f"{d} time")
    head += [f"{d}/{base} time" for d in others]
    for d in designs:
        head.append(f"{d} peak")
    head += [f"{d}/{base} peak" for d in others]
    if args.allocated:
        head += [f"{d} allocated" for d in designs]
        head += [f"{d}/{base} allocated" for d in others]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for cfg in configs():
        if args.k and not any(k in cfg.name for k in args.k):
            continue
        run_iteration(base, cfg, loop, check=True)  # every schedule_pod succeeds
        t: dict[str, float | None] = {}
        m: dict[str, Any] = {}
        a: dict[str, Any] = {}
        visited = cfg.nodes if loop is None else min(loop, cfg.nodes)
        for d in designs:
            if d != base and cfg.clone_forks_per_node(d) * visited > args.max_clone_forks:
                t[d] = m[d] = a[d] = None
                continue
            rounds = args.rounds if d == base else args.clone_rounds
            if d != base:
                run_iteration(d, cfg, loop, check=True)
            t[d] = median_seconds(d, cfg, loop, rounds, args.ops_only)
            m[d] = None if args.no_memory else peak_bytes(d, cfg, loop, args.ops_only)
            a[d] = allocated_bytes(d, cfg, loop, args.ops_only) if args.allocated else None
        row = [cfg.name]
        row += [_fmt_time(t[d]) for d in designs]
        row += [_ratio(t[d], t[base]) for d in others]
        row += [_fmt_bytes(m[d]) for d in designs]
        row += [_ratio(m[d], m[base]) for d in others]
        if args.allocated:
            row += [_fmt_bytes(a[d]) for d in designs]
            row += [_ratio(a[d], a[base]) for d in others]
        print("| " + " | ".join(row) + " |", flush=True)


if __name__ == "__main__":
    main()
