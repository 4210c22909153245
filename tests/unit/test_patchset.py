"""Tests for `schedsim.snapshot.patchset` (CA ``simulator/common/patchset.go``).

Three layers of tests:

* literal tests of each operation, written against expected values;
* a matrix: scenario (where a key sits in the stack) x cache state before the operation (cold,
  warm from ``find_value``, warm from ``as_map``) x operation, each checked against `Model`;
* a hypothesis state machine comparing `PatchSet` to `Model` after every step.

`Model` is trivially correct: a stack of full dict copies (fork copies the top dict) plus, per
layer, the keys written in it (for ``in_current_patch``).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from schedsim.snapshot.patchset import Patch, PatchSet


class Val:
    """A value compared by identity, so tests notice any copy."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"Val({self.name})"


class Model:
    """A stack of full dict copies; the reference semantics."""

    def __init__(self, base: Mapping[Hashable, Any] | None = None) -> None:
        self.layers: list[dict[Hashable, Any]] = [dict(base or {})]
        self.touched: list[set[Hashable]] = [set(base or {})]

    @property
    def depth(self) -> int:
        return len(self.layers) - 1

    @property
    def top(self) -> dict[Hashable, Any]:
        return self.layers[-1]

    def fork(self) -> None:
        self.layers.append(dict(self.top))
        self.touched.append(set())

    def commit(self) -> None:
        if len(self.layers) > 1:
            top = self.layers.pop()
            self.layers[-1] = top
            touched = self.touched.pop()
            self.touched[-1] |= touched

    def revert(self) -> None:
        if len(self.layers) > 1:
            self.layers.pop()
            self.touched.pop()

    def clear(self) -> None:
        self.layers = [{}]
        self.touched = [set()]

    def set_current(self, key: Hashable, value: Any) -> None:
        self.top[key] = value
        self.touched[-1].add(key)

    def delete_current(self, key: Hashable) -> None:
        self.top.pop(key, None)
        self.touched[-1].add(key)


MISSING = Val("missing-default")


def check_lookups(ps: PatchSet[Any, Any], model: Model, keys: Iterable[Hashable]) -> None:
    """Compares in_current_patch/depth (no cache use), then find_value/get/in for ``keys``."""
    assert ps.depth == model.depth
    for key in keys:
        assert ps.in_current_patch(key) == (key in model.touched[-1]), key
    for key in keys:
        expected = model.top.get(key)
        assert ps.find_value(key) is expected, key
        assert ps.get(key, MISSING) is model.top.get(key, MISSING), key
        assert (key in ps) == (key in model.top), key


def check_map(ps: PatchSet[Any, Any], model: Model) -> None:
    """Compares as_map() with the model, by identity of values."""
    got = ps.as_map()
    assert set(got) == set(model.top)
    for key, value in model.top.items():
        assert got[key] is value, key
    assert len(got) == len(model.top)


def check(ps: PatchSet[Any, Any], model: Model, keys: Iterable[Hashable]) -> None:
    keys = list(keys)
    check_lookups(ps, model, keys)
    check_map(ps, model)
    check_lookups(ps, model, keys)  # now served by the as_map view


# --------------------------------------------------------------------------------------------
# Patch


class TestPatch:
    def test_new_patch_is_empty(self) -> None:
        p: Patch[str, Val] = Patch()
        assert p.modified == {}
        assert p.deleted == set()

    def test_from_mapping_copies_the_dict_not_the_values(self) -> None:
        v = Val("v")
        source = {"a": v}
        p = Patch(source)
        assert p.modified == source
        assert p.modified is not source
        assert p.modified["a"] is v
        source["b"] = Val("b")
        assert "b" not in p.modified

    def test_set_clears_deletion(self) -> None:
        p: Patch[str, Val] = Patch()
        p.delete("a")
        v = Val("v")
        p.set("a", v)
        assert p.modified == {"a": v}
        assert p.deleted == set()

    def test_delete_clears_modification_and_records_unknown_keys(self) -> None:
        p: Patch[str, Val] = Patch()
        p.set("a", Val("a"))
        p.delete("a")
        p.delete("never-set")
        assert p.modified == {}
        assert p.deleted == {"a", "never-set"}

    def test_merge_above_wins(self) -> None:
        a1, a2, b, c = Val("a1"), Val("a2"), Val("b"), Val("c")
        below: Patch[str, Val] = Patch({"a": a1, "b": b})
        below.delete("c")
        below.delete("d")
        above: Patch[str, Val] = Patch({"a": a2, "c": c})
        above.delete("b")
        below.merge(above)
        assert below.modified == {"a": a2, "c": c}
        assert below.modified["a"] is a2
        assert below.deleted == {"b", "d"}
        assert not (set(below.modified) & below.deleted)


