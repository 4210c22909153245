"""Storage objects (CSINode, PersistentVolume, PersistentVolumeClaim, StorageClass,
VolumeAttachment) and the volume sources of Pods: decoding of the real example manifests and the
upstream API test data, API defaults, and exact error messages for malformed objects
(``FILE: KIND NS/NAME: FIELD: problem``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from schedsim.api import Manifests, decode_objects, load_paths
from schedsim.api.core.volumes import CSIPersistentVolumeSource, CSIVolumeSource, InTreeVolumeSource
from schedsim.api.errors import ManifestError
from schedsim.api.storage import (
    CSINode,
    CSINodeDriver,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    VolumeAttachment,
)

# the shared folder as the other tests find it: SCHEDSIM_SHARED_DIR, else beside the checkout
SHARED = Path(
    os.environ.get("SCHEDSIM_SHARED_DIR") or Path(__file__).resolve().parents[2].parent / "shared"
)
CSI_EXAMPLES = SHARED / "examples" / "csi"
API_TESTDATA = SHARED / "examples" / "k8s-api-testdata"

needs_shared = pytest.mark.skipif(not CSI_EXAMPLES.is_dir(), reason=f"{CSI_EXAMPLES} is absent")


def _decode(text: str, source: str = "f.yaml") -> Manifests:
    return decode_objects(list(yaml.safe_load_all(text)), source)


def _error(text: str) -> str:
    with pytest.raises(ManifestError) as info:
        _decode(text)
    return str(info.value)


# --------------------------------------------------------------------------- real manifests


@needs_shared
def test_aws_ebs_driver_examples_decode() -> None:
    """aws-ebs-csi-driver's dynamic- and static-provisioning manifests: the StorageClass
    provisions with ``ebs.csi.aws.com`` and binds WaitForFirstConsumer, the claim asks for that
    class, the pod mounts the claim, and the static PV names its CSI driver and EBS volume."""
    m = load_paths([str(CSI_EXAMPLES)])
    classes = {sc.name: sc for sc in m.storage_classes}
    assert classes["ebs-sc"] == StorageClass("ebs-sc", "ebs.csi.aws.com", "WaitForFirstConsumer")
    # csi-driver-host-path: explicit Immediate
    assert classes["csi-hostpath-sc"].provisioner == "hostpath.csi.k8s.io"
    assert classes["csi-hostpath-sc"].volume_binding_mode == "Immediate"
    claims = {c.name: c for c in m.persistent_volume_claims}
    assert claims["ebs-claim"].namespace == "default"
    assert claims["ebs-claim"].storage_class == "ebs-sc"
    assert claims["ebs-claim"].volume_name == ""
    assert claims["csi-pvc"].storage_class == "csi-hostpath-sc"
    (pv,) = m.persistent_volumes
    assert pv.name == "test-pv"
    assert pv.csi == CSIPersistentVolumeSource("ebs.csi.aws.com", "vol-03c604538dd7d2f41")
    assert pv.in_tree is None
    (pod,) = m.pods
    (vol,) = pod.volumes
    assert (vol.name, vol.persistent_volume_claim, vol.csi, vol.in_tree) == (
        "persistent-storage",
        "ebs-claim",
        None,
        None,
    )


@pytest.mark.skipif(not API_TESTDATA.is_dir(), reason=f"{API_TESTDATA} is absent")
def test_csinode_api_testdata_decodes() -> None:
    """kubernetes/api testdata/HEAD storage.k8s.io.v1.CSINode.yaml: every field filled; the
    driver's name, nodeID, allocatable.count and topologyKeys are read, the cluster-scoped
    object's metadata.namespace is ignored (as the API server does)."""
    # HEAD's CSINode has a `status` that 1.34 lacks: strict validation would refuse it
    m = load_paths([str(API_TESTDATA / "storage.k8s.io.v1.CSINode.yaml")], validate="ignore")
    (csi_node,) = m.csi_nodes
    assert csi_node.name == "nameValue"
    assert csi_node.drivers == (
        CSINodeDriver("nameValue", "nodeIDValue", 1, ("topologyKeysValue",)),
    )
    assert csi_node.volume_limits() == {"nameValue": 1}


