"""Every extension point's result is checked: a plugin that returns the wrong type or raises
fails that pod's attempt with an Error naming the plugin and hook, never the run.

kube-scheduler's frameworkruntime wraps each failing plugin as an Error status of the attempt
(``running PreFilter plugin "X": ...``, ``running Reserve plugin "X": ...``,
``running "X" filter plugin: ...``, ``running Score plugins: plugin "X" failed with: ...``);
Go's types make a wrong result impossible there, so schedsim treats one as that plugin's
failure with the same wording. Probe plugins below misbehave in exactly one hook each.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schedsim.api.core import Node, Pod
from schedsim.cli import main
from schedsim.framework import Framework, Handle
from schedsim.framework.cycle_state import CycleState
from schedsim.framework.profile import EXTENSION_POINTS, Profile
from schedsim.framework.runtime import PluginError, load_plugin_spec
from schedsim.framework.status import Code, Status
from schedsim.snapshot import NodeInfo, PodInfo

PARAMS = {
    "pre_enqueue": "pod",
    "pre_filter": "state, pod, nodes",
    "pre_filter_add_pod": "state, pod_to_schedule, pod_info_to_add, node_info",
    "pre_filter_remove_pod": "state, pod_to_schedule, pod_info_to_remove, node_info",
    "filter": "state, pod, node_info",
    "post_filter": "state, pod, node_to_status",
    "pre_score": "state, pod, nodes",
    "score": "state, pod, node_info",
    "normalize_score": "state, pod, scores",
    "reserve": "state, pod, node_name",
    "unreserve": "state, pod, node_name",
    "pre_bind_pre_flight": "state, pod, node_name",
    "pre_bind": "state, pod, node_name",
}
"""Hook (without the ``schedsim_`` prefix) -> its parameters, as in hookspec."""

NEEDS = {
    "pre_filter_add_pod": ("pre_filter",),
    "pre_filter_remove_pod": ("pre_filter",),
    "normalize_score": ("score",),
    "unreserve": ("reserve",),
}
"""Hooks a probe must also implement for the misbehaving one to belong to its point."""

BAD = {
    "wrong type": "return 'ok'",
    "raises": "raise RuntimeError('probe broke')",
    # BaseExceptions a plugin's own code can raise by mistake (issue 30): a traceback, or
    # (SystemExit(0)) exit 0 with no output, from Score and NormalizeScore before
    "generator exit": "raise GeneratorExit",
    "system exit": "raise SystemExit(0)",
}
PROBLEM = {
    "wrong type": "returned 'ok' (str), want ",
    "raises": "RuntimeError: probe broke",
    "generator exit": "GeneratorExit",
    "system exit": "SystemExit: 0",
}

WORDING = {
    "pre_enqueue": 'running PreEnqueue plugin "Probe": ',
    "pre_filter": 'running PreFilter plugin "Probe": ',
    "pre_filter_add_pod": 'running AddPod on PreFilter plugin "Probe": ',
    "pre_filter_remove_pod": 'running RemovePod on PreFilter plugin "Probe": ',
    "filter": 'running "Probe" filter plugin: ',
    "post_filter": 'running PostFilter plugin "Probe": ',
    "pre_score": 'running PreScore plugin "Probe": ',
    "score": 'running Score plugins: plugin "Probe" failed with: ',
    "normalize_score": 'running Normalize on Score plugins: plugin "Probe" failed with: ',
    "reserve": 'running Reserve plugin "Probe": ',
    "pre_bind_pre_flight": 'running PreBindPreFlight "Probe": ',
    "pre_bind": 'running PreBind plugin "Probe": ',
}
"""The upstream message prefix of each hook's failure (frameworkruntime, v1.34)."""

CLI_HOOKS = ("pre_enqueue", "pre_filter", "filter", "reserve", "unreserve")
"""Hooks `schedsim scale-up` and `scale-down` run today (the runtime tests below cover every
hook)."""
SIMULATE_HOOKS = (*CLI_HOOKS, "pre_score", "score", "normalize_score")
"""`schedsim simulate` (kube-scheduler placement) also scores the feasible nodes."""