# --------------------------------------------------------------------------------------------
# Literal tests, one operation at a time


class TestEmptyAndConstruction:
    def test_empty(self) -> None:
        ps: PatchSet[str, Val] = PatchSet()
        assert ps.depth == 0
        assert ps.find_value("a") is None
        assert ps.get("a") is None
        assert "a" not in ps
        assert ps.in_current_patch("a") is False
        assert dict(ps.as_map()) == {}

    def test_base_is_copied_values_are_not(self) -> None:
        a = Val("a")
        base = {"a": a}
        ps = PatchSet(base)
        base["b"] = Val("b")
        del base["a"]
        assert ps.find_value("a") is a
        assert ps.find_value("b") is None
        assert ps.as_map()["a"] is a
        assert ps.in_current_patch("a") is True  # the base patch holds it
        assert ps.depth == 0

    def test_tuple_keys(self) -> None:
        claim = Val("claim")
        ps: PatchSet[tuple[str, str], Val] = PatchSet({("default", "c1"): claim})
        assert ps.find_value(("default", "c1")) is claim
        assert ps.find_value(("other", "c1")) is None

    def test_none_values_are_present(self) -> None:
        ps: PatchSet[str, int | None] = PatchSet({"a": None})
        assert "a" in ps
        assert ps.find_value("a") is None
        assert ps.get("a", 5) is None
        assert ps.get("b", 5) == 5
        ps.fork()
        ps.set_current("b", None)
        assert "b" in ps
        assert dict(ps.as_map()) == {"a": None, "b": None}
        assert "b" in ps
        ps.revert()
        assert "b" not in ps


class TestFork:
    def test_fork_keeps_values_and_clears_current_patch(self) -> None:
        a = Val("a")
        ps = PatchSet({"a": a})
        ps.fork()
        assert ps.depth == 1
        assert ps.find_value("a") is a
        assert ps.in_current_patch("a") is False
        ps.fork()
        assert ps.depth == 2
        assert ps.find_value("a") is a

    def test_fork_is_constant_time(self) -> None:
        ps = PatchSet({i: Val(str(i)) for i in range(10_000)})
        ps.as_map()
        for _ in range(1000):
            ps.fork()
        assert ps.depth == 1000
        assert ps.find_value(5).name == "5"  # type: ignore[union-attr]


class TestSetCurrent:
    def test_set_in_base(self) -> None:
        ps: PatchSet[str, Val] = PatchSet()
        a = Val("a")
        ps.set_current("a", a)
        assert ps.find_value("a") is a
        assert ps.in_current_patch("a")
        assert ps.depth == 0

    def test_set_in_fork_shadows_and_revert_restores(self) -> None:
        a1, a2 = Val("a1"), Val("a2")
        ps = PatchSet({"a": a1})
        ps.fork()
        ps.set_current("a", a2)
        assert ps.find_value("a") is a2
        assert ps.in_current_patch("a")
        ps.revert()
        assert ps.find_value("a") is a1

    def test_set_twice_in_same_layer_last_wins(self) -> None:
        a1, a2 = Val("a1"), Val("a2")
        ps: PatchSet[str, Val] = PatchSet()
        ps.fork()
        ps.set_current("a", a1)
        ps.set_current("a", a2)
        assert ps.find_value("a") is a2
        ps.revert()
        assert ps.find_value("a") is None

    def test_set_updates_negative_cache(self) -> None:
        ps: PatchSet[str, Val] = PatchSet()
        ps.fork()
        assert ps.find_value("a") is None  # caches "absent"
        a = Val("a")
        ps.set_current("a", a)
        assert ps.find_value("a") is a
        assert "a" in ps


