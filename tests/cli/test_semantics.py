"""kube-scheduler behaviours of `schedsim simulate` that a new user checked by hand:
cordoned nodes and DaemonSet-style tolerations, scheduling gates, schedulerName, plugins that
fail, empty clusters, API defaulting (hostNetwork ports, toleration operator) and warnings for
checks schedsim does not emulate yet."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from schedsim.cli import main

NODE_A_CORDONED = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "a"},
    "spec": {
        "unschedulable": True,
        "taints": [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}],
    },
    "status": {"allocatable": {"cpu": "2", "memory": "2Gi", "pods": "10"}},
}
NODE_B = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "b"},
    "status": {"allocatable": {"cpu": "2", "memory": "2Gi", "pods": "10"}},
}
ON_A = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a"]}]}
            ]
        }
    }
}


def _pod(name: str, **spec: Any) -> dict[str, Any]:
    spec.setdefault("containers", [{"name": "c"}])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def _run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], objs: list[dict[str, Any]], *args: str
) -> tuple[int, dict[str, Any], str]:
    f = tmp_path / "in.yaml"
    f.write_text(yaml.safe_dump_all(objs))
    code = main(["simulate", str(f), "-o", "json", *args])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if code == 0 else {}), err


def _by_name(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["name"]: p for p in doc["pods"]}


def test_daemonset_pod_tolerating_cordon_lands_on_the_cordoned_node(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """NodeUnschedulable lets pods tolerating node.kubernetes.io/unschedulable:NoSchedule
    through (DaemonSet pods do); others pinned there get kube-scheduler's FitError, with the
    node left out by NodeAffinity's PreFilterResult counted as "didn't satisfy plugin(s)"."""
    code, doc, _ = _run(
        tmp_path,
        capsys,
        [
            NODE_A_CORDONED,
            NODE_B,
            _pod("ds-a", affinity=ON_A, tolerations=[{"operator": "Exists"}]),
            _pod("plain-a", affinity=ON_A),
        ],
    )
    assert code == 0
    pods = _by_name(doc)
    assert pods["ds-a"]["node"] == "a"
    assert pods["plain-a"]["node"] is None
    assert pods["plain-a"]["message"] == (
        "0/2 nodes are available: 1 node(s) didn't satisfy plugin(s) [NodeAffinity], "
        "1 node(s) were unschedulable. no new claims to deallocate, preemption: 0/2 nodes are "
        "available: 2 Preemption is not "
        "helpful for scheduling."
    )


def test_gated_pod_is_not_scheduled(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """SchedulingGates PreEnqueue: "waiting for scheduling gates: [<names>]"."""
    code, doc, _ = _run(
        tmp_path,
        capsys,
        [NODE_B, _pod("gated", schedulingGates=[{"name": "example.com/a"}, {"name": "b"}])],
    )
    assert code == 0
    assert doc["pods"] == [
        {
            "namespace": "default",
            "name": "gated",
            "node": None,
            "reasons": ["waiting for scheduling gates: [example.com/a b]"],
            "message": "waiting for scheduling gates: [example.com/a b]",
            "allocations": [],
            "attempts": 0,
        }
    ]


def test_pods_for_another_scheduler_are_left_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """kube-scheduler only schedules pods naming one of its profiles' schedulerName."""
    code, doc, err = _run(
        tmp_path, capsys, [NODE_B, _pod("mine"), _pod("theirs", schedulerName="volcano")]
    )
    assert code == 0
    assert [p["name"] for p in doc["pods"]] == ["mine"]
    assert (
        "1 pod(s) (default/theirs) name schedulerName 'volcano', which no profile has "
        "(profiles: 'default-scheduler'); not scheduled"
    ) in err
    assert doc["otherSchedulerPods"] == [
        {"namespace": "default", "name": "theirs", "schedulerName": "volcano"}
    ]


def test_unemulated_checks_are_warned_about(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """InterPodAffinity, DynamicResources and VolumeBinding are emulated, so nothing is
    warned about: the anti-affine pod is placed; a pod whose resource claim does not exist is
    kept out by DynamicResources' PreEnqueue, one whose PVC does not exist by VolumeBinding's
    PreFilter, both with the lister's NotFound text."""
    anti = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"topologyKey": "kubernetes.io/hostname", "labelSelector": {}}
            ]
        }
    }
    code, doc, err = _run(
        tmp_path,
        capsys,
        [
            NODE_B,
            _pod("anti", affinity=anti),
            _pod("vol", volumes=[{"name": "v", "persistentVolumeClaim": {"claimName": "c"}}]),
            _pod("dra", resourceClaims=[{"name": "gpu", "resourceClaimName": "gpu-claim"}]),
        ],
    )
    assert code == 0
    assert "InterPodAffinity" not in err
    assert "VolumeBinding" not in err and "VolumeRestrictions" not in err
    assert "DynamicResources" not in err
    assert next(p for p in doc["pods"] if p["name"] == "anti")["node"] == "b"
    vol = next(p for p in doc["pods"] if p["name"] == "vol")
    assert vol["node"] is None
    assert vol["message"] == (
        # VolumeBinding's PreFilter rejects before DynamicResources' PreFilter runs: its
        # PostFilter's Error "not found" (release-1.34 getStateData) ends the message
        '0/1 nodes are available: persistentvolumeclaim "c" not found. not found'
    )
    dra = next(p for p in doc["pods"] if p["name"] == "dra")
    assert dra["node"] is None
    assert dra["message"] == 'resourceclaim.resource.k8s.io "gpu-claim" not found'


