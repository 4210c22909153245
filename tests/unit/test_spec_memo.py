"""The loader decodes and validates each distinct pod spec of a file once
(`schedsim.api.loading.spec_memo`): the pods must come out exactly as decoding each alone gives
them (`Pod.from_manifest` without the memo), problems must still be reported for every pod
that has them (the API server validates each object it is given), and a spec whose decoding
depends on the pod's labels (pod affinity ``matchLabelKeys``, merged into the selector as
kube-apiserver's PodAffinityTerm defaulting does since 1.31) must not be shared between pods
with other labels."""

from __future__ import annotations

import pytest

from schedsim.api.core import Pod
from schedsim.api.errors import FieldError, ManifestError
from schedsim.api.loading.loader import load_text
from schedsim.api.loading.manifest_text import parse_text
from schedsim.api.loading.spec_memo import SpecMemo

POD = """apiVersion: v1
kind: Pod
metadata: {{name: {name}, labels: {{app: {app}}}}}
spec:
  containers:
  - name: c
    image: img:1
    resources: {{requests: {{cpu: 100m, memory: 64Mi}}}}
{extra}"""


def _pods(*pods: tuple[str, str, str]) -> str:
    return "---\n".join(POD.format(name=n, app=a, extra=e) for n, a, e in pods)


def test_memoized_pods_equal_pods_decoded_alone() -> None:
    """Same field values as a fresh decode of each document; the shared spec's parts are
    one object (the second pod hits the memo)."""
    affinity = (
        "  affinity:\n    podAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
        "      - labelSelector: {matchLabels: {tier: x}}\n        topologyKey: zone\n"
        "        matchLabelKeys: [app]\n"
    )
    text = _pods(("a", "web", ""), ("b", "web", ""), ("c", "web", affinity), ("d", "db", affinity))
    pods = load_text(text, "in.yaml", expand_workloads=False).pods
    alone = [Pod.from_manifest(doc) for doc in parse_text(text, "in.yaml")]
    assert [p.name for p in pods] == ["a", "b", "c", "d"]
    for got, want in zip(pods, alone, strict=True):
        assert got.uid == want.uid
        assert got.tolerations[: len(want.tolerations)] == want.tolerations
        assert (got.containers, got.affinity, got.labels) == (
            want.containers,
            want.affinity,
            want.labels,
        )
    assert pods[0].containers is pods[1].containers
    # matchLabelKeys [app] merged the pod's own label value: web for c, db for d
    assert pods[2].affinity != pods[3].affinity
    assert pods[2].affinity == alone[2].affinity and pods[3].affinity == alone[3].affinity


def test_every_pod_with_a_bad_spec_is_reported() -> None:
    """Two pods with the same invalid spec (an invalid container name, refused by
    ValidatePodSpec's DNS-label rule): one problem line per pod, as without the memo."""
    bad = _pods(("a", "web", ""), ("b", "web", "")).replace("name: c\n", "name: C_bad\n")
    with pytest.raises(ManifestError) as e:
        load_text(bad, "in.yaml")
    lines = str(e.value).splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("in.yaml: Pod default/a: spec.containers[0].name: ")
    assert lines[1].startswith("in.yaml: Pod default/b: spec.containers[0].name: ")


def test_a_decoding_error_is_raised_again() -> None:
    """A spec that fails to decode is not stored: the memo computes it again and raises
    again (the same FieldError)."""
    memo = SpecMemo()
    (doc,) = parse_text(_pods(("a", "web", "  priority: high\n")), "in.yaml")
    for _ in range(2):
        with pytest.raises(FieldError) as e:
            Pod.from_manifest(doc, memo)
        assert e.value.field == "spec.priority"


def test_metadata_problems_come_before_spec_problems() -> None:
    """With a bad label and a bad spec field, the label is named (metadata, then spec,
    then status)."""
    (doc,) = parse_text(_pods(("a", "web", "  priority: high\n")), "in.yaml")
    doc["metadata"]["labels"] = {"app": 1}
    with pytest.raises(FieldError) as e:
        Pod.from_manifest(doc)
    assert e.value.field.startswith("metadata.labels")


def test_text_is_repr_and_reuses_the_last_key() -> None:
    """The key of a subtree is its repr (types and key order count); the subtree keyed
    just before is not printed again."""
    memo = SpecMemo()
    a = {"x": 1, "y": [True, None, 1.0]}
    assert memo.text(a) == repr(a)
    assert memo.text(a) is memo.text(a)
    assert memo.text({"y": [True, None, 1.0], "x": 1}) != memo.text(a)
    assert memo.text({"x": True, "y": [1, None, 1]}) != repr(a)
