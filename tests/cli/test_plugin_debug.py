"""Debugging a plugin through ``schedsim simulate`` (issue 31): the error names the exception
type, the plugin and the extension point (kube-scheduler's ``running "<name>" filter
plugin: <err>``); ``--debug`` or ``SCHEDSIM_DEBUG=1`` adds the traceback with the plugin's
file and line; a plugin loaded with ``--plugin`` but enabled in no profile is a warning."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schedsim.cli import main

PLUGIN = """
from schedsim.framework import Status


class Boom:
    name = "Boom"

    def __init__(self, args, handle):
        self.table = {}

    def schedsim_filter(self, state, pod, node_info):
        return self.table["missing"]  # line 12: the bug
"""

CLUSTER = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 4Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  containers: [{name: c, image: i}]
"""

CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    filter:
      enabled: [{name: Boom}]
"""


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "boom_plugin.py").write_text(PLUGIN)
    (tmp_path / "cluster.yaml").write_text(CLUSTER)
    (tmp_path / "config.yaml").write_text(CONFIG)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SCHEDSIM_DEBUG", raising=False)
    return tmp_path


def _simulate(capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, str]:
    argv = ["simulate", "cluster.yaml", "--plugin", "boom_plugin:Boom", *extra, "-o", "json"]
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_the_error_names_type_plugin_and_point(
    files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _simulate(capsys, "--config", "config.yaml")
    assert code == 1
    [pod] = json.loads(out)["pods"]
    assert pod["error"] is True
    # RunFilterPlugins' wording: running %q filter plugin: %w
    assert pod["message"] == "running \"Boom\" filter plugin: KeyError: 'missing'"
    assert "Traceback" not in err
    assert "--debug prints the plugin's traceback" in err


def test_debug_prints_the_traceback(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _simulate(capsys, "--config", "config.yaml", "--debug")
    assert code == 1
    assert "schedsim: debug: a plugin raised KeyError; its traceback:" in err
    assert "Traceback (most recent call last):" in err
    # the plugin's own file and line (the module is imported once per test process)
    assert 'boom_plugin.py", line 12, in schedsim_filter' in err
    assert 'return self.table["missing"]' in err
    # for that command only
    code, _, err = _simulate(capsys, "--config", "config.yaml")
    assert "Traceback" not in err


def test_schedsim_debug_in_the_environment(
    files: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCHEDSIM_DEBUG", "1")
    _, _, err = _simulate(capsys, "--config", "config.yaml")
    assert 'boom_plugin.py", line 12' in err


def test_a_plugin_enabled_in_no_profile_is_a_warning(
    files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _simulate(capsys)
    assert code == 0  # it never ran
    assert (
        "--plugin boom_plugin:Boom: plugin 'Boom' is loaded but enabled in no profile "
        "('default-scheduler'); it does not run (enable it in a --config profile)"
    ) in " ".join(err.split())
    assert json.loads(out)["pods"][0]["node"] == "n1"
