"""The layout is the architecture: every module's imports are walked against the layer list
(Kubernetes checks its import rules the same way, with import-boss and ``.import-restrictions``
files): ``api <- dra <- framework <- snapshot <- scheduler <- autoscaler <- engine <- replay
<- report <- sweep``, with the test kit and ``cli`` on top; kube-scheduler lives in
``scheduler/``, the Cluster Autoscaler in ``autoscaler/`` (its clustersnapshot in
``snapshot/``); plugins use ``api``, ``dra`` and ``framework`` only; ``ray`` is imported only
in ``sweep/ray.py``; no module imports another package's private (``_x``) names."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "schedsim"
PLUGINS = ROOT / "plugins" / "schedsim_plugins"

LAYERS = (
    "api",
    "dra",
    "framework",
    "snapshot",
    "scheduler",
    "autoscaler",
    "engine",
    "replay",
    "report",
    "sweep",
    "testing",
    "cli",
)
"""Bottom to top: a module may import its own layer and the layers before it. ``testing``
(the kit for plugin and store authors) builds through the engine; ``cli`` (the
``schedsim`` command, one module per subcommand) is the top."""

TOP_LEVEL = {
    "__init__": "engine",
}
"""Modules directly in ``schedsim/``, by layer. ``schedsim/__init__.py`` re-exports the
engine's entry point (lazily), so it sits at the engine's layer: no module below may import
names from ``schedsim`` itself."""


def test_every_top_level_module_has_a_layer() -> None:
    """A new ``schedsim/x.py`` must be listed in `TOP_LEVEL`: an unlisted one would have no
    layer, and its imports would go unchecked."""
    modules = {p.stem for p in SRC.glob("*.py")}
    assert modules - set(TOP_LEVEL) == set()


PLUGIN_LAYERS = frozenset({"api", "dra", "framework"})

PRIVATE_ALLOWED: set[str] = set()
"""Private modules other packages may still import (debt, named here so it stays visible)."""


def _layer(module: str) -> str | None:
    """The layer of ``schedsim.x.y`` (None for modules outside schedsim, or ``examples``)."""
    parts = module.split(".")
    if parts[0] != "schedsim":
        return None
    if len(parts) == 1:  # the package itself: its public surface
        return TOP_LEVEL["__init__"]
    head = parts[1]
    if head in TOP_LEVEL:
        return TOP_LEVEL[head]
    return head if head in LAYERS else None


def _module_name(path: Path) -> str:
    base = SRC.parent if path.is_relative_to(SRC) else PLUGINS.parent
    rel = path.relative_to(base).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, module: str | None = None) -> Iterator[tuple[int, str, tuple[str, ...]]]:
    """(line, imported module, imported names) for every import in the file (whose module
    name is ``module``, by default its place in the tree), lazy ones in functions included;
    relative imports resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    name = module or _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, ()
        elif isinstance(node, ast.ImportFrom):
            imported = node.module or ""
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                imported = ".".join([*base, imported] if imported else base)
            yield node.lineno, imported, tuple(a.name for a in node.names)


def _files() -> list[Path]:
    return sorted([*SRC.rglob("*.py"), *PLUGINS.rglob("*.py")])


def test_layer_list_names_every_package() -> None:
    """Every package under schedsim/ is in the layer list (a new package must be placed)."""
    packages = {p.name for p in SRC.iterdir() if (p / "__init__.py").exists()}
    assert packages - {"examples"} <= set(LAYERS)


@pytest.mark.parametrize("path", _files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_follow_the_layers(path: Path) -> None:
    """No module imports a layer above its own; plugins import api, dra and framework only;
    ``ray`` only in ``sweep/ray.py``; no other package's private names."""
    module = _module_name(path)
    in_plugins = module.split(".")[0] == "schedsim_plugins"
    own = None if in_plugins else _layer(module)
    own_package = ".".join(module.split(".")[:2])
    problems = []
    for line, imported, names in _imports(path):
        where = f"{path.relative_to(ROOT)}:{line}"
        if imported.split(".")[0] == "ray" and module != "schedsim.sweep.ray":
            problems.append(f"{where}: imports ray (only schedsim/sweep/ray.py may)")
        target = _layer(imported)
        if target is None:
            continue
        if in_plugins:
            if target not in PLUGIN_LAYERS:
                problems.append(f"{where}: a plugin imports {imported} (layer {target})")
        elif own is not None and LAYERS.index(target) > LAYERS.index(own):
            problems.append(f"{where}: {own} imports {imported} (layer {target}, above it)")
        foreign = ".".join(imported.split(".")[:2]) != own_package or in_plugins
        if foreign and imported not in PRIVATE_ALLOWED:
            private = [p for p in imported.split(".") if p.startswith("_") and p != "__init__"]
            private += [
                n for n in names if n.startswith("_") and f"{imported}.{n}" not in PRIVATE_ALLOWED
            ]
            if private:
                problems.append(f"{where}: imports private {', '.join(private)} of {imported}")
    assert not problems, "\n".join(problems)


def test_the_check_catches_an_upward_import(tmp_path: Path) -> None:
    """The walker sees lazy and relative imports (so the test above can fail)."""
    f = tmp_path / "m.py"
    f.write_text("def f():\n    from schedsim.engine import Engine\n    from . import _x\n")
    found = {(m, n) for _, m, n in _imports(f, "schedsim.snapshot.m")}
    assert ("schedsim.engine", ("Engine",)) in found
    assert ("schedsim.snapshot", ("_x",)) in found
    assert LAYERS.index("engine") > LAYERS.index(_layer("schedsim.snapshot.m") or "")


def test_the_public_surface_counts_as_the_engine_layer(tmp_path: Path) -> None:
    """``from schedsim import Engine`` below the engine is an upward import, even though
    `schedsim.__getattr__` would make it work at run time."""
    assert _layer("schedsim") == "engine"
    f = tmp_path / "m.py"
    f.write_text("from schedsim import Engine\n")
    ((_, imported, _),) = _imports(f, "schedsim.snapshot.m")
    assert LAYERS.index(_layer(imported) or "") > LAYERS.index("snapshot")
