"""``schedsim scale-down`` reads PodDisruptionBudgets as Cluster Autoscaler does (its System
and PDB drainability rules, and the planner's remaining-PDB tracker across the candidates
of one pass; see tests/autoscaler/test_drain.py for the rule-level CA tests)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schedsim.cli import main

NODE = """\
apiVersion: v1
kind: Node
metadata: {{name: {name}, labels: {{kubernetes.io/hostname: {name}}}}}
status: {{allocatable: {{cpu: "1", memory: 1Gi, pods: "110"}}}}
---
"""
POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: kube-system
  creationTimestamp: "2026-01-01T10:00:00Z"
  labels: {{k8s-app: kube-dns}}
  ownerReferences: [{{apiVersion: apps/v1, kind: ReplicaSet, name: coredns, uid: rs-1,
                      controller: true}}]
spec:
  nodeName: {node}
  containers: [{{name: c, resources: {{requests: {{cpu: {cpu}}}}}}}]
---
"""
PDB = """\
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {{name: coredns, namespace: kube-system}}
spec:
  maxUnavailable: 1
  selector: {{matchLabels: {{k8s-app: kube-dns}}}}
status: {{disruptionsAllowed: {allowed}}}
"""


def cluster(tmp_path: Path, dns_nodes: list[str], allowed: int | None) -> str:
    """Nodes a and b (dns pods of 100m as listed) and c (a 600m dns pod: busy, never a
    candidate, room for the others); the budget covers every dns pod."""
    text = "".join(NODE.format(name=n) for n in "abc")
    text += "".join(
        POD.format(name=f"coredns-{i}", node=n, cpu="100m") for i, n in enumerate(dns_nodes)
    )
    text += POD.format(name="coredns-busy", node="c", cpu="600m")
    if allowed is not None:
        text += PDB.format(allowed=allowed)
    path = tmp_path / "cluster.yaml"
    path.write_text(text)
    return str(path)


def nodes(
    path: str, capsys: pytest.CaptureFixture[str], *flags: str
) -> dict[str, tuple[bool, str | None, str]]:
    code = main(["scale-down", path, "-o", "json", *flags])
    out, err = capsys.readouterr()
    assert code == 0, err
    return {n["node"]: (n["removable"], n["reason"], n["detail"]) for n in json.loads(out)["nodes"]}


def test_budget_allows_moving_a_kube_system_pod(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """CA System rule (``rules/system/rule_test.go`` "kube-system PDB with matching
    kube-system pod"): a kube-system pod a budget covers is movable, and with a disruption
    left (PDB rule) its node is removable; without the budget it blocks."""
    got = nodes(cluster(tmp_path, ["a"], allowed=1), capsys)
    assert got["a"] == (True, None, "")
    got = nodes(cluster(tmp_path, ["a"], allowed=None), capsys)
    assert got["a"] == (False, "BlockedByPod", "pod kube-system/coredns-0: UnmovableKubeSystemPod")


def test_budget_at_zero_blocks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """CA PDB rule (``rules/pdb/rule_test.go`` "pdb prevents scale-down"): a matching budget
    with ``disruptionsAllowed`` 0 blocks the node, BlockedByPod with NotEnoughPdb."""
    got = nodes(cluster(tmp_path, ["a"], allowed=0), capsys)
    assert got["a"] == (
        False,
        "BlockedByPod",
        "pod kube-system/coredns-0: NotEnoughPdb "
        "(PodDisruptionBudget kube-system/coredns allows 0 more disruption(s))",
    )
    code = main(["scale-down", str(tmp_path / "cluster.yaml")])
    out, _ = capsys.readouterr()
    assert code == 0
    assert "NotEnoughPdb" in out


def test_shared_budget_only_first_node_removable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """CA planner (``categorizeNodes`` then ``RemainingPdbTracker.RemovePods``): two nodes'
    pods share a budget allowing 1 disruption; removing a uses it up, so b is blocked
    (NotEnoughPdb); c is busy (60% cpu)."""
    got = nodes(cluster(tmp_path, ["a", "b"], allowed=1), capsys)
    assert got == {
        "a": (True, None, ""),
        "b": (False, "BlockedByPod", "pod kube-system/coredns-1: NotEnoughPdb "
              "(PodDisruptionBudget kube-system/coredns allows 0 more disruption(s))"),
        "c": (False, "NotUnderutilized", "cpu utilization 0.60 > threshold 0.5"),
    }  # fmt: skip


def test_now_applies_the_blocking_system_pod_timeout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """CA System rule (``rules/system/rule_test.go`` "allow non-pdb system pod existing for
    more than BspDisruptionTimeout", default ``--blocking-system-pod-distruption-timeout``
    1h): the dns pods were created at 10:00; with ``--now`` after 11:00 a pod without a
    budget moves, before 11:00 (or without ``--now``) it blocks. A bad ``--now`` is a usage
    error (exit 2)."""
    path = cluster(tmp_path, ["a"], allowed=None)
    blocked = (False, "BlockedByPod", "pod kube-system/coredns-0: UnmovableKubeSystemPod")
    assert nodes(path, capsys, "--now", "2026-01-01T11:00:01Z")["a"] == (True, None, "")
    assert nodes(path, capsys, "--now", "2026-01-01T10:59:59Z")["a"] == blocked
    assert main(["scale-down", path, "--now", "yesterday"]) == 2
    err = capsys.readouterr().err
    assert "--now: invalid RFC 3339 timestamp 'yesterday'" in err