# --------------------------------------------------------------------------- defaults and helpers


def test_storage_class_binding_mode_defaults_to_immediate() -> None:
    """storage/v1 ``SetDefaults_StorageClass``: volumeBindingMode defaults to Immediate."""
    m = _decode("kind: StorageClass\nmetadata: {name: sc}\nprovisioner: p\n")
    assert m.storage_classes == [StorageClass("sc", "p", "Immediate")]


def test_pvc_class_beta_annotation_wins() -> None:
    """component-helpers ``GetPersistentVolumeClaimClass``: the beta annotation
    ``volume.beta.kubernetes.io/storage-class`` wins over spec.storageClassName; no class is
    ``""`` whether storageClassName is unset or empty."""
    m = _decode(
        """
kind: PersistentVolumeClaim
metadata:
  name: a
  annotations: {volume.beta.kubernetes.io/storage-class: beta}
spec: {storageClassName: ga}
---
kind: PersistentVolumeClaim
metadata: {name: b, namespace: ns}
spec: {storageClassName: ga}
---
kind: PersistentVolumeClaim
metadata: {name: c}
spec: {storageClassName: ""}
---
kind: PersistentVolumeClaim
metadata: {name: d}
"""
    )
    a, b, c, e = m.persistent_volume_claims
    assert (a.storage_class, b.storage_class, c.storage_class, e.storage_class) == (
        "beta",
        "ga",
        "",
        "",
    )
    assert (b.key, c.storage_class_name, e.storage_class_name) == ("ns/b", "", None)


def test_pvc_controller_is_the_first_controller_reference() -> None:
    """``metav1.IsControlledBy``: the controller is the first ownerReference with
    ``controller: true``; a non-controller owner with the UID does not count."""
    pvc = _decode(
        """
kind: PersistentVolumeClaim
metadata:
  name: p
  ownerReferences:
  - {apiVersion: v1, kind: Pod, name: a, uid: u1}
  - {apiVersion: v1, kind: Pod, name: b, uid: u2, controller: true}
"""
    ).persistent_volume_claims[0]
    assert pvc.is_controlled_by("u2")
    assert not pvc.is_controlled_by("u1")
    assert not PersistentVolumeClaim("x").is_controlled_by("u2")


def test_csinode_limits_and_migrated_plugins() -> None:
    """A driver without allocatable.count has no limit (``getVolumeLimits`` skips it); the
    migrated-plugins annotation is a comma-separated list."""
    m = _decode(
        """
kind: CSINode
metadata:
  name: n1
  annotations:
    storage.alpha.kubernetes.io/migrated-plugins: "kubernetes.io/aws-ebs,kubernetes.io/gce-pd"
spec:
  drivers:
  - {name: ebs.csi.aws.com, nodeID: i-1, allocatable: {count: 25}}
  - {name: hostpath.csi.k8s.io, nodeID: n1}
  - {name: zero.example.com, nodeID: n1, allocatable: {count: 0}}
"""
    )
    (c,) = m.csi_nodes
    assert c.volume_limits() == {"ebs.csi.aws.com": 25, "zero.example.com": 0}
    assert c.migrated_plugins == {"kubernetes.io/aws-ebs", "kubernetes.io/gce-pd"}
    assert CSINode("n2").migrated_plugins == frozenset()


