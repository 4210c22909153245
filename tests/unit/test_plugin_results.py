"""How the runtime words a plugin's result (`schedsim.framework.plugin_results`): one table
of kube-scheduler's ``running ... "<plugin>"`` prefixes (frameworkruntime's ``fmt.Errorf``
calls in framework.go, v1.34), and a rejection attributed to its plugin as
``status.WithPlugin(pl.Name())`` does. tests/cli/test_plugin_hook_results.py checks every
hook's wording end to end; here the points it does not reach (Permit, Bind, PostBind)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import pytest

from schedsim.api.core import Pod
from schedsim.framework import Code, CycleState, Framework, Handle, Profile, Status
from schedsim.framework.plugin_results import RUNNING, attributed, failure, plugin_error


def test_attributed_names_the_plugin() -> None:
    """A status already naming the plugin is returned as is (no copy); any other is a copy
    naming it, code and reasons kept, as WithPlugin overwrites the plugin."""
    own = Status(Code.Unschedulable, ("Insufficient cpu",), "NodeResourcesFit")
    assert attributed(own, "NodeResourcesFit") is own
    for st in (Status(Code.Unschedulable, ("Insufficient cpu",)), attributed(own, "Other")):
        got = attributed(st, "Mine")
        assert (got.code, got.reasons, got.plugin) == (Code.Unschedulable, st.reasons, "Mine")


def test_failure_wording() -> None:
    """``<prefix naming the plugin>: <detail>``, the plugin's name quoted as Go's ``%q``;
    `plugin_error` is that message as an Error attributed to the plugin."""
    assert failure("Filter", "X", "boom") == 'running "X" filter plugin: boom'
    assert failure("PreBindPreFlight", "X", "boom") == 'running PreBindPreFlight "X": boom'
    assert failure("Score", "X", "boom") == 'running Score plugins: plugin "X" failed with: boom'
    st = plugin_error("PreFilter", "X", "boom")
    assert (st.code, st.reasons, st.plugin) == (
        Code.Error,
        ('running PreFilter plugin "X": boom',),
        "X",
    )
    assert all(t.startswith("running ") and t.count("{}") == 1 for t in RUNNING.values())
    with pytest.raises(KeyError):
        failure("Unknown", "X", "boom")


class _Probe:
    """Permit returns an Error, Bind the wrong type, PostBind raises."""

    name: ClassVar[str] = "Probe"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        pass

    def schedsim_permit(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return Status(Code.Error, ("no permit",))

    def schedsim_bind(self, state: CycleState, pod: Pod, node_name: str) -> object:
        return "ok"

    def schedsim_post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        raise RuntimeError("gone")


def test_permit_bind_and_post_bind_failures_are_worded_by_the_table() -> None:
    """RunPermitPlugins (``running Permit plugin "X": ...``), RunBindPlugins (``running Bind
    plugin "X": ...``) and RunPostBindPlugins (a problem per plugin; PostBind cannot fail
    the pod)."""
    profile = Profile(plugins={"permit": ("Probe",), "bind": ("Probe",), "postBind": ("Probe",)})
    fw = Framework(profile, Handle(), {"Probe": _Probe})
    pod = Pod.from_manifest({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}})
    permit = fw.run_permit_plugins(CycleState(), pod, "n1", 0.0)
    assert (permit.code, permit.message, permit.plugin) == (
        Code.Error,
        'running Permit plugin "Probe": no permit',
        "Probe",
    )
    bind = fw.run_bind_plugins(CycleState(), pod, "n1")
    assert (bind.code, bind.message, bind.plugin) == (
        Code.Error,
        "running Bind plugin \"Probe\": returned 'ok' (str), want a Status or None",
        "Probe",
    )
    assert fw.run_post_bind_plugins(CycleState(), pod, "n1") == [
        'running PostBind plugin "Probe": RuntimeError: gone'
    ]
