"""DefaultStorageClass admission (`schedsim.api.storage.admission`) and its wiring in the loader.

Expected values follow kubernetes v1.34:
plugin/pkg/admission/storage/storageclass/setdefault/admission_test.go ``TestAdmission`` (which
claims are defaulted, which classes count as default, the two orderings of several defaults),
pkg/volume/util/storageclass.go ``GetDefaultClass`` / ``IsDefaultAnnotation``,
component-helpers ``PersistentVolumeClaimHasClass``, the PV controller's
``assignDefaultStorageClass`` (bound claims untouched) and ``IsDelayBindingMode`` (a class that
is not found means immediate binding: the missing-class warning).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from schedsim.api.errors import ManifestError
from schedsim.api.loading.loader import load_text
from schedsim.api.storage import PersistentVolume, PersistentVolumeClaim, StorageClass
from schedsim.api.storage.admission import admit_claims, default_storage_class, has_class


def _class(name: str, annotations: dict[str, str] | None = None, created: str = "") -> StorageClass:
    meta: dict[str, Any] = {"name": name}
    if annotations is not None:
        meta["annotations"] = annotations
    if created:
        meta["creationTimestamp"] = created
    return StorageClass.from_manifest(
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": meta,
            "provisioner": f"{name}.csi.example.com",
        }
    )


DEFAULT1 = _class("default1", {"storageclass.kubernetes.io/is-default-class": "true"})
DEFAULT2 = _class("default2", {"storageclass.kubernetes.io/is-default-class": "true"})
FALSE_DEFAULT = _class("nondefault1", {"storageclass.kubernetes.io/is-default-class": "false"})
NO_DEFAULT = _class("nondefault2")
EMPTY_DEFAULT = _class("nondefault3", {"storageclass.kubernetes.io/is-default-class": ""})
NON_DEFAULTS = [FALSE_DEFAULT, NO_DEFAULT, EMPTY_DEFAULT]
CREATED1_TS = "2022-01-01T00:00:01Z"
# admission_test.go's classWithCreateTime1 is the newer of the two
CREATED1 = _class(
    "default-newer",
    {"storageclass.kubernetes.io/is-default-class": "true"},
    CREATED1_TS,
)
CREATED2 = _class(
    "default-older",
    {"storageclass.kubernetes.io/is-default-class": "true"},
    "2022-01-01T00:00:00Z",
)

NO_CLASS = PersistentVolumeClaim(name="claimWithNoClass", namespace="ns")
EMPTY_CLASS = PersistentVolumeClaim(
    name="claimWithEmptyClass", namespace="ns", storage_class_name=""
)
FOO_CLASS = PersistentVolumeClaim(name="claimWithClass", namespace="ns", storage_class_name="foo")


def _admit(
    claim: PersistentVolumeClaim,
    classes: list[StorageClass],
    volumes: list[PersistentVolume] | None = None,
) -> tuple[PersistentVolumeClaim, list[str]]:
    out, warnings = admit_claims([claim], classes, volumes or [], lambda _: "in.yaml")
    return out[0], warnings


@pytest.mark.parametrize(
    ("classes", "claim", "expected"),
    [
        pytest.param(NON_DEFAULTS, NO_CLASS, None, id="no default, no modification of PVCs"),
        pytest.param(
            [DEFAULT1, *NON_DEFAULTS], NO_CLASS, "default1", id="one default, modify class=nil"
        ),
        pytest.param([DEFAULT1, *NON_DEFAULTS], EMPTY_CLASS, "", id="one default, class=''"),
        pytest.param([DEFAULT1, *NON_DEFAULTS], FOO_CLASS, "foo", id="one default, class='foo'"),
        pytest.param(
            [DEFAULT2, DEFAULT1, *NON_DEFAULTS],
            NO_CLASS,
            "default1",
            id="two defaults with same creation time, choose the one with smaller name",
        ),
        pytest.param([DEFAULT1, DEFAULT2, *NON_DEFAULTS], EMPTY_CLASS, "", id="two defaults ''"),
        pytest.param(
            [DEFAULT1, DEFAULT2, *NON_DEFAULTS], FOO_CLASS, "foo", id="two defaults, 'foo'"
        ),
        pytest.param(
            [CREATED2, CREATED1, *NON_DEFAULTS],
            NO_CLASS,
            "default-newer",
            id="two defaults, choose the one with newer creation time",
        ),
    ],
)
def test_admission_matches_upstream_table(
    classes: list[StorageClass], claim: PersistentVolumeClaim, expected: str | None
) -> None:
    """setdefault ``TestAdmission``'s cases: only a claim with ``storageClassName`` unset is
    defaulted; ``""`` and ``foo`` stay; annotations ``"false"``, ``""`` or absent do not make a
    default; several defaults: newest, then the smaller name. A claim that needs no change is
    returned as the same object (inputs are never modified)."""
    admitted, warnings = _admit(claim, classes)
    assert admitted.storage_class_name == expected
    if expected == claim.storage_class_name:
        assert admitted is claim
    # "foo" is not among the classes: the missing-class warning, and only for it
    assert len(warnings) == (claim is FOO_CLASS)


def test_beta_default_annotation_counts() -> None:
    """``IsDefaultAnnotation``: ``storageclass.beta.kubernetes.io/is-default-class: "true"``
    marks a default as the GA annotation does."""
    beta = _class("beta", {"storageclass.beta.kubernetes.io/is-default-class": "true"})
    assert beta.is_default
    assert default_storage_class([NO_DEFAULT, beta]) is beta
    assert not FALSE_DEFAULT.is_default and not EMPTY_DEFAULT.is_default


def test_beta_class_annotation_is_a_class() -> None:
    """``PersistentVolumeClaimHasClass``: the beta annotation ``volume.beta.kubernetes.io/
    storage-class`` is a class request even with ``spec.storageClassName`` unset, so the
    claim is not defaulted."""
    claim = PersistentVolumeClaim(
        name="c", annotations={"volume.beta.kubernetes.io/storage-class": "default2"}
    )
    assert has_class(claim)
    assert not has_class(NO_CLASS) and has_class(EMPTY_CLASS)
    admitted, _ = _admit(claim, [DEFAULT1, DEFAULT2])
    assert admitted is claim and admitted.storage_class == "default2"


def test_default_ordering_newest_then_name() -> None:
    """``GetDefaultClass``: newest ``creationTimestamp`` first, equal timestamps by name
    ascending (storageclass.go's sort); a hand-written class without a timestamp counts as
    applied now, newer than any exported one."""
    same_a = _class("a", {"storageclass.kubernetes.io/is-default-class": "true"}, CREATED1_TS)
    same_b = _class("b", {"storageclass.kubernetes.io/is-default-class": "true"}, CREATED1_TS)
    assert default_storage_class([same_b, same_a, CREATED2]) is same_a
    assert default_storage_class([CREATED1, CREATED2]) is CREATED1
    assert default_storage_class([CREATED2, CREATED1]) is CREATED1
    assert default_storage_class([CREATED1, DEFAULT2]) is DEFAULT2
    assert default_storage_class([DEFAULT2, DEFAULT1, CREATED1]) is DEFAULT1
    assert default_storage_class(NON_DEFAULTS) is None
    assert CREATED1.creation_timestamp == datetime(2022, 1, 1, 0, 0, 1, tzinfo=UTC)


def test_fully_bound_claim_is_left_as_read() -> None:
    """The retroactive assignment only runs from ``syncUnboundClaim``; a fully bound claim
    (``volumeName`` and bind-completed) of an exported cluster keeps no class."""
    bound = PersistentVolumeClaim(
        name="c",
        volume_name="pv1",
        annotations={"pv.kubernetes.io/bind-completed": "yes"},
    )
    admitted, warnings = _admit(bound, [DEFAULT1])
    assert admitted is bound and admitted.storage_class_name is None and warnings == []


def test_pre_bound_claim_is_defaulted_and_warned_when_its_pv_lacks_the_class() -> None:
    """Admission runs at creation whatever ``spec.volumeName`` says (the docs' reserving-a-PV
    example sets ``storageClassName: ""`` for that reason); the PV controller's
    ``checkVolumeSatisfyClaim`` then refuses the classless PV, and a warning says why."""
    pre_bound = PersistentVolumeClaim(name="c", namespace="ns", volume_name="pv1")
    pv = PersistentVolume(name="pv1")
    admitted, warnings = _admit(pre_bound, [DEFAULT1], [pv])
    assert admitted.storage_class_name == "default1"
    assert admitted.volume_name == "pv1" and pre_bound.storage_class_name is None
    assert warnings == [
        "in.yaml: PersistentVolumeClaim ns/c: spec.storageClassName: unset, so "
        'DefaultStorageClass admission sets the default "default1", which PersistentVolume '
        '"pv1" (class "") does not have: the claim does not bind to it (set '
        'storageClassName: "" to reserve a PV without a class)'
    ]
    same_class = PersistentVolume(name="pv1", storage_class_name="default1")
    assert _admit(pre_bound, [DEFAULT1], [same_class])[1] == []


def test_missing_class_warning_one_per_claim_then_aggregated() -> None:
    """``IsDelayBindingMode`` returns false for a class that is not found: the warning names
    each claim; several claims of one file naming the same absent class share one line."""
    one, warnings = _admit(FOO_CLASS, [DEFAULT1])
    assert one is FOO_CLASS
    assert warnings == [
        "in.yaml: PersistentVolumeClaim ns/claimWithClass: spec.storageClassName: "
        'StorageClass "foo" not found; kube-scheduler treats the claim as immediate binding'
    ]
    claims = [PersistentVolumeClaim(name=f"c{i}", storage_class_name="gp3") for i in range(7)]
    _, warnings = admit_claims(claims, [], [], lambda _: "many.yaml")
    assert warnings == [
        "many.yaml: 7 PersistentVolumeClaims (default/c0, default/c1, default/c2, default/c3, "
        'default/c4 and 2 more): spec.storageClassName: StorageClass "gp3" not found; '
        "kube-scheduler treats the claims as immediate binding"
    ]


def test_claims_without_a_class_never_warn() -> None:
    """A claim with ``""`` or with no class and no default names no class: no warning."""
    out, warnings = admit_claims([EMPTY_CLASS, NO_CLASS], [NO_DEFAULT], [], lambda _: "x")
    assert out == [EMPTY_CLASS, NO_CLASS] and warnings == []


_MANIFESTS = """
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: standard
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: ebs.csi.aws.com
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: unset, namespace: app}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: empty, namespace: app}
spec:
  storageClassName: ""
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: app}
spec:
  replicas: 1
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: db, image: postgres}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
"""


def test_loader_admits_read_claims_and_statefulset_claims() -> None:
    """After reading and expanding workloads, every claim passes admission: the read claim
    without a class and the StatefulSet's ``data-db-0`` get ``standard``; ``""`` stays."""
    m = load_text(_MANIFESTS, "in.yaml")
    classes = {c.key: c.storage_class_name for c in m.persistent_volume_claims}
    assert classes == {"app/unset": "standard", "app/empty": "", "app/data-db-0": "standard"}
    assert m.source_of(m.persistent_volume_claims[0]) == "in.yaml"
    assert not any("PersistentVolumeClaim" in w for w in m.warnings)


