"""DRA scenarios for the store conformance suite: claims and slices through every fork mode.

Every scenario builds a `schedsim.snapshot.PredicateSnapshot` with the default profile (so the
real DynamicResources plugin allocates devices in Filter/Reserve) over a fresh store, gives it
a cluster with ResourceSlices, DeviceClasses and ResourceClaims through ``set_cluster_state``,
runs one operation and compares the result through two canonical dumps: the nodes and pods
(`schedsim.testing.snapshot_conformance.dump_state`) and the DRA state (`dump_dra_state`: per
claim its allocated devices, the node its allocation is for and its ``reservedFor``; per node
the names of its local slices). Every comparison also runs `check_dra_consistency`: NodeInfos'
``local_resource_slices`` and PodInfos' ``needed_resource_claims`` agree with the DRA snapshot,
and ``reservedFor`` entries name exactly the stored pods using each claim.

The scenarios mirror Cluster Autoscaler's ``predicate_snapshot_test.go`` DRA cases (``TestForking``
``validTestCases`` whose names start with "add nodeInfo with LocalResourceSlices", "schedule pod
with claims", "unschedule pod with claims", ...), CA's ``dynamicresources/snapshot`` semantics
(``ReservePodClaims``, ``UnreservePodClaims``, ``RemovePodOwnedClaims``) and the Kubernetes
behaviour they emulate; each scenario's ``description`` says which. Every scenario runs in every
`DRA_FORK_MODES` mode (no fork; fork; fork & revert; fork & commit; nested forks with a node
that has its own slices added in the inner fork, as CA's ``TestForking`` does), with the DRA
snapshot on patch sets (``clone_on_fork=False``) or on clones (``clone_on_fork=True``). A
failing operation must leave everything exactly as it was (schedsim's mutations are
transactional; CA's are not): the claim objects, the slices, the NodeInfos and their PodInfos.

Use it like the main suite::

    from schedsim.testing.dra_conformance import run_dra_conformance

    def test_my_store_conforms_with_dra() -> None:
        run_dra_conformance(MyStore)                      # patch-set DRA snapshot
        run_dra_conformance(MyStore, clone_on_fork=True)  # cloning DRA snapshot

A check signals a failure by raising `AssertionError` with a message naming the step.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NoReturn

import attrs

from schedsim.api.core import Node, Pod
from schedsim.api.resource import DeviceClass, ResourceClaim, ResourceSlice
from schedsim.snapshot import (
    NodeInfo,
    PodInfo,
    PredicateSnapshot,
    SchedulingError,
    SchedulingErrorType,
)
from schedsim.snapshot.dra import (
    NON_LOCAL_SLICES_KEY,
    DraSnapshot,
    DraSnapshotError,
    claim_available_on_node,
    claim_reserved_for_pod,
)
from schedsim.testing.snapshot_conformance import (
    NodeState,
    StoreFactory,
    check_snapshot_consistency,
    dump_state,
    make_node,
    make_pod,
    new_snapshot,
)
from schedsim.testing.snapshot_conformance_state import failure_of, report_failures

__all__ = [
    "DRA_CONFORMANCE_CASES",
    "DRA_FORK_MODES",
    "DRA_SCENARIOS",
    "GPU_CLASS",
    "ClaimState",
    "DraConformanceCase",
    "DraForkMode",
    "DraScenario",
    "DraState",
    "check_dra_consistency",
    "dump_dra_state",
    "make_dra_pod",
    "make_gpu_claim",
    "new_dra_snapshot",
    "run_dra_conformance",
]

# --------------------------------------------------------------------------- state and checks


@attrs.frozen
class ClaimState:
    """What the DRA dump records for one claim.

    Attributes:
        devices: ``pool/device`` of each allocation result, in result order; () when the
            claim is not allocated.
        node: the node a single-node allocation selector names (``matchFields metadata.name In
            [node]``, what the allocator writes for node-local devices); None when the claim is
            not allocated or its allocation has no node selector; the selector's repr otherwise.
        reserved_for: the names of the pods in ``status.reservedFor``, in order.
        allocated: ``status.allocation`` is set.
    """

    devices: tuple[str, ...] = ()
    node: str | None = None
    reserved_for: tuple[str, ...] = ()
    allocated: bool = False


UNALLOCATED = ClaimState()
"""A claim without allocation and reservations."""


@attrs.frozen
class DraState:
    """The canonical dump of a DRA snapshot.

    Attributes:
        claims: ``namespace/name`` -> `ClaimState`, for every tracked claim.
        slices: node name -> names of its node-local slices, for every node with an entry
            (slices that are not node-local are listed under ``NON_LOCAL_SLICES_KEY`` when
            there are any).
    """

    claims: Mapping[str, ClaimState] = attrs.field(factory=dict)
    slices: Mapping[str, tuple[str, ...]] = attrs.field(factory=dict)


def _claim_state(claim: ResourceClaim) -> ClaimState:
    allocation = claim.status.allocation
    reserved = tuple(r.name for r in claim.status.reserved_for)
    if allocation is None:
        return ClaimState(reserved_for=reserved)
    node: str | None = None
    sel = allocation.node_selector
    if sel is not None:
        fields = sel[0].match_fields if len(sel) == 1 else ()
        if (
            len(sel) == 1
            and not sel[0].match_expressions
            and len(fields) == 1
            and fields[0].key == "metadata.name"
            and fields[0].operator == "In"
            and len(fields[0].values) == 1
        ):
            node = fields[0].values[0]
        else:
            node = repr(sel)
    devices = tuple(f"{r.pool}/{r.device}" for r in allocation.results)
    return ClaimState(devices, node, reserved, allocated=True)


def dump_dra_state(snapshot: PredicateSnapshot) -> DraState:
    """The canonical dump of ``snapshot.dra_snapshot`` (claims and slices; device classes
    never change)."""
    dra = snapshot.dra_snapshot
    claims = {c.key: _claim_state(c) for c in dra.list_resource_claims()}
    slices: dict[str, list[str]] = {}
    for s in dra.list_resource_slices():
        slices.setdefault(s.node_name or NON_LOCAL_SLICES_KEY, []).append(s.name)
    # nodes whose entry holds no slices are invisible in the list: ask for the known nodes
    for ni in snapshot.list_node_infos():
        if ni.node is not None:
            local, found = dra.node_resource_slices(ni.node.name)
            if found and not local:
                slices.setdefault(ni.node.name, [])
    return DraState(claims, {k: tuple(v) for k, v in sorted(slices.items())})


def _fail(message: str) -> NoReturn:
    raise AssertionError(message)


def _expect_equal(what: str, got: object, want: object) -> None:
    if got != want:
        _fail(f"{what}: got {got!r}, want {want!r}")


def check_dra_consistency(snapshot: PredicateSnapshot) -> None:
    """Check that the NodeInfos and PodInfos agree with the DRA snapshot (and run
    `check_snapshot_consistency`).

    * each NodeInfo's ``local_resource_slices`` are the DRA snapshot's slices for its node
      (the same objects, in order; none when the node has no entry);
    * each stored pod without ``spec.resourceClaims`` needs no claims; for each pod with
      claims, its PodInfo's ``needed_resource_claims`` are the pod's claims in the DRA snapshot
      (same namespace/name/UID, in order) with the same allocation, and each of those claims
      is allocated, available on the pod's node and reserved for the pod. (The PodInfo's copy
      of a shared claim may lag behind on ``reservedFor``, CA's stale-claims TODO; a pod added
      with ``force_add_pod`` is not reserved, as in CA, and fails this check.)
    * every ``reservedFor`` entry of every claim names a stored pod (by UID) that uses it.

    Raises:
        AssertionError: naming the first disagreement.
    """
    check_snapshot_consistency(snapshot)
    dra = snapshot.dra_snapshot
    users: dict[str, set[str]] = {}  # claim key -> UIDs of stored pods using it
    for ni in snapshot.list_node_infos():
        node = ni.node
        if node is None:
            _fail(f"listed NodeInfo without a Node: {ni!r}")
        local, _ = dra.node_resource_slices(node.name)
        got = ni.local_resource_slices
        if len(got) != len(local) or any(a is not b for a, b in zip(got, local, strict=False)):
            _fail(
                f"{node.name}: local_resource_slices {[s.name for s in got]} are not the DRA "
                f"snapshot's slices {[s.name for s in local]}"
            )
        for pi in ni.pods:
            _check_pod_claims(dra, node, pi, users)
    for claim in dra.list_resource_claims():
        for ref in claim.status.reserved_for:
            if ref.resource == "pods" and ref.uid not in users.get(claim.key, set()):
                _fail(
                    f"claim {claim.key} is reserved for pod {ref.name} (uid {ref.uid}), which "
                    f"is not a stored pod using it"
                )


def _check_pod_claims(
    dra: DraSnapshot, node: Node, pi: PodInfo, users: dict[str, set[str]]
) -> None:
    pod = pi.pod
    needed = pi.needed_resource_claims
    if not pod.resource_claims:
        if needed:
            _fail(f"{pod.key}: has no spec.resourceClaims but needs claims {needed!r}")
        return
    try:
        claims = dra.pod_claims(pod)
    except DraSnapshotError as e:
        _fail(f"{pod.key} on {node.name}: its claims are not all in the DRA snapshot: {e}")
    _expect_equal(
        f"{pod.key} on {node.name}: needed_resource_claims (key, uid) vs the DRA snapshot",
        [(c.key, c.uid) for c in needed],
        [(c.key, c.uid) for c in claims],
    )
    for mine, theirs in zip(needed, claims, strict=True):
        _expect_equal(
            f"{pod.key}: allocation of its claim {theirs.key} in the PodInfo vs the DRA snapshot",
            mine.status.allocation,
            theirs.status.allocation,
        )
        if not claim_available_on_node(theirs, node):
            _fail(f"{pod.key}: claim {theirs.key} is not allocated for its node {node.name}")
        if not claim_reserved_for_pod(pod, theirs):
            _fail(f"{pod.key}: claim {theirs.key} is not reserved for it")
        users.setdefault(theirs.key, set()).add(pod.uid)


def _fmt_dra(state: DraState) -> str:
    claims = "; ".join(f"{k}: {v}" for k, v in sorted(state.claims.items()))
    return f"claims {{{claims}}} slices {dict(state.slices)}"


def _expect_dra_state(
    snapshot: PredicateSnapshot,
    nodes: Mapping[str, NodeState],
    dra: DraState,
    step: str,
) -> None:
    check_dra_consistency(snapshot)
    got = dump_state(snapshot)
    if got != dict(nodes):
        _fail(f"{step}: nodes and pods differ\n  got:  {got}\n  want: {dict(nodes)}")
    got_dra = dump_dra_state(snapshot)
    if got_dra != dra:
        _fail(f"{step}: DRA state differs\n  got:  {_fmt_dra(got_dra)}\n  want: {_fmt_dra(dra)}")


def _full_state(snapshot: PredicateSnapshot) -> object:
    """Everything a failing operation must leave alone: the claim objects, the slices, and
    per node its slices and each PodInfo's pod and claims (objects compared by value)."""
    dra = snapshot.dra_snapshot
    nodes = []
    for ni in snapshot.list_node_infos():
        assert ni.node is not None
        pods = sorted(
            ((p.pod.key, p.pod, p.needed_resource_claims) for p in ni.pods), key=lambda t: t[0]
        )
        nodes.append((ni.node.name, tuple(ni.local_resource_slices), pods))
    return (
        sorted(((c.key, c) for c in dra.list_resource_claims()), key=lambda t: t[0]),
        sorted((s.name, s) for s in dra.list_resource_slices()),
        nodes,
    )


