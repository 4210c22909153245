"""PreFilter outcomes reused between attempts of one pod (`schedsim.framework.pre_filter_reuse`).

The promise: `Framework.run_pre_filter_plugins_reusing` returns what
`Framework.run_pre_filter_plugins` returns (result, status, narrowing plugins) and leaves the
same CycleState (values and Skip set), at every attempt, while the cluster changes under it;
only outcomes of in-tree plugins that declare them pod-only for the pod are kept. The
expected outcomes are kube-scheduler 1.34's PreFilters: a pod without volumes, claims,
affinity or spread constraints is skipped by every PreFilter but NodeResourcesFit (which
computes its requests), NodeAffinity, NodePorts (host ports given), InterPodAffinity once a
pod with required anti-affinity is bound (upstream counts existing anti-affinity), and
NodeAffinity narrows to the names of a metadata.name term (``getPreFilterResult``).
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs

from schedsim.api.core import Node, Pod
from schedsim.framework import CycleState, Framework, Handle, default_profile
from schedsim.framework.pre_filter_reuse import PreFilterReuse
from schedsim.framework.registry import discover_plugins
from schedsim.framework.status import Code, Status
from schedsim.snapshot import DeltaSnapshotStore, PredicateSnapshot


def _node(name: str) -> Node:
    return Node.from_manifest(
        {
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}},
        }
    )


def _pod(name: str, node: str = "", **spec: Any) -> Pod:
    body: dict[str, Any] = {
        "nodeName": node,
        "containers": [
            {
                "name": "c",
                "resources": {"requests": {"cpu": "100m"}},
                **({"ports": spec.pop("ports")} if "ports" in spec else {}),
            }
        ],
        **spec,
    }
    return Pod.from_manifest({"metadata": {"name": name, "labels": {"app": name}}, "spec": body})


_ANTI = {
    "podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {
                "labelSelector": {"matchLabels": {"app": "web"}},
                "topologyKey": "kubernetes.io/hostname",
            }
        ]
    }
}


def _snapshot() -> PredicateSnapshot:
    snap = PredicateSnapshot(Framework(default_profile(), Handle()), DeltaSnapshotStore())
    snap.set_cluster_state([_node("n1"), _node("n2")], [])
    return snap


def _comparable(value: object) -> object:
    """``value``, or for an object without its own equality its type and attributes."""
    if type(value).__eq__ is not object.__eq__:
        return value
    slots = [a for c in type(value).__mro__ for a in getattr(c, "__slots__", ())]
    attrs_ = {a: getattr(value, a) for a in slots if hasattr(value, a)}
    attrs_.update(getattr(value, "__dict__", {}))
    return type(value).__name__, {k: _comparable(v) for k, v in attrs_.items()}


def _both(snap: PredicateSnapshot, pod: Pod) -> tuple[Any, Any]:
    """(plain run, reusing run) as (result, status, narrowing, state values, Skip set), both
    inside the snapshot's binding as the plugin runner calls them."""
    fw = snap.framework
    nodes = snap.list_node_infos()
    out = []
    with snap._binding:
        for run in (fw.run_pre_filter_plugins, fw.run_pre_filter_plugins_reusing):
            state = CycleState()
            result, status, narrowing = run(state, pod, nodes)
            out.append(
                (
                    result,
                    status,
                    narrowing,
                    {k: _comparable(v) for k, v in state._data.items()},
                    set(state.skip_filter_plugins),
                )
            )
    return out[0], out[1]


def _reuse(snap: PredicateSnapshot) -> PreFilterReuse:
    reuse = snap.framework._pre_filter_reuse
    assert reuse is not None
    return reuse


def test_plain_pod_same_outcome_and_kept_plugins_not_called_again() -> None:
    snap = _snapshot()
    pod = _pod("web", ports=[{"containerPort": 80, "hostPort": 8080}])
    first = _both(snap, pod)
    assert first[0] == first[1]
    _, status, _, _, skipped = first[1]
    assert status.is_success
    # kube-scheduler 1.34: only NodeResourcesFit and NodePorts (a host port) do not Skip
    assert skipped == {
        "NodeAffinity",
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "PodTopologySpread",
        "InterPodAffinity",
        "DynamicResources",
    }
    chain = _reuse(snap).chain_for(pod)
    assert chain is not None
    own = dict(snap.framework._pre_filter)
    # the cluster-reading InterPodAffinity keeps its own function; the other nine are
    # replayed in two groups (the eight before it, DynamicResources after it)
    assert [n for n, fn in chain if fn is own[n]] == ["InterPodAffinity"]
    assert len(chain) == 3
    second = _both(snap, pod)
    assert second[0] == second[1] == first[1]


