"""``--validate=strict|warn|ignore`` on every command that reads manifests, as kubectl spells
it (kubectl apply --validate: strict refuses an unknown field, warn prints ``Warning: unknown
field ...`` and goes on, ignore says nothing; strict is kubectl's default since 1.27).

The misspelled-toleration case is the one issue 20 reports: without strict fields the pod was
reported as blocked by the taint it meant to tolerate.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from schedsim.cli import MANIFEST_COMMANDS, main

ROOT = Path(__file__).resolve().parents[2]

CLUSTER = """\
apiVersion: v1
kind: Node
metadata: {name: gpu-1}
spec:
  taints: [{key: dedicated, value: gpu, effect: NoSchedule}]
status: {allocatable: {cpu: "8", memory: 32Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: trainer, namespace: ml}
spec:
  toleration: [{key: dedicated, operator: Equal, value: gpu, effect: NoSchedule}]
  containers: [{name: c, image: trainer:1}]
"""

ERROR = 'Pod ml/trainer: spec.toleration: unknown field "toleration"'
HINT = (  # how to go on, as kubectl's "turn validation off with --validate=false"
    "schedsim: error: fix the field names, or to go on without them run again with "
    "--validate=warn (a warning for each, then ignored) or --validate=ignore\n"
)


@pytest.fixture
def cluster(tmp_path: Path) -> Path:
    path = tmp_path / "cluster.yaml"
    path.write_text(CLUSTER)
    return path


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_misspelled_field_exits_2_naming_it(
    capsys: pytest.CaptureFixture[str], cluster: Path
) -> None:
    """The error names the field and says how to go on (the --validate values, fresh-user
    attack: it named the fields only)."""
    code, out, err = _run(capsys, "simulate", str(cluster))
    assert (code, out) == (2, "")
    assert err == f"schedsim: error: {cluster}: {ERROR}\n{HINT}"


def test_strict_is_the_default_and_can_be_spelled(
    capsys: pytest.CaptureFixture[str], cluster: Path
) -> None:
    assert _run(capsys, "simulate", str(cluster), "--validate=strict")[0] == 2


def test_warn_prints_a_warning_and_runs(capsys: pytest.CaptureFixture[str], cluster: Path) -> None:
    """The field is dropped, as kubectl --validate=warn does: the pod has no toleration,
    so the taint blocks it (the very surprise the warning explains)."""
    code, out, err = _run(capsys, "simulate", str(cluster), "--validate=warn", "-o", "json")
    assert code == 0
    assert err == f"warning: {cluster}: {ERROR} (ignored)\n"
    assert '"node": null' in out and "untolerated taint(s)" in out


def test_ignore_is_silent(capsys: pytest.CaptureFixture[str], cluster: Path) -> None:
    code, out, err = _run(capsys, "simulate", str(cluster), "--validate", "ignore")
    assert (code, err) == (0, "")
    assert "ml/trainer" in out


@pytest.mark.parametrize("command", ["scale-up", "scale-down", "replay"])
def test_autoscaling_commands_validate_too(
    capsys: pytest.CaptureFixture[str], cluster: Path, tmp_path: Path, command: str
) -> None:
    groups = tmp_path / "groups.yaml"
    groups.write_text(
        "nodeGroups:\n- name: g\n  maxSize: 2\n  template:\n    node:\n"
        "      metadata: {name: t}\n"
        "      status: {allocatable: {cpu: '8', memory: 32Gi, pods: '110'}}\n"
    )
    argv = [command, str(cluster), "--node-groups", str(groups)]
    code, out, err = _run(capsys, *argv)
    assert (code, out, err) == (2, "", f"schedsim: error: {cluster}: {ERROR}\n{HINT}")
    code, _, err = _run(capsys, *argv, "--validate=warn")
    assert code == 0 and f"warning: {cluster}: {ERROR} (ignored)" in err


def test_every_manifest_command_has_the_flag() -> None:
    assert MANIFEST_COMMANDS == ("simulate", "scale-up", "scale-down", "replay")
    with pytest.raises(SystemExit) as info:
        main(["simulate", "--validate=lenient"])
    assert info.value.code == 2