# --------------------------------------------------------------------------- objects

DRIVER = "gpu.example.com"
GPU_CLASS = DeviceClass.from_manifest(
    {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu.example.com"},
        "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{DRIVER}'"}}]},
    }
)


def _node(name: str) -> Node:
    # room for 300 small pods: the max-reservations scenario puts 256 on one node
    return make_node(name, cpu="8", memory="16Gi", pods=300)


N1 = _node("dra-node-1")
N2 = _node("dra-node-2")
PLAIN = _node("plain-node")
"""A node without slices."""
EXTRA = _node("dra-extra")
"""Added with its own slice in the inner fork by the nested fork modes."""


def _slice(node: Node, gpus: int = 2) -> ResourceSlice:
    """The node's slice in the dra-example-driver's shape: pool = node name, ``gpu-<i>``."""
    return ResourceSlice.from_manifest(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": f"{node.name}-gpus"},
            "spec": {
                "driver": DRIVER,
                "nodeName": node.name,
                "pool": {"name": node.name, "generation": 1, "resourceSliceCount": 1},
                "devices": [{"name": f"gpu-{i}"} for i in range(gpus)],
            },
        }
    )


S1, S2, S_EXTRA = _slice(N1), _slice(N2), _slice(EXTRA)


def make_dra_pod(name: str, *, owned: int = 0, shared: Sequence[str] = (), node: str = "") -> Pod:
    """A pod (10m CPU, 10Mi) with ``owned`` claims from the template ``one-gpu`` (named
    ``<name>-gpu-<i>`` in ``status.resourceClaimStatuses``, as the resource-claim controller
    names them) and the ``shared`` claims by name; ``node``: its ``spec.nodeName``."""
    refs: list[dict[str, str]] = [
        {"name": f"gpu-{i}", "resourceClaimTemplateName": "one-gpu"} for i in range(owned)
    ]
    refs += [{"name": f"shared-{i}", "resourceClaimName": c} for i, c in enumerate(shared)]
    pod = make_pod(name, cpu="10m", memory="10Mi", node_name=node, spec={"resourceClaims": refs})
    statuses = {f"gpu-{i}": f"{name}-gpu-{i}" for i in range(owned)}
    return attrs.evolve(pod, resource_claim_statuses=statuses)


def make_gpu_claim(
    name: str,
    *,
    owner: Pod | None = None,
    count: int = 1,
    node: Node | None = None,
    devices: Sequence[str] = (),
    reserved_for: Sequence[Pod] = (),
) -> ResourceClaim:
    """A claim for ``count`` GPUs; owned by ``owner`` (a controller ownerReference, what
    the resource-claim controller sets); allocated on ``node`` with ``devices`` of its slice;
    reserved for ``reserved_for``."""
    meta: dict[str, Any] = {"name": name, "namespace": "default", "uid": f"uid-claim-{name}"}
    if owner is not None:
        meta["ownerReferences"] = [
            {"apiVersion": "v1", "kind": "Pod", "name": owner.name, "uid": owner.uid,
             "controller": True, "blockOwnerDeletion": True}
        ]  # fmt: skip
    raw: dict[str, Any] = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": meta,
        "spec": {
            "devices": {
                "requests": [
                    {"name": "gpu", "exactly": {"deviceClassName": GPU_CLASS.name, "count": count}}
                ]
            }
        },
    }
    if node is not None:
        meta["finalizers"] = ["resource.kubernetes.io/delete-protection"]
        raw["status"] = {
            "allocation": {
                "devices": {
                    "results": [
                        {"request": "gpu", "driver": DRIVER, "pool": node.name, "device": d}
                        for d in devices
                    ]
                },
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {
                            "matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": [node.name]}
                            ]
                        }
                    ]
                },
            },
            "reservedFor": [
                {"resource": "pods", "name": p.name, "uid": p.uid} for p in reserved_for
            ],
        }
    return ResourceClaim.from_manifest(raw)


