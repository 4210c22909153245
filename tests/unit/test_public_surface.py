"""``import schedsim`` gives the library's entry point and the errors users catch, resolved
lazily (PEP 562) so that the package, which every submodule import runs first, costs nothing
and cannot cycle through the engine."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import schedsim

INIT = Path(schedsim.__file__)


def test_each_public_name_is_the_defining_modules_object() -> None:
    """Every name in ``__all__`` resolves, to the very object its module defines."""
    assert len(schedsim.__all__) == len(set(schedsim.__all__))
    for name in schedsim.__all__:
        source = schedsim._SOURCES[name]
        assert getattr(schedsim, name) is getattr(importlib.import_module(source), name), name
    assert sorted(schedsim.__all__) == dir(schedsim)


def test_the_type_checking_block_names_the_same_modules() -> None:
    """mypy reads the TYPE_CHECKING imports, the runtime `_SOURCES`: they must agree."""
    tree = ast.parse(INIT.read_text(encoding="utf-8"))
    block = next(n for n in tree.body if isinstance(n, ast.If))
    imported = {
        alias.name: node.module
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert imported == schedsim._SOURCES
    assert set(imported) == set(schedsim.__all__)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'simulate'"):
        schedsim.simulate  # noqa: B018


def test_the_errors_are_exceptions() -> None:
    for name in (
        "DraSnapshotError",
        "ManifestError",
        "NodeGroupError",
        "PluginError",
        "SchedulingError",
    ):
        assert issubclass(getattr(schedsim, name), Exception), name


def _loaded_after(statement: str) -> set[str]:
    """The schedsim subpackages a fresh interpreter has imported after ``statement``."""
    code = (
        f"{statement}\nimport sys\n"
        "print('\\n'.join(sorted({'.'.join(m.split('.')[:2]) for m in sys.modules "
        "if m.startswith('schedsim')})))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout
    return set(out.split())


def test_importing_the_api_does_not_import_the_engine() -> None:
    """``import schedsim.api`` (and ``schedsim.api.core``) loads the package and the api
    layer only: none of framework, snapshot, scheduler, autoscaler, engine."""
    assert _loaded_after("import schedsim.api") == {"schedsim", "schedsim.api"}
    assert _loaded_after("import schedsim.api.core") == {"schedsim", "schedsim.api"}


def test_a_public_name_imports_its_layers_on_first_use() -> None:
    """The check above can fail: touching ``schedsim.Engine`` does import the engine."""
    assert "schedsim.engine" in _loaded_after("import schedsim; schedsim.Engine")
    assert "schedsim.engine" not in _loaded_after("import schedsim; schedsim.ManifestError")
