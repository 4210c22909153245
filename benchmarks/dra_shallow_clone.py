"""The fair baseline for the DRA snapshot's patch sets: a clone that copies the claim map
shallowly (issue 17 item 7).

schedsim's ResourceClaims are immutable (a reservation makes a new claim object), so a
clone-on-fork DRA snapshot needs to copy only the *map* of claims on fork, not the claims
(CA's clone design before autoscaler PR #8090 deep-copied them because it mutated claims in
place; ``benchmarks/dra_schedule_revert.py`` measures that design). This file measures the
shallow clone against the PatchSet-based snapshot:

* ``shallow``: `DraSnapshot` with its claim, slice and class maps in `CloningMap`s without
  deep copy (fork = one dict copy per map, O(claims) at C speed; reads and writes one dict
  operation). Built here, benchmark-only (``_ShallowCloneDraSnapshot``), with the supported
  `PredicateSnapshot` around it (which forks and commits the DRA state around every
  ``add_node_info`` and ``schedule_pod``).
* ``delta``: the supported design, `DeltaSnapshotStore` + `DraSnapshot` on `PatchSet`s (fork
  O(1); reads walk the layers, cached per key; commit and revert O(changes)).

Both with schedsim's `PredicateSnapshot` (a DRA fork + commit around every ``add_node_info``
and ``schedule_pod``: many forks) and without that transaction ("no tx": CA's SchedulePod,
forks only where the workload forks).

Two measures, both sides timed in the same run, alternated, median of ``--rounds``:

1. **CA's BenchmarkScheduleRevert** (the workload of ``dra_schedule_revert.py``): the DRA
   state of its 100-node configurations (10,100 claims: 100 shared, 10,000 pod-owned), the
   first ``--loop`` nodes of CA's loop (per-node work is the same for every node).
2. **Claims x forks**: the DRA snapshot alone. C claims (200, 1,100 or 10,100: the shared
   claims plus the owned claims of 1, 10 or 100 nodes); a cycle is one fork, K reservations
   (``reserve_pod_claims`` of K pods, one claim each: what ``schedule_pod`` writes), one
   revert; K = 1, 10, 100 operations per fork. The shallow clone pays O(C) per fork, the
   patch sets O(1) per fork and a layered lookup per operation.

Run: ``python benchmarks/dra_shallow_clone.py [--rounds 3] [--loop 10] [--only ca|grid]``.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import time
from collections.abc import Callable, Iterable

import dra_schedule_revert as sr

from schedsim.api.resource import DeviceClass, ResourceClaim
from schedsim.snapshot import BasicSnapshotStore, DeltaSnapshotStore, PredicateSnapshot
from schedsim.snapshot.cloning import CloningMap
from schedsim.snapshot.dra import DraSnapshot

DESIGNS = ("shallow", "delta")


class _ShallowCloneDraSnapshot(DraSnapshot):
    """A DraSnapshot whose fork copies its three maps shallowly (the claims are shared: they
    are immutable). Benchmark-only: built on the clone-on-fork snapshot, with its deep-copying
    claim map replaced by a shallow one (a private attribute of DraSnapshot)."""

    __slots__ = ()

    def __init__(self, claims: Iterable[ResourceClaim], classes: Iterable[DeviceClass]) -> None:
        super().__init__(claims, None, (), classes, clone_on_fork=True)
        self._claims = CloningMap(self._claims.as_map(), deep_copy=False)


def dra_state(design: str, claims: list[ResourceClaim]) -> DraSnapshot:
    """The DRA snapshot of ``design`` holding ``claims`` and the benchmark's class."""
    c = sr.cluster()
    if design == "shallow":
        return _ShallowCloneDraSnapshot(claims, c.classes)
    return DraSnapshot.from_objects(claims, (), c.classes)