def _alloc(node: Node, *devices: str, reserved_for: Sequence[str] = ()) -> ClaimState:
    return ClaimState(
        tuple(f"{node.name}/{d}" for d in devices), node.name, tuple(reserved_for), True
    )


def _on(pod: Pod, node: Node) -> Pod:
    return attrs.evolve(pod, node_name=node.name)


# P1 owns one GPU claim and uses the shared claim; P2 uses the shared claim only; P3 owns one.
P1 = make_dra_pod("p1", owned=1, shared=["shared"])
P2 = make_dra_pod("p2", shared=["shared"])
P3 = make_dra_pod("p3", owned=1)
BIG = make_dra_pod("big", owned=1)
"""Owns a claim for 3 GPUs: no node has that many."""

P1_GPU = make_gpu_claim("p1-gpu-0", owner=P1)
P3_GPU = make_gpu_claim("p3-gpu-0", owner=P3)
BIG_GPU = make_gpu_claim("big-gpu-0", owner=BIG, count=3)
SHARED = make_gpu_claim("shared")

# allocated versions, as a cluster where p1 (and p2) run on dra-node-1 has them
P1_GPU_ON_N1 = make_gpu_claim("p1-gpu-0", owner=P1, node=N1, devices=["gpu-0"], reserved_for=[P1])
SHARED_ON_N1_P1 = make_gpu_claim("shared", node=N1, devices=["gpu-1"], reserved_for=[P1])
SHARED_ON_N1_P1_P2 = make_gpu_claim("shared", node=N1, devices=["gpu-1"], reserved_for=[P1, P2])
SHARED_ON_N1_P2 = make_gpu_claim("shared", node=N1, devices=["gpu-1"], reserved_for=[P2])

_POD_STATE_CPU, _POD_STATE_MEM = 10, 10 * 1024**2


def _ns(*pods: Pod) -> NodeState:
    """The node dump of a node running ``pods`` (10m CPU and 10Mi each)."""
    return NodeState(
        tuple(sorted(p.key for p in pods)),
        _POD_STATE_CPU * len(pods),
        _POD_STATE_MEM * len(pods),
        len(pods),
    )


EMPTY = NodeState()
_SLICES_1_2 = {N1.name: (S1.name,), N2.name: (S2.name,)}

# 256 pods sharing one claim on dra-node-1: the claim is fully reserved
_USERS = tuple(make_dra_pod(f"user-{i:03d}", shared=["crowded"], node=N1.name) for i in range(256))
CROWDED = make_gpu_claim("crowded", node=N1, devices=["gpu-0"], reserved_for=_USERS)
LATECOMER = make_dra_pod("latecomer", shared=["crowded"])
_CROWDED_STATE = _alloc(N1, "gpu-0", reserved_for=[p.name for p in _USERS])


# --------------------------------------------------------------------------- scenarios


@attrs.frozen
class DraScenario:
    """One operation on a snapshot with DRA state, and the states before and after it.

    Attributes:
        name: short, unique.
        description: the CA test case or Kubernetes behaviour it mirrors.
        op: the operation; it may check its own results (e.g. the chosen node).
        nodes: the initial cluster's nodes.
        pods: its scheduled pods (``spec.nodeName`` set).
        claims, slices: its DRA objects (the device class is `GPU_CLASS`).
        initial, initial_dra: the state ``set_cluster_state`` builds.
        modified, modified_dra: the state after ``op`` (the initial one when ``op`` fails).
        error: the exception ``op`` must raise, if any (then nothing may change).
        scheduling_error: its type when it is a `SchedulingError`.
        error_match: a substring of the error's message.
    """

    name: str
    description: str
    op: Callable[[PredicateSnapshot], None]
    nodes: tuple[Node, ...]
    pods: tuple[Pod, ...]
    claims: tuple[ResourceClaim, ...]
    slices: tuple[ResourceSlice, ...]
    initial: Mapping[str, NodeState]
    initial_dra: DraState
    modified: Mapping[str, NodeState]
    modified_dra: DraState
    error: type[Exception] | None = None
    scheduling_error: SchedulingErrorType | None = None
    error_match: str = ""

    def run_op(self, snapshot: PredicateSnapshot) -> None:
        """Run ``op``; check it raises what it must and that a failure changed nothing."""
        if self.error is None:
            try:
                self.op(snapshot)
            except AssertionError:
                raise
            except Exception as e:
                _fail(f"op raised {type(e).__name__}: {e}")
            return
        before = _full_state(snapshot)
        try:
            self.op(snapshot)
        except self.error as e:
            if self.scheduling_error is not None:
                got = e.type if isinstance(e, SchedulingError) else None
                if got is not self.scheduling_error:
                    _fail(f"op: expected a {self.scheduling_error.name} SchedulingError, got {e!r}")
            if self.error_match not in str(e):
                _fail(f"op: error {str(e)!r} does not contain {self.error_match!r}")
        except Exception as e:
            _fail(f"op: expected {self.error.__name__}, got {type(e).__name__}: {e}")
        else:
            _fail(f"op: expected {self.error.__name__}, nothing was raised")
        if _full_state(snapshot) != before:
            _fail("op failed but changed the snapshot (claims, slices or NodeInfos)")


def _schedule_p1_on_n1(s: PredicateSnapshot) -> None:
    s.schedule_pod(P1, N1.name)


def _schedule_p2_on_n1(s: PredicateSnapshot) -> None:
    s.schedule_pod(P2, N1.name)


def _schedule_p2_on_n2(s: PredicateSnapshot) -> None:
    s.schedule_pod(P2, N2.name)


def _schedule_p1_on_any(s: PredicateSnapshot) -> None:
    _expect_equal(
        "schedule_pod_on_any_node_matching(p1)", s.schedule_pod_on_any_node_matching(P1), N1.name
    )


def _schedule_p1_then_p3_on_any(s: PredicateSnapshot) -> None:
    _expect_equal("first pod's node", s.schedule_pod_on_any_node_matching(P1), N2.name)
    _expect_equal("second pod's node", s.schedule_pod_on_any_node_matching(P3), N1.name)


def _schedule_p1_on_any_matching_n2(s: PredicateSnapshot) -> None:
    got = s.schedule_pod_on_any_node_matching(
        P1, lambda ni: ni.node is not None and ni.node.name == N2.name
    )
    _expect_equal("schedule_pod_on_any_node_matching(p1, only dra-node-2)", got, N2.name)


def _schedule_big_on_n1(s: PredicateSnapshot) -> None:
    s.schedule_pod(BIG, N1.name)


def _schedule_big_on_any(s: PredicateSnapshot) -> None:
    s.schedule_pod_on_any_node_matching(BIG)


def _schedule_latecomer(s: PredicateSnapshot) -> None:
    s.schedule_pod(LATECOMER, N1.name)


def _unschedule_p1(s: PredicateSnapshot) -> None:
    s.unschedule_pod("default", "p1", N1.name)


def _unschedule_p2(s: PredicateSnapshot) -> None:
    s.unschedule_pod("default", "p2", N1.name)


def _unschedule_p1_reschedule_on_n2(s: PredicateSnapshot) -> None:
    s.unschedule_pod("default", "p1", N1.name)
    s.schedule_pod(P1, N2.name)


def _unschedule_p1_reschedule_on_n1(s: PredicateSnapshot) -> None:
    s.unschedule_pod("default", "p1", N1.name)
    s.schedule_pod(P1, N1.name)


def _remove_n1(s: PredicateSnapshot) -> None:
    s.remove_node_info(N1.name)


def _remove_n1_add_back(s: PredicateSnapshot) -> None:
    ni = s.get_node_info(N1.name)
    s.remove_node_info(N1.name)
    s.add_node_info(ni)


def _add_n2_with_slices_then_schedule(s: PredicateSnapshot) -> None:
    s.add_node_info(NodeInfo(N2, [S2]))
    s.schedule_pod(P3, N2.name)


