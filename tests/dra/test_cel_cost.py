"""The cost bound of DRA CEL selectors (issue 15, repro 2).

Kubernetes refuses at validation a selector whose estimated worst-case cost exceeds
``CELSelectorExpressionMaxCost`` (1 000 000), ``Forbidden: too complex, exceeds cost limit``
(pkg/apis/resource/validation ``validateCELSelector``), and stops evaluation at the same
number of actual cost units. The expected costs below are ``expectCost`` of ``TestCEL`` in
``staging/src/k8s.io/dynamic-resource-allocation/cel/compile_test.go`` (the cases that apply
to 1.34: scalar attributes), which pin cel-go's estimate with the DRA size estimator.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from schedsim.api.resource import Device, DeviceAttribute
from schedsim.cli import main
from schedsim.dra.cel import CelCache, CelCompileError, CelRuntimeError
from schedsim.dra.cel_ast import checked_tree
from schedsim.dra.cel_cost import MAX_COST, TOO_COMPLEX, estimate_cost

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"

LIST = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"
EXPENSIVE = (
    f"{LIST}.all(x, {LIST}.all(y, {LIST}.all(z, {LIST}.all(z2, {LIST}.all(z3, "
    f"{LIST}.all(z4, {LIST}.all(z5, int('1'.find('[0-9]*')) < 100)))))))"
)
REPLACE_8 = "'aaaaaaaaaa'" + ".replace('a','aaaaaaaaaa')" * 8 + ".size() > 0"
"""Issue 15's repro: 23 s and 1 GB to evaluate before; the API server refuses it."""

D = 'device.attributes["dra.example.com"]'
UPSTREAM_COSTS = {
    "runtime-error-lookup-identifier": (
        'device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0"))',
        6,
    ),
    "runtime-error-lookup-map": (
        'device.attributes["no-such-domain"]["noSuchAttr"].isGreaterThan(quantity("0"))',
        6,
    ),
    "domain-check-negative": ('"no-such-domain" in device.attributes', 3),
    "empty-driver-name": ('device.driver == ""', 2),
    "real-driver-name": ('device.driver == "dra.example.com"', 4),
    "driver-name-qualifier": (f"{D}.name", 4),
    "driver-name-qualifier-map-lookup": (f'{D}["name"]', 4),
    "bind": (f"cel.bind(dra, {D}, dra.name)", 15),
    "int": (f"{D}.name > 0", 5),
    "string": (f'{D}.name == "fish"', 5),
    "version": (f'{D}.name.isGreaterThan(semver("0.0.1"))', 6),
    "version_v": (
        f'{D}.name.isGreaterThan(semver("v0.0.1", true)) && isSemver("v1.0.0", true)',
        7,
    ),
    "quantity": ('device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))', 6),
    "check-positive": (
        '"name" in device.capacity["dra.example.com"] && '
        'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
        10,
    ),
    "check-negative": (
        '!("name" in device.capacity["dra.example.com"]) || '
        'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
        11,
    ),
    "many": (f"{D}.a && {D}.b && {D}.c", 12),
    "check_attribute_domains": ('device.attributes.exists_one(x, x == "dra.example.com")', 164),
    "check_attribute_ids": (f'{D}.exists_one(x, x == "services")', 133),
    "split_attribute": (f'{D}.services.split("example").size() >= 2', 19),
    "regexp_attribute": (f'{D}.services.matches("[^a]?sym")', 18),
    "check_capacity_domains": ('device.capacity.exists_one(x, x == "dra.example.com")', 164),
    "check_capacity_ids": (
        'device.capacity["dra.example.com"].exists_one(x, x == "memory")',
        133,
    ),
    "expensive": (EXPENSIVE, 85555551),
}


@pytest.mark.parametrize("name", sorted(UPSTREAM_COSTS))
def test_estimate_is_cel_gos(name: str) -> None:
    """The estimate over cel-cpp's checked tree equals cel-go's ``expectCost``."""
    expression, want = UPSTREAM_COSTS[name]
    compiled = CelCache().compile(expression)
    assert compiled.cost == want, compiled.error


def test_expensive_is_refused_with_the_api_servers_words() -> None:
    """validation_test.go ``CEL-cost``: ``Forbidden: too complex, exceeds cost limit``."""
    compiled = CelCache().compile(EXPENSIVE)
    assert compiled.error == (
        f"{TOO_COMPLEX} (estimated worst-case cost 85555551 exceeds the budget of {MAX_COST})"
    )


