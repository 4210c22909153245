"""Issue 28: errors about cluster input say how to go on. An export whose embedded scheduler
configuration kube-scheduler 1.34 refuses names ``--config FILE``; a Go-templated manifest
(scheduler_perf's templates, a Helm chart) is said to be one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schedsim.cli import main

EXPORT = Path(__file__).parent / "data" / "kss" / "export.json"
HINT = (
    "the profile is the kube-scheduler-simulator export's embedded schedulerConfig: give "
    "--config FILE (a KubeSchedulerConfiguration) to run the export with that configuration "
    "instead"
)


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("validate", ["strict", "warn", "ignore"])
def test_embedded_config_naming_a_removed_plugin_says_config_replaces_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, validate: str
) -> None:
    """EBSLimits was removed from kube-scheduler (1.31+; folded into NodeVolumeLimits): a 1.34
    scheduler refuses a profile enabling it, in every --validate mode; --config FILE runs the
    export with another configuration."""
    doc = json.loads(EXPORT.read_text())
    doc["schedulerConfig"]["profiles"][0]["plugins"]["multiPoint"]["enabled"].append(
        {"name": "EBSLimits"}
    )
    export = tmp_path / "export.json"
    export.write_text(json.dumps(doc))
    code, out, err = _run(capsys, "simulate", str(export), "--validate", validate)
    assert (code, out) == (2, "")
    last = err.splitlines()[-1]
    assert last.startswith(f"schedsim: error: {export}: plugin 'EBSLimits' is not registered")
    assert last.endswith(HINT)
    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
    )
    code, out, err = _run(capsys, "simulate", str(export), "-o", "json", "--config", str(config))
    assert code == 0, err
    assert len(json.loads(out)["pods"]) == 4


TEMPLATE_HINT = (
    "render it first (helm template, or the tool whose template it is) and give schedsim the output"
)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  generateName: pod-\nspec:\n  containers:\n"
            "  - name: pause\n    image: registry.k8s.io/pause:3.10\n    resources:\n"
            "      requests:\n        cpu: {{.Cpu}}\n",
            "not valid YAML: line 11, column 15: unsupported map key: dict; it looks like a Go "
            f"template (line 11: {{{{.Cpu}}}}): {TEMPLATE_HINT}",
            id="scheduler_perf value",
        ),
        pytest.param(
            "{{- if .Values.enabled }}\napiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n"
            "{{- end }}\n",
            "not valid YAML: line 1, column 3: while parsing a flow node did not find expected "
            "node content; it looks like a Go template (line 1: {{- if .Values.enabled }}): "
            f"{TEMPLATE_HINT}",
            id="helm control line",
        ),
    ],
)
def test_a_go_template_is_said_to_be_one(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "pod.yaml"
    path.write_text(text)
    code, out, err = _run(capsys, "simulate", str(path))
    assert (code, out) == (2, "")
    assert err == f"schedsim: error: {path}: {message}\n"


def test_a_template_action_that_parses_as_a_string_gets_the_hint_after_the_problem(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A quoted action is valid YAML; the name then fails ValidateObjectMeta, and the hint
    follows the problem lines."""
    path = tmp_path / "pod.yaml"
    path.write_text(
        'apiVersion: v1\nkind: Pod\nmetadata:\n  name: "pod-{{ .Index }}"\nspec:\n'
        "  containers:\n  - name: pause\n    image: registry.k8s.io/pause:3.10\n"
    )
    code, out, err = _run(capsys, "simulate", str(path))
    assert (code, out) == (2, "")
    lines = err.splitlines()
    assert lines[0].startswith(
        f"schedsim: error: {path}: Pod default/pod-{{{{ .Index }}}}: metadata.name: invalid value"
    )
    assert lines[-1] == (
        f"schedsim: error: {path}: it looks like a Go template ({{{{ .Index }}}}): {TEMPLATE_HINT}"
    )


def test_an_annotation_holding_template_text_is_not_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Alerting annotations carry ``{{ $labels.x }}`` text: valid values, never refused."""
    path = tmp_path / "pod.yaml"
    path.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations:\n"
        '    summary: "{{ $labels.instance }} is down"\nspec:\n  containers:\n'
        "  - name: pause\n    image: registry.k8s.io/pause:3.10\n"
    )
    code, _, err = _run(capsys, "simulate", str(path))
    assert code == 0, err