def _add_n2_with_pods(s: PredicateSnapshot) -> None:
    p1 = _on(P1, N2)
    claims = [
        make_gpu_claim("p1-gpu-0", owner=P1, node=N2, devices=["gpu-0"], reserved_for=[P1]),
        make_gpu_claim("shared", node=N2, devices=["gpu-1"], reserved_for=[P1]),
    ]
    s.add_node_info(NodeInfo(N2, [S2], pods=[PodInfo(p1, claims)]))


def _add_n2_slices_again(s: PredicateSnapshot) -> None:
    s.add_node_info(NodeInfo(N2, [S2]))


def _add_n2_with_tracked_owned_claim(s: PredicateSnapshot) -> None:
    claim = make_gpu_claim("p3-gpu-0", owner=P3, node=N2, devices=["gpu-0"], reserved_for=[P3])
    s.add_node_info(NodeInfo(N2, [S2], pods=[PodInfo(_on(P3, N2), [claim])]))


def _add_n2_with_unallocated_owned_claim(s: PredicateSnapshot) -> None:
    s.add_node_info(NodeInfo(N2, [S2], pods=[PodInfo(_on(P3, N2), [P3_GPU])]))


def _add_n2_with_claim_allocated_on_n1(s: PredicateSnapshot) -> None:
    claim = make_gpu_claim("p3-gpu-0", owner=P3, node=N1, devices=["gpu-1"], reserved_for=[P3])
    s.add_node_info(NodeInfo(N2, [S2], pods=[PodInfo(_on(P3, N2), [claim])]))


def _add_n2_with_shared_claim_of_n1(s: PredicateSnapshot) -> None:
    s.add_node_info(NodeInfo(N2, [S2], pods=[PodInfo(_on(P2, N2), [SHARED_ON_N1_P1])]))


def _add_n2_with_missing_shared_claim(s: PredicateSnapshot) -> None:
    claim = make_gpu_claim("shared", node=N2, devices=["gpu-0"], reserved_for=[P2])
    s.add_node_info(NodeInfo(N2, [S2], pods=[PodInfo(_on(P2, N2), [claim])]))


def _add_n2_without_owned_claim(s: PredicateSnapshot) -> None:
    shared = make_gpu_claim("shared", node=N2, devices=["gpu-1"], reserved_for=[P1])
    s.add_node_info(NodeInfo(N2, [S2], pods=[PodInfo(_on(P1, N2), [shared])]))


def _add_n2_with_crowded_user(s: PredicateSnapshot) -> None:
    s.add_node_info(NodeInfo(N2, [S2], pods=[PodInfo(_on(LATECOMER, N2), [CROWDED])]))


_BASE_N1_N2 = {N1.name: EMPTY, N2.name: EMPTY}
_CLAIMS_PENDING = {"default/p1-gpu-0": UNALLOCATED, "default/shared": UNALLOCATED}
_P1_ON_N1_NODES = {N1.name: _ns(P1), N2.name: EMPTY}
_P1_ON_N1_DRA = DraState(
    {
        "default/p1-gpu-0": _alloc(N1, "gpu-0", reserved_for=["p1"]),
        "default/shared": _alloc(N1, "gpu-1", reserved_for=["p1"]),
    },
    _SLICES_1_2,
)
_P1_P2_ON_N1_DRA = DraState(
    {
        "default/p1-gpu-0": _alloc(N1, "gpu-0", reserved_for=["p1"]),
        "default/shared": _alloc(N1, "gpu-1", reserved_for=["p1", "p2"]),
    },
    _SLICES_1_2,
)
# a cluster where p1 runs on dra-node-1 with its claims allocated there
_P1_RUNNING: dict[str, Any] = {
    "nodes": (N1, N2),
    "pods": (_on(P1, N1),),
    "claims": (P1_GPU_ON_N1, SHARED_ON_N1_P1),
    "slices": (S1, S2),
    "initial": _P1_ON_N1_NODES,
    "initial_dra": _P1_ON_N1_DRA,
}
_P1_P2_RUNNING: dict[str, Any] = {
    "nodes": (N1, N2),
    "pods": (_on(P1, N1), _on(P2, N1)),
    "claims": (P1_GPU_ON_N1, SHARED_ON_N1_P1_P2),
    "slices": (S1, S2),
    "initial": {N1.name: _ns(P1, P2), N2.name: EMPTY},
    "initial_dra": _P1_P2_ON_N1_DRA,
}
# dra-node-1 only; the claims of p1, p3 and p2's shared claim, none allocated
_ONLY_N1: dict[str, Any] = {
    "nodes": (N1,),
    "pods": (),
    "claims": (P1_GPU, P3_GPU, SHARED),
    "slices": (S1,),
    "initial": {N1.name: EMPTY},
    "initial_dra": DraState(
        {
            "default/p1-gpu-0": UNALLOCATED,
            "default/p3-gpu-0": UNALLOCATED,
            "default/shared": UNALLOCATED,
        },
        {N1.name: (S1.name,)},
    ),
}
_CROWD: dict[str, Any] = {
    "nodes": (N1,),
    "pods": _USERS,
    "claims": (CROWDED,),
    "slices": (S1,),
    "initial": {N1.name: _ns(*_USERS)},
    "initial_dra": DraState({"default/crowded": _CROWDED_STATE}, {N1.name: (S1.name,)}),
}


def _unchanged(setup: Mapping[str, Any]) -> dict[str, Any]:
    return {**setup, "modified": setup["initial"], "modified_dra": setup["initial_dra"]}


def _add_node_error(name: str, description: str, op: Callable[[PredicateSnapshot], None],
                    match: str, setup: Mapping[str, Any] = _ONLY_N1) -> DraScenario:  # fmt: skip
    return DraScenario(
        name, description, op, **_unchanged(setup), error=DraSnapshotError, error_match=match
    )


