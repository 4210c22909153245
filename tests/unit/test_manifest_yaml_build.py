"""Manifest YAML is built from the composed nodes directly when the text has no alias
(`schedsim.api.loading.manifest_text`), and must give exactly what PyYAML's constructor with the
manifest rules gives: the same values (YAML 1.1 scalars as PyYAML's SafeLoader resolves
them, timestamps kept as strings, keys spelled as sigs.k8s.io/yaml spells them, merge keys)
and the same errors (kubectl's ``key "a" already set in map`` duplicate check, bad tagged
scalars, unknown tags, syntax errors with their line and column).

A text with an alias always takes PyYAML's own construction, so each case is compared with
itself followed by a document holding an alias (the extra document is dropped)."""

from __future__ import annotations

import inspect
import sys

import pytest

from schedsim.api.errors import ManifestError
from schedsim.api.loading.manifest_text import parse_text

WITH_ALIAS = "\n---\nextra: &anchor 1\nagain: *anchor\n"

CASES = [
    "a: 1\na: 2\n",
    "yes: 1\nno: 2\n",
    "1: a\n2.5: b\n",
    "~: x\n",
    "[a]: 1\n",
    "<<: {a: 1}\nb: 2\n",
    "t: 2024-13-45\n",
    "t: 2024-01-01T00:00:00Z\n",
    "i: 0x1F\nj: 1_000\nk: 0o17\nl: 1:30\n",
    "f: .inf\ng: -.Inf\nk: 1e3\n",
    "n: ~\nm: null\no:\n",
    "b: !!binary aGVsbG8=\n",
    "s: !!set {a, b}\n",
    "o: !!omap [{a: 1}, {b: 2}]\n",
    "x: !!str 123\n",
    "x: !!str [a]\n",
    "x: !!int abc\n",
    "x: !!bool maybe\n",
    "x: !foo bar\n",
    "x: !!null [1]\n",
    "x: !!int 99999999999999999999999999999999999999999\n",
    "---\n---\na: 1\n",
    "# only a comment\n",
    "a: 'quoted'\nb: \"dq\\n\"\nc: |\n  multi\n  line\nd: >\n  folded\n",
    "- a\n- b: c\n",
    "a: [1, 2, {b: [3]}]\n",
    "a: {b: 1, b: 2}\n",
    "x: !!map {a: 1}\n",
    "a: b\n\tc: d\n",
    "x: &a 1\ny: 2\n",
    "a: yes\nb: on\nc: True\n",
    "\"a\": 1\n'a': 2\n",
    "? [a, b]\n: c\n",
    "apiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {app: web}}\nspec:\n"
    "  containers:\n  - name: c\n    resources: {requests: {cpu: 100m, memory: 1Gi}}\n",
]


def _outcome(text: str) -> tuple[str, object]:
    try:
        return "ok", parse_text(text, "in.yaml")
    except ManifestError as e:
        return "error", str(e)


@pytest.mark.parametrize("text", CASES)
def test_direct_build_equals_pyyaml_construction(text: str) -> None:
    """Same documents, or the same error line, with and without the direct build."""
    direct = _outcome(text)
    kind, value = _outcome(text + WITH_ALIAS)
    if kind == "ok":
        assert isinstance(value, list)
        value = value[:-1]
    assert direct == (kind, value)


def test_nesting_deeper_than_the_stack_allows_falls_back() -> None:
    """With less stack left than the nesting needs (recursion limit lowered for the test),
    the direct build gives up and PyYAML's construction (which does not recurse per level)
    reads the text: the same value as before, not a RecursionError."""
    text = "a: " + "[" * 400 + "]" * 400 + "\n"
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack()) + 200)
    try:
        docs = parse_text(text, "in.yaml")
    finally:
        sys.setrecursionlimit(limit)
    assert docs == parse_text(text + WITH_ALIAS, "in.yaml")[:-1]
    depth, v = 0, docs[0]["a"]
    while v:
        v, depth = v[0], depth + 1
    assert depth == 399


def test_memoized_resolution_keeps_each_scalars_own_tag() -> None:
    """The loader memoizes PyYAML's tag resolution per (text, plain/quoted): one text
    resolves to different types plain and quoted, and repeats keep their first tag (YAML
    1.1 as PyYAML's SafeLoader resolves it: ``1`` int, ``"1"`` str, ``yes`` bool, ``~``
    null, ``1.5`` float)."""
    text = 'a: 1\nb: "1"\nc: 1\nd: yes\ne: "yes"\nf: yes\ng: ~\nh: "~"\ni: 1.5\nj: "1.5"\nk: 1.5\n'
    want = {
        "a": 1,
        "b": "1",
        "c": 1,
        "d": True,
        "e": "yes",
        "f": True,
        "g": None,
        "h": "~",
        "i": 1.5,
        "j": "1.5",
        "k": 1.5,
    }
    assert parse_text(text, "f.yaml") == [want]
    assert parse_text(text + WITH_ALIAS, "f.yaml")[0] == want


def test_memoized_hooks_resolve_as_pyyaml_safe_loader() -> None:
    """The loader's cheap resolver hooks (memoized ``resolve``, no-op descend/ascend) give
    every implicit YAML 1.1 scalar the type PyYAML's pure-Python ``SafeLoader`` gives it
    (ints in every base, sexagesimals, floats, booleans, nulls), repeated scalars and quoted
    ones included; ``*`` inside a value is not taken for an alias."""
    import yaml

    scalars = [
        "1", "-7", "0x1F", "0o17", "017", "1_000", "1:30", "0b101", "1.5", "1e3", ".inf",
        "-.Inf", ".nan", "yes", "No", "on", "OFF", "true", "False", "~", "null", "", "abc",
        "'1'", '"yes"', "a*b", "'*x'",
    ]  # fmt: skip
    text = "".join(f"k{i}: {s}\nr{i}: {s}\n" for i, s in enumerate(scalars))
    text += "seq: [1, yes, ~, x*y]\n---\nother: [on, 0x10, '0x10']\n"
    got = parse_text(text, "in.yaml")
    want = list(yaml.load_all(text, Loader=yaml.SafeLoader))
    assert repr(got) == repr(want)  # repr: nan != nan, and 1 == True


def test_the_bracket_depth_bound_counts_brackets_anywhere_in_the_text() -> None:
    """`_may_nest_deeply`'s flow bound is ``max - min`` of the running bracket count over
    every ``[ { ] }`` of the text (the regex scan it replaced, recomputed here), whatever
    other characters surround them (non-ASCII, lone surrogates)."""
    import re
    from itertools import accumulate

    from schedsim.api.loading.manifest_text import _DEEP, _may_nest_deeply

    def bound(text: str) -> bool:
        steps = {"[": 1, "{": 1, "]": -1, "}": -1}
        if text.count("[") + text.count("{") <= _DEEP:
            return False
        running = list(accumulate(steps[c] for c in re.findall(r"[\[\]{}]", text)))
        return max(running) - min(0, min(running)) > _DEEP

    texts = [
        "a: [" * (_DEEP + 1),
        "é{\ud800x: [1, 2]}" * (_DEEP + 1),
        "[]" * (_DEEP + 5),
        "}" * 10 + "{" * (_DEEP - 5) + "x" + "]" * 20,
        "]" * (_DEEP + 1) + "[" * (_DEEP + 1),
        "ü" * 100 + "{" * _DEEP,
    ]
    for text in texts:
        assert _may_nest_deeply(text) is bound(text), text[:20]
    assert _may_nest_deeply("a: [" * (_DEEP + 1))
    assert not _may_nest_deeply("[]" * (_DEEP + 5))
