"""Tests for `schedsim.snapshot.dra` (CA ``dynamicresources/snapshot/snapshot_test.go``).

Scenarios follow CA's ``TestSnapshotResourceClaims``, ``TestSnapshotResourceSlices``,
``TestSnapshotForkCommitRevert`` and the claim tracker tests, plus checks beyond CA: inputs are
never mutated, failing calls change nothing, and every mutation is undone by revert and kept by
commit.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

import attrs
import pytest

from schedsim.api.core import Node, Pod
from schedsim.api.resource import (
    DeviceClass,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceSlice,
)
from schedsim.snapshot.dra import (
    NON_LOCAL_SLICES_KEY,
    DeviceId,
    DraSnapshot,
    DraSnapshotError,
    claim_available_on_node,
)

V1 = "resource.k8s.io/v1"
DRIVER = "gpu.example.com"

# --------------------------------------------------------------------------- builders


def pod(
    name: str,
    *,
    ns: str = "default",
    claims: Sequence[tuple[str, str]] = (),
    templates: Sequence[tuple[str, str]] = (),
    statuses: dict[str, str | None] | None = None,
) -> Pod:
    """A pod with ``claims`` (entry, claim name) and ``templates`` (entry, template name)."""
    refs: list[dict[str, Any]] = [{"name": e, "resourceClaimName": c} for e, c in claims]
    refs += [{"name": e, "resourceClaimTemplateName": t} for e, t in templates]
    status = [{"name": k, "resourceClaimName": v} for k, v in (statuses or {}).items()]
    return Pod.from_manifest(
        {
            "metadata": {"name": name, "namespace": ns, "uid": f"{name}-uid"},
            "spec": {"containers": [{"name": "c"}], "resourceClaims": refs},
            "status": {"resourceClaimStatuses": status},
        }
    )


def claim(
    name: str,
    *,
    ns: str = "default",
    owner: Pod | None = None,
    devices: Sequence[str] = (),
    admin_devices: Sequence[str] = (),
    node: str | None = None,
    reserved: Sequence[Pod] = (),
) -> ResourceClaim:
    """A claim, owned by ``owner``, allocated ``devices`` (pool ``pool``) when given."""
    meta: dict[str, Any] = {"name": name, "namespace": ns, "uid": f"{ns}-{name}-uid"}
    if owner is not None:
        meta["ownerReferences"] = [
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "name": owner.name,
                "uid": owner.uid,
                "controller": True,
            }
        ]
    status: dict[str, Any] = {
        "reservedFor": [{"resource": "pods", "name": p.name, "uid": p.uid} for p in reserved]
    }
    if devices or admin_devices:
        results = [
            {"request": "req", "driver": DRIVER, "pool": "pool", "device": d} for d in devices
        ]
        results += [
            {"request": "req", "driver": DRIVER, "pool": "pool", "device": d, "adminAccess": True}
            for d in admin_devices
        ]
        allocation: dict[str, Any] = {"devices": {"results": results}}
        if node is not None:
            allocation["nodeSelector"] = {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
                ]
            }
        status["allocation"] = allocation
        status["devices"] = [{"driver": DRIVER, "pool": "pool", "device": d} for d in devices]
    return ResourceClaim.from_manifest(
        {
            "apiVersion": V1,
            "kind": "ResourceClaim",
            "metadata": meta,
            "spec": {
                "devices": {"requests": [{"name": "req", "exactly": {"deviceClassName": "gpu"}}]}
            },
            "status": status,
        }
    )


def node_slice(name: str, node: str) -> ResourceSlice:
    return ResourceSlice.from_manifest(
        {
            "apiVersion": V1,
            "kind": "ResourceSlice",
            "metadata": {"name": name},
            "spec": {
                "driver": DRIVER,
                "pool": {"name": node, "resourceSliceCount": 1},
                "nodeName": node,
                "devices": [{"name": "dev"}],
            },
        }
    )


def global_slice(name: str) -> ResourceSlice:
    return ResourceSlice.from_manifest(
        {
            "apiVersion": V1,
            "kind": "ResourceSlice",
            "metadata": {"name": name},
            "spec": {
                "driver": DRIVER,
                "pool": {"name": name, "resourceSliceCount": 1},
                "allNodes": True,
                "devices": [{"name": "dev"}],
            },
        }
    )


def device_class(name: str) -> DeviceClass:
    return DeviceClass.from_manifest(
        {"apiVersion": V1, "kind": "DeviceClass", "metadata": {"name": name}}
    )


def node(name: str, **labels: str) -> Node:
    return Node.from_manifest({"metadata": {"name": name, "labels": labels}})


def reserved_uids(c: ResourceClaim | None) -> list[str]:
    assert c is not None
    return [r.uid for r in c.status.reserved_for]


# --------------------------------------------------------------------------- fixtures

POD1 = pod(
    "pod1", claims=[("shared", "shared")], templates=[("own", "tmpl")], statuses={"own": "pod1-own"}
)
POD2 = pod(
    "pod2", claims=[("shared", "shared")], templates=[("own", "tmpl")], statuses={"own": "pod2-own"}
)
POD1_OWN = claim("pod1-own", owner=POD1, devices=["d1"], node="n1", reserved=[POD1])
POD2_OWN = claim("pod2-own", owner=POD2, devices=["d2"], node="n2", reserved=[POD2])
SHARED = claim("shared", devices=["d3"], reserved=[POD1, POD2])
UNALLOCATED = claim("unallocated")
SLICE_N1 = node_slice("n1-slice", "n1")
SLICE_N2 = node_slice("n2-slice", "n2")
GLOBAL = global_slice("global")
CLASS = device_class("gpu")


def make(claims: Sequence[ResourceClaim] = (POD1_OWN, POD2_OWN, SHARED)) -> DraSnapshot:
    return DraSnapshot(
        claims,
        {"n1": [SLICE_N1], "n2": [SLICE_N2]},
        [GLOBAL],
        [CLASS],
    )


def state(s: DraSnapshot) -> tuple[dict[Any, Any], dict[Any, Any], dict[Any, Any]]:
    """The flattened contents of the three patch sets (as CA's tests compare them)."""
    return (
        dict(s._claims.as_map()),
        dict(s._slices.as_map()),
        dict(s._classes.as_map()),
    )


INPUTS = (POD1, POD2, POD1_OWN, POD2_OWN, SHARED, UNALLOCATED, SLICE_N1, SLICE_N2, GLOBAL, CLASS)
SAVED = copy.deepcopy(INPUTS)


@pytest.fixture(autouse=True)
def _inputs_unchanged() -> Any:
    """Every test ends with every input object equal to a deep copy saved before."""
    yield
    assert INPUTS == SAVED


# --------------------------------------------------------------------------- constructor


def test_constructor_and_listers() -> None:
    s = make()
    assert {c.name for c in s.list_resource_claims()} == {"pod1-own", "pod2-own", "shared"}
    assert s.resource_claim("default", "shared") is SHARED
    assert s.resource_claim("other", "shared") is None
    assert s.get_resource_claim("default", "shared") is SHARED
    with pytest.raises(DraSnapshotError, match="claim default/nope not found"):
        s.get_resource_claim("default", "nope")
    with pytest.raises(DraSnapshotError, match="claim other/shared not found"):
        s.get_resource_claim("other", "shared")
    assert sorted(x.name for x in s.list_resource_slices()) == ["global", "n1-slice", "n2-slice"]
    assert s.list_device_classes() == [CLASS]
    assert s.device_class("gpu") is CLASS
    assert s.device_class("nope") is None
    with pytest.raises(DraSnapshotError, match='DeviceClass "nope" not found'):
        s.get_device_class("nope")


def test_empty_snapshot() -> None:
    s = DraSnapshot()
    assert s.list_resource_claims() == []
    assert s.list_resource_slices() == []
    assert s.list_device_classes() == []
    assert s.node_resource_slices("n1") == ((), False)
    assert s.list_all_allocated_devices() == frozenset()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"claims": [SHARED, SHARED]}, "claim default/shared given twice"),
        ({"device_classes": [CLASS, CLASS]}, "DeviceClass 'gpu' given twice"),
        ({"node_local_slices": {NON_LOCAL_SLICES_KEY: [SLICE_N1]}}, "reserved"),
    ],
)
def test_constructor_errors(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(DraSnapshotError, match=message):
        DraSnapshot(**kwargs)


def test_constructor_copies_containers() -> None:
    claims = [SHARED]
    slices = {"n1": [SLICE_N1]}
    non_local = [GLOBAL]
    s = DraSnapshot(claims, slices, non_local, [CLASS])
    claims.append(POD1_OWN)
    slices["n1"].append(SLICE_N2)
    slices["n3"] = [SLICE_N2]
    non_local.clear()
    assert s.list_resource_claims() == [SHARED]
    assert s.node_resource_slices("n1") == ((SLICE_N1,), True)
    assert s.node_resource_slices("n3") == ((), False)
    assert s.node_resource_slices(NON_LOCAL_SLICES_KEY) == ((), False)
    assert GLOBAL in s.list_resource_slices()


# --------------------------------------------------------------------------- pod_claims

POD_CLAIMS_CASES: list[tuple[str, Pod, list[ResourceClaim], list[ResourceClaim] | str]] = [
    ("no claims", pod("p"), [SHARED], []),
    ("all returned in spec order", POD1, [POD1_OWN, SHARED], [SHARED, POD1_OWN]),
    ("missing pod-owned claim", POD1, [SHARED], "couldn't find ResourceClaim default/pod1-own"),
    ("missing shared claim", POD1, [POD1_OWN], "couldn't find ResourceClaim default/shared"),
    (
        "template claim without status entry",
        pod("p", templates=[("own", "tmpl")]),
        [SHARED],
        "ResourceClaim not created yet",
    ),
    (
        "template claim with status entry but no name is skipped",
        pod("p", claims=[("s", "shared")], templates=[("own", "tmpl")], statuses={"own": None}),
        [SHARED],
        [SHARED],
    ),
    (
        "claim in another namespace is not found",
        pod("p", ns="other", claims=[("s", "shared")]),
        [SHARED],
        "couldn't find ResourceClaim other/shared",
    ),
    (
        "claim in the pod's namespace",
        pod("p", ns="other", claims=[("s", "shared")]),
        [claim("shared", ns="other")],
        [claim("shared", ns="other")],
    ),
    (
        "same claim referenced twice is returned once",
        pod("p", claims=[("a", "shared"), ("b", "shared")]),
        [SHARED],
        [SHARED],
    ),
    (
        "same claim by name and via template returned once",
        pod("p", claims=[("a", "shared")], templates=[("b", "t")], statuses={"b": "shared"}),
        [SHARED],
        [SHARED],
    ),
]


@pytest.mark.parametrize(
    ("p", "claims", "want"), [c[1:] for c in POD_CLAIMS_CASES], ids=[c[0] for c in POD_CLAIMS_CASES]
)
def test_pod_claims(p: Pod, claims: list[ResourceClaim], want: list[ResourceClaim] | str) -> None:
    s = DraSnapshot(claims)
    if isinstance(want, str):
        with pytest.raises(DraSnapshotError, match=want):
            s.pod_claims(p)
    else:
        assert s.pod_claims(p) == want


def test_pod_claims_neither_field_set() -> None:
    p = attrs.evolve(
        POD1, resource_claims=(attrs.evolve(POD1.resource_claims[0], resource_claim_name=None),)
    )
    with pytest.raises(DraSnapshotError, match="none of the supported fields are set"):
        make().pod_claims(p)


# --------------------------------------------------------------------------- add_claims


@pytest.mark.parametrize(
    ("add", "error"),
    [
        ([UNALLOCATED], None),
        ([UNALLOCATED, claim("other")], None),
        ([], None),
        ([SHARED], "claim default/shared already tracked in the snapshot"),
        ([UNALLOCATED, SHARED], "claim default/shared already tracked in the snapshot"),
        ([UNALLOCATED, UNALLOCATED], "claim default/unallocated already tracked in the snapshot"),
    ],
)
def test_add_claims(add: list[ResourceClaim], error: str | None) -> None:
    s = make()
    before = state(s)
    if error is not None:
        with pytest.raises(DraSnapshotError, match=error):
            s.add_claims(add)
        assert state(s) == before  # nothing added
        return
    s.add_claims(add)
    for c in add:
        assert s.resource_claim(c.namespace, c.name) is c
    assert len(s.list_resource_claims()) == 3 + len(add)


# --------------------------------------------------------------------------- reserve


def test_reserve_pod_claims_adds_reservation() -> None:
    p3 = pod(
        "pod3", claims=[("s", "shared")], templates=[("own", "t")], statuses={"own": "unallocated"}
    )
    s = make([SHARED, UNALLOCATED])
    s.reserve_pod_claims(p3)
    assert reserved_uids(s.resource_claim("default", "shared")) == [
        "pod1-uid",
        "pod2-uid",
        "pod3-uid",
    ]
    assert reserved_uids(s.resource_claim("default", "unallocated")) == ["pod3-uid"]
    ref = s.resource_claim("default", "unallocated").status.reserved_for[0]  # type: ignore[union-attr]
    assert ref == ResourceClaimConsumerReference(resource="pods", name="pod3", uid="pod3-uid")


def test_reserve_pod_claims_already_reserved_is_noop() -> None:
    s = make()
    before = state(s)
    s.reserve_pod_claims(POD1)
    assert state(s) == before
    assert s.resource_claim("default", "shared") is SHARED


def test_reserve_pod_claims_same_claim_twice() -> None:
    p = pod("p", claims=[("a", "unallocated"), ("b", "unallocated")])
    s = make([UNALLOCATED])
    s.fork()
    s.reserve_pod_claims(p)
    assert reserved_uids(s.resource_claim("default", "unallocated")) == ["p-uid"]
    s.revert()
    assert s.resource_claim("default", "unallocated") is UNALLOCATED


def full_claim(name: str, extra: Sequence[Pod] = ()) -> ResourceClaim:
    refs = tuple(
        ResourceClaimConsumerReference(resource="pods", name=f"x{i}", uid=f"x{i}-uid")
        for i in range(256 - len(extra))
    ) + tuple(
        ResourceClaimConsumerReference(resource="pods", name=p.name, uid=p.uid) for p in extra
    )
    c = claim(name)
    return attrs.evolve(c, status=attrs.evolve(c.status, reserved_for=refs))


@pytest.mark.parametrize(
    ("p", "claims", "error"),
    [
        (POD1, [POD1_OWN], "couldn't find ResourceClaim default/shared"),
        (POD1, [SHARED], "couldn't find ResourceClaim default/pod1-own"),
        (
            pod("p", claims=[("a", "unallocated"), ("b", "full")]),
            [UNALLOCATED, full_claim("full")],
            "claim default/full already has max number of reservations",
        ),
        (
            pod("p", claims=[("a", "full"), ("b", "unallocated")]),
            [UNALLOCATED, full_claim("full")],
            "claim default/full already has max number of reservations",
        ),
        (
            pod("p", templates=[("own", "t")]),
            [UNALLOCATED],
            "ResourceClaim not created yet",
        ),
    ],
)
def test_reserve_pod_claims_errors_change_nothing(
    p: Pod, claims: list[ResourceClaim], error: str
) -> None:
    s = DraSnapshot(claims)
    before = state(s)
    with pytest.raises(DraSnapshotError, match=error):
        s.reserve_pod_claims(p)
    assert state(s) == before
    for c in claims:
        assert s.resource_claim(c.namespace, c.name) is c


def test_reserve_pod_claims_full_but_already_reserved_for_pod() -> None:
    p = pod("p", claims=[("a", "full")])
    full = full_claim("full", extra=[p])
    s = DraSnapshot([full])
    s.reserve_pod_claims(p)
    assert s.resource_claim("default", "full") is full


def test_reserve_pod_claims_255_reservations_allows_one_more() -> None:
    c = full_claim("c")
    c = attrs.evolve(c, status=attrs.evolve(c.status, reserved_for=c.status.reserved_for[1:]))
    p = pod("p", claims=[("a", "c")])
    s = DraSnapshot([c])
    s.reserve_pod_claims(p)
    assert len(reserved_uids(s.resource_claim("default", "c"))) == 256
    with pytest.raises(DraSnapshotError, match="max number of reservations"):
        s.reserve_pod_claims(pod("q", claims=[("a", "c")]))


# --------------------------------------------------------------------------- unreserve


def test_unreserve_pod_claims_deallocation_rules() -> None:
    s = make()
    s.unreserve_pod_claims(POD1)
    own = s.resource_claim("default", "pod1-own")
    shared = s.resource_claim("default", "shared")
    assert own is not None and shared is not None
    # pod-owned: reservation removed and deallocated (allocation and device status cleared)
    assert own.status.reserved_for == ()
    assert own.status.allocation is None
    assert own.status.devices == ()
    # shared, still used by pod2: keeps its allocation
    assert reserved_uids(shared) == ["pod2-uid"]
    assert shared.status.allocation == SHARED.status.allocation
    # pod2's claim untouched
    assert s.resource_claim("default", "pod2-own") is POD2_OWN
    # now the last user of the shared claim goes: deallocated
    s.unreserve_pod_claims(POD2)
    shared = s.resource_claim("default", "shared")
    assert shared is not None
    assert shared.status.reserved_for == ()
    assert shared.status.allocation is None


def test_unreserve_owned_claim_without_reservation_still_deallocated() -> None:
    own = claim("pod1-own", owner=POD1, devices=["d1"])
    shared = claim("shared", devices=["d3"], reserved=[POD2])
    s = DraSnapshot([own, shared])
    s.unreserve_pod_claims(POD1)
    new_own = s.resource_claim("default", "pod1-own")
    assert new_own is not None and new_own.status.allocation is None
    # shared claim not reserved by pod1 and still used by pod2: unchanged
    assert s.resource_claim("default", "shared") is shared


def test_unreserve_unused_unowned_unallocated_claim_unchanged() -> None:
    p = pod("p", claims=[("a", "unallocated")])
    s = make([UNALLOCATED])
    s.unreserve_pod_claims(p)
    assert s.resource_claim("default", "unallocated") is UNALLOCATED


def test_unreserve_claim_owned_by_another_pod_not_deallocated_while_reserved() -> None:
    # pod2 references pod1's claim by name: pod1 still reserves it, so it stays allocated
    p = pod("pod2", claims=[("x", "pod1-own")])
    s = make()
    s.unreserve_pod_claims(p)
    assert s.resource_claim("default", "pod1-own") is POD1_OWN


@pytest.mark.parametrize(
    ("p", "claims", "error"),
    [
        (POD1, [POD1_OWN], "couldn't find ResourceClaim default/shared"),
        (POD1, [SHARED], "couldn't find ResourceClaim default/pod1-own"),
        (pod("p", templates=[("own", "t")]), [SHARED], "ResourceClaim not created yet"),
    ],
)
def test_unreserve_pod_claims_errors_change_nothing(
    p: Pod, claims: list[ResourceClaim], error: str
) -> None:
    s = DraSnapshot(claims)
    before = state(s)
    with pytest.raises(DraSnapshotError, match=error):
        s.unreserve_pod_claims(p)
    assert state(s) == before


# ------------------------------------------------------------------- remove_pod_owned_claims


def test_remove_pod_owned_claims() -> None:
    s = make()
    s.remove_pod_owned_claims(POD1)
    assert s.resource_claim("default", "pod1-own") is None
    shared = s.resource_claim("default", "shared")
    assert reserved_uids(shared) == ["pod2-uid"]
    assert shared is not None and shared.status.allocation == SHARED.status.allocation
    assert s.resource_claim("default", "pod2-own") is POD2_OWN


@pytest.mark.parametrize(
    "p",
    [
        pytest.param(POD1, id="missing claims skipped"),
        pytest.param(pod("p", templates=[("own", "t")]), id="unresolvable template skipped"),
        pytest.param(
            pod("p", claims=[("a", "nope"), ("b", "shared")]), id="missing claim then present"
        ),
    ],
)
def test_remove_pod_owned_claims_skips_missing(p: Pod) -> None:
    s = DraSnapshot([UNALLOCATED])
    s.remove_pod_owned_claims(p)
    assert s.list_resource_claims() == [UNALLOCATED]


def test_remove_pod_owned_claims_not_reserved_shared_unchanged() -> None:
    p = pod("p", claims=[("a", "shared")])
    s = make()
    s.remove_pod_owned_claims(p)
    assert s.resource_claim("default", "shared") is SHARED


# --------------------------------------------------------------------------- slices


def test_node_resource_slices() -> None:
    s = make()
    assert s.node_resource_slices("unknown") == ((), False)
    assert s.node_resource_slices("n1") == ((SLICE_N1,), True)
    assert s.node_resource_slices(NON_LOCAL_SLICES_KEY) == ((), False)


@pytest.mark.parametrize(
    ("node_name", "error"),
    [
        ("n3", None),
        ("n1", 'node "n1" ResourceSlices already present'),
        (NON_LOCAL_SLICES_KEY, "reserved"),
    ],
)
def test_add_node_resource_slices(node_name: str, error: str | None) -> None:
    s = make()
    before = state(s)
    new = [node_slice("new", node_name)]
    if error is not None:
        with pytest.raises(DraSnapshotError, match=error):
            s.add_node_resource_slices(node_name, new)
        assert state(s) == before
        return
    s.add_node_resource_slices(node_name, new)
    new.clear()  # the snapshot keeps its own container
    slices, found = s.node_resource_slices(node_name)
    assert found and [x.name for x in slices] == ["new"]
    assert len(s.list_resource_slices()) == 4


def test_add_empty_node_resource_slices_creates_entry() -> None:
    s = make()
    s.add_node_resource_slices("n3", [])
    assert s.node_resource_slices("n3") == ((), True)
    with pytest.raises(DraSnapshotError, match="already present"):
        s.add_node_resource_slices("n3", [])


@pytest.mark.parametrize("node_name", ["n1", "unknown", NON_LOCAL_SLICES_KEY])
def test_remove_node_resource_slices(node_name: str) -> None:
    s = make()
    s.remove_node_resource_slices(node_name)
    assert s.node_resource_slices(node_name) == ((), False)
    want = {"global", "n1-slice", "n2-slice"} - ({"n1-slice"} if node_name == "n1" else set())
    assert {x.name for x in s.list_resource_slices()} == want


def test_non_local_slices_listed() -> None:
    s = DraSnapshot(non_local_slices=[GLOBAL])
    assert s.list_resource_slices() == [GLOBAL]
    s = DraSnapshot(node_local_slices={"n1": [SLICE_N1]})
    assert s.list_resource_slices() == [SLICE_N1]


# --------------------------------------------------------------------------- claim tracker


@pytest.mark.parametrize(
    ("claims", "want"),
    [
        ([], set()),
        ([UNALLOCATED], set()),
        ([POD1_OWN, SHARED, UNALLOCATED], {"d1", "d3"}),
        ([claim("admin", devices=["d4"], admin_devices=["d5"])], {"d4"}),
        ([claim("admin", admin_devices=["d5"])], set()),
    ],
)
def test_list_all_allocated_devices(claims: list[ResourceClaim], want: set[str]) -> None:
    s = DraSnapshot(claims)
    assert s.list_all_allocated_devices() == {DeviceId(DRIVER, "pool", d) for d in want}


def test_signal_claim_pending_allocation() -> None:
    s = make([UNALLOCATED])
    allocated = claim("unallocated", devices=["d9"], node="n1")
    with pytest.raises(DraSnapshotError, match="claim default/other not found"):
        s.signal_claim_pending_allocation("x", claim("other", devices=["d9"]))
    with pytest.raises(DraSnapshotError, match="shouldn't happen"):
        s.signal_claim_pending_allocation("wrong-uid", allocated)
    assert s.resource_claim("default", "unallocated") is UNALLOCATED
    s.fork()
    s.signal_claim_pending_allocation(UNALLOCATED.uid, allocated)
    assert s.resource_claim("default", "unallocated") is allocated
    assert s.list_all_allocated_devices() == {DeviceId(DRIVER, "pool", "d9")}
    assert s.get_pending_allocation(UNALLOCATED.uid) is None
    s.revert()
    assert s.resource_claim("default", "unallocated") is UNALLOCATED
    assert s.list_all_allocated_devices() == frozenset()


def selector_claim(terms: list[dict[str, Any]] | None) -> ResourceClaim:
    c = claim("c", devices=["d"])
    if terms is None:
        return c
    from schedsim.api.core import NodeSelectorTerm

    parsed = tuple(NodeSelectorTerm.from_manifest(t, "t") for t in terms)
    alloc = attrs.evolve(c.status.allocation, node_selector=parsed)  # type: ignore[misc]
    return attrs.evolve(c, status=attrs.evolve(c.status, allocation=alloc))


def expr(key: str, op: str, *values: str) -> dict[str, Any]:
    return {"matchExpressions": [{"key": key, "operator": op, "values": list(values)}]}


def field(op: str, *values: str) -> dict[str, Any]:
    return {"matchFields": [{"key": "metadata.name", "operator": op, "values": list(values)}]}


@pytest.mark.parametrize(
    ("c", "want"),
    [
        (UNALLOCATED, False),
        (selector_claim(None), True),
        (selector_claim([field("In", "n1")]), True),
        (selector_claim([field("In", "n2")]), False),
        (selector_claim([field("NotIn", "n2")]), True),
        (selector_claim([field("In", "n2"), field("In", "n1")]), True),
        (selector_claim([expr("zone", "In", "a", "b")]), True),
        (selector_claim([expr("zone", "In", "b")]), False),
        (selector_claim([expr("zone", "NotIn", "b")]), True),
        (selector_claim([expr("rack", "NotIn", "b")]), True),
        (selector_claim([expr("zone", "Exists")]), True),
        (selector_claim([expr("rack", "Exists")]), False),
        (selector_claim([expr("rack", "DoesNotExist")]), True),
        (selector_claim([expr("zone", "DoesNotExist")]), False),
        (selector_claim([expr("gpus", "Gt", "3")]), True),
        (selector_claim([expr("gpus", "Lt", "3")]), False),
        (selector_claim([{**expr("zone", "In", "a"), **field("In", "n2")}]), False),
        (selector_claim([{**expr("zone", "In", "a"), **field("In", "n1")}]), True),
        (selector_claim([{}]), False),
        (selector_claim([]), False),
    ],
)
def test_claim_available_on_node(c: ResourceClaim, want: bool) -> None:
    assert claim_available_on_node(c, node("n1", zone="a", gpus="4")) is want


# --------------------------------------------------------------------------- fork / commit / revert

P3 = pod(
    "pod3", claims=[("s", "shared")], templates=[("own", "t")], statuses={"own": "unallocated"}
)

Mutation = Callable[[DraSnapshot], None]


def _all_mutations(s: DraSnapshot) -> None:
    s.add_node_resource_slices("n3", [node_slice("n3-slice", "n3")])
    s.remove_node_resource_slices("n2")
    s.add_claims([UNALLOCATED])
    s.reserve_pod_claims(P3)
    s.unreserve_pod_claims(POD2)
    s.remove_pod_owned_claims(POD1)


MUTATIONS: dict[str, Mutation] = {
    "add node slices": lambda s: s.add_node_resource_slices("n3", [node_slice("n3-slice", "n3")]),
    "remove node slices": lambda s: s.remove_node_resource_slices("n2"),
    "add claims": lambda s: s.add_claims([UNALLOCATED]),
    "reserve pod claims": lambda s: (s.add_claims([UNALLOCATED]), s.reserve_pod_claims(P3))[0],
    "unreserve pod claims": lambda s: s.unreserve_pod_claims(POD1),
    "unreserve all": lambda s: (s.unreserve_pod_claims(POD1), s.unreserve_pod_claims(POD2))[0],
    "remove pod-owned claims": lambda s: s.remove_pod_owned_claims(POD1),
    "signal pending allocation": lambda s: s.signal_claim_pending_allocation(
        SHARED.uid, claim("shared", devices=["d7"])
    ),
    "all of them": lambda s: _all_mutations(s),
}


def _modified(mutation: Mutation) -> Any:
    s = make()
    mutation(s)
    return state(s)


ORIGINAL = state(make())

# name -> (steps, expect modified state at the end); "m" applies the mutation
SCENARIOS: dict[str, tuple[str, bool]] = {
    "no fork": ("m", True),
    "fork": ("f m", True),
    "fork revert": ("f m r", False),
    "fork commit": ("f m c", True),
    "fork fork revert revert": ("f f m r r", False),
    "fork fork commit revert": ("f f m c r", False),
    "fork fork revert commit": ("f f m r c", False),
    "fork fork commit commit": ("f f m c c", True),
    "commit without fork": ("m c", True),
    "revert without fork": ("m r", True),
    "fork commit revert": ("f m c r", True),
    "fork revert fork": ("f m r f", False),
    "mutation below a reverted fork": ("f m f r", True),
}


@pytest.mark.parametrize("scenario", list(SCENARIOS))
@pytest.mark.parametrize("mutation", list(MUTATIONS))
def test_fork_commit_revert(mutation: str, scenario: str) -> None:
    steps, modified = SCENARIOS[scenario]
    changed = _modified(MUTATIONS[mutation])
    assert changed != ORIGINAL  # the mutation does change something
    expected = changed if modified else ORIGINAL
    s = make()
    for step in steps.split():
        {"f": s.fork, "c": s.commit, "r": s.revert, "m": lambda: MUTATIONS[mutation](s)}[step]()
    assert state(s) == expected
    if not modified:
        # restored to the very objects given, not equal copies
        for c in (POD1_OWN, POD2_OWN, SHARED):
            assert s.resource_claim(c.namespace, c.name) is c
        assert s.node_resource_slices("n2") == ((SLICE_N2,), True)


@pytest.mark.parametrize("mutation", list(MUTATIONS))
def test_reverted_changes_reapply_identically(mutation: str) -> None:
    s = make()
    s.fork()
    MUTATIONS[mutation](s)
    first = state(s)
    s.revert()
    s.fork()
    MUTATIONS[mutation](s)
    assert state(s) == first


def test_nested_layers_revert_one_at_a_time() -> None:
    s = make()
    s.fork()
    s.reserve_pod_claims(pod("pod3", claims=[("s", "shared")]))
    after_first = state(s)
    s.fork()
    s.unreserve_pod_claims(POD1)
    s.remove_node_resource_slices("n1")
    s.revert()
    assert state(s) == after_first
    s.revert()
    assert state(s) == ORIGINAL


def test_same_claim_twice_does_not_corrupt_base() -> None:
    # CA defect (sigs issue #33): the second write of the same claim edited the base object
    p = pod("p", claims=[("a", "shared"), ("b", "shared")])
    s = make()
    s.fork()
    s.reserve_pod_claims(p)
    s.unreserve_pod_claims(p)
    s.reserve_pod_claims(p)
    assert reserved_uids(s.resource_claim("default", "shared")) == ["pod1-uid", "pod2-uid", "p-uid"]
    s.revert()
    assert s.resource_claim("default", "shared") is SHARED
    assert state(s) == ORIGINAL


def test_unforked_writes_do_not_mutate_inputs() -> None:
    # CA defect (sigs PR #104): unforked writes edited the stored (informer) objects
    s = make()
    s.add_claims([UNALLOCATED])
    s.reserve_pod_claims(P3)
    s.unreserve_pod_claims(POD1)
    s.remove_pod_owned_claims(POD2)
    assert reserved_uids(s.resource_claim("default", "shared")) == ["pod3-uid"]
    assert UNALLOCATED.status.reserved_for == ()
    assert reserved_uids(SHARED) == ["pod1-uid", "pod2-uid"]
    assert POD1_OWN.status.allocation is not None
