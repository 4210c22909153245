"""Score values and the per-node, per-plugin score records RunScorePlugins returns.

Mirrors k8s.io/kube-scheduler/framework's ``MaxNodeScore`` / ``MinNodeScore`` and
pkg/scheduler/framework's ``PluginScore`` / ``NodePluginScores``.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["MAX_NODE_SCORE", "MIN_NODE_SCORE", "NodePluginScores", "PluginScore"]

MAX_NODE_SCORE = 100
"""The highest score a Score plugin may give a node after NormalizeScore (MaxNodeScore)."""

MIN_NODE_SCORE = 0
"""The lowest score a Score plugin may give a node after NormalizeScore (MinNodeScore)."""


class PluginScore(NamedTuple):
    """One Score plugin's contribution to one node (``framework.PluginScore``).

    Attributes:
        name: the plugin's name.
        score: its normalized score times its weight in the profile.
    """

    name: str
    score: int


class NodePluginScores(NamedTuple):
    """All Score plugins' contributions to one node (``framework.NodePluginScores``).

    Attributes:
        name: the node's name.
        scores: one `PluginScore` per Score plugin that ran, in profile order (plugins whose
            PreScore returned Skip are absent).
        total_score: the sum of ``scores``; selectHost takes the node with the highest.
    """

    name: str
    scores: tuple[PluginScore, ...]
    total_score: int
