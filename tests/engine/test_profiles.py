"""Several profiles in one KubeSchedulerConfiguration (issue 12 item 6): each pod is
scheduled by the profile its spec.schedulerName names (kube-scheduler's frameworkForPod), on
both stores; profile checks as NewFramework and validateCommonQueueSort make them."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedsim.cli import main
from schedsim.engine import Cluster, Engine, EngineConfig

CLUSTER = """apiVersion: v1
kind: Node
metadata: {name: tainted}
spec: {taints: [{key: dedicated, value: batch, effect: NoSchedule}]}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: by-default}
spec: {containers: [{name: c}]}
---
apiVersion: v1
kind: Pod
metadata: {name: by-lenient}
spec: {schedulerName: lenient, containers: [{name: c}]}
---
apiVersion: v1
kind: Pod
metadata: {name: by-nobody}
spec: {schedulerName: volcano, containers: [{name: c}]}
"""

CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
- schedulerName: lenient
  plugins:
    filter:
      disabled: [{name: TaintToleration}]
"""


def test_each_pod_is_scheduled_by_its_profile(tmp_path: Path, store_name: str) -> None:
    """frameworkForPod: the default profile keeps the pod off the tainted node (TaintToleration
    filters), the "lenient" profile, without that filter, places its pod there; a pod naming
    no profile is left to its scheduler and listed, not scheduled."""
    cfg = tmp_path / "config.yaml"
    cfg.write_text(CONFIG)
    engine = Engine(EngineConfig.from_config_file(str(cfg), store=store_name))
    assert list(engine.frameworks) == ["default-scheduler", "lenient"]
    result = engine.simulate(Cluster.from_text(CLUSTER, "c.yaml"))
    got = {o.pod.name: o.node_name for o in result.outcomes}
    assert got == {"by-default": None, "by-lenient": "tainted"}
    assert [p.name for p in result.other_scheduler_pods] == ["by-nobody"]
    default = next(o for o in result.outcomes if o.pod.name == "by-default")
    assert "untolerated taint(s)" in default.message


def test_pre_enqueue_of_a_second_profile_reads_the_snapshot(
    tmp_path: Path, store_name: str
) -> None:
    """PreEnqueue runs with the pod's own profile bound to the snapshot: DynamicResources of
    the "lenient" profile keeps a pod whose claim does not exist out of the queue with the
    lister's NotFound text (not an unbound-snapshot failure)."""
    cfg = tmp_path / "config.yaml"
    cfg.write_text(CONFIG)
    claim = (
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: claims}\n"
        "spec: {schedulerName: lenient, containers: [{name: c}], "
        "resourceClaims: [{name: gpu, resourceClaimName: missing}]}\n"
    )
    engine = Engine(EngineConfig.from_config_file(str(cfg), store=store_name))
    result = engine.simulate(Cluster.from_text(CLUSTER + claim, "c.yaml"))
    out = next(o for o in result.outcomes if o.pod.name == "claims")
    assert (out.node_name, out.attempts, out.error) == (None, 0, False)
    assert out.message == 'resourceclaim.resource.k8s.io "missing" not found'


def _exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], config: str) -> str:
    (tmp_path / "c.yaml").write_text(CLUSTER)
    (tmp_path / "s.yaml").write_text(config)
    code = main(["simulate", str(tmp_path / "c.yaml"), "--config", str(tmp_path / "s.yaml")])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert "Traceback" not in err
    return err


def test_profile_without_plugins_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """NewFramework: "only one queue sort plugin required for profile with scheduler name
    ..., but got 0": disabling every plugin leaves none (exit 2, naming the file)."""
    err = _exit_2(
        tmp_path,
        capsys,
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "profiles:\n- plugins:\n    multiPoint:\n      disabled: [{name: '*'}]\n",
    )
    assert err == (
        f"schedsim: error: {tmp_path / 's.yaml'}: only one queue sort plugin required for "
        'profile with scheduler name "default-scheduler", but got 0\n'
    )


def test_profile_without_bind_plugin_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """NewFramework: "at least one bind plugin is needed for profile with scheduler name ..."."""
    err = _exit_2(
        tmp_path,
        capsys,
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "profiles:\n- schedulerName: lonely\n  plugins:\n    bind:\n"
        "      disabled: [{name: DefaultBinder}]\n",
    )
    assert err == (
        f"schedsim: error: {tmp_path / 's.yaml'}: at least one bind plugin is needed for "
        'profile with scheduler name "lonely"\n'
    )


def test_profiles_with_different_queue_sort_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """validateCommonQueueSort: the queue is shared, so every profile must sort it the same."""
    err = _exit_2(
        tmp_path,
        capsys,
        CONFIG + "    queueSort:\n      disabled: [{name: '*'}]\n",
    )
    assert err == (
        f"schedsim: error: {tmp_path / 's.yaml'}: KubeSchedulerConfiguration: "
        "profiles[1].plugins.queueSort: Invalid value: []: must be the same for all profiles\n"
    )


def test_plugins_command_lists_every_profile(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`schedsim plugins --config` shows each profile's resolved order: "lenient" has no
    TaintToleration at Filter (disabled there), the default profile has it."""
    (tmp_path / "s.yaml").write_text(CONFIG)
    assert main(["plugins", "--config", str(tmp_path / "s.yaml")]) == 0
    out = capsys.readouterr().out
    default = out.split("profile 'default-scheduler':")[1].split("profile 'lenient':")[0]
    lenient = out.split("profile 'lenient':")[1]
    filters = [line for line in default.splitlines() if line.startswith("  Filter:")]
    assert "TaintToleration" in filters[0]
    filters = [line for line in lenient.splitlines() if line.startswith("  Filter:")]
    assert "TaintToleration" not in filters[0] and "NodeResourcesFit" in filters[0]
