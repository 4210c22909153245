"""Docs that are generated or quoted from code stay in step with it."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from schedsim.cli import reference
from schedsim.framework.hookspec import reference_markdown

ROOT = Path(__file__).resolve().parents[2]

DOCS = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
"""The pages a reader finds: README.md and docs/*.md."""

FOREIGN_FLAGS = {
    "--strict": "mypy",
    "--benchmark-enable": "pytest-benchmark",
    "--config-settings": "pip install",
    "--enable-csi-node-aware-scheduling": "cluster-autoscaler (a flag schedsim does not take)",
    "--max-nodegroup-binpacking-duration": "cluster-autoscaler (not emulated)",
    "--skip-nodes-with-custom-controller-pods": "cluster-autoscaler (always on here)",
    "--blocking-system-pod-distruption-timeout": "cluster-autoscaler (its spelling)",
    "--min-replica-count": "cluster-autoscaler (not emulated)",
    "--debugging-snapshot-enabled": "cluster-autoscaler (the snapshots schedsim reads)",
}
"""Flags the pages name that belong to another program, with the program."""

READER_PATHS = {
    "src/maxpods/__init__.py": "the reader's own plugin package (writing-plugins.md)",
    "tests/test_maxpods.py": "the reader's own plugin package (writing-plugins.md)",
    "tests/typing_check.py": "the reader's own plugin package (writing-plugins.md)",
    "v1.34.0-local-strict/_definitions.json": "a file inside the kubernetes-validate wheel",
}
"""Paths the pages name that are not in this repository, and where they are."""

_FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
_PATH = re.compile(
    r"(?<![\w./-])((?:[\w.-]+/)+[\w.-]+\.(?:py|md|yaml|yml|json|toml|csv|txt|html|cfg))\b"
)
_PATH_ROOTS = ("", "src/", "src/schedsim/", "plugins/")
"""Where a path a page names may start: the repo, or inside src/ (``schedsim/x.py``), the
package (``snapshot/delta.py``) or plugins/ (``schedsim_plugins/nodeports.py``)."""


def benchmark_flags() -> set[str]:
    """The flags the benchmark scripts define (string literals ``"--x"`` in benchmarks/)."""
    return {
        flag
        for script in (ROOT / "benchmarks").glob("*.py")
        for flag in re.findall(r"[\"'](--[a-z][a-z0-9-]*)[\"']", script.read_text("utf-8"))
    }


def unknown_flags(text: str, known: set[str] | frozenset[str]) -> list[str]:
    """``LINE: --flag`` for every flag in ``text`` that is not in ``known``."""
    return [
        f"{number}: {m.group()}"
        for number, line in enumerate(text.splitlines(), 1)
        for m in _FLAG.finditer(line)
        if m.group() not in known
    ]


def missing_paths(text: str) -> list[str]:
    """``LINE: path`` for every repository path in ``text`` that does not exist (upstream Go
    paths and parent-relative ones, ``../x.yaml``, are not this repository's)."""
    return [
        f"{number}: {m.group(1)}"
        for number, line in enumerate(text.splitlines(), 1)
        for m in _PATH.finditer(line)
        if not m.group(1).startswith("../")
        and m.group(1) not in READER_PATHS
        and not any((ROOT / base / m.group(1)).is_file() for base in _PATH_ROOTS)
    ]


def test_hook_reference_is_in_step_with_the_hook_specs() -> None:
    """docs/hooks.md is generated from the hook spec docstrings (command in its header)."""
    assert (ROOT / "docs" / "hooks.md").read_text(encoding="utf-8") == reference_markdown()


def test_score_plugin_walk_through_shows_the_tested_example_verbatim() -> None:
    """docs/writing-plugins.md section 6 quotes examples/zone-preference-plugin (whose tests
    run with the suite and whose types test_typing checks) file for file."""
    doc = (ROOT / "docs" / "writing-plugins.md").read_text(encoding="utf-8")
    example = ROOT / "examples" / "zone-preference-plugin"
    for path in (
        example / "src" / "schedsim_zone_preference" / "__init__.py",
        example / "tests" / "test_zone_preference.py",
    ):
        code = path.read_text(encoding="utf-8")
        assert f"```python\n{code}```" in doc, path


def test_cli_reference_is_in_step_with_the_parser() -> None:
    """docs/cli.md's generated blocks equal what `schedsim.cli.reference` makes from the
    parser: run ``python -m schedsim.cli.reference docs/cli.md`` after changing a flag."""
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert reference.rewrite(text) == text


def test_cli_reference_names_every_option_with_its_aliases_and_help() -> None:
    """Each command's block lists every option string (aliases included: ``-o``) and the
    help text argparse prints for it."""
    parser = reference.build_parser()
    blocks = reference.command_blocks(parser)
    simulate = blocks["schedsim simulate"]
    assert "| `--output`, `-o` | `table\\|json\\|yaml\\|kss` |" in simulate
    assert "usage: schedsim simulate [-h]" in simulate
    assert "[--namespace NS | --all-namespaces]" in simulate
    assert (
        "| `--max-nodes-per-scaleup` | `N` | new nodes one group's estimate may add"
        in (blocks["schedsim scale-up"])
    )
    for name in ("simulate", "plugins", "scale-up", "scale-down", "replay", "sweep"):
        assert f"| `schedsim {name}` |" in blocks["schedsim"]
    for flag in reference.option_strings(parser):
        assert any(f"`{flag}`" in block for block in blocks.values()), flag


def test_cli_reference_rewrite_detects_stale_and_misplaced_blocks() -> None:
    """A stale block is rewritten (so the in-step test can fail); a page without a
    command's block, or with a block for no command, is refused with the marker to add."""
    blocks = {"schedsim": "new", "schedsim x": "x"}

    def page(*names: str, body: str = "old") -> str:
        return "".join(
            f"prose\n<!-- generated: {n} (python -m schedsim.cli.reference docs/cli.md) -->\n"
            f"{body}\n<!-- end generated: {n} -->\n"
            for n in names
        )

    assert reference.rewrite(page("schedsim", "schedsim x"), blocks) != page(
        "schedsim", "schedsim x"
    )
    assert reference.rewrite(page("schedsim", "schedsim x"), blocks).count("prose\n") == 2
    with pytest.raises(reference.MarkerError, match="no generated block for schedsim x"):
        reference.rewrite(page("schedsim"), blocks)
    with pytest.raises(reference.MarkerError, match="no command 'schedsim y'"):
        reference.rewrite(page("schedsim", "schedsim x", "schedsim y"), blocks)
    with pytest.raises(reference.MarkerError, match="never closed"):
        reference.rewrite(page("schedsim", "schedsim x").rsplit("<!-- end", 1)[0], blocks)


def test_cli_reference_command_line_reports_bad_markers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``python -m schedsim.cli.reference FILE`` exits 2 with one line naming FILE."""
    bad = tmp_path / "cli.md"
    bad.write_text("# nothing generated\n", encoding="utf-8")
    assert reference.main([str(bad)]) == 2
    assert capsys.readouterr().err.startswith(f"schedsim-reference: error: {bad}: no generated")


@pytest.mark.parametrize("page", DOCS, ids=lambda p: p.name)
def test_every_flag_the_docs_name_exists(page: Path) -> None:
    """Every ``--flag`` in README.md and docs/*.md is a flag of the schedsim parser, of a
    benchmark script, or listed in FOREIGN_FLAGS with the program it belongs to."""
    known = reference.option_strings() | benchmark_flags() | set(FOREIGN_FLAGS)
    assert unknown_flags(page.read_text(encoding="utf-8"), known) == []


def test_the_flag_check_catches_a_misspelt_flag() -> None:
    """The spelling docs/cli.md once had: CA's flag (and ours) is --max-nodes-per-scaleup."""
    known = reference.option_strings()
    assert unknown_flags("a\nscale-up `--max-nodes-per-scale-up` 10", known) == [
        "2: --max-nodes-per-scale-up"
    ]
    assert unknown_flags("`--max-nodes-per-scaleup 10`", known) == []


@pytest.mark.parametrize("page", DOCS, ids=lambda p: p.name)
def test_every_repo_path_the_docs_name_exists(page: Path) -> None:
    """Every file path in README.md and docs/*.md exists in the repository (from its root,
    src/, src/schedsim/ or plugins/), unless READER_PATHS says where it lives instead."""
    assert missing_paths(page.read_text(encoding="utf-8")) == []


def test_the_path_check_catches_a_wrong_path() -> None:
    """docs/architecture.md once named sweeps/ray.py; the module is sweep/ray.py."""
    assert missing_paths("`sweeps/ray.py`\n`sweep/ray.py` `src/schedsim/sweep/ray.py`") == [
        "1: sweeps/ray.py"
    ]


def module_map(text: str) -> list[str]:
    """The modules docs/architecture.md's "Module map" section lists: the first cell of each
    table row, a path under src/schedsim/ (or plugins/ for ``schedsim_plugins/...``)."""
    section = text.split("\n## Module map\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([\w/]+\.py)` \|", section, flags=re.MULTILINE)


def package_modules() -> set[str]:
    """Every module of the distribution, as the module map names them."""
    src = ROOT / "src" / "schedsim"
    plugins = ROOT / "plugins"
    return {str(p.relative_to(src)) for p in src.rglob("*.py")} | {
        str(p.relative_to(plugins)) for p in (plugins / "schedsim_plugins").rglob("*.py")
    }


def test_module_map_lists_every_module_once() -> None:
    """docs/architecture.md's module map has one row per module of src/schedsim and
    plugins/schedsim_plugins, and no row for a module that does not exist: a new module
    needs its row (and a removed one loses it) in the same change."""
    listed = module_map((ROOT / "docs" / "architecture.md").read_text(encoding="utf-8"))
    assert sorted(p for p in set(listed) if listed.count(p) > 1) == []
    assert sorted(package_modules() - set(listed)) == [], "modules without a row"
    assert sorted(set(listed) - package_modules()) == [], "rows for no module"


def test_module_map_check_sees_missing_and_extra_rows() -> None:
    """The parse the map test relies on finds rows, and only in the map's section."""
    page = (
        "intro\n## Module map\n\n| module | purpose |\n|---|---|\n| `scheduler/queue.py` | q |\n"
        "| `sweeps/ray.py` | r |\n\n## Next\n\n| `api/quantity.py` | elsewhere |\n"
    )
    listed = module_map(page)
    assert listed == ["scheduler/queue.py", "sweeps/ray.py"]
    assert set(listed) - package_modules() == {"sweeps/ray.py"}
    assert "api/quantity.py" in package_modules() - set(listed)


NOT_PYTHON_NAMES = {
    "schedsim.io": "the annotation prefix (schedsim.io/duration)",
    "schedsim.plugins": "the entry-point group plugins register in",
}
"""Dotted names the pages use that are not Python names, and what they are."""


def unresolved_names(text: str) -> list[str]:
    """``LINE: name`` for every ``schedsim.x.y`` in ``text`` that is neither a module nor an
    attribute of one (``schedsim.scheduler.scheduling.gc_paused``)."""
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        for m in re.finditer(r"(?<![\w./-])(schedsim(?:_plugins)?(?:\.[A-Za-z_]\w*)+)", line):
            name = m.group(1)
            if name in NOT_PYTHON_NAMES or _resolves(name):
                continue
            out.append(f"{number}: {name}")
    return out


def _resolves(name: str) -> bool:
    parts = name.split(".")
    for k in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:k]))
        except ImportError:
            continue
        for attr in parts[k:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


@pytest.mark.parametrize("page", DOCS, ids=lambda p: p.name)
def test_every_dotted_name_the_docs_use_resolves(page: Path) -> None:
    """Every ``schedsim.x.y`` in README.md and docs/*.md names a module or an attribute of
    one (so a moved function's old path, e.g. ``schedsim.simulation.gc_paused``, is found)."""
    assert unresolved_names(page.read_text(encoding="utf-8")) == []


def test_the_dotted_name_check_catches_an_old_path() -> None:
    """The path performance.md once gave for gc_paused, before scheduler/ existed."""
    assert unresolved_names("`schedsim.simulation.gc_paused` and `schedsim.api.quantity`") == [
        "1: schedsim.simulation.gc_paused"
    ]


_PAIR = re.compile(r"`([\w/]+\.py)`\s+`([A-Za-z_][\w.]*)`")
_METHOD = re.compile(r"`([A-Z]\w*)\.([a-z_]\w*)`")


def _module(path: str) -> object:
    """The module a map path names (``scheduler/queue.py`` -> ``schedsim.scheduler.queue``)."""
    name = path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
    root = "" if name.startswith("schedsim_plugins") else "schedsim."
    return importlib.import_module(root + name if name != "__init__" else "schedsim")


def _has(obj: object, dotted: str) -> bool:
    for attr in dotted.split("."):
        if not hasattr(obj, attr):
            return False
        obj = getattr(obj, attr)
    return True


def unresolved_path_steps(section: str) -> list[str]:
    """The names a step-by-step path gives that its modules do not define: each
    ``path.py`` ``name`` pair must resolve in that module, and each ``Class.method`` in one
    of the modules the section names."""
    modules = {p: _module(p) for p in re.findall(r"`([\w/]+\.py)`", section)}
    out = [
        f"{path} {name}" for path, name in _PAIR.findall(section) if not _has(modules[path], name)
    ]
    for cls, method in _METHOD.findall(section):
        owners = [getattr(m, cls) for m in modules.values() if hasattr(m, cls)]
        if not any(hasattr(owner, method) for owner in owners):
            out.append(f"{cls}.{method}")
    return out


def test_the_pending_pod_path_names_functions_that_exist() -> None:
    """docs/architecture.md's step-by-step path of one pending pod through ``schedsim
    simulate`` names real modules, functions and methods (a split or a rename must update
    it in the same change)."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("\n## One pending pod through `schedsim simulate`\n", 1)[1]
    section = section.split("\n## ", 1)[0]
    assert len(_PAIR.findall(section)) >= 15
    assert unresolved_path_steps(section) == []


def test_the_path_check_catches_a_renamed_function() -> None:
    """A pair whose function is gone, and a method no named module's class has."""
    section = (
        "`scheduler/select.py` `select_host`, `scheduler/select.py` `choose_host`; "
        "`scheduler/queue.py` `SchedulingQueue.pop` and `SchedulingQueue.take`"
    )
    assert unresolved_path_steps(section) == [
        "scheduler/select.py choose_host",
        "SchedulingQueue.take",
    ]
