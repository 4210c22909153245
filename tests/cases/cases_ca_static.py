"""Runner for the ``ca-static-*`` cases: the decisions of the Cluster Autoscaler's
``StaticAutoscaler.RunOnce`` loops (CA ``core/static_autoscaler_dra_test.go``
TestStaticAutoscalerDynamicResources and ``core/static_autoscaler_csi_test.go``
TestStaticAutoscalerCSI; format in tests/cases/upstream/README.md, "Cluster Autoscaler
RunOnce cases").

The objects are the cluster (Nodes, bound and pending Pods, DRA and storage objects);
``check.nodeGroups`` is a node-groups file's ``nodeGroups`` (docs/cli.md), each group's
``nodes`` naming its existing nodes. ``check.runOnce`` lists the times (seconds) of the loops
upstream runs, each through the library's entry points, on both stores:

* scale-up (`schedsim.autoscaler.scaleup.scale_up`) over the pending pods, with the nodes
  earlier loops asked for upcoming (template copies in the snapshot, counted in the group's
  size); a chosen group is a scale-up (group -> new nodes), and the loop ends there (CA: no
  scale-down in a loop that scaled up);
* else scale-down (`Engine.scale_down`, ``check.scaleDownUtilizationThreshold``, the groups):
  a removable node is unneeded from the first loop that finds it so and is deleted in the
  loop at least ``check.scaleDownUnneededTime`` seconds later (CA's unneeded time; the rows
  stay under its parallelism limits), once. Loops after a scale-up run no scale-down here:
  the one row with such a loop has nothing to remove (its only node's device is in use).

``expect.scaleUps`` and ``expect.scaleDowns`` (group -> deleted node names) are every loop's
calls to the cloud provider together, as upstream's mocks expect each once.
``expect.noScaleUps`` (``podName``, or ``podNamePrefix`` with ``podCount``: CA's
``PodsRemainUnschedulable``, the pods no group helps) and ``expect.noScaleDowns``
(``nodeName`` and CA's ``UnremovableReason`` name) are read from the last loop.
``expect.podErrors`` names the pending pods whose attempts end in a plugin Error status (a
CEL runtime error), which schedsim reports where CA's plugin runner counts a node that does
not fit (docs/cli.md); absent: none.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from schedsim.api.loading.loader import decode_objects
from schedsim.autoscaler.nodegroups import NodeGroup, group_of_nodes, parse_node_groups
from schedsim.autoscaler.plugin_errors import PodError
from schedsim.autoscaler.sanitize import sanitized_node_info, template_node_info
from schedsim.autoscaler.scaledown import ScaleDownResult
from schedsim.autoscaler.scaleup import ScaleUpResult, scale_up
from schedsim.engine import STORES, Cluster, Engine, EngineConfig


def expected_failure(case: dict[str, Any]) -> str | None:
    """Why this case is expected to fail (None: it must pass)."""
    del case
    return None


def _scale_up(
    engine: Engine, cluster: Cluster, groups: Sequence[NodeGroup], upcoming: Mapping[str, int]
) -> ScaleUpResult:
    """A loop's scale-up, with the nodes earlier loops asked for upcoming: CA adds them to the
    snapshot as template copies before filter-out-schedulable, and counts them in the
    group's target size."""
    snapshot, _ = engine.snapshot(cluster)
    claims = snapshot.dra_snapshot.list_resource_claims()
    grown = []
    for g in groups:
        n = upcoming.get(g.name, 0)
        if n:
            template = template_node_info(g.template, claims, group=g.name)
            for i in range(n):
                name = f"{g.template.node.name}-upcoming-{i}"
                snapshot.add_node_info(sanitized_node_info(template, name, f"upcoming-{i}"))
            g = attrs.evolve(g, current_size=g.size(cluster.nodes) + n)
        grown.append(g)
    return scale_up(snapshot, cluster.pods, grown, daemon_sets=cluster.daemon_sets)


def _error_pods(errors: Sequence[PodError]) -> list[str]:
    return sorted({e.pod.name for e in errors})


def _check_no_scale_ups(got: ScaleUpResult, want: list[dict[str, Any]], where: str) -> None:
    names = [u.pod.name for u in got.unhelped]
    for w in want:
        if "podName" in w:
            assert w["podName"] in names, f"{where}: {w['podName']} not in {names}"
        else:
            n = sum(1 for name in names if name.startswith(w["podNamePrefix"]))
            assert n == w["podCount"], f"{where}: {n} unhelped {w['podNamePrefix']}*: {names}"


def run(case: dict[str, Any], source: str) -> None:
    """Run one RunOnce case on both stores."""
    check, expect = case["check"], case["expect"]
    assert check["component"] == "StaticAutoscaler", check
    cluster = Cluster.from_manifests(decode_objects(case["objects"], source))
    groups = parse_node_groups({"nodeGroups": check["nodeGroups"]}, source)
    group_of = group_of_nodes(groups, cluster.nodes)
    threshold = check["scaleDownUtilizationThreshold"]
    unneeded_time = check["scaleDownUnneededTime"]
    want_errors = expect.get("podErrors", [])
    for store in STORES:
        engine = Engine(EngineConfig(store=store))
        upcoming: dict[str, int] = {}
        unneeded_since: dict[str, float] = {}
        deleted: dict[str, list[str]] = {}
        up: ScaleUpResult | None = None
        down: ScaleDownResult | None = None
        for t in check["runOnce"]:
            up, down = _scale_up(engine, cluster, groups, upcoming), None
            assert _error_pods(up.errors) == want_errors, f"{store} t={t}: {up.errors}"
            assert not up.warnings, f"{store} t={t}: {up.warnings}"
            chosen = up.chosen_option
            if chosen is not None:  # CA: no scale-down in a loop that scaled up
                assert chosen.name not in upcoming, f"{store} t={t}: {chosen.name} again"
                upcoming[chosen.name] = chosen.node_count
                continue
            if upcoming:  # the rows have nothing to remove after a scale-up (docstring)
                continue
            down = engine.scale_down(cluster, threshold=threshold, node_groups=groups)
            assert _error_pods(down.errors) == want_errors, f"{store} t={t}: {down.errors}"
            assert not down.warnings, f"{store} t={t}: {down.warnings}"
            taken = {n for names in deleted.values() for n in names}
            unneeded_since = {n: unneeded_since.get(n, t) for n in down.removable}
            for n, since in unneeded_since.items():
                if n not in taken and t - since >= unneeded_time:
                    deleted.setdefault(group_of[n].name, []).append(n)
        assert upcoming == expect["scaleUps"], f"{store}: scale-ups {upcoming}"
        assert deleted == expect["scaleDowns"], f"{store}: scale-downs {deleted}"
        if "noScaleUps" in expect:
            assert up is not None
            _check_no_scale_ups(up, expect["noScaleUps"], store)
        if "noScaleDowns" in expect:
            assert down is not None, "noScaleDowns: the last loop ran no scale-down"
            reasons = {v.node: v.reason.value if v.reason else None for v in down.verdicts}
            for w in expect["noScaleDowns"]:
                got = reasons.get(w["nodeName"])
                assert got == w["reason"], f"{store}: {w['nodeName']}: {got}"
