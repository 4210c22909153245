"""Runner for the ``ca-drain-*`` cases: the Cluster Autoscaler's drainability rules and
``GetPodsToMove`` (CA ``simulator/drainability/rules/*/rule_test.go``,
``simulator/drain_test.go``; format in tests/cases/upstream/README.md, "Cluster Autoscaler
drain cases").

``check.component: Drainability`` asks one rule (``check.rule``, by CA's name) for its verdict
on ``check.pod``; ``GetPodsToMove`` sorts the pods of one node (``check.pods``, in order) by
the default rules. Both read the case's PodDisruptionBudgets through a
`schedsim.autoscaler.drain.RemainingPdbTracker`, the drain time ``check.now`` and
``check.bspDisruptionTimeoutSeconds``; ``check.deleteOptions`` sets CA's node-delete flags
(`schedsim.autoscaler.drain.default_rules`). Objects are decoded without the API server's
rules (api_rules=False), as CA's tests build objects in Go: upstream's pod names
(``unreplicatedPod``) and container-less pods load as written.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from schedsim.api.core import Node
from schedsim.api.loading.loader import decode_objects
from schedsim.api.meta import parse_timestamp
from schedsim.autoscaler.drain import (
    DEFAULT_BSP_DISRUPTION_TIMEOUT,
    DrainContext,
    DrainOutcome,
    default_rules,
    drainable,
    get_pods_to_move,
    remaining_pdb_tracker,
)
from schedsim.snapshot import NodeInfo, PodInfo

# check.deleteOptions (CA options.NodeDeleteOptions field names) -> default_rules keyword
_FLAGS = {
    "skipNodesWithSystemPods": "skip_nodes_with_system_pods",
    "skipNodesWithLocalStorage": "skip_nodes_with_local_storage",
    "skipNodesWithCustomControllerPods": "skip_nodes_with_custom_controller_pods",
}


def expected_failure(case: dict[str, Any]) -> str | None:
    """Why this case is expected to fail (None: it must pass)."""
    del case
    return None


def run(case: dict[str, Any], source: str) -> None:
    """Run one drain case and compare every field ``expect`` gives."""
    check, expect = case["check"], case["expect"]
    m = decode_objects(case["objects"], source, api_rules=False)
    pods = {p.key: p for p in m.pods}
    timeout = check.get("bspDisruptionTimeoutSeconds")
    ctx = DrainContext(
        remaining_pdb_tracker(m.pod_disruption_budgets, m.pods),
        parse_timestamp(check.get("now"), "check.now"),
        DEFAULT_BSP_DISRUPTION_TIMEOUT if timeout is None else timedelta(seconds=timeout),
    )
    flags = {_FLAGS[k]: v for k, v in (check.get("deleteOptions") or {}).items()}
    rules = default_rules(**flags)
    if check["component"] == "Drainability":
        rule = [r for r in rules if r.name == check["rule"]]
        assert len(rule) == 1, f"{source}: no rule {check['rule']} with these deleteOptions"
        got = drainable(ctx, pods[check["pod"]], rule)
        assert got.outcome.value == expect["outcome"], f"{source}: got {got}"
        want_reason = expect.get("reason")
        got_reason = got.reason.value if got.reason is not None else None
        assert got_reason == want_reason, f"{source}: reason {got_reason}"
        assert (got.outcome is DrainOutcome.BLOCK_DRAIN) == (want_reason is not None)
        return
    assert check["component"] == "GetPodsToMove", check
    node = Node.from_manifest({"metadata": {"name": "node"}, "status": {"allocatable": {}}})
    info = get_pods_to_move(
        NodeInfo(node, pods=[PodInfo(pods[k]) for k in check["pods"]]), ctx, rules
    )
    # upstream compares with assert.ElementsMatch: order does not matter
    assert sorted(p.key for p in info.pods) == sorted(expect.get("pods") or []), (
        f"{source}: pods {[p.key for p in info.pods]}"
    )
    assert sorted(p.key for p in info.daemonset_pods) == sorted(
        expect.get("daemonSetPods") or []
    ), f"{source}: daemonset pods {[p.key for p in info.daemonset_pods]}"
    want = expect.get("blocking")
    got_blocking = (
        None
        if info.blocking is None
        else {"pod": info.blocking.pod.key, "reason": info.blocking.reason.value}
    )
    assert got_blocking == want, f"{source}: blocking {got_blocking}"