class TestDeleteCurrent:
    def test_delete_in_base(self) -> None:
        ps = PatchSet({"a": Val("a")})
        ps.delete_current("a")
        assert ps.find_value("a") is None
        assert "a" not in ps
        assert ps.in_current_patch("a")  # tombstone in the base patch

    def test_delete_in_fork_hides_lower_value_until_revert(self) -> None:
        a = Val("a")
        ps = PatchSet({"a": a})
        assert ps.find_value("a") is a  # warm
        ps.fork()
        ps.delete_current("a")
        assert ps.find_value("a") is None
        assert ps.in_current_patch("a")
        ps.revert()
        assert ps.find_value("a") is a
        assert ps.in_current_patch("a")

    def test_delete_with_nothing_below(self) -> None:
        ps: PatchSet[str, Val] = PatchSet()
        ps.fork()
        ps.delete_current("ghost")
        assert ps.find_value("ghost") is None
        assert ps.in_current_patch("ghost")
        assert dict(ps.as_map()) == {}
        ps.revert()
        assert ps.in_current_patch("ghost") is False

    def test_set_then_delete_same_layer(self) -> None:
        a = Val("a")
        ps: PatchSet[str, Val] = PatchSet()
        ps.fork()
        ps.set_current("a", a)
        ps.delete_current("a")
        assert ps.find_value("a") is None
        assert ps.in_current_patch("a")
        ps.commit()
        assert ps.find_value("a") is None

    def test_delete_then_set_same_layer(self) -> None:
        a1, a2 = Val("a1"), Val("a2")
        ps = PatchSet({"a": a1})
        ps.fork()
        ps.delete_current("a")
        ps.set_current("a", a2)
        assert ps.find_value("a") is a2
        ps.revert()
        assert ps.find_value("a") is a1

    def test_deleted_below_set_again_above(self) -> None:
        a1, a2 = Val("a1"), Val("a2")
        ps = PatchSet({"a": a1})
        ps.fork()
        ps.delete_current("a")
        ps.fork()
        assert ps.find_value("a") is None  # deletion in a lower layer hides it
        ps.set_current("a", a2)
        assert ps.find_value("a") is a2
        assert dict(ps.as_map()) == {"a": a2}
        ps.revert()
        assert ps.find_value("a") is None
        assert dict(ps.as_map()) == {}
        ps.revert()
        assert ps.find_value("a") is a1
        assert dict(ps.as_map()) == {"a": a1}


class TestCommit:
    def test_commit_with_one_patch_is_noop(self) -> None:
        a = Val("a")
        ps = PatchSet({"a": a})
        ps.commit()
        assert ps.depth == 0
        assert ps.find_value("a") is a

    def test_commit_merges_top_into_below(self) -> None:
        a, b1, b2, c = Val("a"), Val("b1"), Val("b2"), Val("c")
        ps = PatchSet({"a": a, "b": b1})
        ps.fork()
        ps.set_current("b", b2)
        ps.set_current("c", c)
        ps.delete_current("a")
        ps.commit()
        assert ps.depth == 0
        assert dict(ps.as_map()) == {"b": b2, "c": c}
        assert ps.as_map()["b"] is b2
        assert ps.in_current_patch("a")  # tombstone merged into the base
        assert ps.in_current_patch("c")
        ps.revert()  # no-op now
        assert dict(ps.as_map()) == {"b": b2, "c": c}

    def test_nested_commit_then_revert_drops_both(self) -> None:
        a1, a2 = Val("a1"), Val("a2")
        ps = PatchSet({"a": a1})
        ps.fork()
        ps.fork()
        ps.set_current("a", a2)
        ps.commit()
        assert ps.depth == 1
        assert ps.find_value("a") is a2
        assert ps.in_current_patch("a")
        ps.revert()
        assert ps.depth == 0
        assert ps.find_value("a") is a1

    def test_commit_deletion_over_set_in_middle(self) -> None:
        b = Val("b")
        ps: PatchSet[str, Val] = PatchSet()
        ps.fork()
        ps.set_current("b", b)
        ps.fork()
        ps.delete_current("b")
        ps.commit()
        assert ps.find_value("b") is None
        ps.revert()
        assert ps.find_value("b") is None