def test_cluster_change_seen_by_the_plugins_that_read_it() -> None:
    """InterPodAffinity runs at every attempt: once a pod with required anti-affinity
    against the pod's labels is bound, the pod's PreFilter no longer skips it."""
    snap = _snapshot()
    pod = _pod("web")
    before = _both(snap, pod)
    assert "InterPodAffinity" in before[1][4]
    snap.force_add_pod(_pod("guard", "n1", affinity=_ANTI), "n1")
    after = _both(snap, pod)
    assert after[0] == after[1]
    assert "InterPodAffinity" not in after[1][4]
    assert after[1][1].is_success


def test_pod_with_volumes_runs_the_volume_plugins() -> None:
    """A pod with a volume: the volume plugins read claims (and VolumeBinding's Reserve
    fills its state), so they run each time."""
    snap = _snapshot()
    pod = _pod("vol", volumes=[{"name": "scratch", "emptyDir": {}}])
    a = _both(snap, pod)
    assert a[0] == a[1]
    chain = _reuse(snap).chain_for(pod)
    assert chain is not None
    own = dict(snap.framework._pre_filter)
    live = [n for n, fn in chain if fn is own[n]]
    assert {"VolumeRestrictions", "VolumeZone", "VolumeBinding", "InterPodAffinity"} <= set(live)
    assert _both(snap, pod)[1] == a[1]


def test_narrowing_and_failures_are_not_kept() -> None:
    """NodeAffinity's PreFilterResult (metadata.name term) runs each time; a pod whose
    PreFilter fails (no node name matches: UnschedulableAndUnresolvable) keeps nothing."""
    snap = _snapshot()

    def by_name(*names: str) -> dict[str, Any]:
        term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": list(names)}]}
        return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [term]}}}  # fmt: skip

    narrowed = _pod("narrow", affinity=by_name("n2"))
    a = _both(snap, narrowed)
    assert a[0] == a[1]
    assert a[1][0].node_names == frozenset({"n2"}) and a[1][2] == ("NodeAffinity",)
    chain = _reuse(snap).chain_for(narrowed)
    assert chain is not None
    assert dict(chain)["NodeAffinity"] is dict(snap.framework._pre_filter)["NodeAffinity"]
    assert _both(snap, narrowed)[1] == a[1]

    nowhere = _pod("nowhere", affinity=by_name())
    b = _both(snap, nowhere)
    assert b[0] == b[1]
    assert b[1][1].code is Code.UnschedulableAndUnresolvable
    assert _reuse(snap).chain_for(nowhere) is None


class _ThirdParty:
    """Declares itself reusable but is not in-tree: never kept."""

    name: ClassVar[str] = "ThirdParty"

    def __init__(self, args: Any, handle: Any) -> None:
        self.calls = 0

    def pre_filter_reusable(self, pod: Pod) -> bool:
        return True

    def schedsim_pre_filter(self, state: CycleState, pod: Pod, nodes: Any) -> Status:
        self.calls += 1
        return Status(Code.Skip)


def test_third_party_plugin_always_runs() -> None:
    base = default_profile()
    plugins = {**base.plugins, "preFilter": (*base.plugins["preFilter"], "ThirdParty")}
    fw = Framework(
        attrs.evolve(base, plugins=plugins),
        Handle(),
        {**discover_plugins(), "ThirdParty": _ThirdParty},
    )
    pod = _pod("p")
    for _ in range(3):
        _, status, _ = fw.run_pre_filter_plugins_reusing(CycleState(), pod, [])
        assert status.is_success
    assert fw.plugins["ThirdParty"].calls == 3
    reuse = fw._pre_filter_reuse
    assert reuse is not None and reuse.chain_for(pod) is not None  # the in-tree ones kept