def probe_source(hook: str, how: str) -> str:
    """A plugin module whose class ``Probe`` misbehaves (``how``) in ``hook`` only; the hooks
    it needs besides succeed. Reserve fails with Error when Unreserve is probed."""
    lines = [
        "class Probe:",
        "    name = 'Probe'",
        "    def __init__(self, args, handle): pass",
    ]
    for other in NEEDS.get(hook, ()):
        body = {
            "unreserve": "return Error(('reserve failed',))",
            "normalize_score": "return 0",
        }.get(hook, "return None")
        lines.append(f"    def schedsim_{other}(self, {PARAMS[other]}): {body}")
    lines.append(f"    def schedsim_{hook}(self, {PARAMS[hook]}): {BAD[how]}")
    head = "from schedsim.framework.status import Code, Status\n"
    head += "def Error(reasons): return Status(Code.Error, reasons)\n"
    return head + "\n".join(lines) + "\n"


def load_probe(tmp_path: Path, hook: str, how: str, monkeypatch: pytest.MonkeyPatch) -> str:
    module = f"probe_{hook}_{how.replace(' ', '_')}"
    (tmp_path / f"{module}.py").write_text(probe_source(hook, how))
    monkeypatch.syspath_prepend(str(tmp_path))
    return f"{module}:Probe"


def node(name: str) -> Node:
    return Node.from_manifest(
        {
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": "4", "memory": "4Gi", "pods": "10"}},
        }
    )


def pod(name: str) -> Pod:
    return Pod.from_manifest(
        {
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "c"}]},
        }
    )


def framework(spec: str) -> Framework:
    name, factory = load_plugin_spec(spec)
    profile = Profile(plugins={p: (name,) for p in EXTENSION_POINTS})
    return Framework(profile, Handle(), {name: factory})


def run_hook(fw: Framework, hook: str) -> Status:
    """Drive the runtime to ``hook`` as the scheduling cycle does and return the status of
    the attempt."""
    state = CycleState()
    p = pod("p")
    infos = [NodeInfo(node("n1")), NodeInfo(node("n2"))]
    if hook == "pre_enqueue":
        return fw.run_pre_enqueue_plugins(p)
    if hook == "pre_filter":
        return fw.run_pre_filter_plugins(state, p, infos)[1]
    if hook == "pre_filter_add_pod":
        return fw.run_pre_filter_extension_add_pod(state, p, PodInfo(pod("q")), infos[0])
    if hook == "pre_filter_remove_pod":
        return fw.run_pre_filter_extension_remove_pod(state, p, PodInfo(pod("q")), infos[0])
    if hook == "filter":
        return fw.run_filter_plugins(state, p, infos[0])
    if hook == "post_filter":
        return fw.run_post_filter_plugins(state, p, {})[1]
    if hook == "pre_score":
        return fw.run_pre_score_plugins(state, p, infos)
    if hook in ("score", "normalize_score"):
        return fw.run_score_plugins(state, p, infos)[1]
    if hook == "reserve":
        return fw.run_reserve_plugins_reserve(state, p, "n1")
    if hook == "pre_bind_pre_flight":
        return fw.run_pre_bind_pre_flights(state, p, "n1")
    assert hook == "pre_bind"
    return fw.run_pre_bind_plugins(state, p, "n1")


