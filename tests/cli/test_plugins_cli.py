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
    # DynamicResources implements every extension point schedsim runs
    assert "PreEnqueue, PreFilter, Filter, PostFilter, Reserve, Unreserve, PreBind" in out
    assert "schedsim 0.1.0 (schedsim_plugins.noderesources:NodeResourcesFit)" in out
    assert (
        "  Filter: NodeUnschedulable, NodeName, TaintToleration, NodeAffinity, NodePorts, "
        "NodeResourcesFit, VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone" in out
    )
    assert "  Reserve: VolumeBinding, DynamicResources" in out
    assert "schedsim 0.1.0 (schedsim_plugins.nodevolumelimits:NodeVolumeLimits)" in out


def test_unknown_plugin_in_config_lists_known_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
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
    GPU pod off the CPU-only node (first fit, where the CPU-only node comes first)."""
    monkeypatch.syspath_prepend(str(EXAMPLE / "src"))
    args = ["simulate", str(EXAMPLE / "cluster.yaml"), "-o", "json", "--placement", "first-fit"]
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
    assert "  Reserve: VolumeBinding, DynamicResources, GpuGuard" in listing
    placed = cli(
        "simulate",
        str(EXAMPLE / "cluster.yaml"),
        "-o",
        "json",
        "--config",
        str(EXAMPLE / "profile.yaml"),
    )
    assert '"node": "gpu-1"' in placed


RESERVE_PLUGIN = '''
from typing import ClassVar
from schedsim.framework import Code, Status

class Budget:
    """Reserve lets one pod per node through; the next is rejected (a quota plugin)."""
    name: ClassVar[str] = "Budget"

    def __init__(self, args, handle):
        self.used = set()

    def schedsim_reserve(self, state, pod, node_name):
        if node_name in self.used:
            return Status(Code.Unschedulable, ("node budget exhausted",))
        self.used.add(node_name)
        return None

    def schedsim_unreserve(self, state, pod, node_name):
        pass
'''


def test_reserve_rejection_is_a_fit_error_and_the_run_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """kube-scheduler schedulingCycle: a rejected Reserve makes a FitError over the one node
    (``0/1 nodes are available: <reason>.``); other pods are still scheduled. Also: --plugin
    finds modules in the current directory."""
    (tmp_path / "budget.py").write_text(RESERVE_PLUGIN)
    (tmp_path / "c.yaml").write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\nprofiles:\n- plugins:\n"
        "    multiPoint: {enabled: [{name: Budget}]}\n"
    )
    (tmp_path / "cluster.yaml").write_text(
        "kind: Node\napiVersion: v1\nmetadata: {name: n1}\n"
        "status: {allocatable: {cpu: '4', memory: 4Gi, pods: '10'}}\n---\n"
        + "---\n".join(
            f"kind: Pod\napiVersion: v1\nmetadata: {{name: p{i}}}\n"
            "spec: {containers: [{name: c}]}\n"
            for i in range(2)
        )
    )
    monkeypatch.chdir(tmp_path)
    code = main(
        [
            "simulate",
            "cluster.yaml",
            "--config",
            "c.yaml",
            "--plugin",
            "budget:Budget",
            "-o",
            "json",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    assert '"node": "n1"' in out
    assert '"message": "0/1 nodes are available: 1 node budget exhausted."' in out


def test_a_broken_installed_plugin_does_not_stop_runs_that_do_not_use_it(
    tmp_path: Path,
) -> None:
    """Entry points are imported when a profile names them: a broken one is reported by
    `schedsim plugins` and ignored by runs that don't enable it."""
    site = tmp_path / "site"
    info = site / "broken_plugin-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[schedsim.plugins]\nBroken = does_not_exist:Broken\n")
    env = {**os.environ, "PYTHONPATH": str(site)}
    run = subprocess.run(
        [sys.executable, "-m", "schedsim.cli", "simulate", "-o", "json"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    listing = subprocess.run(
        [sys.executable, "-m", "schedsim.cli", "plugins"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert listing.returncode == 0, listing.stderr
    assert "Broken" in listing.stdout
    assert "cannot be loaded: plugin 'Broken' (does_not_exist:Broken)" in listing.stdout
    assert "ModuleNotFoundError" in listing.stdout


def test_plugin_config_checks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A repeated pluginConfig entry is an error (as NewFramework's "repeated config for
    plugin"); config for a plugin that is not enabled is warned about."""
    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\nprofiles:\n- pluginConfig:\n"
        "  - {name: NodeResourcesFit, args: {}}\n  - {name: NodeResourcesFit, args: {}}\n"
    )
    assert main(["plugins", "--config", str(cfg)]) == 2
    assert 'pluginConfig[1]: Duplicate value: "NodeResourcesFit"' in (capsys.readouterr().err)
    cfg.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\nprofiles:\n- pluginConfig:\n"
        "  - {name: MaxPodz, args: {limit: 3}}\n"
    )
    assert main(["plugins", "--config", str(cfg)]) == 0
    assert "warning: pluginConfig for plugin(s) not enabled in the profile: MaxPodz" in (
        capsys.readouterr().err
    )


def test_plugins_shows_score_points_and_weights(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`schedsim plugins` lists PreScore/Score/NormalizeScore among a plugin's extension
    points and each Score plugin's weight in the profile (a weight at multiPoint applies,
    getScoreWeights)."""
    monkeypatch.chdir(ROOT / "examples" / "zone-preference-plugin" / "src")
    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "profiles:\n- plugins:\n    multiPoint: {enabled: [{name: ZonePreference, weight: 5}]}\n"
    )
    plugin = "schedsim_zone_preference:ZonePreference"
    assert main(["plugins", "--plugin", plugin, "--config", str(cfg)]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("ZonePreference "))
    assert "PreScore, Score, NormalizeScore" in row
    # after the default profile's score plugins (PodTopologySpread and InterPodAffinity too)
    lines = out.splitlines()
    pre_score = next(line for line in lines if line.startswith("  PreScore: "))
    assert pre_score.endswith(", ZonePreference")
    assert "ZonePreference (weight 5)" in out
    normalize = next(line for line in lines if line.startswith("  NormalizeScore: "))
    assert normalize.endswith(", ZonePreference")
