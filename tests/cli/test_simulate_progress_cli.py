"""Issue 28: ``simulate`` shows a progress bar (pending pods attempted, pods scheduled) on a
terminal's stderr, as scale-down, replay and sweep do; nothing when stderr is piped, or when
JSON goes to a pipe."""

from __future__ import annotations

import argparse
import importlib
import io
import sys
from pathlib import Path

import pytest

from schedsim.cli import main
from schedsim.engine import Cluster, Engine, EngineConfig

# the module (schedsim.cli re-exports its `simulate` function under the same name)
cli_simulate = importlib.import_module("schedsim.cli.simulate")


def _cluster_text(pending: int) -> str:
    nodes = "".join(
        f"---\napiVersion: v1\nkind: Node\nmetadata: {{name: n{i}}}\n"
        'status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}\n'
        for i in range(3)
    )
    pods = "".join(
        f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p{i:02d}}}\nspec:\n"
        "  containers: [{name: c, image: x, resources: {requests: {cpu: %s}}}]\n"
        % ("1" if i % 2 else "500m")
        for i in range(pending)
    )
    return nodes + pods


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("stderr_tty", "stdout_tty", "output", "output_file", "shown"),
    [
        (True, True, "table", None, True),
        (True, True, "json", None, True),
        (True, False, "table", None, True),  # the table piped: the bar is on the terminal
        (True, False, "json", None, False),  # JSON to a pipe: a script reads it
        (True, False, "yaml", None, False),  # YAML likewise
        (True, False, "json", "out.json", True),  # JSON to a file, stdout unused
        (False, True, "table", None, False),  # stderr piped
    ],
)
def test_the_bar_is_shown_only_on_a_terminal(
    monkeypatch: pytest.MonkeyPatch,
    stderr_tty: bool,
    stdout_tty: bool,
    output: str,
    output_file: str | None,
    shown: bool,
) -> None:
    monkeypatch.setattr(sys, "stderr", _Terminal() if stderr_tty else io.StringIO())
    monkeypatch.setattr(sys, "stdout", _Terminal() if stdout_tty else io.StringIO())
    args = argparse.Namespace(output=output, output_file=output_file)
    assert cli_simulate.shows_progress(args) is shown


def test_progress_reports_pods_attempted_and_bound() -> None:
    """30 pending pods on 3 nodes of 4 cpu (15 x 500m + 15 x 1 cpu = 22.5 cpu > 12): the
    callback sees attempts rise to 30, and its last bound count is the scheduled count."""
    cluster = Cluster.from_text(_cluster_text(30), "c.yaml")
    calls: list[tuple[int, int, int]] = []
    result = Engine(EngineConfig()).simulate(
        cluster, progress=lambda a, b, t: calls.append((a, b, t))
    )
    scheduled = sum(o.node_name is not None for o in result.outcomes)
    assert 0 < scheduled < 30
    assert calls[-1] == (30, scheduled, 30)
    assert [a for a, _, _ in calls] == sorted(a for a, _, _ in calls)
    assert all(t == 30 for _, _, t in calls)


def test_a_terminal_gets_the_bar_and_a_pipe_does_not(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(_cluster_text(30))
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    piped = io.StringIO()
    monkeypatch.setattr(sys, "stderr", piped)
    assert main(["simulate", str(path)]) == 0
    assert piped.getvalue() == ""
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    assert main(["simulate", str(path)]) == 0
    assert "pods attempted" in terminal.getvalue()