class TestRevert:
    def test_revert_with_one_patch_is_noop(self) -> None:
        a = Val("a")
        ps = PatchSet({"a": a})
        ps.set_current("b", Val("b"))
        ps.revert()
        assert ps.depth == 0
        assert ps.find_value("a") is a
        assert ps.find_value("b") is not None

    def test_revert_restores_exact_prior_state_warm_find(self) -> None:
        a, b = Val("a"), Val("b")
        ps = PatchSet({"a": a, "b": b})
        for k in "abc":
            ps.find_value(k)
        ps.fork()
        ps.set_current("a", Val("a2"))
        ps.delete_current("b")
        ps.set_current("c", Val("c"))
        for k in "abc":
            ps.find_value(k)
        ps.revert()
        assert ps.find_value("a") is a
        assert ps.find_value("b") is b
        assert ps.find_value("c") is None

    def test_revert_restores_exact_prior_state_warm_map(self) -> None:
        a, b = Val("a"), Val("b")
        ps = PatchSet({"a": a, "b": b})
        view = ps.as_map()
        ps.fork()
        ps.set_current("a", Val("a2"))
        ps.delete_current("b")
        ps.set_current("c", Val("c"))
        assert dict(view) == {"a": view["a"], "c": view["c"]}
        ps.revert()
        assert ps.as_map() is view
        assert dict(view) == {"a": a, "b": b}
        assert view["a"] is a

    def test_revert_middle_keys_untouched(self) -> None:
        b = Val("b")
        ps: PatchSet[str, Val] = PatchSet()
        ps.fork()
        ps.set_current("b", b)
        ps.fork()
        ps.set_current("c", Val("c"))
        ps.revert()
        assert ps.find_value("b") is b
        assert ps.find_value("c") is None
        assert ps.depth == 1


class TestInCurrentPatch:
    def test_tracks_only_the_top_patch(self) -> None:
        ps = PatchSet({"a": Val("a")})
        assert ps.in_current_patch("a")
        assert not ps.in_current_patch("b")
        ps.fork()
        assert not ps.in_current_patch("a")
        ps.set_current("b", Val("b"))
        assert ps.in_current_patch("b")
        ps.fork()
        assert not ps.in_current_patch("b")
        ps.delete_current("a")
        assert ps.in_current_patch("a")
        ps.revert()
        assert not ps.in_current_patch("a")
        assert ps.in_current_patch("b")

    def test_does_not_touch_caches(self) -> None:
        ps = PatchSet({"a": Val("a")})
        ps.fork()
        assert not ps.in_current_patch("a")
        assert ps.find_value("a") is not None


class TestAsMap:
    def test_same_object_while_nothing_changes(self) -> None:
        ps = PatchSet({"a": Val("a")})
        ps.fork()
        ps.set_current("b", Val("b"))
        m1 = ps.as_map()
        assert ps.as_map() is m1
        ps.find_value("a")
        ps.find_value("zzz")
        assert "a" in ps
        ps.in_current_patch("a")
        assert ps.as_map() is m1

    def test_view_is_live_and_survives_every_operation(self) -> None:
        a, b = Val("a"), Val("b")
        ps = PatchSet({"a": a})
        view = ps.as_map()
        ps.fork()
        assert ps.as_map() is view
        ps.set_current("b", b)
        assert ps.as_map() is view
        assert dict(view) == {"a": a, "b": b}
        ps.commit()
        assert ps.as_map() is view
        ps.fork()
        ps.delete_current("a")
        assert dict(view) == {"b": b}
        ps.revert()
        assert ps.as_map() is view
        assert dict(view) == {"a": a, "b": b}
        ps.clear()
        assert ps.as_map() is view
        assert dict(view) == {}

    def test_view_is_read_only(self) -> None:
        ps = PatchSet({"a": Val("a")})
        view = ps.as_map()
        with pytest.raises(TypeError):
            view["b"] = Val("b")  # type: ignore[index]
        with pytest.raises(TypeError):
            del view["a"]  # type: ignore[attr-defined]

    def test_copy_is_a_snapshot(self) -> None:
        a = Val("a")
        ps = PatchSet({"a": a})
        snap = dict(ps.as_map())
        ps.set_current("b", Val("b"))
        ps.delete_current("a")
        assert snap == {"a": a}

    def test_built_from_cold_state_with_many_layers(self) -> None:
        a, b, c, d = Val("a"), Val("b"), Val("c"), Val("d")
        ps = PatchSet({"a": a, "b": b, "x": Val("x")})
        ps.delete_current("ghost")
        ps.fork()
        ps.delete_current("a")
        ps.set_current("c", c)
        ps.fork()
        ps.set_current("a", a)
        ps.delete_current("x")
        ps.fork()
        ps.set_current("d", d)
        ps.delete_current("d")
        assert dict(ps.as_map()) == {"a": a, "b": b, "c": c}

    def test_values_never_copied(self) -> None:
        values = {k: [k] for k in "abc"}  # mutable, unhashable: copies would be noticed
        ps: PatchSet[str, list[str]] = PatchSet(values)
        ps.fork()
        new = ["n"]
        ps.set_current("n", new)
        ps.commit()
        m = ps.as_map()
        for k, v in values.items():
            assert m[k] is v
            assert ps.find_value(k) is v
        assert m["n"] is new


