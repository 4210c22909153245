"""NodeVolumeLimits beyond the shared ``csi-*`` cases: the parts of kube-scheduler 1.34's
``csi.go`` and csi-translation-lib those cases do not reach (error statuses, StorageClass
fallbacks, in-tree provisioners, VolumeAttachment de-duplication, translation rules).

The plugin is called directly, as upstream ``TestCSILimits`` does, with a handle whose
CSINodes come from a `CsiSnapshot` and whose PVs/PVCs/classes/attachments come from
`StorageListers`.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from schedsim.api.core import Pod
from schedsim.api.core.volumes import InTreeVolumeSource
from schedsim.api.loading.loader import decode_objects
from schedsim.framework import Code, CycleState, Handle, Status, StorageListers
from schedsim.snapshot import NodeInfo, PodInfo
from schedsim.snapshot.csi import CsiSnapshot
from schedsim_plugins.nodevolumelimits import (
    ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,
    NodeVolumeLimits,
    TranslationError,
    ebs_volume_id,
    is_csi_migration_on,
    translate_in_tree,
)

EXCEEDED = Status(Code.Unschedulable, (ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,), "NodeVolumeLimits")

BASE = """
kind: Node
metadata: {name: n1}
---
kind: CSINode
metadata: {name: n1}
spec:
  drivers:
  - {name: ebs.csi.aws.com, nodeID: n1, allocatable: {count: 2}}
  - {name: pd.csi.storage.gke.io, nodeID: n1, allocatable: {count: 1}}
  - {name: unlimited.example.com, nodeID: n1}
---
kind: StorageClass
metadata: {name: ebs}
provisioner: ebs.csi.aws.com
---
kind: StorageClass
metadata: {name: in-tree-ebs}
provisioner: kubernetes.io/aws-ebs
---
kind: StorageClass
metadata: {name: in-tree-vsphere}
provisioner: kubernetes.io/vsphere-volume
"""


def _pv(name: str, driver: str = "ebs.csi.aws.com", handle: str | None = None) -> str:
    return f"""
---
kind: PersistentVolume
metadata: {{name: {name}}}
spec: {{csi: {{driver: {driver}, volumeHandle: {handle or name}}}}}
---
kind: PersistentVolumeClaim
metadata: {{name: {name}}}
spec: {{volumeName: {name}}}
"""


def _pod(name: str, *volumes: dict[str, Any], node: str = "") -> str:
    doc: dict[str, Any] = {
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "c"}], "volumes": list(volumes)},
    }
    if node:
        doc["spec"]["nodeName"] = node
    return "\n---\n" + yaml.safe_dump(doc)


def _claim(name: str, claim: str) -> dict[str, Any]:
    return {"name": name, "persistentVolumeClaim": {"claimName": claim}}


def _run(
    text: str, pod_name: str = "new", csi_nodes: bool = True
) -> tuple[Status | None, Status | None]:
    """(PreFilter status, Filter status on n1) for pod ``pod_name``; Filter is None when
    PreFilter did not succeed."""
    m = decode_objects(list(yaml.safe_load_all(text)), "t.yaml")
    handle = Handle()
    handle.csi_manager.delegate = CsiSnapshot(m.csi_nodes if csi_nodes else ())
    handle.storage_listers.delegate = StorageListers.from_objects(
        m.persistent_volumes,
        m.persistent_volume_claims,
        m.storage_classes,
        m.volume_attachments,
    )
    plugin = NodeVolumeLimits({}, handle)
    pod: Pod = next(p for p in m.pods if p.name == pod_name)
    ni = NodeInfo(m.nodes[0], pods=[PodInfo(p) for p in m.pods if p.node_name == "n1"])
    state = CycleState()
    pre = plugin.schedsim_pre_filter(state, pod, [ni])
    if pre is not None and not pre.is_success:
        return pre, None
    return pre, plugin.schedsim_filter(state, pod, ni)


# --------------------------------------------------------------------------- statuses


def test_missing_pvc_of_new_pod_is_unresolvable() -> None:
    """filterAttachableVolumes for the new pod: a PVC lookup NotFound is returned as
    UnschedulableAndUnresolvable ``looking up PVC ns/name: persistentvolumeclaim "name" not
    found`` (the API NotFound text)."""
    _, st = _run(BASE + _pod("new", _claim("v", "ghost")))
    assert st == Status(
        Code.UnschedulableAndUnresolvable,
        ('looking up PVC default/ghost: persistentvolumeclaim "ghost" not found',),
        "NodeVolumeLimits",
    )


def test_missing_pvc_of_existing_pod_is_not_counted() -> None:
    """An existing pod's missing PVC is skipped ("no guarantee that it belongs to the running
    predicate"): 1 real volume + 1 new fits the limit of 2."""
    text = BASE + _pv("a") + _pv("b")
    text += _pod("old", _claim("v", "a"), _claim("w", "ghost"), node="n1")
    assert _run(text + _pod("new", _claim("v", "b")))[1] is None