def ca_iteration(design: str, cfg: sr.Config, loop: int, transactions: bool = True) -> float:
    """Seconds for one ScheduleRevert iteration's operations (setup not timed); without
    ``transactions``, `PredicateSnapshot` does not fork and commit the DRA state around each
    mutation (CA's SchedulePod is not transactional; ``dra_schedule_revert``'s yardstick)."""
    c = sr.cluster()
    cls = PredicateSnapshot if transactions else sr.NoTxPredicateSnapshot
    store = BasicSnapshotStore() if design == "shallow" else DeltaSnapshotStore()
    snap = cls(sr.framework(), store)
    snap.set_cluster_state([], [], dra_state(design, c.claims(cfg.nodes)))
    start = time.perf_counter()
    sr.run_loop(snap, cfg, loop)
    return time.perf_counter() - start


def grid_cycle(design: str, nodes: int, ops: int, seconds: float = 0.05) -> float:
    """Seconds per fork / ``ops`` reservations / revert cycle on ``nodes`` nodes' claims
    (cycles repeated for at least ``seconds``)."""
    c = sr.cluster()
    dra = dra_state(design, c.claims(nodes))
    pods = [p for i in range(nodes) for p in c.owning_pods[i]][:ops]
    cycles = 0
    start = time.perf_counter()
    while True:
        dra.fork()
        for pod in pods:
            dra.reserve_pod_claims(pod)
        dra.revert()
        cycles += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return elapsed / cycles


def _alternated(run: Callable[[str], float], rounds: int) -> dict[str, float]:
    """Median seconds per design, the designs alternated in every round."""
    times: dict[str, list[float]] = {d: [] for d in DESIGNS}
    for _ in range(rounds):
        for d in DESIGNS:
            times[d].append(run(d))
    return {d: statistics.median(t) for d, t in times.items()}


def _fmt(s: float) -> str:
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.1f} ms"
    return f"{s * 1e6:.0f} us"


def _check(cfg: sr.Config) -> None:
    """The shallow clone schedules CA's workload correctly (every pod placed, every claim
    reserved for its pod), as `dra_schedule_revert.run_iteration(check=True)` checks."""
    c = sr.cluster()
    snap = PredicateSnapshot(sr.framework(), BasicSnapshotStore())
    snap.set_cluster_state([], [], dra_state("shallow", c.claims(cfg.nodes)))
    sr.run_loop(snap, cfg, 1, check=True)


def main(argv: list[str] | None = None) -> int:
    """Print both tables (markdown), shallow / delta ratios (> 1: the patch sets win)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--loop", type=int, default=10, help="nodes of CA's loop (100: all)")
    ap.add_argument("--only", choices=("ca", "grid"))
    args = ap.parse_args(argv)
    sr.cluster()
    sr.framework()
    if args.only != "grid":
        print(f"CA ScheduleRevert, 100 nodes' DRA state, first {args.loop} nodes of the loop")
        print(
            "| configuration | claims | shallow | patch sets | shallow / patch | shallow, "
            "no tx | patch sets, no tx | shallow / patch, no tx |"
        )
        print("|---|---|---|---|---|---|---|---|")
        for pods in ((0, 100), (0, 1), (32, 0), (32, 50)):
            for mix in ("ForkRevert", "Fork5Revert5", "ForkCommit"):
                cfg = sr.Config(100, pods[0], pods[1], mix)
                _check(cfg)
                cells = [cfg.name, f"{len(sr.cluster().claims(cfg.nodes)):,}"]
                for tx in (True, False):
                    run = functools.partial(ca_iteration, cfg=cfg, loop=args.loop, transactions=tx)
                    t = _alternated(run, args.rounds)
                    cells += [_fmt(t["shallow"]), _fmt(t["delta"])]
                    cells.append(f"{t['shallow'] / t['delta']:.2f}x")
                print("| " + " | ".join(cells) + " |", flush=True)
    if args.only != "ca":
        print("\nClaims x operations per fork: fork, K reservations, revert (per cycle)")
        print("| claims | K ops per fork | shallow clone | patch sets | shallow / patch |")
        print("|---|---|---|---|---|")
        for nodes in (1, 10, 100):
            for k in (1, 10, 100):
                t = _alternated(functools.partial(grid_cycle, nodes=nodes, ops=k), args.rounds)
                claims = len(sr.cluster().claims(nodes))
                print(
                    f"| {claims:,} | {k} | {_fmt(t['shallow'])} | {_fmt(t['delta'])} "
                    f"| {t['shallow'] / t['delta']:.2f}x |",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
