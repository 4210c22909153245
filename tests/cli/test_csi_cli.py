"""CSI volume limits end to end (issue #6): NodeVolumeLimits through
`schedsim.scheduler.scheduling` and the CLI, the shipped EBS example, and bad storage input
(exit status 2, the message names the file, the object and the field)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
import yaml

from schedsim.api.core import Node, Pod
from schedsim.api.loading.loader import decode_objects
from schedsim.cli import main
from schedsim.engine import Cluster
from schedsim.framework import Framework, Handle, StorageListers, default_profile
from schedsim.scheduler.scheduling import simulate
from schedsim.snapshot import ClusterSnapshotStore, PredicateSnapshot
from schedsim.snapshot.csi import CsiSnapshot
from schedsim.testing import StoreFactory

EXCEEDED_3 = "0/3 nodes are available: 3 node(s) exceed max volume count." + (
    # DefaultPreemption: every pod has priority 0, so none is a victim
    " no new claims to deallocate, preemption: 0/3 nodes are available: 3 No preemption"
    " victims found for incoming pod."
)


def loaded(
    nodes: Sequence[Node],
    pods: Sequence[Pod],
    framework: Framework,
    store: ClusterSnapshotStore | None = None,
    **state: Any,
) -> tuple[PredicateSnapshot, Sequence[Pod]]:
    """The simulations' first two arguments, built through `Cluster` (``state``: per-run
    state a caller made, as `Cluster.snapshot` takes it)."""
    cluster = Cluster(nodes=nodes, pods=pods)
    return cluster.snapshot(framework, store, **state)[0], cluster.pods


def _three_nodes_limit_five(pods: int = 20) -> list[dict[str, Any]]:
    """3 nodes whose CSINode lets ebs.csi.aws.com attach 5 volumes each, and ``pods`` pending
    pods, each with its own bound EBS volume (PV + PVC)."""
    objs: list[dict[str, Any]] = []
    for n in range(3):
        name = f"node-{n}"
        objs.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": name},
                "status": {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110"}},
            }
        )
        objs.append(
            {
                "apiVersion": "storage.k8s.io/v1",
                "kind": "CSINode",
                "metadata": {"name": name},
                "spec": {
                    "drivers": [
                        {"name": "ebs.csi.aws.com", "nodeID": name, "allocatable": {"count": 5}}
                    ]
                },
            }
        )
    for i in range(pods):
        objs.append(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolume",
                "metadata": {"name": f"pv-{i:02d}"},
                "spec": {"csi": {"driver": "ebs.csi.aws.com", "volumeHandle": f"vol-{i:02d}"}},
            }
        )
        objs.append(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {"name": f"data-{i:02d}"},
                "spec": {"volumeName": f"pv-{i:02d}", "storageClassName": ""},
            }
        )
        objs.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"app-{i:02d}"},
                "spec": {
                    "containers": [{"name": "c", "resources": {"requests": {"cpu": "10m"}}}],
                    "volumes": [
                        {"name": "data", "persistentVolumeClaim": {"claimName": f"data-{i:02d}"}}
                    ],
                },
            }
        )
    return objs


def test_three_nodes_of_five_volumes_take_fifteen_of_twenty_pods(store: StoreFactory) -> None:
    """Issue #6 "Done when": kube-scheduler's NodeVolumeLimits rejects a node once its
    attached volumes plus the pod's new ones exceed the CSINode's ``allocatable.count``
    (csi.go Filter), with reason ``node(s) exceed max volume count``; with every node full the
    FitError reads ``0/3 nodes are available: 3 node(s) exceed max volume count.``."""
    m = decode_objects(_three_nodes_limit_five(), "cluster.yaml")
    framework = Framework(default_profile(), Handle())
    result = simulate(
        *loaded(
            m.nodes,
            m.pods,
            framework,
            store(),
            csi_snapshot=CsiSnapshot(m.csi_nodes),
            # hand-written pre-bound claims, settled as the PV controller would
            storage_listers=StorageListers.from_objects(
                m.persistent_volumes, m.persistent_volume_claims, pv_controller=True
            ),
            skip_unschedulable_nodes=False,
        )
    )
    assert (result.scheduled, result.unschedulable) == (15, 5)
    assert result.pods_per_node() == {"node-0": 5, "node-1": 5, "node-2": 5}
    failed = [o for o in result.outcomes if o.node_name is None]
    assert [o.pod.name for o in failed] == [f"app-{i}" for i in range(15, 20)]
    assert {o.message for o in failed} == {EXCEEDED_3}
    assert {o.reasons for o in failed} == {("node(s) exceed max volume count",)}
    assert "NodeVolumeLimits" not in result.unchecked


def test_three_nodes_of_five_volumes_through_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same cluster through ``schedsim simulate -o json``: 15 placed, 5 with the FitError."""
    f = tmp_path / "cluster.yaml"
    f.write_text(yaml.safe_dump_all(_three_nodes_limit_five()))
    assert main(["simulate", str(f), "-o", "json"]) == 0
    out, err = capsys.readouterr()
    doc = json.loads(out)
    assert doc["summary"] == {
        "scheduled": 15,
        "unschedulable": 5,
        "errors": 0,
        "preempted": 0,
        "nodes": 3,
    }
    assert [p["message"] for p in doc["pods"] if p["node"] is None] == [EXCEEDED_3] * 5
    assert "NodeVolumeLimits" not in err