class TestClear:
    @pytest.mark.parametrize("warm", ["cold", "find", "map"])
    def test_clear_drops_everything(self, warm: str) -> None:
        ps = PatchSet({"a": Val("a")})
        ps.fork()
        ps.set_current("b", Val("b"))
        ps.fork()
        ps.delete_current("a")
        if warm == "find":
            ps.find_value("a")
            ps.find_value("b")
        elif warm == "map":
            ps.as_map()
        ps.clear()
        assert ps.depth == 0
        assert ps.find_value("a") is None
        assert ps.find_value("b") is None
        assert not ps.in_current_patch("a")
        assert dict(ps.as_map()) == {}
        ps.revert()
        ps.commit()
        assert dict(ps.as_map()) == {}
        c = Val("c")
        ps.set_current("c", c)
        ps.fork()
        assert ps.find_value("c") is c


# --------------------------------------------------------------------------------------------
# Matrix: scenario x cache state x operation, checked against the model

KEYS = ("a", "b", "c", "z")

# Each scenario is a list of steps: ("set", key), ("delete", key), ("fork",).
SCENARIOS: dict[str, list[tuple[str, ...]]] = {
    "empty": [],
    "base": [("set", "a")],
    "base_one_fork": [("set", "a"), ("fork",)],
    "in_middle_layer": [("set", "a"), ("fork",), ("set", "b"), ("fork",)],
    "in_top_layer": [("set", "a"), ("fork",), ("set", "b"), ("fork",), ("set", "c")],
    "overridden_above": [("set", "a"), ("fork",), ("set", "a"), ("fork",)],
    "deleted_below_set_above": [("set", "a"), ("fork",), ("delete", "a"), ("fork",), ("set", "a")],
    "deleted_below_fork_above": [("set", "a"), ("fork",), ("delete", "a"), ("fork",)],
    "set_then_deleted_same_layer": [("fork",), ("set", "b"), ("delete", "b")],
    "deleted_then_set_same_layer": [("set", "a"), ("fork",), ("delete", "a"), ("set", "a")],
    "deleted_in_base": [("set", "a"), ("delete", "a")],
    "deleted_nothing_below_base": [("delete", "z")],
    "deleted_nothing_below_fork": [("set", "a"), ("fork",), ("delete", "z"), ("fork",)],
    "nested_mixed": [
        ("set", "a"),
        ("set", "b"),
        ("fork",),
        ("delete", "a"),
        ("set", "c"),
        ("fork",),
        ("set", "a"),
        ("delete", "b"),
        ("fork",),
        ("delete", "c"),
    ],
}

Op = Callable[[PatchSet[str, Val], Model], None]


def _set(key: str) -> Op:
    def op(ps: PatchSet[str, Val], model: Model) -> None:
        v = Val(f"{key}-new")
        ps.set_current(key, v)
        model.set_current(key, v)

    return op


def _delete(key: str) -> Op:
    def op(ps: PatchSet[str, Val], model: Model) -> None:
        ps.delete_current(key)
        model.delete_current(key)

    return op