def test_shared_volume_is_not_new_and_limit_is_per_driver() -> None:
    """A volume the node already has is not counted again; pd.csi volumes do not use the EBS
    budget; a driver without allocatable.count is never limited."""
    text = BASE + _pv("a") + _pv("b") + _pv("p1", "pd.csi.storage.gke.io")
    text += _pod("old", _claim("v", "a"), _claim("w", "b"), node="n1")
    assert _run(text + _pod("new", _claim("v", "a")))[1] is None  # already attached
    text += _pv("c") + _pv("u1", "unlimited.example.com") + _pv("u2", "unlimited.example.com")
    assert _run(text + _pod("new", _claim("v", "c")))[1] == EXCEEDED  # 2 + 1 > 2
    assert _run(text + _pod("new", _claim("v", "p1")))[1] is None  # pd: 0 + 1 <= 1
    assert _run(text + _pod("new", _claim("v", "u1"), _claim("w", "u2")))[1] is None


def test_two_volumes_of_the_new_pod_count_twice() -> None:
    """newVolumeCount sums the new pod's distinct volumes per driver: 2 new pd volumes > 1."""
    text = BASE + _pv("p1", "pd.csi.storage.gke.io") + _pv("p2", "pd.csi.storage.gke.io")
    assert _run(text + _pod("new", _claim("v", "p1"), _claim("w", "p2")))[1] == EXCEEDED
    # the same PVC twice is one volume
    assert _run(text + _pod("new", _claim("v", "p1"), _claim("w", "p1")))[1] is None


def test_volume_attachments_are_deduplicated_against_existing_pods_only() -> None:
    """getNodeVolumeAttachmentInfo: a VolumeAttachment of a volume an existing pod uses is not
    counted twice; attachments on other nodes, of missing PVs or of non-CSI PVs are ignored."""
    text = BASE + _pv("a") + _pv("b") + _pv("c")
    text += _pod("old", _claim("v", "a"), node="n1")
    text += """
---
kind: VolumeAttachment
metadata: {name: va-a}
spec: {attacher: ebs.csi.aws.com, nodeName: n1, source: {persistentVolumeName: a}}
---
kind: VolumeAttachment
metadata: {name: va-other-node}
spec: {attacher: ebs.csi.aws.com, nodeName: n2, source: {persistentVolumeName: b}}
---
kind: VolumeAttachment
metadata: {name: va-missing-pv}
spec: {attacher: ebs.csi.aws.com, nodeName: n1, source: {persistentVolumeName: nope}}
"""
    assert _run(text + _pod("new", _claim("v", "c")))[1] is None  # a (pod + VA) + c = 2
    text += """
---
kind: VolumeAttachment
metadata: {name: va-b}
spec: {attacher: ebs.csi.aws.com, nodeName: n1, source: {persistentVolumeName: b}}
"""
    assert _run(text + _pod("new", _claim("v", "c")))[1] == EXCEEDED  # a, b + c = 3