DRA_SCENARIOS: tuple[DraScenario, ...] = (
    DraScenario(
        "schedule pod with pod-owned and shared claims",
        "CA 'schedule pod with claims' (owned and shared, none allocated): the DynamicResources "
        "plugin allocates each claim from the node's slice in Filter and writes it in Reserve "
        "(node selector for that node), the snapshot reserves both for the pod (kube-scheduler "
        "PreBind) and the PodInfo holds the allocated claims.",
        _schedule_p1_on_n1,
        nodes=(N1, N2),
        pods=(),
        claims=(P1_GPU, SHARED),
        slices=(S1, S2),
        initial=_BASE_N1_N2,
        initial_dra=DraState(_CLAIMS_PENDING, _SLICES_1_2),
        modified=_P1_ON_N1_NODES,
        modified_dra=_P1_ON_N1_DRA,
    ),
    DraScenario(
        "schedule pod with a pre-allocated pod-owned claim",
        "CA 'schedule pod with claims, some pre-allocated': an allocated claim keeps its "
        "allocation (gpu-1, not what the allocator would pick) and is only reserved.",
        _schedule_p1_on_n1,
        nodes=(N1, N2),
        pods=(),
        claims=(make_gpu_claim("p1-gpu-0", owner=P1, node=N1, devices=["gpu-1"]), SHARED),
        slices=(S1, S2),
        initial=_BASE_N1_N2,
        initial_dra=DraState(
            {"default/p1-gpu-0": _alloc(N1, "gpu-1"), "default/shared": UNALLOCATED},
            _SLICES_1_2,
        ),
        modified=_P1_ON_N1_NODES,
        modified_dra=DraState(
            {
                "default/p1-gpu-0": _alloc(N1, "gpu-1", reserved_for=["p1"]),
                "default/shared": _alloc(N1, "gpu-0", reserved_for=["p1"]),
            },
            _SLICES_1_2,
        ),
    ),
    DraScenario(
        "schedule second pod of an allocated shared claim",
        "CA 'schedule pod with shared claim already allocated and in use': the shared claim "
        "keeps its allocation and gets the second pod in reservedFor.",
        _schedule_p2_on_n1,
        **_P1_RUNNING,
        modified={N1.name: _ns(P1, P2), N2.name: EMPTY},
        modified_dra=_P1_P2_ON_N1_DRA,
    ),
    DraScenario(
        "schedule pod whose shared claim is allocated on another node",
        "CA 'scheduling pod with failing DRA predicates is an error': DynamicResources Filter "
        "rejects a node the claim's allocation does not select ('resourceclaim not available "
        "on the node').",
        _schedule_p2_on_n2,
        **_unchanged(_P1_RUNNING),
        error=SchedulingError,
        scheduling_error=SchedulingErrorType.FAILING_PREDICATE,
        error_match="resourceclaim not available on the node",
    ),
    DraScenario(
        "schedule pod whose claim cannot be allocated on the node",
        "CA 'scheduling pod with failing DRA predicates is an error': 3 GPUs requested, the "
        "node has 2: 'cannot allocate all claims'.",
        _schedule_big_on_n1,
        nodes=(N1, N2),
        pods=(),
        claims=(BIG_GPU,),
        slices=(S1, S2),
        initial=_BASE_N1_N2,
        initial_dra=DraState({"default/big-gpu-0": UNALLOCATED}, _SLICES_1_2),
        modified=_BASE_N1_N2,
        modified_dra=DraState({"default/big-gpu-0": UNALLOCATED}, _SLICES_1_2),
        error=SchedulingError,
        scheduling_error=SchedulingErrorType.FAILING_PREDICATE,
        error_match="cannot allocate all claims",
    ),
    DraScenario(
        "schedule pod with claims on any node (only one node has slices)",
        "CA 'schedule pod with claims on any Node (only one Node has ResourceSlices)': the "
        "node without slices fails DynamicResources Filter, the other gets the pod.",
        _schedule_p1_on_any,
        nodes=(N1, PLAIN),
        pods=(),
        claims=(P1_GPU, SHARED),
        slices=(S1,),
        initial={N1.name: EMPTY, PLAIN.name: EMPTY},
        initial_dra=DraState(_CLAIMS_PENDING, {N1.name: (S1.name,)}),
        modified={N1.name: _ns(P1), PLAIN.name: EMPTY},
        modified_dra=DraState(_P1_ON_N1_DRA.claims, {N1.name: (S1.name,)}),
    ),
    DraScenario(
        "schedule two pods with claims on any node",
        "CA SchedulePodOnAnyNodeMatching's round robin (starts after the node chosen last): "
        "p1 lands on dra-node-2, p3 on dra-node-1, each claim allocated from its node's slice.",
        _schedule_p1_then_p3_on_any,
        nodes=(N1, N2),
        pods=(),
        claims=(P1_GPU, P3_GPU, SHARED),
        slices=(S1, S2),
        initial=_BASE_N1_N2,
        initial_dra=DraState({**_CLAIMS_PENDING, "default/p3-gpu-0": UNALLOCATED}, _SLICES_1_2),
        modified={N1.name: _ns(P3), N2.name: _ns(P1)},
        modified_dra=DraState(
            {
                "default/p1-gpu-0": _alloc(N2, "gpu-0", reserved_for=["p1"]),
                "default/shared": _alloc(N2, "gpu-1", reserved_for=["p1"]),
                "default/p3-gpu-0": _alloc(N1, "gpu-0", reserved_for=["p3"]),
            },
            _SLICES_1_2,
        ),
    ),
    DraScenario(
        "schedule pod with claims on any matching node",
        "CA 'schedule pod on any Node matching': only dra-node-2 is acceptable, so the claims "
        "are allocated there.",
        _schedule_p1_on_any_matching_n2,
        nodes=(N1, N2),
        pods=(),
        claims=(P1_GPU, SHARED),
        slices=(S1, S2),
        initial=_BASE_N1_N2,
        initial_dra=DraState(_CLAIMS_PENDING, _SLICES_1_2),
        modified={N1.name: EMPTY, N2.name: _ns(P1)},
        modified_dra=DraState(
            {
                "default/p1-gpu-0": _alloc(N2, "gpu-0", reserved_for=["p1"]),
                "default/shared": _alloc(N2, "gpu-1", reserved_for=["p1"]),
            },
            _SLICES_1_2,
        ),
    ),
    DraScenario(
        "schedule pod with claims on any node: no node can allocate",
        "CA 'scheduling pod on any Node with failing DRA predicates on all Nodes is an "
        "error': NoNodesPassingPredicates, claims stay unallocated.",
        _schedule_big_on_any,
        nodes=(N1, N2),
        pods=(),
        claims=(BIG_GPU,),
        slices=(S1, S2),
        initial=_BASE_N1_N2,
        initial_dra=DraState({"default/big-gpu-0": UNALLOCATED}, _SLICES_1_2),
        modified=_BASE_N1_N2,
        modified_dra=DraState({"default/big-gpu-0": UNALLOCATED}, _SLICES_1_2),
        error=SchedulingError,
        scheduling_error=SchedulingErrorType.NO_NODES_PASSING_PREDICATES,
    ),
    DraScenario(
        "unschedule pod with claims, shared claim still in use",
        "CA 'unschedule pod with claims' / UnreservePodClaims: the pod's reservations go, its "
        "pod-owned claim is deallocated, the shared claim stays allocated for the other pod.",
        _unschedule_p1,
        **_P1_P2_RUNNING,
        modified={N1.name: _ns(P2), N2.name: EMPTY},
        modified_dra=DraState(
            {
                "default/p1-gpu-0": UNALLOCATED,
                "default/shared": _alloc(N1, "gpu-1", reserved_for=["p2"]),
            },
            _SLICES_1_2,
        ),
    ),
    DraScenario(
        "unschedule the last pod of a shared claim",
        "CA UnreservePodClaims (as the resource-claim controller does): a shared claim nobody "
        "reserves any more is deallocated.",
        _unschedule_p2,
        nodes=(N1, N2),
        pods=(_on(P2, N1),),
        claims=(SHARED_ON_N1_P2,),
        slices=(S1, S2),
        initial={N1.name: _ns(P2), N2.name: EMPTY},
        initial_dra=DraState(
            {"default/shared": _alloc(N1, "gpu-1", reserved_for=["p2"])}, _SLICES_1_2
        ),
        modified=_BASE_N1_N2,
        modified_dra=DraState({"default/shared": UNALLOCATED}, _SLICES_1_2),
    ),
    DraScenario(
        "unschedule and reschedule pod with claims on another node",
        "CA 'unschedule and reschedule pod with claims': the claims freed on dra-node-1 are "
        "allocated afresh from dra-node-2's slice.",
        _unschedule_p1_reschedule_on_n2,
        **_P1_RUNNING,
        modified={N1.name: EMPTY, N2.name: _ns(P1)},
        modified_dra=DraState(
            {
                "default/p1-gpu-0": _alloc(N2, "gpu-0", reserved_for=["p1"]),
                "default/shared": _alloc(N2, "gpu-1", reserved_for=["p1"]),
            },
            _SLICES_1_2,
        ),
    ),
    DraScenario(
        "unschedule and reschedule pod with claims on the same node",
        "CA 'unschedule and reschedule pod with claims' (shared claim used by others): p2 "
        "keeps the shared claim allocated, so p1 gets it back with the same device and a "
        "fresh allocation of its own claim.",
        _unschedule_p1_reschedule_on_n1,
        **_P1_P2_RUNNING,
        modified={N1.name: _ns(P1, P2), N2.name: EMPTY},
        modified_dra=DraState(
            {
                "default/p1-gpu-0": _alloc(N1, "gpu-0", reserved_for=["p1"]),
                "default/shared": _alloc(N1, "gpu-1", reserved_for=["p2", "p1"]),
            },
            _SLICES_1_2,
        ),
    ),
    DraScenario(
        "schedule pod over max reservations of a shared claim",
        "CA 'scheduling pod with shared claim at max reservations is an error' (256, "
        "ResourceClaimReservedForMaxSize): the 257th pod fails with an internal "
        "SchedulingError and nothing changes.",
        _schedule_latecomer,
        **_unchanged(_CROWD),
        error=SchedulingError,
        scheduling_error=SchedulingErrorType.INTERNAL_ERROR,
        error_match="max number of reservations",
    ),
    DraScenario(
        "remove node with slices and claims",
        "CA 'remove nodeInfo with LocalResourceSlices and NeededResourceClaims' "
        "(RemoveNodeResourceSlices, RemovePodOwnedClaims): the slices and the pod-owned claim "
        "are gone, the shared claim loses both reservations but keeps its allocation.",
        _remove_n1,
        **_P1_P2_RUNNING,
        modified={N2.name: EMPTY},
        modified_dra=DraState({"default/shared": _alloc(N1, "gpu-1")}, {N2.name: (S2.name,)}),
    ),
    DraScenario(
        "remove node with slices and claims, then add it back",
        "CA 'remove nodeInfo with LocalResourceSlices and NeededResourceClaims, then add it "
        "back': add_node_info restores the slices, re-adds the pod-owned claim and reserves "
        "the claims for its pods again.",
        _remove_n1_add_back,
        **_P1_P2_RUNNING,
        modified={N1.name: _ns(P1, P2), N2.name: EMPTY},
        modified_dra=_P1_P2_ON_N1_DRA,
    ),
    DraScenario(
        "add node with slices, then schedule pod on it",
        "CA 'add nodeInfo with LocalResourceSlices': the slices join the DRA snapshot and the "
        "DynamicResources plugin allocates from them.",
        _add_n2_with_slices_then_schedule,
        **_ONLY_N1,
        modified={N1.name: EMPTY, N2.name: _ns(P3)},
        modified_dra=DraState(
            {
                "default/p1-gpu-0": UNALLOCATED,
                "default/p3-gpu-0": _alloc(N2, "gpu-0", reserved_for=["p3"]),
                "default/shared": UNALLOCATED,
            },
            _SLICES_1_2,
        ),
    ),
    DraScenario(
        "add node with slices and pods with claims",
        "CA 'add nodeInfo with LocalResourceSlices and NeededResourceClaims': the pod-owned "
        "claim the NodeInfo carries is added, the tracked shared claim is reserved for the pod.",
        _add_n2_with_pods,
        nodes=(N1,),
        pods=(),
        claims=(make_gpu_claim("shared", node=N2, devices=["gpu-1"]),),
        slices=(S1,),
        initial={N1.name: EMPTY},
        initial_dra=DraState({"default/shared": _alloc(N2, "gpu-1")}, {N1.name: (S1.name,)}),
        modified={N1.name: EMPTY, N2.name: _ns(P1)},
        modified_dra=DraState(
            {
                "default/p1-gpu-0": _alloc(N2, "gpu-0", reserved_for=["p1"]),
                "default/shared": _alloc(N2, "gpu-1", reserved_for=["p1"]),
            },
            _SLICES_1_2,
        ),
    ),
    _add_node_error(
        "error: add node whose slices are already tracked",
        "CA 'adding LocalResourceSlices for an already tracked Node is an error' "
        "(AddNodeResourceSlices).",
        _add_n2_slices_again,
        'node "dra-node-2" ResourceSlices already present',
        {
            **_ONLY_N1,
            "slices": (S1, S2),
            "initial_dra": attrs.evolve(_ONLY_N1["initial_dra"], slices=_SLICES_1_2),
        },
    ),
    _add_node_error(
        "error: add node with an already tracked pod-owned claim",
        "CA 'adding already tracked pod-owned ResourceClaims is an error' (AddClaims).",
        _add_n2_with_tracked_owned_claim,
        "already tracked",
    ),
    _add_node_error(
        "error: add node with an unallocated pod-owned claim",
        "CA 'adding unallocated pod-owned ResourceClaims is an error' "
        "(verifyScheduledPodResourceClaims).",
        _add_n2_with_unallocated_owned_claim,
        "not allocated or not available",
        {
            **_ONLY_N1,
            "claims": (P1_GPU, SHARED),
            "initial_dra": DraState(_CLAIMS_PENDING, {N1.name: (S1.name,)}),
        },
    ),
    _add_node_error(
        "error: add node with a pod-owned claim allocated to another node",
        "CA 'adding pod-owned ResourceClaims allocated to another Node is an error' "
        "(ClaimAvailableOnNode).",
        _add_n2_with_claim_allocated_on_n1,
        "not allocated or not available",
        {
            **_ONLY_N1,
            "claims": (P1_GPU, SHARED),
            "initial_dra": DraState(_CLAIMS_PENDING, {N1.name: (S1.name,)}),
        },
    ),
    _add_node_error(
        "error: add node with a pod whose shared claim is allocated to another node",
        "CA 'adding pods with shared ResourceClaims allocated to another Node is an error'.",
        _add_n2_with_shared_claim_of_n1,
        "not allocated or not available",
        {
            "nodes": (N1,),
            "pods": (_on(P1, N1),),
            "claims": (P1_GPU_ON_N1, SHARED_ON_N1_P1),
            "slices": (S1,),
            "initial": {N1.name: _ns(P1)},
            "initial_dra": DraState(_P1_ON_N1_DRA.claims, {N1.name: (S1.name,)}),
        },
    ),
    _add_node_error(
        "error: add node with a pod whose shared claim is missing",
        "CA ReservePodClaims: a claim the pod references is not in the snapshot.",
        _add_n2_with_missing_shared_claim,
        "couldn't find ResourceClaim default/shared",
        {
            **_ONLY_N1,
            "claims": (P1_GPU,),
            "initial_dra": DraState({"default/p1-gpu-0": UNALLOCATED}, {N1.name: (S1.name,)}),
        },
    ),
    _add_node_error(
        "error: add node with a pod without its own claim",
        "CA 'adding pod referencing its own claim without adding the claim is an error': "
        "the PodInfo needs the shared claim only, so its pod-owned claim is not added.",
        _add_n2_without_owned_claim,
        "couldn't find ResourceClaim default/p1-gpu-0",
        {
            **_ONLY_N1,
            "claims": (make_gpu_claim("shared", node=N2, devices=["gpu-1"]),),
            "initial_dra": DraState({"default/shared": _alloc(N2, "gpu-1")}, {N1.name: (S1.name,)}),
        },
    ),
    _add_node_error(
        "error: add node with a pod over max reservations of a shared claim",
        "CA 'adding pod with shared claim at max reservations is an error' (ReservePodClaims).",
        _add_n2_with_crowded_user,
        "max number of reservations",
        _CROWD,
    ),
)
"""Every DRA scenario; each runs in every `DRA_FORK_MODES` mode."""