def test_pod_volume_sources() -> None:
    """Pod volume sources decode to what NodeVolumeLimits reads: the in-tree block sources with
    csi-translation-lib's plugin and driver names (kubernetes.io/aws-ebs -> ebs.csi.aws.com,
    gce-pd -> pd.csi.storage.gke.io, azure-disk -> disk.csi.azure.com, cinder ->
    cinder.csi.openstack.org, vsphere-volume -> csi.vsphere.vmware.com), inline CSI, generic
    ephemeral; configMap/secret/emptyDir are none of these."""
    pod = _decode(
        """
kind: Pod
metadata: {name: p}
spec:
  containers: [{name: c}]
  volumes:
  - {name: a, awsElasticBlockStore: {volumeID: "aws://us-east-1a/vol-1"}}
  - {name: g, gcePersistentDisk: {pdName: disk-1}}
  - name: z
    azureDisk:
      diskName: d
      diskURI: /subscriptions/s/resourceGroups/r/providers/Microsoft.Compute/disks/d
  - {name: o, cinder: {volumeID: c-1}}
  - {name: v, vsphereVolume: {volumePath: "[ds] vol.vmdk"}}
  - {name: i, csi: {driver: inline.example.com, volumeAttributes: {size: 1Gi}}}
  - {name: e, ephemeral: {volumeClaimTemplate: {spec: {storageClassName: sc}}}}
  - {name: p, persistentVolumeClaim: {claimName: claim}}
  - {name: cm, configMap: {name: x}}
  - {name: s, secret: {secretName: x}}
  - {name: t, emptyDir: {}}
"""
    ).pods[0]
    got = {v.name: v.in_tree for v in pod.volumes if v.in_tree is not None}
    assert got == {
        "a": InTreeVolumeSource(
            "awsElasticBlockStore",
            "kubernetes.io/aws-ebs",
            "ebs.csi.aws.com",
            "aws://us-east-1a/vol-1",
        ),
        "g": InTreeVolumeSource(
            "gcePersistentDisk", "kubernetes.io/gce-pd", "pd.csi.storage.gke.io", "disk-1"
        ),
        "z": InTreeVolumeSource(
            "azureDisk",
            "kubernetes.io/azure-disk",
            "disk.csi.azure.com",
            "/subscriptions/s/resourceGroups/r/providers/Microsoft.Compute/disks/d",
            "d",
        ),
        "o": InTreeVolumeSource(
            "cinder", "kubernetes.io/cinder", "cinder.csi.openstack.org", "c-1"
        ),
        "v": InTreeVolumeSource(
            "vsphereVolume",
            "kubernetes.io/vsphere-volume",
            "csi.vsphere.vmware.com",
            "[ds] vol.vmdk",
        ),
    }
    by_name = {v.name: v for v in pod.volumes}
    assert by_name["i"].csi == CSIVolumeSource("inline.example.com", {"size": "1Gi"})
    assert by_name["e"].ephemeral and by_name["e"].persistent_volume_claim is None
    assert by_name["p"].persistent_volume_claim == "claim"
    for name in ("cm", "s", "t"):
        v = by_name[name]
        assert (v.persistent_volume_claim, v.ephemeral, v.csi, v.in_tree) == (
            None,
            False,
            None,
            None,
        )
        assert name and v.source  # the raw source is kept


