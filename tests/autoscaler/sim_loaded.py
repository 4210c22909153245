"""The ready snapshot the simulations take, built through `schedsim.engine.Cluster` from
objects a test made (and, where a test made them, its own DRA/CSI/storage state)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from schedsim.api.core import Node, Pod
from schedsim.engine import Cluster
from schedsim.framework import Framework
from schedsim.snapshot import ClusterSnapshotStore, PredicateSnapshot


def loaded(
    nodes: Sequence[Node],
    pods: Sequence[Pod],
    framework: Framework,
    store: ClusterSnapshotStore | None = None,
    **state: Any,
) -> tuple[PredicateSnapshot, Sequence[Pod]]:
    """(the snapshot holding ``nodes`` and the bound ``pods``, ``pods``): the first two
    arguments of `simulate`, `scale_up` and `scale_down`. ``state``: `Cluster.snapshot`'s
    keyword arguments."""
    cluster = Cluster(nodes=nodes, pods=pods)
    snapshot, _ = cluster.snapshot(framework, store, **state)
    return snapshot, cluster.pods
