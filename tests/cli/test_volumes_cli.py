"""VolumeBinding, VolumeZone and VolumeRestrictions wherever filters run: ``simulate``,
``scale-up`` (template nodes) and ``scale-down`` (moving pods), from hand-written manifests,
and malformed PV node affinity refused at load.

Behaviour from kube-scheduler 1.34's volume_binding.go / binder.go: a claim bound to a PV
pinned to a node (``kubernetes.io/hostname In``) confines its pod to that node; a
WaitForFirstConsumer claim takes the smallest matching Available PV on the chosen node, and
the assume cache keeps a PV taken once chosen, so a second claim cannot have it
(``node(s) didn't find available persistent volumes to bind``); provisioning is allowed only
where the StorageClass's ``allowedTopologies`` match. API validation
(``validateVolumeNodeAffinity``) refuses a PV whose node affinity has no ``required``, no
terms, or an In requirement without values.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from schedsim.cli import main


def _node(name: str, zone: str = "z1") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone},
        },
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    }


def _local_pv(name: str, node: str, claim: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "capacity": {"storage": "10Gi"},
        "accessModes": ["ReadWriteOnce"],
        "storageClassName": "local",
        "local": {"path": f"/mnt/{name}"},
        "nodeAffinity": {
            "required": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}
                        ]
                    }
                ]
            }
        },
    }
    if claim:
        spec["claimRef"] = {"namespace": "default", "name": claim}
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": spec,
    }


def _pvc(name: str, cls: str, volume_name: str = "") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": cls,
            "volumeName": volume_name,
            "resources": {"requests": {"storage": "5Gi"}},
        },
    }


def _pod(name: str, claim: str, created: str, owner: bool = True) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": "default",
        "creationTimestamp": created,
    }
    if owner:
        meta["ownerReferences"] = [
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u1",
             "controller": True}
        ]  # fmt: skip
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {
            "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}],
            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}],
        },
    }


LOCAL_WFFC = {
    "apiVersion": "storage.k8s.io/v1",
    "kind": "StorageClass",
    "metadata": {"name": "local"},
    "provisioner": "kubernetes.io/no-provisioner",
    "volumeBindingMode": "WaitForFirstConsumer",
}
ZONAL = {
    "apiVersion": "storage.k8s.io/v1",
    "kind": "StorageClass",
    "metadata": {"name": "zonal"},
    "provisioner": "csi.example.com",
    "volumeBindingMode": "WaitForFirstConsumer",
    "allowedTopologies": [
        {"matchLabelExpressions": [{"key": "topology.kubernetes.io/zone", "values": ["z2"]}]}
    ],
}


def _write(tmp_path: Path, objs: list[dict[str, Any]], name: str = "cluster.yaml") -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(objs))
    return str(path)


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, Any, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip().startswith("{") else out), err


def test_simulate_pinned_pod_and_static_pv_not_taken_twice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], store_name: str
) -> None:
    """db's claim is pre-bound (``volumeName``, as written by hand) to a local PV on node-b:
    the PV controller's settling makes it bound, and the pod lands on node-b although node-a
    comes first. w1 and w2 have WaitForFirstConsumer claims and only one Available PV (on
    node-a) matches: w1 takes it, w2 finds none on any node."""
    path = _write(
        tmp_path,
        [
            _node("node-a"),
            _node("node-b"),
            LOCAL_WFFC,
            _local_pv("pv-db", "node-b"),
            _pvc("data-db", "local", volume_name="pv-db"),
            _local_pv("pv-free", "node-a"),
            _pvc("data-1", "local"),
            _pvc("data-2", "local"),
            _pod("db", "data-db", "2024-01-01T00:00:00Z"),
            _pod("w1", "data-1", "2024-01-01T00:00:01Z"),
            _pod("w2", "data-2", "2024-01-01T00:00:02Z"),
        ],
    )
    code, doc, err = _run(["simulate", path, "--output", "json", "--store", store_name], capsys)
    assert code == 0, err
    assert "not emulated" not in err or "Volume" not in err
    placed = {p["name"]: p for p in doc["pods"]}
    assert placed["db"]["node"] == "node-b"
    assert placed["w1"]["node"] == "node-a"
    assert placed["w2"]["node"] is None
    assert placed["w2"]["message"] == (
        "0/2 nodes are available: 2 node(s) didn't find available persistent volumes to bind."
        " no new claims to deallocate, preemption: 0/2 nodes are available: 2 Preemption is not"
        " helpful for scheduling."
    )


def test_scale_up_provisions_only_where_the_class_allows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A claim of a class whose ``allowedTopologies`` name zone z2 cannot be provisioned on
    the existing z1 node; the node group whose template is in z2 helps (the binder's
    ``checkVolumeProvisions`` on the template copy), the one in z1 does not."""
    cluster = _write(
        tmp_path,
        [
            _node("node-a", "z1"),
            ZONAL,
            _pvc("data-1", "zonal"),
            _pod("w1", "data-1", "2024-01-01T00:00:01Z"),
        ],
    )
    groups = {
        "nodeGroups": [
            {
                "name": f"pool-{zone}",
                "maxSize": 3,
                "template": {"node": _node(f"tmpl-{zone}", zone)},
            }
            for zone in ("z1", "z2")
        ]
    }
    groups_path = tmp_path / "groups.yaml"
    groups_path.write_text(yaml.safe_dump(groups))
    code, doc, err = _run(
        ["scale-up", cluster, "--node-groups", str(groups_path), "-o", "json"], capsys
    )
    assert code == 0, err
    assert doc["scaleUp"]["nodeGroup"] == "pool-z2", doc
    assert doc["scaleUp"]["nodes"] == 1


