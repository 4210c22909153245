"""Fuzz: mutated copies of the shipped example manifests through ``schedsim simulate``.

Issue 15's attack fed 1,218 bad inputs; this keeps a bounded version of it in the suite.
Each example is a real document set; hypothesis drops, duplicates or retypes fields, puts odd
strings and huge numbers in them, and runs ``simulate`` in-process with both stores. The
promises checked (docs/cli.md): exit status 0, 1 or 2; no traceback; the input file is not
modified; the delta and basic stores (CA's reference store) print the same output.
Size: ``SCHEDSIM_FUZZ_EXAMPLES`` (default 40, ~30 s).
"""

from __future__ import annotations

import contextlib
import io
import os
import tempfile
import traceback
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedsim.cli import main
from schedsim.engine import STORES

MAX_EXAMPLES = int(os.environ.get("SCHEDSIM_FUZZ_EXAMPLES", "40"))
"""Examples per run (~0.7 s each); more for a longer hunt, with SCHEDSIM_FUZZ_RANDOM=1 for
new ones each run (the default run is derandomized: the same inputs every time)."""
EXAMPLES = Path(__file__).parents[2] / "src" / "schedsim" / "examples"
FILES = ("demo-cluster.yaml", "gpu-cluster.yaml", "ebs-volume-limits.yaml")
DOCS = {f: list(yaml.safe_load_all((EXAMPLES / f).read_text())) for f in FILES}

ODD = st.sampled_from(
    [
        "",
        " ",
        "UPPER",
        "a/b",
        "x y",
        "line\nbreak",
        "\x1b[31mred",
        "\u202eevil",
        "ä" * 3,
        "9" * 40,
        "-1",
        "1e309",
        " 1_0 ",
        "500m",
        "9999999999999999999Ei",
        "true",
        "null",
        "a" * 300,
    ]
)
HUGE = st.sampled_from([2**64, -(2**63) - 1, 10**30, -1, 0, 1.5, 1e308, float("inf")])
VALUE = st.one_of(
    ODD,
    HUGE,
    st.none(),
    st.booleans(),
    st.just([]),
    st.just({}),
    st.just(["x"]),
    st.just({"k": "v"}),
)
ACTIONS = ("drop", "duplicate", "replace", "retype")


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into ``doc`` (dict keys and list indexes)."""
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _paths(v, (*prefix, i))
    return out


def _retype(v: Any) -> Any:
    if isinstance(v, str):
        return int(v) if v.isdigit() else [v]
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int | float):
        return str(v)
    if isinstance(v, list):
        return {"0": v[0]} if v else "[]"
    if isinstance(v, dict):
        return list(v.values())
    return "None"


def _mutate(doc: Any, path: tuple[Any, ...], action: str, value: Any) -> Any:
    """``doc`` with one change at ``path`` (a new object; ``doc`` is not changed)."""
    if not path:
        return value if action in ("replace", "retype") else doc
    head, *rest = path
    if isinstance(doc, dict):
        new = dict(doc)
        if rest:
            new[head] = _mutate(doc[head], tuple(rest), action, value)
        elif action == "drop":
            del new[head]
        elif action == "duplicate":
            new[f"{head}"] = doc[head]
            new[f"{head}-copy"] = doc[head]
        elif action == "retype":
            new[head] = _retype(doc[head])
        else:
            new[head] = value
        return new
    new_list = list(doc)
    if rest:
        new_list[head] = _mutate(doc[head], tuple(rest), action, value)
    elif action == "drop":
        del new_list[head]
    elif action == "duplicate":
        new_list.insert(head, doc[head])
    elif action == "retype":
        new_list[head] = _retype(doc[head])
    else:
        new_list[head] = value
    return new_list


@st.composite
def mutated(draw: st.DrawFn) -> tuple[str, str]:
    name = draw(st.sampled_from(FILES))
    docs = list(DOCS[name])
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(docs) - 1))
        path = draw(st.sampled_from(_paths(docs[i])))
        action = draw(st.sampled_from(ACTIONS))
        docs[i] = _mutate(docs[i], path, action, draw(VALUE))
    return name, yaml.safe_dump_all(docs, allow_unicode=True)


def _run(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(args)
    except SystemExit as e:  # argparse
        code = e.code if isinstance(e.code, int) else 2
    except Exception:
        pytest.fail(f"schedsim {' '.join(args)} raised:\n{traceback.format_exc()}")
    return code, out.getvalue(), err.getvalue()


@settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    derandomize=not os.environ.get("SCHEDSIM_FUZZ_RANDOM"),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(mutated())
def test_mutated_examples(case: tuple[str, str]) -> None:
    """Exit 0/1/2, no traceback, input untouched, both stores agree (issue 15 build item)."""
    name, text = case
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / name
        f.write_text(text)
        before = f.read_bytes()
        results = {
            store: _run(["simulate", str(f), "--store", store, "-o", "json"]) for store in STORES
        }
        assert f.read_bytes() == before
    for code, _, err in results.values():
        assert code in (0, 1, 2), err
        assert "Traceback" not in err, err
    assert results["delta"] == results["basic"]
