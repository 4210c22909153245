"""VolumeZone beyond the shared ``vol-*`` cases: rows of upstream ``volume_zone_test.go``
(``TestSingleZone``, ``TestMultiZone``, ``TestWithBinding``) the cases do not carry. Names were
lower-cased as the cases' note says (``pvc-1`` for ``PVC_1``, ``vol-1`` for ``Vol_1``)."""

from __future__ import annotations

from typing import Any

import pytest

from schedsim.api.core import Node, Pod
from schedsim.api.loading.loader import decode_objects
from schedsim.framework import Code, CycleState, Handle, Status, StorageListers, VolumeState
from schedsim.snapshot import NodeInfo
from schedsim_plugins.volumezone import ERR_REASON_CONFLICT, VolumeZone, label_zones_to_set

BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"

PVS = {
    "vol-1": {BETA_ZONE: "us-west1-a"},
    "vol-2": {BETA_REGION: "us-west1-b", "uselessLabel": "none"},
    "vol-3": {BETA_REGION: "us-west1-c"},
    "vol-stable-1": {ZONE: "us-west1-a"},
    "vol-stable-2": {REGION: "us-west1-b", "uselessLabel": "none"},
    "vol-multi": {BETA_ZONE: "us-west1-c__us-west1-a"},
}


def _objects() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": "class-immediate"},
            "provisioner": "kubernetes.io/no-provisioner",
            "volumeBindingMode": "Immediate",
        },
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": "class-wait"},
            "provisioner": "kubernetes.io/no-provisioner",
            "volumeBindingMode": "WaitForFirstConsumer",
        },
    ]
    for name, labels in PVS.items():
        out.append(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolume",
                "metadata": {"name": name, "labels": labels},
                "spec": {"capacity": {"storage": "1Gi"}},
            }
        )
        out.append(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {"name": f"pvc-{name}", "namespace": "default"},
                "spec": {"volumeName": name},
            }
        )
    for name, sc in (("pvc-nopv-immediate", "class-immediate"), ("pvc-nopv-empty", "")):
        out.append(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {"name": name, "namespace": "default"},
                "spec": {"storageClassName": sc},
            }
        )
    return out


def _run(claim: str | None, node_labels: dict[str, str]) -> Status | None:
    m = decode_objects(_objects(), "test", api_rules=False)  # upstream test objects
    listers = StorageListers.from_objects(
        m.persistent_volumes, m.persistent_volume_claims, m.storage_classes
    )
    handle = Handle()
    handle.storage_listers.delegate = listers
    handle.volume_manager.delegate = VolumeState(listers)
    plugin = VolumeZone({}, handle)
    volumes = (
        [] if claim is None else [{"name": "v", "persistentVolumeClaim": {"claimName": claim}}]
    )
    pod = Pod.from_manifest(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "pod-1", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "x"}], "volumes": volumes},
        }
    )
    node = Node.from_manifest(
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "host1", "labels": node_labels}}
    )
    ni = NodeInfo(node)
    state = CycleState()
    pre = plugin.schedsim_pre_filter(state, pod, [ni])
    if pre is not None:
        return pre
    return plugin.schedsim_filter(state, pod, ni)


CASES = {
    # TestSingleZone
    "pod without volume": (None, {BETA_ZONE: "us-west1-a"}, "Skip"),
    "node without labels": ("pvc-vol-1", {}, "Success"),
    "beta zone label matched": (
        "pvc-vol-1",
        {BETA_ZONE: "us-west1-a", "uselessLabel": "none"},
        "Success",
    ),
    "beta region label matched": ("pvc-vol-2", {BETA_REGION: "us-west1-b"}, "Success"),
    "beta region label doesn't match": ("pvc-vol-2", {BETA_REGION: "no_us-west1-b"}, "Conflict"),
    "zone label matched": ("pvc-vol-stable-1", {ZONE: "us-west1-a"}, "Success"),
    "region label matched": ("pvc-vol-stable-2", {REGION: "us-west1-b"}, "Success"),
    "region label doesn't match": ("pvc-vol-stable-2", {REGION: "no_us-west1-b"}, "Conflict"),
    "zone label doesn't match": ("pvc-vol-stable-1", {ZONE: "no_us-west1-a"}, "Conflict"),
    "pv with zone,node with beta zone": ("pvc-vol-stable-1", {BETA_ZONE: "us-west1-a"}, "Conflict"),
    "pv with beta label,node with ga label, don't match": (
        "pvc-vol-1",
        {ZONE: "us-west1-b"},
        "Conflict",
    ),
    # TestMultiZone
    "multi-zone label matched": ("pvc-vol-multi", {BETA_ZONE: "us-west1-c"}, "Success"),
    "multi-zone label doesn't match": ("pvc-vol-multi", {BETA_ZONE: "us-west1-b"}, "Conflict"),
    "only unrelated labels on node": ("pvc-vol-1", {"uselessLabel": "none"}, "Success"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_volume_zone(name: str) -> None:
    """Upstream TestSingleZone / TestMultiZone rows: a node without any zone/region label
    passes; otherwise every PV label must be on the node (beta keys also under their GA key)
    with a value in the PV's ``__``-separated set."""
    claim, labels, want = CASES[name]
    got = _run(claim, labels)
    if want == "Success":
        assert got is None, got
    elif want == "Skip":
        assert got is not None and got.code is Code.Skip
    else:
        assert got is not None and got.code is Code.UnschedulableAndUnresolvable
        assert got.reasons == (ERR_REASON_CONFLICT,)


@pytest.mark.parametrize(
    ("claim", "reason"),
    [
        ("pvc-nopv-immediate", "PersistentVolume had no name"),
        ("pvc-nopv-empty", "PersistentVolumeClaim had no pv name and storageClass name"),
        ("missing", 'persistentvolumeclaim "missing" not found'),
    ],
)
def test_with_binding_errors(claim: str, reason: str) -> None:
    """Upstream TestWithBinding "unbound volume immediate binding mode" and "unbound volume
    empty storage class", and a missing claim: UnschedulableAndUnresolvable from PreFilter."""
    got = _run(claim, {BETA_ZONE: "us-west1-a"})
    assert got is not None and got.code is Code.UnschedulableAndUnresolvable
    assert got.reasons == (reason,)


def test_label_zones_to_set() -> None:
    """``volumehelpers.LabelZonesToSet``: ``__``-separated, trimmed; an empty element is an
    error (the label is then ignored by the plugin)."""
    assert label_zones_to_set("a__ b") == {"a", "b"}
    assert label_zones_to_set("a____b") is None
