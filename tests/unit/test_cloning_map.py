"""`CloningMap` (the clone-on-fork reference map of `DraSnapshot(clone_on_fork=True)`) forks,
commits and reverts like `PatchSet`.

Regression: ``commit`` was ``stack[-2] = stack.pop()``, which pops before it indexes: at depth 2
it raised IndexError (every DRA mutation of a ``clone_on_fork`` snapshot commits its own
transaction fork, so scheduling a pod with claims failed), and deeper it overwrote the layer
two below with the top copy, so the middle copy became the top and the commit was lost.
``depth`` counted copies (1 when not forked) where `PatchSet` counts forks (0).
"""

from __future__ import annotations

import pytest

from schedsim.snapshot.cloning import CloningMap
from schedsim.snapshot.patchset import PatchSet


@pytest.mark.parametrize("make", [CloningMap, PatchSet], ids=["cloning", "patchset"])
def test_commit_keeps_the_top_layer(make: type[CloningMap[str, int] | PatchSet[str, int]]) -> None:
    m = make({"base": 0})
    m.fork()
    m.set_current("a", 1)
    m.commit()
    assert dict(m.as_map()) == {"base": 0, "a": 1}
    m.revert()  # not forked: no-op
    assert dict(m.as_map()) == {"base": 0, "a": 1}


@pytest.mark.parametrize("make", [CloningMap, PatchSet], ids=["cloning", "patchset"])
def test_nested_commit_merges_into_the_layer_below(
    make: type[CloningMap[str, int] | PatchSet[str, int]],
) -> None:
    m = make({"base": 0})
    assert m.depth == 0
    m.fork()
    m.set_current("a", 1)
    m.fork()
    assert m.depth == 2
    m.set_current("b", 2)
    m.delete_current("base")
    m.commit()
    assert m.depth == 1
    assert dict(m.as_map()) == {"a": 1, "b": 2}
    m.revert()  # drops the merged layer: back to the base
    assert dict(m.as_map()) == {"base": 0}
    m.revert()  # not forked any more: no-op
    assert dict(m.as_map()) == {"base": 0}
