"""The DRA snapshot's change feed and the allocated-state tracker that follows it.

`AllocatedStateTracker.sync` reads only the claims `DraSnapshot.claim_changes_since` names,
so a claim the feed forgot (a revert bringing back an older allocation, a deletion) would
leave a device counted as free or busy for every later pod. kube-scheduler keeps the same
set from informer events (``structured.GatherAllocatedState`` over the claim cache, and the
in-flight allocations of ``SignalClaimPendingAllocation``); CA's snapshot has no feed and
lists every claim (``ListAllAllocatedDevices``). These tests drive a snapshot through random
forks, allocations, deallocations, deletions, commits and reverts, with both designs of the
snapshot (patch sets and clone on fork), and check after every step that the tracker's view
equals a rebuild from scratch (`AllocatedState.from_claims` over every claim) and that its
pool journal names exactly the pools whose devices in use changed.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import pytest
from dra_builders import claim, request
from hypothesis import given, settings
from hypothesis import strategies as st

from schedsim.api.resource import ResourceClaim, ResourceClaimConsumerReference, ResourceSlice
from schedsim.dra import AllocatedState, DeviceId, DraFeatures
from schedsim.dra.tracker import AllocatedStateTracker
from schedsim.snapshot.change_journal import JOURNAL_LIMIT, ChangeJournal
from schedsim.snapshot.dra import DraSnapshot

FEATURES = DraFeatures()


class _Feed:
    """The three calls the tracker makes, forwarded as `PredicateSnapshot` forwards them."""

    def __init__(self, dra: DraSnapshot) -> None:
        self.dra = dra

    def claim_changes_since(self, token: object) -> tuple[object, Sequence[tuple[str, str]] | None]:
        return self.dra.claim_changes_since(token)

    def get_resource_claim(self, namespace: str, name: str) -> ResourceClaim | None:
        return self.dra.resource_claim(namespace, name)

    def list_resource_claims(self) -> Sequence[ResourceClaim]:
        return self.dra.list_resource_claims()


def _claim(key: int, devices: Sequence[int]) -> ResourceClaim:
    results = [
        {"request": "r", "driver": "driver-a", "pool": f"pool-{d % 3}", "device": f"dev-{d}"}
        for d in devices
    ]
    status: dict[str, object] = {}
    if results:
        status["allocation"] = {"devices": {"results": results}}
    return claim(f"c{key}", [request("r")], status=status or None)


def _rebuilt(dra: DraSnapshot) -> set[DeviceId]:
    return set(AllocatedState.from_claims(dra.list_resource_claims(), FEATURES).devices)


# (operation, claim key, devices); operations: 0 fork, 1 commit, 2 revert, 3 allocate or
# replace (update / add), 4 deallocate, 5 delete, 6 reservation only
op_st = st.tuples(st.integers(0, 6), st.integers(0, 5), st.lists(st.integers(0, 7), max_size=3))


def _step(dra: DraSnapshot, op: int, key: int, devices: list[int]) -> None:
    current = dra.resource_claim("default", f"c{key}")
    if op == 0:
        dra.fork()
    elif op == 1:
        dra.commit()
    elif op == 2:
        dra.revert()
    elif op == 3:
        new = _claim(key, devices)
        if current is None:
            dra.add_claims([new])
        else:
            dra.update_claim(new)
    elif op == 4 and current is not None:
        dra.update_claim(_claim(key, []))
    elif op == 5 and current is not None:
        dra.remove_claim("default", f"c{key}")
    elif op == 6 and current is not None and current.status.allocation is not None:
        # same allocation object, one more reservation (what PreBind writes)
        ref = ResourceClaimConsumerReference(resource="pods", name=f"p{key}", uid=f"u{key}")
        status = attrs.evolve(current.status, reserved_for=(*current.status.reserved_for, ref))
        dra.update_claim(attrs.evolve(current, status=status))


@pytest.mark.parametrize("clone_on_fork", [False, True], ids=["patchset", "clone"])
@settings(max_examples=120, deadline=None)
@given(ops=st.lists(op_st, min_size=1, max_size=40))
def test_tracker_follows_feed_through_fork_revert_commit(
    clone_on_fork: bool, ops: list[tuple[int, int, list[int]]]
) -> None:
    """After every step the synced view equals a from-scratch rebuild, a tracker that syncs
    only at the end agrees, and the pool journal names exactly the pools that changed."""
    dra = DraSnapshot([_claim(0, [0]), _claim(1, [])], clone_on_fork=clone_on_fork)
    feed = _Feed(dra)
    tracker = AllocatedStateTracker(FEATURES)
    lazy = AllocatedStateTracker(FEATURES)
    assert set(tracker.sync(feed).devices) == _rebuilt(dra)
    lazy.sync(feed)
    for op, key, devices in ops:
        before = set(tracker.sync(feed).devices)
        epoch = tracker.epoch
        assert epoch is not None
        _step(dra, op, key, devices)
        after = _rebuilt(dra)
        assert set(tracker.sync(feed).devices) == after
        changed = {(d.driver, d.pool) for d in before ^ after}
        journal = tracker.pools_changed_since(epoch)
        assert journal is not None
        assert set(journal) == changed
    assert set(lazy.sync(feed).devices) == _rebuilt(dra)
    fresh = AllocatedStateTracker(FEATURES)
    assert set(fresh.sync(feed).devices) == set(tracker.sync(feed).devices)


def test_fork_allocate_revert_equals_rebuild() -> None:
    """The case the brief names: fork, allocate (as Reserve does through
    ``signal_claim_pending_allocation``), revert: the tracker frees the device again, and
    the view equals a rebuild; the same after a commit keeps it."""
    dra = DraSnapshot([_claim(0, []), _claim(1, [1])])
    feed = _Feed(dra)
    tracker = AllocatedStateTracker(FEATURES)
    assert set(tracker.sync(feed).devices) == {DeviceId("driver-a", "pool-1", "dev-1")}
    dra.fork()
    c0 = dra.get_resource_claim("default", "c0")
    dra.signal_claim_pending_allocation(c0.uid, _claim(0, [3]))
    assert set(tracker.sync(feed).devices) == _rebuilt(dra)
    assert DeviceId("driver-a", "pool-0", "dev-3") in tracker.sync(feed).devices
    dra.revert()
    assert (
        set(tracker.sync(feed).devices)
        == _rebuilt(dra)
        == {DeviceId("driver-a", "pool-1", "dev-1")}
    )
    dra.fork()
    dra.signal_claim_pending_allocation(c0.uid, _claim(0, [3]))
    dra.commit()
    assert set(tracker.sync(feed).devices) == _rebuilt(dra)
    assert len(_rebuilt(dra)) == 2


def test_feed_names_every_changed_claim_and_nothing_on_commit() -> None:
    """`claim_changes_since` names each key written and each key a revert brings back;
    a commit changes no visible claim and adds nothing; a token of another snapshot or
    None reads as unknown."""
    dra = DraSnapshot([_claim(0, []), _claim(1, [])])
    token, keys = dra.claim_changes_since(None)
    assert keys is None
    dra.fork()
    dra.update_claim(_claim(0, [2]))
    dra.remove_claim("default", "c1")
    token, keys = dra.claim_changes_since(token)
    assert keys == [("default", "c0"), ("default", "c1")]
    dra.fork()
    dra.add_claims([_claim(2, [])])
    dra.commit()
    token, keys = dra.claim_changes_since(token)
    assert keys == [("default", "c2")]
    dra.revert()
    token, keys = dra.claim_changes_since(token)
    assert keys is not None
    assert set(keys) == {("default", "c0"), ("default", "c1"), ("default", "c2")}
    assert dra.claim_changes_since(token)[1] == []
    other = DraSnapshot()
    assert other.claim_changes_since(token)[1] is None


def test_slices_stamp_moves_only_when_slices_change() -> None:
    """`slices_stamp` stays while the slices do (forks, commits, claim writes) and moves on
    every slice write and on a revert that drops one; stamps of two snapshots differ."""
    s = ResourceSlice.from_manifest(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "s"},
            "spec": {
                "driver": "driver-a",
                "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
                "nodeName": "n1",
            },
        }
    )
    dra = DraSnapshot([_claim(0, [])])
    first = dra.slices_stamp()
    assert DraSnapshot().slices_stamp() != first
    dra.fork()
    dra.update_claim(_claim(0, [1]))
    dra.commit()
    assert dra.slices_stamp() == first
    dra.fork()
    dra.revert()
    assert dra.slices_stamp() == first
    dra.fork()
    dra.add_node_resource_slices("n1", [s])
    added = dra.slices_stamp()
    assert added != first
    dra.revert()
    assert dra.slices_stamp() not in (first, added)
    assert dra.list_resource_slices() == []
    classes = dra.device_classes_stamp()
    dra.fork()
    dra.commit()
    assert dra.device_classes_stamp() == classes


def test_journal_drops_old_half_past_limit() -> None:
    """A reader far behind gets None (rebuild); one up to date keeps reading keys."""
    journal: ChangeJournal[int] = ChangeJournal()
    old = journal.token()
    for i in range(JOURNAL_LIMIT):
        journal.record(i)
    recent = journal.token()
    journal.record_all(range(5))
    assert journal.changes_since(old)[1] is None
    assert journal.changes_since(recent)[1] == [0, 1, 2, 3, 4]
    journal.restart()
    assert journal.changes_since(journal.token())[1] == []
    assert journal.changes_since(recent)[1] is None