def _seq(*names: str) -> Op:
    def op(ps: PatchSet[str, Val], model: Model) -> None:
        for name in names:
            if name.startswith("set:"):
                _set(name[4:])(ps, model)
            elif name.startswith("delete:"):
                _delete(name[7:])(ps, model)
            else:
                getattr(ps, name)()
                getattr(model, name)()

    return op


OPERATIONS: dict[str, Op] = {
    **{f"set_{k}": _set(k) for k in KEYS},
    **{f"delete_{k}": _delete(k) for k in KEYS},
    "fork": _seq("fork"),
    "commit": _seq("commit"),
    "revert": _seq("revert"),
    "clear": _seq("clear"),
    "commit_all": _seq("commit", "commit", "commit", "commit"),
    "revert_all": _seq("revert", "revert", "revert", "revert"),
    "fork_set_revert": _seq("fork", "set:a", "delete:b", "revert"),
    "fork_set_commit": _seq("fork", "set:a", "delete:b", "commit"),
    "set_delete_revert": _seq("set:c", "delete:a", "revert"),
    "delete_set_commit": _seq("delete:a", "set:z", "commit"),
}


def build(steps: list[tuple[str, ...]]) -> tuple[PatchSet[str, Val], Model]:
    ps: PatchSet[str, Val] = PatchSet()
    model = Model()
    for i, step in enumerate(steps):
        if step[0] == "set":
            v = Val(f"{step[1]}{i}")
            ps.set_current(step[1], v)
            model.set_current(step[1], v)
        elif step[0] == "delete":
            ps.delete_current(step[1])
            model.delete_current(step[1])
        else:
            ps.fork()
            model.fork()
    return ps, model


def warm_up(ps: PatchSet[str, Val], cache: str) -> None:
    if cache == "warm_find":
        for k in KEYS:
            ps.find_value(k)
    elif cache == "warm_map":
        ps.as_map()


@pytest.mark.parametrize("op_name", list(OPERATIONS))
@pytest.mark.parametrize("cache", ["cold", "warm_find", "warm_map"])
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_matrix(scenario: str, cache: str, op_name: str) -> None:
    ps, model = build(SCENARIOS[scenario])
    warm_up(ps, cache)
    if cache != "cold":
        check_lookups(ps, model, KEYS)
    OPERATIONS[op_name](ps, model)
    check(ps, model, KEYS)
    # Once more after a second operation on the now-warm caches.
    _seq("revert")(ps, model)
    check(ps, model, KEYS)


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_matrix_cold_as_map_first(scenario: str) -> None:
    ps, model = build(SCENARIOS[scenario])
    check_map(ps, model)
    check_lookups(ps, model, KEYS)


# --------------------------------------------------------------------------------------------
# Stateful differential test

STATE_KEYS = ("a", "b", "c", ("ns", "a"))
keys_st = st.sampled_from(STATE_KEYS)


