"""Entry points are read once per state of the import path (`schedsim.framework.registry`):
a distribution that appears on ``sys.path`` later is still found, as
``importlib.metadata.entry_points`` (which reads the path on every call) finds it."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedsim.framework.registry import discover_plugins, plugin_sources


def _install(site: Path, name: str) -> None:
    info = site / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        f"[schedsim.plugins]\n{name.title()} = does_not_exist:{name.title()}\n"
    )


def test_a_distribution_added_to_the_path_later_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = plugin_sources()
    assert "NodeResourcesFit" in before  # an in-tree plugin, through its entry point
    assert plugin_sources() == before  # read once, the same answer
    plugin_sources()["Extra"] = "changed"  # callers get their own copy
    assert "Extra" not in plugin_sources()
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    assert "Lateplugin" not in plugin_sources()
    _install(site, "lateplugin")  # the directory's mtime changes
    assert plugin_sources()["Lateplugin"] == "lateplugin 1.0 (does_not_exist:Lateplugin)"
    assert "Lateplugin" in list(discover_plugins())  # listed, imported only when used