def test_persistent_volume_sources_and_volume_attachment() -> None:
    """A PV with an in-tree source keeps its labels (GCE PD translation reads the zone
    labels); a VolumeAttachment names its attacher, node and PV."""
    m = _decode(
        """
kind: PersistentVolume
metadata: {name: pd, labels: {topology.kubernetes.io/zone: europe-west1-b}}
spec: {gcePersistentDisk: {pdName: disk-1}, storageClassName: standard}
---
kind: VolumeAttachment
metadata: {name: va}
spec: {attacher: pd.csi.storage.gke.io, nodeName: n1, source: {persistentVolumeName: pd}}
---
kind: VolumeAttachment
metadata: {name: inline}
spec: {attacher: pd.csi.storage.gke.io, nodeName: n1, source: {inlineVolumeSpec: {}}}
"""
    )
    (pv,) = m.persistent_volumes
    assert pv == PersistentVolume(
        "pd",
        {"topology.kubernetes.io/zone": "europe-west1-b"},
        None,
        InTreeVolumeSource(
            "gcePersistentDisk", "kubernetes.io/gce-pd", "pd.csi.storage.gke.io", "disk-1"
        ),
        "standard",
        pv.source,
    )
    assert m.volume_attachments == [
        VolumeAttachment("va", "pd.csi.storage.gke.io", "n1", "pd"),
        VolumeAttachment("inline", "pd.csi.storage.gke.io", "n1", None),
    ]


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "kind: CSINode\nmetadata: {name: n1}\n"
            "spec: {drivers: [{name: d, allocatable: {count: -1}}]}",
            "f.yaml: CSINode n1: spec.drivers[0].allocatable.count: must be greater than or equal "
            "to 0, got -1",
        ),
        (
            "kind: CSINode\nmetadata: {name: n1}\n"
            "spec: {drivers: [{name: d, allocatable: {count: x}}]}",
            "f.yaml: CSINode n1: spec.drivers[0].allocatable.count: expected an integer, got a "
            "string",
        ),
        (
            "kind: CSINode\nmetadata: {name: n1}\nspec: {drivers: [{nodeID: n1}]}",
            "f.yaml: CSINode n1: spec.drivers[0].name: required",
        ),
        (
            "kind: CSINode\nmetadata: {name: n1}\nspec: {drivers: [{name: d}, {name: d}]}",
            "f.yaml: CSINode n1: spec.drivers[1].name: duplicate driver 'd'",
        ),
        (
            "kind: StorageClass\nmetadata: {name: sc}\n",
            "f.yaml: StorageClass sc: provisioner: required",
        ),
        (
            "kind: StorageClass\nmetadata: {name: sc}\nprovisioner: p\nvolumeBindingMode: Later\n",
            "f.yaml: StorageClass sc: volumeBindingMode: unsupported value 'Later': want one of "
            "['Immediate', 'WaitForFirstConsumer']",
        ),
        (
            "kind: PersistentVolume\nmetadata: {name: pv}\nspec: {csi: {driver: d}}\n",
            "f.yaml: PersistentVolume pv: spec.csi.volumeHandle: required",
        ),
        (
            "kind: PersistentVolume\nmetadata: {name: pv}\n"
            "spec: {csi: {driver: d, volumeHandle: h}, awsElasticBlockStore: {volumeID: v}}\n",
            "f.yaml: PersistentVolume pv: spec.awsElasticBlockStore: may not specify more than 1 "
            "volume type",
        ),
        (
            "kind: PersistentVolumeClaim\nmetadata: {name: c}\nspec: {volumeName: 3}\n",
            "f.yaml: PersistentVolumeClaim default/c: spec.volumeName: expected a string, got a "
            "number",
        ),
        (
            "kind: VolumeAttachment\nmetadata: {name: va}\nspec: {attacher: a, source: "
            "{persistentVolumeName: pv}}\n",
            "f.yaml: VolumeAttachment va: spec.nodeName: required",
        ),
        (
            "kind: VolumeAttachment\nmetadata: {name: va}\nspec: {attacher: a, nodeName: n, "
            "source: {}}\n",
            "f.yaml: VolumeAttachment va: spec.source: must specify exactly one of "
            "persistentVolumeName, inlineVolumeSpec",
        ),
        (
            "kind: Pod\nmetadata: {name: p}\nspec: {volumes: [{name: v, awsElasticBlockStore: "
            "{volumeID: a}, gcePersistentDisk: {pdName: b}}]}\n",
            "f.yaml: Pod default/p: spec.volumes[0].gcePersistentDisk: may not specify more than "
            "1 volume type",
        ),
        (
            "kind: Pod\nmetadata: {name: p}\nspec: {volumes: [{name: v, persistentVolumeClaim: "
            "{claimName: c}, emptyDir: {}}]}\n",
            "f.yaml: Pod default/p: spec.volumes[0].emptyDir: may not specify more than 1 volume "
            "type",
        ),
        (
            "kind: Pod\nmetadata: {name: p}\nspec: {volumes: [{name: v, awsElasticBlockStore: "
            "{fsType: ext4}}]}\n",
            "f.yaml: Pod default/p: spec.volumes[0].awsElasticBlockStore.volumeID: required",
        ),
        (
            "kind: Pod\nmetadata: {name: p}\nspec: {volumes: [{name: v, azureDisk: "
            "{diskURI: u}}]}\n",
            "f.yaml: Pod default/p: spec.volumes[0].azureDisk.diskName: required",
        ),
        (
            "kind: Pod\nmetadata: {name: p}\nspec: {volumes: [{name: v, csi: {readOnly: true}}]}\n",
            "f.yaml: Pod default/p: spec.volumes[0].csi.driver: required",
        ),
        (
            "kind: Pod\nmetadata: {name: p}\n"
            "spec: {volumes: [{name: v, persistentVolumeClaim: {}}]}\n",
            "f.yaml: Pod default/p: spec.volumes[0].persistentVolumeClaim.claimName: required",
        ),
    ],
)
def test_malformed_storage_objects_name_file_object_and_field(text: str, message: str) -> None:
    """Each error names the file, the object and the field, with what the API server would
    reject (required fields, enum values, ``count`` >= 0, one volume type per volume)."""
    assert _error(text) == message