# --------------------------------------------------------------------------- fork modes


def _with_extra(sc: DraScenario) -> tuple[dict[str, NodeState], DraState]:
    nodes = {**sc.modified, EXTRA.name: EMPTY}
    slices = dict(sorted({**sc.modified_dra.slices, EXTRA.name: (S_EXTRA.name,)}.items()))
    return nodes, attrs.evolve(sc.modified_dra, slices=slices)


def _add_extra(s: PredicateSnapshot) -> None:
    s.add_node_info(NodeInfo(EXTRA, [S_EXTRA]))


def _initial(s: PredicateSnapshot, sc: DraScenario, step: str) -> None:
    _expect_dra_state(s, sc.initial, sc.initial_dra, step)


def _modified(s: PredicateSnapshot, sc: DraScenario, step: str) -> None:
    _expect_dra_state(s, sc.modified, sc.modified_dra, step)


def _mode_base(s: PredicateSnapshot, sc: DraScenario) -> None:
    sc.run_op(s)
    _modified(s, sc, "op")


def _mode_fork(s: PredicateSnapshot, sc: DraScenario) -> None:
    s.fork()
    sc.run_op(s)
    _modified(s, sc, "fork, op")


def _mode_fork_revert(s: PredicateSnapshot, sc: DraScenario) -> None:
    s.fork()
    sc.run_op(s)
    _modified(s, sc, "fork, op")
    s.revert()
    _initial(s, sc, "fork, op, revert")


