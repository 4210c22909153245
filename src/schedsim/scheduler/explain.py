"""Why a pod landed where it did: per node and per plugin results of one scheduling attempt.

Named after kube-scheduler-simulator's result annotations
(``kube-scheduler-simulator.sigs.k8s.io/prefilter-result-status``, ``filter-result``,
``postfilter-result``, ``prescore-result``, ``score-result``, ``finalscore-result``,
``reserve-result``, ``permit-result``, ``permit-result-timeout``, ``prebind-result``,
``bind-result``, ``selected-node``) and with the simulator's words: a Filter plugin that
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
from collections.abc import Set as AbstractSet
from typing import Any

import attrs

from schedsim.api.loading.kss import ANNOTATION_PREFIX, go_json
from schedsim.framework.fit_error import FitError
from schedsim.framework.interface import NodeInfo
from schedsim.framework.runtime import Framework
from schedsim.framework.scores import NodePluginScores
from schedsim.framework.status import Code, Status
from schedsim.framework.waiting_pods import go_duration

__all__ = [
    "KSS_RESULT_KEYS",
    "NO_RECORDER",
    "PASSED",
    "POST_FILTER_NOMINATED",
    "SKIP",
    "SUCCESS_MESSAGE",
    "WAIT_MESSAGE",
    "Explanation",
    "ExplanationRecorder",
    "Recorder",
    "plugin_statuses",
    "recorder_for",
]

PASSED = "passed"
"""A Filter plugin passed the node (the simulator's ``PassedFilterMessage``)."""

SUCCESS_MESSAGE = "success"
"""A PreFilter/PreScore/Reserve plugin succeeded (the simulator's ``SuccessMessage``)."""

SKIP = "skip"
"""A PreFilter/PreScore plugin returned Skip: its Filter/Score did not run."""

WAIT_MESSAGE = "wait"
"""A Permit plugin asked the pod to wait (the simulator's ``WaitMessage``)."""

POST_FILTER_NOMINATED = "preemption victim"
"""``postfilter-result`` of the node a PostFilter plugin nominated (the simulator's
``PostFilterNominatedMessage``)."""

KSS_RESULT_KEYS: tuple[str, ...] = tuple(
    ANNOTATION_PREFIX + k
    for k in (
        "prefilter-result-status",
        "prefilter-result",
        "filter-result",
        "postfilter-result",
        "prescore-result",
        "score-result",
        "finalscore-result",
        "reserve-result",
        "permit-result",
        "permit-result-timeout",
        "prebind-result",
        "bind-result",
        "selected-node",
    )
)
"""The annotation keys kube-scheduler-simulator writes for one attempt (its
``simulator/scheduler/plugin/annotation`` constants and ``resultstore.AddStoredResultToPod``),
in the order it adds them."""


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
        post_filter: plugin -> the status each PostFilter plugin that ran returned when no
            node fitted (``postfilter-result``: ``"success"`` or its message), in run order;
            empty when a node fitted.
        pre_score: plugin -> status (``prescore-result``); empty when scoring did not run
            (one feasible node, or none).
        score: node -> plugin -> raw score (``score-result``).
        final_score: node -> plugin -> normalized score times weight (``finalscore-result``).
        reserve: plugin -> status (``reserve-result``).
        permit: plugin -> ``"success"``, ``"wait"`` or the rejection (``permit-result``).
        permit_timeout: plugin -> how long it asked to wait, as Go writes a duration
            (``permit-result-timeout``; ``"0s"`` for a plugin that did not ask).
        pre_bind: plugin -> status (``prebind-result``).
        bind: plugin -> status (``bind-result``): the plugins that skipped and the one
            that bound (or failed).
        nominated_node: the node a PostFilter plugin nominated ("" when none did).
        pre_filter_narrowing: the PreFilter plugins whose PreFilterResult narrowed the nodes.
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
    permit: dict[str, str] = attrs.field(factory=dict)
    permit_timeout: dict[str, str] = attrs.field(factory=dict)
    pre_bind: dict[str, str] = attrs.field(factory=dict)
    bind: dict[str, str] = attrs.field(factory=dict)
    pre_filter_narrowing: tuple[str, ...] = ()
    nominated_node: str = ""
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

    def record_permit(
        self, plugins: Sequence[str], status: Status, timeouts: Mapping[str, float]
    ) -> None:
        """Fill ``permit`` and ``permit_timeout`` from RunPermitPlugins' outcome: plugins
        before a rejection allowed (or waited, those in ``timeouts``, seconds), the
        rejecting one gives its message, the ones after it did not run."""
        for name in plugins:
            if status.plugin == name and not status.is_success and status.code is not Code.Wait:
                self.permit[name] = status.message
                self.permit_timeout[name] = go_duration(0)
                break
            waited = name in timeouts
            self.permit[name] = WAIT_MESSAGE if waited else SUCCESS_MESSAGE
            self.permit_timeout[name] = go_duration(timeouts.get(name, 0.0))

    def record_bind(
        self,
        pre_bind: Sequence[str],
        skipped: set[str] | frozenset[str],
        bind: Sequence[str],
        status: Status,
        binding: bool,
    ) -> None:
        """Fill ``pre_bind`` and ``bind`` from the binding cycle: ``status`` is PreBind's
        failure when ``binding`` is False, else Bind's outcome (its ``plugin`` the binder
        that answered; the plugins before it skipped)."""
        failed = None if status.is_success else status
        self.pre_bind = plugin_statuses(pre_bind, skipped, None if binding else failed)
        if not binding:
            return
        for name in bind:
            if name == status.plugin:
                self.bind[name] = SUCCESS_MESSAGE if status.is_success else status.message
                break
            self.bind[name] = SKIP

    def kss_annotations(self) -> dict[str, str]:
        """The attempt as kube-scheduler-simulator's result annotations (key -> JSON text),
        every key of `KSS_RESULT_KEYS`, in its shapes: plugin -> status for the per-plugin
        points, node -> plugin -> result for Filter and PostFilter, node -> plugin -> score
        as a decimal string for the scores, plugin -> node names for PreFilterResults, the
        node name as plain text for ``selected-node``."""
        pre_filter_result: dict[str, list[str]] = {}
        if self.pre_filter_nodes is not None:
            for name in self.pre_filter_narrowing:
                pre_filter_result[name] = list(self.pre_filter_nodes)
        post_filter: dict[str, dict[str, str]] = {}
        if self.post_filter:
            # AddPostFilterResult: each node PostFilter was given gets an entry; the node
            # nominated names the plugin that nominated it
            post_filter = {node: {} for node in self.filter}
            if self.nominated_node:
                row = post_filter.setdefault(self.nominated_node, {})
                for plugin, result in self.post_filter.items():
                    if result == SUCCESS_MESSAGE:
                        row[plugin] = POST_FILTER_NOMINATED

        def scores(table: Mapping[str, Mapping[str, int]]) -> dict[str, dict[str, str]]:
            return {n: {p: str(v) for p, v in row.items()} for n, row in table.items()}

        values: list[Any] = [
            self.pre_filter,
            pre_filter_result,
            self.filter,
            post_filter,
            self.pre_score,
            scores(self.score),
            scores(self.final_score),
            self.reserve,
            self.permit,
            self.permit_timeout,
            self.pre_bind,
            self.bind,
        ]
        out = {key: go_json(value) for key, value in zip(KSS_RESULT_KEYS, values, strict=False)}
        out[KSS_RESULT_KEYS[-1]] = self.selected_node or ""
        return out

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
                "permit": self.permit,
                "permitTimeout": self.permit_timeout,
                "preBind": self.pre_bind,
                "bind": self.bind,
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


class Recorder:
    """What one scheduling attempt tells ``--explain`` and ``-o kss``, step by step: each
    step of `schedsim.scheduler.schedule_one.Scheduler` calls its method once. This base
    records nothing (`NO_RECORDER`, the hot path: a call that returns); an
    `ExplanationRecorder` fills an `Explanation`. The arguments are what the step has at
    hand; anything derived only for the explanation (plugin orders, node names) is computed
    here, so a step pays nothing for it when no one asks.

    Attributes:
        active: the attempt is explained (steps may then take the slower way that keeps the
            per plugin results, e.g. raw scores per node).
        explanation: the `Explanation` being filled, or None.
    """

    active = False
    explanation: Explanation | None = None

    def nodes(self, num_all: int) -> None:
        """The snapshot's node count."""

    def pre_filter(
        self, framework: Framework, skipped: frozenset[str] | set[str], failed: Status
    ) -> None:
        """PreFilter ran (``failed``: its status, success when it passed)."""

    def nominated_node_chosen(
        self, framework: Framework, skipped: frozenset[str] | set[str], node: str, num_all: int
    ) -> None:
        """``evaluateNominatedNode`` chose ``node``: only it was filtered."""

    def pre_filter_result(
        self, allowed: AbstractSet[str], narrowing: tuple[str, ...], excluded: int
    ) -> None:
        """A PreFilterResult kept ``allowed`` (``narrowing``: the plugins that narrowed)."""

    def filtered(
        self,
        framework: Framework,
        skipped: frozenset[str] | set[str],
        feasible: Sequence[NodeInfo],
        node_to_status: Mapping[str, Status],
        not_evaluated: int,
    ) -> None:
        """The filter walk's outcome (``feasible``: NodeInfos)."""

    def scored(
        self,
        framework: Framework,
        skipped: frozenset[str] | set[str],
        failed: Status | None,
        raw: Mapping[str, Mapping[str, int]] | None,
        scores: Sequence[NodePluginScores],
    ) -> None:
        """PreScore/Score/NormalizeScore ran (``raw``: plugin -> node -> raw score)."""

    def reserved(self, framework: Framework, rejected: FitError | None) -> None:
        """Reserve ran (``rejected``: its FitError, None when it passed)."""

    def permitted(self, framework: Framework, pod_uid: str, status: Status) -> None:
        """Permit ran."""

    def bound(
        self,
        framework: Framework,
        skipped: frozenset[str] | set[str],
        status: Status,
        binding: bool,
    ) -> None:
        """PreBind ran, and Bind when ``binding``."""

    def post_filtered(self, statuses: Mapping[str, Status]) -> None:
        """PostFilter ran: plugin -> the status each plugin that ran returned."""

    def nominated(self, node: str) -> None:
        """PostFilter nominated the pod to ``node`` ("" when it cleared the nomination)."""

    def selected(self, node: str) -> None:
        """The pod was bound to ``node``."""


NO_RECORDER = Recorder()
"""The recorder of attempts no one asked to explain."""


class ExplanationRecorder(Recorder):
    """A `Recorder` that fills `explanation` (a new `Explanation` unless one is given)."""

    active = True

    def __init__(self, explanation: Explanation | None = None) -> None:
        self.explanation: Explanation = Explanation() if explanation is None else explanation

    def nodes(self, num_all: int) -> None:
        self.explanation.num_all_nodes = num_all

    def pre_filter(
        self, framework: Framework, skipped: frozenset[str] | set[str], failed: Status
    ) -> None:
        self.explanation.pre_filter = plugin_statuses(
            framework.order()["PreFilter"], skipped, None if failed.is_success else failed
        )

    def nominated_node_chosen(
        self, framework: Framework, skipped: frozenset[str] | set[str], node: str, num_all: int
    ) -> None:
        ex = self.explanation
        # evaluateNominatedNode filtered this one node; the others were not tried
        ex.record_filter(framework.filter_plugin_names, skipped, [node], {})
        ex.not_evaluated_nodes = num_all - 1
        ex.selected_node = node

    def pre_filter_result(
        self, allowed: AbstractSet[str], narrowing: tuple[str, ...], excluded: int
    ) -> None:
        ex = self.explanation
        ex.pre_filter_nodes = sorted(allowed)
        ex.pre_filter_narrowing = narrowing
        ex.excluded_nodes = excluded

    def filtered(
        self,
        framework: Framework,
        skipped: frozenset[str] | set[str],
        feasible: Sequence[NodeInfo],
        node_to_status: Mapping[str, Status],
        not_evaluated: int,
    ) -> None:
        names = [ni.node.name for ni in feasible if ni.node is not None]
        self.explanation.record_filter(
            framework.filter_plugin_names, skipped, names, node_to_status
        )
        self.explanation.not_evaluated_nodes = not_evaluated

    def scored(
        self,
        framework: Framework,
        skipped: frozenset[str] | set[str],
        failed: Status | None,
        raw: Mapping[str, Mapping[str, int]] | None,
        scores: Sequence[NodePluginScores],
    ) -> None:
        ex = self.explanation
        ex.pre_score = plugin_statuses(framework.order().get("PreScore", ()), skipped, failed)
        if raw is not None:
            ex.record_scores(raw, scores)

    def reserved(self, framework: Framework, rejected: FitError | None) -> None:
        plugins = framework.order()["Reserve"]
        if rejected is None:
            self.explanation.reserve = dict.fromkeys(plugins, SUCCESS_MESSAGE)
            return
        failed: Status | None = next(iter(rejected.diagnosis.node_to_status.values()), None)
        self.explanation.reserve = plugin_statuses(plugins, set(), failed)

    def permitted(self, framework: Framework, pod_uid: str, status: Status) -> None:
        waiting = framework.handle.waiting_pods.get(pod_uid)
        timeouts = waiting.timeouts if waiting is not None and status.code is Code.Wait else {}
        self.explanation.record_permit(framework.order()["Permit"], status, timeouts)

    def bound(
        self,
        framework: Framework,
        skipped: frozenset[str] | set[str],
        status: Status,
        binding: bool,
    ) -> None:
        order = framework.order()
        self.explanation.record_bind(order["PreBind"], skipped, order["Bind"], status, binding)

    def post_filtered(self, statuses: Mapping[str, Status]) -> None:
        self.explanation.post_filter = {
            name: SUCCESS_MESSAGE if st.is_success else st.message for name, st in statuses.items()
        }

    def nominated(self, node: str) -> None:
        self.explanation.nominated_node = node

    def selected(self, node: str) -> None:
        self.explanation.selected_node = node


def recorder_for(explanation: Explanation | None) -> Recorder:
    """`NO_RECORDER`, or an `ExplanationRecorder` filling ``explanation``."""
    return NO_RECORDER if explanation is None else ExplanationRecorder(explanation)
