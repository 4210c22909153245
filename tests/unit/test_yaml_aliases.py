"""YAML alias limits (issue 15 repro 4): an alias bomb inside opaque DRA parameters is
refused when read, as kubectl / the API server's go-yaml decoder refuses it
(``document contains excessive aliasing``, decode.go ``allowedAliasRatio``), while ordinary
anchors and aliases keep working."""

from __future__ import annotations

import pytest

from schedsim.api.errors import ManifestError
from schedsim.api.loading.loader import load_text
from schedsim.api.loading.yaml_aliases import AliasError, check_aliasing

CLAIM = """apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c, namespace: default}
spec:
  devices:
    requests: [{name: r, exactly: {deviceClassName: x}}]
    config:
    - opaque:
        driver: d
        parameters:
"""

# 687 bytes in the repro; each level multiplies by 9: 9**9 lists when walked as a tree
BOMB = CLAIM + "".join(
    f"          {c}: &{c} [{', '.join([f'*{p}'] * 9) if p else ', '.join(['lol'] * 9)}]\n"
    for p, c in zip(["", *"abcdefgh"], "abcdefghi", strict=True)
)


def test_alias_bomb_in_opaque_parameters_is_refused_at_once() -> None:
    """go-yaml stops decoding once more than 99% of >1,000 decoded nodes came through aliases;
    the file is refused naming the problem, without walking 9**9 nodes."""
    with pytest.raises(ManifestError) as info:
        load_text(BOMB, "bomb.yaml")
    assert str(info.value) == "bomb.yaml: not valid YAML: document contains excessive aliasing"


def test_recursive_anchor_is_refused() -> None:
    """go-yaml: ``anchor 'a' value contains itself``; PyYAML builds a cyclic list instead."""
    with pytest.raises(ManifestError) as info:
        load_text(CLAIM + "          a: &a [1, *a]\n", "loop.yaml")
    assert "anchor value contains itself" in str(info.value)


def test_ordinary_anchors_and_aliases_still_load() -> None:
    """A few aliases (a shared label map, a merge key) are well within go-yaml's ratio."""
    text = """apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: n1
    labels: &labels {zone: a, pool: gpu}
  status:
    allocatable: &alloc {cpu: "4", memory: 8Gi, pods: "10"}
    capacity: *alloc
- apiVersion: v1
  kind: Node
  metadata: {name: n2, labels: *labels}
  status: {allocatable: {<<: *alloc, cpu: "8"}}
"""
    m = load_text(text, "ok.yaml")
    assert [n.name for n in m.nodes] == ["n1", "n2"]
    assert m.nodes[1].labels == {"zone": "a", "pool": "gpu"}


def test_ratio_scales_with_document_size() -> None:
    """Between 400,000 and 4,000,000 decoded nodes the allowed alias share falls from 99% to
    10%; a document with no shared nodes is never refused, however large."""
    big = [[i, i + 1] for i in range(50_000)]
    check_aliasing(big)
    shared = [0] * 10
    check_aliasing([shared] * 2000)  # ~91% of the nodes through aliases: allowed (<= 99%)
    shared = [0] * 1000
    with pytest.raises(AliasError):
        check_aliasing([shared] * 200)  # ~99.4%: refused