def test_scale_down_keeps_the_node_a_local_pv_pins_a_pod_to(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Both nodes are underutilized; the pod on node-a has a claim bound to a local PV on
    node-a, so it cannot move and node-a is not removable (``NoPlaceToMovePods``); node-b's
    pod (no volume) can move to node-a, so node-b is removable."""
    db = _pod("db", "data-db", "2024-01-01T00:00:00Z")
    db["spec"]["nodeName"] = "node-a"
    web = _pod("web", "unused", "2024-01-01T00:00:00Z")
    web["spec"]["volumes"] = []
    web["spec"]["nodeName"] = "node-b"
    cluster = _write(
        tmp_path,
        [
            _node("node-a"),
            _node("node-b"),
            LOCAL_WFFC,
            _local_pv("pv-db", "node-a"),
            _pvc("data-db", "local", volume_name="pv-db"),
            db,
            web,
        ],
    )
    code, doc, err = _run(["scale-down", cluster, "-o", "json"], capsys)
    assert code == 0, err
    verdict = {n["node"]: n for n in doc["nodes"]}
    assert verdict["node-a"]["removable"] is False
    assert verdict["node-a"]["reason"] == "NoPlaceToMovePods"
    assert verdict["node-b"]["removable"] is True


@pytest.mark.parametrize(
    ("affinity", "field", "problem"),
    [
        (
            {},
            "spec.nodeAffinity.required",
            "Required value: must specify required node constraints",
        ),
        (
            {"required": {"nodeSelectorTerms": []}},
            "spec.nodeAffinity.required.nodeSelectorTerms",
            "Required value: must have at least one node selector term",
        ),
        (
            {
                "required": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In"}]}
                    ]
                }
            },
            "spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values",
            "Required value: must be specified when `operator` is 'In' or 'NotIn'",
        ),
        (
            {
                "required": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "bad key!", "operator": "Exists"}]}
                    ]
                }
            },
            "spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].key",
            'Invalid value: "bad key!"',
        ),
    ],
)
def test_malformed_pv_node_affinity_is_refused(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    affinity: dict[str, Any],
    field: str,
    problem: str,
) -> None:
    """API validation of PV node affinity (``validateVolumeNodeAffinity`` /
    ``ValidateNodeSelector``): ``FILE: KIND NAME: FIELD: problem``, exit status 2."""
    pv = _local_pv("pv-x", "node-a")
    pv["spec"]["nodeAffinity"] = affinity
    path = _write(tmp_path, [_node("node-a"), pv])
    code, _, err = _run(["simulate", path], capsys)
    assert code == 2
    assert err.startswith(f"schedsim: error: {path}: PersistentVolume pv-x: {field}: {problem}")
