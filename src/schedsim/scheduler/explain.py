"""Why a pod landed where it did: per node and per plugin results of one scheduling attempt.

Named after kube-scheduler-simulator's result annotations
(``kube-scheduler-simulator.sigs.k8s.io/prefilter-result-status``, ``filter-result``,
``postfilter-result``, ``prescore-result``, ``score-result``, ``finalscore-result``,
``reserve-result``, ``selected-node``) and with the simulator's words: a Filter plugin that
passed a node says ``"passed"``, a PreFilter/PreScore/Reserve plugin that succeeded says
``"success"``, one that returned Skip says ``"skip"``, a rejection gives the status message
(its reasons joined with ``", "``). A plugin that did not run (after the first Filter
rejection on a node, a Filter plugin its PreFilter skipped) has no entry, as in the
simulator, which records only plugins that ran.

Nodes that were not evaluated because kube-scheduler stops at ``numFeasibleNodesToFind``
feasible nodes are counted (``notEvaluatedNodes``), never listed with invented results.
Built only for pods the user asked about: the hot path pays nothing otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from schedsim.framework.status import Code, Status

__all__ = ["PASSED", "SKIP", "SUCCESS_MESSAGE", "Explanation", "plugin_statuses"]

PASSED = "passed"
"""A Filter plugin passed the node (the simulator's ``PassedFilterMessage``)."""

SUCCESS_MESSAGE = "success"
"""A PreFilter/PreScore/Reserve plugin succeeded (the simulator's ``SuccessMessage``)."""

SKIP = "skip"
"""A PreFilter/PreScore plugin returned Skip: its Filter/Score did not run."""


def plugin_statuses(
    plugins: Sequence[str], skipped: set[str] | frozenset[str], failed: Status | None
) -> dict[str, str]:
    """Per plugin of one extension point that runs until a rejection: ``"success"``,
    ``"skip"``, or the failing plugin's message; plugins after an
    UnschedulableAndUnresolvable or Error failure did not run and are left out."""
    out: dict[str, str] = {}
    stop = failed is not None and failed.code is not Code.Unschedulable
    for name in plugins:
        if failed is not None and name == failed.plugin:
            out[name] = failed.message
            if stop:
                break
        elif name in skipped:
            out[name] = SKIP
        else:
            out[name] = SUCCESS_MESSAGE
    return out


@attrs.define
class Explanation:
    """The results of one scheduling attempt of one pod.

    Attributes:
        pre_filter: plugin -> status (``prefilter-result-status``).
        pre_filter_nodes: the node names a PreFilterResult kept, sorted, or None when it kept
            all (``prefilter-result``).
        filter: node -> plugin -> ``"passed"`` or the rejection (``filter-result``), for the
            nodes evaluated: the feasible ones first, then the rejected ones, each in
            evaluation order.
        post_filter: plugin -> status (``postfilter-result``) of the PostFilter plugins that
            ran when no node fitted (``"success"`` or the message); empty when a node fitted.
        pre_score: plugin -> status (``prescore-result``); empty when scoring did not run
            (one feasible node, or none).
        score: node -> plugin -> raw score (``score-result``).
        final_score: node -> plugin -> normalized score times weight (``finalscore-result``).
        reserve: plugin -> status (``reserve-result``).
        selected_node: the chosen node, or None (``selected-node``).
        num_all_nodes: nodes in the snapshot.
        feasible_nodes: nodes that passed Filter.
        not_evaluated_nodes: candidate nodes left untried because enough feasible nodes were
            found (``numFeasibleNodesToFind``).
        excluded_nodes: nodes a PreFilterResult left out.
    """

    pre_filter: dict[str, str] = attrs.field(factory=dict)
    pre_filter_nodes: list[str] | None = None
    filter: dict[str, dict[str, str]] = attrs.field(factory=dict)
    post_filter: dict[str, str] = attrs.field(factory=dict)
    pre_score: dict[str, str] = attrs.field(factory=dict)
    score: dict[str, dict[str, int]] = attrs.field(factory=dict)
    final_score: dict[str, dict[str, int]] = attrs.field(factory=dict)
    reserve: dict[str, str] = attrs.field(factory=dict)
    selected_node: str | None = None
    num_all_nodes: int = 0
    feasible_nodes: int = 0
    not_evaluated_nodes: int = 0
    excluded_nodes: int = 0

    def record_filter(
        self,
        plugins: Sequence[str],
        skipped: set[str] | frozenset[str],
        feasible: Sequence[str],
        node_to_status: Mapping[str, Status],
    ) -> None:
        """Fill ``filter`` from a walk's outcome: a feasible node passed every Filter plugin
        that ran; a rejected node passed those before the rejecting plugin (RunFilterPlugins
        stops at the first rejection)."""
        running = [p for p in plugins if p not in skipped]
        passed = dict.fromkeys(running, PASSED)
        for name in feasible:
            self.filter[name] = dict(passed)
        for name, st in node_to_status.items():
            row: dict[str, str] = {}
            for p in running:
                if p == st.plugin:
                    row[p] = st.message
                    break
                row[p] = PASSED
            self.filter[name] = row
        self.feasible_nodes = len(feasible)

    def record_scores(self, raw: Mapping[str, Mapping[str, int]], final: Sequence[Any]) -> None:
        """Fill ``score`` (raw: plugin -> node -> score) and ``final_score`` (one
        ``NodePluginScores`` per node)."""
        for plugin, per_node in raw.items():
            for node, value in per_node.items():
                self.score.setdefault(node, {})[plugin] = value
        for ns in final:
            self.final_score[ns.name] = {ps.name: ps.score for ps in ns.scores}

    def to_json(self) -> dict[str, Any]:
        """The ``results`` object of ``schedsim simulate --explain -o json``."""
        out: dict[str, Any] = {"preFilter": self.pre_filter}
        if self.pre_filter_nodes is not None:
            out["preFilterResult"] = self.pre_filter_nodes
        out.update(
            {
                "filter": self.filter,
                "postFilter": self.post_filter,
                "preScore": self.pre_score,
                "score": self.score,
                "finalScore": self.final_score,
                "reserve": self.reserve,
                "selectedNode": self.selected_node,
                "nodes": {
                    "all": self.num_all_nodes,
                    "evaluated": len(self.filter),
                    "feasible": self.feasible_nodes,
                    "notEvaluated": self.not_evaluated_nodes,
                    "excludedByPreFilter": self.excluded_nodes,
                },
            }
        )
        return out