def _mode_fork_commit(s: PredicateSnapshot, sc: DraScenario) -> None:
    s.fork()
    sc.run_op(s)
    s.commit()
    _modified(s, sc, "fork, op, commit")
    s.revert()
    _modified(s, sc, "fork, op, commit, revert (committed into the base: no-op)")


def _mode_fork_fork_revert_revert(s: PredicateSnapshot, sc: DraScenario) -> None:
    s.fork()
    sc.run_op(s)
    s.fork()
    _add_extra(s)
    nodes, dra = _with_extra(sc)
    _expect_dra_state(s, nodes, dra, "fork, op, fork, add extra node with slices")
    s.revert()
    _modified(s, sc, "fork, op, fork, add extra node, revert")
    s.revert()
    _initial(s, sc, "fork, op, fork, add extra node, revert, revert")


def _mode_fork_fork_commit_revert(s: PredicateSnapshot, sc: DraScenario) -> None:
    s.fork()
    s.fork()
    sc.run_op(s)
    s.commit()
    _modified(s, sc, "fork, fork, op, commit")
    s.revert()
    _initial(s, sc, "fork, fork, op, commit, revert")


def _mode_fork_fork_revert_commit(s: PredicateSnapshot, sc: DraScenario) -> None:
    s.fork()
    sc.run_op(s)
    s.fork()
    _add_extra(s)
    s.revert()
    s.commit()
    _modified(s, sc, "fork, op, fork, add extra node, revert, commit")


def _mode_fork_fork_extra_commit_revert(s: PredicateSnapshot, sc: DraScenario) -> None:
    s.fork()
    sc.run_op(s)
    s.fork()
    _add_extra(s)
    s.commit()
    nodes, dra = _with_extra(sc)
    _expect_dra_state(s, nodes, dra, "fork, op, fork, add extra node, commit")
    s.revert()
    _initial(s, sc, "fork, op, fork, add extra node, commit, revert")


def _mode_cache_fork_revert(s: PredicateSnapshot, sc: DraScenario) -> None:
    # read everything a store or patch set may cache, in the base and in the fork
    dump_dra_state(s)
    s.fork()
    check_dra_consistency(s)
    dump_dra_state(s)
    sc.run_op(s)
    _modified(s, sc, "cache, fork, cache, op")
    s.revert()
    _initial(s, sc, "cache, fork, cache, op, revert")


def _mode_unforked_commit_revert(s: PredicateSnapshot, sc: DraScenario) -> None:
    sc.run_op(s)
    s.commit()
    s.revert()
    _modified(s, sc, "op, commit, revert (not forked: no-ops)")


def _mode_deep_commit(s: PredicateSnapshot, sc: DraScenario) -> None:
    for _ in range(3):
        s.fork()
        dump_dra_state(s)
    sc.run_op(s)
    for i in range(3):
        s.commit()
        _modified(s, sc, f"fork x3, op, commit x{i + 1}")


@attrs.frozen
class DraForkMode:
    """How a scenario's op is wrapped in fork/commit/revert, checking the state after each
    step (CA ``TestForking``'s sub-tests; the inner fork adds a node with its own slice)."""

    name: str
    run: Callable[[PredicateSnapshot, DraScenario], None]


DRA_FORK_MODES: tuple[DraForkMode, ...] = (
    DraForkMode("base", _mode_base),
    DraForkMode("fork", _mode_fork),
    DraForkMode("fork & revert", _mode_fork_revert),
    DraForkMode("fork & commit", _mode_fork_commit),
    DraForkMode("fork & fork & revert & revert", _mode_fork_fork_revert_revert),
    DraForkMode("fork & fork & commit & revert", _mode_fork_fork_commit_revert),
    DraForkMode("fork & fork & revert & commit", _mode_fork_fork_revert_commit),
    DraForkMode("fork & fork(extra) & commit & revert", _mode_fork_fork_extra_commit_revert),
    DraForkMode("cache, fork, cache & revert", _mode_cache_fork_revert),
    DraForkMode("commit & revert when not forked", _mode_unforked_commit_revert),
    DraForkMode("fork x3 & commit x3", _mode_deep_commit),
)
"""Every DRA scenario runs in every mode."""


def new_dra_snapshot(
    make_store: StoreFactory,
    nodes: Iterable[Node],
    pods: Iterable[Pod],
    claims: Iterable[ResourceClaim],
    slices: Iterable[ResourceSlice],
    *,
    clone_on_fork: bool = False,
) -> PredicateSnapshot:
    """A default-profile `PredicateSnapshot` over ``make_store()`` set to the cluster
    (`GPU_CLASS` is its only device class); raises AssertionError if a pod is skipped."""
    s = new_snapshot(make_store)
    dra = DraSnapshot.from_objects(claims, slices, [GPU_CLASS], clone_on_fork=clone_on_fork)
    skipped = s.set_cluster_state(nodes, pods, dra)
    _expect_equal("pods skipped by set_cluster_state", skipped, [])
    return s


def _run_scenario(
    scenario: DraScenario, mode: DraForkMode, make_store: StoreFactory, clone_on_fork: bool
) -> None:
    s = new_dra_snapshot(
        make_store,
        scenario.nodes,
        scenario.pods,
        scenario.claims,
        scenario.slices,
        clone_on_fork=clone_on_fork,
    )
    _initial(s, scenario, "initial state")
    mode.run(s, scenario)


# --------------------------------------------------------------------------- set_cluster_state


def _check_set_cluster_state(make_store: StoreFactory, clone_on_fork: bool) -> None:
    """CA SetClusterState with DRA: NodeInfos get their node's slices (the DRA snapshot's
    objects), PodInfos their pods' claims as they are (a claim not reserved for its pod stays
    so: nothing is reserved or allocated)."""
    p3 = _on(P3, N2)
    unreserved = make_gpu_claim("p3-gpu-0", owner=P3, node=N2, devices=["gpu-1"])
    s = new_dra_snapshot(
        make_store,
        (N1, N2, PLAIN),
        (_on(P1, N1), p3),
        (P1_GPU_ON_N1, SHARED_ON_N1_P1, unreserved),
        (S1, S2),
        clone_on_fork=clone_on_fork,
    )
    dra = s.dra_snapshot
    _expect_equal("dra_snapshot.clone_on_fork", dra.clone_on_fork, clone_on_fork)
    for node, want in ((N1, [S1]), (N2, [S2]), (PLAIN, [])):
        got = s.get_node_info(node.name).local_resource_slices
        if len(got) != len(want) or any(a is not b for a, b in zip(got, want, strict=False)):
            _fail(f"{node.name}: local_resource_slices {got!r}, want {want!r}")
    (p1_info,) = s.get_node_info(N1.name).pods
    _expect_equal(
        "p1's needed_resource_claims",
        list(p1_info.needed_resource_claims),
        [P1_GPU_ON_N1, SHARED_ON_N1_P1],
    )
    (p3_info,) = s.get_node_info(N2.name).pods
    _expect_equal("p3's needed_resource_claims", list(p3_info.needed_resource_claims), [unreserved])
    _expect_equal(
        "claims after set_cluster_state (taken as they are)",
        sorted(dra.list_resource_claims(), key=lambda c: c.key),
        sorted([P1_GPU_ON_N1, SHARED_ON_N1_P1, unreserved], key=lambda c: c.key),
    )
    _expect_equal("slices", dump_dra_state(s).slices, _SLICES_1_2)