def test_without_csinodes_there_is_no_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No CSINode, no limit (csi.go: ``getVolumeLimits`` of a nil CSINode is empty): the same
    20 pods all fit."""
    objs = [o for o in _three_nodes_limit_five() if o["kind"] != "CSINode"]
    f = tmp_path / "cluster.yaml"
    f.write_text(yaml.safe_dump_all(objs))
    assert main(["simulate", str(f), "-o", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["summary"]["scheduled"] == 20


def test_shipped_ebs_example(store_name: str, capsys: pytest.CaptureFixture[str]) -> None:
    """examples/ebs-volume-limits.yaml: 25 EBS attachments per node, 3 already used by a
    running pod: 22 + 25 of the 50 database pods fit, the last 3 in queue order do not; the web
    pod's configMap/emptyDir volumes are never counted."""
    path = resources.files("schedsim.examples").joinpath("ebs-volume-limits.yaml")
    with resources.as_file(path) as p:
        assert main(["simulate", str(p), "-o", "json", "--store", store_name]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["summary"] == {
        "scheduled": 48,
        "unschedulable": 3,
        "errors": 0,
        "preempted": 0,
        "nodes": 2,
    }
    failed = {p["name"]: p["message"] for p in doc["pods"] if p["node"] is None}
    msg = "0/2 nodes are available: 2 node(s) exceed max volume count." + (
        " no new claims to deallocate, preemption: 0/2 nodes are available: 2 No preemption"
        " victims found for incoming pod."
    )
    assert failed == {"db-47": msg, "db-48": msg, "db-49": msg}
    placed = [p["node"] for p in doc["pods"] if p["node"] is not None and p["name"] != "web"]
    assert (placed.count("ip-10-0-1-11"), placed.count("ip-10-0-2-22")) == (22, 25)


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        (
            "kind: CSINode\nmetadata: {name: n1}\n"
            "spec: {drivers: [{name: ebs.csi.aws.com, allocatable: {count: -5}}]}\n",
            "CSINode n1: spec.drivers[0].allocatable.count: must be greater than or equal to 0, "
            "got -5",
        ),
        (
            "kind: PersistentVolumeClaim\nmetadata: {name: data, namespace: shop}\n"
            "spec: {storageClassName: [ebs]}\n",
            "PersistentVolumeClaim shop/data: spec.storageClassName: expected a string, got a list",
        ),
        (
            "kind: PersistentVolume\nmetadata: {name: pv}\nspec: {csi: {volumeHandle: vol-1}}\n",
            "PersistentVolume pv: spec.csi.driver: required",
        ),
        (
            "kind: StorageClass\nmetadata: {name: ebs}\nprovisioner: ebs.csi.aws.com\n"
            "volumeBindingMode: Lazy\n",
            "StorageClass ebs: volumeBindingMode: unsupported value 'Lazy': want one of "
            "['Immediate', 'WaitForFirstConsumer']",
        ),
        (
            "kind: VolumeAttachment\nmetadata: {name: va}\n"
            "spec: {nodeName: n1, source: {persistentVolumeName: pv}}\n",
            "VolumeAttachment va: spec.attacher: required",
        ),
        (
            "kind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c}]\n"
            "  volumes: [{name: v, gcePersistentDisk: {}}]\n",
            "Pod default/p: spec.volumes[0].gcePersistentDisk.pdName: required",
        ),
    ],
)
def test_bad_storage_input_exits_2_naming_file_object_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], doc: str, message: str
) -> None:
    """A malformed storage object stops the run with exit status 2 and
    ``FILE: KIND NS/NAME: FIELD: problem``; nothing is printed on stdout."""
    f = tmp_path / "bad.yaml"
    f.write_text(doc)
    assert main(["simulate", str(f)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"schedsim: error: {f}: {message}\n"


def test_duplicate_csinode_across_files_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two CSINodes for one node are a duplicate object (exit status 2, both files named)."""
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_text("kind: CSINode\nmetadata: {name: n1}\n")
    b.write_text("kind: CSINode\nmetadata: {name: n1}\n")
    assert main(["simulate", str(a), str(b)]) == 2
    assert capsys.readouterr().err == (
        f"schedsim: error: {b}: CSINode n1: metadata.name: duplicate object (first seen in {a})\n"
    )
