"""The delta store's change journal (`DeltaSnapshotStore.changes_since`) names every node
whose visible NodeInfo changed (object or generation) since a token, through pod writes,
forks, reverts and commits, and answers None whenever positions may have moved (a node
added or removed, a clear). The filter table and ImageLocality trust it instead of
comparing every node per pod, so a missed name would silently reuse a stale Filter result.
The basic store keeps no journal (always None)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from schedsim.api.core import Node, Pod
from schedsim.snapshot import BasicSnapshotStore, DeltaSnapshotStore, NodeInfo, PodInfo


def _node(name: str) -> Node:
    return Node.from_manifest({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}})


def _pod(name: str) -> Pod:
    return Pod.from_manifest(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name},
            "spec": {"containers": [{"name": "c"}]},
        }
    )


def _visible(store: Any) -> tuple[list[str], dict[str, tuple[int, int]]]:
    infos = store.node_infos().list()
    names = [ni.node.name for ni in infos]
    return names, {ni.node.name: (id(ni), ni.generation) for ni in infos}


@pytest.mark.parametrize("seed", range(8))
def test_journal_names_every_changed_node(seed: int) -> None:
    """Random writes, forks, reverts, commits and node additions/removals: after each step,
    the names the journal gives since the previous step cover every node whose visible
    NodeInfo object or generation differs, and None is given whenever the node list's
    order changed."""
    rng = random.Random(seed)
    store = DeltaSnapshotStore()
    for i in range(6):
        store.store_node_info(NodeInfo(_node(f"n{i}")))
    token, _ = store.changes_since(None)
    before = _visible(store)
    pods: list[list[tuple[str, str]]] = [[]]  # per layer: (pod, node) added there
    serial = 0
    nonempty = 0
    for _ in range(300):
        names = before[0]
        roll = rng.random()
        if roll < 0.35 and names:
            serial += 1
            node = rng.choice(names)
            store.store_pod_info(PodInfo(_pod(f"p{serial}")), node)
            pods[-1].append((f"p{serial}", node))
        elif roll < 0.45:
            mine = [(p, n) for p, n in pods[-1] if n in names]
            if mine:
                p, n = mine.pop(rng.randrange(len(mine)))
                pods[-1].remove((p, n))
                store.remove_pod_info("default", p, n)
        elif roll < 0.6:
            store.fork()
            pods.append([])
        elif roll < 0.72:
            store.revert()
            if len(pods) > 1:
                pods.pop()
        elif roll < 0.82:
            store.commit()
            if len(pods) > 1:
                top = pods.pop()
                pods[-1].extend(top)
        elif roll < 0.91:
            serial += 1
            store.store_node_info(NodeInfo(_node(f"m{serial}")))
        elif names:
            gone = rng.choice(names)
            store.remove_node_info(gone)
            for layer in pods:
                layer[:] = [(p, n) for p, n in layer if n != gone]
        token, written = store.changes_since(token)
        after = _visible(store)
        if written is None:
            before = after
            continue
        nonempty += bool(written)
        assert after[0] == before[0], "positions moved without a None"
        changed = {name for name, v in after[1].items() if before[1].get(name) != v}
        assert changed <= set(written)
        before = after
    assert nonempty > 20  # the journal answered with names often, not only None


def test_tokens_of_another_store_and_the_basic_store_give_none() -> None:
    """A token is only good for the store that gave it; the basic store has no journal."""
    a, b = DeltaSnapshotStore(), DeltaSnapshotStore()
    token, _ = a.changes_since(None)
    assert a.changes_since(token)[1] == []
    assert b.changes_since(token)[1] is None
    basic = BasicSnapshotStore()
    assert basic.changes_since(basic.changes_since(None)[0]) == (None, None)
