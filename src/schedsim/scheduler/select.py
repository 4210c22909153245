"""Choosing the host among scored nodes (kube-scheduler's ``selectHost``).

kube-scheduler takes a node with the highest total score and, among several, picks one by
reservoir sampling with ``math/rand``: the answer may change from run to run. schedsim must
give the same answer for the same input, so by default it takes **the first of the tied nodes
in evaluation order** (the order the filter walk found them, from ``nextStartNodeIndex``).
With a seed (``schedsim simulate --seed N``) it samples like upstream: the k-th tied node
seen replaces the candidate with probability 1/k, drawn from ``random.Random(N)`` (one
generator for the whole run, so the run is reproducible). With a node rank (the FGD
artifact's patched ``selectHost``, used by the GPU-sharing experiment: tied nodes go to the
lexicographically smallest name, and every node name carries a seeded random prefix) the
tied node of the lowest rank wins.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Protocol

__all__ = ["ScoredNode", "select_host"]


class ScoredNode(Protocol):
    """A node with its total score (``framework.NodePluginScores``); a Protocol:
    implementations don't inherit from it."""

    @property
    def name(self) -> str:
        """The node name."""
        ...

    @property
    def total_score(self) -> int:
        """The weighted sum of the plugins' normalized scores."""
        ...


def select_host(
    scores: Sequence[ScoredNode],
    rng: random.Random | None = None,
    rank: Mapping[str, int] | None = None,
) -> str:
    """The node with the highest ``total_score`` (mirrors kube-scheduler 1.34 ``selectHost``).

    Args:
        scores: the feasible nodes' scores, in evaluation order; not empty.
        rng: None for the deterministic rule (the first of the tied nodes in ``scores``
            order); a generator for upstream's reservoir sampling among the tied nodes.
        rank: node name -> rank; when given, the tied node of the lowest rank (``rng`` is
            not used).

    Returns:
        the chosen node's name.

    Raises:
        ValueError: ``scores`` is empty (``errEmptyPriorityList``: "empty priorityList").
    """
    if not scores:
        raise ValueError("empty priorityList")
    best = scores[0]
    best_score = best.total_score
    if rank is not None:
        best_rank = rank[best.name]
        for ns in scores:
            s = ns.total_score
            if s > best_score or (s == best_score and rank[ns.name] < best_rank):
                best, best_score, best_rank = ns, s, rank[ns.name]
        return best.name
    if rng is None:
        for ns in scores:
            if ns.total_score > best_score:
                best, best_score = ns, ns.total_score
        return best.name
    tied = 1
    for ns in scores[1:]:
        s = ns.total_score
        if s > best_score:
            best, best_score, tied = ns, s, 1
        elif s == best_score:
            tied += 1
            if rng.randrange(tied) == 0:  # replace with probability 1/tied
                best = ns
    return best.name