def _check_set_cluster_state_missing_claim(make_store: StoreFactory, clone_on_fork: bool) -> None:
    """A scheduled pod whose claim is missing: DraSnapshotError (CA: ``couldn't obtain pod
    claims``), and the previous state is kept (CA leaves it half-built)."""
    s = new_dra_snapshot(make_store, *_P1_RUNNING_ARGS, clone_on_fork=clone_on_fork)
    before = _full_state(s)
    dra = DraSnapshot.from_objects(
        [P1_GPU_ON_N1], [S1, S2], [GPU_CLASS], clone_on_fork=clone_on_fork
    )
    try:
        s.set_cluster_state((N1, N2), (_on(P1, N1),), dra)
    except DraSnapshotError as e:
        if "default/shared" not in str(e):
            _fail(f"set_cluster_state: error {e} does not name the missing claim")
    else:
        _fail("set_cluster_state with a missing claim: expected DraSnapshotError")
    if _full_state(s) != before:
        _fail("set_cluster_state failed but changed the snapshot")
    _expect_dra_state(s, _P1_ON_N1_NODES, _P1_ON_N1_DRA, "after the failed set_cluster_state")


def _check_set_cluster_state_drops_forks(make_store: StoreFactory, clone_on_fork: bool) -> None:
    """CA SetClusterState clears the store and replaces the DRA snapshot: nothing from the
    forked state survives, and revert/commit afterwards are no-ops for the DRA state too."""
    s = new_dra_snapshot(
        make_store, (N1, N2), (), (P1_GPU, SHARED), (S1, S2), clone_on_fork=clone_on_fork
    )
    s.fork()
    s.schedule_pod(P1, N1.name)
    s.fork()
    dra = DraSnapshot.from_objects(
        [P1_GPU_ON_N1, SHARED_ON_N1_P1], [S1, S2], [GPU_CLASS], clone_on_fork=clone_on_fork
    )
    s.set_cluster_state((N1, N2), (_on(P1, N1),), dra)
    _expect_dra_state(s, _P1_ON_N1_NODES, _P1_ON_N1_DRA, "set_cluster_state in a fork")
    s.revert()
    s.revert()
    _expect_dra_state(s, _P1_ON_N1_NODES, _P1_ON_N1_DRA, "set_cluster_state, revert, revert")
    s.unschedule_pod("default", "p1", N1.name)
    s.commit()
    _expect_dra_state(
        s,
        _BASE_N1_N2,
        DraState({"default/p1-gpu-0": UNALLOCATED, "default/shared": UNALLOCATED}, _SLICES_1_2),
        "set_cluster_state, unschedule, commit",
    )


def _check_set_cluster_state_forked_dra(make_store: StoreFactory, clone_on_fork: bool) -> None:
    """A forked DRA snapshot given to set_cluster_state: its current state is taken and no
    fork survives (set_cluster_state drops all layers), so a revert afterwards changes nothing
    (it used to revert the DRA layer alone: dra-node-2's slices came back beside a NodeInfo
    without them). The given snapshot itself keeps its fork."""
    s = new_dra_snapshot(make_store, (N1, N2), (), (P1_GPU, SHARED), (S1, S2))
    given = DraSnapshot.from_objects(
        [P1_GPU_ON_N1, SHARED], [S1, S2], [GPU_CLASS], clone_on_fork=clone_on_fork
    )
    given.fork()
    given.remove_node_resource_slices(N2.name)
    given.update_claim(SHARED_ON_N1_P1)
    s.set_cluster_state((N1, N2), (_on(P1, N1),), given)
    want = DraState(_P1_ON_N1_DRA.claims, {N1.name: (S1.name,)})
    _expect_dra_state(s, _P1_ON_N1_NODES, want, "set_cluster_state with a forked DRA snapshot")
    s.revert()
    _expect_dra_state(s, _P1_ON_N1_NODES, want, "set_cluster_state, revert (not forked: no-op)")
    _expect_equal("the given snapshot's forks", given.depth, 1)


def _check_clear(make_store: StoreFactory, clone_on_fork: bool) -> None:
    """clear: empty, unforked, an empty DRA snapshot of the same design."""
    s = new_dra_snapshot(make_store, *_P1_RUNNING_ARGS, clone_on_fork=clone_on_fork)
    s.fork()
    s.clear()
    _expect_dra_state(s, {}, DraState(), "clear in a fork")
    _expect_equal(
        "dra_snapshot.clone_on_fork after clear", s.dra_snapshot.clone_on_fork, clone_on_fork
    )
    s.revert()
    _expect_dra_state(s, {}, DraState(), "clear, revert")


_P1_RUNNING_ARGS = (
    _P1_RUNNING["nodes"],
    _P1_RUNNING["pods"],
    _P1_RUNNING["claims"],
    _P1_RUNNING["slices"],
)

# --------------------------------------------------------------------------- the suite


@attrs.frozen
class DraConformanceCase:
    """One self-contained DRA check of a store.

    Attributes:
        name: unique, e.g. ``dra: schedule pod with pod-owned and shared claims [fork & revert]``.
        check: runs the check on stores from the factory with a DRA snapshot of the given
            design (``clone_on_fork``); raises AssertionError.
    """

    name: str
    check: Callable[[StoreFactory, bool], None]

    def run(self, make_store: StoreFactory, clone_on_fork: bool = False) -> None:
        """Run the check against stores built by ``make_store``."""
        self.check(make_store, clone_on_fork)


def _cases() -> tuple[DraConformanceCase, ...]:
    out = [
        DraConformanceCase(
            f"dra: {sc.name} [{mode.name}]", functools.partial(_run_scenario, sc, mode)
        )
        for sc in DRA_SCENARIOS
        for mode in DRA_FORK_MODES
    ]
    singles: list[tuple[str, Callable[[StoreFactory, bool], None]]] = [
        (
            "dra: set_cluster_state puts slices on NodeInfos and claims on PodInfos",
            _check_set_cluster_state,
        ),
        (
            "dra: set_cluster_state with a missing claim changes nothing",
            _check_set_cluster_state_missing_claim,
        ),
        ("dra: set_cluster_state drops forks", _check_set_cluster_state_drops_forks),
        (
            "dra: set_cluster_state flattens a forked DRA snapshot",
            _check_set_cluster_state_forked_dra,
        ),
        ("dra: clear empties the DRA state", _check_clear),
    ]
    out += [DraConformanceCase(name, fn) for name, fn in singles]
    return tuple(out)


DRA_CONFORMANCE_CASES: tuple[DraConformanceCase, ...] = _cases()
"""Every DRA check: each scenario in each fork mode, then the set_cluster_state and clear
checks."""


def run_dra_conformance(
    make_store: StoreFactory,
    *,
    clone_on_fork: bool = False,
    cases: Iterable[DraConformanceCase] | None = None,
) -> None:
    """Run the DRA cases (default: `DRA_CONFORMANCE_CASES`) against stores built by
    ``make_store``.

    Args:
        make_store: builds a fresh, empty store (e.g. the store class).
        clone_on_fork: the DRA snapshot design (see `DraSnapshot`).
        cases: which cases (all by default).

    Raises:
        AssertionError: one ``- `` item per broken invariant (a scenario in all its fork
            modes is one), with its first failing case and how many variants failed too.
    """
    failed: dict[str, list[str]] = {}
    for case in DRA_CONFORMANCE_CASES if cases is None else cases:
        message = failure_of(case.name, case.run, make_store, clone_on_fork)
        if message is not None:
            invariant = case.name.split(" [", 1)[0]  # the scenario, whatever the fork mode
            failed.setdefault(invariant, []).append(message)
    report_failures("DRA", failed)