class PatchSetMachine(RuleBasedStateMachine):
    """Three PatchSets driven identically, checked against one Model.

    ``lazy`` never has as_map called (per-key cache path), ``mapped`` has it on every step
    (view path), ``mixed`` is read only by rules (cold reads, and as_map at a random time).
    ``replay_*`` rules rebuild a fresh PatchSet from the history and read it cold.
    """

    def __init__(self) -> None:
        super().__init__()
        self.model = Model()
        self.lazy: PatchSet[Hashable, Val] = PatchSet()
        self.mapped: PatchSet[Hashable, Val] = PatchSet()
        self.mixed: PatchSet[Hashable, Val] = PatchSet()
        self.view: Mapping[Hashable, Val] | None = None
        self.counter = 0
        self.base: dict[Hashable, Val] = {}
        self.history: list[tuple[str, Hashable, Val | None]] = []

    @property
    def sets(self) -> tuple[PatchSet[Hashable, Val], ...]:
        return (self.lazy, self.mapped, self.mixed)

    @initialize(base=st.dictionaries(keys_st, st.integers(), max_size=4))
    def init_base(self, base: dict[Hashable, int]) -> None:
        values = {k: Val(f"base{v}") for k, v in base.items()}
        self.model = Model(values)
        self.lazy = PatchSet(values)
        self.mapped = PatchSet(values)
        self.mixed = PatchSet(values)
        self.view = self.mapped.as_map()
        self.base = values

    @rule(key=keys_st)
    def set_current(self, key: Hashable) -> None:
        self.counter += 1
        v = Val(f"v{self.counter}")
        for ps in self.sets:
            ps.set_current(key, v)
        self.model.set_current(key, v)
        self.history.append(("set_current", key, v))

    @rule(key=keys_st)
    def delete_current(self, key: Hashable) -> None:
        for ps in self.sets:
            ps.delete_current(key)
        self.model.delete_current(key)
        self.history.append(("delete_current", key, None))

    @rule()
    def fork(self) -> None:
        for ps in self.sets:
            ps.fork()
        self.model.fork()
        self.history.append(("fork", None, None))

    @rule()
    def commit(self) -> None:
        for ps in self.sets:
            ps.commit()
        self.model.commit()
        self.history.append(("commit", None, None))

    @rule()
    def revert(self) -> None:
        for ps in self.sets:
            ps.revert()
        self.model.revert()
        self.history.append(("revert", None, None))

    @rule()
    def clear(self) -> None:
        for ps in self.sets:
            ps.clear()
        self.model.clear()
        self.history.append(("clear", None, None))

    def write(self, key: Hashable, delete: bool) -> None:
        if delete:
            self.delete_current(key)
        else:
            self.set_current(key)

    # The simulations' patterns (try a change in a fork, then drop or keep it), as single rules
    # so that random sequences reach them often.
    @rule(key=keys_st, delete=st.booleans())
    def fork_write_revert(self, key: Hashable, delete: bool) -> None:
        self.fork()
        self.write(key, delete)
        self.revert()

    @rule(key=keys_st, delete=st.booleans())
    def fork_write_commit(self, key: Hashable, delete: bool) -> None:
        self.fork()
        self.write(key, delete)
        self.commit()

    @rule(key=keys_st)
    def find_value_mixed(self, key: Hashable) -> None:
        assert self.mixed.find_value(key) is self.model.top.get(key)

    @rule()
    def as_map_mixed(self) -> None:
        check_map(self.mixed, self.model)

    def replay(self) -> PatchSet[Hashable, Val]:
        ps: PatchSet[Hashable, Val] = PatchSet(self.base)
        for name, key, value in self.history:
            if name == "set_current":
                assert value is not None
                ps.set_current(key, value)
            elif name == "delete_current":
                ps.delete_current(key)
            else:
                getattr(ps, name)()
        return ps

    @rule()
    def replay_as_map_cold(self) -> None:
        check_map(self.replay(), self.model)

    @rule()
    def replay_find_value_cold(self) -> None:
        check_lookups(self.replay(), self.model, STATE_KEYS)

    @invariant()
    def agrees_with_model(self) -> None:
        model = self.model
        assert self.mixed.depth == model.depth
        for key in STATE_KEYS:
            assert self.mixed.in_current_patch(key) == (key in model.touched[-1])
        check_lookups(self.lazy, model, STATE_KEYS)
        if self.view is not None:
            assert self.mapped.as_map() is self.view
        check_map(self.mapped, model)
        check_lookups(self.mapped, model, STATE_KEYS)


TestPatchSetStateful = PatchSetMachine.TestCase
TestPatchSetStateful.settings = settings(
    max_examples=250,
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def test_adopting_uses_the_dict_and_behaves_like_a_copy() -> None:
    """`PatchSet.adopting` takes the base dict over without copying (CA's NewSnapshot uses its
    maps as the base patch); reads, forks, commits and reverts then behave as with
    ``PatchSet(base)``."""
    base = {"a": 1, "b": 2}
    adopted: PatchSet[str, int] = PatchSet.adopting(base)
    copied: PatchSet[str, int] = PatchSet(dict(base))
    for ps in (adopted, copied):
        ps.fork()
        ps.set_current("c", 3)
        ps.delete_current("a")
        assert dict(ps.as_map()) == {"b": 2, "c": 3}
        ps.revert()
        assert dict(ps.as_map()) == {"a": 1, "b": 2}
        ps.fork()
        ps.set_current("d", 4)
        ps.commit()
    assert dict(adopted.as_map()) == dict(copied.as_map()) == {"a": 1, "b": 2, "d": 4}
    assert base == {"a": 1, "b": 2, "d": 4}  # the very dict: it was handed over
