"""``simulate`` with the API server's DefaultStorageClass admission: the Helm-chart case of a
StatefulSet whose ``volumeClaimTemplates`` leave ``storageClassName`` unset in a cluster whose
default class is WaitForFirstConsumer with a provisioner.

Upstream behaviour (kubernetes v1.34): the setdefault admission plugin gives the claim the
default class (``TestAdmission`` "one default, modify PVC with class=nil"); VolumeBinding then
sees a delay-binding claim (``IsDelayBindingMode``) and provisioning is possible on the node,
so the pods schedule. With ``storageClassName: ""`` the claim keeps no class ("one default, no
modification of PVC with class=''"): immediate binding, and with no PV the pods fail PreFilter
with ``pod has unbound immediate PersistentVolumeClaims`` (volume_binding.go
``ErrReasonUnboundImmediatePVC``). A class that is not found is immediate binding too, which
the load warns about.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from schedsim.cli import main

_IMMEDIATE = (
    # VolumeBinding's PreFilter rejects before DynamicResources' runs: DynamicResources'
    # PostFilter finds no cycle state, an Error "not found" (release-1.34 getStateData), and
    # DefaultPreemption does not run; the message seen on 1.34 clusters
    "0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims. not found"
)


def _cluster(tmp_path: Path, claim_spec_extra: dict[str, Any]) -> str:
    objs: list[dict[str, Any]] = [
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {
                "name": "standard",
                "annotations": {"storageclass.kubernetes.io/is-default-class": "true"},
            },
            "provisioner": "ebs.csi.aws.com",
            "volumeBindingMode": "WaitForFirstConsumer",
        },
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
        },
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": "db", "namespace": "shop"},
            "spec": {
                "replicas": 2,
                "serviceName": "db",
                "selector": {"matchLabels": {"app": "db"}},
                "template": {
                    "metadata": {"labels": {"app": "db"}},
                    "spec": {
                        "containers": [
                            {
                                "name": "db",
                                "image": "postgres",
                                "resources": {"requests": {"cpu": "100m"}},
                                "volumeMounts": [{"name": "data", "mountPath": "/data"}],
                            }
                        ]
                    },
                },
                "volumeClaimTemplates": [
                    {
                        "metadata": {"name": "data"},
                        "spec": {
                            "accessModes": ["ReadWriteOnce"],
                            "resources": {"requests": {"storage": "1Gi"}},
                            **claim_spec_extra,
                        },
                    }
                ],
            },
        },
    ]
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(objs))
    return str(path)


def _simulate(path: str, capsys: pytest.CaptureFixture[str]) -> tuple[dict[str, Any], str]:
    code = main(["simulate", path, "--output", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    doc = json.loads(out)
    return {p["name"]: (p["node"], p["message"]) for p in doc["pods"]}, err


def test_unset_class_takes_the_default_wait_for_first_consumer_class(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Claims ``data-db-0``/``data-db-1`` get ``standard`` at admission: WaitForFirstConsumer
    with a provisioner, so both pods schedule (without admission they were unbound immediate
    claims)."""
    placed, err = _simulate(_cluster(tmp_path, {}), capsys)
    assert placed == {"db-0": ("n1", ""), "db-1": ("n1", "")}
    assert "PersistentVolumeClaim" not in err


def test_empty_class_stays_classless(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``storageClassName: ""`` asks for no class: not defaulted, immediate binding, no PV."""
    placed, err = _simulate(_cluster(tmp_path, {"storageClassName": ""}), capsys)
    assert placed == {"db-0": (None, _IMMEDIATE), "db-1": (None, _IMMEDIATE)}
    assert "PersistentVolumeClaim" not in err


def test_missing_class_is_warned_and_immediate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A class the input lacks: ``IsDelayBindingMode`` is false for NotFound, so the claims are
    immediate binding; one warning line names them."""
    path = _cluster(tmp_path, {"storageClassName": "gp3"})
    placed, err = _simulate(path, capsys)
    assert placed == {"db-0": (None, _IMMEDIATE), "db-1": (None, _IMMEDIATE)}
    assert (
        f"{path}: 2 PersistentVolumeClaims (shop/data-db-0, shop/data-db-1): "
        'spec.storageClassName: StorageClass "gp3" not found; kube-scheduler treats the claims '
        "as immediate binding"
    ) in err
