"""numFeasibleNodesToFind and selectHost, from kube-scheduler 1.34's schedule_one_test.go."""

from __future__ import annotations

import random
from collections import Counter

import attrs
import pytest

from schedsim.scheduler import num_feasible_nodes_to_find, select_host


@pytest.mark.parametrize(
    ("profile", "global_", "num_all", "want"),
    [
        # TestNumFeasibleNodesToFind, upstream's case names
        pytest.param(None, None, 10, 10, id="not set and nodes number not more than 50"),
        pytest.param(40, None, 10, 10, id="set profile and nodes number not more than 50"),
        pytest.param(None, None, 1000, 420, id="not set and nodes number more than 50"),
        pytest.param(40, None, 1000, 400, id="set profile and nodes number more than 50"),
        pytest.param(40, 100, 1000, 400, id="set global and profile, profile wins"),
        pytest.param(None, 40, 1000, 400, id="set global and nodes number more than 50"),
        pytest.param(None, None, 6000, 300, id="not set and nodes number more than 50*125"),
        pytest.param(40, None, 6000, 2400, id="set profile and nodes number more than 50*125"),
        # the GCDA-sized benchmark cluster: 50 - 1213 // 125 = 41 %
        pytest.param(None, None, 1213, 497, id="1213 nodes adaptive"),
        pytest.param(1, None, 1000, 100, id="never below minFeasibleNodesToFind"),
    ],
)
def test_num_feasible_nodes_to_find(
    profile: int | None, global_: int | None, num_all: int, want: int
) -> None:
    """Upstream's TestNumFeasibleNodesToFind table (plus the 100-node floor)."""
    assert num_feasible_nodes_to_find(num_all, profile, global_) == want


@attrs.frozen
class _NS:
    name: str
    total_score: int


def test_select_host_takes_the_highest_total() -> None:
    """selectHost returns a node with the highest TotalScore (TestSelectHost 'unique
    properly ordered scores' / 'mixed scores')."""
    scores = [_NS("node1.1", 1), _NS("node2.1", 2), _NS("node3.1", 3), _NS("node2.2", 2)]
    assert select_host(scores) == "node3.1"
    assert select_host(scores, random.Random(1)) == "node3.1"


def test_select_host_ties_deterministic_first_in_evaluation_order() -> None:
    """Ties: upstream picks at random among the tied nodes (TestSelectHost 'equal scores':
    possibleNodes {node1.1, node1.2}); schedsim without a seed takes the first of them in
    evaluation order, every time."""
    scores = [_NS("node0", 1), _NS("node1.1", 2), _NS("node1.2", 2)]
    assert {select_host(scores) for _ in range(20)} == {"node1.1"}


def test_select_host_seeded_reservoir_sampling() -> None:
    """With a seed every tied node can win (reservoir sampling, probability 1/k each), never
    a lower one, and the same seed gives the same sequence."""
    scores = [_NS("a", 5), _NS("b", 5), _NS("low", 1), _NS("c", 5)]
    rng = random.Random(7)
    picks = Counter(select_host(scores, rng) for _ in range(3000))
    assert set(picks) == {"a", "b", "c"}
    assert all(800 < n < 1200 for n in picks.values())  # ~1000 each
    one = [select_host(scores, random.Random(42)) for _ in range(5)]
    two = [select_host(scores, random.Random(42)) for _ in range(5)]
    assert one == two


def test_select_host_empty() -> None:
    """errEmptyPriorityList."""
    with pytest.raises(ValueError, match="empty priorityList"):
        select_host([])