def test_chained_replace_is_refused_in_bounded_time() -> None:
    """Repro 2: each ``replace`` multiplies the worst-case size by the replacement's, so the
    estimate passes the budget and the selector is refused before any evaluation (the
    evaluation took 23 s and 1 GB)."""
    cache = CelCache()
    started = time.process_time()
    compiled = cache.compile(REPLACE_8)
    spent = time.process_time() - started
    assert compiled.error is not None and compiled.error.startswith(TOO_COMPLEX)
    assert compiled.cost > MAX_COST
    with pytest.raises(CelCompileError, match="too complex"):
        cache.matches(REPLACE_8, "d", Device(name="x"))
    assert cache.evaluations == 0
    assert spent < 5, "refusing must not evaluate the expression"
    # fewer replacements stay under the budget, as in cel-go (sizes 10 -> 110 -> 1210 ...)
    three = "'aaaaaaaaaa'" + ".replace('a','aaaaaaaaaa')" * 3 + ".size() > 0"
    assert cache.compile(three).error is None


def test_refused_at_load_through_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """At load, like the API server: exit 2, ``FILE: KIND NS/NAME: FIELD: problem``."""
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "c"},
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "gpu",
                        "exactly": {
                            "deviceClassName": "gpu",
                            "selectors": [{"cel": {"expression": REPLACE_8}}],
                        },
                    }
                ]
            }
        },
    }
    device_class = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu"},
    }
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {
            "containers": [{"name": "c"}],
            "resourceClaims": [{"name": "gpu", "resourceClaimName": "c"}],
        },
    }
    f = tmp_path / "in.yaml"
    f.write_text(yaml.safe_dump_all([device_class, claim, pod]))
    code = main(["simulate", str(f)])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err == (
        f"schedsim: error: {f}: ResourceClaim default/c: "
        "spec.devices.requests[0].exactly.selectors[0].cel.expression: "
        f"{TOO_COMPLEX} (estimated worst-case cost 42871778 exceeds the budget of 1000000)\n"
    )


def test_runtime_guard_for_a_device_beyond_the_declared_bounds() -> None:
    """A selector within budget for the API's sizes (attribute values up to 64 characters)
    but not for a device that exceeds them is not evaluated: cel-go's runtime message."""
    expression = f'{D}.s.matches("{"a?" * 2000}")'
    cache = CelCache()
    assert cache.compile(expression).error is None
    small = Device(name="ok", attributes={"s": DeviceAttribute("string", "a" * 64)})
    assert cache.matches(expression, "dra.example.com", small) is True
    huge = Device(name="big", attributes={"s": DeviceAttribute("string", "a" * 100_000)})
    with pytest.raises(CelRuntimeError, match="operation cancelled: actual cost limit exceeded"):
        cache.matches(expression, "dra.example.com", huge)


def _selectors(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = []
        cel = node.get("cel")
        if isinstance(cel, dict) and isinstance(cel.get("expression"), str):
            found.append(cel["expression"])
        for v in node.values():
            found += _selectors(v)
        return found
    if isinstance(node, list):
        return [s for v in node for s in _selectors(v)]
    return []


def _real_selectors() -> list[str]:
    roots = [
        SHARED / "examples",
        SHARED / "cases",
        ROOT / "examples",
        ROOT / "src" / "schedsim" / "examples",
        ROOT / "tests" / "cases" / "upstream",  # the transcribed upstream tables: always here
    ]
    found: set[str] = set()
    for root in roots:
        for f in sorted(root.rglob("*.yaml")) if root.is_dir() else []:
            try:
                docs = list(yaml.safe_load_all(f.read_text()))
            except (yaml.YAMLError, UnicodeDecodeError):
                continue
            for doc in docs:
                found.update(_selectors(doc))
    return sorted(found - {"expressionValue"})  # the API testdata's placeholder


def test_real_selectors_stay_within_budget() -> None:
    """No selector of the real DRA examples, the upstream cases (some are meant not to
    compile; the transcribed tables are in the repo, so this runs without ../shared too) and
    the shipped examples is refused for its cost; every one that compiles is far
    below the budget."""
    selectors = _real_selectors()
    if not selectors:
        pytest.skip(f"no selectors found (is {SHARED} there?)")
    cache = CelCache()
    costs = {}
    for s in selectors:
        compiled = cache.compile(s, consumable_capacity=True)  # the larger environment
        assert not (compiled.error or "").startswith(TOO_COMPLEX), s
        if compiled.error is None:
            costs[s] = compiled.cost
    assert len(costs) >= 10
    assert max(costs.values()) < MAX_COST / 1000, costs


def test_checked_tree_is_cel_cpps() -> None:
    """The tree read from ``serialize()`` has the call, its target and its overloads."""
    from cel_expr_python import cel  # type: ignore[import-untyped]

    env = cel.NewEnv(variables={"x": cel.Type.STRING})
    tree = checked_tree(env.compile("x.size() > 2").serialize())
    assert (tree.kind, tree.name, tree.overloads) == ("call", "_>_", ("greater_int64",))
    size, two = tree.children
    assert (size.name, size.has_target, size.children[0].name, two.value) == ("size", True, "x", 2)
    assert estimate_cost(tree) == 3  # x (1) + size (1) + > (1)
