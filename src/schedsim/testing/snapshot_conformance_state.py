"""The store conformance kit's state dump and checks: `NodeState`, `dump_state`,
`check_snapshot_consistency` (get/list/lister caches agree) and the expectation helpers
every check uses."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NoReturn

import attrs

from schedsim.api.core import Pod
from schedsim.snapshot import (
    ClusterSnapshotStore,
    NodeInfo,
    PredicateSnapshot,
    SchedulingError,
    SchedulingErrorType,
)

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


def fail(message: str) -> NoReturn:
    raise AssertionError(message)


def expect_equal(what: str, got: object, want: object) -> None:
    if got != want:
        fail(f"{what}: got {got!r}, want {want!r}")


def expect_true(what: str, cond: bool) -> None:
    if not cond:
        fail(what)


def expect_raises(
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
                fail(f"{what}: expected a {scheduling_type.name} SchedulingError, got {e!r}")
        return e
    except Exception as e:
        fail(f"{what}: expected {exc.__name__}, got {type(e).__name__}: {e}")
    fail(f"{what}: expected {exc.__name__}, nothing was raised")


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
    expect_true(
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
            fail(f"listed NodeInfo without a Node: {ni!r}")
        name = node.name
        names.append(name)
        try:
            got, got_lister = snapshot.get_node_info(name), lister.get(name)
        except LookupError as e:
            fail(f"listed node {name!r} cannot be got: {type(e).__name__}: {e}")
        expect_true(f"get_node_info({name!r}) is not the listed NodeInfo", got is ni)
        expect_true(f"node_infos().get({name!r}) is not the listed NodeInfo", got_lister is ni)
        cpu = mem = 0
        for p in ni.pods:
            r = p.calculate_resource().resource
            cpu += r.milli_cpu
            mem += r.memory
            for key in _pvc_keys(p.pod):
                expect_true(
                    f"is_pvc_used_by_pods({key!r}) is false but {p.pod.key} on {name} uses it",
                    storage.is_pvc_used_by_pods(key),
                )
        expect_equal(
            f"{name}: requested (milli_cpu, memory) vs the sum over its pods",
            (ni.requested.milli_cpu, ni.requested.memory),
            (cpu, mem),
        )
        expect_equal(
            f"{name}: pods_with_affinity",
            sorted(p.pod.key for p in ni.pods_with_affinity),
            sorted(p.pod.key for p in ni.pods if p.has_affinity),
        )
        expect_equal(
            f"{name}: pods_with_required_anti_affinity",
            sorted(p.pod.key for p in ni.pods_with_required_anti_affinity),
            sorted(p.pod.key for p in ni.pods if p.required_anti_affinity_terms),
        )
        if ni.pods_with_affinity:
            with_affinity.add(name)
        if ni.pods_with_required_anti_affinity:
            with_anti_affinity.add(name)
    expect_equal("duplicate node names in list_node_infos()", len(set(names)), len(names))
    held = {ni.csi_node.name: ni.csi_node for ni in nodes if ni.csi_node is not None}
    expect_equal(
        "CSINodes in the CSI snapshot vs the NodeInfos' csi_node",
        sorted(c.name for c in snapshot.csi_snapshot.list()),
        sorted(held),
    )
    for csi_name, csi_node in held.items():
        expect_true(
            f"CSI snapshot's CSINode {csi_name!r} is not the NodeInfo's csi_node",
            snapshot.csi_snapshot.get_csi_node(csi_name) is csi_node,
        )
    expect_equal(
        "have_pods_with_affinity_list()",
        sorted(node_names(lister.have_pods_with_affinity_list())),
        sorted(with_affinity),
    )
    expect_equal(
        "have_pods_with_required_anti_affinity_list()",
        sorted(node_names(lister.have_pods_with_required_anti_affinity_list())),
        sorted(with_anti_affinity),
    )


def node_names(nodes: Iterable[NodeInfo]) -> list[str]:
    return [ni.node.name if ni.node is not None else "" for ni in nodes]


def _fmt(state: Mapping[str, NodeState]) -> str:
    parts = [
        f"{name}: pods={list(st.pods)} cpu={st.milli_cpu}m mem={st.memory} n={st.pod_count}"
        + (f" csi={st.csi_node}" if st.csi_node is not None else "")
        for name, st in sorted(state.items())
    ]
    return "{" + "; ".join(parts) + "}"


def expect_state(snapshot: PredicateSnapshot, want: Mapping[str, NodeState], step: str) -> None:
    check_snapshot_consistency(snapshot)
    got = dump_state(snapshot)
    if got != dict(want):
        fail(f"{step}: snapshot state differs\n  got:  {_fmt(got)}\n  want: {_fmt(want)}")


def prime_caches(snapshot: PredicateSnapshot) -> None:
    """Read everything a store may cache (CA's "cache, fork & commit" primes List and
    HavePodsWithAffinityList)."""
    lister = snapshot.node_infos()
    for ni in snapshot.list_node_infos():
        if ni.node is not None:
            snapshot.get_node_info(ni.node.name)
    lister.have_pods_with_affinity_list()
    lister.have_pods_with_required_anti_affinity_list()
    snapshot.storage_infos().is_pvc_used_by_pods("default/claim1")


def failure_of(name: str, check: Callable[..., None], *args: Any) -> str | None:
    """``NAME: message`` when ``check(*args)`` fails (an AssertionError, or any other
    exception, named), else None."""
    try:
        check(*args)
    except AssertionError as e:
        return f"{name}: {e}"
    except Exception as e:
        return f"{name}: unexpected {type(e).__name__}: {e}"
    return None


def report_failures(kit: str, failed: Mapping[str, Sequence[str]]) -> None:
    """Raise one AssertionError listing one ``- `` item per broken invariant (its first
    failing case and message, further lines indented, and how many other variants of it
    failed too); nothing when ``failed`` (invariant -> messages) is empty.

    Raises:
        AssertionError: ``N KIT conformance case(s) failed, M broken invariant(s):`` + items.
    """
    if not failed:
        return
    lines = []
    for messages in failed.values():
        more = f" (and {len(messages) - 1} more variant(s))" if len(messages) > 1 else ""
        first, _, rest = messages[0].partition("\n")
        indented = rest.replace("\n", "\n  ")
        lines.append(f"- {first}{more}" + (f"\n  {indented}" if rest else ""))
    raise AssertionError(
        f"{sum(map(len, failed.values()))} {kit} conformance case(s) failed, "
        f"{len(failed)} broken invariant(s):\n" + "\n".join(lines)
    )