def test_duplicate_storage_objects_across_files(tmp_path: Path) -> None:
    """Two PVCs with one namespace/name are duplicates; the same name in another namespace is
    not; cluster-scoped kinds ignore metadata.namespace."""
    a = tmp_path / "a.yaml"
    b = tmp_path / "b.yaml"
    a.write_text(
        "kind: PersistentVolumeClaim\nmetadata: {name: c}\n---\n"
        "kind: CSINode\nmetadata: {name: n1, namespace: x}\n"
    )
    b.write_text("kind: PersistentVolumeClaim\nmetadata: {name: c, namespace: other}\n")
    m = load_paths([str(a), str(b)])
    assert [c.key for c in m.persistent_volume_claims] == ["default/c", "other/c"]
    b.write_text("kind: CSINode\nmetadata: {name: n1}\n")
    with pytest.raises(ManifestError) as info:
        load_paths([str(a), str(b)])
    assert str(info.value) == (
        f"{b}: CSINode n1: metadata.name: duplicate object (first seen in {a})"
    )


def test_storage_kinds_are_not_skipped() -> None:
    """The storage kinds are modelled: no "kind not modelled" warning for them."""
    docs: list[Any] = [
        {"kind": "CSINode", "metadata": {"name": "n"}, "spec": {"drivers": []}},
        {
            "kind": "PersistentVolume",
            "metadata": {"name": "pv"},
            "spec": {"hostPath": {"path": "/x"}},
        },
        {"kind": "PersistentVolumeClaim", "metadata": {"name": "c"}},
        {"kind": "StorageClass", "metadata": {"name": "sc"}, "provisioner": "p"},
        {
            "kind": "VolumeAttachment",
            "metadata": {"name": "va"},
            "spec": {"attacher": "a", "nodeName": "n", "source": {"persistentVolumeName": "pv"}},
        },
        {"kind": "CSIDriver", "metadata": {"name": "d"}},
    ]
    m = decode_objects(docs, "f.yaml")
    assert m.warnings == []
    assert [d.name for d in m.csi_drivers] == ["d"]
    assert (
        len(m.csi_nodes),
        len(m.persistent_volumes),
        len(m.persistent_volume_claims),
        len(m.storage_classes),
        len(m.volume_attachments),
    ) == (1, 1, 1, 1, 1)