def test_malformed_creation_timestamp_is_refused() -> None:
    """``metadata.creationTimestamp`` orders default classes, so it is decoded as the API
    server decodes a ``metav1.Time`` (RFC 3339) and a bad one stops the load."""
    text = (
        "apiVersion: storage.k8s.io/v1\nkind: StorageClass\n"
        "metadata: {name: s, creationTimestamp: yesterday}\nprovisioner: x\n"
    )
    with pytest.raises(ManifestError) as err:
        load_text(text, "bad.yaml")
    assert str(err.value) == (
        "bad.yaml: StorageClass s: metadata.creationTimestamp: invalid RFC 3339 timestamp "
        "'yesterday' (expected e.g. 2024-01-02T03:04:05Z)"
    )


_PRE_BOUND = """
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-local}
spec:
  capacity: {storage: 10Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: local-storage
  hostPath: {path: /mnt/data}
  claimRef: {namespace: app, name: data}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: app}
spec:
  storageClassName: local-storage
  volumeName: pv-local
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
"""


def test_claim_bound_once_settled_gets_no_missing_class_warning() -> None:
    """A claim whose ``spec.volumeName`` names a PV reserved for it by ``claimRef`` is bound by
    the PV controller's ``syncUnboundClaim`` (the rule `complete_bindings` and the volume
    listers apply), bind-completed annotation or not; VolumeBinding's ``FindPodVolumes`` then
    reads the PV (``isPVCFullyBound``), not the class: no missing-class warning. The same
    claim naming a PV reserved for another claim stays unbound and is warned about."""
    m = load_text(_PRE_BOUND, "in.yaml")
    assert not any("not found" in w for w in m.warnings)
    other = _PRE_BOUND.replace("name: data}", "name: other}", 1)
    m = load_text(other, "in.yaml")
    assert [w for w in m.warnings if "not found" in w] == [
        "in.yaml: PersistentVolumeClaim app/data: spec.storageClassName: StorageClass "
        '"local-storage" not found; kube-scheduler treats the claim as immediate binding'
    ]