def test_ephemeral_volume_pvc_must_exist_and_be_owned() -> None:
    """Generic ephemeral volumes use the PVC ``<pod>-<volume>``: missing for the new pod is
    UnschedulableAndUnresolvable; owned by the pod, it counts through its StorageClass."""
    eph = {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}
    _, st = _run(BASE + _pod("new", eph))
    assert st is not None and st.code is Code.UnschedulableAndUnresolvable
    assert st.reasons == (
        'looking up PVC default/new-scratch: persistentvolumeclaim "new-scratch" not found',
    )
    owned = """
---
kind: PersistentVolumeClaim
metadata:
  name: new-scratch
  ownerReferences: [{apiVersion: v1, kind: Pod, name: new, uid: pod-uid, controller: true}]
spec: {storageClassName: ebs}
"""
    text = BASE + _pv("a") + _pv("b") + _pod("old", _claim("v", "a"), _claim("w", "b"), node="n1")
    pod = _pod("new", eph).replace("name: new\n", "name: new\n  uid: pod-uid\n")
    assert _run(text + owned + pod)[1] == EXCEEDED  # 2 + the ephemeral one > 2


def test_unbound_pvc_storage_class_fallback() -> None:
    """getCSIDriverInfoFromSC: an unbound PVC (or one whose PV is missing) counts under its
    class's provisioner; no class, or a class that does not exist: not counted; an in-tree
    provisioner counts under its CSI driver when the node has a CSINode, except vSphere
    (isCSIMigrationOn is false for it)."""
    text = BASE + _pv("a") + _pv("b") + _pod("old", _claim("v", "a"), _claim("w", "b"), node="n1")
    pvcs = """
---
kind: PersistentVolumeClaim
metadata: {name: unbound}
spec: {storageClassName: ebs}
---
kind: PersistentVolumeClaim
metadata: {name: lost-pv}
spec: {storageClassName: ebs, volumeName: deleted}
---
kind: PersistentVolumeClaim
metadata: {name: no-class}
---
kind: PersistentVolumeClaim
metadata: {name: unknown-class}
spec: {storageClassName: nope}
---
kind: PersistentVolumeClaim
metadata: {name: in-tree}
spec: {storageClassName: in-tree-ebs}
---
kind: PersistentVolumeClaim
metadata: {name: vsphere}
spec: {storageClassName: in-tree-vsphere}
---
kind: PersistentVolumeClaim
metadata:
  name: beta
  annotations: {volume.beta.kubernetes.io/storage-class: ebs}
"""
    text += pvcs
    for claim, want in [
        ("unbound", EXCEEDED),
        ("lost-pv", EXCEEDED),
        ("no-class", None),
        ("unknown-class", None),
        ("in-tree", EXCEEDED),
        ("vsphere", None),
        ("beta", EXCEEDED),
    ]:
        assert _run(text + _pod("new", _claim("v", claim)))[1] == want, claim


def test_no_csinode_means_no_limit_and_no_migration() -> None:
    """Without a CSINode the node has no limits (Filter passes) and in-tree volumes are not
    migrated (so an inline EBS volume with a bad ID is not even translated)."""
    text = BASE + _pv("a") + _pv("b") + _pv("c")
    text += _pod("old", _claim("v", "a"), _claim("w", "b"), node="n1")
    assert _run(text + _pod("new", _claim("v", "c")), csi_nodes=False)[1] is None
    bad = {"name": "v", "awsElasticBlockStore": {"volumeID": "aws://zone/not-a-volume"}}
    assert _run(text + _pod("new", bad), csi_nodes=False)[1] is None


def test_untranslatable_inline_volume_is_an_error() -> None:
    """checkAttachableInlineVolume: a failed translation is an Error status
    ``converting volume(<name>) from inline to csi: <translation error>``."""
    bad = {"name": "v", "awsElasticBlockStore": {"volumeID": "aws://us-east-1a/disk-1"}}
    _, st = _run(BASE + _pod("new", bad))
    assert st == Status(
        Code.Error,
        (
            "converting volume(v) from inline to csi: failed to translate Kubernetes ID to EBS "
            "Volume ID Invalid format for AWS volume (aws://us-east-1a/disk-1)",
        ),
        "NodeVolumeLimits",
    )


