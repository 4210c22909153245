"""Cluster Autoscaler's drainability rules and remaining-PodDisruptionBudget tracker
(`schedsim.autoscaler.drain`).

Each test names the CA test (kubernetes/autoscaler ``cluster-autoscaler/...`` at branch
``cluster-autoscaler-release-1.34``, the CA schedsim emulates) whose cases it mirrors; the
expected outcomes are that test's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import attrs
import pytest

from schedsim.api.core import Node, Pod
from schedsim.api.policy import PodDisruptionBudget
from schedsim.autoscaler.drain import (
    DEFAULT_RULES,
    SAFE_TO_EVICT_ANNOTATION,
    SAFE_TO_EVICT_LOCAL_VOLUMES_ANNOTATION,
    BlockingPodReason,
    DrainContext,
    DrainOutcome,
    RemainingPdbTracker,
    drainable,
    get_pods_to_move,
    remaining_pdb_tracker,
)
from schedsim.snapshot.infos import NodeInfo, PodInfo


def pod(
    name: str,
    namespace: str = "default",
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    kind: str | None = "ReplicaSet",
    created: datetime | None = None,
    volumes: Sequence[Mapping[str, Any]] = (),
    phase: str = "Running",
    restart_policy: str = "",
) -> Pod:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": namespace,
        "labels": dict(labels or {}),
        "annotations": dict(annotations or {}),
    }
    if kind is not None:
        meta["ownerReferences"] = [
            {"apiVersion": "apps/v1", "kind": kind, "name": "c", "uid": f"{kind}-c",
             "controller": True}
        ]  # fmt: skip
    if created is not None:
        meta["creationTimestamp"] = created.strftime("%Y-%m-%dT%H:%M:%SZ")
    return Pod.from_manifest(
        {
            "metadata": meta,
            "spec": {"nodeName": "node", "volumes": list(volumes),
                     "containers": [{"name": "c"}],
                     **({"restartPolicy": restart_policy} if restart_policy else {})},
            "status": {"phase": phase},
        }
    )  # fmt: skip


def pdb(
    namespace: str,
    match_labels: Mapping[str, str] | None,
    allowed: int = 0,
    name: str = "pdb",
) -> PodDisruptionBudget:
    spec: dict[str, Any] = {"minAvailable": 1}
    if match_labels is not None:
        spec["selector"] = {"matchLabels": dict(match_labels)}
    return PodDisruptionBudget.from_manifest(
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": namespace},
            "spec": spec,
            "status": {"disruptionsAllowed": allowed},
        }
    )


def rule(name: str) -> Any:
    return next(r for r in DEFAULT_RULES if r.name == name)


# -- the pdb rule -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("budgets", "blocked"),
    [
        pytest.param([], False, id="no pdbs"),
        pytest.param(
            [pdb("bad", {"label": "true"}), pdb("good", {"label": "false"})],
            False,
            id="no matching pdbs",
        ),
        pytest.param(
            [
                pdb("bad", {"label": "true"}),
                pdb("good", {"label": "true"}),
                pdb("good", {"label": "false"}),
            ],
            True,
            id="pdb prevents scale-down",
        ),
    ],
)
def test_pdb_rule(budgets: list[PodDisruptionBudget], blocked: bool) -> None:
    """CA ``simulator/drainability/rules/pdb/rule_test.go`` ``TestDrainable``: the budgets
    have no status there, so they allow 0 disruptions; a matching one (same namespace,
    selector matching) blocks with ``NotEnoughPdb``, others leave the pod undefined."""
    p = pod("sad" if blocked else "happy", namespace="good", labels={"label": "true"})
    got = rule("PDB").drainable(DrainContext(RemainingPdbTracker(budgets)), p)
    if blocked:
        assert got.outcome is DrainOutcome.BLOCK_DRAIN
        assert got.reason is BlockingPodReason.NOT_ENOUGH_PDB
        assert got.message == "not enough pod disruption budget to move good/sad"
    else:
        assert got.outcome is DrainOutcome.UNDEFINED


# -- the system rule ----------------------------------------------------------------------

TEST_TIME = datetime(2020, 12, 18, 17, 0, 0, tzinfo=UTC)
BSP_TIMEOUT = timedelta(minutes=1)
RC_POD = pod("bar", kind="ReplicationController")
KUBE_SYSTEM_RC_POD = pod(
    "bar", namespace="kube-system", labels={"k8s-app": "bar"}, kind="ReplicationController"
)
EMPTY_PDB = pdb("default", None)  # a nil selector: matches nothing
KUBE_SYSTEM_PDB = pdb("kube-system", {"k8s-app": "bar"})
KUBE_SYSTEM_FAKE_PDB = pdb("kube-system", {"k8s-app": "foo"})
DEFAULT_NAMESPACE_PDB = pdb("default", {"k8s-app": "PDB-managed-pod"})  # CA: "PDB-managed pod"


@pytest.mark.parametrize(
    ("p", "budgets", "blocked"),
    [
        pytest.param(RC_POD, [EMPTY_PDB], False, id="empty PDB with RC-managed pod"),
        pytest.param(KUBE_SYSTEM_RC_POD, [KUBE_SYSTEM_PDB], False,
                     id="kube-system PDB with matching kube-system pod"),
        pytest.param(KUBE_SYSTEM_RC_POD, [KUBE_SYSTEM_FAKE_PDB], True,
                     id="kube-system PDB with non-matching kube-system pod"),
        pytest.param(RC_POD, [KUBE_SYSTEM_PDB], False,
                     id="kube-system PDB with default namespace pod"),
        pytest.param(KUBE_SYSTEM_RC_POD, [DEFAULT_NAMESPACE_PDB], True,
                     id="default namespace PDB with matching labels kube-system pod"),
        pytest.param(
            pod("systemPod", namespace="kube-system",
                created=TEST_TIME - BSP_TIMEOUT + timedelta(seconds=1)),
            [EMPTY_PDB], True,
            id="block non-pdb system pod existing for less than BspDisruptionTimeout"),
        pytest.param(
            pod("systemPod", namespace="kube-system",
                created=TEST_TIME - BSP_TIMEOUT - timedelta(seconds=1)),
            [KUBE_SYSTEM_PDB], False,
            id="allow non-pdb system pod existing for more than BspDisruptionTimeout"),
    ],
)  # fmt: skip
def test_system_rule(p: Pod, budgets: list[PodDisruptionBudget], blocked: bool) -> None:
    """CA ``simulator/drainability/rules/system/rule_test.go`` ``TestDrainable`` (drain time
    2020-12-18T17:00:00Z, timeout 1 minute): a kube-system pod blocks with
    ``UnmovableKubeSystemPod`` unless a budget of its namespace matches it or it was created
    more than the timeout before the drain time."""
    ctx = DrainContext(RemainingPdbTracker(budgets), TEST_TIME, BSP_TIMEOUT)
    got = rule("System").drainable(ctx, p)
    if blocked:
        assert got.outcome is DrainOutcome.BLOCK_DRAIN
        assert got.reason is BlockingPodReason.UNMOVABLE_KUBE_SYSTEM_POD
        assert got.message == (
            f"non-daemonset, non-mirrored, non-pdb-assigned kube-system pod present: {p.name}"
        )
    else:
        assert got.outcome is not DrainOutcome.BLOCK_DRAIN


def test_system_rule_without_drain_time_never_times_out() -> None:
    """schedsim's choice (module docstring): with no drain time given, an old kube-system pod
    without a budget still blocks (CA compares with its loop's clock)."""
    old = pod("systemPod", namespace="kube-system", created=TEST_TIME - timedelta(days=365))
    got = rule("System").drainable(DrainContext(), old)
    assert got.reason is BlockingPodReason.UNMOVABLE_KUBE_SYSTEM_POD


# -- the remaining-PDB tracker ------------------------------------------------------------


def labelled(n1: int, n2: int, both: int) -> list[Pod]:
    """CA basic_test.go's pods: ``n1`` pods labelled label-1 (the first ``both`` also
    label-2), then ``n2 - both`` labelled label-2, all in namespace ns."""
    pods = [
        pod(f"p1-{i}", "ns", {"label-1": "true", **({"label-2": "true"} if i < both else {})})
        for i in range(n1)
    ]
    return pods + [pod(f"p2-{i}", "ns", {"label-2": "true"}) for i in range(n2 - both)]


def budgets(d1: int, d2: int) -> list[PodDisruptionBudget]:
    return [pdb("ns", {"label-1": "true"}, d1, "foo"), pdb("ns", {"label-2": "true"}, d2, "bar")]


@pytest.mark.parametrize(
    ("n1", "n2", "both", "pdbs", "can", "parallel"),
    [
        pytest.param(2, 1, 0, [], True, True, id="No pdbs"),
        pytest.param(2, 1, 0, budgets(1, 0), False, False,
                     id="Not enough pod disruption budgets"),
        pytest.param(2, 1, 0, budgets(1, 2), True, False,
                     id="Pod disruption budgets is at risk"),
        pytest.param(2, 3, 0, budgets(2, 4), True, True, id="Enough pod disruption budgets"),
        pytest.param(1, 1, 1, budgets(1, 1), True, True,
                     id="Pod covered with both PDBs can be moved"),
        pytest.param(2, 2, 1, budgets(2, 1), True, False,
                     id="Pod covered with both PDBs, is risky"),
    ],
)  # fmt: skip
def test_tracker_can_remove_pods(
    n1: int, n2: int, both: int, pdbs: list[PodDisruptionBudget], can: bool, parallel: bool
) -> None:
    """CA ``core/scaledown/pdb/basic_test.go`` ``TestBasicCanRemovePods``."""
    got_can, got_parallel, blocking = RemainingPdbTracker(pdbs).can_remove_pods(
        labelled(n1, n2, both)
    )
    assert (got_can, got_parallel) == (can, parallel)
    assert (blocking is None) == parallel
    if blocking is not None:
        assert blocking.reason is BlockingPodReason.NOT_ENOUGH_PDB


@pytest.mark.parametrize(
    ("pdbs", "after"),
    [
        pytest.param(budgets(1, 1), {"ns/foo": 0, "ns/bar": 0}, id="Pod covered with both PDBs"),
        pytest.param([], {}, id="No PDBs"),
    ],
)
def test_tracker_remove_pods(pdbs: list[PodDisruptionBudget], after: dict[str, int]) -> None:
    """CA ``core/scaledown/pdb/basic_test.go`` ``TestBasicRemovePods``: one pod labelled
    both, so each budget loses exactly one disruption; the budgets given are not changed."""
    tracker = RemainingPdbTracker(pdbs)
    tracker.remove_pods(labelled(1, 1, 1))
    assert {b.key: tracker.remaining(b.key) for b in pdbs} == after
    assert [b.disruptions_allowed for b in pdbs] == [1, 1][: len(pdbs)]


def test_tracker_matching_pdbs_show_what_is_left_and_go_below_zero() -> None:
    """CA ``MatchingPdbs`` returns the tracker's copies, whose status ``RemovePods``
    decremented (it does not stop at zero); an empty selector matches every pod of the
    namespace, a missing one none (``metav1.LabelSelectorAsSelector``)."""
    everyone = pdb("ns", {}, 1, "all")
    nobody = pdb("ns", None, 5, "none")
    tracker = RemainingPdbTracker([everyone, nobody])
    p = pod("x", "ns", {"app": "x"})
    tracker.remove_pods([p, pod("y", "ns")])
    assert [(b.key, b.disruptions_allowed) for b in tracker.matching_pdbs(p)] == [("ns/all", -1)]
    assert tracker.remaining("ns/none") == 5
    assert tracker.matching_pdbs(pod("z", "other")) == ()


def test_tracker_requires_resolved_budgets() -> None:
    """A budget without ``disruptions_allowed`` is an error, not a silent 0;
    `remaining_pdb_tracker` resolves it from the pods as DefaultPreemption's budgets are
    (the disruption controller's count: healthy 2 - minAvailable 1)."""
    raw = PodDisruptionBudget.from_manifest(
        {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
         "metadata": {"name": "web", "namespace": "ns"},
         "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}}
    )  # fmt: skip
    with pytest.raises(ValueError, match="PodDisruptionBudget ns/web: disruptions_allowed"):
        RemainingPdbTracker([raw])
    web = [pod(f"web-{i}", "ns", {"app": "web"}) for i in range(2)]
    assert remaining_pdb_tracker([raw], web).remaining("ns/web") == 1


# -- the rules together, in CA's order ----------------------------------------------------


def test_rule_order_safe_to_evict_before_pdb_and_system() -> None:
    """CA ``rules.Default()``: SafeToEvict is an interrupting check, before the System and
    PDB rules, so ``safe-to-evict: "true"`` moves a pod whose budget is used up, and a
    kube-system pod without a budget; the PDB rule then blocks a pod whose only fault is its
    budget (after System: a budget covering a kube-system pod lets System pass)."""
    zero = RemainingPdbTracker([pdb("kube-system", {"app": "dns"}, 0)])
    ctx = DrainContext(zero)
    safe = {SAFE_TO_EVICT_ANNOTATION: "true"}
    dns = pod("dns", "kube-system", {"app": "dns"})
    assert drainable(ctx, pod("dns", "kube-system", {"app": "dns"}, safe)).outcome is (
        DrainOutcome.DRAIN_OK
    )
    assert drainable(ctx, pod("other", "kube-system", annotations=safe)).outcome is (
        DrainOutcome.DRAIN_OK
    )
    assert drainable(ctx, dns).reason is BlockingPodReason.NOT_ENOUGH_PDB
    assert drainable(ctx, pod("other", "kube-system")).reason is (
        BlockingPodReason.UNMOVABLE_KUBE_SYSTEM_POD
    )


def test_rule_order_blocking_checks() -> None:
    """CA ``rules.Default()``'s blocking checks run Replicated, System, NotSafeToEvict,
    LocalStorage, PDB: a bare pod annotated ``safe-to-evict: "false"`` is NotReplicated;
    a kube-system pod with local storage is UnmovableKubeSystemPod."""
    ctx = DrainContext()
    bare = pod("bare", kind=None, annotations={SAFE_TO_EVICT_ANNOTATION: "false"})
    assert drainable(ctx, bare).reason is BlockingPodReason.NOT_REPLICATED
    local = pod("sys", "kube-system", volumes=[{"name": "v", "hostPath": {"path": "/x"}}])
    assert drainable(ctx, local).reason is BlockingPodReason.UNMOVABLE_KUBE_SYSTEM_POD
    pinned = pod("pinned", annotations={SAFE_TO_EVICT_ANNOTATION: "false"},
                 volumes=[{"name": "v", "emptyDir": {}}])  # fmt: skip
    assert drainable(ctx, pinned).reason is BlockingPodReason.NOT_SAFE_TO_EVICT_ANNOTATION


def test_default_rules_are_release_1_34s() -> None:
    """CA release-1.34 ``simulator/drainability/rules/rules.go`` ``Default()``: Mirror,
    LongTerminating, (ReplicaCount, not modelled) DaemonSet, SafeToEvict, Terminal,
    Replicated, System, NotSafeToEvict, LocalStorage, PDB; there is no OnCompletion rule
    (added in release-1.37) and no WaitForCompletion outcome (``drainability/status.go``)."""
    assert [r.name for r in DEFAULT_RULES] == [
        "Mirror", "LongTerminating", "DaemonSet", "SafeToEvict", "Terminal",
        "Replicated", "System", "NotSafeToEvict", "LocalStorage", "PDB",
    ]  # fmt: skip
    assert {o.value for o in DrainOutcome} == {"Undefined", "DrainOk", "BlockDrain", "SkipDrain"}


@pytest.mark.parametrize(
    ("kind", "outcome", "reason"),
    [
        pytest.param(None, DrainOutcome.BLOCK_DRAIN, BlockingPodReason.NOT_REPLICATED,
                     id="bare pod: NotReplicated"),
        pytest.param("Job", DrainOutcome.UNDEFINED, None, id="Job pod: moved"),
    ],
)  # fmt: skip
def test_safe_to_evict_on_completion_is_not_special_in_1_34(
    kind: str | None, outcome: DrainOutcome, reason: BlockingPodReason | None
) -> None:
    """CA release-1.34 ``utils/drain/drain.go``: ``HasSafeToEvictAnnotation`` is ``== "true"``
    and ``HasNotSafeToEvictAnnotation`` ``== "false"``, so ``safe-to-evict: "on-completion"``
    decides nothing: the Replicated rule (``replicated/rule_test.go``) blocks a bare pod and a
    Job pod moves like any other."""
    p = pod("p", kind=kind, annotations={SAFE_TO_EVICT_ANNOTATION: "on-completion"})
    got = drainable(DrainContext(), p)
    assert (got.outcome, got.reason) == (outcome, reason)


@pytest.mark.parametrize(
    ("volumes", "annotation", "blocked"),
    [
        pytest.param([{"name": "scratch", "emptyDir": {}}], "", True, id="emptyDir"),
        pytest.param([{"name": "m", "emptyDir": {"medium": "Memory"}}], "", False,
                     id="memory emptyDir"),
        pytest.param([{"name": "scratch", "emptyDir": {}}], "scratch", False,
                     id="named in safe-to-evict-local-volumes"),
        pytest.param([{"name": "a", "emptyDir": {}}, {"name": "b", "hostPath": {"path": "/"}}],
                     "a", True, id="one of two named"),
        pytest.param([{"name": "a", "emptyDir": {}}, {"name": "b", "hostPath": {"path": "/"}}],
                     "a,b", False, id="both named"),
    ],
)  # fmt: skip
def test_local_storage_rule(volumes: list[dict[str, Any]], annotation: str, blocked: bool) -> None:
    """CA ``simulator/drainability/rules/localstorage/rule_test.go``: hostPath and
    non-memory emptyDir volumes block unless named in
    ``cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes`` (``drain.go``
    ``HasBlockingLocalStorage``)."""
    ann = {SAFE_TO_EVICT_LOCAL_VOLUMES_ANNOTATION: annotation} if annotation else {}
    got = rule("LocalStorage").drainable(DrainContext(), pod("p", annotations=ann, volumes=volumes))
    assert (got.reason is BlockingPodReason.LOCAL_STORAGE_REQUESTED) == blocked


def test_get_pods_to_move_sorts_pods() -> None:
    """CA release-1.34 ``simulator/drain_test.go`` ``TestGetPodsToMove``: DaemonSet pods go
    with the node, mirror pods are skipped ("Manifest pod"), terminal pods without a
    controller are drain ok and listed with the pods ("failed pod", "pod in terminal state"),
    the rest move; it stops at the first blocking pod."""
    node = Node.from_manifest({"metadata": {"name": "node"}, "status": {"allocatable": {}}})
    pods = [
        pod("ds", kind="DaemonSet"),
        pod("mirror", kind=None, annotations={"kubernetes.io/config.mirror": "x"}),
        pod("done", kind=None, phase="Succeeded", restart_policy="OnFailure"),
        pod("failed", kind=None, phase="Failed", restart_policy="Never"),
        pod("web"),
    ]
    info = get_pods_to_move(NodeInfo(node, pods=[PodInfo(p) for p in pods]))
    assert [p.name for p in info.pods] == ["done", "failed", "web"]
    assert [p.name for p in info.daemonset_pods] == ["ds"]
    assert info.blocking is None
    blocked = NodeInfo(node, pods=[PodInfo(p) for p in [pod("a"), pod("b", kind=None), pod("c")]])
    info = get_pods_to_move(blocked)
    assert info.pods == ()  # CA returns no pods with the blocking pod
    assert info.blocking is not None
    assert (info.blocking.pod.name, info.blocking.reason) == ("b", BlockingPodReason.NOT_REPLICATED)


@pytest.mark.parametrize(
    ("kind", "blocked"),
    [
        pytest.param("ReplicationController", False, id="RC-managed pod"),
        pytest.param("Job", False, id="Job-managed pod"),
        pytest.param("StatefulSet", False, id="SS-managed pod"),
        pytest.param("ReplicaSet", False, id="RS-managed pod"),
        pytest.param(None, True, id="naked pod"),
        pytest.param("FooController", True, id="custom-controller managed pod"),
    ],
)
def test_replicated_rule(kind: str | None, blocked: bool) -> None:
    """CA ``simulator/drainability/rules/replicated/rule_test.go`` ``TestDrainable`` with
    ``skipNodesWithCustomControllerPods`` true (CA's default): pods of the four replicated
    kinds are left undefined, a naked pod and a custom controller's pod are NotReplicated."""
    got = rule("Replicated").drainable(DrainContext(), pod("p", kind=kind))
    if blocked:
        assert got.reason is BlockingPodReason.NOT_REPLICATED
        assert got.message == "default/p is not replicated"
    else:
        assert got.outcome is DrainOutcome.UNDEFINED


def test_system_rule_timeout_with_naive_times() -> None:
    """A time without a zone (as a YAML loader may give) is UTC, as metav1.Time: comparing
    it with a zoned drain time works (CA ``isBspPassedDisruptionTimeout``; default timeout
    1h)."""
    p = pod("systemPod", namespace="kube-system")
    old = attrs.evolve(p, creation_timestamp=datetime(2020, 12, 18, 15, 0))  # naive, 2h before
    ctx = DrainContext(RemainingPdbTracker(), TEST_TIME)
    assert rule("System").drainable(ctx, old).outcome is DrainOutcome.DRAIN_OK
    ctx = DrainContext(RemainingPdbTracker(), TEST_TIME.replace(tzinfo=None))
    young = attrs.evolve(p, creation_timestamp=TEST_TIME - timedelta(minutes=30))
    assert rule("System").drainable(ctx, young).outcome is DrainOutcome.BLOCK_DRAIN


# -- the healthy count of a budget without status -----------------------------------------


def _pod_with_ready(name: str, ready: str | None) -> Pod:
    status: dict[str, Any] = {"phase": "Running"}
    if ready is not None:
        status["conditions"] = [{"type": "PodScheduled", "status": "True"},
                                {"type": "Ready", "status": ready}]  # fmt: skip
    return Pod.from_manifest(
        {
            "metadata": {"name": name, "labels": {"app": "web"}},
            "spec": {"nodeName": "node", "containers": [{"name": "c"}]},
            "status": status,
        }
    )


@pytest.mark.parametrize(
    ("ready", "healthy"),
    [
        pytest.param("True", 3, id="Ready True: healthy"),
        pytest.param("False", 2, id="Ready False: not healthy"),
        pytest.param("Unknown", 2, id="Ready Unknown: not healthy"),
        pytest.param(None, 3, id="no Ready condition: assumed ready"),
    ],
)
def test_unready_pods_are_not_healthy(ready: str | None, healthy: int) -> None:
    """Kubernetes ``pkg/controller/disruption/disruption.go`` ``countHealthyPods``: a pod
    counts when it is not being deleted and ``IsPodReady`` (its ``Ready`` condition is
    "True"); schedsim takes a pod with no ``Ready`` condition (no status) as ready. Three
    matching pods, one with the given Ready status, ``minAvailable: 2``: allowed = healthy -
    2."""
    pods = [_pod_with_ready("a", "True"), _pod_with_ready("b", None), _pod_with_ready("c", ready)]
    assert [p.ready for p in pods] == [True, True, ready in (None, "True")]
    budget = PodDisruptionBudget.from_manifest(
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}},
        }
    ).resolve_disruptions_allowed(pods)
    assert (budget.current_healthy, budget.expected_pods) == (healthy, 3)
    assert budget.disruptions_allowed == healthy - 2
