"""Inputs that used to give tracebacks or silently different objects (issue 15 repro 7).

- YAML 1.1 boolean keys (``yes``, ``on``) and number keys are spelled as kubectl's
  YAML-to-JSON conversion spells them (sigs.k8s.io/yaml ``convertToJSONableObject``:
  ``"true"``, ``"1"``), not ``"True"``; ``True`` and ``1`` no longer collide; a null key is
  refused there ("unsupported map key") and here.
- A lone UTF-16 surrogate in a JSON string has no UTF-8 form: refused naming the file,
  where it gave a UnicodeEncodeError traceback.
"""

from __future__ import annotations

import pytest

from schedsim.api.errors import ManifestError
from schedsim.api.loading.loader import load_text

NODE = """apiVersion: v1
kind: Node
metadata:
  name: n1
  labels:
{labels}
status:
  allocatable: {{cpu: "1", pods: "10"}}
"""


def test_yaml_11_boolean_and_number_keys_become_json_keys() -> None:
    m = load_text(NODE.format(labels='    yes: "on"\n    1: "2"\n    off: x'), "n.yaml")
    assert m.nodes[0].labels == {"true": "on", "1": "2", "false": "x"}


def test_null_key_is_refused() -> None:
    with pytest.raises(ManifestError) as info:
        load_text(NODE.format(labels="    null: x"), "n.yaml")
    assert str(info.value) == "n.yaml: not valid YAML: line 6, column 5: unsupported map key: null"


def test_merge_keys_still_merge() -> None:
    text = """apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: n1, labels: &l {zone: a}}
  status: {allocatable: {cpu: "1", pods: "10"}}
- apiVersion: v1
  kind: Node
  metadata: {name: n2, labels: {<<: *l, pool: gpu}}
  status: {allocatable: {cpu: "1", pods: "10"}}
"""
    assert load_text(text, "l.yaml").nodes[1].labels == {"zone": "a", "pool": "gpu"}


def test_lone_surrogate_in_json_is_refused() -> None:
    text = '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p\\ud800"},"spec":{}}'
    with pytest.raises(ManifestError) as info:
        load_text(text, "p.json")
    assert str(info.value) == (
        "p.json: not valid JSON: lone surrogate \\ud800 in string 'p\\ud800'"
    )


def test_paired_surrogates_are_fine() -> None:
    """An escaped pair is one character (U+1F600), valid UTF-8."""
    text = (
        '{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1",'
        '"annotations":{"e":"\\ud83d\\ude00"}},"status":{"allocatable":{"pods":"1"}}}'
    )
    assert load_text(text, "n.json").nodes[0].name == "n1"