def test_prefilter_skips_pods_without_countable_volumes() -> None:
    """PreFilter: Skip for no volumes or only inline CSI / configMap / secret / emptyDir
    volumes; no Skip as soon as one volume is a PVC, ephemeral or a migratable in-tree one
    (vSphere too: it is migratable, even though the Filter never counts it)."""
    skip = Status(Code.Skip, (), "NodeVolumeLimits")
    inline_csi = {"name": "i", "csi": {"driver": "inline.example.com"}}
    cm = {"name": "cm", "configMap": {"name": "x"}}
    empty = {"name": "e", "emptyDir": {}}
    assert _run(BASE + _pod("new"))[0] == skip
    assert _run(BASE + _pod("new", inline_csi, cm, empty))[0] == skip
    vsphere = {"name": "v", "vsphereVolume": {"volumePath": "[ds] x.vmdk"}}
    pre, st = _run(BASE + _pod("new", inline_csi, vsphere))
    assert (pre, st) == (None, None)


# --------------------------------------------------------------------------- translation


@pytest.mark.parametrize(
    ("kubernetes_id", "ebs_id"),
    [
        ("vol-0123", "vol-0123"),
        ("aws://us-east-1a/vol-0123", "vol-0123"),
        ("aws:///vol-0123", "vol-0123"),
        ("csi-kubernetes.io/aws-ebs-0", "csi-kubernetes.io/aws-ebs-0"),  # bare IDs kept
    ],
)
def test_ebs_volume_id(kubernetes_id: str, ebs_id: str) -> None:
    """csi-translation-lib KubernetesVolumeIDToEBSVolumeID: the three accepted forms."""
    assert ebs_volume_id(kubernetes_id) == ebs_id


def test_ebs_volume_id_rejects_bad_aws_urls() -> None:
    """An ``aws://`` ID whose path is not ``vol-...``: ``Invalid format for AWS volume``."""
    with pytest.raises(TranslationError, match=r"^Invalid format for AWS volume \(aws://z/x\)$"):
        ebs_volume_id("aws://z/x")


def _gce(pd: str) -> InTreeVolumeSource:
    return InTreeVolumeSource(
        "gcePersistentDisk", "kubernetes.io/gce-pd", "pd.csi.storage.gke.io", pd
    )


@pytest.mark.parametrize(
    ("labels", "handle"),
    [
        (None, "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/d"),
        ({}, "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/d"),
        (
            {"topology.kubernetes.io/zone": "us-central1-a"},
            "projects/UNSPECIFIED/zones/us-central1-a/disks/d",
        ),
        (
            {
                "failure-domain.beta.kubernetes.io/zone": "us-central1-b",
                "topology.kubernetes.io/zone": "us-central1-a",
            },
            "projects/UNSPECIFIED/zones/us-central1-b/disks/d",
        ),
        (
            {"topology.kubernetes.io/zone": "us-central1-a__us-central1-c"},
            "projects/UNSPECIFIED/regions/us-central1/disks/d",
        ),
    ],
)
def test_gce_pd_translation(labels: dict[str, str] | None, handle: str) -> None:
    """csi-translation-lib gce_pd: inline disks and PVs without a zone get UNSPECIFIED zones;
    the beta zone label wins over the GA one; ``__``-separated zones make a regional handle."""
    assert translate_in_tree(_gce("d"), labels) == ("pd.csi.storage.gke.io", handle)


def test_gce_pd_regional_zones_must_share_a_region() -> None:
    """getRegionFromZones: zones of two regions cannot be translated."""
    with pytest.raises(TranslationError, match="multiple or no regions"):
        translate_in_tree(_gce("d"), {"topology.kubernetes.io/zone": "us-east1-a__eu-west1-b"})


