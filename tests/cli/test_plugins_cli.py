"""Plugin discovery from the command line: `schedsim plugins`, `--plugin`, the out-of-tree
example plugin installed as its own distribution, and `--profile-plugins`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from schedsim.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "gpu-guard-plugin"


def test_plugins_lists_in_tree_plugins_and_profile_order(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Every entry-point plugin with its extension points and source, then the order."""
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert "NodeResourcesFit" in out and "PreFilter, Filter" in out
    assert "schedsim 0.1.0 (schedsim_plugins.noderesources:NodeResourcesFit)" in out
    assert (
        "  Filter: NodeUnschedulable, NodeName, TaintToleration, NodeAffinity, NodePorts, "
        "NodeResourcesFit\n" in out
    )


def test_unknown_plugin_in_config_lists_known_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        "kind: KubeSchedulerConfiguration\nprofiles:\n- plugins:\n"
        "    filter: {enabled: [{name: Nope}]}\n"
    )
    assert main(["plugins", "--config", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        f"schedsim: error: {cfg}: plugin 'Nope' is not registered (known plugins: "
    )
    assert "NodeResourcesFit" in err


def test_bad_plugin_spec(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plugins", "--plugin", "no_such_module:X"]) == 2
    assert "--plugin 'no_such_module:X': cannot load: No module named" in capsys.readouterr().err


def test_plugin_from_command_line_changes_a_placement(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """--plugin loads the class from the import path; enabled in the profile it moves the
    GPU pod off the CPU-only node."""
    monkeypatch.syspath_prepend(str(EXAMPLE / "src"))
    args = ["simulate", str(EXAMPLE / "cluster.yaml"), "-o", "json"]
    assert main(args) == 0
    assert '"node": "cpu-1"' in capsys.readouterr().out
    plugin = ["--plugin", "schedsim_gpu_guard:GpuGuard", "--config", str(EXAMPLE / "profile.yaml")]
    assert main([*args, *plugin, "--profile-plugins"]) == 0
    out, err = capsys.readouterr()
    assert '"node": "gpu-1"' in out
    assert "plugin timings" in err and "GpuGuard" in err and "filter" in err


def test_installed_example_plugin_is_discovered(tmp_path: Path) -> None:
    """pip-install the example distribution (into a target folder) and run the CLI with it
    on the path: the entry point is found, listed and used."""
    src = tmp_path / "src"
    shutil.copytree(EXAMPLE, src, ignore=shutil.ignore_patterns("build", "*.egg-info"))
    target = tmp_path / "site"
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation"]
    subprocess.run([*pip, "--target", str(target), str(src)], check=True, capture_output=True)
    env = {**os.environ, "PYTHONPATH": str(target)}

    def cli(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "schedsim.cli", *args],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout

    listing = cli("plugins", "--config", str(EXAMPLE / "profile.yaml"))
    assert "GpuGuard" in listing
    assert "PreFilter, Filter, Reserve, Unreserve" in listing
    assert "schedsim-gpu-guard 0.1.0 (schedsim_gpu_guard:GpuGuard)" in listing
    assert "  Reserve: GpuGuard" in listing
    placed = cli(
        "simulate",
        str(EXAMPLE / "cluster.yaml"),
        "-o",
        "json",
        "--config",
        str(EXAMPLE / "profile.yaml"),
    )
    assert '"node": "gpu-1"' in placed