@pytest.mark.parametrize("value", ["True", "yes", "1"])
def test_default_annotation_other_than_true_is_not_default_and_warned(value: str) -> None:
    """``IsDefaultAnnotation`` (pkg/volume/util/storageclass.go) compares with exactly
    ``"true"``: the class is not the default (no claim defaulted), and a warning says so."""
    text = _MANIFESTS.replace('is-default-class: "true"', f'is-default-class: "{value}"')
    m = load_text(text, "in.yaml")
    classes = {c.key: c.storage_class_name for c in m.persistent_volume_claims}
    assert classes == {"app/unset": None, "app/empty": "", "app/data-db-0": None}
    assert [w for w in m.warnings if "StorageClass standard" in w] == [
        "in.yaml: StorageClass standard: metadata.annotations: "
        f'storageclass.kubernetes.io/is-default-class: "{value}" is not "true": this class is '
        'not the default (kube-apiserver and the PV controller accept exactly "true")'
    ]


def test_false_or_empty_default_annotation_is_not_warned() -> None:
    """``"false"`` and ``""`` (admission_test.go's classWithFalseDefault/classWithEmptyDefault)
    plainly say "not the default"; a "true" GA annotation wins over an odd beta one."""
    assert [c.not_default_values for c in NON_DEFAULTS] == [(), (), ()]
    both = _class(
        "both",
        {
            "storageclass.kubernetes.io/is-default-class": "true",
            "storageclass.beta.kubernetes.io/is-default-class": "yes",
        },
    )
    assert both.is_default and both.not_default_values == ()