def test_is_csi_migration_on() -> None:
    """isCSIMigrationOn (1.34): false without a CSINode; true for AWS EBS, GCE PD, Azure Disk
    and Cinder whatever the annotation says; false for vSphere and unknown plugins."""
    from schedsim.api.storage import CSINode

    node = CSINode("n1")
    for plugin in ("kubernetes.io/aws-ebs", "kubernetes.io/gce-pd", "kubernetes.io/azure-disk"):
        assert is_csi_migration_on(node, plugin)
        assert not is_csi_migration_on(None, plugin)
    assert is_csi_migration_on(node, "kubernetes.io/cinder")
    assert not is_csi_migration_on(node, "kubernetes.io/vsphere-volume")
    assert not is_csi_migration_on(node, "kubernetes.io/azure-file")


def test_rejects_args() -> None:
    """The plugin takes no args (upstream has none)."""
    with pytest.raises(ValueError, match="takes no args, got maxVolumes"):
        NodeVolumeLimits({"maxVolumes": 3}, Handle())


def test_snapshot_from_manifests_carries_storage_objects() -> None:
    """The plugin test kit's `snapshot_from_manifests` puts CSINodes into the snapshot and
    PVs/PVCs/classes into the handle, so NodeVolumeLimits bites through the default profile:
    the pd.csi limit of 1 takes one of two pending pods with their own pd volume."""
    from schedsim.snapshot import SchedulingError, SchedulingErrorType
    from schedsim.testing import snapshot_from_manifests

    text = BASE.replace(
        "metadata: {name: n1}\n---",
        "metadata: {name: n1}\nstatus:\n  allocatable: {pods: '10'}\n---",
        1,
    )
    text += _pv("p1", "pd.csi.storage.gke.io") + _pv("p2", "pd.csi.storage.gke.io")
    text += _pod("one", _claim("v", "p1")) + _pod("two", _claim("v", "p2"))
    snap, pending = snapshot_from_manifests(text)
    assert snap.schedule_pod_on_any_node_matching(pending[0]) == "n1"
    with pytest.raises(SchedulingError) as info:
        snap.schedule_pod_on_any_node_matching(pending[1])
    assert snap.diagnose(pending[1]).message == (
        "0/1 nodes are available: 1 node(s) exceed max volume count."
    )
    assert info.value.type is SchedulingErrorType.NO_NODES_PASSING_PREDICATES


def test_cached_counts_follow_node_changes_and_new_listers() -> None:
    """Filter caches each pod's volumes and each NodeInfo's usage; a pod added to the node
    (a new generation) and new storage listers are seen at once."""
    text = BASE + _pv("a") + _pv("b") + _pv("c")
    text += _pod("old", _claim("v", "a"), node="n1") + _pod("new", _claim("v", "c"))
    text += _pod("other", _claim("v", "b"))
    m = decode_objects(list(yaml.safe_load_all(text)), "t.yaml")
    listers = StorageListers.from_objects(m.persistent_volumes, m.persistent_volume_claims)
    handle = Handle()
    handle.csi_manager.delegate = CsiSnapshot(m.csi_nodes)
    handle.storage_listers.delegate = listers
    plugin = NodeVolumeLimits({}, handle)
    pods = {p.name: p for p in m.pods}
    ni = NodeInfo(m.nodes[0], pods=[PodInfo(pods["old"])])
    state = CycleState()
    assert plugin.schedsim_filter(state, pods["new"], ni) is None  # a + c = 2
    ni.add_pod_info(PodInfo(pods["other"]))
    assert plugin.schedsim_filter(state, pods["new"], ni) == EXCEEDED  # a, b + c = 3
    # the cluster's PVC "b" is gone: the pod using it no longer counts
    handle.storage_listers.delegate = StorageListers.from_objects(
        m.persistent_volumes, [c for c in m.persistent_volume_claims if c.name != "b"]
    )
    assert plugin.schedsim_filter(state, pods["new"], ni) is None
