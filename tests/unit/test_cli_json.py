"""`schedsim.cli.json_text.dumps` writes exactly what ``json.dumps(doc, indent=2)`` writes (the
standard library's documented output: ``ensure_ascii``, ``","`` and ``": "`` separators
with an indent, ``[]``/``{}`` for empty containers), for every document, the ones it hands
to ``json.dumps`` (floats, non-string keys) included."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedsim.cli.json_text import dumps

_SCALARS = st.none() | st.booleans() | st.integers() | st.text() | st.floats(allow_nan=False)
_DOCS = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=30,
)


@given(_DOCS)
@settings(max_examples=300, deadline=None)
def test_same_text_as_json_dumps(doc: Any) -> None:
    """Any nesting of the JSON types (tuples written as lists, unicode escaped)."""
    assert dumps(doc) == json.dumps(doc, indent=2)


@pytest.mark.parametrize(
    "doc",
    [
        {"pods": [], "summary": {}, "warnings": ["a\nb", 'ü\u2028"\\']},
        {"x": [[], {}, [[]], {"y": {}}]},
        {"n": [True, False, None, 0, -1, 10**30]},
        {1: "non-string key", "f": 1.5},
        {"nan": float("nan"), "inf": [float("inf")]},
        "just a string",
        [],
    ],
)
def test_edge_documents(doc: Any) -> None:
    """Escapes, empty containers, big ints; floats and an int key (json.dumps's path)."""
    assert dumps(doc) == json.dumps(doc, indent=2)


def test_unwritable_value_raises_what_json_raises() -> None:
    """A value JSON cannot hold: json.dumps's TypeError."""
    with pytest.raises(TypeError, match="not JSON serializable"):
        dumps({"a": {1, 2}})