@pytest.mark.parametrize("how", sorted(BAD))
@pytest.mark.parametrize("hook", sorted(set(PARAMS) - {"unreserve"}))
def test_runtime_turns_a_bad_result_into_an_error_status(
    hook: str, how: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Library: each run_* returns an Error status attributed to the plugin, with the upstream
    prefix of that hook and what went wrong (the wrong value and its type, or the exception)."""
    fw = framework(load_probe(tmp_path, hook, how, monkeypatch))
    st = run_hook(fw, hook)
    assert st.code is Code.Error and st.plugin == "Probe"
    assert st.message.startswith(WORDING[hook] + PROBLEM[how]), st.message


def test_pre_filter_wrong_type_names_what_it_may_return(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PreFilter may also return a PreFilterResult; the message says so."""
    fw = framework(load_probe(tmp_path, "pre_filter", "wrong type", monkeypatch))
    st = run_hook(fw, "pre_filter")
    assert st.message == (
        "running PreFilter plugin \"Probe\": returned 'ok' (str), "
        "want a Status, a PreFilterResult or None"
    )


def test_normalize_score_setting_a_non_int_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A NormalizeScore that writes a str into the scores fails the plugin (upstream scores
    are int64) instead of a TypeError when the range is checked."""
    (tmp_path / "probe_norm_str.py").write_text(
        "class Probe:\n    name = 'Probe'\n    def __init__(self, args, handle): pass\n"
        "    def schedsim_score(self, state, pod, node_info): return 1\n"
        "    def schedsim_normalize_score(self, state, pod, scores):\n"
        "        scores['n2'] = 'high'\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    st = run_hook(framework("probe_norm_str:Probe"), "normalize_score")
    assert st.message == (
        'running Normalize on Score plugins: plugin "Probe" failed with: '
        "NormalizeScore set node n2's score to 'high' (str), want an int"
    )


def test_unreserve_that_raises_is_a_plugin_error_after_running_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Unreserve returns nothing (upstream: it must not fail); one that raises is reported
    as ``running Unreserve plugin "X": ...`` and its return value is ignored."""
    fw = framework(load_probe(tmp_path, "unreserve", "raises", monkeypatch))
    with pytest.raises(PluginError, match=r'^running Unreserve plugin "Probe": RuntimeError'):
        fw.run_reserve_plugins_unreserve(CycleState(), pod("p"), "n1")
    fw = framework(load_probe(tmp_path, "unreserve", "wrong type", monkeypatch))
    fw.run_reserve_plugins_unreserve(CycleState(), pod("p"), "n1")


CLUSTER = """\
kind: Node
apiVersion: v1
metadata: {name: n1}
status: {allocatable: {cpu: '4', memory: 4Gi, pods: '10'}}
---
kind: Pod
apiVersion: v1
metadata: {name: p}
spec: {containers: [{name: c, resources: {requests: {cpu: '1'}}}]}
"""
CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    multiPoint: {enabled: [{name: Probe}]}
"""


def _files(tmp_path: Path) -> tuple[str, str, str]:
    (tmp_path / "cluster.yaml").write_text(CLUSTER)
    (tmp_path / "config.yaml").write_text(CONFIG)
    groups = {
        "nodeGroups": [
            {
                "name": "g",
                "maxSize": 2,
                "template": {
                    "node": {
                        "metadata": {"name": "t"},
                        "status": {"allocatable": {"cpu": "4", "memory": "4Gi", "pods": "10"}},
                    }
                },
            }
        ]
    }
    (tmp_path / "groups.json").write_text(json.dumps(groups))
    return (
        str(tmp_path / "cluster.yaml"),
        str(tmp_path / "config.yaml"),
        str(tmp_path / "groups.json"),
    )


@pytest.mark.parametrize("how", sorted(BAD))
@pytest.mark.parametrize("hook", SIMULATE_HOOKS)
def test_simulate_fails_only_the_pod_with_the_plugin_named(
    hook: str,
    how: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """simulate: exit 1, the pod is an error whose message names the plugin and hook, the
    output is complete JSON, no traceback."""
    spec = load_probe(tmp_path, hook, how, monkeypatch)
    cluster, config, _ = _files(tmp_path)
    second = "kind: Node\napiVersion: v1\nmetadata: {name: n2}\n"
    second += "status: {allocatable: {cpu: '4', memory: 4Gi, pods: '10'}}\n---\n"
    Path(cluster).write_text(second + CLUSTER)  # two feasible nodes: Score runs
    code = main(["simulate", cluster, "--config", config, "--plugin", spec, "-o", "json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    if hook == "unreserve" and how == "wrong type":  # its result is ignored, Reserve's error wins
        want = 'running Reserve plugin "Probe": reserve failed'
    elif hook == "unreserve":
        want = 'running Unreserve plugin "Probe": ' + PROBLEM[how]
    else:
        want = WORDING[hook] + PROBLEM[how]
    [p] = json.loads(out)["pods"]
    assert code == 1, err
    assert p["node"] is None and p["error"] is True
    assert want in p["message"], p["message"]


@pytest.mark.parametrize("how", sorted(BAD))
@pytest.mark.parametrize("hook", [h for h in CLI_HOOKS if h != "pre_enqueue"])
@pytest.mark.parametrize("command", ["scale-up", "scale-down"])
def test_autoscaling_reports_the_plugin_error_per_pod(
    command: str,
    hook: str,
    how: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """scale-up and scale-down: exit 1 with complete JSON and the pod's error naming the
    plugin; never a traceback, never exit 2 (the run itself is fine). Cluster Autoscaler runs
    no PreEnqueue (its pods are already unschedulable or scheduled), so neither do these."""
    spec = load_probe(tmp_path, hook, how, monkeypatch)
    cluster, config, groups = _files(tmp_path)
    if command == "scale-down":  # a ReplicaSet's pod runs on n1 and must move to n2
        owner = "ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: rs, uid: rs, "
        owner += "controller: true}]"
        moved = CLUSTER.replace("spec: {", "spec: {nodeName: n1, ")
        moved = moved.replace("metadata: {name: p}", f"metadata: {{name: p, {owner}}}")
        extra = "---\nkind: Node\napiVersion: v1\nmetadata: {name: n2}\n"
        extra += "status: {allocatable: {cpu: '4', memory: 4Gi, pods: '10'}}\n"
        extra += "---\nkind: Pod\napiVersion: v1\nmetadata: {name: busy}\n"
        extra += (
            "spec: {nodeName: n2, containers: [{name: c, resources: {requests: {cpu: '3'}}}]}\n"
        )
        Path(cluster).write_text(moved + extra)
        groups_args: list[str] = []
    else:  # a pod no node fits, so scale-up runs the plugins on the group's template
        Path(cluster).write_text(CLUSTER.replace("cpu: '1'", "cpu: '3'").replace("'4'", "'2'", 1))
        groups_args = ["--node-groups", groups]
    args = [command, cluster, *groups_args, "--config", config, "--plugin", spec]
    code = main([*args, "-o", "json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    doc = json.loads(out)
    assert code == 1, err
    assert [e["pod"] for e in doc["errors"]] == ["default/p"], doc
    assert "Probe" in doc["errors"][0]["message"]


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ("import sys\nsys.exit()\n", "SystemExit\n"),
        ("import sys\nsys.exit(0)\n", "SystemExit: 0\n"),
        ("raise GeneratorExit\n", "GeneratorExit\n"),
    ],
)
def test_plugin_exiting_at_import_is_a_load_error(
    body: str,
    why: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``sys.exit()`` (or another BaseException) while importing a plugin does not end
    schedsim with status 0 and no output: it is a plugin load error, exit 2, plugin named."""
    (tmp_path / "exits_at_import.py").write_text(body)
    monkeypatch.syspath_prepend(str(tmp_path))
    cluster = _files(tmp_path)[0]
    code = main(["simulate", cluster, "--plugin", "exits_at_import:Probe"])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err == f"schedsim: error: --plugin 'exits_at_import:Probe': cannot load: {why}"
    assert "Traceback" not in err


@pytest.mark.parametrize("how", ["raises", "system exit"])
@pytest.mark.parametrize("hook", SIMULATE_HOOKS)
def test_replay_exits_1_with_the_plugin_named(
    hook: str,
    how: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """replay, as simulate: exit 1, the output written whole, a warning naming the pod, the
    plugin and the hook, no traceback. A pod a PreEnqueue plugin's Error keeps out of the
    queue counts too (kube-scheduler keeps it gated, runPreEnqueuePlugins logging the error;
    replay exited 0 for it before, issue 30)."""
    spec = load_probe(tmp_path, hook, how, monkeypatch)
    cluster, config, _ = _files(tmp_path)
    second = "kind: Node\napiVersion: v1\nmetadata: {name: n2}\n"
    second += "status: {allocatable: {cpu: '4', memory: 4Gi, pods: '10'}}\n---\n"
    Path(cluster).write_text(second + CLUSTER)  # two feasible nodes: Score runs
    code = main(["replay", cluster, "--config", config, "--plugin", spec, "-o", "json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    if hook == "unreserve":  # Reserve's error fails the attempt, then Unreserve raises
        want = 'running Unreserve plugin "Probe": ' + PROBLEM[how]
    else:
        want = WORDING[hook] + PROBLEM[how]
    assert code == 1, err
    assert json.loads(out)["summary"]["scheduled"] == 0
    assert "warning: pod default/p: " in err and want in err, err
    assert "schedsim: error: a plugin failed for 1 pod(s)" in err