def test_empty_cluster_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """schedulePod with no nodes: ErrNoNodesAvailable "no nodes available to schedule pods"."""
    code, doc, _ = _run(tmp_path, capsys, [_pod("p")])
    assert code == 0
    assert doc["pods"][0]["message"] == "no nodes available to schedule pods"
    assert doc["summary"] == {
        "scheduled": 0,
        "unschedulable": 1,
        "errors": 0,
        "preempted": 0,
        "nodes": 0,
    }


def test_host_network_ports_default_to_container_ports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """API defaulting: with hostNetwork, hostPort defaults to containerPort, so two node
    exporters on :9100 cannot share a node (NodePorts)."""
    exporter = {"name": "c", "ports": [{"containerPort": 9100}]}
    code, doc, _ = _run(
        tmp_path,
        capsys,
        [
            NODE_B,
            _pod("exp-1", hostNetwork=True, containers=[exporter]),
            _pod("exp-2", hostNetwork=True, containers=[exporter]),
        ],
    )
    assert code == 0
    pods = _by_name(doc)
    assert pods["exp-1"]["node"] == "b"
    assert pods["exp-2"]["message"] == (
        "0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod ports."
        " no new claims to deallocate, preemption: 0/1 nodes are available: 1 No preemption"
        " victims found for incoming pod."
    )


def test_empty_toleration_operator_means_equal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An empty toleration operator is defaulted to Equal by the API server."""
    tainted = dict(NODE_B, spec={"taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]})
    code, doc, _ = _run(
        tmp_path,
        capsys,
        [tainted, _pod("p", tolerations=[{"key": "k", "operator": "", "value": "v"}])],
    )
    assert code == 0
    assert doc["pods"][0]["node"] == "b"


def test_failing_plugin_is_an_error_not_a_fit_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """In kube-scheduler an Error status aborts the pod's attempt (it is not "0/N nodes are
    available") and the scheduler goes on: the pod's message names the plugin, the output is
    complete, and the CLI exits 1. Here NodePorts runs Filter without its PreFilter
    (disabled at preFilter), so it cannot read its cycle state."""
    cfg = tmp_path / "sched.yaml"
    cfg.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "profiles:\n- plugins:\n    preFilter:\n      disabled: [{name: NodePorts}]\n"
    )
    port = {"name": "c", "ports": [{"containerPort": 80, "hostPort": 80}]}
    f = tmp_path / "in.yaml"
    f.write_text(yaml.safe_dump_all([NODE_B, _pod("p", containers=[port])]))
    code = main(["simulate", str(f), "-o", "json", "--config", str(cfg)])
    out, err = capsys.readouterr()
    assert code == 1
    (pod,) = json.loads(out)["pods"]
    assert pod["node"] is None and pod["error"] is True
    assert pod["message"].startswith('running "NodePorts" filter plugin: ')
    assert err.startswith("schedsim: error: a plugin failed for 1 pod(s)")


def test_node_resources_fit_args_accept_api_version_and_kind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """pluginConfig args as written in real configs carry apiVersion/kind."""
    cfg = tmp_path / "sched.yaml"
    cfg.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
        "      apiVersion: kubescheduler.config.k8s.io/v1\n      kind: NodeResourcesFitArgs\n"
        "      ignoredResources: [example.com/x]\n"
    )
    code, doc, err = _run(tmp_path, capsys, [NODE_B, _pod("p")], "--config", str(cfg))
    assert code == 0, err
    assert doc["pods"][0]["node"] == "b"
